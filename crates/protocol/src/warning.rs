//! What the parser noticed about a completion that a user should see: malformed markers,
//! incomplete calls, arguments that cannot be run.

use std::fmt;

use serde::{Serialize, Serializer};

use super::tokens::Marker;

/// Why a begun tool call never got its `<|tool_call_end|>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutBy {
    /// The stream stopped (max_tokens, a dropped connection).
    StreamEnd,
    /// Another marker arrived first; the call's argument text may be complete, but it was not
    /// closed, so it is not run (vLLM drops such calls).
    Marker(Marker),
}

/// A problem found in a completion. `Display` gives the one-line message users see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A marker where it makes no sense (e.g. `<|tool_call_end|>` in plain text); it is dropped.
    StrayMarker { marker: Marker, offset: u64 },
    /// Non-whitespace text between calls inside a section; it is not content and is dropped.
    TextInSection { text: String },
    /// `<|tool_call_begin|>` without `<|tool_calls_section_begin|>`; the call is parsed anyway.
    CallOutsideSection { index: usize },
    /// `<|tool_call_end|>` came before `<|tool_call_argument_begin|>`: the call is incomplete
    /// (its header may hold the arguments too) and is not made.
    CallWithoutArguments { index: usize, header: String },
    /// The call's header (its id) never finished; no call was started.
    IncompleteHeader { index: usize, cut_by: CutBy },
    /// The call began but never ended; it is incomplete and must not run.
    IncompleteCall {
        index: usize,
        id: String,
        cut_by: CutBy,
    },
    /// The section was still open when the turn or stream ended.
    UnclosedSection,
    /// `<|im_user|>`, `<|im_assistant|>` or `<|im_system|>` inside the completion: the model started
    /// another turn, which ends this one.
    TurnMarker { marker: Marker },
    /// Bytes after `<|im_end|>`, ignored.
    TextAfterEnd { bytes: u64 },
    /// A complete call whose arguments are not valid JSON.
    InvalidArguments {
        index: usize,
        id: String,
        error: String,
    },
    /// A complete call whose arguments are a JSON string that itself holds JSON.
    DoubleEncodedArguments { index: usize, id: String },
    /// A complete call whose arguments are valid JSON but not an object.
    ArgumentsNotObject { index: usize, id: String },
}

impl fmt::Display for CutBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CutBy::StreamEnd => f.write_str("the stream ended"),
            CutBy::Marker(m) => write!(f, "{} arrived first", m.text()),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::StrayMarker { marker, offset } => {
                write!(f, "unexpected {} at byte {offset}, ignored", marker.text())
            }
            Warning::TextInSection { text } => write!(
                f,
                "text between tool calls inside the tool-calls section ignored: {:?}",
                preview(text)
            ),
            Warning::CallOutsideSection { index } => write!(
                f,
                "tool call {index} is outside a <|tool_calls_section_begin|> section"
            ),
            Warning::CallWithoutArguments { index, header } => write!(
                f,
                "tool call {index} is incomplete: no <|tool_call_argument_begin|> after {:?}; it will not run",
                preview(header)
            ),
            Warning::IncompleteHeader { index, cut_by } => write!(
                f,
                "tool call {index} is incomplete: its header was cut off ({cut_by})"
            ),
            Warning::IncompleteCall { index, id, cut_by } => write!(
                f,
                "tool call {index} ({id}) is incomplete: no <|tool_call_end|> ({cut_by}); it will not run"
            ),
            Warning::UnclosedSection => {
                f.write_str("the tool-calls section was never closed by <|tool_calls_section_end|>")
            }
            Warning::TurnMarker { marker } => write!(
                f,
                "the model started a new turn with {}; the rest is ignored",
                marker.text()
            ),
            Warning::TextAfterEnd { bytes } => {
                write!(f, "{bytes} bytes after <|im_end|> ignored")
            }
            Warning::InvalidArguments { index, id, error } => write!(
                f,
                "tool call {index} ({id}): arguments are not valid JSON: {error}"
            ),
            Warning::DoubleEncodedArguments { index, id } => write!(
                f,
                "tool call {index} ({id}): arguments are a JSON string holding JSON (double-encoded); fix them before running"
            ),
            Warning::ArgumentsNotObject { index, id } => write!(
                f,
                "tool call {index} ({id}): arguments are valid JSON but not an object"
            ),
        }
    }
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The first 80 characters, so one warning stays one line.
fn preview(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}
