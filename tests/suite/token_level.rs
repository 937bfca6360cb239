//! Token-level data end to end over loopback: the client asks the real mock server
//! for logprobs in both modes, parses vLLM's shapes into the trace, flags markers the server
//! spread over ordinary tokens, and falls back once when a server refuses the fields.

use kimi_client::{Backend, Endpoint, LogprobsOutcome, TurnResult};
use kimi_core::engine::{Agent, AgentInit, EVENT_QUEUE, EngineEvent, Op};
use kimi_core::tools::Toolbox;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Marker, Message, Mode, Trace};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn weather_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
        "parameters": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}}})
}

/// One turn against a fresh mock: the result, the trace built from the events, and the bodies
/// the mock received.
async fn turn(
    opts: MockOptions,
    mode: Mode,
    logprobs: u8,
    prompt: &str,
) -> (TurnResult, Trace, Vec<Value>) {
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let mut ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    ep.logprobs = logprobs;
    let backend = Backend::new(ep).expect("client");
    let mut trace = Trace::default();
    let (events, result) = backend
        .stream_turn(
            &[Message::user(prompt)],
            &[weather_tool()],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    for e in &events {
        trace.record(e);
    }
    let requests = server.requests();
    server.shutdown().await;
    (result, trace, requests)
}

/// An agent for `ep`, with no tools and an empty conversation.
fn agent_for(ep: Endpoint) -> kimi_core::engine::AgentHandle {
    Agent::spawn(
        AgentInit {
            backend: Backend::new(ep).expect("client"),
            toolbox: Toolbox::new(Vec::new()).expect("tools"),
            max_rounds: 2,
            system_prompt: None,
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        EVENT_QUEUE,
    )
}

#[tokio::test]
async fn raw_mode_reports_every_token_with_its_id_logprob_and_alternatives() {
    let (result, trace, requests) =
        turn(MockOptions::default(), Mode::Raw, 5, "Weather in Paris?").await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.logprobs, LogprobsOutcome::Received);
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(requests[0]["logprobs"], 5);
    assert_eq!(requests[0]["return_tokens_as_token_ids"], true);
    let tokens = &trace.tokens;
    // The tokens spell exactly the completion, cut at real token boundaries.
    assert_eq!(tokens.text(), trace.data);
    assert!(tokens.len() > trace.chunks.len() / 2 && tokens.len() >= 10);
    // Each marker is one token with the special id the server produced.
    let markers = tokens.markers_from(0, kimi_protocol::Template::K2Instruct);
    assert_eq!(markers.len(), 5, "{markers:?}");
    assert!(markers.iter().all(|m| !m.split));
    assert_eq!(
        markers.iter().map(|m| m.id).collect::<Vec<_>>(),
        [163595, 163597, 163598, 163599, 163596].map(Some)
    );
    let first = tokens.get(0).expect("a token");
    assert!(first.id.is_some_and(|id| id < 163584), "{first:?}");
    assert!(first.logprob.is_some_and(|lp| lp <= 0.0));
    let alts = tokens.alternatives(0);
    assert_eq!(alts.len(), 5);
    assert!(
        alts.iter().all(|a| a.id.is_some()),
        "ids, as asked: {alts:?}"
    );
    assert!(alts.windows(2).all(|w| w[0].logprob >= w[1].logprob));
    // Some tokens are unlikely, so the shading has something to show.
    let all: Vec<f32> = (0..tokens.len())
        .filter_map(|i| tokens.get(i)?.logprob)
        .collect();
    assert!(all.iter().any(|lp| lp.exp() < 0.25), "{all:?}");
}

#[tokio::test]
async fn chat_mode_reports_tokens_of_the_content_and_the_arguments() {
    let (result, trace, requests) =
        turn(MockOptions::default(), Mode::Chat, 3, "Weather in Paris?").await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.logprobs, LogprobsOutcome::Received);
    assert_eq!(requests[0]["logprobs"], true);
    assert_eq!(requests[0]["top_logprobs"], 3);
    assert!(requests[0].get("return_tokens_as_token_ids").is_none());
    let text = trace.tokens.text();
    let args = &result.tool_calls[0].function.arguments;
    assert_eq!(text, format!("{}{args}", result.content));
    assert_eq!(trace.tokens.alternatives(0).len(), 3);
    // Chat tokens carry text, not ids.
    assert_eq!(trace.tokens.get(0).expect("token").id, None);
}

#[tokio::test]
async fn a_marker_spread_over_ordinary_tokens_is_flagged() {
    for (opts, prompt) in [
        (
            MockOptions {
                split_markers: true,
                ..MockOptions::default()
            },
            "Weather in Paris?",
        ),
        // The phrase turns it on for one answer (what `--demo` uses).
        (MockOptions::default(), "Weather in Paris? split markers"),
    ] {
        let (result, trace, _) = turn(opts, Mode::Raw, 2, prompt).await;
        assert!(result.error.is_none(), "{:?}", result.error);
        let markers = trace
            .tokens
            .markers_from(0, kimi_protocol::Template::K2Instruct);
        assert_eq!(markers.len(), 5, "{markers:?}");
        assert!(markers.iter().all(|m| m.split && m.id.is_none()));
        let begin = markers
            .iter()
            .find(|m| m.marker == Marker::CallBegin)
            .expect("call begin");
        assert_eq!(begin.last - begin.first + 1, 5, "<| tool _call _begin |>");
        // The text still holds the marker: kimi-tui's own parser finds the call.
        assert_eq!(result.tool_calls.len(), 1);
    }
}

#[tokio::test]
async fn a_400_for_logprobs_is_sent_again_without_them_once() {
    for mode in [Mode::Raw, Mode::Chat] {
        let opts = MockOptions {
            refuse_logprobs: true,
            ..MockOptions::default()
        };
        let (result, trace, requests) = turn(opts, mode, 5, "hello").await;
        assert!(result.error.is_none(), "{mode:?}: {:?}", result.error);
        assert_eq!(result.logprobs, LogprobsOutcome::Refused);
        assert_eq!(requests.len(), 2, "{mode:?}");
        assert!(requests[0].get("logprobs").is_some());
        assert!(requests[1].get("logprobs").is_none());
        assert!(requests[1].get("top_logprobs").is_none());
        assert!(!result.content.is_empty());
        // The trace is the answered request's: no token data, the answer's chunks.
        assert_eq!(trace.status, Some(200));
        assert!(trace.tokens.is_empty());
    }
    // Any other 400 is an error as before: one request, no retry.
    let opts = MockOptions {
        fail_status: Some(400),
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut ep = Endpoint::new(Mode::Raw, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    ep.logprobs = 5;
    let backend = Backend::new(ep).expect("client");
    let (_, r) = backend
        .stream_turn(&[Message::user("hi")], &[], &CancellationToken::new())
        .events_and_result()
        .await;
    // The first request with logprobs fails with 400: taken for a refusal, retried once
    // without; that fails too and its error stands, and it was not about logprobs.
    assert!(r.error.is_some());
    assert_eq!(r.logprobs, LogprobsOutcome::NotAsked);
    assert_eq!(server.requests().len(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_ignores_logprobs_leaves_the_outcome_missing() {
    // `--chunk-bytes` cuts across tokens: the mock sends no token data then.
    let opts = MockOptions {
        chunk_bytes: Some(7),
        ..MockOptions::default()
    };
    let (result, trace, _) = turn(opts, Mode::Raw, 5, "hello").await;
    assert!(result.error.is_none());
    assert_eq!(result.logprobs, LogprobsOutcome::Missing);
    assert!(trace.tokens.is_empty() && !trace.chunks.is_empty());
    let (result, _, requests) = turn(MockOptions::default(), Mode::Raw, 0, "hello").await;
    assert_eq!(result.logprobs, LogprobsOutcome::NotAsked);
    assert!(requests[0].get("logprobs").is_none());
}

/// Through the real engine: the refusal is told once, logprobs stay off for the next turns,
/// and `/logprobs N` (`Op::SetLogprobs`) turns them on again.
#[tokio::test]
async fn the_engine_turns_refused_logprobs_off_until_asked_again() {
    let opts = MockOptions {
        refuse_logprobs: true,
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut ep = Endpoint::new(Mode::Raw, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    ep.logprobs = 4;
    let mut agent = agent_for(ep);
    let mut notices = Vec::new();
    let turn = async |agent: &mut kimi_core::engine::AgentHandle, text: &str| {
        assert!(agent.send(Op::UserTurn { text: text.into() }));
        let mut told = Vec::new();
        loop {
            match agent.events.recv().await.expect("events") {
                EngineEvent::Notice { text, .. } => told.push(text),
                EngineEvent::TurnDone { outcome } => {
                    assert!(outcome.error.is_none(), "{:?}", outcome.error);
                    return told;
                }
                EngineEvent::TurnFailed { message } => panic!("{message}"),
                _ => {}
            }
        }
    };
    notices.extend(turn(&mut agent, "one").await);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("refused logprobs") && notices[0].contains("/logprobs 4"),
        "{notices:?}"
    );
    assert_eq!(server.requests().len(), 2);
    // The next turn: off, no second refusal, no notice.
    assert!(turn(&mut agent, "two").await.is_empty());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].get("logprobs").is_none());
    // Asked again: sent again (and refused again, told again).
    assert!(agent.send(Op::SetLogprobs(2)));
    let told = turn(&mut agent, "three").await;
    assert_eq!(told.len(), 1, "{told:?}");
    let reqs = server.requests();
    assert_eq!(reqs[3]["logprobs"], 2);
    assert!(reqs[4].get("logprobs").is_none());
    agent.send(Op::Shutdown);
    server.shutdown().await;
}

/// A server that ignores the fields: the notice comes once per session, not per request.
#[tokio::test]
async fn no_logprobs_from_the_server_is_told_once() {
    let opts = MockOptions {
        chunk_bytes: Some(5),
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut ep = Endpoint::new(
        Mode::Chat,
        &server.base_url(),
        "moonshotai/Kimi-K2-Instruct",
    );
    ep.logprobs = 2;
    let mut agent = agent_for(ep);
    let mut told = Vec::new();
    for text in ["one", "two"] {
        assert!(agent.send(Op::UserTurn { text: text.into() }));
        loop {
            match agent.events.recv().await.expect("events") {
                EngineEvent::Notice { text, .. } => told.push(text),
                EngineEvent::TurnDone { .. } => break,
                _ => {}
            }
        }
    }
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("server sent no logprobs"), "{told:?}");
    assert_eq!(server.requests().len(), 2);
    agent.send(Op::Shutdown);
    server.shutdown().await;
}

/// One K3 turn against the mock playing `kimi-k3`, with `logprobs = 2`.
async fn k3_turn(opts: MockOptions, mode: Mode, prompt: &str) -> (TurnResult, Trace) {
    let opts = MockOptions {
        model: "kimi-k3".into(),
        ..opts
    };
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let mut ep = Endpoint::new(mode, &server.base_url(), "kimi-k3");
    ep.logprobs = 2;
    let backend = Backend::new(ep).expect("client");
    let mut trace = Trace::default();
    let (events, result) = backend
        .stream_turn(
            &[Message::user(prompt)],
            &[weather_tool()],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    for e in &events {
        trace.record(e);
    }
    server.shutdown().await;
    (result, trace)
}

#[tokio::test]
async fn k3_markers_are_read_as_k3_tokens_and_spelled_ones_are_flagged() {
    use kimi_protocol::Template;
    // As the trained model writes them: one token each, with K3's ids.
    let (result, trace) = k3_turn(MockOptions::default(), Mode::Raw, "Weather in Paris?").await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.tool_calls.len(), 1);
    let markers = trace.tokens.markers_from(0, Template::K3);
    assert!(markers.len() >= 10, "{markers:?}");
    for m in &markers {
        assert!(m.marker.is_k3() && !m.split, "{m:?}");
        assert_eq!(m.id, m.marker.token_id_in(Template::K3), "{m:?}");
    }
    // Read as K2, the same ids are not K2's markers.
    assert!(trace.tokens.markers_from(0, Template::K25).is_empty());
    // Spelled from ordinary tokens: every one flagged.
    let opts = MockOptions {
        split_markers: true,
        ..MockOptions::default()
    };
    let (result, trace) = k3_turn(opts.clone(), Mode::Raw, "Weather in Paris?").await;
    assert!(result.error.is_none(), "{:?}", result.error);
    let markers = trace.tokens.markers_from(0, Template::K3);
    assert!(markers.len() >= 10, "{:?}", trace.tokens.text());
    assert!(
        markers.iter().all(|m| m.split && m.last > m.first),
        "{markers:?}"
    );
    // Chat mode: a server whose tokenizer spells the markers puts the model's XTML in content
    // (no parser sees it); its markers are flagged the same way, and the call still parses.
    let (result, trace) = k3_turn(opts, Mode::Chat, "Weather in Paris?").await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.tool_calls.len(), 1, "{:?}", trace.tokens.text());
    let markers = trace.tokens.markers_from(0, Template::K3);
    assert!(markers.len() >= 10, "{:?}", trace.tokens.text());
    assert!(markers.iter().all(|m| m.split), "{markers:?}");
}
