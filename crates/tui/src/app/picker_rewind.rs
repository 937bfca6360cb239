//! Going back (`Esc Esc`, as in Codex): on an idle screen with an empty input, a first Esc arms
//! (the input's placeholder says so), a second opens a picker of the earlier user messages.
//! Picking one cuts the conversation before it (`Op::Rewind`: the agent owns the conversation;
//! the journal gets a cut record and keeps the lines of the part cut off), the transcript
//! drops the cells from that message on, and the message is put in the input to edit and send.
//!
//! Esc keeps its other meanings first: it cancels a running turn, unselects a selected tool
//! call, closes the dialog, inspector or help it is pressed in. Any other key disarms.

use kimi_core::engine::Op;
use kimi_protocol::sanitize;

use super::composer::new_input;
use super::event::Effect;
use super::picker::{PickItem, PickTarget, Picker};
use super::state::{App, Entry};

/// What the input's placeholder says while Esc is armed.
pub(super) const ARMED_HINT: &str =
    "Esc again: edit an earlier message (any other key: never mind)";

/// Characters of a message shown in its picker row.
const ROW_CHARS: usize = 200;

/// Esc on an idle input with nothing selected: arm, or (armed) open the picker.
pub(super) fn esc(app: &mut App, armed: bool) {
    if !app.composer.input.is_empty() || app.busy {
        return;
    }
    if armed {
        return open(app);
    }
    app.composer.esc_armed = true;
    app.composer.input.set_placeholder_text(ARMED_HINT);
}

/// A key other than the second Esc: the placeholder says what it said before.
pub(super) fn disarm(app: &mut App) {
    let normal = new_input().placeholder_text().to_owned();
    app.composer.input.set_placeholder_text(normal);
}

/// The earlier user messages, newest first.
pub(super) fn open(app: &mut App) {
    let mut items: Vec<PickItem> = app
        .conversation
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.text())
        .enumerate()
        .map(|(user_index, text)| PickItem {
            label: format!(
                "{:>3}  {}",
                user_index + 1,
                sanitize::one_line(&text, ROW_CHARS)
            ),
            target: PickTarget::Message { user_index, text },
        })
        .collect();
    items.reverse();
    if items.is_empty() {
        return app.notice("No earlier message to go back to yet.", false);
    }
    app.layers.picker = Some(Picker::new(
        "Edit an earlier message",
        items,
        "Enter: cut the conversation before it and edit it · Esc: close",
    ));
}

/// Cut before the `user_index`-th user message and put `text` in the input.
pub(super) fn pick(app: &mut App, user_index: usize, text: &str, fx: &mut Vec<Effect>) {
    if app.busy {
        // Not expected (the picker opens on an idle screen), but a turn never loses its
        // messages under it.
        return app.notice("A turn is running: go back once it has ended.", true);
    }
    let Some(cut) = kimi_core::engine::user_message_index(&app.conversation, user_index) else {
        return app.notice("That message is no longer in the conversation.", true);
    };
    // The transcript's cells from that message's on go (notices before it stay).
    let cell = app
        .transcript
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Entry::User { .. }))
        .nth(user_index)
        .map(|(i, _)| i);
    if let Some(i) = cell {
        app.transcript.entries.truncate(i);
    }
    // Interrupted answers restored after the cut go with it, as the journal's replay drops them.
    app.partial.retain(|p| p.after_message < cut);
    app.transcript.turn_entry = None;
    app.transcript.selected_pane = None;
    app.transcript.scroll_from_bottom = 0;
    app.layers.inspector.selected = None;
    app.composer.history_pos = None;
    app.composer.input = new_input();
    // A message that starts with `/` was typed `//` (see `commands::unescape`): put back as
    // typed, so that Enter sends it again instead of running a command.
    if text.starts_with('/') {
        app.composer.input.insert_char('/');
    }
    app.composer.input.insert_str(text);
    fx.push(Effect::Agent(Op::Rewind { user_index }));
    app.notice(
        "Went back: edit the message and send it. What was cut off stays in the session file.",
        false,
    );
}
