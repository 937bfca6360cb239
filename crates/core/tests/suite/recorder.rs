//! The agent records its own session: every message, trace, call end and cut goes to the
//! journal as it happens (real HTTP against the mock server, real tool processes, real files),
//! the streaming answer at most once a second; a resumed session's history comes back as the
//! events of a live turn.

use std::time::Duration;

use kimi_client::{Backend, Endpoint};
use kimi_core::engine::{
    Agent, AgentHandle, AgentInit, EVENT_QUEUE, EngineEvent, Op, SessionHandoff,
};
use kimi_core::session::{Session, SessionStore, ToolExit, open_stored};
use kimi_core::tools::{Approval, ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode, Trace};
use serde_json::json;

fn weather() -> Toolbox {
    Toolbox::new(vec![ToolSpec {
        name: "get_weather".into(),
        description: "test tool get_weather".into(),
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}}}),
        command: vec![kimi_test_support::tool_script("weather.sh")],
        approval: Approval::Auto,
        timeout_secs: 10,
        cwd: None,
        env: Default::default(),
        max_output_bytes: None,
        inherit_env: None,
        sandbox: Default::default(),
        network: true,
        hidden_env: Vec::new(),
        mcp: None,
    }])
    .expect("valid tools")
}

fn agent(server: &MockServer) -> AgentHandle {
    let ep = Endpoint::new(Mode::Raw, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    Agent::spawn(
        AgentInit {
            backend: Backend::new(ep).expect("client"),
            toolbox: weather(),
            max_rounds: 4,
            system_prompt: Some("You are Kimi.".into()),
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        EVENT_QUEUE,
    )
}

async fn next(agent: &mut AgentHandle) -> EngineEvent {
    tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
        .await
        .expect("an event within 20 s")
        .expect("the agent runs")
}

/// Events up to the end of the turn.
async fn turn(agent: &mut AgentHandle, text: &str) -> Vec<EngineEvent> {
    assert!(agent.send(Op::UserTurn { text: text.into() }));
    let mut events = Vec::new();
    loop {
        match next(agent).await {
            EngineEvent::TurnDone { .. } => return events,
            EngineEvent::TurnFailed { message } => panic!("the turn failed: {message}"),
            e => events.push(e),
        }
    }
}

async fn snapshot(agent: &mut AgentHandle) -> (Vec<Message>, Vec<(usize, Trace)>) {
    assert!(agent.send(Op::Snapshot));
    loop {
        if let EngineEvent::Snapshot { messages, traces } = next(agent).await {
            return (messages, traces);
        }
    }
}

fn new_session(store: &SessionStore) -> (Session, SessionHandoff) {
    let meta = Session::new(
        "test",
        Mode::Raw,
        "moonshotai/Kimi-K2-Instruct",
        "http://x/v1",
    );
    let handoff = SessionHandoff::new_session(store.clone(), meta.clone());
    (meta, handoff)
}

/// A recording agent asked for a story by a mock sending an event every `delay_ms`: the
/// server, the store's folder and the store, the agent and its session.
async fn story_asked(
    delay_ms: u64,
) -> (
    MockServer,
    tempfile::TempDir,
    SessionStore,
    AgentHandle,
    Session,
) {
    let opts = MockOptions {
        delay_ms,
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let agent = agent(&server);
    let (meta, handoff) = new_session(&store);
    assert!(agent.send(Op::Record(handoff)));
    assert!(agent.send(Op::UserTurn {
        text: "Tell me a story.".into()
    }));
    (server, dir, store, agent, meta)
}

#[tokio::test(flavor = "current_thread")]
async fn a_turn_with_a_call_is_recorded_as_the_agent_holds_it_and_listed_from_its_ends() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut agent = agent(&server);
    let (meta, handoff) = new_session(&store);
    assert!(agent.send(Op::Record(handoff)));
    let events = turn(&mut agent, "What's the weather like in Paris?").await;
    // The journal is announced with its first record.
    let started = events.iter().find_map(|e| match e {
        EngineEvent::SessionStarted { meta } => Some(meta.id.clone()),
        _ => None,
    });
    assert_eq!(started.as_deref(), Some(meta.id.as_str()));
    let (messages, traces) = snapshot(&mut agent).await;
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");
    // Written and fsynced by the time the agent's task ends.
    let saved = store.load(&meta.id).expect("loads");
    assert_eq!(saved.messages, messages);
    let saved_traces: Vec<(usize, Trace)> = (saved.traces.iter())
        .map(|t| (t.message_index, t.trace.clone()))
        .collect();
    assert_eq!(saved_traces, traces);
    assert_eq!(saved.tool_ends.len(), 1, "{:?}", saved.tool_ends);
    assert_eq!(saved.tool_ends[0].exit, ToolExit::Exited(0));
    assert!(saved.partial.is_empty(), "the answers finished");
    // The last line is the summary the listing reads.
    let text = std::fs::read_to_string(store.journal_path(&meta.id)).expect("read");
    let last = text.lines().last().expect("a line");
    assert!(last.starts_with(r#"{"type":"summary""#), "{last}");
    let list = store.list();
    assert_eq!(list.sessions.len(), 1);
    assert_eq!(list.sessions[0].turns, 1);
    assert_eq!(
        list.sessions[0].first_line,
        "What's the weather like in Paris?"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn an_answer_cut_by_a_crash_is_kept_and_comes_back_as_an_interrupted_round() {
    let (server, _dir, store, mut agent, meta) = story_asked(150).await;
    // Some of the answer arrives and is saved as it streams: the first piece at once.
    let path = store.journal_path(&meta.id);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        while let Ok(e) = agent.events.try_recv() {
            assert!(
                !matches!(e, EngineEvent::TurnDone { .. }),
                "answered too fast"
            );
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.contains(r#"{"type":"partial""#) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no partial record: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The process dies mid-answer: no round end, no final save.
    agent.task.abort();
    let _ = (&mut agent.task).await;
    drop(agent);
    let saved = store.load(&meta.id).expect("loads");
    assert_eq!(saved.partial.len(), 1, "{saved:?}");
    assert!(!saved.partial[0].content.is_empty());
    assert_eq!(
        saved.partial[0].after_message, 2,
        "after the system and user messages"
    );
    assert_eq!(saved.traces.len(), 1, "the streaming request is kept");

    // Resumed: the interrupted answer is a round like any other, then it is marked so.
    let resumed = open_stored(&store, &meta.id).expect("opens");
    let mut again = self::agent(&server);
    assert!(again.send(Op::Record(SessionHandoff::resume(store.clone(), resumed))));
    let mut kinds = Vec::new();
    loop {
        match next(&mut again).await {
            EngineEvent::Resumed { turns, .. } => {
                assert_eq!(turns, 1);
                break;
            }
            EngineEvent::Stream(kimi_protocol::StreamEvent::Text(t)) => {
                assert_eq!(t, saved.partial[0].content);
                kinds.push("text");
            }
            EngineEvent::RoundStarted { .. } => kinds.push("round"),
            EngineEvent::TraceStarted { .. } => kinds.push("trace"),
            EngineEvent::TraceFinished { .. } => kinds.push("trace end"),
            EngineEvent::RoundInterrupted => kinds.push("interrupted"),
            EngineEvent::MessageAppended { .. } => kinds.push("message"),
            _ => {}
        }
    }
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "round",
            "trace",
            "text",
            "trace end",
            "interrupted"
        ]
    );
    // A second instance cannot take the session this one holds.
    assert!(open_stored(&store, &meta.id).is_err());
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn stopping_mid_answer_keeps_it_as_the_interrupted_answer_it_was() {
    let opts = MockOptions {
        delay_ms: 100,
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut agent = agent(&server);
    let (meta, handoff) = new_session(&store);
    assert!(agent.send(Op::Record(handoff)));
    assert!(agent.send(Op::UserTurn {
        text: "Tell me a story.".into()
    }));
    // Two pieces of the answer: the second within the second after the first save, so that
    // only the way out writes it.
    let mut got = String::new();
    let mut texts = 0;
    while texts < 2 {
        if let EngineEvent::Stream(kimi_protocol::StreamEvent::Text(t)) = next(&mut agent).await {
            got.push_str(&t);
            texts += 1;
        }
    }
    // Quit (or a closed terminal): the answer so far is saved whole, not made a message.
    assert!(agent.send(Op::Shutdown));
    while agent.events.recv().await.is_some() {}
    (&mut agent.task).await.expect("the agent ends");
    let saved = store.load(&meta.id).expect("loads");
    assert_eq!(
        saved.messages.len(),
        2,
        "system and user: {:?}",
        saved.messages
    );
    assert_eq!(saved.partial.len(), 1);
    let streamed = &saved.partial[0].content;
    assert!(streamed.starts_with(&got), "{streamed:?} after {got:?}");
    server.shutdown().await;
}

/// The last `RoundFinished` of `events`: how its answer ended.
fn last_round_end(events: &[EngineEvent]) -> (bool, bool) {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            EngineEvent::RoundFinished {
                cancelled, error, ..
            } => Some((*cancelled, error.is_some())),
            _ => None,
        })
        .expect("a round finished")
}

#[tokio::test(flavor = "current_thread")]
async fn a_cancelled_answer_comes_back_cancelled_when_resumed() {
    let (server, _dir, store, mut agent, meta) = story_asked(100).await;
    let mut texts = 0;
    while texts < 2 {
        if let EngineEvent::Stream(kimi_protocol::StreamEvent::Text(_)) = next(&mut agent).await {
            texts += 1;
        }
    }
    // Esc: the answer so far is kept as a message, the round ends cancelled.
    assert!(agent.send(Op::Cancel));
    let mut live = Vec::new();
    loop {
        match next(&mut agent).await {
            EngineEvent::TurnDone { outcome } => {
                assert!(outcome.cancelled);
                break;
            }
            e => live.push(e),
        }
    }
    assert_eq!(last_round_end(&live), (true, false), "live: cancelled");
    assert!(agent.send(Op::Shutdown));
    while agent.events.recv().await.is_some() {}
    (&mut agent.task).await.expect("the agent ends");
    let saved = store.load(&meta.id).expect("loads");
    let answer = saved.messages.last().expect("the answer");
    assert_eq!(answer.role, "assistant");
    assert!(!answer.text().is_empty(), "the partial answer is kept");
    // The trace says so (older traces say it by what they lack).
    let last = &saved.traces.last().expect("its trace").trace;
    assert!(last.cancelled && last.error.is_none(), "{last:?}");
    let (events, _) = kimi_core::engine::replay::resume_events(&saved, None);
    assert_eq!(last_round_end(&events), (true, false), "resumed: cancelled");
    // Saved before cancels were recorded: no finish reason, no [DONE], no error says it.
    let mut older = saved.clone();
    if let Some(t) = older.traces.last_mut() {
        t.trace.cancelled = false;
    }
    let (events, _) = kimi_core::engine::replay::resume_events(&older, None);
    assert_eq!(
        last_round_end(&events),
        (true, false),
        "an older trace: cancelled"
    );
    // An answer that ended well still comes back done, not cancelled.
    let mut done = saved.clone();
    if let Some(t) = done.traces.last_mut() {
        t.trace.cancelled = false;
        t.trace.finish_reason = Some("stop".into());
        t.trace.done = true;
    }
    let (events, _) = kimi_core::engine::replay::resume_events(&done, None);
    assert_eq!(last_round_end(&events), (false, false), "resumed: done");
    server.shutdown().await;
}
