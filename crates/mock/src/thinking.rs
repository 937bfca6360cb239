//! The thinking model (Kimi-K2-Thinking, K2.5, K2.6 by the served model's name): reasoning
//! before the answer, delivered the ways real servers deliver it:
//! `reasoning_content` / `reasoning` deltas, `<think>` in content or raw text, a tool section
//! inside the reasoning, a call delivered twice, and Moonshot's 400 for history without it.

use bytes::Bytes;
use serde_json::{Value, json};

use super::MockOptions;
use super::deltas::Delta;
use super::script::{Reply, Text};
use super::sse::Header;
use kimi_protocol::call_id;
use kimi_protocol::family::Template;
use kimi_protocol::message::Message;

/// How the reasoning of one answer is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The reasoning text (markers included when the calls are inside it).
    pub reasoning: String,
    pub template: Template,
}

/// Whether this request gets reasoning: a thinking model, unless the request turned thinking
/// off (`chat_template_kwargs.thinking`, Moonshot's `thinking.type`, or a raw prompt that
/// closed `<think></think>` itself).
pub fn thinks(opts: &MockOptions, body: &Value) -> bool {
    let template = Template::for_model(&opts.model);
    if !template.thinks() {
        return false;
    }
    if template == Template::K2Thinking {
        return true;
    }
    let kwarg_off = body
        .pointer("/chat_template_kwargs/thinking")
        .and_then(Value::as_bool)
        == Some(false);
    let moonshot_off = body.pointer("/thinking/type").and_then(Value::as_str) == Some("disabled");
    let prompt_off = body
        .get("prompt")
        .and_then(Value::as_str)
        .is_some_and(|p| p.ends_with("<think></think>"));
    !(kwarg_off || moonshot_off || prompt_off)
}

/// What the model "thinks" before `reply`.
pub(crate) fn reasoning_for(reply: &Reply) -> String {
    match reply.calls.as_slice() {
        [] => "The user wants an answer. I know this one; no tool is needed, so I will reply \
               directly and keep it short."
            .to_owned(),
        calls => {
            let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
            format!(
                "The user asks something a tool can tell. I should call {} and then answer \
                 from its result.",
                names.join(" and ")
            )
        }
    }
}

/// The marker text of `reply`'s calls, space-separated as reasoning parsers leave it.
fn spaced_markers(reply: &Reply, ids: &[Option<String>]) -> String {
    marker_text(reply, ids, " ")
}

/// The marker text of `reply`'s calls as the model writes them (no spaces).
pub fn markers(reply: &Reply, ids: &[Option<String>]) -> String {
    marker_text(reply, ids, "")
}

/// Each marker preceded by `sep`, and each id and argument text too.
fn marker_text(reply: &Reply, ids: &[Option<String>], sep: &str) -> String {
    let mut s = format!("{sep}<|tool_calls_section_begin|>");
    for (i, c) in reply.calls.iter().enumerate() {
        let id = ids
            .get(i)
            .cloned()
            .flatten()
            .unwrap_or_else(|| call_id::canonical(&c.name, i));
        s.push_str(&format!(
            "{sep}<|tool_call_begin|>{sep}{id}{sep}<|tool_call_argument_begin|>{sep}{}{sep}<|tool_call_end|>",
            c.arguments
        ));
    }
    s.push_str(&format!("{sep}<|tool_calls_section_end|>"));
    s
}

/// Chat mode: the plan for `reply`, which may change (calls moved into the reasoning, the
/// reasoning moved into the content when the server "has no reasoning parser").
pub fn chat(opts: &MockOptions, reply: &mut Reply, ids: &[Option<String>]) -> Option<Plan> {
    let template = Template::for_model(&opts.model);
    let mut reasoning = reasoning_for(reply);
    if opts.call_in_reasoning && !reply.calls.is_empty() {
        // Chutes/Bedrock: K2-Thinking's early tool section, as text in reasoning_content.
        reasoning.push_str(&spaced_markers(reply, ids));
        reply.calls.clear();
    }
    if opts.reasoning_in_content {
        let Text::Plain(content) = &reply.content else {
            return None;
        };
        // No reasoning parser: K2-Thinking writes `<think>`; K2.5/K2.6 started inside it.
        let open = if template == Template::K2Thinking {
            "<think>"
        } else {
            ""
        };
        let close = think_close(opts);
        reply.content = Text::Plain(format!("{open}{reasoning}{close}{content}"));
        return None;
    }
    if opts.omit_think_close
        && let Text::Plain(content) = &mut reply.content
    {
        // The reasoning parser never sees the close: the answer text stays in the reasoning.
        reasoning.push_str(&std::mem::take(content));
    }
    Some(Plan {
        reasoning,
        template,
    })
}

/// Raw mode: the reply's text with the reasoning, as the model continues `prompt`.
pub fn raw(opts: &MockOptions, reply: &mut Reply, prompt: &str) {
    let Text::Plain(content) = &reply.content else {
        return;
    };
    let reasoning = reasoning_for(reply);
    // K2.5/K2.6 prompts end inside `<think>`: the completion starts in the reasoning.
    let open = if prompt.ends_with("<think>") {
        ""
    } else {
        "<think>"
    };
    let text = if opts.call_in_reasoning && !reply.calls.is_empty() {
        // K2-Thinking opens its tool section before `</think>`; the calls follow.
        format!("{open}{reasoning} ")
    } else {
        format!("{open}{reasoning}{}{content}", think_close(opts))
    };
    reply.content = Text::Plain(text);
}

/// The text that ends the reasoning: `</think>`, or nothing with `omit_think_close`.
fn think_close(opts: &MockOptions) -> &'static str {
    if opts.omit_think_close {
        ""
    } else {
        "</think>"
    }
}

/// The reasoning deltas of a chat answer, a few words each.
pub fn reasoning_events(header: &Header, key: &str, plan: &Plan) -> Vec<Bytes> {
    let mut events = Vec::new();
    let mut piece = String::new();
    for word in plan.reasoning.split_inclusive(' ') {
        piece.push_str(word);
        if piece.len() >= 12 {
            events.push(reasoning_delta(header, key, std::mem::take(&mut piece)));
        }
    }
    if !piece.is_empty() {
        events.push(reasoning_delta(header, key, piece));
    }
    events
}

/// How many of `deltas` carry reasoning written as text (raw mode, or chat without a
/// reasoning parser): those up to the one that closes it with `</think>`; 0 without one.
pub(crate) fn deltas_in_reasoning(deltas: impl Iterator<Item = Delta>) -> usize {
    const CLOSE: &str = "</think>";
    // The text since the last delta's tail: the tag may be split across deltas.
    let mut tail = String::new();
    for (k, d) in deltas.enumerate() {
        if let Delta::Text(t) = d {
            tail.push_str(&t);
            if tail.contains(CLOSE) {
                return k + 1;
            }
            let keep = tail.len().saturating_sub(CLOSE.len());
            let cut = (keep..=tail.len())
                .find(|&i| tail.is_char_boundary(i))
                .unwrap_or(0);
            tail.drain(..cut);
        }
    }
    0
}

/// One reasoning delta, with the explicit null content SGLang sends.
fn reasoning_delta(header: &Header, key: &str, text: String) -> Bytes {
    let mut delta = serde_json::Map::new();
    delta.insert("content".into(), Value::Null);
    delta.insert(key.to_owned(), Value::String(text));
    header.chat_delta(Value::Object(delta))
}

/// `--duplicate-calls`: the calls' markers leaked into `content` as well (as older vLLM
/// versions did), just before the final event.
pub fn leak_markers(events: Vec<Bytes>, header: &Header, text: &str) -> Vec<Bytes> {
    let at = events
        .iter()
        .position(|e| e.windows(17).any(|w| w == b"\"finish_reason\":\""))
        .unwrap_or(events.len());
    let mut out = events;
    out.insert(at, header.chat_delta(json!({ "content": text })));
    out
}

/// Moonshot's rule (`--require-reasoning`): every assistant tool-call message of a thinking
/// model carries its reasoning; K2.5/K2.6 count `""` as missing. The 400 message if not.
pub fn missing_reasoning(opts: &MockOptions, messages: &[Message]) -> Option<String> {
    let template = Template::for_model(&opts.model);
    let index = messages.iter().position(|m| {
        m.role == "assistant"
            && !m.tool_calls.is_empty()
            && match m.reasoning_content.as_deref() {
                None => true,
                Some("") => template != Template::K2Thinking,
                Some(_) => false,
            }
    })?;
    Some(format!(
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::message::ToolCall;

    fn opts(model: &str) -> MockOptions {
        MockOptions {
            model: model.into(),
            ..MockOptions::default()
        }
    }

    #[test]
    fn who_thinks_and_when_a_request_turns_it_off() {
        assert!(!thinks(&opts("moonshotai/Kimi-K2-Instruct"), &json!({})));
        assert!(thinks(&opts("kimi-k2-thinking"), &json!({})));
        // K2-Thinking ignores the switch; K2.5 honours each spelling of it.
        let off = json!({"chat_template_kwargs": {"thinking": false}});
        assert!(thinks(&opts("kimi-k2-thinking"), &off));
        assert!(!thinks(&opts("kimi-k2.5"), &off));
        assert!(!thinks(
            &opts("kimi-k2.5"),
            &json!({"thinking": {"type": "disabled"}})
        ));
        assert!(!thinks(
            &opts("kimi-k2.5"),
            &json!({"prompt": "x<think></think>"})
        ));
        assert!(thinks(&opts("kimi-k2.5"), &json!({"prompt": "x<think>"})));
    }

    #[test]
    fn moonshots_rule_names_the_first_bare_tool_call_message() {
        let call = Message::assistant_with_calls("", vec![ToolCall::new("a", "f", "{}")]);
        let with = |r: &str| Message {
            reasoning_content: Some(r.into()),
            ..call.clone()
        };
        let history = vec![
            Message::user("q"),
            with("ok"),
            Message::user("q"),
            call.clone(),
        ];
        assert_eq!(
            missing_reasoning(&opts("kimi-k2.5"), &history).as_deref(),
            Some(
                "thinking is enabled but reasoning_content is missing in assistant tool call message at index 3"
            )
        );
        // K2.5 counts "" as missing; K2-Thinking accepts it; " " passes both.
        let empty = vec![Message::user("q"), with("")];
        assert!(missing_reasoning(&opts("kimi-k2.5"), &empty).is_some());
        assert!(missing_reasoning(&opts("kimi-k2-thinking"), &empty).is_none());
        assert!(missing_reasoning(&opts("kimi-k2.5"), &[with(" ")]).is_none());
    }
}
