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
    /// A recovery the K3 parser made; each kind is reported once per completion.
    K3(K3Note),
}

/// An irregularity in a K3 (XTML) completion that the parser recovered from. The parser
/// reports each kind once per completion (the first occurrence), so the inspector can show that
/// the model's output was irregular without flooding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum K3Note {
    /// `<|close|>NAME` without its `<|sep|>`, read as the close marker of NAME.
    ElidedSeparator { name: &'static str },
    /// A channel ended by another marker instead of its own close: `by` is `"response opened"`,
    /// `"tools opened"` or `"message closed"`. One kind per channel and cause.
    ChannelNotClosed {
        channel: &'static str,
        by: &'static str,
    },
    /// The answer was written in the think channel: the reasoning became content.
    ThinkSkipped,
    /// Thinking was off, yet the completion closed a think channel first: the content became
    /// reasoning.
    ThoughtWithThinkingOff,
    /// A marker (or a lone structural token) where the current state has no use for it; it is
    /// dropped, the text around it kept. The first one is named.
    StrayMarker { text: String, offset: u64 },
    /// Text between channels (after the response or the tools channel closed); kept as content.
    TextOutsideChannel,
    /// Output between the message close and `<|end_of_msg|>`; ignored.
    AfterMessageClose,
    /// A typed argument value that is not JSON; kept as a string. The first key is named.
    ValueNotJson { key: String, kind: String },
    /// A `json` element whose text is not a JSON object: the call's arguments are that text.
    JsonNotObject,
    /// A call without a `tool` name; it is dropped.
    NamelessCall,
    /// A call cut off before `<|close|>call<|sep|>`; it is counted, never run.
    IncompleteCall { cut_by: CutBy },
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
            Warning::K3(note) => note.fmt(f),
        }
    }
}

impl fmt::Display for K3Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            K3Note::ElidedSeparator { name } => {
                write!(
                    f,
                    "close marker without <|sep|>: <|close|>{name} read as closing {name}"
                )
            }
            K3Note::ChannelNotClosed { channel, by } => {
                write!(f, "{channel} channel not closed: {by}")
            }
            K3Note::ThinkSkipped => f.write_str("think channel skipped: its text was the answer"),
            K3Note::ThoughtWithThinkingOff => {
                f.write_str("thinking off, yet the model thought: its text was reasoning")
            }
            K3Note::StrayMarker { text, offset } => write!(
                f,
                "stray marker dropped: {} at byte {offset}",
                preview(text)
            ),
            K3Note::TextOutsideChannel => f.write_str("text outside a channel kept as content"),
            K3Note::AfterMessageClose => f.write_str("output after the message close ignored"),
            K3Note::ValueNotJson { key, kind } => write!(
                f,
                "argument {:?} of type {:?} is not JSON: kept as a string",
                preview(key),
                preview(kind)
            ),
            K3Note::JsonNotObject => {
                f.write_str("json arguments are not a JSON object: kept as raw text")
            }
            K3Note::NamelessCall => f.write_str("tool call without a name dropped"),
            K3Note::IncompleteCall { cut_by } => write!(
                f,
                "tool call incomplete: no <|close|>call<|sep|> ({cut_by}); it will not run"
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
