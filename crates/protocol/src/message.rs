//! Conversation messages and tool calls in the OpenAI chat shape, as the template reads them and
//! as `--json` output and session files write them.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::json;
use super::python;

/// One chat message. Unknown fields of an OpenAI request are ignored.
///
/// The reasoning is read from the first of `reasoning_content`, `thinking`, `reasoning` that is
/// present and not null (an empty string counts), as transformers 5 prepares messages for the
/// family templates, and written back as `reasoning_content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "WireMessage")]
pub struct Message {
    pub role: String,
    /// `None` is JSON `null` (or absent): the template renders nothing for it.
    #[serde(default)]
    pub content: Option<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An assistant message's reasoning (thinking models), as the family templates read it and as
    /// chat mode sends it back. `None` when the model produced none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// A tool result's call ran with arguments the user edited in the approval dialog: these.
    /// Kept with the result (the assistant message stays as the model wrote it) so that a
    /// prompt format that writes a call's arguments out (Kimi K3) can show what really ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_arguments: Option<String>,
    /// An assistant message that continues a prefix the user edited from the model's own
    /// output: what the model had written and what the user made of it. Ours, never sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited: Option<Box<AnswerEdit>>,
}

/// How an answer was edited before the model continued it (see [`Message::edited`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerEdit {
    /// The model's output as it was offered for editing: in raw mode the completion text as
    /// it arrived, markers included; in chat mode the message's content.
    pub original: String,
    /// The calls the original answer made (chat mode's calls are not part of the edited text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub original_calls: Vec<ToolCall>,
    /// The edited text the answer continues from (raw mode: appended to the prompt; chat mode:
    /// the partial assistant message).
    pub prefix: String,
}

/// What a message looks like on the way in: every reasoning alias kept apart so that the
/// first non-null one can win (serde's `alias` would reject a message that has two).
#[derive(Deserialize)]
struct WireMessage {
    role: String,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    thinking: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    edited_arguments: Option<String>,
    #[serde(default)]
    edited: Option<Box<AnswerEdit>>,
}

impl From<WireMessage> for Message {
    fn from(w: WireMessage) -> Self {
        // `Option<Value>` is `None` for both a missing field and an explicit null.
        let reasoning = [w.reasoning_content, w.thinking, w.reasoning]
            .into_iter()
            .flatten()
            .next()
            .map(|v| match v {
                Value::String(s) => s,
                // The template prints a non-string as Python's `str()` does.
                other => python::str_of(&other),
            });
        Message {
            role: w.role,
            content: w.content,
            name: w.name,
            tool_calls: w.tool_calls,
            tool_call_id: w.tool_call_id,
            reasoning_content: reasoning,
            edited_arguments: w.edited_arguments,
            edited: w.edited,
        }
    }
}

/// Message content: a plain string or a list of typed parts (text, images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a string, a list of content parts, or null"
)]
pub enum Content {
    /// Shared, not copied, by whoever holds the message: the agent's conversation, the app's
    /// view of it, the journal record. An `Arc<String>` rather than an `Arc<str>` so that an
    /// answer's streamed text becomes one without being copied.
    Text(Arc<String>),
    /// Parts are kept as raw JSON so that nothing a caller sent is lost on the way through.
    Parts(Vec<Value>),
}

/// A call the assistant made, as it appears in `tool_calls`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Kept verbatim: Kimi K2 misbehaves when history carries ids it did not write.
    #[serde(default)]
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default)]
    pub name: String,
    /// Always a string here. A caller may send a JSON value instead; the template writes such a
    /// value with Python's default separators, so it is converted that way on the way in.
    #[serde(default, deserialize_with = "arguments_as_string")]
    pub arguments: String,
}

fn function_type() -> String {
    "function".to_owned()
}

fn null_as_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ToolCall>, D::Error> {
    Ok(Option::<Vec<ToolCall>>::deserialize(d)?.unwrap_or_default())
}

fn arguments_as_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        other => json::to_string(&other, json::PYTHON_DEFAULT),
    })
}

impl Message {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: role.into(),
            content: Some(Content::Text(Arc::new(content.into()))),
            name: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            reasoning_content: None,
            edited_arguments: None,
            edited: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }

    /// An assistant turn that made tool calls; empty `content` is kept as `""` like vLLM does.
    pub fn assistant_with_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls: calls,
            ..Self::assistant(content)
        }
    }

    /// A tool result answering the call `call_id` of the function `name`.
    pub fn tool_result(call_id: &str, name: &str, content: impl Into<String>) -> Self {
        Message {
            name: Some(name.to_owned()),
            tool_call_id: Some(call_id.to_owned()),
            ..Self::new("tool", content)
        }
    }

    /// The text of the content: a string as is, or the text parts concatenated.
    pub fn text(&self) -> String {
        match &self.content {
            None => String::new(),
            Some(Content::Text(s)) => String::clone(s),
            Some(Content::Parts(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        }
    }
}

impl Message {
    /// Whether the content has an image or video part.
    pub fn has_image(&self) -> bool {
        matches!(&self.content, Some(Content::Parts(parts)) if parts.iter().any(|p| {
            matches!(
                p.get("type").and_then(Value::as_str),
                Some("image" | "image_url" | "video" | "video_url")
            )
        }))
    }
}

impl ToolCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_arguments_become_python_style_strings() {
        let m: Message = serde_json::from_value(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "functions.f:0", "function": {"name": "f",
                "arguments": {"city": "Paris", "n": 1.0, "xs": [1, 2]}}}]
        }))
        .expect("valid message");
        assert_eq!(
            m.tool_calls[0].function.arguments,
            r#"{"city": "Paris", "n": 1.0, "xs": [1, 2]}"#
        );
        assert_eq!(m.tool_calls[0].kind, "function");
        assert_eq!(m.content, None);
    }

    #[test]
    fn null_tool_calls_and_unknown_fields_are_accepted() {
        let m: Message = serde_json::from_value(
            json!({"role": "user", "content": "hi", "tool_calls": null, "extra": 1}),
        )
        .expect("valid message");
        assert!(m.tool_calls.is_empty());
        assert_eq!(m.text(), "hi");
    }

    #[test]
    fn reasoning_aliases_first_non_null_wins_and_serializes_as_reasoning_content() {
        let read = |v: Value| {
            serde_json::from_value::<Message>(v)
                .expect("valid message")
                .reasoning_content
        };
        assert_eq!(
            read(json!({"role": "assistant", "reasoning": "r"})),
            Some("r".into())
        );
        assert_eq!(
            read(
                json!({"role": "assistant", "reasoning_content": null, "thinking": "t", "reasoning": "r"})
            ),
            Some("t".into())
        );
        assert_eq!(
            read(json!({"role": "assistant", "reasoning_content": "", "reasoning": "r"})),
            Some(String::new()),
            "an empty string counts and wins"
        );
        assert_eq!(
            read(json!({"role": "assistant", "thinking": 1.5})),
            Some("1.5".into())
        );
        assert_eq!(read(json!({"role": "assistant", "reasoning": null})), None);
        let m: Message =
            serde_json::from_value(json!({"role": "assistant", "content": "a", "reasoning": "r"}))
                .expect("valid");
        assert_eq!(
            serde_json::to_value(&m).expect("serializable"),
            json!({"role": "assistant", "content": "a", "reasoning_content": "r"})
        );
    }

    #[test]
    fn serializes_openai_shape() {
        let m = Message::assistant_with_calls("", vec![ToolCall::new("functions.f:0", "f", "{}")]);
        assert_eq!(
            serde_json::to_value(&m).expect("serializable"),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "functions.f:0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]})
        );
        let t = Message::tool_result("functions.f:0", "f", "ok");
        assert_eq!(
            serde_json::to_value(&t).expect("serializable"),
            json!({"role": "tool", "content": "ok", "name": "f", "tool_call_id": "functions.f:0"})
        );
    }
}
