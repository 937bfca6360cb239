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

/// Why a request body cannot be served: sent back as a 400 with this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RequestError {
    #[error("the request body must be a JSON object")]
    NotAnObject,
    #[error("'{0}' is required")]
    Missing(&'static str),
    /// `what` says what the field must be ("a string", "a list", "an object").
    #[error("'{key}' must be {what}")]
    WrongKind {
        key: &'static str,
        what: &'static str,
    },
    /// `got` is the value as JSON.
    #[error("'{key}' must be a boolean, got {got}")]
    NotBool { key: String, got: String },
    #[error("'{key}' must be an integer of at least 1, got {got}")]
    NotCount { key: String, got: String },
    /// serde's message.
    #[error("invalid 'messages': {0}")]
    Messages(String),
}

pub(crate) fn raw(body: &Value) -> Result<RawRequest, RequestError> {
    let obj = body.as_object().ok_or(RequestError::NotAnObject)?;
    let prompt = match obj.get("prompt") {
        Some(Value::String(s)) => s.clone(),
        // A list holding one prompt is accepted, as vLLM does.
        Some(Value::Array(items)) if items.len() == 1 && items[0].is_string() => {
            items[0].as_str().unwrap_or_default().to_owned()
        }
        Some(_) => {
            return Err(RequestError::WrongKind {
                key: "prompt",
                what: "a string",
            });
        }
        None => return Err(RequestError::Missing("prompt")),
    };
    let skip_special_tokens = optional_bool(body, "skip_special_tokens")?.unwrap_or(true);
    Ok(RawRequest {
        prompt,
        skip_special_tokens,
        common: common(body, &["max_tokens"])?,
    })
}

pub(crate) fn chat(body: &Value) -> Result<ChatRequest, RequestError> {
    if !body.is_object() {
        return Err(RequestError::NotAnObject);
    }
    let messages = match body.get("messages") {
        Some(v @ Value::Array(_)) => serde_json::from_value::<Vec<Message>>(v.clone())
            .map_err(|e| RequestError::Messages(e.to_string()))?,
        Some(_) => {
            return Err(RequestError::WrongKind {
                key: "messages",
                what: "a list",
            });
        }
        None => return Err(RequestError::Missing("messages")),
    };
    let tools = match body.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(t)) => t.clone(),
        Some(_) => {
            return Err(RequestError::WrongKind {
                key: "tools",
                what: "a list",
            });
        }
    };
    Ok(ChatRequest {
        messages,
        tools,
        common: common(body, &["max_completion_tokens", "max_tokens"])?,
    })
}

fn common(body: &Value, max_keys: &[&str]) -> Result<Common, RequestError> {
    let stream = optional_bool(body, "stream")?.unwrap_or(false);
    let include_usage = match body.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(opts @ Value::Object(_)) => optional_bool(opts, "include_usage")?.unwrap_or(false),
        Some(_) => {
            return Err(RequestError::WrongKind {
                key: "stream_options",
                what: "an object",
            });
        }
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
                _ => {
                    return Err(RequestError::NotCount {
                        key: (*key).to_owned(),
                        got: v.to_string(),
                    });
                }
            },
        }
    }
    Ok(Common {
        stream,
        include_usage,
        max_tokens,
    })
}

fn optional_bool(obj: &Value, key: &str) -> Result<Option<bool>, RequestError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(RequestError::NotBool {
            key: key.to_owned(),
            got: v.to_string(),
        }),
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
            let e = raw(&body).expect_err("invalid").to_string();
            assert!(e.contains(needle), "{e}");
        }
        let e = chat(&json!({"messages": [{"content": "no role"}]}))
            .expect_err("invalid")
            .to_string();
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
