//! Every `--server-bug` scenario over real HTTP: a request against the mock shows the defect
//! the scenario names, where the same request to a correct mock does not.

use kimi_mock::server_bugs::{SERVER_BUGS, find};
use kimi_mock::{MockOptions, MockServer};

use super::post_text as post;
use kimi_protocol::family::Template;
use kimi_protocol::{Message, RenderOptions, ToolCall, render};
use serde_json::{Value, json};

/// A correct mock serving `model`.
async fn serving(model: &str) -> MockServer {
    let opts = MockOptions {
        model: model.into(),
        ..MockOptions::default()
    };
    MockServer::start(opts, 0).await.expect("mock starts")
}

/// A mock with scenario `name` on (None: a correct one).
async fn start(name: Option<&str>) -> MockServer {
    let mut opts = MockOptions::default();
    if let Some(name) = name {
        find(name).expect("a known scenario").apply(&mut opts);
    }
    MockServer::start(opts, 0).await.expect("mock starts")
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}}})
}

fn ask() -> Vec<Message> {
    vec![Message::user("What's the weather like in Paris?")]
}

/// The conversation after the call was answered: a tool result is last.
fn tool_round() -> Vec<Message> {
    let mut m = ask();
    let mut call = Message::assistant_with_calls(
        "",
        vec![ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            "{\"city\": \"Paris\"}",
        )],
    );
    call.reasoning_content = Some("I should call get_weather.".into());
    m.push(call);
    m.push(Message::tool_result(
        "functions.get_weather:0",
        "get_weather",
        "{\"weather\": \"Sunny\"}",
    ));
    m
}

/// The JSON events of a streamed answer, `[DONE]` left out.
async fn stream(server: &MockServer, path: &str, body: &Value) -> Vec<Value> {
    let text = post(server, path, body).await;
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("JSON event"))
        .collect()
}

fn chat(messages: &[Message], streamed: bool) -> Value {
    json!({"model": "m", "messages": messages, "tools": [weather_tool()],
        "stream": streamed})
}

/// A streamed chat answer as a client assembles it.
#[derive(Debug, Default)]
struct Answer {
    content: String,
    reasoning: String,
    /// (id, name, arguments) by index.
    calls: Vec<(String, String, String)>,
    finish: String,
    /// `tool_calls` deltas that carried no call at all.
    empty_call_deltas: usize,
}

fn assemble(events: &[Value]) -> Answer {
    let mut a = Answer::default();
    for e in events {
        let choice = &e["choices"][0];
        let delta = &choice["delta"];
        a.content += delta["content"].as_str().unwrap_or("");
        a.reasoning += delta["reasoning_content"].as_str().unwrap_or("");
        if let Some(f) = choice["finish_reason"].as_str() {
            a.finish = f.to_owned();
        }
        if delta["tool_calls"].as_array().is_some_and(Vec::is_empty) {
            a.empty_call_deltas += 1;
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let i = tc["index"].as_u64().expect("index") as usize;
            if a.calls.len() <= i {
                a.calls.resize(i + 1, Default::default());
            }
            if let Some(id) = tc["id"].as_str() {
                a.calls[i].0 = id.to_owned();
            }
            a.calls[i].1 += tc["function"]["name"].as_str().unwrap_or("");
            a.calls[i].2 += tc["function"]["arguments"].as_str().unwrap_or("");
        }
    }
    a
}

async fn chat_stream(server: &MockServer, messages: &[Message]) -> Answer {
    let events = stream(server, "/chat/completions", &chat(messages, true)).await;
    assemble(&events)
}

async fn chat_whole(server: &MockServer, messages: &[Message]) -> Value {
    let text = post(server, "/chat/completions", &chat(messages, false)).await;
    let v: Value = serde_json::from_str(&text).expect("JSON answer");
    v["choices"][0].clone()
}

fn raw_body(prompt: &str) -> Value {
    json!({"prompt": prompt, "stream": true, "max_tokens": 4096,
        "skip_special_tokens": false, "logprobs": 1, "return_tokens_as_token_ids": true})
}

fn raw_prompt(template: Template, messages: &[Message]) -> String {
    render(
        messages,
        &[weather_tool()],
        RenderOptions {
            add_generation_prompt: true,
            template,
            ..Default::default()
        },
    )
}

/// The text pieces of a raw stream, one per event.
async fn raw_pieces(server: &MockServer, prompt: &str) -> Vec<String> {
    stream(server, "/completions", &raw_body(prompt))
        .await
        .iter()
        .filter_map(|e| e["choices"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn every_scenario_is_tested_here() {
    let source = include_str!("server_bugs.rs");
    for b in SERVER_BUGS {
        assert!(
            source.contains(&format!("Some(\"{}\")", b.name)),
            "{} has no test",
            b.name
        );
    }
}

#[tokio::test]
async fn empty_tool_call_deltas_lose_the_calls_only_when_streamed() {
    let ok = chat_stream(&start(None).await, &ask()).await;
    assert_eq!(ok.calls.len(), 1);
    assert_eq!(ok.empty_call_deltas, 0);
    let bug = start(Some("empty-tool-call-deltas")).await;
    let streamed = chat_stream(&bug, &ask()).await;
    assert!(streamed.calls.is_empty(), "{streamed:?}");
    assert!(streamed.empty_call_deltas >= 2, "{streamed:?}");
    assert_eq!(streamed.finish, "tool_calls");
    let whole = chat_whole(&bug, &ask()).await;
    assert_eq!(
        whole["message"]["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
}

#[tokio::test]
async fn markers_in_content_leak_the_call_as_text() {
    let a = chat_stream(&start(Some("markers-in-content")).await, &ask()).await;
    assert!(a.calls.is_empty(), "{a:?}");
    assert!(
        a.content
            .contains("<|tool_call_begin|>functions.get_weather:0"),
        "{a:?}"
    );
    assert_eq!(a.finish, "stop");
}

#[tokio::test]
async fn duplicate_calls_deliver_the_same_call_twice() {
    let ok = chat_stream(&start(None).await, &ask()).await;
    assert_eq!(ok.calls.len(), 1);
    let bug = start(Some("duplicate-calls")).await;
    let a = chat_stream(&bug, &ask()).await;
    assert_eq!(a.calls.len(), 2, "{a:?}");
    assert_eq!(a.calls[0], a.calls[1]);
    assert_eq!(a.calls[0].2, "{\"city\": \"Paris\"}");
    assert_eq!(a.finish, "tool_calls");
    let whole = chat_whole(&bug, &ask()).await;
    let calls = whole["message"]["tool_calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0], calls[1]);
}

#[tokio::test]
async fn missing_think_close_keeps_the_answer_in_the_reasoning() {
    let thinking = serving("moonshotai/Kimi-K2-Thinking").await;
    let ok = chat_stream(&thinking, &ask()).await;
    assert!(ok.content.contains("Let me check"), "{ok:?}");
    let bug = start(Some("missing-think-close")).await;
    let a = chat_stream(&bug, &ask()).await;
    assert!(a.content.is_empty(), "{a:?}");
    assert!(
        a.reasoning.ends_with("Let me check the weather in Paris. "),
        "{a:?}"
    );
    assert_eq!(a.calls.len(), 1, "the tool parser still finds the call");
    // Raw: the completion opens the reasoning and never closes it.
    let prompt = raw_prompt(Template::K2Thinking, &ask());
    let text = raw_pieces(&bug, &prompt).await.concat();
    assert!(text.starts_with("<think>"), "{text}");
    assert!(!text.contains("</think>"), "{text}");
    let good = raw_pieces(&thinking, &prompt).await.concat();
    assert!(good.contains("</think>"), "{good}");
}

#[tokio::test]
async fn im_end_after_think_ends_a_tool_follow_up_empty() {
    let bug = start(Some("im-end-after-think")).await;
    let first = chat_stream(&bug, &ask()).await;
    assert_eq!(first.calls.len(), 1, "only follow-ups are hit: {first:?}");
    let a = chat_stream(&bug, &tool_round()).await;
    assert!(!a.reasoning.is_empty(), "{a:?}");
    assert!(a.content.is_empty() && a.calls.is_empty(), "{a:?}");
    assert_eq!(a.finish, "stop");
    // Raw: the text ends right at `</think>` (the server leaves `<|im_end|>` out).
    let prompt = raw_prompt(Template::K26, &tool_round());
    let text = raw_pieces(&bug, &prompt).await.concat();
    assert!(text.ends_with("</think>"), "{text}");
    let good = serving("moonshotai/Kimi-K2.6").await;
    let answered = chat_stream(&good, &tool_round()).await;
    assert!(answered.content.contains("Sunny"), "{answered:?}");
}

#[tokio::test]
async fn k3_skips_the_think_close() {
    let bug = start(Some("k3-think-close-skipped")).await;
    let prompt = concat!(
        "<|open|>message role=\"system\" type=\"tool-declare\"<|sep|># Tools\n\n```json\n",
        "[{\"function\":{\"name\":\"get_weather\"},\"type\":\"function\"}]",
        "\n```<|close|>message<|sep|><|end_of_msg|>",
        "<|open|>message role=\"user\"<|sep|>What's the weather like in Paris?<|close|>message<|sep|><|end_of_msg|>",
        "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"
    );
    let text = raw_pieces(&bug, prompt).await.concat();
    assert!(!text.contains("<|close|>think"), "{text}");
    assert!(text.contains("<|open|>tools<|sep|>"), "{text}");
}

#[tokio::test]
async fn split_markers_are_spelled_from_text_tokens() {
    let prompt = raw_prompt(Template::K2Instruct, &ask());
    let ok = raw_pieces(&start(None).await, &prompt).await;
    assert!(ok.iter().any(|t| t == "<|tool_call_begin|>"), "{ok:?}");
    let pieces = raw_pieces(&start(Some("split-markers")).await, &prompt).await;
    assert!(
        pieces.concat().contains("<|tool_call_begin|>"),
        "{pieces:?}"
    );
    assert!(
        pieces.iter().all(|t| !t.contains("<|tool_call_begin|>")),
        "no event holds a whole marker: {pieces:?}"
    );
}

#[tokio::test]
async fn numbered_call_ids_replace_the_family_form() {
    let bug = start(Some("numbered-call-ids")).await;
    let a = chat_stream(&bug, &ask()).await;
    assert_eq!(a.calls[0].0, "call00000", "{a:?}");
    let text = raw_pieces(&bug, &raw_prompt(Template::K2Instruct, &ask()))
        .await
        .concat();
    assert!(
        text.contains("<|tool_call_begin|>call00000<|tool_call_argument_begin|>"),
        "{text}"
    );
    let ok = chat_stream(&start(None).await, &ask()).await;
    assert_eq!(ok.calls[0].0, "functions.get_weather:0");
}

#[tokio::test]
async fn tool_calls_finish_with_stop() {
    let bug = start(Some("tool-calls-finish-stop")).await;
    let a = chat_stream(&bug, &ask()).await;
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.finish, "stop");
    let whole = chat_whole(&bug, &ask()).await;
    assert_eq!(whole["finish_reason"], "stop");
    assert_eq!(
        whole["message"]["tool_calls"].as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn stream_differs_from_the_non_streamed_answer() {
    let bug = start(Some("stream-differs")).await;
    let streamed = chat_stream(&bug, &ask()).await;
    assert_eq!(streamed.calls.len(), 1);
    let whole = chat_whole(&bug, &ask()).await;
    assert_eq!(whole["message"]["tool_calls"], json!([]), "{whole}");
    assert_eq!(whole["finish_reason"], "stop");
    assert_eq!(whole["message"]["content"], streamed.content);
    // Without calls the answer text goes.
    let hello = [Message::user("hello")];
    let said = chat_stream(&bug, &hello).await;
    assert!(!said.content.is_empty());
    let whole = chat_whole(&bug, &hello).await;
    assert_eq!(whole["message"]["content"], "");
    let ok = chat_whole(&start(None).await, &ask()).await;
    assert_eq!(
        ok["message"]["tool_calls"].as_array().map(Vec::len),
        Some(1)
    );
}
