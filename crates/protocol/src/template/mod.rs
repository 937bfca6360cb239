//! Messages + tools -> the prompt text a Kimi K2 family chat template renders, byte for byte.
//! K2-Instruct, K2-Thinking and K2.5 follow their published Jinja templates; K2.6 is
//! secondhand (K2.5's rules plus `preserve_thinking`: its template text was not available).
//!
//! One module per job: [`instruct`] and [`thinking`] walk the messages, [`parts`] holds the
//! pieces they share (headers, content, tool sections), [`declaration`] the tool declaration
//! with the tokenizer-side preprocessing.

mod declaration;
mod instruct;
mod parts;
mod thinking;

use std::ops::Range;

use serde_json::Value;

use super::family::Template;
use super::message::{Content, Message};

/// Options of one rendering.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// End with `<|im_assistant|>assistant<|im_middle|>` so the model answers next (K2.5/K2.6
    /// add `<think>`, or `<think></think>` with thinking off).
    pub add_generation_prompt: bool,
    /// Sort the keys of the tool schemas recursively, as some Moonshot tokenizer versions do
    /// (K2-Instruct; the thinking templates sort whenever `preprocess_tools` is on).
    pub sort_tool_keys: bool,
    /// Break special-token strings inside tool results (`<|im_end|>` -> `< |im_end|>`, see
    /// [`crate::special::neutralize`]) so a tool's output cannot forge a turn. Off by default:
    /// the prompt is then byte for byte what the official template renders.
    pub neutralize_tool_markers: bool,
    /// Which family member's template to render.
    pub template: Template,
    /// The `thinking` template keyword argument (K2.5/K2.6; K2-Thinking ignores it). Only
    /// `Some(false)` turns thinking off; `None` leaves it undefined, which means on.
    pub thinking: Option<bool>,
    /// K2.6's `preserve_thinking` keyword argument (secondhand): every
    /// assistant message keeps its reasoning. The tokenizer passes `false`.
    pub preserve_thinking: bool,
    /// The tokenizer-side preprocessing, what a server running Moonshot's
    /// tokenizer applies before the template and what the models were trained on: for
    /// K2-Thinking/K2.5/K2.6 the tools are deep key-sorted, and K2.5/K2.6 declare them in the
    /// TypeScript form (`tools_ts_str`; JSON when the encoder gives up). On by
    /// default (raw mode); off renders the template alone, as the template golden vectors
    /// hold it. No effect on K2-Instruct (see `sort_tool_keys`).
    pub preprocess_tools: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            add_generation_prompt: false,
            sort_tool_keys: false,
            neutralize_tool_markers: false,
            template: Template::K2Instruct,
            thinking: None,
            preserve_thinking: false,
            preprocess_tools: true,
        }
    }
}

impl RenderOptions {
    /// Thinking is on for the templates that honour the keyword (K2.5/K2.6): anything but
    /// an explicit `false` (a missing, `null` or `0` value leaves it on).
    pub(crate) fn thinking_off(&self) -> bool {
        matches!(self.template, Template::K25 | Template::K26) && self.thinking == Some(false)
    }

    /// The prompt ends inside an open `<think>` (K2.5/K2.6, thinking on, with a generation
    /// prompt), so the completion starts in the reasoning: start the parser with
    /// [`crate::Parser::starting_in_reasoning`].
    pub fn ends_in_reasoning(&self) -> bool {
        self.add_generation_prompt
            && matches!(self.template, Template::K25 | Template::K26)
            && !self.thinking_off()
    }
}

/// Render a conversation. `tools` are OpenAI-style tool objects.
pub fn render(messages: &[Message], tools: &[Value], opts: RenderOptions) -> String {
    let mut out = String::with_capacity(estimate_len(messages) + 256 * tools.len());
    render_with(&mut out, messages, tools, opts, None, None);
    out
}

/// [`render`] with the template keyword argument `tools_ts_str` given (K2.5/K2.6): a
/// non-empty string replaces the tool declaration's text, as when a caller passes it to the
/// template itself. The other templates ignore it.
pub fn render_with_tools_ts(
    messages: &[Message],
    tools: &[Value],
    opts: RenderOptions,
    tools_ts_str: Option<&str>,
) -> String {
    let mut out = String::with_capacity(estimate_len(messages) + 256 * tools.len());
    render_with(&mut out, messages, tools, opts, tools_ts_str, None);
    out
}

/// [`render`], and the byte ranges in the prompt of the special-token strings that came from
/// the text of user messages and tool results rather than from the template (after any
/// neutralizing, so a neutralized result contributes none).
pub fn render_traced(
    messages: &[Message],
    tools: &[Value],
    opts: RenderOptions,
) -> (String, Vec<Range<usize>>) {
    let mut out = String::with_capacity(estimate_len(messages) + 256 * tools.len());
    let mut found = Vec::new();
    render_with(&mut out, messages, tools, opts, None, Some(&mut found));
    (out, found)
}

fn render_with(
    out: &mut String,
    messages: &[Message],
    tools: &[Value],
    opts: RenderOptions,
    tools_ts_str: Option<&str>,
    found: Option<&mut Vec<Range<usize>>>,
) {
    // K3 prompts come from the K3 renderer, which can refuse a request: this infallible K2
    // path writes nothing for them.
    if !opts.template.is_k2() {
        return;
    }
    declaration::write(out, tools, opts, tools_ts_str);
    match opts.template {
        Template::K2Instruct => instruct::render(out, messages, opts, found),
        Template::K2Thinking | Template::K25 | Template::K26 => {
            thinking::render(out, messages, opts, found)
        }
        Template::K3 => {}
    }
}

fn estimate_len(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            let content = match &m.content {
                Some(Content::Text(s)) => s.len(),
                _ => 64,
            };
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.id.len() + c.function.arguments.len() + 64)
                .sum();
            content + calls + m.reasoning_content.as_ref().map_or(0, String::len) + 48
        })
        .sum()
}
