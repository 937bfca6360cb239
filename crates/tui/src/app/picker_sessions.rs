//! `/sessions`: a picker of the saved sessions (the listing of `kimi-tui sessions`, newest
//! first: date, profile and model, turns, size, first message); Enter resumes one in place. The
//! app saves what it has, locks and reads the chosen session, rebuilds the transcript from it as
//! `--resume` does, and hands its conversation to the agent (`Op::Load`). Refused while a turn
//! runs: its answer would land in the other session.

use std::time::Duration;

use kimi_core::engine::Op;
use kimi_core::session::{SessionList, SessionStore, time::format_utc_minute};
use kimi_protocol::sanitize::{for_terminal, one_line};

use super::event::Effect;
use super::picker::{PickItem, PickTarget, Picker};
use super::state::App;

/// How long switching waits for the current session's writer to finish.
const SWITCH_SAVE_WAIT: Duration = Duration::from_secs(10);

/// `/sessions` typed: the event loop lists the store (`Effect::ListSessions`).
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
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// Open the picker on `list` (from [`SessionStore::list`]); its problems become a notice.
pub fn open(app: &mut App, list: SessionList) {
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
                "{}  {this}{who}  {} turns  {}  {}",
                format_utc_minute(s.updated_unix_ms),
                s.turns,
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
pub(super) fn pick(app: &mut App, id: String, fx: &mut Vec<Effect>) {
    if app.busy {
        return app.notice(
            "A turn is running: switch sessions once it has ended.",
            true,
        );
    }
    if app.session.as_ref().is_some_and(|s| s.id == id) && app.saved.is_some() {
        return app.notice("That is the session open now.", false);
    }
    fx.push(Effect::ResumeSession { id });
}

/// Switch to session `id` in place (run by the event loop, which sends the returned `Op::Load`
/// to the agent). On any failure the current session stays as it was, with a notice.
pub fn resume(app: &mut App, store: &SessionStore, id: &str) -> Option<Op> {
    // What this run has not written yet goes to its own file first.
    super::saved::save(app, Some(store));
    if !super::saved::flush(app, SWITCH_SAVE_WAIT) {
        app.notice(
            "The current session's writer did not finish: not switching, so nothing is lost.",
            true,
        );
        return None;
    }
    let lock = match store.lock(id) {
        Ok(l) => l,
        Err(e) => {
            app.notice(for_terminal(&e.to_string()).into_owned(), true);
            return None;
        }
    };
    let opened = match store.open(id) {
        Ok(o) => o,
        Err(e) => {
            app.notice(for_terminal(&e.to_string()).into_owned(), true);
            return None;
        }
    };
    let mut session = opened.session;
    // The file is what is continued, whatever id it holds inside (as `--session ID` does).
    let same_id = session.id == id;
    session.id = id.to_owned();
    // The view of the old conversation goes; the new one is rebuilt from the file.
    app.streaming = None;
    app.transcript.turn_entry = None;
    app.transcript.selected_pane = None;
    app.transcript.scroll_from_bottom = 0;
    app.layers.inspector.selected = None;
    app.layers.inspector.open = false;
    app.composer.history_pos = None;
    app.saved = None;
    app.journal = Default::default();
    super::saved::restore(app, session);
    app.lock = Some(lock);
    if !(opened.journal && same_id) {
        // An old `.json` (or a journal with another id inside): continued as a new journal.
        super::saved::continue_old_file(app);
    }
    if let Some(n) = opened.notice {
        app.notice(for_terminal(&n).into_owned(), true);
    }
    let traces = app
        .trace_messages
        .iter()
        .copied()
        .zip(app.traces.iter().cloned())
        .collect();
    Some(Op::Load {
        messages: app.conversation.clone(),
        traces,
    })
}

/// The agent took the session's conversation: its counts should be the view's.
pub(super) fn loaded(app: &App, messages: usize, traces: usize) {
    if (messages, traces) != (app.conversation.len(), app.traces.len()) {
        tracing::warn!(
            messages,
            traces,
            view = app.conversation.len(),
            "the loaded conversation and the view differ"
        );
    }
}
