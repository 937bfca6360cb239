//! What thinking costs over loopback: an app driven by a real agent against the mock serving
//! Kimi-K2-Thinking, two user turns (a weather call and its answer, then a thank-you). The
//! second request re-sends the call's reasoning and the server reports a cache hit; the third
//! drops that reasoning (K2-Thinking's template keeps none before the last plain answer), so its
//! prompt no longer extends the one before and `/usage` warns.

use crossterm::event::KeyCode;

use super::app_resume_replay::toolbox;
use super::app_update::{key, notices, typed};
use super::recorded::say;
use crate::app::state::{App, Connection};
use crate::app::thinking_cost;
use kimi_core::engine::{Agent, AgentInit, EVENT_QUEUE, Op};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Mode;
use kimi_protocol::reasoning_resent::Measured;

const MODEL: &str = "moonshotai/Kimi-K2-Thinking";

fn init(server: &MockServer, mode: Mode) -> AgentInit {
    let mut profile = kimi_core::config::Profile::new(mode, &server.base_url());
    profile.model = MODEL.into();
    let board =
        kimi_core::engine::Switchboard::new("local".into(), profile, Default::default(), None)
            .expect("no key needed");
    AgentInit {
        backend: board.backend().expect("client"),
        toolbox: toolbox(),
        max_rounds: 4,
        system_prompt: None,
        conversation: Vec::new(),
        traces: Vec::new(),
    }
}

/// The two turns in `mode`, then `/usage`: the app and the report.
async fn two_turns(mode: Mode) -> (App, String) {
    let server = MockServer::start(
        MockOptions {
            model: MODEL.into(),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock starts");
    let connection = Connection {
        profile: "local".into(),
        mode,
        model: MODEL.into(),
        host: "h".into(),
    };
    let mut a = App::new(connection, toolbox(), None);
    let mut agent = Agent::spawn(init(&server, mode), EVENT_QUEUE);
    say(&mut a, &mut agent, "What's the weather like in Paris?").await;
    say(&mut a, &mut agent, "Thanks!").await;
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");
    server.shutdown().await;
    typed(&mut a, "/usage");
    key(&mut a, KeyCode::Enter);
    let report = notices(&a).last().expect("the report").0.clone();
    (a, report)
}

/// The conversation is: the question, the call (with its reasoning), the result, the answer,
/// the thanks, the answer; three requests.
fn check_shape(a: &App) -> usize {
    let roles: Vec<&str> = a.conversation.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(a.traces.len(), 3);
    let reasoning = a.conversation[1].reasoning_content.as_deref().unwrap_or("");
    assert!(!reasoning.is_empty(), "the call was thought about");
    reasoning.len()
}

#[tokio::test(flavor = "current_thread")]
async fn raw_mode_measures_the_reasoning_re_sent_and_warns_when_the_prompt_stops_extending() {
    let (a, report) = two_turns(Mode::Raw).await;
    let call_reasoning = check_shape(&a);
    let (t0, t1, t2) = (a.traces[0].read(), a.traces[1].read(), a.traces[2].read());
    // The tool round re-sends the call's reasoning, exactly, in the prompt sent.
    let r1 = t1.reasoning_resent.clone().expect("measured");
    assert_eq!(
        (r1.carried.as_slice(), r1.bytes, r1.measured),
        (&[1][..], call_reasoning as u64, Measured::Sent)
    );
    assert!(
        t1.prompt.as_deref().unwrap_or("").contains(
            a.conversation[1]
                .reasoning_content
                .as_deref()
                .unwrap_or("-")
        )
    );
    // The server served the first prompt from its cache: it is the second's prefix.
    let u0 = t0.usage.expect("usage");
    let u1 = t1.usage.expect("usage");
    assert_eq!(u1.cached_tokens, Some(u0.prompt_tokens));
    assert!(u1.cached_tokens > Some(0));
    // Raw completions separate no reasoning: the server reports no reasoning tokens.
    assert_eq!(u1.reasoning_tokens, None);
    // The second turn drops the call's reasoning: the prompt is no append, and that is why.
    let r2 = t2.reasoning_resent.clone().expect("measured");
    assert!(r2.carried.is_empty(), "{r2:?}");
    let broke = thinking_cost::cache_break(&t1, &t2).expect("the prompt stopped extending");
    let (at, old_len) = broke.at.expect("where");
    assert!(at < old_len);
    assert_eq!(broke.dropped, Some(vec![1]));
    // The server's cache serves the prompt up to that byte, not the whole previous prompt.
    let u2 = t2.usage.expect("usage");
    assert_eq!(u2.cached_tokens, Some(at as u64 / 4));
    assert!(u2.cached_tokens < Some(u1.prompt_tokens));
    for want in [
        "! request 3 no longer extends request 2's prompt from byte",
        "the reasoning of an earlier answer (message 1) is no longer in the prompt",
    ] {
        assert!(report.contains(want), "{want}\n{report}");
    }
    // Reasoning tokens not reported: `-`, never 0.
    let turn1 = report
        .lines()
        .find(|l| l.starts_with("1 "))
        .expect("turn 1");
    assert!(turn1.split_whitespace().any(|c| c == "-"), "{turn1}");
}

#[tokio::test(flavor = "current_thread")]
async fn chat_mode_counts_the_reasoning_re_sent_in_tokens_and_warns_on_this_clients_render() {
    let (a, report) = two_turns(Mode::Chat).await;
    check_shape(&a);
    let (t0, t1, t2) = (a.traces[0].read(), a.traces[1].read(), a.traces[2].read());
    let r1 = t1.reasoning_resent.clone().expect("measured");
    assert_eq!(
        (r1.carried.as_slice(), r1.measured),
        (&[1][..], Measured::ClientRender)
    );
    // The reasoning tokens the server reported for the call are what its re-sending costs.
    let u0 = t0.usage.expect("usage");
    assert!(u0.reasoning_tokens > Some(0), "{u0:?}");
    drop((t0, t1, t2));
    assert_eq!(
        thinking_cost::request(&a, 1).resent_tokens,
        u0.reasoning_tokens
    );
    let (t1, t2) = (a.traces[1].read(), a.traces[2].read());
    let u1 = t1.usage.expect("usage");
    assert!(u1.cached_tokens > Some(0), "{u1:?}");
    // The messages only grow, but the template drops the call's reasoning: the server's cache
    // (the mock renders them as a server does) serves less than the whole previous prompt.
    let broke = thinking_cost::cache_break(&t1, &t2).expect("a break as rendered");
    assert_eq!((broke.at, broke.dropped), (None, Some(vec![1])));
    let u2 = t2.usage.expect("usage");
    assert!(u2.cached_tokens < Some(u1.prompt_tokens), "{u1:?} {u2:?}");
    for want in [
        "! request 3: its chat messages extend request 2's, but as this client renders them the prompt does not",
        "(message 1)",
    ] {
        assert!(report.contains(want), "{want}\n{report}");
    }
    // Chat mode's re-sent bytes are this client's render: marked.
    let turn1 = report
        .lines()
        .find(|l| l.starts_with("1 "))
        .expect("turn 1");
    assert!(turn1.contains('~'), "{turn1}");
}
