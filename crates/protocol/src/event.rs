//! The events the stream parser emits.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::family::Template;
use super::tokens::Marker;
use super::warning::Warning;

/// One thing the parser learned from the stream. Text borrows from the chunk fed in when it can;
/// [`Event::into_owned`] detaches it.
///
/// For any split of the same completion into chunks, the sequence of events is the same once
/// adjacent `Text` and adjacent `ToolCallArgs` deltas are concatenated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// Assistant content (text outside tool-call sections), released as soon as it is certain.
    Text {
        text: Cow<'a, str>,
    },
    /// Reasoning (thinking models: between `<think>` and `</think>`), released as soon as it is
    /// certain, like `Text`.
    Reasoning {
        text: Cow<'a, str>,
    },
    /// A special marker, at its byte offset in the whole completion. Emitted for every marker,
    /// before the event it causes, so an inspector can show them all.
    Marker {
        marker: Marker,
        offset: u64,
    },
    SectionBegin,
    SectionEnd,
    /// A call's header is complete. `index` counts calls in this turn from 0.
    ToolCallBegin {
        index: usize,
        id: Cow<'a, str>,
        name: Cow<'a, str>,
    },
    /// A piece of the call's arguments. Leading and trailing whitespace of the whole argument
    /// text is never emitted.
    ToolCallArgs {
        index: usize,
        delta: Cow<'a, str>,
    },
    /// `<|tool_call_end|>`: the call is complete.
    ToolCallEnd {
        index: usize,
    },
    /// The call began but was cut off; it must not run. A `Warning` with the reason precedes it
    /// (K3: only the first of a completion; a K3 call has no number yet, so `index` is the one
    /// the next complete call takes).
    ToolCallIncomplete {
        index: usize,
    },
    /// All `Reasoning` emitted so far in this completion was the answer (K3: the model wrote
    /// it in the think channel and closed the response or the message). A consumer moves that
    /// text, once, from the reasoning to the front of the content; a UI that showed it as
    /// reasoning moves it to the answer pane.
    ReasoningWasText,
    /// All `Text` emitted so far in this completion was reasoning (K3 with thinking off: the
    /// model closed a think channel first). A consumer moves that text, once, from the content
    /// to the front of the reasoning.
    TextWasReasoning,
    /// `<|im_end|>` (or another turn marker; K3: `<|end_of_msg|>`): nothing after it is content.
    TurnEnd,
    Warning {
        warning: Warning,
    },
}

impl Event<'_> {
    pub fn into_owned(self) -> Event<'static> {
        match self {
            Event::Text { text } => Event::Text {
                text: Cow::Owned(text.into_owned()),
            },
            Event::Reasoning { text } => Event::Reasoning {
                text: Cow::Owned(text.into_owned()),
            },
            Event::Marker { marker, offset } => Event::Marker { marker, offset },
            Event::SectionBegin => Event::SectionBegin,
            Event::SectionEnd => Event::SectionEnd,
            Event::ToolCallBegin { index, id, name } => Event::ToolCallBegin {
                index,
                id: Cow::Owned(id.into_owned()),
                name: Cow::Owned(name.into_owned()),
            },
            Event::ToolCallArgs { index, delta } => Event::ToolCallArgs {
                index,
                delta: Cow::Owned(delta.into_owned()),
            },
            Event::ToolCallEnd { index } => Event::ToolCallEnd { index },
            Event::ToolCallIncomplete { index } => Event::ToolCallIncomplete { index },
            Event::ReasoningWasText => Event::ReasoningWasText,
            Event::TextWasReasoning => Event::TextWasReasoning,
            Event::TurnEnd => Event::TurnEnd,
            Event::Warning { warning } => Event::Warning { warning },
        }
    }

    /// The JSON form printed by `kimi-tui parse --events`: an object with a `"type"` field.
    pub fn to_json(&self) -> Value {
        self.to_json_in(Template::K25)
    }

    /// [`Event::to_json`] for a completion of `template`: a marker's `token_id` is the one
    /// [`Marker::token_id_in`] gives (null for K2-Thinking's `<think>`/`</think>`).
    pub fn to_json_in(&self, template: Template) -> Value {
        match self {
            Event::Text { text } => json!({"type": "text", "text": text}),
            Event::Marker { marker, offset } => json!({
                "type": "marker",
                "marker": marker,
                "token": marker.text(),
                "token_id": marker.token_id_in(template),
                "offset": offset,
            }),
            Event::SectionBegin => json!({"type": "section_begin"}),
            Event::SectionEnd => json!({"type": "section_end"}),
            Event::ToolCallBegin { index, id, name } => {
                json!({"type": "tool_call_begin", "index": index, "id": id, "name": name})
            }
            Event::ToolCallArgs { index, delta } => {
                json!({"type": "tool_call_args", "index": index, "delta": delta})
            }
            Event::ToolCallEnd { index } => json!({"type": "tool_call_end", "index": index}),
            Event::ToolCallIncomplete { index } => {
                json!({"type": "tool_call_incomplete", "index": index})
            }
            Event::TurnEnd => json!({"type": "turn_end"}),
            Event::ReasoningWasText => json!({"type": "reasoning_was_text"}),
            Event::TextWasReasoning => json!({"type": "text_was_reasoning"}),
            Event::Reasoning { text } => json!({"type": "reasoning", "text": text}),
            Event::Warning { warning } => {
                json!({"type": "warning", "message": warning.to_string()})
            }
        }
    }
}

/// Concatenates adjacent text and adjacent argument deltas of the same call, which makes an event
/// sequence independent of how the stream was chunked.
#[derive(Debug, Default)]
pub struct Coalescer {
    events: Vec<Event<'static>>,
}

impl Coalescer {
    pub fn push(&mut self, ev: Event<'_>) {
        match (self.events.last_mut(), ev) {
            (Some(Event::Text { text }), Event::Text { text: more })
            | (Some(Event::Reasoning { text }), Event::Reasoning { text: more }) => {
                text.to_mut().push_str(&more)
            }
            (
                Some(Event::ToolCallArgs { index, delta }),
                Event::ToolCallArgs {
                    index: i,
                    delta: more,
                },
            ) if *index == i => delta.to_mut().push_str(&more),
            (_, ev) => self.events.push(ev.into_owned()),
        }
    }

    pub fn into_events(self) -> Vec<Event<'static>> {
        self.events
    }
}
