//! Continuing from an edited answer, against the mock over loopback: raw mode sends the
//! rendered prompt plus the edited text and parses them as one stream; chat mode sends the
//! edit as a partial assistant message; a server that refuses partial mode leaves the
//! conversation as it was.

use kimi_client::{Backend, Endpoint};
use kimi_core::engine::{AgentHandle, EngineEvent, Op, TurnOutcome};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode, Trace, render};
use serde_json::{Value, json};

use super::engine::{Scripted, agent, drive, snapshot, toolbox};

const QUESTION: &str = "What's the weather like in Paris?";

struct Session {
    server: MockServer,
    agent: AgentHandle,
    approver: Scripted,
    endpoint: Endpoint,
}

impl Session {
    async fn start(opts: MockOptions, mode: Mode) -> Session {
        let server = MockServer::start(opts, 0).await.expect("mock starts");
        let endpoint = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
        let backend = Backend::new(endpoint.clone()).expect("client");
        Session {
            server,
            agent: agent(backend, toolbox(), 4),
            approver: Scripted::default(),
            endpoint,
        }
    }

    async fn send(&mut self, op: Op) -> (TurnOutcome, Vec<EngineEvent>, Vec<Message>) {
        assert!(self.agent.send(op));
        drive(&mut self.agent, &mut self.approver, |_, _| {}).await
    }

    async fn traces(&mut self) -> Vec<(usize, Trace)> {
        snapshot(&mut self.agent).await.1
    }
}

fn notices(events: &[EngineEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Notice { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn raw_mode_sends_the_prompt_plus_the_edit_and_the_repaired_call_is_asked_about() {
    let opts = MockOptions {
        broken_marker: true,
        ..MockOptions::default()
    };
    let mut s = Session::start(opts, Mode::Raw).await;
    let (_, _, conversation) = s
        .send(Op::UserTurn {
            text: QUESTION.into(),
        })
        .await;
    assert!(s.approver.asked.is_empty(), "the broken call never runs");
    let broken = s.traces().await.last().expect("a trace").1.data.clone();
    assert!(
        broken.ends_with("<|tool_call_argument_begin|"),
        "the mock broke the marker: {broken}"
    );
    assert_eq!(conversation.len(), 3, "system, user, the broken answer");
    // The repair: the marker closed; the model goes on with the arguments.
    let edited = format!("{broken}>");
    let (outcome, _, conversation) = s
        .send(Op::ContinueEdited {
            text: edited.clone(),
        })
        .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(
        s.approver.asked.len(),
        1,
        "the repaired call is asked about"
    );
    let asked = &s.approver.asked[0].call;
    assert_eq!(asked.function.name, "get_weather");
    assert_eq!(asked.function.arguments, r#"{"city": "Paris"}"#);
    // The prompt of the continued request: the conversation before the answer, rendered,
    // then the edited text, byte for byte.
    let requests = s.server.requests();
    let expected = render(
        &conversation[..2],
        &toolbox().openai_tools(),
        s.endpoint.raw_render_options(),
    ) + &edited;
    assert_eq!(requests[1]["prompt"].as_str(), Some(expected.as_str()));
    // The answer replaced the broken one and records the edit; the agent loop went on.
    let answer = &conversation[2];
    assert_eq!(answer.text(), "Let me check the weather in Paris. ");
    assert_eq!(answer.tool_calls.len(), 1);
    let edit = answer.edited.as_deref().expect("the edit is recorded");
    assert_eq!(edit.original, broken);
    assert_eq!(edit.prefix, edited);
    assert_eq!(conversation[3].role, "tool");
    assert!(conversation[4].text().contains("Sunny"), "{conversation:?}");
    s.server.shutdown().await;
}

#[tokio::test]
async fn chat_mode_continues_a_partial_assistant_message() {
    let mut s = Session::start(MockOptions::default(), Mode::Chat).await;
    // Asked to answer without tools, the mock's markdown answer is the one to edit.
    let (_, _, first) = s
        .send(Op::UserTurn {
            text: "Tell me about Rust.".into(),
        })
        .await;
    let original = first[2].text();
    let cut = original.find(' ').expect("words");
    let edited = original[..cut].to_owned();
    let (outcome, events, conversation) = s
        .send(Op::ContinueEdited {
            text: edited.clone(),
        })
        .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert!(notices(&events).is_empty(), "{:?}", notices(&events));
    let body: &Value = &s.server.requests()[1];
    // Not Moonshot's API: vLLM's spelling.
    assert_eq!(body["continue_final_message"], json!(true));
    assert_eq!(body["add_generation_prompt"], json!(false));
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(
        messages.last(),
        Some(&json!({"role": "assistant", "content": edited}))
    );
    assert_eq!(messages.len(), 3, "system, user, the partial answer");
    assert_eq!(conversation.len(), 3);
    assert_eq!(
        conversation[2].text(),
        original,
        "the edit and what followed it"
    );
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::Stream(kimi_protocol::StreamEvent::Text(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed, original,
        "the edit shown once, then what followed"
    );
    let edit = conversation[2].edited.as_deref().expect("recorded");
    assert_eq!(
        (edit.original.as_str(), edit.prefix.as_str()),
        (original.as_str(), edited.as_str())
    );
    s.server.shutdown().await;
}

#[tokio::test]
async fn a_server_without_partial_mode_says_so_and_the_conversation_stays() {
    let opts = MockOptions {
        refuse_partial: true,
        ..MockOptions::default()
    };
    let mut s = Session::start(opts, Mode::Chat).await;
    let (_, _, before) = s
        .send(Op::UserTurn {
            text: "Tell me about Rust.".into(),
        })
        .await;
    let (outcome, events, after) = s
        .send(Op::ContinueEdited {
            text: "Rust is".into(),
        })
        .await;
    assert!(outcome.error.is_some());
    let said = notices(&events).join("\n");
    assert!(
        said.contains("partial mode") && said.contains("continue_final_message"),
        "{said}"
    );
    assert_eq!(after, before, "the conversation is as it was");
    s.server.shutdown().await;
}

#[tokio::test]
async fn with_no_answer_to_edit_nothing_is_sent() {
    let mut s = Session::start(MockOptions::default(), Mode::Raw).await;
    let (_, events, conversation) = s.send(Op::ContinueEdited { text: "x".into() }).await;
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("no answer to edit"))
    );
    assert!(conversation.is_empty());
    assert!(s.server.requests().is_empty());
    s.server.shutdown().await;
}
