//! The conversation's saved-session journal: appended to when the user sends a message, after
//! every message, and about every second while an answer streams (the partial answer, so that a
//! `kill -9` loses at most a second of it); restored on `--resume` or `--session`, exported
//! with `/export`.

use std::time::{Duration, Instant};

use kimi_core::engine::SharedTrace;
use kimi_core::session::{
    PartialAnswer, Session, SessionStore, SessionTrace, to_markdown, to_openai_json,
};
use kimi_protocol::Content;

use super::journal_sync::{self, JournalState};
use super::state::{App, AssistantTurn, Entry, PaneState, ToolPane, TurnState};

/// Least time between two saves of a streaming answer: each appends the answer so far to the
/// journal, so it runs at most this often (the 100 ms ticker makes the gap at most ~1.1 s).
pub(crate) const PARTIAL_SAVE_EVERY: Duration = Duration::from_secs(1);

/// Whether the streaming answer has changed since the last save, that save is old enough, and
/// the writer has written it (each holds a copy of the whole answer: one at a time).
pub(crate) fn partial_due(app: &App, now: Instant) -> bool {
    app.streaming.as_ref().is_some_and(|s| !s.is_empty())
        && app.change_rev != app.saved_rev
        && app.journal.writer.as_ref().is_none_or(|w| !w.busy())
        && app
            .last_save
            .is_none_or(|t| now.saturating_duration_since(t) >= PARTIAL_SAVE_EVERY)
}

/// The partial answers the file holds: the restored ones, then the one streaming now.
fn partials(app: &App) -> Vec<PartialAnswer> {
    let mut all = app.partial.clone();
    all.extend(super::partial::live_answer(app));
    all
}

/// The session as it stands: the saved metadata plus the current conversation and traces.
pub fn snapshot(app: &App) -> Option<Session> {
    let meta = app.session.as_ref()?;
    let mut s = meta.clone();
    s.messages = app.conversation.clone();
    s.traces.clear();
    for (i, trace) in app.traces.iter().enumerate() {
        let message_index = app
            .trace_messages
            .get(i)
            .copied()
            .unwrap_or(app.conversation.len());
        s.push_trace(message_index, trace.read().clone());
    }
    s.partial = partials(app);
    s.touch();
    Some(s)
}

/// Send what changed since the last save to the session's journal writer (a thread: nothing
/// here waits for the disk). A failure, reported by the writer (see [`poll`]) or found here,
/// is reported once and saving stops (a file it refused to replace is left untouched).
pub fn save(app: &mut App, store: Option<&SessionStore>) {
    poll(app);
    // An empty conversation has nothing to save, unless the journal holds messages it no
    // longer has (going back before the first message): then the cut is written.
    let cut_to_nothing = app.saved.is_some_and(|(m, t)| m > 0 || t > 0);
    let (Some(store), false) = (store, app.conversation.is_empty() && !cut_to_nothing) else {
        return;
    };
    let finals = app.trace_messages.len().min(app.traces.len());
    let state = (app.conversation.len(), finals);
    if app.saved == Some(state) && app.saved_rev == app.change_rev {
        return;
    }
    let Some(id) = app.session.as_ref().map(|s| s.id.clone()) else {
        return;
    };
    // One writer per session: the lock is taken before the first write of this id (and the
    // lock of a session left behind by /clear is released).
    if app.lock.as_ref().is_none_or(|l| l.id != id) {
        app.lock = None;
        match store.lock(&id) {
            Ok(l) => app.lock = Some(l),
            Err(e) => return stop_saving(app, &e.to_string()),
        }
    }
    let now = kimi_core::session::time::now_unix_ms();
    if let Some(s) = app.streaming.as_mut() {
        s.answer.saved_unix_ms = now;
    }
    if let Some(meta) = app.session.as_mut() {
        meta.touch();
    }
    // The first write of a new session creates its journal and never replaces a file already
    // there (another session with the same id, a corrupt or newer one); after that the
    // journal is this run's own, appended to.
    let creating = app.saved.is_none();
    let (records, counts) = journal_sync::records(app, creating, now);
    match journal_sync::writer_for(app, store, &id, creating) {
        Ok(w) => w.send(records),
        Err(e) => return stop_saving(app, &format!("cannot start the session writer: {e}")),
    }
    app.saved = Some(counts);
    app.saved_rev = app.change_rev;
    // The save is the effect of the event just handled: its instant, as `partial_due` reads.
    app.last_save = Some(app.now);
}

/// The session restored was read from an old `ID.json` (or a file outside the store): its
/// first write creates `ID.jsonl` holding all of it, beside the old file, which stays as it was.
pub fn continue_old_file(app: &mut App) {
    app.saved = None;
    app.journal.beside_legacy = true;
}

/// Report a failure of the journal writer, if it reported one: once, and saving stops.
pub fn poll(app: &mut App) {
    let failed = app.journal.writer.as_ref().and_then(|w| w.error());
    if let Some(e) = failed {
        stop_saving(app, &e.to_string());
    }
}

/// Wait (at most `timeout`) until the writer has written and fsynced all it was sent, then
/// report any failure: on the way out, and in tests.
pub fn flush(app: &mut App, timeout: Duration) -> bool {
    let done = app.journal.flush(timeout);
    poll(app);
    done
}

fn stop_saving(app: &mut App, why: &str) {
    tracing::error!("session not saved: {why}");
    app.notice(
        format!("Session not saved: {why}. Saving is off for this run."),
        true,
    );
    app.session = None;
    app.journal.writer = None;
    app.dirty = true;
}

/// `/export md|json PATH`.
/// Where `/export` without a path writes: `DIR/kimi-ID.md` (or `.json`).
pub fn default_export_path(dir: &std::path::Path, id: &str, markdown: bool) -> std::path::PathBuf {
    dir.join(format!(
        "kimi-{id}.{}",
        if markdown { "md" } else { "json" }
    ))
}

pub fn export_to(app: &mut App, markdown: bool, path: Option<&str>) {
    let Some(session) = snapshot(app) else {
        return app.notice("Nothing to export: sessions are off for this run.", true);
    };
    // No path: a file named for the session, in the directory kimi-tui was started from,
    // named in full in the notice so it can be found.
    let path = match path {
        Some(p) => p.to_owned(),
        None => {
            let dir = std::env::current_dir().unwrap_or_default();
            default_export_path(&dir, &session.id, markdown)
                .display()
                .to_string()
        }
    };
    let path = path.as_str();
    let text = if markdown {
        to_markdown(&session)
    } else {
        to_openai_json(&session)
    };
    // The whole conversation: private, like the session file itself.
    match kimi_core::private_fs::write(std::path::Path::new(path), text.as_bytes()) {
        Ok(()) => app.notice(format!("Exported to {path}."), false),
        Err(e) => app.notice(format!("Cannot write {path}: {e}"), true),
    }
}

/// Rebuild the transcript, tool panes and inspector traces from a saved session.
pub fn restore(app: &mut App, mut session: Session) {
    let turns = session.turns();
    app.conversation = std::mem::take(&mut session.messages);
    let traces = std::mem::take(&mut session.traces);
    app.partial = std::mem::take(&mut session.partial);
    app.partial.sort_by_key(|p| p.after_message);
    app.trace_messages = traces.iter().map(|t| t.message_index).collect();
    app.traces = traces
        .into_iter()
        .map(|SessionTrace { trace, .. }| SharedTrace::new(trace))
        .collect();
    app.transcript.entries.clear();
    let mut next_partial = 0;
    for (i, m) in app.conversation.iter().enumerate() {
        while let Some(p) = app
            .partial
            .get(next_partial)
            .filter(|p| p.after_message <= i)
        {
            let trace = app
                .trace_messages
                .iter()
                .rposition(|&k| k == p.after_message);
            app.transcript.entries.push(interrupted_entry(p, trace));
            next_partial += 1;
        }
        match m.role.as_str() {
            "user" => app.transcript.entries.push(Entry::User {
                id: Default::default(),
                text: m.text(),
            }),
            "assistant" => {
                let trace = app.trace_messages.iter().position(|&k| k == i);
                let mut turn = AssistantTurn::new(trace);
                match &m.content {
                    Some(Content::Text(text)) => {
                        turn.set_text(text);
                        turn.share_text(text);
                    }
                    _ => turn.set_text(&m.text()),
                }
                if let Some(r) = m
                    .reasoning_content
                    .as_deref()
                    .filter(|r| !r.trim().is_empty())
                {
                    turn.reasoning.set(r);
                }
                turn.state = TurnState::Done;
                for (k, call) in m.tool_calls.iter().enumerate() {
                    let mut pane = ToolPane::new(
                        k,
                        // Raw, as live panes keep them: escaped when drawn, matched by id.
                        call.id.clone(),
                        call.function.name.clone(),
                    );
                    pane.arguments = call.function.arguments.clone();
                    pane.state = PaneState::Answered;
                    turn.panes.push(pane);
                }
                app.transcript
                    .entries
                    .push(Entry::Assistant(Box::new(turn)));
            }
            "tool" => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let pane = app
                    .transcript
                    .entries
                    .iter_mut()
                    .rev()
                    .find_map(|e| match e {
                        Entry::Assistant(t) => t.panes.iter_mut().find(|p| p.id == id),
                        _ => None,
                    });
                if let Some(p) = pane {
                    p.result = Some(m.text());
                }
            }
            "system" => app.system_prompt = Some(m.text()),
            _ => {}
        }
    }
    for p in app.partial.get(next_partial..).unwrap_or_default() {
        let trace = app
            .trace_messages
            .iter()
            .rposition(|&k| k == p.after_message);
        app.transcript.entries.push(interrupted_entry(p, trace));
    }
    let end = app.conversation.len();
    // A request that failed (its trace says how) ended; one without an answer, an error or a
    // partial record was cut off.
    let ended = app.partial.last().is_some_and(|p| p.after_message >= end)
        || app
            .trace_messages
            .iter()
            .zip(&app.traces)
            .any(|(&k, t)| k == end && t.read().error.is_some());
    let unfinished = match app.conversation.last() {
        _ if ended => None,
        Some(m) if m.role == "user" => Some("no answer to the last message was saved"),
        Some(m) if m.role == "tool" => Some("the model never answered the last tool result"),
        Some(m) if m.role == "assistant" && !m.tool_calls.is_empty() => {
            Some("its tool calls never ran to the end")
        }
        _ => None,
    };
    if let Some(why) = unfinished {
        app.notice(
            format!("The last turn was interrupted: {why}. /retry asks again."),
            true,
        );
    }
    let note = format!(
        "Resumed session {} ({turns} turns, saved {}).",
        session.id,
        kimi_core::session::time::format_utc_minute(session.updated_unix_ms)
    );
    app.session = Some(session);
    // Loading checked the journal: this run appends to it.
    app.saved = Some((app.conversation.len(), app.traces.len()));
    app.journal = JournalState::restored(app);
    app.notice(note, false);
}

/// A restored interrupted answer: its reasoning, text and the calls seen so far (which never
/// run).
fn interrupted_entry(p: &PartialAnswer, trace: Option<usize>) -> Entry {
    let mut turn = AssistantTurn::new(trace);
    turn.set_text(&p.content);
    if !p.reasoning_content.trim().is_empty() {
        // Over: shown folded, as a finished answer's.
        turn.reasoning.set(&p.reasoning_content);
    }
    turn.state = TurnState::Interrupted;
    for (k, call) in p.tool_calls.iter().enumerate() {
        let mut pane = ToolPane::new(k, call.id.clone(), call.function.name.clone());
        pane.arguments = call.function.arguments.clone();
        pane.state = PaneState::Incomplete;
        turn.panes.push(pane);
    }
    Entry::Assistant(Box::new(turn))
}
