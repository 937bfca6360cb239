//! The transcript component: the cells of the conversation as shown, where the view is
//! scrolled to, the selected tool pane, and the rendering cache the widget keeps.

use super::state::{AssistantTurn, Entry, ToolPane};

/// The transcript's state, its view cache and the layout feedback it gets from the last frame.
pub(crate) struct Transcript {
    pub(crate) entries: Vec<Entry>,
    /// The entry of the assistant turn being streamed (or the last one).
    pub(crate) turn_entry: Option<usize>,
    /// Lines scrolled up from the bottom; 0 = pinned to the bottom, following the stream.
    pub(crate) scroll_from_bottom: usize,
    /// The selected tool pane (entry index, pane index), cycled with Tab.
    pub(crate) selected_pane: Option<(usize, usize)>,
    /// Tab chose a pane: the next layout scrolls the transcript to show it.
    pub(crate) reveal_selected: bool,
    /// Last measured viewport height, for page scrolling (layout feedback).
    pub(crate) page_height: usize,
    /// (entry count, width) at the last layout, to keep a scrolled-up view still.
    pub(crate) last_seen: (usize, u16),
    /// Folded reasoning cells are shown open (the reasoning key toggles it).
    pub(crate) reasoning_open: bool,
    /// The rendering: rows of the cells near the viewport (view state, never read by
    /// `update`).
    pub(crate) view: crate::ui::transcript::TranscriptView,
    /// The inline screen's rendering: what is in the scrollback, and the rows still live.
    pub(crate) inline: crate::ui::inline::InlineLog,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            entries: Vec::new(),
            turn_entry: None,
            scroll_from_bottom: 0,
            selected_pane: None,
            reveal_selected: false,
            page_height: 20,
            last_seen: (0, 0),
            reasoning_open: false,
            view: Default::default(),
            inline: Default::default(),
        }
    }
}

impl Transcript {
    /// The assistant turn being streamed, if there is one.
    pub(crate) fn current_turn(&mut self) -> Option<&mut AssistantTurn> {
        // Notices may be pushed while a turn streams: the turn is found by index, not position.
        match self.turn_entry.and_then(|i| self.entries.get_mut(i)) {
            Some(Entry::Assistant(t)) => Some(t),
            _ => None,
        }
    }

    /// The assistant turn being streamed, read only.
    pub(crate) fn turn(&self) -> Option<&AssistantTurn> {
        match self.turn_entry.and_then(|i| self.entries.get(i)) {
            Some(Entry::Assistant(t)) => Some(t),
            _ => None,
        }
    }

    /// The pane of the call `id` in the current turn: the engine numbers calls by position
    /// among complete calls, the stream by order of appearance, so engine events match by id.
    pub(crate) fn pane_for_call(&mut self, id: &str) -> Option<&mut ToolPane> {
        let turn = self.current_turn()?;
        turn.rev += 1;
        let k = turn
            .panes
            .iter()
            .position(|p| p.id == id && p.result.is_none())
            .or_else(|| turn.panes.iter().position(|p| p.id == id))?;
        turn.panes.get_mut(k)
    }
}
