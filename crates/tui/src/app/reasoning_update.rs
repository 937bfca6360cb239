//! How stream events and keys change the reasoning cells (kept out of `update.rs`, which
//! dispatches here).

use std::time::Instant;

use super::state::{App, Entry};

/// A reasoning delta for the current answer. Text the client moved out of the answer (a
/// server without a reasoning parser: everything before `</think>`) arrives as one delta equal
/// to the whole answer so far: the answer is emptied, once, and the text becomes reasoning.
pub(super) fn reasoning(app: &mut App, text: &str) {
    let now = app.now;
    let Some(turn) = app.current_turn() else {
        return;
    };
    if turn.reasoning.is_empty() && !text.is_empty() && turn.text() == text {
        turn.set_text("");
    }
    if let Some(turn) = app.current_turn() {
        turn.reasoning.push(text, now);
        turn.rev += 1;
    }
}

/// Everything received as reasoning was the answer (a K3 model answered in its think
/// channel): the reasoning cell empties, once, and its text goes to the front of the answer.
pub(super) fn reasoning_was_text(app: &mut App) {
    let Some(turn) = app.current_turn() else {
        return;
    };
    let shown_before = turn.text().to_owned();
    let moved = std::mem::take(&mut turn.reasoning);
    turn.set_text(&format!("{}{shown_before}", moved.text()));
    turn.rev += 1;
}

/// The answer (text or a call) began, or the round ended: the live cell folds.
pub(super) fn answer_started(app: &mut App) {
    let now = app.now;
    if let Some(turn) = app.current_turn()
        && turn.reasoning.live()
    {
        turn.reasoning.end(now);
        turn.rev += 1;
    }
}

/// Time passed: a live cell is laid out again when its timer reaches another second, so the
/// elapsed time counts up between deltas (the loop wakes for it: `Reasoning::next_tick`).
pub(super) fn tick(app: &mut App, now: Instant) {
    if let Some(turn) = app.current_turn()
        && turn.reasoning.tick(now)
    {
        turn.rev += 1;
        app.dirty = true;
    }
}

/// The reasoning key: open or fold every finished cell.
pub(super) fn toggle(app: &mut App) {
    app.transcript.reasoning_open = !app.transcript.reasoning_open;
    for e in &mut app.transcript.entries {
        if let Entry::Assistant(t) = e
            && !t.reasoning.is_empty()
        {
            t.rev += 1;
        }
    }
    app.dirty = true;
}
