//! Request bodies of the two generation endpoints, read leniently like vLLM (unknown fields are
//! ignored) but with a clear message for what cannot be served.

use serde_json::Value;

use kimi_protocol::message::Message;

/// Fields both endpoints share.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Common {
    pub stream: bool,
    pub include_usage: bool,
    pub max_tokens: Option<u64>,
}

/// `POST /v1/completions`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawRequest {
    pub prompt: String,
    /// vLLM's default is true: special tokens vanish from the text unless the client says false.
    pub skip_special_tokens: bool,
    pub common: Common,
}

/// `POST /v1/chat/completions`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<Value>,
    pub common: Common,
}

pub fn raw(body: &Value) -> Result<RawRequest, String> {
    let obj = body
        .as_object()
        .ok_or("the request body must be a JSON object")?;
    let prompt = match obj.get("prompt") {
        Some(Value::String(s)) => s.clone(),
        // A list holding one prompt is accepted, as vLLM does.
        Some(Value::Array(items)) if items.len() == 1 && items[0].is_string() => {
            items[0].as_str().unwrap_or_default().to_owned()
        }
        Some(_) => return Err("'prompt' must be a string".into()),
        None => return Err("'prompt' is required".into()),
    };
    let skip_special_tokens = optional_bool(body, "skip_special_tokens")?.unwrap_or(true);
    Ok(RawRequest {
        prompt,
        skip_special_tokens,
        common: common(body, &["max_tokens"])?,
    })
}

pub fn chat(body: &Value) -> Result<ChatRequest, String> {
    if !body.is_object() {
        return Err("the request body must be a JSON object".into());
    }
    let messages = match body.get("messages") {
        Some(v @ Value::Array(_)) => serde_json::from_value::<Vec<Message>>(v.clone())
            .map_err(|e| format!("invalid 'messages': {e}"))?,
        Some(_) => return Err("'messages' must be a list".into()),
        None => return Err("'messages' is required".into()),
    };
    let tools = match body.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(t)) => t.clone(),
        Some(_) => return Err("'tools' must be a list".into()),
    };
    Ok(ChatRequest {
        messages,
        tools,
        common: common(body, &["max_completion_tokens", "max_tokens"])?,
    })
}

fn common(body: &Value, max_keys: &[&str]) -> Result<Common, String> {
    let stream = optional_bool(body, "stream")?.unwrap_or(false);
    let include_usage = match body.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(opts @ Value::Object(_)) => optional_bool(opts, "include_usage")?.unwrap_or(false),
        Some(_) => return Err("'stream_options' must be an object".into()),
    };
    let mut max_tokens = None;
    for key in max_keys {
        match body.get(*key) {
            None | Some(Value::Null) => {}
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => {
                    max_tokens = Some(n);
                    break;
                }
                _ => return Err(format!("'{key}' must be an integer of at least 1, got {v}")),
            },
        }
    }
    Ok(Common {
        stream,
        include_usage,
        max_tokens,
    })
}

fn optional_bool(obj: &Value, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(format!("'{key}' must be a boolean, got {v}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_defaults_and_fields() {
        let r = raw(&json!({"prompt": "p"})).expect("valid");
        assert!(r.skip_special_tokens && !r.common.stream && r.common.max_tokens.is_none());
        let r = raw(&json!({"prompt": ["p"], "stream": true, "max_tokens": 5,
            "skip_special_tokens": false, "stream_options": {"include_usage": true}}))
        .expect("valid");
        assert_eq!(r.prompt, "p");
        assert!(!r.skip_special_tokens && r.common.stream && r.common.include_usage);
        assert_eq!(r.common.max_tokens, Some(5));
    }

    #[test]
    fn bad_fields_are_named() {
        for (body, needle) in [
            (json!([1]), "JSON object"),
            (json!({}), "'prompt' is required"),
            (json!({"prompt": 1}), "'prompt'"),
            (json!({"prompt": "p", "max_tokens": -1}), "'max_tokens'"),
            (json!({"prompt": "p", "stream": "yes"}), "'stream'"),
        ] {
            let e = raw(&body).expect_err("invalid");
            assert!(e.contains(needle), "{e}");
        }
        let e = chat(&json!({"messages": [{"content": "no role"}]})).expect_err("invalid");
        assert!(e.contains("'messages'"), "{e}");
        assert!(chat(&json!({"messages": [], "tools": {}})).is_err());
    }

    #[test]
    fn chat_reads_messages_and_tools() {
        let c = chat(&json!({"messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f"}}],
            "max_completion_tokens": 3}))
        .expect("valid");
        assert_eq!(c.messages, vec![Message::user("hi")]);
        assert_eq!(c.tools.len(), 1);
        assert_eq!(c.common.max_tokens, Some(3));
    }
}
