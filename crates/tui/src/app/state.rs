//! Everything the screen shows, owned by the event loop and changed only by `update`.

use std::sync::RwLockReadGuard;
use std::time::{Duration, Instant};

use ratatui_textarea::TextArea;

use kimi_core::engine::{ApprovalRequest, SharedTrace};
use kimi_core::tools::Toolbox;
use kimi_core::tools::mcp::ToolNote;
use kimi_protocol::Message;
use kimi_protocol::{Mode, Trace, Usage};

/// One block of the transcript: domain data only. Its rendering (wrapped rows and their
/// caches) belongs to the view (`ui::transcript::TranscriptView`), keyed by the cell's id.
#[derive(Debug)]
pub enum Entry {
    User {
        id: CellId,
        text: String,
    },
    Assistant(Box<AssistantTurn>),
    /// App messages: mode switched, command output, errors outside a turn.
    Notice {
        id: CellId,
        text: String,
        error: bool,
    },
}

impl Entry {
    /// The cell's stable id (the key of its rendering in the view).
    pub fn id(&self) -> CellId {
        match self {
            Entry::User { id, .. } | Entry::Notice { id, .. } => *id,
            Entry::Assistant(t) => t.id,
        }
    }
}

/// A transcript cell's identity, unique in the process: `CellId::default()` draws a new one,
/// so a cell built anywhere (update, a resumed session's history, tests) never shares another's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId(u64);

impl Default for CellId {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        CellId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// How an assistant round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnState {
    Streaming,
    Done,
    Cancelled,
    /// The stream failed; the message is the error, shown in red under the partial answer.
    Failed(String),
    /// Restored from a saved session: kimi-tui stopped while this answer streamed. What had
    /// arrived was saved; it was never sent back to the model.
    Interrupted,
}

/// An answer's text as a turn holds it.
#[derive(Debug)]
enum TurnText {
    Own(String),
    /// The final message's text, shown exactly as sent (see [`AssistantTurn::share_text`]).
    Shared(std::sync::Arc<String>),
}

/// The model's answer for one request: its text and the calls it made.
#[derive(Debug)]
pub struct AssistantTurn {
    pub id: CellId,
    /// The answer as shown (sanitized); only grows, except through `set_text`.
    text: TurnText,
    /// Bumped when the text is replaced rather than extended (the view lays it out again).
    text_gen: u64,
    pub state: TurnState,
    pub panes: Vec<ToolPane>,
    /// Index into `App::traces` of this request's trace.
    pub trace: Option<usize>,
    pub warnings: Vec<String>,
    /// Bumped on every change outside the text (panes, state, warnings, selection).
    pub rev: u64,
    /// This answer's text stream: an escape sequence split across tokens is removed whole.
    pub sanitizer: kimi_protocol::sanitize::StreamSanitizer,
    /// The reasoning cell (thinking models); drawn with the header.
    pub reasoning: super::reasoning::Reasoning,
}

impl AssistantTurn {
    pub fn new(trace: Option<usize>) -> Self {
        AssistantTurn {
            id: CellId::default(),
            text: TurnText::Own(String::new()),
            text_gen: 0,
            state: TurnState::Streaming,
            panes: Vec::new(),
            trace,
            warnings: Vec::new(),
            rev: 1,
            sanitizer: Default::default(),
            reasoning: Default::default(),
        }
    }

    /// The answer's text as shown.
    pub fn text(&self) -> &str {
        match &self.text {
            TurnText::Own(s) => s,
            TurnText::Shared(s) => s,
        }
    }

    /// The text to add to (a shared one is copied first: never expected, as a turn shares
    /// its message's text only once that is final).
    fn text_mut(&mut self) -> &mut String {
        match &mut self.text {
            TurnText::Own(s) => s,
            TurnText::Shared(s) => std::sync::Arc::make_mut(s),
        }
    }

    /// The final message's text, `content`: when the turn shows exactly that (nothing was
    /// sanitized away), the turn holds the message's text instead of a copy of it. A long
    /// answer is then held once, not once by the turn and once by the conversation.
    pub fn share_text(&mut self, content: &std::sync::Arc<String>) {
        if self.text() == content.as_str() {
            self.text = TurnText::Shared(content.clone());
        }
    }

    /// Bumped each time the text is replaced (see [`set_text`](Self::set_text)).
    pub fn text_gen(&self) -> u64 {
        self.text_gen
    }

    /// Model text as it streams in: shown once the sanitizer has seen what came before it.
    pub fn push_text(&mut self, text: &str) {
        let clean = self.sanitizer.push(text);
        if !clean.is_empty() {
            self.text_mut().push_str(&clean);
        }
    }

    /// A saved answer's whole text, through the same sanitizer as the live stream, so a
    /// resumed session shows exactly what was shown live.
    pub fn set_text(&mut self, text: &str) {
        self.sanitizer = Default::default();
        let clean = self.sanitizer.push(text);
        self.text = TurnText::Own(clean);
        self.text_gen += 1;
    }

    pub fn pane_mut(&mut self, index: usize) -> Option<&mut ToolPane> {
        self.rev += 1;
        self.panes.iter_mut().find(|p| p.index == index)
    }
}

/// Where a tool call stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneState {
    /// Arguments still streaming in.
    Streaming,
    /// The stream ended inside the call: it never runs.
    Incomplete,
    /// Complete; waiting for the agent loop to reach it.
    Pending,
    WaitingApproval,
    Running {
        since: Instant,
    },
    Done {
        exit_code: i32,
        duration: Duration,
    },
    /// Ran and failed: non-zero exit, signal, could not start.
    Failed {
        summary: String,
        duration: Duration,
    },
    TimedOut {
        duration: Duration,
    },
    /// Never ran: unknown tool, invalid arguments, denied by the user or the config.
    Refused {
        reason: String,
        invalid: bool,
    },
    /// Restored from a saved session: its result was sent; how it ran is not recorded.
    Answered,
}

/// One tool call inside an assistant turn.
#[derive(Debug, Clone)]
pub struct ToolPane {
    pub index: usize,
    pub id: String,
    pub name: String,
    pub arguments: String,
    pub state: PaneState,
    /// The arguments it actually ran with, when the user edited them.
    pub edited_arguments: Option<String>,
    /// The tool message content sent back to the model.
    pub result: Option<String>,
    pub expanded: bool,
    /// Why the complete arguments cannot run as they are (shown from the moment the call ends).
    pub problem: Option<String>,
    /// What the call's MCP server reported while it ran: the latest progress, and the last
    /// log lines (sanitized, one line each).
    pub progress: Option<ToolNote>,
    pub log: std::collections::VecDeque<String>,
}

impl ToolPane {
    pub fn new(index: usize, id: String, name: String) -> Self {
        ToolPane {
            index,
            id,
            name,
            arguments: String::new(),
            state: PaneState::Streaming,
            edited_arguments: None,
            result: None,
            expanded: false,
            problem: None,
            progress: None,
            log: std::collections::VecDeque::new(),
        }
    }
}

/// The approval dialog for one call.
#[derive(Debug)]
pub struct ApprovalDialog {
    pub request: ApprovalRequest,
    /// The agent's id for this request, answered with `Op::Approve` (none in previews).
    pub id: Option<u64>,
    pub stage: DialogStage,
    /// First argument row in view; changed only by `update`.
    pub scroll: usize,
    /// What the next frame shows of the arguments (set by `update` from the screen size).
    pub view: DialogView,
    /// Which argument rows have been on screen, counted at width `seen_width`.
    pub seen: Vec<bool>,
    pub seen_width: u16,
    /// Every argument row has been on screen at some point (a resize does not undo it).
    pub seen_all: bool,
    /// Why the last key did nothing, shown under the arguments.
    pub hint: Option<String>,
    /// The arguments are the user's edit, brought back to be read before they run.
    pub edited: bool,
    /// Names these arguments (a new one for each dialog and edit): the view's argument rows
    /// (`App::approval_rows`) are kept for it.
    pub args_rev: u64,
}

/// The arguments viewport of the dialog for the current screen.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DialogView {
    /// Rows of arguments visible at once.
    pub rows: usize,
    /// Rows of arguments in all.
    pub total: usize,
    pub width: u16,
    /// The whole dialog on screen (for the mouse).
    pub area: ratatui::layout::Rect,
}

impl ApprovalDialog {
    pub fn new(request: ApprovalRequest, id: Option<u64>) -> Self {
        ApprovalDialog {
            request,
            id,
            stage: DialogStage::Asking,
            scroll: 0,
            view: DialogView::default(),
            seen: Vec::new(),
            seen_width: 0,
            seen_all: false,
            hint: None,
            edited: false,
            args_rev: crate::ui::approval_rows::next_rev(),
        }
    }

    /// The argument rows the last `view` showed are now on screen.
    pub fn mark_drawn(&mut self) {
        let v = self.view;
        if self.seen.len() != v.total || v.width != self.seen_width {
            self.seen = vec![false; v.total];
            self.seen_width = v.width;
        }
        let from = self.scroll.min(v.total);
        let to = (self.scroll + v.rows).min(v.total);
        self.seen[from..to].iter_mut().for_each(|s| *s = true);
        if !self.seen.is_empty() && self.seen.iter().all(|&s| s) {
            self.seen_all = true;
        }
    }
}

#[derive(Debug)]
pub enum DialogStage {
    /// Showing the call; waiting for y / n / a / e / Esc.
    Asking,
    /// `n` pressed: typing an optional reason for the model.
    Reason(Box<TextArea<'static>>),
    /// `e` pressed: editing the arguments as JSON; `problems` from the last save attempt.
    Editing {
        editor: Box<TextArea<'static>>,
        problems: Vec<String>,
    },
}

/// The raw-stream inspector's view state.
#[derive(Debug)]
pub struct InspectorState {
    pub open: bool,
    /// Index into `App::traces`; `None` = the latest.
    pub selected: Option<usize>,
    /// First visible line.
    pub scroll: usize,
    /// Typing a search query after `/`.
    pub searching: Option<String>,
    pub query: Option<String>,
    /// A line to bring into view on the next draw (search hit, a call's first marker).
    pub jump_to_call: Option<usize>,
    pub message: Option<String>,
    /// Whole lines the view held at the last layout: what PgUp/PgDn move by.
    pub page: usize,
    /// The line of the last search match: `n`/`N` go on from it (the view may show it lower
    /// than the top, near the end).
    pub hit: Option<usize>,
    /// Gaps between chunks of this many ms or more are stalls.
    pub stall_ms: u64,
    /// The token view (`t`).
    pub tokens: super::inspector_tokens::TokenCursor,
}

impl Default for InspectorState {
    fn default() -> Self {
        InspectorState {
            open: false,
            selected: None,
            scroll: 0,
            searching: None,
            query: None,
            jump_to_call: None,
            message: None,
            page: 0,
            hit: None,
            stall_ms: crate::ui::inspector_parsed::DEFAULT_STALL_MS,
            tokens: Default::default(),
        }
    }
}

/// The status line's view of what is happening.
#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    Idle,
    Streaming { since: Instant, chunks: u64 },
    WaitingApproval,
    RunningTool { name: String },
}

/// Connection facts shown in the status bar.
#[derive(Debug, Clone)]
pub struct Connection {
    pub profile: String,
    pub mode: Mode,
    pub model: String,
    pub host: String,
}

/// The whole app.
pub struct App {
    pub connection: Connection,
    /// The agent's conversation as it reported it (the agent owns it; `view.rs` follows it).
    pub conversation: Vec<Message>,
    /// The system prompt as the agent last reported it (shown by `/system`).
    pub system_prompt: Option<String>,
    pub toolbox: Toolbox,
    pub entries: Vec<Entry>,
    /// The agent's traces, shared with it (it adds the chunks of the one streaming now; the
    /// app reads them in place); the list follows the agent's `TraceStarted`/`Cleared`/
    /// `Truncated` reports.
    pub traces: Vec<SharedTrace>,
    pub input: TextArea<'static>,
    /// Earlier prompts, oldest first, and where Up/Down recall is.
    pub history: Vec<String>,
    pub history_pos: Option<usize>,
    /// Messages typed while a turn ran, oldest first: sent as turns end (see `queue`).
    pub queued: Vec<String>,
    /// The tools the user allowed with `a` for the session, as shown in the status bar and
    /// `/tools`: a view of the engine's policy (it changes only through `Op::Approve` with
    /// `always` and `Op::Revoke`, which the app sends).
    pub always_allow: Vec<String>,
    pub dialog: Option<ApprovalDialog>,
    pub inspector: InspectorState,
    pub help_open: bool,
    /// Lines of the help scrolled off its top.
    pub help_scroll: usize,
    /// The terminal accepted the keyboard enhancement protocol: Shift-Enter reaches the app
    /// (and the help lists it).
    pub keyboard_enhanced: bool,
    /// `NO_COLOR` is set: frames are drawn without colour (badges in reverse video).
    pub no_color: bool,
    pub activity: Activity,
    pub usage: Usage,
    /// Lines scrolled up from the bottom; 0 = pinned to the bottom, following the stream.
    pub scroll_from_bottom: usize,
    /// The selected tool pane (entry index, pane index), cycled with Tab.
    pub selected_pane: Option<(usize, usize)>,
    /// Tab chose a pane: the next layout scrolls the transcript to show it.
    pub reveal_selected: bool,
    /// A turn is in flight.
    pub busy: bool,
    pub should_quit: bool,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// Counter for cache invalidation of user/notice entries.
    pub next_rev: u64,
    pub tokens_this_round: u64,
    pub round_started: Option<Instant>,
    /// Last measured transcript viewport height, for page scrolling.
    pub page_height: usize,
    /// (entry count, width) at the last layout, to keep a scrolled-up view still.
    pub last_seen: (usize, u16),
    /// The inspector's lines for the selected trace, kept up to date as it grows.
    pub inspector_view: crate::ui::inspector_view::InspectorView,
    /// The transcript's rendering: rows of the cells near the viewport (view state, never
    /// read by `update`).
    pub transcript_view: crate::ui::transcript::TranscriptView,
    /// The approval dialog's argument rows (the widget's cache, not the dialog's state).
    pub approval_rows: crate::ui::approval_rows::ArgRows,
    /// The session the agent records this conversation into, once its journal is written
    /// (the agent says so); `None` before that, and when saving is off.
    pub session: Option<kimi_core::session::Session>,
    /// A saved session's history is being reported: user messages are shown as they come.
    pub replaying: bool,
    /// For each trace, the index of the message it produced (see `SessionTrace`).
    pub trace_messages: Vec<usize>,
    /// The entry of the assistant turn being streamed (or the last one).
    pub turn_entry: Option<usize>,
    /// Esc or Ctrl-C was pressed and the turn has not ended yet: approvals are answered no.
    pub cancelling: bool,
    /// The terminal's size (columns, rows), kept by `update` from resize events.
    pub screen: (u16, u16),
    /// Interrupted answers of the resumed session, kept in its journal (never sent).
    pub partial: Vec<kimi_core::session::PartialAnswer>,
    /// The instant of the event `update` is handling (or last handled), stamped by the event
    /// loop: `update`, what it calls and the frame drawn after it read the time here, never the
    /// clock, so that tests make time pass by stamping events later.
    pub now: Instant,
    /// Special-token strings in user or tool text were already reported in this turn.
    pub special_tokens_warned: bool,
    /// The profile breaks special-token strings in tool results before sending them.
    pub neutralize_tool_markers: bool,
    /// Folded reasoning cells are shown open (the reasoning key toggles it).
    pub reasoning_open: bool,
    /// The family template in use (the status bar shows it); set from the profile.
    pub template: kimi_protocol::Template,
    /// `thinking` as the profile or `/thinking` set it; `None`: the model's default (on).
    pub thinking: Option<bool>,
    // Getting text out and themes (`/mouse`, `/theme`).
    /// Mouse capture is on: the wheel scrolls the app (the terminal's own selection then
    /// needs Shift). Off by default so that selecting text just works.
    pub mouse: bool,
    /// The colours the frame is drawn in (`theme` in the config, `/theme`).
    pub theme: crate::ui::theme::Theme,
    // Going back, history and sessions.
    /// The open picker (earlier messages, saved sessions): it takes the keys.
    pub picker: Option<super::picker::Picker>,
    /// Esc was pressed once on an idle, empty input: a second opens the earlier-message picker.
    pub esc_armed: bool,
    /// `Ctrl-R`: the history search in progress.
    pub history_search: Option<super::history_search::HistorySearch>,
    /// The prompt history file (`history = true` and a data directory): prompts sent are
    /// added to it; `None` keeps the history for this run only.
    pub history_file: Option<super::history_file::HistoryFile>,
    // Switch and limits.
    /// Profiles, the endpoint in use and the server's models (`/model`, `/profile`).
    pub switch: super::models::Switch,
    /// How full the context window is (the status bar's gauge).
    pub context: super::models_context::ContextGauge,
    /// The agent waits before retrying a request (the countdown).
    pub retry_wait: Option<super::retry::RetryWait>,
    /// Secrets a saved trace must never hold (the profile's API key): masked wherever found.
    pub secrets: Vec<String>,
    // Token level.
    /// Alternatives per token asked for (`logprobs` of the profile, `/logprobs N`; 0 off).
    pub logprobs: u8,
    /// The inspector's token view, laid out for the trace in view.
    pub token_view: crate::ui::inspector_tokens_view::TokenView,
    /// MCP servers' questions for the user: the one shown takes the keys.
    pub questions: super::elicit::Questions,
    /// The ready MCP servers and their prompts (for `/mcp__…` commands and `@server:uri`).
    pub mcp: super::mcp_view::Ready,
}

impl App {
    pub fn new(connection: Connection, toolbox: Toolbox, system_prompt: Option<String>) -> Self {
        App {
            connection,
            conversation: Vec::new(),
            system_prompt,
            toolbox,
            entries: Vec::new(),
            traces: Vec::new(),
            input: new_input(),
            history: Vec::new(),
            history_pos: None,
            queued: Vec::new(),
            always_allow: Vec::new(),
            dialog: None,
            inspector: InspectorState::default(),
            help_open: false,
            reasoning_open: false,
            template: kimi_protocol::Template::default(),
            thinking: None,
            secrets: Vec::new(),
            logprobs: 0,
            token_view: Default::default(),
            help_scroll: 0,
            keyboard_enhanced: false,
            no_color: false,
            activity: Activity::Idle,
            usage: Usage::default(),
            scroll_from_bottom: 0,
            selected_pane: None,
            reveal_selected: false,
            busy: false,
            should_quit: false,
            dirty: true,
            next_rev: 1,
            tokens_this_round: 0,
            round_started: None,
            page_height: 20,
            last_seen: (0, 0),
            inspector_view: Default::default(),
            transcript_view: Default::default(),
            approval_rows: Default::default(),
            session: None,
            replaying: false,
            trace_messages: Vec::new(),
            turn_entry: None,
            cancelling: false,
            screen: (80, 24),
            partial: Vec::new(),
            now: Instant::now(),
            special_tokens_warned: false,
            neutralize_tool_markers: false,
            mouse: false,
            theme: Default::default(),
            picker: None,
            esc_armed: false,
            history_search: None,
            history_file: None,
            switch: Default::default(),
            context: Default::default(),
            retry_wait: None,
            questions: Default::default(),
            mcp: Default::default(),
        }
    }

    pub fn notice(&mut self, text: impl Into<String>, error: bool) {
        self.entries.push(Entry::Notice {
            id: CellId::default(),
            text: text.into(),
            error,
        });
        self.dirty = true;
    }

    /// The assistant turn being streamed, if the last entry is one.
    pub fn current_turn(&mut self) -> Option<&mut AssistantTurn> {
        // Notices may be pushed while a turn streams: the turn is found by index, not position.
        match self.turn_entry.and_then(|i| self.entries.get_mut(i)) {
            Some(Entry::Assistant(t)) => Some(t),
            _ => None,
        }
    }

    /// The pane of the call `id` in the current turn: the engine numbers calls by position
    /// among complete calls, the stream by order of appearance, so engine events match by id.
    pub fn pane_for_call(&mut self, id: &str) -> Option<&mut ToolPane> {
        let turn = self.current_turn()?;
        turn.rev += 1;
        let k = turn
            .panes
            .iter()
            .position(|p| p.id == id && p.result.is_none())
            .or_else(|| turn.panes.iter().position(|p| p.id == id))?;
        turn.panes.get_mut(k)
    }

    /// A frame was drawn: what it showed of the approval dialog has been seen.
    pub fn frame_drawn(&mut self) {
        if self.inspector.open || self.help_open {
            return;
        }
        if let Some(d) = self.dialog.as_mut() {
            d.mark_drawn();
        }
    }

    /// The trace the inspector shows, read in place (the agent may be adding to it: hold the
    /// guard for the frame only).
    pub fn inspected_trace(&self) -> Option<(usize, RwLockReadGuard<'_, Trace>)> {
        let i = self.inspected_index()?;
        Some((i, self.traces[i].read()))
    }

    /// Which trace the inspector shows, if there is one.
    pub fn inspected_index(&self) -> Option<usize> {
        let i = self
            .inspector
            .selected
            .unwrap_or(self.traces.len().checked_sub(1)?);
        (i < self.traces.len()).then_some(i)
    }
}

/// A fresh multi-line input box.
pub fn new_input() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text("Message Kimi  (Enter send · Ctrl-J newline · /help)");
    t.set_wrap_mode(ratatui_textarea::WrapMode::Glyph);
    t.set_cursor_line_style(ratatui::style::Style::default());
    // Set here, not per frame: the box is drawn as it is, never cloned, so its wrap layout is
    // kept between frames (recomputing it costs time in proportion to the draft).
    t.set_block(
        ratatui::widgets::Block::default()
            .borders(ratatui::widgets::Borders::TOP | ratatui::widgets::Borders::BOTTOM)
            .border_style(crate::ui::style::dim()),
    );
    t
}
