//! Transient failures retried by the agent (HTTP 429/5xx, a refused connection)
//! against the real mock over loopback, and `Op::SetEndpoint` (`/model`, `/profile`).

use std::time::{Duration, Instant};

use kimi_client::{Backend, BackendError, Endpoint, RetryPolicy};
use kimi_core::engine::{Agent, AgentHandle, AgentInit, EVENT_QUEUE, EngineEvent, Op, TurnOutcome};
use kimi_core::tools::Toolbox;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode, Template};

const MODEL: &str = "moonshotai/Kimi-K2-Instruct";

fn spawn(ep: Endpoint) -> AgentHandle {
    Agent::spawn(
        AgentInit {
            backend: Backend::new(ep).expect("client"),
            toolbox: Toolbox::new(Vec::new()).expect("no tools"),
            max_rounds: 4,
            system_prompt: None,
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        EVENT_QUEUE,
    )
}

struct Turn {
    outcome: TurnOutcome,
    events: Vec<(Instant, EngineEvent)>,
}

impl Turn {
    fn retries(&self) -> Vec<(u32, u32, Duration, String)> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                EngineEvent::RetryScheduled {
                    error,
                    attempt,
                    attempts,
                    wait,
                } => Some((*attempt, *attempts, *wait, error.to_string())),
                _ => None,
            })
            .collect()
    }

    fn count(&self, f: impl Fn(&EngineEvent) -> bool) -> usize {
        self.events.iter().filter(|(_, e)| f(e)).count()
    }
}

/// Send `text` and read the events to the end of the turn; `on_event` may send operations.
async fn turn(
    agent: &mut AgentHandle,
    text: &str,
    on_event: impl Fn(&EngineEvent, &AgentHandle),
) -> Turn {
    assert!(agent.send(Op::UserTurn { text: text.into() }));
    let mut events = Vec::new();
    let outcome = loop {
        let e = tokio::time::timeout(Duration::from_secs(60), agent.events.recv())
            .await
            .expect("the agent reports within a minute")
            .expect("the agent runs");
        on_event(&e, agent);
        match e {
            EngineEvent::TurnDone { outcome } => break *outcome,
            EngineEvent::TurnFailed { message } => panic!("the turn failed: {message}"),
            e => events.push((Instant::now(), e)),
        }
    };
    Turn { outcome, events }
}

async fn conversation(agent: &mut AgentHandle) -> (Vec<Message>, Vec<usize>) {
    assert!(agent.send(Op::Snapshot));
    loop {
        if let Some(EngineEvent::Snapshot { messages, traces }) = agent.events.recv().await {
            return (messages, traces.iter().map(|(m, _)| *m).collect());
        }
    }
}

fn endpoint(server: &MockServer, mode: Mode, retries: u32) -> Endpoint {
    let mut ep = Endpoint::new(mode, &server.base_url(), MODEL);
    ep.retry = RetryPolicy::new(retries, 60);
    ep
}

fn failing(status: u16, times: Option<u32>, retry_after: Option<&str>) -> MockOptions {
    MockOptions {
        fail_status: Some(status),
        fail_times: times,
        retry_after: retry_after.map(str::to_owned),
        ..MockOptions::default()
    }
}

#[tokio::test]
async fn a_503_twice_then_success_gives_one_answer_after_two_countdowns() {
    for mode in [Mode::Raw, Mode::Chat] {
        let server = MockServer::start(failing(503, Some(2), Some("0")), 0)
            .await
            .expect("mock");
        let mut agent = spawn(endpoint(&server, mode, 3));
        let t = turn(&mut agent, "Tell me about Rust.", |_, _| {}).await;
        assert!(t.outcome.error.is_none(), "{mode:?}: {:?}", t.outcome.error);
        let retries = t.retries();
        assert_eq!(retries.len(), 2, "{mode:?}: {retries:?}");
        assert_eq!((retries[0].0, retries[0].1), (2, 4));
        assert_eq!((retries[1].0, retries[1].1), (3, 4));
        assert!(retries[0].3.contains("HTTP 503"), "{}", retries[0].3);
        assert_eq!(retries[0].2, Duration::ZERO, "Retry-After: 0 is honoured");
        assert_eq!(server.requests().len(), 3);
        // One round, one answer: the failed attempts left no text and no message.
        assert_eq!(
            t.count(|e| matches!(e, EngineEvent::RoundStarted { .. })),
            1
        );
        let (messages, traces) = conversation(&mut agent).await;
        let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant"], "{mode:?}");
        assert!(!messages[1].text().is_empty());
        // Every attempt has its trace (the inspector shows the two 503s), all for the answer.
        assert_eq!(traces, [1, 1, 1], "{mode:?}");
        assert_eq!(
            t.count(|e| matches!(e, EngineEvent::TraceFinished { .. })),
            3
        );
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_429_with_retry_after_2_waits_2_seconds() {
    let server = MockServer::start(failing(429, Some(1), None), 0)
        .await
        .expect("mock");
    let mut agent = spawn(endpoint(&server, Mode::Chat, 3));
    let t = turn(&mut agent, "hello", |_, _| {}).await;
    assert!(t.outcome.error.is_none(), "{:?}", t.outcome.error);
    let retries = t.retries();
    assert_eq!(retries.len(), 1);
    assert_eq!(
        retries[0].2,
        Duration::from_secs(2),
        "the mock's Retry-After: 2"
    );
    let scheduled = t
        .events
        .iter()
        .position(|(_, e)| matches!(e, EngineEvent::RetryScheduled { .. }))
        .expect("scheduled");
    let next = t.events[scheduled..]
        .iter()
        .find(|(_, e)| matches!(e, EngineEvent::TraceStarted { .. }))
        .expect("the second attempt");
    let waited = next.0 - t.events[scheduled].0;
    assert!(waited >= Duration::from_millis(1950), "waited {waited:?}");
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn cancel_during_the_wait_ends_the_turn_with_the_error_and_the_conversation_intact() {
    let server = MockServer::start(failing(503, None, Some("30")), 0)
        .await
        .expect("mock");
    let mut agent = spawn(endpoint(&server, Mode::Raw, 3));
    let started = Instant::now();
    let t = turn(&mut agent, "hello", |e, agent| {
        if matches!(e, EngineEvent::RetryScheduled { .. }) {
            agent.send(Op::Cancel);
        }
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not the 30 s wait"
    );
    let err = t
        .outcome
        .error
        .as_ref()
        .expect("the error stays")
        .to_string();
    assert!(err.contains("HTTP 503"), "{err}");
    assert!(t.outcome.cancelled);
    assert_eq!(server.requests().len(), 1, "no second attempt");
    let (messages, _) = conversation(&mut agent).await;
    assert_eq!(messages.len(), 1, "the user's message, nothing invented");
    assert_eq!(messages[0].role, "user");
    // The agent goes on: the next turn is served (and fails again the same way).
    let t = turn(&mut agent, "again", |e, agent| {
        if matches!(e, EngineEvent::RetryScheduled { .. }) {
            agent.send(Op::Cancel);
        }
    })
    .await;
    assert!(t.outcome.error.is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn retries_exhausted_end_with_the_last_error() {
    let server = MockServer::start(failing(502, None, Some("0")), 0)
        .await
        .expect("mock");
    let mut agent = spawn(endpoint(&server, Mode::Chat, 2));
    let t = turn(&mut agent, "hello", |_, _| {}).await;
    let err = t.outcome.error.as_ref().expect("fails").to_string();
    assert!(err.contains("HTTP 502"), "{err}");
    assert_eq!(t.retries().len(), 2);
    assert_eq!(server.requests().len(), 3, "1 + retries = 2");
    server.shutdown().await;
}

#[tokio::test]
async fn errors_that_are_not_transient_are_not_retried() {
    for status in [400u16, 401, 404] {
        let server = MockServer::start(failing(status, None, Some("0")), 0)
            .await
            .expect("mock");
        let mut agent = spawn(endpoint(&server, Mode::Chat, 3));
        let t = turn(&mut agent, "hello", |_, _| {}).await;
        assert!(t.outcome.error.is_some());
        assert!(t.retries().is_empty(), "{status}");
        assert_eq!(server.requests().len(), 1, "{status}");
        server.shutdown().await;
    }
    // A stream that broke after some of its answer: the partial answer is the round's
    // message, never joined with a retry's.
    let opts = MockOptions {
        drop_after_bytes: Some(1500),
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut agent = spawn(endpoint(&server, Mode::Raw, 3));
    let t = turn(&mut agent, "Tell me about Rust.", |_, _| {}).await;
    assert!(matches!(
        t.outcome.error,
        Some(BackendError::Dropped { .. })
    ));
    assert!(t.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_retry_after_above_the_maximum_is_not_waited() {
    let server = MockServer::start(failing(429, None, Some("120")), 0)
        .await
        .expect("mock");
    let mut agent = spawn(endpoint(&server, Mode::Chat, 3));
    let t = turn(&mut agent, "hello", |_, _| {}).await;
    assert!(t.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
    let notice = t
        .events
        .iter()
        .find_map(|(_, e)| match e {
            EngineEvent::Notice { text, error: true } => Some(text.clone()),
            _ => None,
        })
        .expect("a notice says why");
    assert!(
        notice.contains("120 s") && notice.contains("retry_max_wait_secs"),
        "{notice}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port nobody listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let mut ep = Endpoint::new(Mode::Chat, &format!("http://127.0.0.1:{port}/v1"), MODEL);
    ep.retry = RetryPolicy {
        base: Duration::from_millis(20),
        ..RetryPolicy::new(1, 60)
    };
    let mut agent = spawn(ep);
    let t = turn(&mut agent, "hello", |_, _| {}).await;
    assert_eq!(t.retries().len(), 1, "{:?}", t.retries());
    assert!(matches!(
        t.outcome.error,
        Some(BackendError::Connect { .. })
    ));
}

#[tokio::test]
async fn set_endpoint_switches_model_and_server_for_the_next_request() {
    let first = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let second = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let mut agent = spawn(endpoint(&first, Mode::Raw, 0));
    let t = turn(&mut agent, "hello", |_, _| {}).await;
    assert!(t.outcome.error.is_none());
    // Another model of the family on the same server: its template comes with it.
    let mut ep = endpoint(&first, Mode::Raw, 0);
    ep.model = "moonshotai/Kimi-K2.5".into();
    assert!(agent.send(Op::SetEndpoint {
        endpoint: Box::new(ep),
        max_rounds: 4
    }));
    let t = turn(&mut agent, "and now?", |_, _| {}).await;
    let set = t
        .events
        .iter()
        .find_map(|(_, e)| match e {
            EngineEvent::EndpointSet {
                model, template, ..
            } => Some((model.clone(), *template)),
            _ => None,
        })
        .expect("reported");
    assert_eq!(set, ("moonshotai/Kimi-K2.5".to_owned(), Template::K25));
    let last = first.requests().pop().expect("a request");
    assert_eq!(last["model"], "moonshotai/Kimi-K2.5");
    assert!(
        last["prompt"].as_str().unwrap_or("").ends_with("<think>"),
        "the K2.5 template renders the prompt"
    );
    // Another server (a profile): the conversation goes on there.
    assert!(agent.send(Op::SetEndpoint {
        endpoint: Box::new(endpoint(&second, Mode::Chat, 0)),
        max_rounds: 4
    }));
    let t = turn(&mut agent, "third", |_, _| {}).await;
    assert!(t.outcome.error.is_none());
    assert_eq!(first.requests().len(), 2);
    let req = &second.requests()[0];
    assert_eq!(req["messages"].as_array().map(Vec::len), Some(5), "{req}");
    first.shutdown().await;
    second.shutdown().await;
}

#[tokio::test]
async fn the_model_list_carries_each_models_context_length_when_the_server_gives_it() {
    let server = MockServer::start(
        MockOptions {
            extra_models: vec!["moonshotai/Kimi-K2.5".into()],
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let backend = Backend::new(endpoint(&server, Mode::Chat, 0)).expect("client");
    let models = backend.list_models(&[]).await.expect("listed").models;
    let got: Vec<(&str, Option<u64>)> = models
        .iter()
        .map(|m| (m.id.as_str(), m.context_length))
        .collect();
    assert_eq!(
        got,
        [
            ("moonshotai/Kimi-K2-Instruct", Some(131_072)),
            ("moonshotai/Kimi-K2.5", Some(131_072))
        ]
    );
    assert_eq!(backend.list_models(&[]).await.expect("ids").total(), 2);
    server.shutdown().await;
    let server = MockServer::start(
        MockOptions {
            max_model_len: None,
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let backend = Backend::new(endpoint(&server, Mode::Chat, 0)).expect("client");
    let models = backend.list_models(&[]).await.expect("listed").models;
    assert_eq!(models[0].context_length, None, "not said: unknown");
    server.shutdown().await;
}
