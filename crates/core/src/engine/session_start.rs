//! [`Op::Record`](super::Op::Record) and [`Op::Resume`](super::Op::Resume): the agent starts
//! recording into a session, a new one or a saved one, whose history it first reports as
//! events (see [`super::replay`]), with its recorder paused: that history is in the journal.

use std::time::Duration;

use super::agent::State;
use super::event::EngineEvent;
use super::inbox::Io;
use super::recorder::Recorder;
use super::session_op::{Handoff, SessionHandoff};
use super::shared_trace::SharedTrace;
use crate::session::{Resumed, SessionStore};
use kimi_protocol::sanitize::for_terminal;

/// How long switching sessions waits for the current session's writer to finish.
const SWITCH_SAVE_WAIT: Duration = Duration::from_secs(10);

pub(crate) async fn record(state: &mut State, io: &mut Io, handoff: SessionHandoff) {
    match handoff.take() {
        None => {}
        Some(Handoff::New { store, meta }) => {
            finish_recording(io).await;
            io.recorder = Some(Recorder::new(store, *meta));
        }
        Some(Handoff::Resume { store, resumed }) => start(state, io, store, *resumed).await,
    }
}

/// `/sessions`: session `id`, locked and read off the agent's task, then continued.
pub(crate) async fn resume(state: &mut State, io: &mut Io, store: SessionStore, id: String) {
    if io.recorder.as_ref().is_some_and(|r| r.meta().id == id) {
        let text = "That is the session open now.".to_owned();
        return io.emit(EngineEvent::Notice { text, error: false }).await;
    }
    let s = store.clone();
    let opened = tokio::task::spawn_blocking(move || crate::session::open_stored(&s, &id)).await;
    match opened {
        Ok(Ok(resumed)) => start(state, io, store, resumed).await,
        Ok(Err(e)) => {
            let text = for_terminal(&e.to_string()).into_owned();
            io.emit(EngineEvent::Notice { text, error: true }).await;
        }
        Err(e) => {
            let text = format!("cannot read the session: {e}");
            io.emit(EngineEvent::Notice { text, error: true }).await;
        }
    }
}

/// The current recorder's writers finish (off the agent's task) before another takes over.
pub(crate) async fn finish_recording(io: &mut Io) {
    if let Some(mut old) = io.recorder.take() {
        let done = tokio::task::spawn_blocking(move || old.flush(SWITCH_SAVE_WAIT)).await;
        if !matches!(done, Ok(true)) {
            tracing::error!("the session writer did not finish within {SWITCH_SAVE_WAIT:?}");
        }
    }
}

async fn start(state: &mut State, io: &mut Io, store: SessionStore, resumed: Resumed) {
    finish_recording(io).await;
    let session = &resumed.session;
    let (events, traces) = super::replay::resume_events(session, resumed.notice.clone());
    state.conversation = session.messages.clone();
    state.traces = traces;
    // The session's own system prompt (its first message) stays as saved.
    if let Some(m) = session.messages.first().filter(|m| m.role == "system") {
        state.system_prompt = Some(m.text());
    }
    let shared: Vec<SharedTrace> = state.traces.iter().map(|(_, t)| t.clone()).collect();
    let mut recorder = Recorder::resumed(store, resumed, &shared);
    recorder.pause(true);
    io.recorder = Some(recorder);
    for e in events {
        io.emit(e).await;
    }
    if let Some(r) = io.recorder.as_mut() {
        r.pause(false);
    }
}
