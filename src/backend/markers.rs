//! Completion text parsed on the client: the raw mode's whole answer, and chat `content` that
//! carries Kimi markers because the server's tool parser is off. Wraps `protocol::Parser`,
//! turning its events into [`StreamEvent`]s and recording markers for the inspector.

use crate::protocol::{Collector, Event, ParsedCompletion, Parser, Warning};

use super::{MarkerHit, StreamEvent};

#[derive(Debug, Default)]
pub(super) struct LocalParse {
    parser: Parser,
    collector: Collector,
    /// Index of the call the next `<|tool_call_begin|>` opens, and of the open call.
    next_call: usize,
    open_call: Option<usize>,
    pub incomplete: usize,
    pub markers: Vec<MarkerHit>,
}

impl LocalParse {
    pub fn feed(&mut self, text: &str, on_event: &mut dyn FnMut(StreamEvent)) {
        let LocalParse {
            parser,
            collector,
            next_call,
            open_call,
            incomplete,
            markers,
        } = self;
        parser.feed(text, &mut |ev: Event<'_>| {
            forward(
                ev, collector, next_call, open_call, incomplete, markers, on_event,
            )
        });
    }

    /// The stream is over (for any reason): flush and report what is open.
    pub fn finish(&mut self, on_event: &mut dyn FnMut(StreamEvent)) {
        let LocalParse {
            parser,
            collector,
            next_call,
            open_call,
            incomplete,
            markers,
        } = self;
        parser.finish(&mut |ev: Event<'_>| {
            forward(
                ev, collector, next_call, open_call, incomplete, markers, on_event,
            )
        });
    }

    pub fn turn_ended(&self) -> bool {
        self.parser.turn_ended()
    }

    pub fn into_parsed(self) -> ParsedCompletion {
        self.collector.finish()
    }
}

fn forward(
    ev: Event<'_>,
    collector: &mut Collector,
    next_call: &mut usize,
    open_call: &mut Option<usize>,
    incomplete: &mut usize,
    markers: &mut Vec<MarkerHit>,
    on_event: &mut dyn FnMut(StreamEvent),
) {
    collector.push(&ev);
    let out = match ev {
        Event::Text { text } => StreamEvent::Text(text.into_owned()),
        Event::Marker { marker, offset } => {
            use crate::protocol::Marker::*;
            let call = match marker {
                CallBegin => Some(*next_call),
                ArgumentBegin | CallEnd => *open_call,
                _ => None,
            };
            let hit = MarkerHit {
                marker,
                offset,
                call,
            };
            markers.push(hit);
            StreamEvent::Marker(hit)
        }
        Event::ToolCallBegin { index, id, name } => {
            *open_call = Some(index);
            StreamEvent::ToolCallBegin {
                index,
                id: id.into_owned(),
                name: name.into_owned(),
            }
        }
        Event::ToolCallArgs { index, delta } => StreamEvent::ToolCallArgs {
            index,
            delta: delta.into_owned(),
        },
        Event::ToolCallEnd { index } => {
            *open_call = None;
            *next_call = index + 1;
            StreamEvent::ToolCallEnd { index }
        }
        Event::ToolCallIncomplete { index } => {
            *open_call = None;
            *next_call = index + 1;
            *incomplete += 1;
            StreamEvent::ToolCallIncomplete { index }
        }
        Event::Warning { warning } => {
            if matches!(warning, Warning::IncompleteHeader { .. }) {
                *incomplete += 1;
            }
            StreamEvent::Warning(warning.to_string())
        }
        Event::SectionBegin | Event::SectionEnd | Event::TurnEnd => return,
    };
    on_event(out);
}
