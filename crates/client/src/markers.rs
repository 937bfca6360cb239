//! Completion text parsed on the client: the raw mode's whole answer, and chat `content` that
//! carries Kimi markers because the server's tool parser is off. Wraps `protocol::Parser`,
//! turning its events into [`StreamEvent`]s (markers among them, for the inspector).

use kimi_protocol::k3::{self, K3Parser};
use kimi_protocol::{Collector, Event, Marker, ParsedCompletion, Parser, Warning};

use kimi_protocol::{MarkerHit, StreamEvent};

/// Where the parse of a completion starts, by the model's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseStart {
    /// The K2 family: inside the reasoning when the prompt ended with an open `<think>`.
    K2 { in_reasoning: bool },
    /// Kimi K3: in the think channel (thinking on) or the response one; call ids (`NAME_n`)
    /// count on from `first_call`, the calls the conversation already has.
    K3 { thinking: bool, first_call: usize },
}

impl ParseStart {
    /// Where the completion of `prompt` starts: what the prompt's end says (a saved trace's
    /// prompt is all a replay has).
    pub(crate) fn for_prompt(prompt: Option<&str>) -> ParseStart {
        let think = format!("{}think{}", k3::OPEN, k3::SEP);
        let response = format!("{}response{}", k3::OPEN, k3::SEP);
        match prompt {
            Some(p) if p.ends_with(&think) => ParseStart::K3 {
                thinking: true,
                first_call: 0,
            },
            Some(p) if p.ends_with(&response) => ParseStart::K3 {
                thinking: false,
                first_call: 0,
            },
            Some(p) => ParseStart::K2 {
                in_reasoning: p.ends_with("<think>"),
            },
            None => ParseStart::K2 {
                in_reasoning: false,
            },
        }
    }
}

#[derive(Debug)]
enum AnyParser {
    K2(Parser),
    K3(Box<K3Parser>),
}

#[derive(Debug)]
pub(super) struct LocalParse {
    parser: AnyParser,
    seen: Seen,
}

impl Default for LocalParse {
    fn default() -> Self {
        LocalParse::new(ParseStart::K2 {
            in_reasoning: false,
        })
    }
}

/// What the parser's events have told so far.
#[derive(Debug, Default)]
struct Seen {
    collector: Collector,
    /// Index of the call the next `<|tool_call_begin|>` opens, and of the open call.
    next_call: usize,
    open_call: Option<usize>,
    incomplete: usize,
    /// K3: the calls the conversation already has, added to each call's number in its id.
    id_offset: Option<usize>,
    /// Bytes parsed before the completion (an edited prefix, which is in the prompt): marker
    /// offsets count from the completion's start, so they are taken off.
    before_completion: u64,
}

impl LocalParse {
    /// A K2 parse that starts in the reasoning when the prompt ended inside `<think>`.
    pub(crate) fn with_reasoning(starts_in_reasoning: bool) -> Self {
        LocalParse::new(ParseStart::K2 {
            in_reasoning: starts_in_reasoning,
        })
    }

    pub(crate) fn new(start: ParseStart) -> Self {
        let (parser, id_offset) = match start {
            ParseStart::K2 { in_reasoning } => {
                (AnyParser::K2(Parser::with_reasoning(in_reasoning)), None)
            }
            ParseStart::K3 {
                thinking,
                first_call,
            } => (
                AnyParser::K3(Box::new(K3Parser::new(thinking))),
                Some(first_call),
            ),
        };
        LocalParse {
            parser,
            seen: Seen {
                id_offset,
                ..Seen::default()
            },
        }
    }

    /// From now on the text parsed is the completion: what was parsed so far (`bytes` of an
    /// edited prefix) comes before it, and marker offsets count from here. A marker begun in
    /// the prefix and ended in the completion is put at the completion's start.
    pub(crate) fn completion_starts(&mut self, bytes: u64) {
        self.seen.before_completion = bytes;
    }

    /// Parse `text`, pushing what it makes onto `out`.
    pub(crate) fn feed(&mut self, text: &str, out: &mut impl Extend<StreamEvent>) {
        let seen = &mut self.seen;
        let mut sink = |ev: Event<'_>| seen.forward(ev, out);
        match &mut self.parser {
            AnyParser::K2(p) => p.feed(text, &mut sink),
            AnyParser::K3(p) => p.feed(text, &mut sink),
        }
    }

    /// The stream is over (for any reason): flush and report what is open.
    pub(crate) fn finish(&mut self, out: &mut impl Extend<StreamEvent>) {
        let seen = &mut self.seen;
        let mut sink = |ev: Event<'_>| seen.forward(ev, out);
        match &mut self.parser {
            AnyParser::K2(p) => p.finish(&mut sink),
            AnyParser::K3(p) => p.finish(&mut sink),
        }
    }

    pub(crate) fn turn_ended(&self) -> bool {
        match &self.parser {
            AnyParser::K2(p) => p.turn_ended(),
            AnyParser::K3(p) => p.turn_ended(),
        }
    }

    /// The content parsed so far (markers removed).
    pub(crate) fn content(&self) -> &str {
        self.seen.collector.content()
    }

    /// Calls that began (or whose header began) and were cut off.
    pub(crate) fn incomplete(&self) -> usize {
        self.seen.incomplete
    }

    pub(crate) fn into_parsed(self) -> ParsedCompletion {
        self.seen.collector.finish()
    }
}

impl Seen {
    fn forward(&mut self, ev: Event<'_>, out: &mut impl Extend<StreamEvent>) {
        // The answer so far becomes reasoning: the UI's convention for that move is one
        // reasoning delta equal to the whole answer.
        let moved =
            matches!(ev, Event::TextWasReasoning).then(|| self.collector.content().to_owned());
        let ev = match (ev, self.id_offset) {
            (Event::ToolCallBegin { index, name, .. }, Some(offset)) => Event::ToolCallBegin {
                index,
                id: format!("{name}_{}", index + offset).into(),
                name,
            },
            (ev, _) => ev,
        };
        self.collector.push(&ev);
        let event = match ev {
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
                    offset: offset.saturating_sub(self.before_completion),
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
            // K3 moves text between the channels; the collector above applied the move.
            Event::ReasoningWasText => StreamEvent::ReasoningWasText,
            Event::TextWasReasoning => match moved {
                Some(text) if !text.is_empty() => StreamEvent::Reasoning(text),
                _ => return,
            },
        };
        out.extend(Some(event));
    }
}
