//! Raw mode for the Kimi K2 family through the real backend over loopback HTTP: the template
//! and keywords the model name implies, the preprocessed tool declaration, a completion that
//! starts in the reasoning, K3's XTML prompt and answer, and a K3 model refused a K2 template. The server is a minimal
//! SSE responder that records the request it got (the mock has no thinking model here).

use std::sync::{Arc, Mutex};

use kimi_client::{Backend, Endpoint};
use kimi_protocol::{Message, Mode, StreamEvent};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves every connection `pieces` as `/completions` text chunks; returns the base URL and
/// the request bodies received.
async fn server(pieces: Vec<&'static str>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = Vec::new();
            let body = loop {
                let mut chunk = [0u8; 8192];
                let n = sock.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break None;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + len {
                        break Some(buf[end + 4..end + 4 + len].to_vec());
                    }
                }
            };
            let Some(body) = body else { continue };
            record
                .lock()
                .unwrap()
                .push(serde_json::from_slice(&body).expect("json body"));
            let mut out = String::from(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            );
            for p in &pieces {
                let ev = json!({"choices": [{"index": 0, "text": p, "finish_reason": null}]});
                out.push_str(&format!("data: {ev}\n\n"));
            }
            out.push_str("data: {\"choices\": [{\"index\": 0, \"text\": \"\", \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n");
            sock.write_all(out.as_bytes()).await.ok();
            sock.shutdown().await.ok();
        }
    });
    (base, seen)
}

fn weather_tool() -> Value {
    json!({"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
        "parameters": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}}})
}

async fn turn(ep: Endpoint) -> (kimi_client::TurnResult, String) {
    let backend = Backend::new(ep).expect("client");
    let mut reasoning = String::new();
    let (events, result) = backend
        .stream_turn(
            &[Message::user("Weather in Paris?")],
            &[weather_tool()],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    for e in events {
        if let StreamEvent::Reasoning(r) = e {
            reasoning.push_str(&r);
        }
    }
    (result, reasoning)
}

#[tokio::test]
async fn k25_raw_prompt_opens_think_and_the_completion_starts_in_reasoning() {
    let (base, seen) = server(vec![
        "Need the ",
        "weather tool.<|tool_calls_sec",
        "tion_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}",
        "<|tool_call_end|><|tool_calls_section_end|><|im_end|>",
    ])
    .await;
    let (result, reasoning) = turn(Endpoint::new(Mode::Raw, &base, "moonshotai/Kimi-K2.5")).await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(reasoning, "Need the weather tool.");
    assert_eq!(result.content, "");
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(
        result.tool_calls[0].function.arguments,
        "{\"city\": \"Paris\"}"
    );
    let prompt = seen.lock().unwrap()[0]["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(prompt.starts_with("<|im_system|>tool_declare<|im_middle|># Tools\n\n## functions\nnamespace functions {\n// Get the weather\ntype get_weather = (_: {\n  city: string\n}) => any;\n}\n<|im_end|><|im_user|>user"), "{prompt}");
    assert!(
        prompt.ends_with("<|im_assistant|>assistant<|im_middle|><think>"),
        "{prompt}"
    );
}

#[tokio::test]
async fn thinking_off_and_preprocessing_off_come_from_the_endpoint() {
    let (base, seen) = server(vec!["It is sunny.<|im_end|>"]).await;
    let mut ep = Endpoint::new(Mode::Raw, &base, "kimi-k2.5");
    ep.thinking = Some(false);
    ep.preprocess_tools = false;
    let (result, reasoning) = turn(ep).await;
    assert_eq!(result.content, "It is sunny.");
    assert_eq!(reasoning, "");
    let prompt = seen.lock().unwrap()[0]["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.starts_with(r#"<|im_system|>tool_declare<|im_middle|>[{"type":"function","#),
        "{prompt}"
    );
    assert!(prompt.ends_with("<|im_middle|><think></think>"), "{prompt}");
}

#[tokio::test]
async fn k2_thinking_completion_opens_its_own_think() {
    let (base, seen) = server(vec!["<thi", "nk>Easy.</th", "ink>Sunny.<|im_end|>"]).await;
    let (result, reasoning) = turn(Endpoint::new(Mode::Raw, &base, "kimi-k2-thinking")).await;
    assert_eq!(
        (reasoning.as_str(), result.content.as_str()),
        ("Easy.", "Sunny.")
    );
    let prompt = seen.lock().unwrap()[0]["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(prompt.starts_with(r#"<|im_system|>tool_declare<|im_middle|>[{"function":{"description":"Get the weather","name":"get_weather""#), "sorted keys: {prompt}");
    assert!(prompt.contains("<|im_end|><|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|><|im_user|>"));
}

#[tokio::test]
async fn a_k3_model_with_a_k2_template_is_refused_before_anything_is_sent() {
    let (base, seen) = server(vec!["never"]).await;
    // An explicit K2 template does not make a K3 a K2.
    let mut ep = Endpoint::new(Mode::Raw, &base, "kimi-k3-preview");
    ep.template = Some(kimi_protocol::Template::K25);
    let (result, _) = turn(ep).await;
    let error = result.error.expect("refused").to_string();
    assert_eq!(error.lines().count(), 1);
    assert!(
        error.contains("Kimi K3") && error.contains("template = \"k3\""),
        "{error}"
    );
    assert!(seen.lock().unwrap().is_empty(), "nothing was sent");
}

#[tokio::test]
async fn k3_raw_mode_sends_the_xtml_prompt_and_parses_the_xtml_answer() {
    let (base, seen) = server(vec![
        "The user wants the weather.",
        "<|close|>think<|sep|><|open|>resp",
        "onse<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|>",
        "<|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>",
    ])
    .await;
    let mut ep = Endpoint::new(Mode::Raw, &base, "moonshotai/Kimi-K3");
    ep.thinking_effort = Some("high".into());
    let (result, reasoning) = turn(ep).await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(reasoning, "The user wants the weather.");
    assert_eq!(result.reasoning, "The user wants the weather.");
    assert_eq!(result.content, "Checking.");
    assert_eq!(result.tool_calls.len(), 1);
    assert_eq!(result.tool_calls[0].id, "get_weather_0");
    assert_eq!(
        result.tool_calls[0].function.arguments,
        r#"{"city": "Paris"}"#
    );
    let body = seen.lock().unwrap()[0].clone();
    let prompt = body["prompt"].as_str().expect("prompt");
    assert!(
        prompt.starts_with("<|open|>message role=\"system\" type=\"tool-declare\"<|sep|># Tools"),
        "{prompt}"
    );
    assert!(prompt.contains("`thinking_effort=high`"), "{prompt}");
    assert!(prompt.ends_with("<|open|>message role=\"user\"<|sep|>Weather in Paris?<|close|>message<|sep|><|end_of_msg|><|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"), "{prompt}");
    assert_eq!(body["stop"], json!(["<|end_of_msg|>", "[EOS]"]));
    assert_eq!(body["skip_special_tokens"], false);
    assert_eq!(body["spaces_between_special_tokens"], false);
}
