//! One-shot requests, for `kimi-tui doctor`: POST a JSON body, get the JSON answer, with the
//! same client setup, timeouts and error messages as the streaming paths. [`post_streamed`]
//! asks for a stream as the real requests do and gathers it into the non-streaming shape.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;

use super::error::server_message;
use super::http::{self, BodyError};
use super::{BackendError, Endpoint};

/// POST `body` with `"stream": true`, as the app's own requests go (a server or gateway that
/// always streams, or never does, answers it like them), and return the answer in the
/// non-streaming shape: `choices[0].text` for completions, `choices[0].message` (content and
/// `tool_calls` put together from their deltas) for chat. A server that answers with plain
/// JSON anyway is taken as it is. The connect timeout and the idle timeout of `ep` apply (the
/// idle timeout to the headers and again to the whole body, which is read up to a cap).
pub async fn post_streamed(ep: &Endpoint, path: &str, body: &Value) -> Result<Value, BackendError> {
    let mut body = body.clone();
    if let Some(o) = body.as_object_mut() {
        o.insert("stream".into(), Value::Bool(true));
    }
    post(ep, path, &body, |status, url, text| {
        gather(text).unwrap_or_else(|| decode_json(status, url, text))
    })
    .await
}

/// POST `body` with `"stream": false` (and no `stream_options`) and return the answer as the
/// server sent it: the non-streamed twin of a streamed request, to compare the two. A server
/// that streams anyway is put together as [`post_streamed`] does.
pub async fn post_plain(ep: &Endpoint, path: &str, body: &Value) -> Result<Value, BackendError> {
    let mut body = body.clone();
    if let Some(o) = body.as_object_mut() {
        o.insert("stream".into(), Value::Bool(false));
        o.remove("stream_options");
    }
    post(ep, path, &body, |status, url, text| {
        gather(text).unwrap_or_else(|| decode_json(status, url, text))
    })
    .await
}

/// POST `body` as it is and return the JSON answer (a server's side endpoints, such as
/// `/tokenize`).
pub async fn post_json(ep: &Endpoint, path: &str, body: &Value) -> Result<Value, BackendError> {
    post(ep, path, body, decode_json).await
}

/// The events of an SSE body put together; `None` when the body is not an event stream.
fn gather(text: &[u8]) -> Option<Result<Value, BackendError>> {
    let text = String::from_utf8_lossy(text);
    let text = text.trim_start_matches('\u{feff}');
    if !text.trim_start().starts_with("data:") && !text.trim_start().starts_with(':') {
        return None;
    }
    let mut content = String::new();
    // Per field, as the server named it: `doctor` reports which one a thinking model used.
    let mut reasoning: Vec<(&'static str, String)> = Vec::new();
    let mut completion = String::new();
    let mut chat = false;
    let mut finish = Value::Null;
    let mut calls: Vec<serde_json::Map<String, Value>> = Vec::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            break;
        }
        // A malformed event is skipped, as the streaming paths do.
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(err) = event.get("error") {
            return Some(Err(BackendError::ServerEvent {
                message: server_message(&err.to_string()),
            }));
        }
        let Some(choice) = event.pointer("/choices/0") else {
            continue;
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        if let Some(t) = choice.get("text").and_then(Value::as_str) {
            completion.push_str(t);
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        chat = true;
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            content.push_str(t);
        }
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = delta.get(key).and_then(Value::as_str) {
                match reasoning.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, text)) => text.push_str(t),
                    None => reasoning.push((key, t.to_owned())),
                }
            }
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            if calls.len() <= index {
                calls.resize_with(index + 1, Default::default);
            }
            merge_call(&mut calls[index], call);
        }
    }
    let answer = if chat {
        let mut message = serde_json::json!({"role": "assistant", "content": content});
        for (key, text) in reasoning {
            message[key] = Value::String(text);
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls.into_iter().map(Value::Object).collect());
        }
        serde_json::json!({"choices": [{"message": message, "finish_reason": finish}]})
    } else {
        serde_json::json!({"choices": [{"text": completion, "finish_reason": finish}]})
    };
    Some(Ok(answer))
}

/// One `tool_calls` delta added to the call assembled so far: the id, type and name as they
/// come, the arguments appended.
fn merge_call(into: &mut serde_json::Map<String, Value>, delta: &Value) {
    for key in ["id", "type"] {
        if let Some(v) = delta.get(key).filter(|v| !v.is_null()) {
            into.insert(key.into(), v.clone());
        }
    }
    let Some(f) = delta.get("function") else {
        return;
    };
    let function = into
        .entry("function")
        .or_insert_with(|| serde_json::json!({"name": "", "arguments": ""}));
    if let Some(name) = f.get("name").and_then(Value::as_str) {
        function["name"] = Value::String(name.to_owned());
    }
    if let Some(args) = f.get("arguments").and_then(Value::as_str) {
        let cur = function["arguments"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        function["arguments"] = Value::String(cur + args);
    }
}

fn decode_json(status: u16, url: &str, text: &[u8]) -> Result<Value, BackendError> {
    serde_json::from_slice(text).map_err(|e| BackendError::Http {
        status,
        url: url.to_owned(),
        message: format!(
            "the answer is not JSON ({e}): {}",
            server_message(&String::from_utf8_lossy(text))
        ),
        retry_after_secs: None,
    })
}

/// POST `body` and hand the whole (capped) body to `decode`, with the status and the URL.
async fn post(
    ep: &Endpoint,
    path: &str,
    body: &Value,
    decode: impl FnOnce(u16, &str, &[u8]) -> Result<Value, BackendError>,
) -> Result<Value, BackendError> {
    let client = http::client(ep)?;
    let url = ep.shown_url(path);
    let mut req = client
        .post(ep.request_url(path))
        .header(CONTENT_TYPE, "application/json")
        .json(body);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    let idle = ep.idle_timeout;
    let timeout = |stage: &str| BackendError::Timeout {
        url: url.clone(),
        secs: idle.as_secs(),
        stage: stage.to_owned(),
    };
    let resp = match tokio::time::timeout(idle, req.send()).await {
        Err(_) => return Err(timeout("waiting for response headers")),
        Ok(Err(e)) => return Err(http::send_error(&url, &e, ep.connect_timeout)),
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let retry_after_secs = resp
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::parse_retry_after);
    if !status.is_success() {
        return Err(BackendError::Http {
            status: status.as_u16(),
            url,
            message: http::error_message(resp, idle).await,
            retry_after_secs,
        });
    }
    let mut text = Vec::new();
    let not_json = |message: String| BackendError::Http {
        status: status.as_u16(),
        url: url.clone(),
        message,
        retry_after_secs: None,
    };
    match http::read_capped(resp, http::JSON_BODY_CAP, idle, &mut text).await {
        Err(BodyError::Timeout) => return Err(timeout("reading the body")),
        Err(BodyError::Transport(e)) => {
            return Err(BackendError::Dropped {
                bytes: text.len() as u64,
                detail: http::chain(&e),
            });
        }
        Ok(true) => {
            return Err(not_json(format!(
                "the answer is larger than {} MiB",
                http::JSON_BODY_CAP >> 20
            )));
        }
        Ok(false) => {}
    }
    decode(status.as_u16(), &url, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_stream_is_put_together_and_plain_json_is_left_alone() {
        let sse = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Che\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"cking\",\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"ci\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ty\\\": 1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n"
        );
        let v = gather(sse.as_bytes()).expect("a stream").expect("ok");
        let m = &v["choices"][0]["message"];
        assert_eq!(m["content"], "Checking");
        assert_eq!(m["tool_calls"][0]["id"], "c0");
        assert_eq!(m["tool_calls"][0]["function"]["name"], "get_weather");
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"city\": 1}");
        assert!(
            m.get("reasoning_content").is_none(),
            "no reasoning, no field"
        );
        // A thinking model's reasoning deltas come back in the field they streamed in.
        let thinking = concat!(
            "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"The user \"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"asks.\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: [DONE]\n\n"
        );
        let v = gather(thinking.as_bytes()).expect("a stream").expect("ok");
        let m = &v["choices"][0]["message"];
        assert_eq!(m["reasoning_content"], "The user asks.");
        assert_eq!(m["content"], "Hi");
        let raw = "data: {\"choices\":[{\"text\":\"<|tool_call_end|>\"}]}\n\ndata: [DONE]\n";
        let v = gather(raw.as_bytes()).expect("a stream").expect("ok");
        assert_eq!(v["choices"][0]["text"], "<|tool_call_end|>");
        // A server that ignores `stream: true` answers JSON: decoded as it is.
        assert!(gather(br#"{"choices":[{"text":"x"}]}"#).is_none());
        let err = "data: {\"error\":{\"message\":\"overloaded\"}}\n\n";
        let e = gather(err.as_bytes())
            .expect("a stream")
            .expect_err("an error");
        assert!(e.to_string().contains("overloaded"), "{e}");
    }
}
