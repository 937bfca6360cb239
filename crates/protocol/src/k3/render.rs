//! The prompt: request options and messages walked in the encoder's order.

use serde_json::{Map, Value};

use super::attrs::{self, Attr};
use super::content::{self, kind};
use super::error::K3Error;
use super::sorted::{self, KeyOrder};
use super::{args, bodies, tool_results};
use crate::python;

/// How to render a K3 prompt: the layer and the template keyword arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct K3Options {
    /// `true`: Moonshot's encoder, layers A+B, what raw mode sends. `false`: the Jinja port
    /// alone (layer A).
    pub encoder: bool,
    pub add_generation_prompt: bool,
    /// The `thinking` keyword by truthiness (default on).
    pub thinking: bool,
    /// `None` is an explicit null: no effort message. Moonshot's tokenizer defaults it to
    /// `max` before the encoder runs.
    pub thinking_effort: Option<String>,
    /// The keyword arguments as given; `None` when absent (`Some(Null)` is an explicit null).
    pub tool_choice: Option<Value>,
    pub response_format: Option<Value>,
    pub response_schema: Option<Value>,
}

impl Default for K3Options {
    /// Raw mode's defaults: the encoder, a generation prompt, thinking at `max` effort.
    fn default() -> Self {
        K3Options {
            encoder: true,
            add_generation_prompt: true,
            thinking: true,
            thinking_effort: Some("max".to_owned()),
            tool_choice: None,
            response_format: None,
            response_schema: None,
        }
    }
}

impl K3Options {
    fn key_order(&self) -> KeyOrder {
        if self.encoder {
            KeyOrder::CodePoint
        } else {
            KeyOrder::CaseInsensitive
        }
    }

    /// The effort to announce, refusing one the layer does not accept (`medium` is named in
    /// the message text, yet only the Jinja port accepts it).
    fn effort(&self) -> Result<Option<&str>, K3Error> {
        let Some(e) = self.thinking_effort.as_deref().filter(|_| self.thinking) else {
            return Ok(None);
        };
        let accepted: &[&str] = if self.encoder {
            &["low", "high", "max"]
        } else {
            &["low", "medium", "high", "max"]
        };
        if accepted.contains(&e) {
            Ok(Some(e))
        } else {
            Err(invalid_effort(e, accepted))
        }
    }
}

pub(crate) fn invalid_effort(shown: &str, accepted: &[&str]) -> K3Error {
    K3Error::request(
        "R4",
        format!(
            "unsupported thinking_effort={shown}; supported values are {}",
            accepted.join(", ")
        ),
    )
}

/// Render `messages` (each a JSON message as the request holds it) with the request's
/// `tools` (declared when truthy) as K3's prompt text.
pub fn render(
    messages: &[Value],
    tools: Option<&Value>,
    opts: &K3Options,
) -> Result<String, K3Error> {
    let effort = opts.effort()?;
    let order = opts.key_order();
    let mut out = String::with_capacity(256 * (messages.len() + 4));
    if let Some(tools) = tools.filter(|t| python::truthy(t)) {
        bodies::tool_declare(&mut out, false, &sorted::compact(tools, order));
    }
    if let Some(e) = effort {
        bodies::thinking_effort(&mut out, e);
    }
    Walk {
        messages,
        opts,
        order,
        tool_calls: None,
        tool_index: 0,
    }
    .messages(&mut out)?;
    match opts.tool_choice.as_ref().and_then(Value::as_str) {
        Some("required") => bodies::tool_choice(&mut out, true),
        Some("none") => bodies::tool_choice(&mut out, false),
        _ => {}
    }
    response_format(&mut out, opts, order);
    if opts.add_generation_prompt {
        attrs::open(&mut out, "message", &[("role", Attr::Text("assistant"))]);
        attrs::open(
            &mut out,
            if opts.thinking { "think" } else { "response" },
            &[],
        );
    }
    Ok(out)
}

/// The response-format message: `json_object`, or `json_schema` with the schema from
/// `response_schema` when given, else from `response_format.json_schema`.
fn response_format(out: &mut String, opts: &K3Options, order: KeyOrder) {
    let format = opts.response_format.as_ref();
    let ty = match format {
        Some(Value::Object(f)) => f.get("type"),
        other => other,
    };
    match ty.and_then(Value::as_str) {
        Some("json_object") => bodies::json_object(out),
        Some("json_schema") => {
            let schema = match (&opts.response_schema, format) {
                (Some(s), _) => Some(s),
                (None, Some(Value::Object(f))) => match f.get("json_schema") {
                    Some(Value::Object(w)) if w.contains_key("schema") => w.get("schema"),
                    Some(Value::Object(w)) if w.contains_key("json_schema") => w.get("json_schema"),
                    Some(Value::Null) | None => None,
                    Some(w) => Some(w),
                },
                (None, _) => None,
            };
            bodies::json_schema(out, &sorted::compact(schema.unwrap_or(&Value::Null), order));
        }
        _ => {}
    }
}

/// The walk over the messages, with what tool results are bound to.
struct Walk<'a> {
    messages: &'a [Value],
    opts: &'a K3Options,
    order: KeyOrder,
    /// The latest assistant message's `tool_calls`, as given.
    tool_calls: Option<&'a Value>,
    /// Tool messages rendered since the latest assistant message.
    tool_index: usize,
}

impl<'a> Walk<'a> {
    fn messages(&mut self, out: &mut String) -> Result<(), K3Error> {
        let messages = self.messages;
        for (i, message) in messages.iter().enumerate() {
            // Anything but an object is skipped, as the encoder does.
            let Value::Object(m) = message else { continue };
            let Some(role) = m.get("role") else {
                return Err(K3Error::at(i, "R5", "a message needs a role"));
            };
            match role.as_str() {
                Some("system") if m.get("tools").is_some_and(python::truthy) => {
                    let tools = m.get("tools").unwrap_or(&Value::Null);
                    bodies::tool_declare(out, true, &sorted::compact(tools, self.order));
                }
                Some(role @ ("user" | "system")) => {
                    named_open(out, role, m);
                    content::write(out, m.get("content"), i)?;
                    attrs::close_message(out);
                }
                Some("assistant") => self.assistant(out, m, i)?,
                Some("tool") if i == 0 || !tool_results::is_tool(&messages[i - 1]) => {
                    self.tool_run(out, i)?
                }
                // Later members of a run were rendered with its first; other roles
                // (developer, function, ...) render nothing.
                _ => {}
            }
        }
        Ok(())
    }

    fn assistant(
        &mut self,
        out: &mut String,
        m: &'a Map<String, Value>,
        i: usize,
    ) -> Result<(), K3Error> {
        self.tool_calls = m.get("tool_calls");
        self.tool_index = 0;
        named_open(out, "assistant", m);
        if self.opts.thinking {
            attrs::open(out, "think", &[]);
            if let Some(r) = content::reasoning(m) {
                out.push_str(&r);
            }
            attrs::close(out, "think");
        }
        attrs::open(out, "response", &[]);
        content::write(out, m.get("content"), i)?;
        attrs::close(out, "response");
        if let Some(calls) = m.get("tool_calls").filter(|c| python::truthy(c)) {
            args::write_calls(out, calls, i, self.opts.encoder)?;
        }
        attrs::close_message(out);
        Ok(())
    }

    /// The run of tool messages starting at `start`, bound to the latest calls.
    fn tool_run(&mut self, out: &mut String, start: usize) -> Result<(), K3Error> {
        let messages = self.messages;
        let end = start
            + messages[start..]
                .iter()
                .take_while(|m| tool_results::is_tool(m))
                .count();
        for (j, matched) in tool_results::order(messages, start..end, self.tool_calls) {
            self.tool_index += 1;
            let Value::Object(m) = &messages[j] else {
                continue;
            };
            let name = matched
                .or_else(|| tool_results::fallback_name(m, self.tool_index, self.tool_calls))
                .ok_or_else(|| {
                    K3Error::at(
                        j,
                        "R10",
                        "a tool message needs a resolvable tool name: a \"tool\" or \"name\" \
                         field, an id matching a call, or a call at its position",
                    )
                })?;
            attrs::open(
                out,
                "message",
                &[
                    ("role", Attr::Text("tool")),
                    ("tool", Attr::Value(name)),
                    ("index", Attr::Index(self.tool_index)),
                ],
            );
            content::write(out, m.get("content"), j)?;
            attrs::close_message(out);
        }
        Ok(())
    }
}

/// `<|open|>message role="ROLE"` + ` name="NAME"` when the name is truthy + `<|sep|>`.
fn named_open(out: &mut String, role: &str, m: &Map<String, Value>) {
    match m.get("name").filter(|n| python::truthy(n)) {
        Some(name) => attrs::open(
            out,
            "message",
            &[("role", Attr::Text(role)), ("name", Attr::Value(name))],
        ),
        None => attrs::open(out, "message", &[("role", Attr::Text(role))]),
    }
}

/// Refuse `messages` that are not a list.
pub(crate) fn messages_list(messages: Option<&Value>) -> Result<&[Value], K3Error> {
    match messages {
        Some(Value::Array(list)) => Ok(list),
        Some(other) => Err(K3Error::request(
            "R15",
            format!("messages must be a list, not {}", kind(other)),
        )),
        None => Err(K3Error::request(
            "R15",
            "a request needs a list of messages",
        )),
    }
}
