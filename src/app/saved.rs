//! The conversation's saved-session file: written after every message, restored on `--resume`
//! or `--session`, exported with `/export`.

use crate::sanitize;
use crate::session::{
    Session, SessionStore, SessionTrace, SessionView, to_markdown, to_openai_json,
};

use super::state::{App, AssistantTurn, Entry, PaneState, ToolPane, TurnState};

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
        s.push_trace(message_index, trace.clone());
    }
    s.touch();
    Some(s)
}

/// Write the session file; a failure is reported once and saving stops (the file it refused
/// to replace is left untouched).
pub fn save(app: &mut App, store: Option<&SessionStore>) {
    let (Some(store), false) = (store, app.conversation.is_empty()) else {
        return;
    };
    let state = (app.conversation.len(), app.traces.len());
    if app.saved == Some(state) {
        return;
    }
    let Some(meta) = app.session.as_mut() else {
        return;
    };
    meta.touch();
    let view = SessionView {
        meta,
        messages: &app.conversation,
        traces: app
            .traces
            .iter()
            .enumerate()
            .map(|(i, t)| (app.trace_messages.get(i).copied().unwrap_or(state.0), t))
            .collect(),
    };
    // The first write checks the file already there (a corrupt or newer one is never
    // replaced); after that the file is this run's own.
    let written = store.save_view(&view, app.saved.is_none());
    match written {
        Ok(_) => app.saved = Some(state),
        Err(e) => {
            let text = format!("Session not saved: {e}. Saving is off for this run.");
            app.notice(text, true);
            app.session = None;
        }
    }
}

/// `/export md|json PATH`.
pub fn export_to(app: &mut App, markdown: bool, path: &str) {
    let Some(session) = snapshot(app) else {
        return app.notice("Nothing to export: sessions are off for this run.", true);
    };
    let text = if markdown {
        to_markdown(&session)
    } else {
        to_openai_json(&session)
    };
    // The whole conversation: private, like the session file itself.
    match crate::private_fs::write(std::path::Path::new(path), text.as_bytes()) {
        Ok(()) => app.notice(format!("Exported to {path}."), false),
        Err(e) => app.notice(format!("Cannot write {path}: {e}"), true),
    }
}

/// Rebuild the transcript, tool panes and inspector traces from a saved session.
pub fn restore(app: &mut App, mut session: Session) {
    let turns = session.turns();
    app.conversation = std::mem::take(&mut session.messages);
    let traces = std::mem::take(&mut session.traces);
    app.trace_messages = traces.iter().map(|t| t.message_index).collect();
    app.traces = traces
        .into_iter()
        .map(|SessionTrace { trace, .. }| trace)
        .collect();
    app.entries.clear();
    for (i, m) in app.conversation.iter().enumerate() {
        match m.role.as_str() {
            "user" => app.entries.push(Entry::User {
                text: m.text(),
                cache: Default::default(),
            }),
            "assistant" => {
                let trace = app.trace_messages.iter().position(|&k| k == i);
                let mut turn = AssistantTurn::new(trace);
                turn.markdown.set_text(&sanitize::for_terminal(&m.text()));
                turn.state = TurnState::Done;
                for (k, call) in m.tool_calls.iter().enumerate() {
                    let mut pane = ToolPane::new(
                        k,
                        sanitize::for_terminal(&call.id).into_owned(),
                        sanitize::for_terminal(&call.function.name).into_owned(),
                    );
                    pane.arguments = call.function.arguments.clone();
                    pane.state = PaneState::Answered;
                    turn.panes.push(pane);
                }
                app.entries.push(Entry::Assistant(Box::new(turn)));
            }
            "tool" => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let pane = app.entries.iter_mut().rev().find_map(|e| match e {
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
    let note = format!(
        "Resumed session {} ({turns} turns, saved {}).",
        session.id,
        crate::session::time::format_utc_minute(session.updated_unix_ms)
    );
    app.session = Some(session);
    // Loading checked the file: it is ours to replace from now on.
    app.saved = Some((app.conversation.len(), app.traces.len()));
    app.notice(note, false);
}
