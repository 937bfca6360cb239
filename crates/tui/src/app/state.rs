//! Everything the screen shows, owned by the event loop and changed only by `update`.

use std::sync::RwLockReadGuard;
use std::time::{Duration, Instant};

use ratatui_textarea::TextArea;

use kimi_core::engine::{ApprovalRequest, SharedTrace};
use kimi_core::tools::Toolbox;
use kimi_core::tools::mcp::ToolNote;
use kimi_core::tools::rules::RuleDecision;
use kimi_protocol::Message;
use kimi_protocol::{Mode, Trace};

/// One block of the transcript: domain data only. Its rendering (wrapped rows and their
/// caches) belongs to the view (`ui::transcript::TranscriptView`), keyed by the cell's id.
#[derive(Debug)]
pub(crate) enum Entry {
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
        /// How many times it was given back to back (shown as "×N" when more than once).
        repeats: u32,
    },
}

impl Entry {
    /// The cell's stable id (the key of its rendering in the view).
    pub(crate) fn id(&self) -> CellId {
        match self {
            Entry::User { id, .. } | Entry::Notice { id, .. } => *id,
            Entry::Assistant(t) => t.id,
        }
    }
}

/// A transcript cell's identity, unique in the process: `CellId::default()` draws a new one,
/// so a cell built anywhere (update, a resumed session's history, tests) never shares another's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CellId(u64);

impl Default for CellId {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        CellId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// How an assistant round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TurnState {
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
pub(crate) struct AssistantTurn {
    pub(crate) id: CellId,
    /// The answer as shown (sanitized); only grows, except through `set_text`.
    text: TurnText,
    /// Bumped when the text is replaced rather than extended (the view lays it out again).
    text_gen: u64,
    pub(crate) state: TurnState,
    pub(crate) panes: Vec<ToolPane>,
    /// Index into `App::traces` of this request's trace.
    pub(crate) trace: Option<usize>,
    pub(crate) warnings: Vec<String>,
    /// Requests made for this answer: more than one when failures were retried.
    pub(crate) attempts: u32,
    /// Bumped on every change outside the text (panes, state, warnings, selection).
    pub(crate) rev: u64,
    /// This answer's text stream: an escape sequence split across tokens is removed whole.
    pub(crate) sanitizer: kimi_protocol::sanitize::StreamSanitizer,
    /// The reasoning cell (thinking models); drawn with the header.
    pub(crate) reasoning: super::reasoning::Reasoning,
    /// The answer continues an edit of the model's output (tagged "edited").
    pub(crate) edited: bool,
}

impl AssistantTurn {
    pub(crate) fn new(trace: Option<usize>) -> Self {
        AssistantTurn {
            id: CellId::default(),
            text: TurnText::Own(String::new()),
            text_gen: 0,
            state: TurnState::Streaming,
            panes: Vec::new(),
            trace,
            warnings: Vec::new(),
            attempts: 1,
            rev: 1,
            sanitizer: Default::default(),
            reasoning: Default::default(),
            edited: false,
        }
    }

    /// The answer's text as shown.
    pub(crate) fn text(&self) -> &str {
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
    pub(crate) fn share_text(&mut self, content: &std::sync::Arc<String>) {
        if self.text() == content.as_str() {
            self.text = TurnText::Shared(content.clone());
        }
    }

    /// Bumped each time the text is replaced (see [`set_text`](Self::set_text)).
    pub(crate) fn text_gen(&self) -> u64 {
        self.text_gen
    }

    /// Model text as it streams in: shown once the sanitizer has seen what came before it.
    pub(crate) fn push_text(&mut self, text: &str) {
        let clean = self.sanitizer.push(text);
        if !clean.is_empty() {
            self.text_mut().push_str(&clean);
        }
    }

    /// A saved answer's whole text, through the same sanitizer as the live stream, so a
    /// resumed session shows exactly what was shown live.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.sanitizer = Default::default();
        let clean = self.sanitizer.push(text);
        self.text = TurnText::Own(clean);
        self.text_gen += 1;
    }

    pub(crate) fn pane_mut(&mut self, index: usize) -> Option<&mut ToolPane> {
        self.rev += 1;
        self.panes.iter_mut().find(|p| p.index == index)
    }
}

/// Where a tool call stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PaneState {
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
pub(crate) struct ToolPane {
    pub(crate) index: usize,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) state: PaneState,
    /// The arguments it actually ran with, when the user edited them.
    pub(crate) edited_arguments: Option<String>,
    /// The tool message content sent back to the model.
    pub(crate) result: Option<String>,
    pub(crate) expanded: bool,
    /// Why the complete arguments cannot run as they are (shown from the moment the call ends).
    pub(crate) problem: Option<String>,
    /// What the call's MCP server reported while it ran: the latest progress, and the last
    /// log lines (sanitized, one line each).
    pub(crate) progress: Option<ToolNote>,
    pub(crate) log: std::collections::VecDeque<String>,
    /// What decided the call, as the core reported it: a rule (and where it is written) or
    /// the tool's approval setting.
    pub(crate) decided: Option<RuleDecision>,
}

impl ToolPane {
    pub(crate) fn new(index: usize, id: String, name: String) -> Self {
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
            decided: None,
        }
    }
}

/// The approval dialog for one call.
#[derive(Debug)]
pub(crate) struct ApprovalDialog {
    pub(crate) request: ApprovalRequest,
    /// The agent's id for this request, answered with `Op::Approve` (none in previews).
    pub(crate) id: Option<u64>,
    pub(crate) stage: DialogStage,
    /// First argument row in view; changed only by `update`.
    pub(crate) scroll: usize,
    /// What the next frame shows of the arguments (set by `update` from the screen size).
    pub(crate) view: DialogView,
    /// Which argument rows have been on screen, counted at width `seen_width`.
    pub(crate) seen: Vec<bool>,
    pub(crate) seen_width: u16,
    /// Every argument row has been on screen at some point (a resize does not undo it).
    pub(crate) seen_all: bool,
    /// Why the last key did nothing, shown under the arguments.
    pub(crate) hint: Option<String>,
    /// The arguments are the user's edit, brought back to be read before they run.
    pub(crate) edited: bool,
    /// Names these arguments (a new one for each dialog and edit): the view's argument rows
    /// (`App::approval_rows`) are kept for it.
    pub(crate) args_rev: u64,
}

/// The arguments viewport of the dialog for the current screen.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DialogView {
    /// Rows of arguments visible at once.
    pub(crate) rows: usize,
    /// Rows of arguments in all.
    pub(crate) total: usize,
    pub(crate) width: u16,
    /// The whole dialog on screen (for the mouse).
    pub(crate) area: ratatui::layout::Rect,
}

impl ApprovalDialog {
    pub(crate) fn new(request: ApprovalRequest, id: Option<u64>) -> Self {
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
    pub(crate) fn mark_drawn(&mut self) {
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
pub(crate) enum DialogStage {
    /// Showing the call; waiting for y / n / a / e / Esc.
    Asking,
    /// `n` pressed: typing an optional reason for the model.
    Reason(Box<TextArea<'static>>),
    /// `e` pressed: editing the arguments as JSON; `problems` from the last save attempt.
    Editing {
        editor: Box<TextArea<'static>>,
        problems: Vec<String>,
    },
    /// `r` pressed: editing the rule that would allow calls like this one.
    Rule(Box<super::rule_form::RuleForm>),
}

/// Connection facts shown in the status bar.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    pub(crate) profile: String,
    pub(crate) mode: Mode,
    pub(crate) model: String,
    pub(crate) host: String,
}

/// The whole app: a root over its components (transcript, composer, status line and the
/// layers above them) and the facts they share (the conversation as the agent reported it,
/// the session, the settings).
pub(crate) struct App {
    pub(crate) connection: Connection,
    /// The agent's conversation as it reported it (the agent owns it; `view.rs` follows it).
    pub(crate) conversation: Vec<Message>,
    /// The system prompt as the agent last reported it (shown by `/system`).
    pub(crate) system_prompt: Option<String>,
    pub(crate) toolbox: Toolbox,
    /// The agent's traces, shared with it (it adds the chunks of the one streaming now; the
    /// app reads them in place); the list follows the agent's `TraceStarted`/`Cleared`/
    /// `Truncated` reports.
    pub(crate) traces: Vec<SharedTrace>,
    pub(crate) transcript: super::transcript::Transcript,
    pub(crate) composer: super::composer::Composer,
    pub(crate) status: super::status_line::StatusLine,
    pub(crate) layers: super::layers::Layers,
    /// The tools the user allowed with `a` for the session, as shown in the status bar and
    /// `/tools`: a view of the engine's policy (it changes only through `Op::Approve` with
    /// `always` and `Op::Revoke`, which the app sends).
    pub(crate) always_allow: Vec<String>,
    /// The terminal accepted the keyboard enhancement protocol: Shift-Enter reaches the app
    /// (and the help lists it).
    pub(crate) keyboard_enhanced: bool,
    /// `NO_COLOR` is set: frames are drawn without colour (badges in reverse video).
    pub(crate) no_color: bool,
    /// A turn is in flight.
    pub(crate) busy: bool,
    /// The turn in flight continues an edited answer: its first round's cell is tagged
    /// "edited" from the start (the inline screen writes a header once).
    pub(crate) continuing: bool,
    pub(crate) should_quit: bool,
    /// Something changed since the last draw.
    pub(crate) dirty: bool,
    /// The session the agent records this conversation into, once its journal is written
    /// (the agent says so); `None` before that, and when saving is off.
    pub(crate) session: Option<kimi_core::session::Session>,
    /// A saved session's history is being reported: user messages are shown as they come.
    pub(crate) replaying: bool,
    /// For each trace, the index of the message it produced (see `SessionTrace`).
    pub(crate) trace_messages: Vec<usize>,
    /// Esc or Ctrl-C was pressed and the turn has not ended yet: approvals are answered no.
    pub(crate) cancelling: bool,
    /// The terminal's size (columns, rows), kept by `update` from resize events.
    pub(crate) screen: (u16, u16),
    /// Interrupted answers of the resumed session, kept in its journal (never sent).
    pub(crate) partial: Vec<kimi_core::session::PartialAnswer>,
    /// The instant of the event `update` is handling (or last handled), stamped by the event
    /// loop: `update`, what it calls and the frame drawn after it read the time here, never the
    /// clock, so that tests make time pass by stamping events later.
    pub(crate) now: Instant,
    /// When a first Ctrl-C or Ctrl-D on an empty, idle input asked for a second one to quit.
    pub(crate) quit_armed: Option<Instant>,
    /// `/export` found a file where it was to write, and asks whether to replace it.
    pub(crate) export_confirm: Option<super::export::PendingExport>,
    /// Special-token strings in user or tool text were already reported in this turn.
    pub(crate) special_tokens_warned: bool,
    /// The profile breaks special-token strings in tool results before sending them.
    pub(crate) neutralize_tool_markers: bool,
    /// The family template in use (the status bar shows it); set from the profile.
    pub(crate) template: kimi_protocol::Template,
    /// `thinking` as the profile or `/thinking` set it; `None`: the model's default (on).
    pub(crate) thinking: Option<bool>,
    // Getting text out and themes (`/mouse`, `/theme`).
    /// Mouse capture is on: the wheel scrolls the app (the terminal's own selection then
    /// needs Shift). Off by default so that selecting text just works.
    pub(crate) mouse: bool,
    /// The inline screen: the conversation is in the terminal's scrollback, which the
    /// terminal scrolls (the app's page keys only say so).
    pub(crate) inline: bool,
    /// The colours the frame is drawn in (`theme` in the config, `/theme`).
    pub(crate) theme: crate::ui::theme::Theme,
    // Switch and limits.
    /// Profiles, the endpoint in use and the server's models (`/model`, `/profile`).
    pub(crate) switch: super::models::Switch,
    /// Secrets a saved trace must never hold (the profile's API key): masked wherever found.
    pub(crate) secrets: kimi_core::redactor::Redactor,
    // Token level.
    /// Alternatives per token asked for (`logprobs` of the profile, `/logprobs N`; 0 off).
    pub(crate) logprobs: u8,
    /// The ready MCP servers and their prompts (for `/mcp__…` commands and `@server:uri`).
    pub(crate) mcp: super::mcp_view::Ready,
    /// The numbering of the last `/rules` listing (the core holds the rules).
    pub(crate) rules: super::rules_view::RulesView,
}

impl App {
    pub(crate) fn new(
        connection: Connection,
        toolbox: Toolbox,
        system_prompt: Option<String>,
    ) -> Self {
        App {
            connection,
            conversation: Vec::new(),
            system_prompt,
            toolbox,
            transcript: Default::default(),
            composer: Default::default(),
            status: Default::default(),
            layers: Default::default(),
            traces: Vec::new(),
            always_allow: Vec::new(),
            template: kimi_protocol::Template::default(),
            thinking: None,
            secrets: Default::default(),
            logprobs: 0,
            keyboard_enhanced: false,
            no_color: false,
            busy: false,
            continuing: false,
            should_quit: false,
            dirty: true,
            session: None,
            replaying: false,
            trace_messages: Vec::new(),
            cancelling: false,
            screen: (80, 24),
            partial: Vec::new(),
            now: Instant::now(),
            quit_armed: None,
            export_confirm: None,
            special_tokens_warned: false,
            neutralize_tool_markers: false,
            mouse: false,
            inline: false,
            theme: Default::default(),
            switch: Default::default(),
            mcp: Default::default(),
            rules: Default::default(),
        }
    }

    /// Say something in the transcript. The same notice given again right after itself is
    /// counted on the one shown instead of piling up ("Draft cleared ×5").
    pub(crate) fn notice(&mut self, text: impl Into<String>, error: bool) {
        let text = text.into();
        self.dirty = true;
        if let Some(Entry::Notice {
            id,
            text: last,
            error: was_error,
            repeats,
        }) = self.transcript.entries.last_mut()
            && *last == text
            && *was_error == error
        {
            *repeats += 1;
            // A new id: the cell is laid out again with its count.
            *id = CellId::default();
            return;
        }
        self.transcript.entries.push(Entry::Notice {
            id: CellId::default(),
            text,
            error,
            repeats: 1,
        });
    }

    /// The assistant turn being streamed, if there is one.
    pub(crate) fn current_turn(&mut self) -> Option<&mut AssistantTurn> {
        self.transcript.current_turn()
    }

    /// The pane of the call `id` in the current turn.
    pub(crate) fn pane_for_call(&mut self, id: &str) -> Option<&mut ToolPane> {
        self.transcript.pane_for_call(id)
    }

    /// A frame was drawn: what it showed of the approval dialog has been seen.
    pub(crate) fn frame_drawn(&mut self) {
        if self.layers.inspector.open || self.layers.help.open {
            return;
        }
        if let Some(d) = self.layers.dialog.as_mut() {
            d.mark_drawn();
        }
    }

    /// The trace the inspector shows, read in place (the agent may be adding to it: hold the
    /// guard for the frame only).
    pub(crate) fn inspected_trace(&self) -> Option<(usize, RwLockReadGuard<'_, Trace>)> {
        let i = self.inspected_index()?;
        Some((i, self.traces[i].read()))
    }

    /// Which trace the inspector shows, if there is one.
    pub(crate) fn inspected_index(&self) -> Option<usize> {
        let i = self
            .layers
            .inspector
            .selected
            .unwrap_or(self.traces.len().checked_sub(1)?);
        (i < self.traces.len()).then_some(i)
    }
}
