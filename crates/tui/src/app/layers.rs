//! The layers drawn over the transcript and the composer: the approval dialog, the inspector,
//! the help, the pickers, the history search, the trust prompt and a server's question. The one on top takes
//! the keys ([`Layers::top`]); the others keep their state underneath.

use super::state::ApprovalDialog;

/// Which layer takes the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// An MCP server's question: over everything else.
    Question,
    /// Trust this directory's project rules? Asked once at start.
    Trust,
    /// The approval dialog, waiting for the user.
    Dialog,
    /// The inspector, opened over the transcript or over the dialog (Ctrl-T).
    Inspector,
    Help,
    /// Earlier messages or saved sessions.
    Picker,
    /// Ctrl-R.
    HistorySearch,
}

/// Everything drawn over the transcript, bottom to top as [`Layers::top`] orders them.
#[derive(Default)]
pub(crate) struct Layers {
    pub(crate) dialog: Option<ApprovalDialog>,
    /// The dialog's argument rows (the widget's cache, not the dialog's state).
    pub(crate) approval_rows: crate::ui::approval_rows::ArgRows,
    pub(crate) inspector: InspectorState,
    pub(crate) help: Help,
    pub(crate) picker: Option<super::picker::Picker>,
    pub(crate) history_search: Option<super::history_search::HistorySearch>,
    /// MCP servers' questions for the user: the one shown takes the keys.
    pub(crate) questions: super::elicit::Questions,
    /// The trust prompt for the project's rules, while it waits for an answer.
    pub(crate) trust: Option<super::trust::TrustPrompt>,
}

impl Layers {
    /// The layer on top, which takes the keys; `None`: the composer and the transcript do.
    /// The inspector opened from the dialog is above it; a question is above everything.
    pub(crate) fn top(&self) -> Option<Layer> {
        if self.questions.open.is_some() {
            Some(Layer::Question)
        } else if self.trust.is_some() {
            Some(Layer::Trust)
        } else if self.dialog.is_some() {
            Some(if self.inspector.open {
                Layer::Inspector
            } else {
                Layer::Dialog
            })
        } else if self.help.open {
            Some(Layer::Help)
        } else if self.picker.is_some() {
            Some(Layer::Picker)
        } else if self.history_search.is_some() {
            Some(Layer::HistorySearch)
        } else if self.inspector.open {
            Some(Layer::Inspector)
        } else {
            None
        }
    }
}

/// The key reference (`?`, F1).
#[derive(Debug, Default)]
pub(crate) struct Help {
    pub(crate) open: bool,
    /// Lines scrolled off its top.
    pub(crate) scroll: usize,
}

/// The raw-stream inspector's view state.
pub(crate) struct InspectorState {
    pub(crate) open: bool,
    /// Index into `App::traces`; `None` = the latest.
    pub(crate) selected: Option<usize>,
    /// First visible line.
    pub(crate) scroll: usize,
    /// Typing a search query after `/`.
    pub(crate) searching: Option<String>,
    pub(crate) query: Option<String>,
    /// A line to bring into view on the next draw (search hit, a call's first marker).
    pub(crate) jump_to_call: Option<usize>,
    pub(crate) message: Option<String>,
    /// Whole lines the view held at the last layout: what PgUp/PgDn move by.
    pub(crate) page: usize,
    /// The line of the last search match: `n`/`N` go on from it (the view may show it lower
    /// than the top, near the end).
    pub(crate) hit: Option<usize>,
    /// Gaps between chunks of this many ms or more are stalls.
    pub(crate) stall_ms: u64,
    /// Chat mode: each SSE event as its raw JSON (`r`), not as one compact line.
    pub(crate) raw_json: bool,
    /// The token view (`t`).
    pub(crate) tokens: super::inspector_tokens::TokenCursor,
    /// The lines of the selected trace, kept up to date as it grows (the widget's cache).
    pub(crate) view: crate::ui::inspector_view::InspectorView,
    /// The token view laid out for the trace in view (the widget's cache).
    pub(crate) token_view: crate::ui::inspector_tokens_view::TokenView,
    /// The last A/B comparison asked for (`a`, `A`), shown above its request.
    pub(crate) ab: Option<super::inspector_ab::Ab>,
    /// `e`: the last answer being edited, to continue from.
    pub(crate) edit: Option<super::answer_edit::AnswerEditor>,
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
            raw_json: false,
            tokens: Default::default(),
            view: Default::default(),
            token_view: Default::default(),
            ab: None,
            edit: None,
        }
    }
}
