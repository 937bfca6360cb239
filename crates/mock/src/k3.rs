//! Kimi K3 as the mock plays it: the XTML prompt read back into the conversation it came from,
//! and the answer written in XTML, in the trained shape or in one of the broken shapes servers
//! have been seen to pass on (`--k3-shape NAME`).

use serde_json::Value;

use super::prompt::Conversation;
use super::script::{Reply, Text};
use kimi_protocol::json as pyjson;
use kimi_protocol::message::{Message, ToolCall};

pub const OPEN: &str = "<|open|>";
pub const CLOSE: &str = "<|close|>";
pub const SEP: &str = "<|sep|>";
pub const END_OF_MSG: &str = "<|end_of_msg|>";

/// The structural token `s` starts with, if any: one token each in K3's vocabulary.
pub fn structural_at_start(s: &str) -> Option<&'static str> {
    [OPEN, CLOSE, SEP, END_OF_MSG]
        .into_iter()
        .find(|t| s.starts_with(t))
}

/// The id of a whole structural token (K3 reuses K2's ids 163586-163589 for them).
pub fn structural_id(text: &str) -> Option<u32> {
    match text {
        END_OF_MSG => Some(163_586),
        OPEN => Some(163_587),
        CLOSE => Some(163_588),
        SEP => Some(163_589),
        _ => None,
    }
}

/// The broken answer shapes the mock can give, by name.
pub const SHAPES: [(&str, &str); 8] = [
    (
        "think-close-skipped-tools",
        "the reasoning ends by opening the tools channel",
    ),
    (
        "think-close-skipped-response",
        "the reasoning ends by opening the response channel",
    ),
    (
        "think-close-no-sep",
        "the think close comes without its <|sep|>",
    ),
    (
        "answer-in-think",
        "the whole answer is written in the think channel",
    ),
    (
        "orphan-response-close",
        "prose, a response close without an open, then tools",
    ),
    (
        "no-response-close",
        "the message closes without closing the response",
    ),
    (
        "cut-by-max-tokens",
        "the answer stops inside its response close marker",
    ),
    (
        "rethink",
        "a second think open after the think channel closed",
    ),
];

/// Whether `name` is one of [`SHAPES`].
pub fn is_shape(name: &str) -> bool {
    SHAPES.iter().any(|(n, _)| *n == name)
}

fn open(tag: &str) -> String {
    format!("{OPEN}{tag}{SEP}")
}

fn close(tag: &str) -> String {
    format!("{CLOSE}{tag}{SEP}")
}

/// Whether the prompt's generation prompt opened the think channel (else the response one).
pub fn prompt_thinks(prompt: &str) -> bool {
    !prompt.ends_with(&open("response"))
}

/// The conversation of a K3 prompt: each message element by its attributes; the tool
/// declarations from their fenced JSON; an unterminated last message (the generation prompt)
/// ignored.
pub fn parse_prompt(prompt: &str) -> Conversation {
    let mut conv = Conversation::default();
    let head = format!("{OPEN}message");
    let tail = format!("{}{END_OF_MSG}", close("message"));
    let mut rest = prompt;
    let mut calls_seen = 0usize;
    while let Some(start) = rest.find(&head) {
        let after = &rest[start + head.len()..];
        let Some(sep) = after.find(SEP) else { break };
        let attrs = &after[..sep];
        let body_rest = &after[sep + SEP.len()..];
        let Some(end) = body_rest.find(&tail) else {
            break;
        };
        let body = &body_rest[..end];
        rest = &body_rest[end + tail.len()..];
        match attr(attrs, "role").as_deref() {
            Some("system") if attr(attrs, "type").as_deref() == Some("tool-declare") => {
                if let Some(Value::Array(tools)) = fenced_json(body) {
                    conv.tools.extend(tools);
                }
            }
            Some("system") if attr(attrs, "type").is_some() => {}
            Some("assistant") => {
                let content = channel(body, "response").unwrap_or_default();
                let calls = channel(body, "tools")
                    .map(|t| read_calls(&t, &mut calls_seen))
                    .unwrap_or_default();
                let mut m = if calls.is_empty() {
                    Message::assistant(content)
                } else {
                    Message::assistant_with_calls(content, calls)
                };
                m.reasoning_content = channel(body, "think");
                conv.messages.push(m);
            }
            Some("tool") => {
                let name = attr(attrs, "tool").unwrap_or_default();
                let id = format!("{name}_{}", attr(attrs, "index").unwrap_or_default());
                conv.messages.push(Message::tool_result(&id, &name, body));
            }
            Some("user") => conv.messages.push(Message::user(body)),
            Some("system") => conv.messages.push(Message::system(body)),
            _ => {}
        }
    }
    conv
}

/// `KEY="VALUE"` of an attribute text, unescaped.
fn attr(attrs: &str, key: &str) -> Option<String> {
    let pat = format!(" {key}=\"");
    let at = attrs.find(&pat)? + pat.len();
    let end = attrs[at..].find('"')?;
    Some(
        attrs[at..at + end]
            .replace("&quot;", "\"")
            .replace("&amp;", "&"),
    )
}

/// The body of the first `TAG` channel of an assistant message.
fn channel(body: &str, tag: &str) -> Option<String> {
    let o = open(tag);
    let c = close(tag);
    let at = body.find(&o)? + o.len();
    let end = body[at..].find(&c)?;
    Some(body[at..at + end].to_owned())
}

fn fenced_json(body: &str) -> Option<Value> {
    let at = body.find("```json\n")? + "```json\n".len();
    let end = body[at..].rfind("\n```")?;
    serde_json::from_str(&body[at..at + end]).ok()
}

/// The calls of a tools channel, their typed arguments back into a JSON object.
fn read_calls(tools: &str, seen: &mut usize) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let head = format!("{OPEN}call");
    let end_call = close("call");
    let mut rest = tools;
    while let Some(start) = rest.find(&head) {
        let after = &rest[start + head.len()..];
        let Some(sep) = after.find(SEP) else { break };
        let name = attr(&after[..sep], "tool").unwrap_or_default();
        let inner_rest = &after[sep + SEP.len()..];
        let Some(end) = inner_rest.find(&end_call) else {
            break;
        };
        let args = arguments(&inner_rest[..end]);
        rest = &inner_rest[end + end_call.len()..];
        calls.push(ToolCall::new(format!("{name}_{seen}"), name, args));
        *seen += 1;
    }
    calls
}

fn arguments(call: &str) -> String {
    let mut obj = serde_json::Map::new();
    let head = format!("{OPEN}argument");
    let end_arg = close("argument");
    let mut rest = call;
    while let Some(start) = rest.find(&head) {
        let after = &rest[start + head.len()..];
        let Some(sep) = after.find(SEP) else { break };
        let attrs = &after[..sep];
        let value_rest = &after[sep + SEP.len()..];
        let Some(end) = value_rest.find(&end_arg) else {
            break;
        };
        let raw = &value_rest[..end];
        let value = match attr(attrs, "type").as_deref() {
            Some("string") | None => Value::String(raw.to_owned()),
            Some(_) => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
        };
        obj.insert(attr(attrs, "key").unwrap_or_default(), value);
        rest = &value_rest[end + end_arg.len()..];
    }
    pyjson::to_string(&Value::Object(obj), pyjson::PYTHON_DEFAULT)
}

/// The tools channel of `reply`'s calls, each argument a typed element.
fn tools_channel(reply: &Reply) -> String {
    let mut s = open("tools");
    for (i, c) in reply.calls.iter().enumerate() {
        s.push_str(&format!(
            "{OPEN}call tool=\"{}\" index=\"{}\"{SEP}",
            escape(&c.name),
            i + 1
        ));
        if let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&c.arguments) {
            for (k, v) in &args {
                let (ty, text) = match v {
                    Value::String(s) => ("string", s.clone()),
                    Value::Bool(_) => ("boolean", v.to_string()),
                    Value::Null => ("null", "null".to_owned()),
                    Value::Number(_) => ("number", pyjson::to_string(v, pyjson::PYTHON_DEFAULT)),
                    Value::Array(_) => ("array", pyjson::to_string(v, pyjson::PYTHON_DEFAULT)),
                    Value::Object(_) => ("object", pyjson::to_string(v, pyjson::PYTHON_DEFAULT)),
                };
                s.push_str(&format!(
                    "{OPEN}argument key=\"{}\" type=\"{ty}\"{SEP}{text}{}",
                    escape(k),
                    close("argument")
                ));
            }
        } else if !c.arguments.trim().is_empty() {
            // Arguments that are no JSON object: the json element, as the model writes them.
            s.push_str(&format!(
                "{OPEN}json type=\"object\"{SEP}{}{}",
                c.arguments,
                close("json")
            ));
        }
        s.push_str(&close("call"));
    }
    s.push_str(&close("tools"));
    s
}

fn escape(v: &str) -> String {
    v.replace('&', "&amp;").replace('"', "&quot;")
}

/// The completion for `reply` after a K3 generation prompt: reasoning (thinking on), the
/// response channel, the tools channel, the message close; `<|end_of_msg|>` is left out as
/// servers leave the stop token out of the text. `shape` breaks it the named way.
pub fn completion(reply: &Reply, reasoning: &str, thinking: bool, shape: Option<&str>) -> String {
    let content = match &reply.content {
        Text::Plain(t) => t.clone(),
        _ => String::new(),
    };
    let tools = if reply.calls.is_empty() {
        String::new()
    } else {
        tools_channel(reply)
    };
    let end = close("message");
    let response = format!("{}{content}{}", open("response"), close("response"));
    let think_close = close("think");
    let mut out = String::new();
    if thinking {
        out.push_str(reasoning);
    }
    match shape {
        Some("think-close-skipped-tools") if thinking && !tools.is_empty() => {
            out.push_str(&tools);
        }
        Some("think-close-skipped-tools" | "think-close-skipped-response") if thinking => {
            out.push_str(&response);
            out.push_str(&tools);
        }
        Some("think-close-no-sep") if thinking => {
            out.push_str(&format!("{CLOSE}think"));
            out.push_str(&response);
            out.push_str(&tools);
        }
        Some("answer-in-think") if thinking => {
            // The model answers where the prompt opened the think channel.
            out.clear();
            out.push_str(&content);
            out.push_str(&close("response"));
            out.push_str(&tools);
        }
        Some("orphan-response-close") if thinking => {
            out.push_str(&format!(" {content}"));
            out.push_str(&close("response"));
            out.push_str(&tools);
        }
        Some("no-response-close") => {
            if thinking {
                out.push_str(&think_close);
            }
            if thinking {
                out.push_str(&open("response"));
            }
            out.push_str(&content);
            out.push_str(&tools);
        }
        Some("cut-by-max-tokens") => {
            if thinking {
                out.push_str(&think_close);
                out.push_str(&open("response"));
            }
            out.push_str(&content);
            out.push_str(&format!("{CLOSE}response"));
            return out;
        }
        Some("rethink") if thinking => {
            out.push_str(&think_close);
            out.push_str(&open("think"));
            out.push_str(&response);
            out.push_str(&tools);
        }
        _ if thinking => {
            out.push_str(&think_close);
            out.push_str(&response);
            out.push_str(&tools);
        }
        // Thinking off: the prompt opened the response channel.
        _ => {
            out.push_str(&content);
            out.push_str(&close("response"));
            out.push_str(&tools);
        }
    }
    out.push_str(&end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Call;

    fn weather() -> Reply {
        Reply {
            content: Text::Plain("Let me check.".into()),
            calls: vec![Call {
                name: "get_weather".into(),
                arguments: r#"{"city": "Paris", "days": 3, "opts": {"b": 2}}"#.into(),
            }],
        }
    }

    #[test]
    fn the_trained_shape_and_each_broken_one() {
        let r = weather();
        let ok = completion(&r, "Need the tool.", true, None);
        assert_eq!(
            ok,
            "Need the tool.<|close|>think<|sep|><|open|>response<|sep|>Let me check.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|><|open|>argument key=\"opts\" type=\"object\"<|sep|>{\"b\": 2}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>"
        );
        let skipped = completion(
            &r,
            "Need the tool.",
            true,
            Some("think-close-skipped-tools"),
        );
        assert!(
            skipped.starts_with("Need the tool.<|open|>tools<|sep|>"),
            "{skipped}"
        );
        let in_think = completion(&Reply::text("Hi."), "x", true, Some("answer-in-think"));
        assert_eq!(
            in_think,
            "Hi.<|close|>response<|sep|><|close|>message<|sep|>"
        );
        let cut = completion(&Reply::text("Hi."), "x", true, Some("cut-by-max-tokens"));
        assert!(cut.ends_with("Hi.<|close|>response"), "{cut}");
        let off = completion(&Reply::text("Hi."), "x", false, None);
        assert_eq!(off, "Hi.<|close|>response<|sep|><|close|>message<|sep|>");
        for (name, _) in SHAPES {
            assert!(is_shape(name));
            let text = completion(&r, "r", true, Some(name));
            // Only the skipped-tools shape has no response channel at all.
            assert!(
                text.contains("Let me check.") || name == "think-close-skipped-tools",
                "{name}: {text}"
            );
        }
    }

    #[test]
    fn a_prompt_is_read_back() {
        let prompt = concat!(
            "<|open|>message role=\"system\" type=\"tool-declare\"<|sep|># Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n[{\"function\":{\"name\":\"get_weather\"},\"type\":\"function\"}]\n```<|close|>message<|sep|><|end_of_msg|>",
            "<|open|>message role=\"system\" type=\"thinking-effort\"<|sep|>x<|close|>message<|sep|><|end_of_msg|>",
            "<|open|>message role=\"user\"<|sep|>Weather in Paris?<|close|>message<|sep|><|end_of_msg|>",
            "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>hm<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>",
            "<|open|>message role=\"tool\" tool=\"get_weather\" index=\"1\"<|sep|>sunny<|close|>message<|sep|><|end_of_msg|>",
            "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"
        );
        let c = parse_prompt(prompt);
        assert_eq!(c.tools.len(), 1);
        assert_eq!(c.messages.len(), 3);
        assert_eq!(c.messages[0].text(), "Weather in Paris?");
        assert_eq!(c.messages[1].reasoning_content.as_deref(), Some("hm"));
        assert_eq!(
            c.messages[1].tool_calls[0].function.arguments,
            r#"{"city": "Paris"}"#
        );
        assert_eq!(c.messages[2].name.as_deref(), Some("get_weather"));
        assert_eq!(c.messages[2].text(), "sunny");
        assert!(prompt_thinks(prompt));
        assert!(!prompt_thinks("x<|open|>response<|sep|>"));
    }
}
