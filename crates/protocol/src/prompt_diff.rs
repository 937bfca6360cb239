//! What changed in the prompt from one request to the next. A server's prefix cache reuses
//! the longest common prefix of the token sequences, so the normal case, the new prompt being
//! the old one plus the new messages, hits the cache; a changed byte anywhere inside the old
//! prompt (a template that re-renders reasoning, a tool list that moved) makes everything after
//! it a miss. Pure: compares two texts.
//!
//! Raw mode compares the rendered prompts; chat mode compares [`chat_prompt_text`], the
//! request's tools and messages one JSON line each, so that a new message is an append.

use std::borrow::Cow;

use serde_json::Value;

use crate::Mode;
use crate::trace::Trace;

/// Bytes of context shown before and after the first difference, on each side.
pub const CONTEXT_BEFORE: usize = 40;
pub const CONTEXT_AFTER: usize = 60;

/// How the new prompt relates to the old one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptDiff {
    /// Byte for byte the same.
    Same,
    /// The old prompt is a prefix of the new one: `added` bytes were appended.
    Append { added: usize },
    /// The prompts differ inside the old one: the cache can reuse at most `offset` bytes.
    Changed(Change),
}

/// Where two prompts first differ, with a short context of both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The first differing byte (at a character boundary of both texts).
    pub offset: usize,
    /// The line (from 0) of `offset` in the old text: in chat mode 0 is the tools, then one
    /// line per message.
    pub line: usize,
    pub old_len: usize,
    pub new_len: usize,
    /// Up to [`CONTEXT_BEFORE`] bytes before `offset` (the same in both).
    pub before: String,
    /// Up to [`CONTEXT_AFTER`] bytes of each side from `offset`.
    pub old: String,
    pub new: String,
    /// Bytes both end with after the difference (a change in the middle leaves the rest).
    pub common_suffix: usize,
}

/// Compare `old` with `new` in one pass over their common prefix.
pub fn diff(old: &str, new: &str) -> PromptDiff {
    let offset = common_prefix(old, new);
    if offset == old.len() {
        return if offset == new.len() {
            PromptDiff::Same
        } else {
            PromptDiff::Append {
                added: new.len() - offset,
            }
        };
    }
    // The suffix may not reach back past the prefix on either side.
    let room = old.len().min(new.len()) - offset;
    let mut suffix = old
        .as_bytes()
        .iter()
        .rev()
        .zip(new.as_bytes().iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while suffix > 0
        && !(old.is_char_boundary(old.len() - suffix) && new.is_char_boundary(new.len() - suffix))
    {
        suffix -= 1;
    }
    let start = floor_boundary(old, offset.saturating_sub(CONTEXT_BEFORE));
    PromptDiff::Changed(Change {
        offset,
        line: old.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        old_len: old.len(),
        new_len: new.len(),
        before: old[start..offset].to_owned(),
        old: old[offset..floor_boundary(old, offset + CONTEXT_AFTER)].to_owned(),
        new: new[offset..floor_boundary(new, offset + CONTEXT_AFTER)].to_owned(),
        common_suffix: suffix,
    })
}

/// Length of the common prefix, backed off to a character boundary of both.
pub fn common_prefix(a: &str, b: &str) -> usize {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    // Compared in blocks first: a 4 MB prompt is compared at memcmp speed.
    const BLOCK: usize = 4096;
    let mut n = 0;
    while n + BLOCK <= x.len().min(y.len()) && x[n..n + BLOCK] == y[n..n + BLOCK] {
        n += BLOCK;
    }
    n += x[n..]
        .iter()
        .zip(&y[n..])
        .take_while(|(p, q)| p == q)
        .count();
    // Equal bytes up to `n`: a boundary of one is a boundary of the other.
    while !a.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// The largest character boundary of `s` at or before `at` (clamped to its length).
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// What a chat-mode server renders its prompt from, as text that grows by appending: the
/// tools on the first line, then each message on a line of its own (compact JSON, keys in the
/// order sent). Other keys (model, temperature) are not part of the prompt.
pub fn chat_prompt_text(body: &Value) -> String {
    let compact = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    let mut out = String::from("tools: ");
    out.push_str(&body.get("tools").map_or_else(|| "none".to_owned(), compact));
    out.push('\n');
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&compact(m));
        out.push('\n');
    }
    out
}

/// The text of `trace`'s prompt that [`diff`] compares: the rendered prompt (raw mode) or
/// [`chat_prompt_text`] of its body (chat mode).
pub fn prompt_text(trace: &Trace) -> Cow<'_, str> {
    match (trace.mode, &trace.prompt) {
        (Mode::Raw, Some(p)) => Cow::Borrowed(p.as_str()),
        _ => Cow::Owned(chat_prompt_text(&trace.request)),
    }
}

/// The diff of `new` against `old`, when both are the same mode (a mode switch renders
/// nothing alike: `None`).
pub fn between(old: &Trace, new: &Trace) -> Option<PromptDiff> {
    (old.mode == new.mode).then(|| diff(&prompt_text(old), &prompt_text(new)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_turn_is_an_append() {
        let old = "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>";
        let new = format!("{old}Hello<|im_end|><|im_user|>user<|im_middle|>more<|im_end|>");
        assert_eq!(
            diff(old, &new),
            PromptDiff::Append {
                added: new.len() - old.len()
            }
        );
        assert_eq!(diff(old, old), PromptDiff::Same);
        assert_eq!(diff("", "x"), PromptDiff::Append { added: 1 });
    }

    #[test]
    fn a_re_rendered_reasoning_is_a_change_with_context_of_both_sides() {
        // A thinking template that drops the old turn's reasoning when a new one starts.
        let old = "sys<|im_end|>user: hi<|im_end|>assistant<think>hm, 北京</think>Hi<|im_end|>";
        let new = "sys<|im_end|>user: hi<|im_end|>assistant<think></think>Hi<|im_end|>user: x";
        let PromptDiff::Changed(c) = diff(old, new) else {
            panic!("not an append: {:?}", diff(old, new));
        };
        assert_eq!(c.offset, old.find("<think>").expect("think") + 7);
        assert_eq!(&old[..c.offset], &new[..c.offset]);
        assert!(c.before.ends_with("assistant<think>"), "{c:?}");
        assert!(c.old.starts_with("hm, 北京</think>"), "{c:?}");
        assert!(c.new.starts_with("</think>Hi"), "{c:?}");
        assert_eq!((c.old_len, c.new_len, c.line), (old.len(), new.len(), 0));
        assert_eq!(c.common_suffix, 0);
    }

    #[test]
    fn a_difference_inside_a_character_backs_off_to_its_start() {
        // 'é' (c3 a9) and 'è' (c3 a8) share their first byte.
        let PromptDiff::Changed(c) = diff("café au lait", "cafè au lait") else {
            panic!("a change");
        };
        assert_eq!(c.offset, 3);
        assert_eq!((c.old.as_str(), c.new.as_str()), ("é au lait", "è au lait"));
        assert_eq!(c.common_suffix, " au lait".len());
    }

    #[test]
    fn chat_bodies_diff_by_message_and_a_moved_tool_list_is_a_change() {
        let tools = json!([{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]);
        let first =
            json!({"model": "m", "tools": tools, "messages": [{"role": "user", "content": "hi"}]});
        let second = json!({"model": "m", "temperature": 1, "tools": tools, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "more"}]});
        let (a, b) = (chat_prompt_text(&first), chat_prompt_text(&second));
        assert!(
            matches!(diff(&a, &b), PromptDiff::Append { added } if added > 0),
            "{a}\n{b}"
        );
        let moved = json!({"tools": [tools[1], tools[0]], "messages": second["messages"]});
        let PromptDiff::Changed(c) = diff(&b, &chat_prompt_text(&moved)) else {
            panic!("the tools moved");
        };
        assert_eq!(c.line, 0, "the tools line");
        // An edited earlier message: the line says which.
        let mut edited = second.clone();
        edited["messages"][1]["content"] = json!("Hullo");
        let PromptDiff::Changed(c) = diff(&b, &chat_prompt_text(&edited)) else {
            panic!("edited");
        };
        assert_eq!(c.line, 2, "tools, message 0, then message 1");
        assert!(c.old.starts_with("ello"), "{c:?}");
    }

    #[test]
    fn traces_of_two_modes_are_not_compared() {
        let raw = Trace {
            mode: Mode::Raw,
            prompt: Some("a".into()),
            ..Trace::default()
        };
        let chat = Trace {
            mode: Mode::Chat,
            ..Trace::default()
        };
        assert_eq!(between(&raw, &chat), None);
        let longer = Trace {
            prompt: Some("ab".into()),
            ..raw.clone()
        };
        assert_eq!(
            between(&raw, &longer),
            Some(PromptDiff::Append { added: 1 })
        );
    }
}
