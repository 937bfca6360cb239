//! `/sessions`: a picker of the saved sessions (the listing of `kimi-tui sessions`, newest
//! first: date, profile and model, turns, size, first message), listed off the event loop;
//! Enter resumes one in place: the agent finishes writing the current session, locks and reads
//! the chosen one and reports its history as `--resume` does (`Op::Resume`). Refused while a
//! turn runs: its answer would land in the other session.

use kimi_core::session::{SessionList, time::format_utc_minute};
use kimi_protocol::sanitize::{for_terminal, one_line};

use super::event::Effect;
use super::picker::{PickItem, PickTarget, Picker};
use super::state::App;

/// `/sessions` typed: the store is listed off the event loop (`Effect::ListSessions`).
pub(super) fn command(app: &mut App, fx: &mut Vec<Effect>) {
    if app.busy {
        return app.notice(
            "A turn is running: /sessions once it has ended (or Esc to cancel it).",
            true,
        );
    }
    fx.push(Effect::ListSessions);
}

/// `bytes` as `812 B`, `3.4 KiB`, `1.2 MiB`.
pub(crate) fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Open the picker on `list` (from `SessionStore::list`); its problems become a notice.
pub(crate) fn open(app: &mut App, list: SessionList) {
    let current = app.session.as_ref().map(|s| s.id.clone());
    if !list.problems.is_empty() {
        let text = list
            .problems
            .iter()
            .map(|p| for_terminal(p).into_owned())
            .collect::<Vec<_>>()
            .join("\n  ");
        app.notice(format!("Some session files were skipped:\n  {text}"), true);
    }
    let items: Vec<PickItem> = list
        .sessions
        .into_iter()
        .map(|s| {
            // Early in the row: a narrow screen cuts the end.
            let this = if current.as_deref() == Some(s.id.as_str()) {
                "(this one)  "
            } else {
                ""
            };
            let who = if s.model.is_empty() {
                one_line(&s.profile, 30)
            } else {
                format!("{} · {}", one_line(&s.profile, 30), one_line(&s.model, 40))
            };
            let label = format!(
                "{}  {this}{who}  {}  {}  {}",
                format_utc_minute(s.updated_unix_ms),
                crate::ui::count::count(s.turns as u64, "turn"),
                size_text(s.bytes),
                one_line(&s.first_line, 80),
            );
            PickItem {
                label,
                target: PickTarget::Session { id: s.id },
            }
        })
        .collect();
    if items.is_empty() {
        return app.notice("No saved sessions yet.", false);
    }
    app.layers.picker = Some(Picker::new(
        "Saved sessions (UTC)",
        items,
        "Enter: resume it here · Esc: close",
    ));
}

/// A session chosen in the picker.
pub(crate) fn pick(app: &mut App, id: String, fx: &mut Vec<Effect>) {
    if app.busy {
        return app.notice(
            "A turn is running: switch sessions once it has ended.",
            true,
        );
    }
    if app.session.as_ref().is_some_and(|s| s.id == id) {
        return app.notice("That is the session open now.", false);
    }
    app.switch.picked_session = Some(id.clone());
    fx.push(Effect::ResumeSession { id });
}
