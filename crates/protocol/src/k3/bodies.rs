//! The fixed texts of the internal system messages the encoder writes for request options
//! (tool declarations, thinking effort, tool choice, response format), byte for byte.

use super::attrs::{self, Attr};
use super::content::py_strip;

const TOOLS_STATIC: &str =
    "# Tools\nHere are the available tools, described in JSONSchema.\n\n```json\n";
const TOOLS_DYNAMIC: &str = "## New Tools Available\nThe system dynamically extends the toolset via lazy-loading.\nYou have access to all existing and extended tools.\nHere are the specs for the extended tools.\n\n```json\n";
const FENCE_END: &str = "\n```";
const EFFORT_HEAD: &str = "`thinking_effort` guides on how much to think in your thinking channel (not including the response channel), supported values include `low`, `medium`, `high`, and `max`.\nNow the system is invoked with `thinking_effort=";
const CHOICE_REQUIRED: &str =
    "The system is invoked with `tool_choice=required`.\nYou MUST call tools in the next message.";
const CHOICE_NONE: &str = "The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.";
const FORMAT_JSON_OBJECT: &str = "The system is invoked with `response_format=json_object`.\nYour response must be raw JSON data without markdown code blocks (```json) or any additional formatting.";
const FORMAT_JSON_SCHEMA_HEAD: &str = "The system is invoked with `response_format=json_schema`.\nYour response must be raw JSON data without markdown code blocks (```json) or any additional formatting.\nThe JSON data must match the following schema:\n```json\n";

/// An internal system message of kind `kind`: its body with surrounding whitespace removed.
pub(crate) fn internal_message(out: &mut String, kind: &str, body: &str) {
    attrs::open(
        out,
        "message",
        &[("role", Attr::Text("system")), ("type", Attr::Text(kind))],
    );
    out.push_str(py_strip(body));
    attrs::close_message(out);
}

/// The tool declaration around `json` (already written compact and sorted): the request's
/// own tools, or (`dynamic`) the tools a system message adds mid-conversation.
pub(crate) fn tool_declare(out: &mut String, dynamic: bool, json: &str) {
    let head = if dynamic { TOOLS_DYNAMIC } else { TOOLS_STATIC };
    internal_message(out, "tool-declare", &[head, json, FENCE_END].concat());
}

/// The thinking-effort message for `effort` (already checked).
pub(crate) fn thinking_effort(out: &mut String, effort: &str) {
    internal_message(
        out,
        "thinking-effort",
        &[EFFORT_HEAD, effort, "`."].concat(),
    );
}

/// The tool-choice message: `required` or `none`.
pub(crate) fn tool_choice(out: &mut String, required: bool) {
    let body = if required {
        CHOICE_REQUIRED
    } else {
        CHOICE_NONE
    };
    internal_message(out, "tool-choice", body);
}

/// The response-format message for `json_object`.
pub(crate) fn json_object(out: &mut String) {
    internal_message(out, "response-format", FORMAT_JSON_OBJECT);
}

/// The response-format message for `json_schema`, `schema` already written compact and sorted.
pub(crate) fn json_schema(out: &mut String, schema: &str) {
    let body = [FORMAT_JSON_SCHEMA_HEAD, schema, FENCE_END].concat();
    internal_message(out, "response-format", &body);
}
