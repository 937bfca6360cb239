//! The supervisor's own operations over real HTTP against the mock: listing the server's
//! models, `/model NAME` and `/profile NAME` (checked, resolved, applied by the agent before
//! its next request), checking edited arguments, streamed calls checked as they end, and the
//! `/tools` report.

use std::collections::BTreeMap;
use std::time::Duration;

use kimi_core::config::{Profile, THINKING_MAX_TOKENS};
use kimi_core::engine::{Decision, EngineEvent, Op, Supervisor, SupervisorInit, Switchboard};
use kimi_core::tools::{ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer, ScriptedCall};
use kimi_protocol::{Mode, Template};
use serde_json::json;

const K2: &str = "moonshotai/Kimi-K2-Instruct";
const K25: &str = "moonshotai/Kimi-K2.5";

fn profile(server: &MockServer, mode: Mode) -> Profile {
    let mut p = Profile::new(mode, &server.base_url());
    p.model = K2.into();
    p
}

fn weather() -> ToolSpec {
    ToolSpec {
        description: "Get the weather".into(),
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}),
        ..ToolSpec::new("get_weather", vec!["true".into()])
    }
}

/// A supervisor on `start` (named `local`) with `profiles` to switch to.
fn supervise(start: Profile, profiles: BTreeMap<String, Profile>) -> Supervisor {
    let board = Switchboard::new(
        "local".into(),
        start,
        profiles,
        Some("/c/config.toml".into()),
    )
    .expect("no key needed");
    let init = SupervisorInit {
        toolbox: Toolbox::new(vec![weather()]).expect("valid tools"),
        system_prompt: None,
        conversation: Vec::new(),
        traces: Vec::new(),
    };
    Supervisor::spawn(board, init, 256).expect("client")
}

async fn next(s: &mut Supervisor) -> EngineEvent {
    tokio::time::timeout(Duration::from_secs(20), s.recv())
        .await
        .expect("an event within 20 s")
        .expect("the supervisor runs")
}

/// Events up to and including the first that `stop` accepts.
async fn until(s: &mut Supervisor, stop: impl Fn(&EngineEvent) -> bool) -> Vec<EngineEvent> {
    let mut seen = Vec::new();
    loop {
        let e = next(s).await;
        let done = stop(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn notices(events: &[EngineEvent]) -> Vec<(String, bool)> {
    (events.iter())
        .filter_map(|e| match e {
            EngineEvent::Notice { text, error } => Some((text.clone(), *error)),
            _ => None,
        })
        .collect()
}

fn is_turn_end(e: &EngineEvent) -> bool {
    matches!(e, EngineEvent::TurnDone { .. })
}

#[tokio::test]
async fn list_models_is_answered_with_the_servers_models_and_their_lengths() {
    let opts = MockOptions {
        model: K2.into(),
        extra_models: vec![K25.into()],
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Raw), BTreeMap::new());
    assert!(s.send(Op::ListModels { show: true }));
    let e = next(&mut s).await;
    let EngineEvent::Models { shown, listing } = e else {
        panic!("{e:?}")
    };
    assert!(shown);
    let list = listing.expect("listed");
    let ids: Vec<(&str, Option<u64>)> = (list.models.iter())
        .map(|m| (m.id.as_str(), m.context_length))
        .collect();
    assert_eq!(ids, [(K2, Some(131_072)), (K25, Some(131_072))]);
    server.shutdown().await;
}

#[tokio::test]
async fn switch_model_applies_the_family_defaults_from_the_next_request() {
    let opts = MockOptions {
        model: K2.into(),
        extra_models: vec![K25.into(), "kimi-k3".into()],
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Raw), BTreeMap::new());
    assert!(s.send(Op::SwitchModel { id: K25.into() }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::EndpointSet { .. })).await;
    assert!(
        matches!(
            &events[0],
            EngineEvent::Models {
                shown: false,
                listing: Ok(_)
            }
        ),
        "{events:?}"
    );
    assert!(
        matches!(&events[1], EngineEvent::ModelChosen { model } if model == K25),
        "{events:?}"
    );
    let Some(EngineEvent::EndpointSet {
        mode,
        model,
        template,
        base_url,
        ..
    }) = events.last()
    else {
        unreachable!()
    };
    assert_eq!(
        (*mode, model.as_str(), *template, base_url.as_str()),
        (Mode::Raw, K25, Template::K25, server.base_url().as_str())
    );
    assert!(notices(&events).is_empty(), "{events:?}");
    assert!(s.send(Op::UserTurn {
        text: "hello".into()
    }));
    until(&mut s, is_turn_end).await;
    let req = server.requests().pop().expect("a request");
    assert_eq!(req["model"], K25);
    assert_eq!(req["temperature"], 1.0, "a thinking model's default");
    assert_eq!(req["max_tokens"], THINKING_MAX_TOKENS);
    // And back: K2-Instruct's defaults again.
    assert!(s.send(Op::SwitchModel { id: K2.into() }));
    until(&mut s, |e| matches!(e, EngineEvent::EndpointSet { .. })).await;
    assert!(s.send(Op::UserTurn {
        text: "again".into()
    }));
    until(&mut s, is_turn_end).await;
    let req = server.requests().pop().expect("a request");
    assert_eq!(
        (&req["model"], &req["temperature"], &req["max_tokens"]),
        (&json!(K2), &json!(0.6), &json!(4096))
    );
    // Kimi K3 in raw mode speaks its own XTML template, which its name selects.
    assert!(s.send(Op::SwitchModel {
        id: "kimi-k3".into()
    }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::EndpointSet { .. })).await;
    assert!(
        matches!(
            events.last(),
            Some(EngineEvent::EndpointSet {
                template: Template::K3,
                ..
            })
        ),
        "{events:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_unknown_model_is_refused_with_the_servers_list_of_fifty_at_most() {
    let opts = MockOptions {
        model: K2.into(),
        extra_models: vec![K25.into()],
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Raw), BTreeMap::new());
    assert!(s.send(Op::SwitchModel { id: "gpt-5".into() }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Notice { .. })).await;
    assert_eq!(
        notices(&events),
        [(
            format!("Unknown model gpt-5: the server lists {K2}, {K25}."),
            true
        )]
    );
    // Nothing was switched: the next request still asks for K2.
    assert!(s.send(Op::UserTurn {
        text: "hello".into()
    }));
    let events = until(&mut s, is_turn_end).await;
    assert!(
        !events.iter().any(|e| matches!(
            e,
            EngineEvent::EndpointSet { .. } | EngineEvent::ModelChosen { .. }
        )),
        "{events:?}"
    );
    assert_eq!(server.requests().pop().expect("a request")["model"], K2);
    server.shutdown().await;

    let many = MockOptions {
        model: "model-0".into(),
        extra_models: (1..5000).map(|i| format!("model-{i}")).collect(),
        ..MockOptions::default()
    };
    let server = MockServer::start(many, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Chat), BTreeMap::new());
    assert!(s.send(Op::SwitchModel { id: "nope".into() }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Notice { .. })).await;
    let (text, error) = notices(&events).pop().expect("a notice");
    assert!(error && text.ends_with("model-49 and 4950 more."), "{text}");
    assert!(!text.contains("model-50,"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_cannot_list_is_trusted_with_a_warning() {
    let opts = MockOptions {
        api_key: Some("sk-needed".into()),
        ..MockOptions::default()
    };
    // Without the key the listing fails (401); the switch goes ahead anyway.
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Chat), BTreeMap::new());
    assert!(s.send(Op::SwitchModel { id: "x".into() }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::EndpointSet { .. })).await;
    assert!(
        matches!(
            &events[0],
            EngineEvent::Models {
                listing: Err(_),
                ..
            }
        ),
        "{events:?}"
    );
    let (text, error) = notices(&events).pop().expect("a warning");
    assert!(
        error
            && text.starts_with("Cannot check x against the server's models (")
            && text.ends_with("; switching anyway."),
        "{text}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_switch_mid_turn_says_it_applies_to_the_next_request() {
    let opts = MockOptions {
        model: K2.into(),
        extra_models: vec![K25.into()],
        delay_ms: 20,
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Raw), BTreeMap::new());
    assert!(s.send(Op::UserTurn {
        text: "Tell me about Rust.".into()
    }));
    until(&mut s, |e| matches!(e, EngineEvent::RoundStarted { .. })).await;
    assert!(s.send(Op::SwitchModel { id: K25.into() }));
    let events = until(&mut s, is_turn_end).await;
    assert!(
        notices(&events).contains(&(format!("Model {K25} applies from the next request."), false)),
        "{:?}",
        notices(&events)
    );
    server.shutdown().await;
}

#[tokio::test]
async fn switch_profile_moves_the_conversation_to_the_profiles_server() {
    let first = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let second = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let mut other = profile(&second, Mode::Chat);
    other.context_window = Some(262_144);
    other.max_rounds = 3;
    other.system_prompt = Some("Be terse.".into());
    let mut bare = profile(&second, Mode::Chat);
    bare.model = "m".into();
    let mut keyless = Profile::new(Mode::Chat, "https://api.example/v1");
    keyless.api_key_env = Some("KIMI_TUI_TEST_SURELY_UNSET_KEY".into());
    let profiles: BTreeMap<String, Profile> = [
        ("other".to_owned(), other),
        ("bare".to_owned(), bare),
        ("keyless".to_owned(), keyless),
    ]
    .into();
    let mut s = supervise(profile(&first, Mode::Raw), profiles);
    assert!(s.send(Op::UserTurn {
        text: "hello".into()
    }));
    until(&mut s, is_turn_end).await;

    assert!(s.send(Op::SwitchProfile {
        name: "other".into()
    }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::EndpointSet { .. })).await;
    let EngineEvent::ProfileChosen { choice } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (
            choice.name.as_str(),
            choice.context_window,
            choice.system_prompt.as_deref()
        ),
        ("other", Some(262_144), Some("Be terse."))
    );
    let Some(EngineEvent::EndpointSet { mode, base_url, .. }) = events.last() else {
        unreachable!()
    };
    assert_eq!(
        (*mode, base_url.as_str()),
        (Mode::Chat, second.base_url().as_str())
    );
    assert!(s.send(Op::UserTurn {
        text: "and now?".into()
    }));
    until(&mut s, is_turn_end).await;
    assert_eq!(first.requests().len(), 1);
    let req = &second.requests()[0];
    assert_eq!(req["messages"].as_array().map(Vec::len), Some(3), "{req}");

    // A profile without a window of its own: the server is asked, quietly.
    assert!(s.send(Op::SwitchProfile {
        name: "bare".into()
    }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Models { .. })).await;
    assert!(
        matches!(
            events.last(),
            Some(EngineEvent::Models {
                shown: false,
                listing: Ok(_)
            })
        ),
        "{events:?}"
    );

    // Refusals say why and change nothing.
    assert!(s.send(Op::SwitchProfile {
        name: "nope".into()
    }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Notice { .. })).await;
    assert_eq!(
        notices(&events),
        [(
            "No profile named `nope`; defined: bare, keyless, other.".to_owned(),
            true
        )]
    );
    assert!(s.send(Op::SwitchProfile {
        name: "keyless".into()
    }));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Notice { .. })).await;
    let (text, error) = notices(&events).pop().expect("a notice");
    assert!(
        error
            && text.contains("profile `keyless` in /c/config.toml")
            && text.contains("KIMI_TUI_TEST_SURELY_UNSET_KEY"),
        "{text}"
    );
    first.shutdown().await;
    second.shutdown().await;
}

#[tokio::test]
async fn edited_arguments_and_streamed_calls_are_checked_by_the_core() {
    let opts = MockOptions {
        tool_calls: vec![ScriptedCall {
            id: None,
            name: "get_weather".into(),
            arguments: r#"{"city": 42}"#.into(),
        }],
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut s = supervise(profile(&server, Mode::Chat), BTreeMap::new());
    assert!(s.send(Op::UserTurn {
        text: "weather?".into()
    }));
    let events = until(&mut s, |e| {
        matches!(e, EngineEvent::ApprovalRequested { .. })
    })
    .await;
    let end = (events.iter())
        .position(|e| {
            matches!(
                e,
                EngineEvent::Stream(kimi_protocol::StreamEvent::ToolCallEnd { .. })
            )
        })
        .expect("the call ended");
    let EngineEvent::CallChecked { index, problem } = &events[end + 1] else {
        panic!("the check follows the call's end: {events:?}")
    };
    assert_eq!(*index, 0);
    assert!(
        problem
            .as_ref()
            .is_some_and(|p| p.to_string().contains("not of type")),
        "{problem:?}"
    );
    let Some(EngineEvent::ApprovalRequested { id, .. }) = events.last() else {
        unreachable!()
    };
    let id = *id;
    // The user's edit, checked while the turn waits for the decision.
    assert!(s.send(Op::CheckArguments {
        id,
        tool: "get_weather".into(),
        arguments: r#"{"city": "#.into(),
    }));
    let e = next(&mut s).await;
    let EngineEvent::ArgumentsChecked {
        id: checked,
        result: Err(p),
        ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(checked, id);
    assert!(p.to_string().contains("not valid JSON"), "{p}");
    assert!(s.send(Op::CheckArguments {
        id,
        tool: "get_weather".into(),
        arguments: r#"{"city": "Lyon"}"#.into(),
    }));
    let e = next(&mut s).await;
    let EngineEvent::ArgumentsChecked {
        result: Ok(value), ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(*value, json!({"city": "Lyon"}));
    assert!(s.send(Op::Approve {
        id,
        decision: Decision::Deny { reason: None },
        always: false,
    }));
    // `/tools`.
    assert!(s.send(Op::ToolsReport));
    let events = until(&mut s, |e| matches!(e, EngineEvent::Tools { .. })).await;
    let Some(EngineEvent::Tools { report }) = events.last() else {
        unreachable!()
    };
    assert_eq!(report.tools.len(), 1);
    assert_eq!(
        (
            report.tools[0].name.as_str(),
            report.tools[0].approval.as_str()
        ),
        ("get_weather", "ask")
    );
    server.shutdown().await;
}
