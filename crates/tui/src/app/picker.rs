//! The one picker of the app: a list shown over the transcript (earlier messages for `Esc Esc`,
//! saved sessions for `/sessions`), newest first, one line per item. It takes the keys while
//! open (`Context::Picker`); Enter hands the chosen item to what opened it, Esc closes it.
//! Drawn by `ui::picker` from this state only.

use crossterm::event::KeyEvent;

use super::event::Effect;
use super::keys::{Action, Context, lookup};
use super::state::App;

/// What picking an item does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PickTarget {
    /// Go back to the `user_index`-th user message (from 0) of the conversation; `text` is the
    /// message, put in the input to edit.
    Message { user_index: usize, text: String },
    /// Resume the saved session `id` in place.
    Session { id: String },
    /// Switch to the profile or model a resumed session was recorded with.
    Switch(super::resume_switch::Switch),
    /// Keep what is in use (closes the picker).
    Keep,
}

/// One row: its text (one line, sanitized when built) and what it picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PickItem {
    pub(crate) label: String,
    pub(crate) target: PickTarget,
}

/// An open picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Picker {
    pub(crate) title: String,
    pub(crate) items: Vec<PickItem>,
    /// Index into `items`.
    pub(crate) selected: usize,
    /// A line under the list (what Enter does).
    pub(crate) footer: String,
}

impl Picker {
    pub(crate) fn new(
        title: impl Into<String>,
        items: Vec<PickItem>,
        footer: impl Into<String>,
    ) -> Self {
        Picker {
            title: title.into(),
            items,
            selected: 0,
            footer: footer.into(),
        }
    }

    pub(crate) fn chosen(&self) -> Option<&PickItem> {
        self.items.get(self.selected)
    }

    /// The first item on screen when `rows` rows show: the selected one stays in view.
    pub(crate) fn top(&self, rows: usize) -> usize {
        (self.selected + 1).saturating_sub(rows.max(1))
    }
}

/// Rows of items a page moves by: the picker is as tall as the screen allows.
fn page(app: &App) -> usize {
    usize::from(app.screen.1).saturating_sub(8).max(1)
}

/// A key while the picker is open.
pub(super) fn key(app: &mut App, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let page = page(app);
    let Some(p) = app.layers.picker.as_mut() else {
        return;
    };
    let last = p.items.len().saturating_sub(1);
    match lookup(Context::Picker, k) {
        Some(Action::LineUp) => p.selected = p.selected.saturating_sub(1),
        Some(Action::LineDown) => p.selected = (p.selected + 1).min(last),
        Some(Action::PageUp) => p.selected = p.selected.saturating_sub(page),
        Some(Action::PageDown) => p.selected = (p.selected + page).min(last),
        Some(Action::Top) => p.selected = 0,
        Some(Action::Bottom) => p.selected = last,
        Some(Action::ClosePicker) => app.layers.picker = None,
        Some(Action::Pick) => {
            let target = p.chosen().map(|i| i.target.clone());
            app.layers.picker = None;
            match target {
                Some(PickTarget::Message { user_index, text }) => {
                    super::picker_rewind::pick(app, user_index, &text, fx)
                }
                Some(PickTarget::Session { id }) => super::picker_sessions::pick(app, id, fx),
                Some(PickTarget::Switch(switch)) => super::resume_switch::pick(switch, fx),
                Some(PickTarget::Keep) | None => {}
            }
        }
        _ => {}
    }
}
