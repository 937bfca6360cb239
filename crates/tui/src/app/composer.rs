//! The composer component: the input box, the slash-command popup over it, the prompt history
//! it recalls, and the messages queued while a turn runs.

use ratatui_textarea::TextArea;

/// What the user is writing and what they wrote before.
pub(crate) struct Composer {
    pub(crate) input: TextArea<'static>,
    /// The commands matching a `/name` being typed (see `slash`).
    pub(crate) slash: super::slash::SlashPopup,
    /// Earlier prompts, oldest first, and where Up/Down recall is.
    pub(crate) history: Vec<String>,
    pub(crate) history_pos: Option<usize>,
    /// The prompt history file (`history = true` and a data directory): prompts sent are
    /// added to it; `None` keeps the history for this run only.
    pub(crate) history_file: Option<super::history_file::HistoryFile>,
    /// Messages typed while a turn ran, oldest first: sent as turns end (see `queue`).
    pub(crate) queued: Vec<String>,
    /// Esc was pressed once on an idle, empty input: a second opens the earlier-message picker.
    pub(crate) esc_armed: bool,
}

impl Default for Composer {
    fn default() -> Self {
        Composer {
            input: new_input(),
            slash: Default::default(),
            history: Vec::new(),
            history_pos: None,
            history_file: None,
            queued: Vec::new(),
            esc_armed: false,
        }
    }
}

/// What the empty input says, and its short form for a screen too narrow for it.
pub(crate) const PLACEHOLDER: &str = "Message Kimi  (Enter send · Ctrl-J newline · /help)";
const PLACEHOLDER_SHORT: &str = "Message Kimi  (/help)";

/// The empty input's text fitted to `width` columns (another placeholder, such as a picker's,
/// is left as it is).
pub(crate) fn fit_placeholder(input: &mut TextArea<'static>, width: u16) {
    let shown = input.placeholder_text();
    if shown != PLACEHOLDER && shown != PLACEHOLDER_SHORT {
        return;
    }
    let fits = crate::ui::width::str_width(PLACEHOLDER) <= width as usize;
    let want = if fits { PLACEHOLDER } else { PLACEHOLDER_SHORT };
    if shown != want {
        input.set_placeholder_text(want);
    }
}

/// A fresh multi-line input box.
pub(crate) fn new_input() -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(PLACEHOLDER);
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
