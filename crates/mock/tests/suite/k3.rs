//! The mock playing Kimi K3 over real HTTP: it reads the XTML prompt and answers in XTML (raw),
//! in each broken shape on request, with K3's token ids (and ordinary ones when the markers are
//! spelled from text); in chat mode reasoning deltas, `NAME_n` ids and usage inside the choice.

use kimi_mock::{MockOptions, MockServer};
use serde_json::{Value, json};

const PROMPT: &str = concat!(
    "<|open|>message role=\"system\" type=\"tool-declare\"<|sep|># Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n",
    "[{\"function\":{\"name\":\"get_weather\",\"parameters\":{\"properties\":{\"city\":{\"type\":\"string\"}},\"type\":\"object\"}},\"type\":\"function\"}]",
    "\n```<|close|>message<|sep|><|end_of_msg|>",
    "<|open|>message role=\"user\"<|sep|>What's the weather like in Paris?<|close|>message<|sep|><|end_of_msg|>",
    "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"
);

async fn start(opts: MockOptions) -> MockServer {
    MockServer::start(
        MockOptions {
            model: "kimi-k3".into(),
            ..opts
        },
        0,
    )
    .await
    .expect("mock server starts")
}

async fn post(server: &MockServer, path: &str, body: &Value) -> Vec<Value> {
    let text = super::post_text(server, path, body).await;
    assert!(text.starts_with("data: "), "{text}");
    text.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("JSON event"))
        .collect()
}

fn raw(prompt: &str) -> Value {
    json!({"model": "kimi-k3", "prompt": prompt, "stream": true, "max_tokens": 4096,
        "skip_special_tokens": false, "spaces_between_special_tokens": false,
        "stop": ["<|end_of_msg|>"], "logprobs": 1, "return_tokens_as_token_ids": true,
        "stream_options": {"include_usage": true}})
}

fn text_of(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|e| e["choices"][0]["text"].as_str())
        .collect()
}

/// The token ids the stream reported (`token_id:N` strings).
fn ids_of(events: &[Value]) -> Vec<u32> {
    events
        .iter()
        .flat_map(|e| {
            e["choices"][0]["logprobs"]["tokens"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|t| t.as_str()?.strip_prefix("token_id:")?.parse().ok())
        .collect()
}

#[tokio::test]
async fn raw_mode_reads_the_xtml_prompt_and_answers_in_xtml_with_k3_ids() {
    let server = start(MockOptions::default()).await;
    let events = post(&server, "/completions", &raw(PROMPT)).await;
    let text = text_of(&events);
    assert!(
        text.contains("<|close|>think<|sep|><|open|>response<|sep|>"),
        "{text}"
    );
    assert!(
        text.contains("<|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>"),
        "{text}"
    );
    assert!(text.ends_with("<|close|>message<|sep|>"), "{text}");
    let ids = ids_of(&events);
    assert!(
        ids.contains(&163_587) && ids.contains(&163_588) && ids.contains(&163_589),
        "{ids:?}"
    );

    // The same answer with its markers spelled from ordinary tokens: same text, no K3 ids.
    let spelled = start(MockOptions {
        split_markers: true,
        ..MockOptions::default()
    })
    .await;
    let events = post(&spelled, "/completions", &raw(PROMPT)).await;
    assert_eq!(text_of(&events), text);
    assert!(
        ids_of(&events).iter().all(|id| *id < 163_584),
        "no special ids"
    );
}

#[tokio::test]
async fn each_broken_shape_is_served_on_request() {
    for (shape, expected) in [
        (
            "think-close-skipped-tools",
            "answer from its result.<|open|>tools<|sep|>",
        ),
        (
            "answer-in-think",
            "<|close|>response<|sep|><|open|>tools<|sep|>",
        ),
        (
            "think-close-no-sep",
            "<|close|>think<|open|>response<|sep|>",
        ),
    ] {
        let server = start(MockOptions {
            k3_shape: Some(shape.into()),
            ..MockOptions::default()
        })
        .await;
        let text = text_of(&post(&server, "/completions", &raw(PROMPT)).await);
        assert!(text.contains(expected), "{shape}: {text}");
    }
    // The tool result goes back by name and position: the answer quotes it.
    let round2 = format!(
        "{}<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|><|open|>message role=\"tool\" tool=\"get_weather\" index=\"1\"<|sep|>Sunny, 22 C<|close|>message<|sep|><|end_of_msg|><|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>",
        PROMPT
    );
    let server = start(MockOptions::default()).await;
    let text = text_of(&post(&server, "/completions", &raw(&round2)).await);
    assert!(
        text.contains("The get_weather tool returned: Sunny, 22 C."),
        "{text}"
    );
}

#[tokio::test]
async fn chat_mode_streams_reasoning_k3_ids_and_usage_in_the_choice() {
    let server = start(MockOptions::default()).await;
    let body = json!({"model": "kimi-k3", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "What's the weather like in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]});
    let events = post(&server, "/chat/completions", &body).await;
    let reasoning: String = events
        .iter()
        .filter_map(|e| e["choices"][0]["delta"]["reasoning_content"].as_str())
        .collect();
    assert!(reasoning.contains("get_weather"), "{reasoning}");
    let id = events
        .iter()
        .find_map(|e| e["choices"][0]["delta"]["tool_calls"][0]["id"].as_str())
        .expect("a call");
    assert_eq!(id, "get_weather_0");
    let in_choice = events
        .iter()
        .find(|e| e["choices"][0]["finish_reason"].is_string())
        .expect("finish");
    assert!(
        in_choice["choices"][0]["usage"]["completion_tokens"].is_u64(),
        "{in_choice}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["choices"] == json!([]) && e["usage"].is_object())
    );
}
