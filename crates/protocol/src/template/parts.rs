//! Pieces every template shares: turn headers, message content, tool-call sections, and the
//! record of special-token strings that came from message text.

use std::ops::Range;

use serde_json::Value;

use crate::family::Template;
use crate::message::{Content, Message};
use crate::python;
use crate::special;
use crate::tokens::*;

/// `<|im_user|>` / `<|im_assistant|>` / `<|im_system|>`, then the name if non-empty, else the
/// role, then `<|im_middle|>`.
pub(super) fn header(out: &mut String, m: &Message) {
    out.push_str(match m.role.as_str() {
        "user" => IM_USER,
        "assistant" => IM_ASSISTANT,
        _ => IM_SYSTEM,
    });
    match m.name.as_deref() {
        Some(name) if !name.is_empty() => out.push_str(name),
        _ => out.push_str(&m.role),
    }
    out.push_str(IM_MIDDLE);
}

/// The tool-call section: ids and argument text verbatim.
pub(super) fn tool_section(out: &mut String, m: &Message) {
    out.push_str(TOOL_CALLS_SECTION_BEGIN);
    for call in &m.tool_calls {
        out.push_str(TOOL_CALL_BEGIN);
        out.push_str(&call.id);
        out.push_str(TOOL_CALL_ARGUMENT_BEGIN);
        out.push_str(&call.function.arguments);
        out.push_str(TOOL_CALL_END);
    }
    out.push_str(TOOL_CALLS_SECTION_END);
}

/// A tool result's body: `## Return of ID\n` + content, neutralized if asked, recorded.
pub(super) fn tool_result(
    out: &mut String,
    m: &Message,
    template: Template,
    neutralize: bool,
    found: Option<&mut Vec<Range<usize>>>,
) {
    out.push_str("## Return of ");
    out.push_str(m.tool_call_id.as_deref().unwrap_or(""));
    out.push('\n');
    let start = out.len();
    if neutralize {
        let mut text = String::new();
        content(&mut text, m.content.as_ref(), template);
        out.push_str(&special::neutralize(&text));
    } else {
        content(out, m.content.as_ref(), template);
    }
    record(out, start, found);
}

/// Note the special-token strings in `out[start..]`, text that came from a message.
pub(super) fn record(out: &str, start: usize, found: Option<&mut Vec<Range<usize>>>) {
    if let Some(found) = found {
        found.extend(
            special::find(&out[start..])
                .into_iter()
                .map(|r| r.start + start..r.end + start),
        );
    }
}

/// Message content: a string as is; parts concatenated, each image (and K2.5's video) as the
/// template's placeholder and a newline.
pub(super) fn content(out: &mut String, content: Option<&Content>, template: Template) {
    match content {
        None => {}
        Some(Content::Text(s)) => out.push_str(s),
        Some(Content::Parts(parts)) => {
            for part in parts {
                match (template, media(part, template)) {
                    (_, Some(placeholder)) => {
                        out.push_str(placeholder);
                        out.push('\n');
                    }
                    // K2-Instruct keeps its own golden behaviour: only string text prints.
                    (Template::K2Instruct, None) => {
                        if let Some(text) = part.get("text").and_then(Value::as_str) {
                            out.push_str(text);
                        }
                    }
                    // `{{ content['text'] }}`: missing prints nothing, anything else as `str()`.
                    (_, None) => {
                        if let Some(text) = part.get("text") {
                            out.push_str(&python::str_of(text));
                        }
                    }
                }
            }
        }
    }
}

/// The placeholder a part prints instead of text, if it is media.
fn media(part: &Value, template: Template) -> Option<&'static str> {
    let kind = part.get("type").and_then(Value::as_str);
    let has_key = |k| part.get(k).is_some();
    match template {
        Template::K2Instruct => (matches!(kind, Some("image" | "image_url"))
            || has_key("image")
            || has_key("image_url"))
        .then_some(MEDIA_IMAGE),
        Template::K2Thinking => (kind == Some("image") || has_key("image") || has_key("image_url"))
            .then_some(MEDIA_IMAGE),
        // Only `type` decides here: an `image_url` key on another type prints nothing.
        Template::K25 | Template::K26 => match kind {
            Some("image" | "image_url") => Some(MEDIA_IMAGE_K25),
            Some("video" | "video_url") => Some(VIDEO_PLACEHOLDER_K25),
            _ => None,
        },
        // K3 prompts are XTML, written by their own renderer.
        Template::K3 => None,
    }
}
