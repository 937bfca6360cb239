//! Entry points from a request file (`kimi-tui render`) and from typed messages (raw mode).

use serde_json::Value;

use super::error::K3Error;
use super::render::{K3Options, invalid_effort, messages_list, render};
use crate::message::Message;
use crate::python;

/// Render a request `{"messages", "tools", "add_generation_prompt", ...}`, every other key a
/// keyword argument: `thinking` (default on, by truthiness), `thinking_effort` (default
/// `max`; null for none), `tool_choice`, `response_format`, `response_schema`; anything else
/// is ignored. `encoder`: layers A+B (raw mode) rather than the Jinja port alone.
///
/// Numbers print as Python prints them; wide integers keep their digits when the request was
/// read with [`crate::json::parse`] and this runs inside [`crate::json::with_wide_ints`].
pub fn render_request(request: &Value, encoder: bool) -> Result<String, K3Error> {
    let Value::Object(req) = request else {
        return Err(K3Error::request(
            "R15",
            r#"expected a request object {"messages": [...], ...}"#,
        ));
    };
    let messages = messages_list(req.get("messages"))?;
    // As the K2 reader: absent or null asks for the answer.
    let add_generation_prompt = match req.get("add_generation_prompt") {
        None | Some(Value::Null) => true,
        Some(v) => python::truthy(v),
    };
    let thinking = req.get("thinking").is_none_or(python::truthy);
    let thinking_effort = match req.get("thinking_effort") {
        None => Some("max".to_owned()),
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        // Never a valid effort; refused only where an effort would be rendered.
        Some(other) if thinking => {
            return Err(invalid_effort(
                &python::str_of(other),
                if encoder {
                    &["low", "high", "max"]
                } else {
                    &["low", "medium", "high", "max"]
                },
            ));
        }
        Some(_) => None,
    };
    let opts = K3Options {
        encoder,
        add_generation_prompt,
        thinking,
        thinking_effort,
        tool_choice: req.get("tool_choice").cloned(),
        response_format: req.get("response_format").cloned(),
        response_schema: req.get("response_schema").cloned(),
    };
    render(messages, req.get("tools"), &opts)
}

/// Render typed messages (raw mode's conversation) with `tools`: each message as its JSON
/// form (`reasoning_content`, `tool_calls` with string arguments, `tool_call_id`, `name`).
pub fn render_messages(
    messages: &[Message],
    tools: &[Value],
    opts: &K3Options,
) -> Result<String, K3Error> {
    let mut messages = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            serde_json::to_value(m)
                .map_err(|e| K3Error::at(i, "R5", format!("cannot be written as JSON: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for m in &mut messages {
        // Ours: the record of an edited answer is no part of the prompt.
        if let Some(m) = m.as_object_mut() {
            m.remove("edited");
        }
    }
    apply_edits(&mut messages);
    let tools = (!tools.is_empty()).then(|| Value::Array(tools.to_vec()));
    render(&messages, tools.as_ref(), opts)
}

/// A call whose arguments the user edited before it ran is written with the edited arguments:
/// K3 writes a call's arguments out as typed elements, so the prompt shows what really ran. The
/// edit rides on the tool result (`edited_arguments`); the assistant message before it holds
/// the call with that id.
fn apply_edits(messages: &mut [Value]) {
    for i in 0..messages.len() {
        let Some(edited) = messages[i]
            .as_object_mut()
            .and_then(|m| m.remove("edited_arguments"))
        else {
            continue;
        };
        let Some(id) = messages[i].get("tool_call_id").cloned() else {
            continue;
        };
        let call = messages[..i]
            .iter_mut()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .and_then(|m| m.get_mut("tool_calls"))
            .and_then(Value::as_array_mut)
            .and_then(|calls| calls.iter_mut().find(|c| c.get("id") == Some(&id)));
        if let Some(function) = call.and_then(|c| c.get_mut("function")) {
            function["arguments"] = edited;
        }
    }
}
