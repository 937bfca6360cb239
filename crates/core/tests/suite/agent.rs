//! The agent as an actor, over real HTTP against the mock server, on a current-thread runtime:
//! operations sent while a turn runs (system prompt, mode, clear, cancel) and a slow reader.

use std::path::Path;
use std::time::Duration;

use kimi_client::{Backend, Endpoint};

use kimi_core::engine::{
    Agent, AgentHandle, AgentInit, Decision, EngineEvent, Op, SystemChange, TurnOutcome,
};
use kimi_core::tools::{Approval, ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Message;
use kimi_protocol::{Mode, StreamEvent, Trace};
use serde_json::json;

const WEATHER: &str = "What's the weather like in Paris?";
const STORY: &str = "Tell me about Rust.";

fn toolbox() -> Toolbox {
    let script = Path::new(&kimi_test_support::tool_script("weather.sh")).to_path_buf();
    Toolbox::new(vec![ToolSpec {
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}),
        approval: Approval::Ask,
        ..ToolSpec::new("get_weather", vec![script.display().to_string()])
    }])
    .expect("valid tools")
}

async fn start(opts: MockOptions, mode: Mode, queue: usize) -> (MockServer, AgentHandle) {
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    let agent = Agent::spawn(
        AgentInit {
            backend: Backend::new(ep).expect("client"),
            toolbox: toolbox(),
            max_rounds: 4,
            system_prompt: Some("You are Kimi.".into()),
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        queue,
    );
    (server, agent)
}

fn user(agent: &AgentHandle, text: &str) {
    assert!(agent.send(Op::UserTurn { text: text.into() }));
}

async fn next(agent: &mut AgentHandle) -> EngineEvent {
    tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
        .await
        .expect("an event within 20 s")
        .expect("the agent runs")
}

/// Events up to the end of the turn; approvals answered yes unless `on_approval` says
/// otherwise (it may also send operations: it runs while the agent waits).
async fn until_done(
    agent: &mut AgentHandle,
    mut on_approval: impl FnMut(&AgentHandle),
) -> (TurnOutcome, Vec<EngineEvent>) {
    let mut events = Vec::new();
    loop {
        match next(agent).await {
            EngineEvent::ApprovalRequested { id, request } => {
                on_approval(agent);
                agent.send(Op::Approve {
                    id,
                    decision: Decision::Approve {
                        arguments: request.arguments,
                    },
                    always: false,
                });
            }
            EngineEvent::TurnDone { outcome } => return (*outcome, events),
            EngineEvent::TurnFailed { message } => panic!("the turn failed: {message}"),
            e => events.push(e),
        }
    }
}

async fn snapshot(
    agent: &mut AgentHandle,
) -> (Vec<Message>, Vec<(usize, Trace)>, Vec<EngineEvent>) {
    assert!(agent.send(Op::Snapshot));
    let mut before = Vec::new();
    loop {
        match next(agent).await {
            EngineEvent::Snapshot { messages, traces } => return (messages, traces, before),
            e => before.push(e),
        }
    }
}

fn position(events: &[EngineEvent], what: impl Fn(&EngineEvent) -> bool) -> usize {
    events.iter().position(what).expect("the event")
}

#[tokio::test(flavor = "current_thread")]
async fn a_system_prompt_sent_mid_turn_applies_from_the_next_request() {
    let (server, mut agent) = start(MockOptions::default(), Mode::Raw, 16).await;
    user(&agent, WEATHER);
    // Sent while the agent waits for the approval of round 1's call.
    let (outcome, events) = until_done(&mut agent, |a| {
        assert!(a.send(Op::SetSystem {
            prompt: "Be terse.".into()
        }));
    })
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.rounds, 2);
    let set = position(
        &events,
        |e| matches!(e, EngineEvent::SystemSet { prompt, change: SystemChange::Replaced } if prompt == "Be terse."),
    );
    let round2 = position(&events, |e| {
        matches!(e, EngineEvent::RoundStarted { round: 2 })
    });
    assert!(set < round2, "set between the rounds");
    let requests = server.requests();
    let prompt = |i: usize| {
        requests[i]["prompt"]
            .as_str()
            .expect("raw prompt")
            .to_owned()
    };
    assert!(prompt(0).contains("You are Kimi.") && !prompt(0).contains("Be terse."));
    assert!(prompt(1).contains("Be terse.") && !prompt(1).contains("You are Kimi."));
    let (messages, traces, _) = snapshot(&mut agent).await;
    assert_eq!(messages[0], Message::system("Be terse."));
    assert_eq!(messages.len(), 5, "system, user, call, result, answer");
    assert_eq!(traces.iter().map(|t| t.0).collect::<Vec<_>>(), [2, 4]);
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_mode_switch_mid_turn_sends_the_next_request_in_the_new_mode() {
    let (server, mut agent) = start(MockOptions::default(), Mode::Raw, 16).await;
    user(&agent, WEATHER);
    let (outcome, events) = until_done(&mut agent, |a| {
        assert!(a.send(Op::SetMode(Mode::Chat)));
    })
    .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.rounds, 2);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::ModeSet(Mode::Chat)))
    );
    let requests = server.requests();
    assert!(requests[0].get("prompt").is_some(), "round 1 in raw mode");
    let messages = requests[1]["messages"]
        .as_array()
        .expect("round 2 in chat mode");
    assert_eq!(messages.len(), 4, "the same conversation, sent as messages");
    assert_eq!(messages[3]["role"], "tool");
    let (conversation, _, _) = snapshot(&mut agent).await;
    assert!(
        conversation[4].text().contains("Sunny"),
        "{:?}",
        conversation[4]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn clear_mid_turn_waits_for_the_answer_then_starts_afresh() {
    let opts = MockOptions {
        delay_ms: 5,
        ..MockOptions::default()
    };
    let (server, mut agent) = start(opts, Mode::Chat, 16).await;
    user(&agent, STORY);
    // Sent once the answer streams.
    loop {
        if let EngineEvent::Stream(StreamEvent::Text(_)) = next(&mut agent).await {
            break;
        }
    }
    assert!(agent.send(Op::Clear));
    let (outcome, _) = until_done(&mut agent, |_| {}).await;
    assert!(
        !outcome.cancelled && outcome.error.is_none(),
        "the answer is not cut short"
    );
    assert!(
        matches!(next(&mut agent).await, EngineEvent::Cleared),
        "cleared right after the turn"
    );
    let (messages, traces, _) = snapshot(&mut agent).await;
    assert!(messages.is_empty() && traces.is_empty());
    // The next message starts a new conversation, system prompt first.
    user(&agent, "hello");
    let (outcome, events) = until_done(&mut agent, |_| {}).await;
    assert!(outcome.error.is_none());
    let appended: Vec<(usize, String)> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::MessageAppended { index, message } => Some((*index, message.role.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        appended,
        [
            (0, "system".into()),
            (1, "user".into()),
            (2, "assistant".into())
        ]
    );
    assert_eq!(server.requests().len(), 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn retry_drops_the_answer_and_its_trace_then_asks_again() {
    let (server, mut agent) = start(MockOptions::default(), Mode::Raw, 16).await;
    user(&agent, STORY);
    until_done(&mut agent, |_| {}).await;
    assert!(agent.send(Op::Retry));
    let (outcome, events) = until_done(&mut agent, |_| {}).await;
    assert!(outcome.error.is_none());
    assert!(matches!(
        events[0],
        EngineEvent::Truncated {
            messages: 2,
            traces: 0
        }
    ));
    let (messages, traces, _) = snapshot(&mut agent).await;
    assert_eq!(messages.len(), 3);
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].0, 2);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(
        server.requests()[0],
        server.requests()[1],
        "the same request again"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_reader_loses_nothing_and_does_not_block_the_runtime() {
    // A queue of one event, a reader slower than the stream: the agent waits for it.
    let opts = MockOptions {
        chunk_bytes: Some(3),
        ..MockOptions::default()
    };
    let (server, mut agent) = start(opts, Mode::Raw, 1).await;
    // Another task on the same (only) thread keeps running meanwhile.
    let ticks = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = ticks.clone();
    let ticker = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(1)).await;
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    user(&agent, STORY);
    let mut text = String::new();
    let mut chunks = 0;
    let outcome = loop {
        match next(&mut agent).await {
            EngineEvent::Stream(StreamEvent::Text(t)) => text.push_str(&t),
            EngineEvent::Stream(StreamEvent::Chunk { data, .. }) => {
                // The chunk's text is in the trace, not copied into every event.
                assert!(data.is_empty(), "{data:?}");
                chunks += 1;
                if chunks % 20 == 0 {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            }
            EngineEvent::TurnDone { outcome } => break outcome,
            _ => {}
        }
    };
    ticker.abort();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert!(chunks > 100, "{chunks} chunks");
    let (messages, _, _) = snapshot(&mut agent).await;
    assert_eq!(text, messages[2].text(), "every token arrived, in order");
    assert!(
        ticks.load(std::sync::atomic::Ordering::Relaxed) > 5,
        "the runtime kept running other tasks"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_cancel_is_taken_while_the_reader_is_behind() {
    let opts = MockOptions {
        delay_ms: 2,
        ..MockOptions::default()
    };
    let (server, mut agent) = start(opts, Mode::Raw, 1).await;
    user(&agent, STORY);
    loop {
        if let EngineEvent::Stream(StreamEvent::Text(_)) = next(&mut agent).await {
            break;
        }
    }
    // The agent is blocked on a full queue; the cancel still reaches it.
    assert!(agent.send(Op::Cancel));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (outcome, _) = until_done(&mut agent, |_| {}).await;
    assert!(outcome.cancelled);
    let (messages, _, _) = snapshot(&mut agent).await;
    assert_eq!(messages.len(), 3, "the partial answer is kept");
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn shutdown_cancels_the_turn_and_stops_the_agent() {
    let opts = MockOptions {
        delay_ms: 20,
        ..MockOptions::default()
    };
    let (server, mut agent) = start(opts, Mode::Chat, 4).await;
    user(&agent, STORY);
    assert!(agent.send(Op::Shutdown));
    let mut done = None;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), agent.events.recv())
        .await
        .expect("the agent ends")
    {
        if let EngineEvent::TurnDone { outcome } = e {
            done = Some(outcome);
        }
    }
    assert!(done.expect("the turn ended").cancelled);
    (&mut agent.task).await.expect("no panic");
    assert!(!agent.send(Op::Snapshot), "stopped");
    server.shutdown().await;
}

/// The next approval request, with the events before it.
async fn next_approval(agent: &mut AgentHandle) -> (u64, Vec<EngineEvent>) {
    let mut before = Vec::new();
    loop {
        match next(agent).await {
            EngineEvent::ApprovalRequested { id, .. } => return (id, before),
            EngineEvent::TurnDone { .. } => panic!("the turn ended without asking"),
            e => before.push(e),
        }
    }
}

fn approve(agent: &AgentHandle, id: u64, always: bool) {
    let arguments = r#"{"city": "Paris"}"#.to_owned();
    assert!(agent.send(Op::Approve {
        id,
        decision: Decision::Approve { arguments },
        always,
    }));
}

#[tokio::test(flavor = "current_thread")]
async fn an_approval_waits_for_its_own_id_and_always_stops_the_asking() {
    let (server, mut agent) = start(MockOptions::default(), Mode::Raw, 16).await;
    user(&agent, WEATHER);
    let (id, _) = next_approval(&mut agent).await;
    // Decisions for ids nobody waits for decide nothing: the agent still waits.
    approve(&agent, id + 7, false);
    approve(&agent, 0, false);
    let waited = tokio::time::timeout(Duration::from_millis(300), agent.events.recv()).await;
    assert!(waited.is_err(), "something happened: {waited:?}");
    approve(&agent, id, true);
    let (outcome, events) = until_done(&mut agent, |_| panic!("asked twice")).await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::ToolFinished { .. })),
        "the approved call ran"
    );
    // The same tool in the next turn runs without a request: the policy is the agent's.
    user(&agent, WEATHER);
    let (outcome, events) = until_done(&mut agent, |_| panic!("asked after always")).await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::ToolStarted { .. }))
    );
    // Revoked (`/tools revoke`): the next call of the tool asks again.
    assert!(agent.send(Op::Revoke {
        tool: Some("get_weather".into())
    }));
    user(&agent, WEATHER);
    let (id, _) = next_approval(&mut agent).await;
    approve(&agent, id, false);
    let (outcome, _) = until_done(&mut agent, |_| panic!("asked twice after revoke")).await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_cancel_while_waiting_denies_the_call_and_a_late_answer_is_ignored() {
    let (server, mut agent) = start(MockOptions::default(), Mode::Chat, 16).await;
    user(&agent, WEATHER);
    let (id, _) = next_approval(&mut agent).await;
    assert!(agent.send(Op::Cancel));
    let (outcome, events) = until_done(&mut agent, |_| panic!("asked again")).await;
    assert!(outcome.cancelled);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EngineEvent::ToolRefused { .. })),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EngineEvent::ToolStarted { .. }))
    );
    // The answer arrives after the turn: nothing runs, the agent carries on.
    approve(&agent, id, false);
    let (messages, _, late) = snapshot(&mut agent).await;
    assert!(
        !late
            .iter()
            .any(|e| matches!(e, EngineEvent::ToolStarted { .. }))
    );
    assert_eq!(messages.last().map(|m| m.role.as_str()), Some("tool"));
    server.shutdown().await;
}
