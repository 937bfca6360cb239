//! The mock Kimi server over real HTTP on loopback: endpoint shapes, the scripted model in both
//! modes, and every fault knob.

use std::sync::Once;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::tokens::Marker;
use kimi_protocol::{FinishReason, Message, RenderOptions, ToolCall, parse_completion, render};
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::new()
}

async fn start(opts: MockOptions) -> MockServer {
    MockServer::start(opts, 0)
        .await
        .expect("mock server starts")
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "Get weather information",
        "parameters": {"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}}}}})
}

fn weather_conversation() -> Vec<Message> {
    vec![
        Message::system("You are Kimi, an AI assistant created by Moonshot AI."),
        Message::user("What's the weather like in Paris?"),
    ]
}

fn stage2_conversation() -> Vec<Message> {
    let mut m = weather_conversation();
    m.push(Message::assistant_with_calls(
        "",
        vec![ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            "{\"city\": \"Paris\"}",
        )],
    ));
    m.push(Message::tool_result(
        "functions.get_weather:0",
        "get_weather",
        "{\"weather\": \"Sunny\"}",
    ));
    m
}

fn prompt(messages: &[Message]) -> String {
    render(
        messages,
        &[weather_tool()],
        RenderOptions {
            add_generation_prompt: true,
            ..Default::default()
        },
    )
}

fn raw_body(prompt: &str) -> Value {
    json!({
        "model": "moonshotai/Kimi-K2-Instruct",
        "prompt": prompt,
        "stream": true,
        "max_tokens": 4096,
        "temperature": 0.6,
        "skip_special_tokens": false,
        "spaces_between_special_tokens": false,
        "stop": ["<|im_end|>"],
        "stream_options": {"include_usage": true},
    })
}

fn chat_body(messages: &[Message]) -> Value {
    json!({
        "model": "moonshotai/Kimi-K2-Instruct",
        "messages": messages,
        "tools": [weather_tool()],
        "tool_choice": "auto",
        "stream": true,
        "stream_options": {"include_usage": true},
    })
}

async fn post(server: &MockServer, path: &str, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}{path}", server.base_url()))
        .json(body)
        .send()
        .await
        .expect("request sent")
}

/// The `data:` payloads of an SSE body, in order.
fn data_lines(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data event: {e:?}"))
                .to_owned()
        })
        .collect()
}

/// A successful stream: the JSON events before `[DONE]`.
async fn stream_json(resp: reqwest::Response) -> Vec<Value> {
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
    let body = resp.text().await.expect("body");
    let mut lines = data_lines(&body);
    assert_eq!(lines.pop().as_deref(), Some("[DONE]"), "ends with [DONE]");
    lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("valid JSON event"))
        .collect()
}

fn texts(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e["choices"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

fn finish_reason(events: &[Value]) -> Option<String> {
    events
        .iter()
        .find_map(|e| e["choices"][0]["finish_reason"].as_str().map(str::to_owned))
}

/// Chat deltas assembled the way an OpenAI client does: (content, [(id, name, arguments)]).
fn assemble_chat(events: &[Value]) -> (String, Vec<(String, String, String)>) {
    let mut content = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for e in events {
        let delta = &e["choices"][0]["delta"];
        if let Some(c) = delta["content"].as_str() {
            content.push_str(c);
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let i = tc["index"].as_u64().expect("index") as usize;
            if calls.len() <= i {
                calls.resize(i + 1, Default::default());
            }
            if let Some(id) = tc["id"].as_str() {
                calls[i].0 = id.to_owned();
            }
            if let Some(name) = tc["function"]["name"].as_str() {
                calls[i].1.push_str(name);
            }
            if let Some(args) = tc["function"]["arguments"].as_str() {
                calls[i].2.push_str(args);
            }
        }
    }
    (content, calls)
}

#[tokio::test]
async fn models_lists_the_model() {
    let server = start(MockOptions::default()).await;
    let resp = client()
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.expect("json");
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["id"], "moonshotai/Kimi-K2-Instruct");
    assert_eq!(v["data"][0]["object"], "model");
    assert_eq!(v["data"][0]["owned_by"], "kimi-tui-mock");
    assert!(v["data"][0]["created"].is_u64());
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert_eq!(server.addr().ip().to_string(), "127.0.0.1");
    server.shutdown().await;
}

#[tokio::test]
async fn raw_weather_prompt_streams_a_parsable_call() {
    let server = start(MockOptions::default()).await;
    let events = stream_json(
        post(
            &server,
            "/completions",
            &raw_body(&prompt(&weather_conversation())),
        )
        .await,
    )
    .await;
    let first = &events[0];
    assert_eq!(first["object"], "text_completion");
    assert!(first["id"].as_str().expect("id").starts_with("cmpl-"));
    assert_eq!(first["model"], "moonshotai/Kimi-K2-Instruct");
    assert_eq!(first["usage"], Value::Null);
    assert_eq!(first["choices"][0]["logprobs"], Value::Null);

    let n = events.len();
    let usage = &events[n - 1];
    assert_eq!(usage["choices"], json!([]));
    let (p, c) = (
        usage["usage"]["prompt_tokens"].as_u64().expect("prompt"),
        usage["usage"]["completion_tokens"]
            .as_u64()
            .expect("completion"),
    );
    assert!(p > 0 && c > 0);
    assert_eq!(usage["usage"]["total_tokens"], p + c);
    assert_eq!(events[n - 2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(events[n - 2]["choices"][0]["text"], "");

    let text_events = texts(&events[..n - 2]);
    assert_eq!(text_events.len() as u64, c, "one event per token");
    assert!(
        text_events.iter().any(|t| t == "<|tool_call_begin|>"),
        "markers are single tokens"
    );
    let text: String = text_events.concat();
    assert!(!text.contains("<|im_end|>"), "EOS is not part of the text");
    let parsed = parse_completion(&text);
    assert_eq!(parsed.content, "Let me check the weather in Paris. ");
    assert_eq!(
        parsed.tool_calls,
        vec![ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            "{\"city\": \"Paris\"}"
        )]
    );
    assert_eq!(parsed.finish_reason, FinishReason::ToolCalls);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    server.shutdown().await;
}

#[tokio::test]
async fn raw_strips_special_tokens_unless_told_not_to() {
    let server = start(MockOptions::default()).await;
    let mut body = raw_body(&prompt(&weather_conversation()));
    body.as_object_mut()
        .expect("object")
        .remove("skip_special_tokens");
    let text = texts(&stream_json(post(&server, "/completions", &body).await).await).concat();
    assert!(!text.contains("<|"), "{text}");
    assert!(
        text.contains("functions.get_weather:0{\"city\": \"Paris\"}"),
        "{text}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn raw_non_streaming_returns_the_whole_completion() {
    let server = start(MockOptions::default()).await;
    let mut body = raw_body(&prompt(&weather_conversation()));
    body["stream"] = json!(false);
    let resp = post(&server, "/completions", &body).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.expect("json");
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert!(v["usage"]["completion_tokens"].as_u64().expect("usage") > 0);
    let parsed = parse_completion(v["choices"][0]["text"].as_str().expect("text"));
    assert_eq!(parsed.tool_calls.len(), 1);
    assert_eq!(
        parsed.tool_calls[0].function.arguments,
        "{\"city\": \"Paris\"}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn chat_parallel_tool_calls_assemble() {
    let server = start(MockOptions::default()).await;
    let messages = vec![Message::user(
        "Check the weather in two cities in parallel.",
    )];
    let events = stream_json(post(&server, "/chat/completions", &chat_body(&messages)).await).await;
    assert_eq!(events[0]["object"], "chat.completion.chunk");
    assert!(
        events[0]["id"]
            .as_str()
            .expect("id")
            .starts_with("chatcmpl-")
    );
    assert_eq!(
        events[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    let (content, calls) = assemble_chat(&events);
    assert_eq!(content, "Let me check both cities. ");
    assert_eq!(
        calls,
        vec![
            (
                "functions.get_weather:0".into(),
                "get_weather".into(),
                "{\"city\": \"Beijing\"}".into()
            ),
            (
                "functions.get_weather:1".into(),
                "get_weather".into(),
                "{\"city\": \"Shanghai\"}".into()
            ),
        ]
    );
    assert_eq!(finish_reason(&events).as_deref(), Some("tool_calls"));
    let usage = events.last().expect("usage chunk");
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().expect("total") > 0);
    server.shutdown().await;
}

#[tokio::test]
async fn chat_non_streaming_has_message_tool_calls() {
    let server = start(MockOptions::default()).await;
    let mut body = chat_body(&weather_conversation());
    body["stream"] = json!(false);
    let v: Value = post(&server, "/chat/completions", &body)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(v["object"], "chat.completion");
    let choice = &v["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(
        choice["message"]["content"],
        "Let me check the weather in Paris. "
    );
    assert_eq!(
        choice["message"]["tool_calls"],
        json!([{"id": "functions.get_weather:0", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}])
    );
    server.shutdown().await;
}

#[tokio::test]
async fn stage_two_quotes_the_tool_result_in_both_modes() {
    let server = start(MockOptions::default()).await;
    let quote = "The get_weather tool returned: {\"weather\": \"Sunny\"}.";

    let raw = stream_json(
        post(
            &server,
            "/completions",
            &raw_body(&prompt(&stage2_conversation())),
        )
        .await,
    )
    .await;
    let parsed = parse_completion(&texts(&raw).concat());
    assert!(parsed.content.contains(quote), "{}", parsed.content);
    assert!(parsed.tool_calls.is_empty());
    assert_eq!(finish_reason(&raw).as_deref(), Some("stop"));

    let chat = stream_json(
        post(
            &server,
            "/chat/completions",
            &chat_body(&stage2_conversation()),
        )
        .await,
    )
    .await;
    let (content, calls) = assemble_chat(&chat);
    assert!(content.contains(quote), "{content}");
    assert!(calls.is_empty());
    assert_eq!(finish_reason(&chat).as_deref(), Some("stop"));
    server.shutdown().await;
}

#[tokio::test]
async fn chunk_bytes_split_markers_across_events() {
    let server = start(MockOptions {
        chunk_bytes: Some(3),
        ..Default::default()
    })
    .await;
    let events = stream_json(
        post(
            &server,
            "/completions",
            &raw_body(&prompt(&weather_conversation())),
        )
        .await,
    )
    .await;
    let pieces = texts(&events);
    let body_pieces = &pieces[..pieces.len() - 1]; // the final chunk's text is ""
    assert!(body_pieces.iter().all(|t| !t.is_empty() && t.len() <= 3));
    let ends_in_partial_marker = |t: &String| {
        let b = t.as_bytes();
        (0..b.len()).any(|i| b[i] == b'<' && Marker::is_proper_prefix(&b[i..]))
    };
    assert!(
        body_pieces.iter().any(ends_in_partial_marker),
        "{body_pieces:?}"
    );
    let parsed = parse_completion(&pieces.concat());
    assert_eq!(parsed.tool_calls.len(), 1);
    assert_eq!(parsed.tool_calls[0].id, "functions.get_weather:0");
    server.shutdown().await;
}

#[tokio::test]
async fn max_tokens_cut_gives_length() {
    let server = start(MockOptions::default()).await;
    let mut body = raw_body(&prompt(&weather_conversation()));
    body["max_tokens"] = json!(12);
    let events = stream_json(post(&server, "/completions", &body).await).await;
    assert_eq!(finish_reason(&events).as_deref(), Some("length"));
    let n = events.len();
    assert_eq!(texts(&events[..n - 2]).len(), 12);
    assert_eq!(events[n - 1]["usage"]["completion_tokens"], 12);
    let parsed = parse_completion(&texts(&events).concat());
    assert!(parsed.tool_calls.is_empty(), "the call was cut off");

    let mut chat = chat_body(&weather_conversation());
    chat["max_tokens"] = json!(3);
    let events = stream_json(post(&server, "/chat/completions", &chat).await).await;
    assert_eq!(finish_reason(&events).as_deref(), Some("length"));
    server.shutdown().await;
}

#[tokio::test]
async fn fail_status_answers_with_an_error_body() {
    let server = start(MockOptions {
        fail_status: Some(429),
        ..Default::default()
    })
    .await;
    let resp = post(
        &server,
        "/chat/completions",
        &chat_body(&weather_conversation()),
    )
    .await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "2");
    let v: Value = resp.json().await.expect("json");
    assert_eq!(
        v,
        json!({"error": {"message": "mock failure: HTTP 429", "type": "rate_limit_error", "code": 429}})
    );
    let models = client()
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .expect("sent");
    assert_eq!(models.status(), 200, "models still answers");
    server.shutdown().await;

    let server = start(MockOptions {
        fail_status: Some(503),
        ..Default::default()
    })
    .await;
    let resp = post(&server, "/completions", &raw_body("hi")).await;
    assert_eq!(resp.status(), 503);
    assert!(resp.headers().get("retry-after").is_none());
    let v: Value = resp.json().await.expect("json");
    assert_eq!(v["error"]["type"], "server_error");
    assert_eq!(v["error"]["code"], 503);
    server.shutdown().await;
}

#[tokio::test]
async fn drop_after_bytes_cuts_the_connection() {
    let server = start(MockOptions {
        drop_after_bytes: Some(700),
        ..Default::default()
    })
    .await;
    let resp = post(
        &server,
        "/completions",
        &raw_body(&prompt(&weather_conversation())),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut stream = resp.bytes_stream();
    let mut got = Vec::new();
    let mut error = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(b) => got.extend_from_slice(&b),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert!(error.is_some(), "the body must end in an error");
    assert_eq!(got.len(), 700, "the first bytes are delivered");
    assert!(!String::from_utf8_lossy(&got).contains("[DONE]"));
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_event_mid_stream() {
    let server = start(MockOptions {
        malformed_sse: true,
        ..Default::default()
    })
    .await;
    let resp = post(
        &server,
        "/completions",
        &raw_body(&prompt(&weather_conversation())),
    )
    .await;
    let body = resp.text().await.expect("body");
    let lines = data_lines(&body);
    let bad: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| *l != "[DONE]" && serde_json::from_str::<Value>(l).is_err())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(bad.len(), 1, "{lines:?}");
    assert!(bad[0] > 0 && bad[0] < lines.len() / 2);
    assert_eq!(lines[bad[0]], "{\"choices\": [{\"text\": ");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("[DONE]"),
        "the stream goes on"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn error_event_ends_the_stream() {
    let server = start(MockOptions {
        error_event: true,
        ..Default::default()
    })
    .await;
    let resp = post(
        &server,
        "/chat/completions",
        &chat_body(&weather_conversation()),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let lines = data_lines(&resp.text().await.expect("body"));
    let last: Value = serde_json::from_str(lines.last().expect("events")).expect("json");
    assert_eq!(
        last,
        json!({"error": {"message": "mock: model overloaded mid-stream", "type": "server_error", "code": 500}})
    );
    assert!(lines.len() > 2);
    assert!(!lines.iter().any(|l| l == "[DONE]"));
    server.shutdown().await;
}

#[tokio::test]
async fn api_key_is_required() {
    let server = start(MockOptions {
        api_key: Some("sk-test".into()),
        ..Default::default()
    })
    .await;
    let unauthorized = json!({"error": {"message": "Incorrect API key provided",
        "type": "authentication_error", "code": 401}});
    for key in [None, Some("wrong")] {
        let mut req = client().post(format!("{}/completions", server.base_url()));
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        let resp = req.json(&raw_body("hi")).send().await.expect("sent");
        assert_eq!(resp.status(), 401);
        assert_eq!(resp.json::<Value>().await.expect("json"), unauthorized);
    }
    let models = client()
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .expect("sent");
    assert_eq!(models.status(), 401);
    let ok = client()
        .post(format!("{}/completions", server.base_url()))
        .bearer_auth("sk-test")
        .json(&raw_body("hi"))
        .send()
        .await
        .expect("sent");
    assert_eq!(ok.status(), 200);
    assert_eq!(
        server.requests().len(),
        1,
        "rejected bodies are not recorded"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn stream_n_tokens_gives_exactly_n_events() {
    let server = start(MockOptions::default()).await;
    let n = 100_000;
    let messages = vec![Message::user(format!("Please stream {n} tokens."))];
    let mut body = raw_body(&prompt(&messages));
    body["max_tokens"] = Value::Null;
    let started = Instant::now();
    let events = stream_json(post(&server, "/completions", &body).await).await;
    let nonempty = texts(&events).iter().filter(|t| !t.is_empty()).count();
    assert_eq!(nonempty, n);
    assert_eq!(
        events.last().expect("usage")["usage"]["completion_tokens"],
        n
    );
    assert!(started.elapsed() < Duration::from_secs(60));

    let chat =
        json!({"messages": [{"role": "user", "content": "stream 500 tokens"}], "stream": true});
    let events = stream_json(post(&server, "/chat/completions", &chat).await).await;
    let content = events
        .iter()
        .filter(|e| {
            e["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|c| !c.is_empty())
        })
        .count();
    assert_eq!(content, 500);
    server.shutdown().await;
}

#[tokio::test]
async fn markers_in_content_imitates_a_server_without_tool_parser() {
    let server = start(MockOptions {
        markers_in_content: true,
        chunk_bytes: Some(5),
        ..Default::default()
    })
    .await;
    let events = stream_json(
        post(
            &server,
            "/chat/completions",
            &chat_body(&weather_conversation()),
        )
        .await,
    )
    .await;
    let (content, calls) = assemble_chat(&events);
    assert!(calls.is_empty());
    assert_eq!(finish_reason(&events).as_deref(), Some("stop"));
    let parsed = parse_completion(&content);
    assert_eq!(parsed.content, "Let me check the weather in Paris. ");
    assert_eq!(parsed.tool_calls.len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn delay_spaces_events() {
    let server = start(MockOptions {
        delay_ms: 30,
        ..Default::default()
    })
    .await;
    let messages = vec![Message::user("stream 5 tokens")];
    let started = Instant::now();
    let events =
        stream_json(post(&server, "/completions", &raw_body(&prompt(&messages))).await).await;
    // 5 text events, final, usage, [DONE]: 7 gaps.
    assert_eq!(events.len(), 7);
    assert!(started.elapsed() >= Duration::from_millis(7 * 30));
    server.shutdown().await;
}

#[tokio::test]
async fn requests_are_recorded_and_bad_requests_answered() {
    let server = start(MockOptions::default()).await;
    let raw = raw_body("hello");
    let chat = chat_body(&weather_conversation());
    post(&server, "/completions", &raw)
        .await
        .text()
        .await
        .expect("body");
    post(&server, "/chat/completions", &chat)
        .await
        .text()
        .await
        .expect("body");
    assert_eq!(server.requests(), vec![raw, chat]);

    let resp = client()
        .post(format!("{}/completions", server.base_url()))
        .body("{not json")
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), 400);
    let v: Value = resp.json().await.expect("json");
    assert!(
        v["error"]["message"]
            .as_str()
            .expect("message")
            .contains("invalid JSON"),
        "{v}"
    );
    let resp = post(&server, "/completions", &json!({"stream": true})).await;
    assert_eq!(resp.status(), 400);
    let v: Value = resp.json().await.expect("json");
    assert!(
        v["error"]["message"]
            .as_str()
            .expect("message")
            .contains("prompt")
    );

    let resp = client()
        .get(format!("{}/nope", server.base_url()))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), 404);
    let v: Value = resp.json().await.expect("json");
    assert_eq!(v["error"]["type"], "not_found_error");
    assert_eq!(
        server.requests().len(),
        3,
        "valid JSON is recorded even if unusable"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn plain_question_gets_markdown() {
    let server = start(MockOptions::default()).await;
    let messages = vec![Message::user("Explain ownership")];
    let text = texts(
        &stream_json(post(&server, "/completions", &raw_body(&prompt(&messages))).await).await,
    )
    .concat();
    assert!(text.starts_with("## "), "{text}");
    assert!(text.contains("Explain ownership"));
    assert!(text.contains("```rust\n"));
    assert!(text.contains("你好"));
    server.shutdown().await;
}

// "Fail N times then succeed", any Retry-After, and a model list to switch in.
#[tokio::test]
async fn fail_times_fails_the_first_requests_then_serves_with_the_retry_after_asked() {
    let server = start(MockOptions {
        fail_status: Some(503),
        fail_times: Some(2),
        retry_after: Some("Wed, 21 Oct 2037 07:28:00 GMT".into()),
        ..Default::default()
    })
    .await;
    for _ in 0..2 {
        let resp = post(&server, "/completions", &raw_body("hi")).await;
        assert_eq!(resp.status(), 503);
        assert_eq!(
            resp.headers()["retry-after"],
            "Wed, 21 Oct 2037 07:28:00 GMT"
        );
    }
    let resp = post(&server, "/completions", &raw_body("hi")).await;
    assert_eq!(resp.status(), 200, "the third is served");
    let resp = post(
        &server,
        "/chat/completions",
        &chat_body(&weather_conversation()),
    )
    .await;
    assert_eq!(resp.status(), 200, "and every later one");
    assert_eq!(server.requests().len(), 4);
    server.shutdown().await;
}

/// `GET /v1/models` of `server`, as JSON.
async fn models(server: &MockServer) -> Value {
    client()
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .expect("sent")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn models_lists_extra_models_with_their_max_model_len_or_without() {
    let server = start(MockOptions {
        extra_models: vec!["moonshotai/Kimi-K2.5".into()],
        max_model_len: Some(262_144),
        ..Default::default()
    })
    .await;
    let v = models(&server).await;
    let ids: Vec<&str> = v["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2.5"]);
    assert_eq!(v["data"][1]["max_model_len"], 262_144);
    server.shutdown().await;

    let server = start(MockOptions {
        max_model_len: None,
        ..Default::default()
    })
    .await;
    let v = models(&server).await;
    assert!(v["data"][0].get("max_model_len").is_none(), "{v}");
    server.shutdown().await;
}

/// When each event of a streamed answer arrived, from the start of the request, with its
/// answer text (raw `text`, chat `delta.content`) and reasoning (`delta.reasoning_content`).
async fn timed_events(
    resp: reqwest::Response,
    started: Instant,
) -> Vec<(Duration, String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        pending.push_str(&String::from_utf8_lossy(&chunk.expect("chunk")));
        while let Some(end) = pending.find("\n\n") {
            let event: String = pending.drain(..end + 2).collect();
            let Some(data) = event.trim().strip_prefix("data: ") else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            let choice = &v["choices"][0];
            let text = choice["text"]
                .as_str()
                .or(choice["delta"]["content"].as_str())
                .unwrap_or_default();
            let reasoning = choice["delta"]["reasoning_content"]
                .as_str()
                .unwrap_or_default();
            out.push((started.elapsed(), text.to_owned(), reasoning.to_owned()));
        }
    }
    out
}

/// The demo's pacing: a thinking model's reasoning takes about `reasoning_ms` to stream, in
/// both modes, and the answer after it is not slowed; without the option nothing is.
#[tokio::test]
async fn reasoning_pacing_slows_the_reasoning_alone() {
    for (reasoning_ms, paced) in [(600, true), (0, false)] {
        let server = start(MockOptions {
            model: "kimi-k2-thinking".into(),
            reasoning_ms,
            ..Default::default()
        })
        .await;
        let messages = vec![Message::user("Hello")];
        let mut chat = chat_body(&messages);
        chat["model"] = json!("kimi-k2-thinking");
        let mut raw = raw_body(&format!("{}<think>", prompt(&messages)));
        raw["model"] = json!("kimi-k2-thinking");
        for (path, body) in [("/chat/completions", chat), ("/completions", raw)] {
            let started = Instant::now();
            let events = timed_events(post(&server, path, &body).await, started).await;
            // The answer starts with the first text after the reasoning (raw: after `</think>`).
            let mut text = String::new();
            let first_answer = events
                .iter()
                .position(|(_, t, r)| {
                    let answer = r.is_empty()
                        && !t.is_empty()
                        && (path.contains("chat") || text.contains("</think>"));
                    text.push_str(t);
                    answer
                })
                .unwrap_or_else(|| panic!("{path}: no answer in {events:?}"));
            let reasoning_done = events[first_answer].0;
            let rest = events.last().expect("events").0 - reasoning_done;
            if paced {
                assert!(
                    reasoning_done >= Duration::from_millis(450),
                    "{path}: the reasoning took {reasoning_done:?}"
                );
            } else {
                assert!(
                    reasoning_done < Duration::from_millis(300),
                    "{path}: unpaced reasoning took {reasoning_done:?}"
                );
            }
            assert!(
                rest < Duration::from_millis(300),
                "{path}: the answer took {rest:?}"
            );
        }
        server.shutdown().await;
    }
}

/// The usage of a stream: its last event's.
fn last_usage(events: &[Value]) -> Value {
    events.last().expect("events")["usage"].clone()
}

#[tokio::test]
async fn the_prefix_cache_serves_what_a_prompt_shares_with_the_one_before() {
    let server = start(MockOptions::default()).await;
    let first = prompt(&weather_conversation());
    let second = prompt(&stage2_conversation());
    assert!(second.starts_with(&first), "the second extends the first");
    let u1 = last_usage(&stream_json(post(&server, "/completions", &raw_body(&first)).await).await);
    assert_eq!(
        u1["prompt_tokens_details"]["cached_tokens"], 0,
        "nothing cached yet"
    );
    let u2 =
        last_usage(&stream_json(post(&server, "/completions", &raw_body(&second)).await).await);
    assert_eq!(u2["prompt_tokens"], second.len() / 4);
    assert_eq!(
        u2["prompt_tokens_details"]["cached_tokens"],
        first.len() / 4
    );
    // A prompt that changes early: only the bytes before the change are served.
    let changed = second.replacen("Paris", "Lyon", 1);
    let at = changed.find("Lyon").expect("changed");
    let u3 =
        last_usage(&stream_json(post(&server, "/completions", &raw_body(&changed)).await).await);
    assert_eq!(u3["prompt_tokens_details"]["cached_tokens"], at / 4);
    // Raw completions separate no reasoning: nothing is reported about it.
    assert!(u3.get("completion_tokens_details").is_none(), "{u3}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_thinking_chat_answer_reports_its_reasoning_tokens_inside_the_completion() {
    let server = start(MockOptions {
        model: "moonshotai/Kimi-K2-Thinking".into(),
        ..MockOptions::default()
    })
    .await;
    let mut body = chat_body(&weather_conversation());
    body["model"] = json!("moonshotai/Kimi-K2-Thinking");
    let events = stream_json(post(&server, "/chat/completions", &body).await).await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert!(!reasoning.is_empty(), "a thinking answer");
    let usage = last_usage(&events);
    let r = usage["completion_tokens_details"]["reasoning_tokens"]
        .as_u64()
        .expect("reported");
    assert_eq!(r, reasoning.len().div_ceil(4) as u64);
    assert!(usage["completion_tokens"].as_u64().expect("completion") > r);
    server.shutdown().await;
}
