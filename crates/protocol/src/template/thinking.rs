//! The thinking members' templates: K2-Thinking and K2.5 as their Jinja texts render, and K2.6
//! as K2.5 plus `preserve_thinking` (secondhand: K2.6's template text was not available).

use std::ops::Range;

use super::RenderOptions;
use super::parts;
use crate::family::Template;
use crate::message::Message;
use crate::tokens::*;

/// Everything after the tool declaration (which the caller writes).
pub(super) fn render(
    out: &mut String,
    messages: &[Message],
    opts: RenderOptions,
    mut found: Option<&mut Vec<Range<usize>>>,
) {
    // K2-Thinking's default system prompt, without a newline, also for no messages.
    if opts.template == Template::K2Thinking && messages.first().is_none_or(|m| m.role != "system")
    {
        out.push_str(IM_SYSTEM);
        out.push_str("system");
        out.push_str(IM_MIDDLE);
        out.push_str(DEFAULT_SYSTEM_PROMPT);
        out.push_str(IM_END);
    }
    let split = split_point(messages, opts);
    for (i, m) in messages.iter().enumerate() {
        let in_history = split.is_some_and(|l| i <= l);
        render_message(out, m, in_history, opts, found.as_deref_mut());
    }
    // The generation prompt; K2.5/K2.6 open the reasoning after it (closed at once when
    // thinking is off).
    if opts.add_generation_prompt {
        out.push_str(IM_ASSISTANT);
        out.push_str("assistant");
        out.push_str(IM_MIDDLE);
        if matches!(opts.template, Template::K25 | Template::K26) {
            out.push_str(THINK_BEGIN);
            if opts.thinking_off() {
                out.push_str(THINK_END);
            }
        }
    }
}

/// The index of the last assistant message without tool calls; messages up to it are
/// history (reasoning blanked), later ones keep their reasoning. K2.6's `preserve_thinking`
/// makes everything suffix.
fn split_point(messages: &[Message], opts: RenderOptions) -> Option<usize> {
    if opts.template == Template::K26 && opts.preserve_thinking {
        return None;
    }
    messages
        .iter()
        .rposition(|m| m.role == "assistant" && m.tool_calls.is_empty())
}

fn render_message(
    out: &mut String,
    m: &Message,
    in_history: bool,
    opts: RenderOptions,
    found: Option<&mut Vec<Range<usize>>>,
) {
    parts::header(out, m);
    match m.role.as_str() {
        // The reasoning between `<think>` and `</think>`, empty in the history and with
        // thinking off; then the content and the calls.
        "assistant" => {
            out.push_str(THINK_BEGIN);
            if !in_history && !opts.thinking_off() {
                out.push_str(m.reasoning_content.as_deref().unwrap_or(""));
            }
            out.push_str(THINK_END);
            parts::content(out, m.content.as_ref(), opts.template);
            if !m.tool_calls.is_empty() {
                parts::tool_section(out, m);
            }
        }
        "tool" => parts::tool_result(out, m, opts.template, opts.neutralize_tool_markers, found),
        // Any other role: its content.
        role => {
            let start = out.len();
            parts::content(out, m.content.as_ref(), opts.template);
            if role == "user" {
                parts::record(out, start, found);
            }
        }
    }
    out.push_str(IM_END);
}

#[cfg(test)]
mod tests;
