//! A render request as `kimi-tui render` and the golden vectors write it:
//! `{"template"?, "messages", "tools", "add_generation_prompt", ...}`, every other top-level
//! key a template keyword argument, as Hugging Face's `apply_chat_template` passes them. Checked
//! where the templates would fail on it, and with the values a template prints through Python's
//! `str()` (`None` for a null id) made explicit before they become typed [`Message`]s.

use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::family::Template;
use super::message::Message;
use super::python;
use super::template::{RenderOptions, render_with_tools_ts};

/// A checked request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
pub struct RenderRequest {
    /// The request's own `"template"` (`Kimi-K2.5`, `k2.5`, ...), if it names one.
    pub template: Option<Template>,
    pub messages: Vec<Message>,
    pub tools: Vec<Value>,
    /// Absent or null: `None` (a chat request asks for the answer, so callers default to true).
    pub add_generation_prompt: Option<bool>,
    /// The `thinking` keyword: only the JSON boolean `false` is `Some(false)`.
    pub thinking: Option<bool>,
    /// K2.6's `preserve_thinking` keyword, by Python truthiness.
    pub preserve_thinking: bool,
    /// The `tools_ts_str` keyword (K2.5/K2.6), when the request gives one.
    pub tools_ts_str: Option<String>,
}

/// Why a request cannot be rendered: where (a JSON path such as `messages[1].content`) and
/// what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for RequestError {}

fn err<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, RequestError> {
    Err(RequestError {
        path: path.into(),
        message: message.into(),
    })
}

impl RenderRequest {
    /// The options this request asks for under `template` (add_generation_prompt defaulting
    /// to true, the keywords); preprocessing as `preprocess_tools` says.
    pub fn options(&self, template: Template, preprocess_tools: bool) -> RenderOptions {
        RenderOptions {
            add_generation_prompt: self.add_generation_prompt.unwrap_or(true),
            template,
            thinking: self.thinking,
            preserve_thinking: self.preserve_thinking,
            preprocess_tools,
            ..RenderOptions::default()
        }
    }

    /// The prompt for `opts`, with the request's `tools_ts_str` if it gives one.
    pub fn render(&self, opts: RenderOptions) -> String {
        render_with_tools_ts(
            &self.messages,
            &self.tools,
            opts,
            self.tools_ts_str.as_deref(),
        )
    }
}

impl TryFrom<Value> for RenderRequest {
    type Error = RequestError;

    fn try_from(value: Value) -> Result<Self, RequestError> {
        let Value::Object(mut req) = value else {
            return err(
                "",
                r#"expected a request object {"messages": [...], "tools": [...], "add_generation_prompt": bool}"#,
            );
        };
        let template = match req.get("template") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => match Template::parse(name) {
                Some(t) => Some(t),
                None => return err("template", unknown_template(name)),
            },
            Some(_) => return err("template", "must be a string"),
        };
        let messages = match req.remove("messages") {
            None => return err("messages", "missing: a request needs a list of messages"),
            Some(Value::Array(list)) => list
                .into_iter()
                .enumerate()
                .map(|(i, m)| message(m, &format!("messages[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return err("messages", "must be a list"),
        };
        let tools = match req.remove("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => {
                for (i, t) in list.iter().enumerate() {
                    if !t.is_object() {
                        return err(format!("tools[{i}]"), "a tool must be an object");
                    }
                }
                list
            }
            Some(_) => return err("tools", "must be a list or null"),
        };
        let add_generation_prompt = match req.get("add_generation_prompt") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return err("add_generation_prompt", "must be true or false"),
        };
        // Only the boolean `false` turns thinking off, as in the templates.
        let thinking = req
            .get("thinking")
            .map(|v| !matches!(v, Value::Bool(false)));
        let preserve_thinking = req.get("preserve_thinking").is_some_and(python::truthy);
        let tools_ts_str = req
            .get("tools_ts_str")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(RenderRequest {
            template,
            messages,
            tools,
            add_generation_prompt,
            thinking,
            preserve_thinking,
            tools_ts_str,
        })
    }
}

fn unknown_template(name: &str) -> String {
    let names: Vec<&str> = Template::ALL.iter().map(|t| t.as_str()).collect();
    format!(
        "unknown template {name:?}; expected one of {} (or Kimi-K2-Thinking, Kimi-K2.5)",
        names.join(", ")
    )
}

/// One message: checked where a template would fail on it, Python-printed values made
/// explicit, then typed.
fn message(value: Value, path: &str) -> Result<Message, RequestError> {
    let Value::Object(mut m) = value else {
        return err(path, "a message must be an object");
    };
    if !m.get("role").is_some_and(Value::is_string) {
        return err(format!("{path}.role"), "missing or not a string");
    }
    match m.get("content") {
        None | Some(Value::Null | Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            if let Some(i) = parts.iter().position(|p| !p.is_object()) {
                return err(
                    format!("{path}.content[{i}]"),
                    "a content part must be an object",
                );
            }
        }
        Some(other) => {
            return err(
                format!("{path}.content"),
                format!(
                    "content must be a string, a list of parts or null, not {}",
                    kind(other)
                ),
            );
        }
    }
    // `{{ name }}` of a truthy non-string prints `str()`; a falsy one falls back to the role.
    match m.get("name") {
        Some(n) if !n.is_string() => {
            if python::truthy(n) {
                let shown = python::str_of(n);
                m.insert("name".into(), Value::String(shown));
            } else {
                m.remove("name");
            }
        }
        _ => {}
    }
    python_str(&mut m, "tool_call_id");
    // A null `reasoning_content` with no other reasoning reaches the template as `None`.
    if m.get("reasoning_content") == Some(&Value::Null)
        && ["thinking", "reasoning"]
            .iter()
            .all(|k| m.get(*k).is_none_or(Value::is_null))
    {
        m.insert("reasoning_content".into(), Value::String("None".into()));
    }
    match m.get_mut("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter_mut().enumerate() {
                tool_call(call, &format!("{path}.tool_calls[{i}]"))?;
            }
        }
        Some(_) => return err(format!("{path}.tool_calls"), "must be a list"),
    }
    serde_json::from_value(Value::Object(m)).or_else(|e| err(path, e.to_string()))
}

fn tool_call(call: &mut Value, path: &str) -> Result<(), RequestError> {
    let Value::Object(call) = call else {
        return err(path, "a tool call must be an object");
    };
    let Some(Value::Object(function)) = call.get_mut("function") else {
        return err(path, "a tool call without \"function\" (an object)");
    };
    if !function.contains_key("arguments") {
        return err(
            format!("{path}.function"),
            "a function without \"arguments\"",
        );
    }
    python_str(function, "name");
    python_str(call, "id");
    if call.get("type").is_some_and(|t| !t.is_string()) {
        call.remove("type");
    }
    Ok(())
}

/// A present non-string value becomes the string the template prints for it (`None`, `1`).
fn python_str(map: &mut Map<String, Value>, key: &str) {
    if let Some(v) = map.get_mut(key)
        && !v.is_string()
    {
        *v = Value::String(python::str_of(v));
    }
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::DEFAULT_SYSTEM_PROMPT;
    use serde_json::json;

    fn parse(v: Value) -> Result<RenderRequest, String> {
        RenderRequest::try_from(v).map_err(|e| e.to_string())
    }

    #[test]
    fn request_errors_name_the_place() {
        for (req, want) in [
            (json!([]), "expected a request object"),
            (json!({}), "messages: missing"),
            (json!({"messages": {}}), "messages: must be a list"),
            (
                json!({"messages": [{"role": "user", "content": 5}]}),
                "messages[0].content: content must be a string, a list of parts or null, not a number",
            ),
            (
                json!({"messages": [{"role": "user", "content": true}]}),
                "not a boolean",
            ),
            (
                json!({"messages": [{"role": "user", "content": {"text": "a"}}]}),
                "not an object",
            ),
            (
                json!({"messages": [{"role": "user", "content": ["a"]}]}),
                "messages[0].content[0]: a content part must be an object",
            ),
            (
                json!({"messages": [{"role": "assistant", "tool_calls": {}}]}),
                "messages[0].tool_calls: must be a list",
            ),
            (
                json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "x"}]}]}),
                "messages[0].tool_calls[0]: a tool call without \"function\"",
            ),
            (
                json!({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]}),
                "messages[0].tool_calls[0].function: a function without \"arguments\"",
            ),
            (json!({"messages": [], "tools": [1]}), "tools[0]"),
            (
                json!({"messages": [], "template": "k9"}),
                "unknown template \"k9\"",
            ),
            (json!({"messages": [{"content": "x"}]}), "messages[0].role"),
        ] {
            let got = parse(req.clone()).expect_err(&req.to_string());
            assert!(got.contains(want), "{got:?} lacks {want:?}");
        }
    }

    #[test]
    fn keywords_and_python_printed_values() {
        let req = parse(json!({
            "template": "Kimi-K2-Thinking", "thinking": 0, "preserve_thinking": 1, "model": "m",
            "messages": [
                {"role": "user", "content": "q", "name": 0},
                {"role": "assistant", "content": null, "reasoning_content": null,
                 "tool_calls": [{"id": null, "function": {"name": null, "arguments": null}}]},
                {"role": "tool", "tool_call_id": 7, "content": "r"}
            ]
        }))
        .expect("valid");
        assert_eq!(req.template, Some(Template::K2Thinking));
        assert_eq!(req.thinking, Some(true), "only false turns it off");
        assert!(req.preserve_thinking);
        assert_eq!(req.add_generation_prompt, None);
        let p = req.render(req.options(Template::K2Thinking, false));
        assert_eq!(
            p,
            format!(
                "<|im_system|>system<|im_middle|>{DEFAULT_SYSTEM_PROMPT}<|im_end|><|im_user|>user<|im_middle|>q<|im_end|><|im_assistant|>assistant<|im_middle|><think>None</think><|tool_calls_section_begin|><|tool_call_begin|>None<|tool_call_argument_begin|>null<|tool_call_end|><|tool_calls_section_end|><|im_end|><|im_system|>tool<|im_middle|>## Return of 7\nr<|im_end|><|im_assistant|>assistant<|im_middle|>"
            )
        );
        let off = parse(json!({"messages": [], "thinking": false})).expect("valid");
        assert_eq!(off.thinking, Some(false));
    }
}
