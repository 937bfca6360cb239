//! A saved session taking the place of the conversation (`--resume`, `--session`, a pick in
//! `/sessions`): the agent reports its history as the events of live turns, between
//! `Resuming` and `Resumed`; here the view is emptied before, and the user told after.

use kimi_core::session::{Session, time::format_utc_minute};

use super::state::App;

/// The history of `meta` follows: the view of the old conversation goes.
pub(super) fn resuming(app: &mut App, meta: Session, notice: Option<String>) {
    super::view::forget_conversation(app);
    // The history's usage reports measure the context again.
    super::models_context::forget_measure(app);
    app.layers.inspector.selected = None;
    app.layers.inspector.open = false;
    app.composer.history_pos = None;
    app.session = Some(meta);
    app.replaying = true;
    if let Some(n) = notice {
        app.notice(n, false);
    }
}

/// The history has been reported: `turns` user messages.
pub(super) fn resumed(app: &mut App, meta: Session, turns: usize) {
    app.replaying = false;
    // Interrupted answers stay in the journal (and in an export), never sent.
    app.partial = meta.partial.clone();
    let note = format!(
        "Resumed session {} ({}, saved {}).",
        meta.id,
        crate::ui::count::count(turns as u64, "turn"),
        format_utc_minute(meta.updated_unix_ms)
    );
    app.notice(note, false);
    super::resume_switch::offer(app, &meta);
    app.session = Some(meta);
}
