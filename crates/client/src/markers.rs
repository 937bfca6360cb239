//! Completion text parsed on the client: the raw mode's whole answer, and chat `content` that
//! carries Kimi markers because the server's tool parser is off. Wraps `protocol::Parser`,
//! turning its events into [`StreamEvent`]s (markers among them, for the inspector).

use kimi_protocol::{Collector, Event, Marker, ParsedCompletion, Parser, Warning};

use kimi_protocol::{MarkerHit, StreamEvent};

#[derive(Debug, Default)]
pub(super) struct LocalParse {
    parser: Parser,
    seen: Seen,
}

/// What the parser's events have told so far.
#[derive(Debug, Default)]
struct Seen {
    collector: Collector,
    /// Index of the call the next `<|tool_call_begin|>` opens, and of the open call.
    next_call: usize,
    open_call: Option<usize>,
    incomplete: usize,
}

impl LocalParse {
    /// A parse that starts in the reasoning when the prompt ended inside `<think>`.
    pub fn with_reasoning(starts_in_reasoning: bool) -> Self {
        LocalParse {
            parser: Parser::with_reasoning(starts_in_reasoning),
            seen: Seen::default(),
        }
    }

    pub fn feed(&mut self, text: &str, on_event: &mut dyn FnMut(StreamEvent)) {
        let seen = &mut self.seen;
        self.parser
            .feed(text, &mut |ev: Event<'_>| seen.forward(ev, on_event));
    }

    /// The stream is over (for any reason): flush and report what is open.
    pub fn finish(&mut self, on_event: &mut dyn FnMut(StreamEvent)) {
        let seen = &mut self.seen;
        self.parser
            .finish(&mut |ev: Event<'_>| seen.forward(ev, on_event));
    }

    pub fn turn_ended(&self) -> bool {
        self.parser.turn_ended()
    }

    /// The content parsed so far (markers removed).
    pub fn content(&self) -> &str {
        self.seen.collector.content()
    }

    /// Calls that began (or whose header began) and were cut off.
    pub fn incomplete(&self) -> usize {
        self.seen.incomplete
    }

    pub(crate) fn into_parsed(self) -> ParsedCompletion {
        self.seen.collector.finish()
    }
}

impl Seen {
    fn forward(&mut self, ev: Event<'_>, on_event: &mut dyn FnMut(StreamEvent)) {
        self.collector.push(&ev);
        let out = match ev {
            Event::Text { text } => StreamEvent::Text(text.into_owned()),
            Event::Reasoning { text } => StreamEvent::Reasoning(text.into_owned()),
            Event::Marker { marker, offset } => {
                let call = match marker {
                    Marker::CallBegin => Some(self.next_call),
                    Marker::ArgumentBegin | Marker::CallEnd => self.open_call,
                    _ => None,
                };
                let hit = MarkerHit {
                    marker,
                    offset,
                    call,
                };
                StreamEvent::Marker(hit)
            }
            Event::ToolCallBegin { index, id, name } => {
                self.open_call = Some(index);
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
                self.open_call = None;
                self.next_call = index + 1;
                StreamEvent::ToolCallEnd { index }
            }
            Event::ToolCallIncomplete { index } => {
                self.open_call = None;
                self.next_call = index + 1;
                self.incomplete += 1;
                StreamEvent::ToolCallIncomplete { index }
            }
            Event::Warning { warning } => {
                match &warning {
                    Warning::IncompleteHeader { .. } => self.incomplete += 1,
                    // A call block without an argument marker is an incomplete call too.
                    Warning::CallWithoutArguments { index, .. } => {
                        self.incomplete += 1;
                        self.open_call = None;
                        self.next_call = *index + 1;
                    }
                    _ => {}
                }
                StreamEvent::Warning(warning.to_string())
            }
            Event::SectionBegin | Event::SectionEnd | Event::TurnEnd => return,
            // Only the K3 parser moves text between the channels; the collector above applies
            // the move. Raw K3 streaming does not go through here (yet).
            Event::ReasoningWasText | Event::TextWasReasoning => return,
        };
        on_event(out);
    }
}
