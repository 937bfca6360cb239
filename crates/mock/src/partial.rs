//! Partial mode: the answer continued from a start the client gives, in both modes. Raw mode's
//! prompt ends with that start after the last assistant turn's header; chat mode's messages
//! end with it as an assistant message, marked `"partial": true` (Moonshot's API) or with
//! `"continue_final_message": true` beside them (vLLM). The scripted answer goes on after the
//! start when it begins with it, and ends there when it does not.

use std::sync::Arc;

use serde_json::Value;

use super::script::{Reply, Text};
use super::tokens::Tokens;
use kimi_protocol::tokens::{IM_ASSISTANT, IM_END, IM_MIDDLE};

/// The start of the answer a raw prompt ends with: the text after the last assistant turn's
/// header, without the generation prompt's own `<think>` (or, thinking off, `<think></think>`).
/// `None` when the prompt ends with the bare generation prompt (or its last turn is closed).
pub(crate) fn raw_prefix(prompt: &str) -> Option<&str> {
    let at = prompt.rfind(IM_ASSISTANT)?;
    let turn = &prompt[at..];
    if turn.contains(IM_END) {
        return None;
    }
    let body = &turn[turn.find(IM_MIDDLE)? + IM_MIDDLE.len()..];
    let body = (body.strip_prefix("<think></think>"))
        .or_else(|| body.strip_prefix("<think>"))
        .unwrap_or(body);
    (!body.is_empty()).then_some(body)
}

/// How a chat request asks for partial mode, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatPartial {
    /// `"partial": true` on the last (assistant) message.
    Moonshot,
    /// `"continue_final_message": true` at the top level.
    Vllm,
}

impl ChatPartial {
    /// The spelling `body` uses, if any.
    pub(crate) fn of(body: &Value) -> Option<ChatPartial> {
        let last = body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last());
        if last.and_then(|m| m.get("partial")) == Some(&Value::Bool(true)) {
            Some(ChatPartial::Moonshot)
        } else if body.get("continue_final_message") == Some(&Value::Bool(true)) {
            Some(ChatPartial::Vllm)
        } else {
            None
        }
    }

    /// Why a server would refuse `body` in this spelling: the last message must be the
    /// assistant's, and vLLM takes no generation prompt with it.
    pub(crate) fn problem(self, body: &Value) -> Option<String> {
        let last_role = body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str);
        if last_role != Some("assistant") {
            return Some(
                "partial mode continues a final assistant message: the last message is not one"
                    .to_owned(),
            );
        }
        let generation_prompt = body.get("add_generation_prompt") != Some(&Value::Bool(false));
        (self == ChatPartial::Vllm && generation_prompt).then(|| {
            "continue_final_message and add_generation_prompt cannot both be true".to_owned()
        })
    }

    /// The field the request carries, for an error that names it.
    pub(crate) fn field(self) -> &'static str {
        match self {
            ChatPartial::Moonshot => "partial",
            ChatPartial::Vllm => "continue_final_message",
        }
    }
}

/// The text the mock streams for `reply` in raw mode: the content, then the calls' markers
/// (`<|im_end|>` is never part of it).
pub(crate) fn raw_text(reply: &Reply, ids: &[Option<String>]) -> String {
    Tokens::with_ids(Arc::new(reply.clone()), ids)
        .map(|t| t.text)
        .collect()
}

/// Raw mode: the rest of `full` (the text the answer would be) after `prefix`, as text; nothing
/// when `full` does not begin with `prefix`.
pub(crate) fn raw_rest(full: &str, prefix: &str) -> Reply {
    Reply::text(full.strip_prefix(prefix).unwrap_or_default())
}

/// Chat mode: `reply` with its content after `prefix`, its calls kept; no content when the
/// content does not begin with `prefix`.
pub(crate) fn chat_rest(mut reply: Reply, prefix: &str) -> Reply {
    let rest = match &reply.content {
        Text::Plain(text) => text.strip_prefix(prefix).unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    reply.content = Text::Plain(rest);
    reply
}

/// `--broken-marker`: the answer as the model wrote it, broken: its text up to the first
/// call's `<|tool_call_argument_begin|>`, that marker without its closing `>`, and no more.
/// An answer without calls is left as it is.
pub(crate) fn broken(reply: Reply, ids: &[Option<String>]) -> Reply {
    const MARKER: &str = "<|tool_call_argument_begin|>";
    if reply.calls.is_empty() {
        return reply;
    }
    let full = raw_text(&reply, ids);
    let Some(at) = full.find(MARKER) else {
        return reply;
    };
    Reply::text(&full[..at + MARKER.len() - 1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_generation_prompt_with_thinking_off_is_no_prefix() {
        let off = "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>";
        assert_eq!(super::raw_prefix(off), None);
        assert_eq!(
            super::raw_prefix(&format!("{off}Chec")),
            Some("Chec"),
            "an answer's start after it"
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn the_prefix_is_what_follows_the_last_assistant_header() {
        let head = "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>";
        assert_eq!(raw_prefix(head), None);
        assert_eq!(raw_prefix(&format!("{head}Hel")), Some("Hel"));
        assert_eq!(raw_prefix(&format!("{head}<think>")), None);
        assert_eq!(raw_prefix(&format!("{head}<think>hm")), Some("hm"));
        let closed = format!("{head}Hello<|im_end|><|im_user|>user<|im_middle|>x<|im_end|>");
        assert_eq!(raw_prefix(&closed), None);
    }

    #[test]
    fn a_scripted_answer_goes_on_after_its_own_start_only() {
        let full = "Let me check.<|tool_calls_section_begin|>";
        assert_eq!(
            raw_rest(full, "Let me"),
            Reply::text(" check.<|tool_calls_section_begin|>")
        );
        assert_eq!(raw_rest(full, "Something else"), Reply::text(""));
        let r = chat_rest(Reply::text("Hello there."), "Hello");
        assert_eq!(r, Reply::text(" there."));
    }

    #[test]
    fn both_spellings_are_recognised_and_checked() {
        let moonshot =
            json!({"messages": [{"role": "assistant", "content": "x", "partial": true}]});
        assert_eq!(ChatPartial::of(&moonshot), Some(ChatPartial::Moonshot));
        assert_eq!(ChatPartial::Moonshot.problem(&moonshot), None);
        let vllm = json!({"messages": [{"role": "assistant", "content": "x"}], "continue_final_message": true});
        assert_eq!(ChatPartial::of(&vllm), Some(ChatPartial::Vllm));
        assert!(
            ChatPartial::Vllm.problem(&vllm).is_some(),
            "a generation prompt too"
        );
        let mut ok = vllm.clone();
        ok["add_generation_prompt"] = json!(false);
        assert_eq!(ChatPartial::Vllm.problem(&ok), None);
        assert_eq!(ChatPartial::of(&json!({"messages": []})), None);
    }
}
