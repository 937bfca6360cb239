//! Incremental parser for a streamed raw Kimi K3 completion (XTML channels): chunks in, the
//! same [`Event`]s as the K2 parser out, so every consumer of K2 events reads K3 too.
//!
//! Like the K2 parser it scans each byte once: `memchr` finds the next `<`, text before it is
//! released at once, and only a suffix that may still become a marker is held back. An open
//! marker's attributes are unbounded, so their search resumes where it stopped rather than
//! from the `<` (and gives up after [`scan::MAX_ATTRS`] bytes): the work stays linear whatever
//! the chunking. A call is reported only when `<|close|>call<|sep|>` completes it, its whole
//! arguments string in one delta: K3 arguments are typed elements, not streamed JSON.

mod call;
mod scan;

use std::borrow::Cow;
use std::mem;

use self::call::{Call, ValueKind};
use self::scan::{Found, Name, Prefix};
use crate::completion::{Collector, ParsedCompletion};
use crate::event::{Coalescer, Event};
use crate::tokens::{K3_CLOSE, K3_OPEN, K3_SEP, Marker};
use crate::warning::{CutBy, K3Note, Warning};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Inside the think channel the prompt opened: text is reasoning.
    Think,
    /// The think channel closed, no response opened yet: text is content.
    AfterThink,
    /// Inside the response channel: text is content.
    Response,
    /// The response channel closed: text is content (noted).
    AfterResponse,
    /// The tools channel closed: text is content (noted).
    AfterTools,
    /// Inside the tools channel, between calls: text is ignored.
    Tools,
    /// Inside a call, between values: text is ignored.
    Call,
    /// Inside an `argument` or `json` value: everything up to its closer is the raw value.
    Value,
    /// The message closed: waiting for `<|end_of_msg|>`, everything else is ignored.
    Closed,
    /// After `<|end_of_msg|>`: nothing counts.
    Ended,
}

/// The streaming K3 parser. Feed it chunks with [`K3Parser::feed`], then call
/// [`K3Parser::finish`].
#[derive(Debug)]
pub struct K3Parser {
    state: State,
    /// The prompt opened the think channel (thinking on); otherwise the response channel.
    thinking_on: bool,
    /// A held-back suffix that may still become a marker; always starts with `<`.
    tail: String,
    /// Where the attribute search in `tail` may resume (see [`scan::recognize`]).
    tail_resume: usize,
    /// Stream offset of the first byte not yet consumed (the start of `tail`).
    offset: u64,
    /// Whether any structural token has been seen (after one, a think channel is not the model
    /// thinking first with thinking off).
    markers_seen: bool,
    call: Option<Call>,
    /// Calls completed so far: the next one's number.
    completed: usize,
    /// The kinds of note already reported.
    noted: Vec<NoteKind>,
    finished: bool,
}

impl K3Parser {
    /// A parser for a completion whose prompt ended with `<|open|>think<|sep|>` (`thinking_on`)
    /// or `<|open|>response<|sep|>` (thinking off).
    pub fn new(thinking_on: bool) -> Self {
        K3Parser {
            state: if thinking_on {
                State::Think
            } else {
                State::Response
            },
            thinking_on,
            tail: String::new(),
            tail_resume: 0,
            offset: 0,
            markers_seen: false,
            call: None,
            completed: 0,
            noted: Vec::new(),
            finished: false,
        }
    }

    /// True once `<|end_of_msg|>` has been seen: a client may stop reading.
    pub fn turn_ended(&self) -> bool {
        self.state == State::Ended
    }

    /// Parse a whole completion fed in the given chunks into the OpenAI shape.
    pub fn parse<'c>(
        thinking_on: bool,
        chunks: impl IntoIterator<Item = &'c str>,
    ) -> ParsedCompletion {
        let mut parser = K3Parser::new(thinking_on);
        let mut collector = Collector::default();
        let mut sink = |ev: Event<'_>| collector.push(&ev);
        for chunk in chunks {
            parser.feed(chunk, &mut sink);
        }
        parser.finish(&mut sink);
        collector.finish()
    }

    /// Parse a whole completion fed in the given chunks into owned events, adjacent text
    /// joined: the same for every chunking.
    pub fn events<'c>(
        thinking_on: bool,
        chunks: impl IntoIterator<Item = &'c str>,
    ) -> Vec<Event<'static>> {
        let mut parser = K3Parser::new(thinking_on);
        let mut out = Coalescer::default();
        let mut sink = |ev: Event<'_>| out.push(ev);
        for chunk in chunks {
            parser.feed(chunk, &mut sink);
        }
        parser.finish(&mut sink);
        out.into_events()
    }

    /// Feed the next chunk of completion text; events go to `sink` as soon as they are certain.
    pub fn feed<F: FnMut(Event<'_>)>(&mut self, chunk: &str, sink: &mut F) {
        if self.finished || chunk.is_empty() || self.state == State::Ended {
            return;
        }
        if self.tail.is_empty() {
            if let Some(hold) = self.scan(chunk, sink) {
                self.tail.push_str(&chunk[hold..]);
            }
        } else {
            // Appending to the held tail copies only the new chunk; a tail still held from its
            // start is kept as it is, so a long attribute text is never copied again.
            let mut joined = mem::take(&mut self.tail);
            joined.push_str(chunk);
            match self.scan(&joined, sink) {
                Some(0) => self.tail = joined,
                Some(hold) => self.tail = joined[hold..].to_owned(),
                None => {}
            }
        }
    }

    /// The stream is over: settle a held-back tail and report a call left open.
    pub fn finish<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        if self.finished {
            return;
        }
        let tail = mem::take(&mut self.tail);
        if !tail.is_empty() && self.state != State::Ended {
            self.finish_tail(&tail, sink);
        }
        if matches!(self.state, State::Call | State::Value) {
            self.cut_call(CutBy::StreamEnd, sink);
        }
        self.finished = true;
    }

    /// Scan `data`, which starts at stream offset `self.offset`; returns where a held-back
    /// suffix starts, if one is.
    fn scan<F: FnMut(Event<'_>)>(&mut self, data: &str, sink: &mut F) -> Option<usize> {
        let bytes = data.as_bytes();
        let base = self.offset;
        let resume = mem::take(&mut self.tail_resume);
        let mut start = 0; // first byte not yet consumed
        let mut search = 0; // where to look for the next `<`
        while let Some(rel) = memchr::memchr(b'<', &bytes[search..]) {
            let lt = search + rel;
            let rest = &bytes[lt..];
            // Every marker starts with `<|`.
            if rest.len() >= 2 && rest[1] != b'|' {
                search = lt + 1;
                continue;
            }
            let found = if let Some(kind) = self.value_kind() {
                // Inside a value only its own closer counts: values may hold marker text.
                let len = kind.closer().len();
                match scan::prefix(rest, kind.closer()) {
                    Prefix::Whole => {
                        self.span(&data[start..lt], sink);
                        self.end_value(base + lt as u64, len, sink);
                        Some(len)
                    }
                    Prefix::Part => None,
                    Prefix::No => {
                        search = lt + 1;
                        continue;
                    }
                }
            } else {
                match scan::recognize(rest, if lt == 0 { resume } else { 0 }) {
                    Found::Text => {
                        search = lt + 1;
                        continue;
                    }
                    Found::Partial { resume } => {
                        self.tail_resume = resume;
                        None
                    }
                    found => {
                        self.span(&data[start..lt], sink);
                        Some(self.on_found(found, &data[lt..], base + lt as u64, sink))
                    }
                }
            };
            match found {
                Some(len) => {
                    start = lt + len;
                    search = start;
                    if self.state == State::Ended {
                        self.offset = base + bytes.len() as u64;
                        return None;
                    }
                }
                None => {
                    // A possible marker: only at the very end of `data`.
                    self.span(&data[start..lt], sink);
                    self.offset = base + lt as u64;
                    return Some(lt);
                }
            }
        }
        self.span(&data[start..], sink);
        self.offset = base + bytes.len() as u64;
        None
    }

    fn value_kind(&self) -> Option<ValueKind> {
        if self.state == State::Value {
            self.call.as_ref().and_then(Call::value_kind)
        } else {
            None
        }
    }

    /// Text between markers, interpreted by the current state.
    fn span<F: FnMut(Event<'_>)>(&mut self, text: &str, sink: &mut F) {
        if text.is_empty() {
            return;
        }
        match self.state {
            State::Think => sink(Event::Reasoning {
                text: Cow::Borrowed(text),
            }),
            State::AfterThink | State::Response => sink(Event::Text {
                text: Cow::Borrowed(text),
            }),
            State::AfterResponse | State::AfterTools => {
                self.note(K3Note::TextOutsideChannel, sink);
                sink(Event::Text {
                    text: Cow::Borrowed(text),
                });
            }
            State::Value => {
                if let Some(c) = &mut self.call {
                    c.push_raw(text);
                }
            }
            State::Closed => self.note(K3Note::AfterMessageClose, sink),
            State::Tools | State::Call | State::Ended => {}
        }
    }

    /// A recognised marker or token at stream offset `at`, `text` starting with it; returns
    /// its length.
    fn on_found<F: FnMut(Event<'_>)>(
        &mut self,
        found: Found,
        text: &str,
        at: u64,
        sink: &mut F,
    ) -> usize {
        let marker = |marker, offset| Event::Marker { marker, offset };
        let len = match found {
            Found::Text | Found::Partial { .. } => return 0,
            Found::End => {
                sink(marker(Marker::EndOfMsg, at));
                self.end_turn(sink);
                return Marker::EndOfMsg.text().len();
            }
            Found::Token(m) => {
                sink(marker(m, at));
                let len = m.text().len();
                self.stray_or_ignored(&text[..len], at, sink);
                len
            }
            Found::Open { name, attrs, len } => {
                sink(marker(Marker::Open, at));
                sink(marker(Marker::Sep, at + (len - K3_SEP.len()) as u64));
                self.open(name, &text[attrs], &text[..len], at, sink);
                len
            }
            Found::Close { name, len, elided } => {
                sink(marker(Marker::Close, at));
                if !elided {
                    sink(marker(Marker::Sep, at + (len - K3_SEP.len()) as u64));
                }
                self.close(name, elided, &text[..len], at, sink);
                len
            }
        };
        self.markers_seen = true;
        len
    }

    fn open<F: FnMut(Event<'_>)>(
        &mut self,
        name: Name,
        attrs: &str,
        text: &str,
        at: u64,
        sink: &mut F,
    ) {
        use State as S;
        match (self.state, name) {
            // The prompt already opened it; a model that writes it again at once is consumed.
            (S::Think, Name::Think) if at == 0 => {}
            (S::Think, Name::Response) => {
                self.not_closed("think", "response opened", sink);
                self.state = S::Response;
            }
            (S::Think, Name::Tools) => {
                self.not_closed("think", "tools opened", sink);
                self.state = S::Tools;
            }
            (S::Response, Name::Tools) => {
                self.not_closed("response", "tools opened", sink);
                self.state = S::Tools;
            }
            (S::AfterThink | S::AfterResponse | S::AfterTools, Name::Response) => {
                self.state = S::Response;
            }
            (S::AfterThink | S::AfterResponse | S::AfterTools, Name::Tools) => {
                self.state = S::Tools;
            }
            (S::Tools, Name::Call) => self.begin_call(attrs),
            (S::Call, Name::Call) => {
                self.cut_call(CutBy::Marker(Marker::Open), sink);
                self.begin_call(attrs);
            }
            (S::Call, Name::Argument | Name::Json) => {
                let kind = if name == Name::Json {
                    ValueKind::Json
                } else {
                    ValueKind::Argument
                };
                if let Some(c) = &mut self.call {
                    c.begin_value(kind, attrs);
                    self.state = S::Value;
                }
            }
            _ => self.stray_or_ignored(text, at, sink),
        }
    }

    fn close<F: FnMut(Event<'_>)>(
        &mut self,
        name: Name,
        elided: bool,
        text: &str,
        at: u64,
        sink: &mut F,
    ) {
        use State as S;
        if elided {
            self.note(
                K3Note::ElidedSeparator {
                    name: name.as_str(),
                },
                sink,
            );
        }
        match (self.state, name) {
            (S::Think, Name::Think) => self.state = S::AfterThink,
            // The answer was written in the think channel.
            (S::Think, Name::Response | Name::Message) => {
                self.note(K3Note::ThinkSkipped, sink);
                sink(Event::ReasoningWasText);
                self.state = if name == Name::Response {
                    S::AfterResponse
                } else {
                    S::Closed
                };
            }
            // Thinking off, yet the model thought first.
            (S::Response, Name::Think) if !self.thinking_on && !self.markers_seen => {
                self.note(K3Note::ThoughtWithThinkingOff, sink);
                sink(Event::TextWasReasoning);
                self.state = S::AfterThink;
            }
            (S::Response, Name::Response) | (S::AfterThink, Name::Response) => {
                self.state = S::AfterResponse;
            }
            (S::Response, Name::Message) => {
                self.not_closed("response", "message closed", sink);
                self.state = S::Closed;
            }
            (S::AfterThink | S::AfterResponse | S::AfterTools, Name::Message) => {
                self.state = S::Closed;
            }
            (S::Tools, Name::Tools) => self.state = S::AfterTools,
            (S::Tools, Name::Message) => {
                self.not_closed("tools", "message closed", sink);
                self.state = S::Closed;
            }
            (S::Call, Name::Call) => self.complete_call(sink),
            (S::Call, Name::Tools) => {
                self.cut_call(CutBy::Marker(Marker::Close), sink);
                self.state = S::AfterTools;
            }
            (S::Call, Name::Message) => {
                self.cut_call(CutBy::Marker(Marker::Close), sink);
                self.not_closed("tools", "message closed", sink);
                self.state = S::Closed;
            }
            _ => self.stray_or_ignored(text, at, sink),
        }
    }

    /// A marker the current state has no use for: dropped, noted; after the message
    /// close, simply ignored (noted as such).
    fn stray_or_ignored<F: FnMut(Event<'_>)>(&mut self, text: &str, at: u64, sink: &mut F) {
        let note = if self.state == State::Closed {
            K3Note::AfterMessageClose
        } else {
            K3Note::StrayMarker {
                text: text.to_owned(),
                offset: at,
            }
        };
        self.note(note, sink);
    }

    /// `<|close|>argument<|sep|>` or `<|close|>json<|sep|>` of length `len` at `at`.
    fn end_value<F: FnMut(Event<'_>)>(&mut self, at: u64, len: usize, sink: &mut F) {
        sink(Event::Marker {
            marker: Marker::Close,
            offset: at,
        });
        sink(Event::Marker {
            marker: Marker::Sep,
            offset: at + (len - K3_SEP.len()) as u64,
        });
        self.markers_seen = true;
        self.state = State::Call;
        if let Some(note) = self.call.as_mut().and_then(Call::end_value) {
            self.note(note, sink);
        }
    }

    fn begin_call(&mut self, attrs: &str) {
        self.call = Some(Call::new(attrs));
        self.state = State::Call;
    }

    /// `<|close|>call<|sep|>`: report the call, numbered by completion order.
    fn complete_call<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        self.state = State::Tools;
        let Some(done) = self.call.take().and_then(Call::finish) else {
            self.note(K3Note::NamelessCall, sink);
            return;
        };
        let index = self.completed;
        self.completed += 1;
        let id = format!("{}_{index}", done.name);
        sink(Event::ToolCallBegin {
            index,
            id: Cow::Owned(id),
            name: Cow::Owned(done.name),
        });
        sink(Event::ToolCallArgs {
            index,
            delta: Cow::Owned(done.arguments),
        });
        sink(Event::ToolCallEnd { index });
    }

    /// The open call ends without its close: counted, never run. It takes no number.
    fn cut_call<F: FnMut(Event<'_>)>(&mut self, cut_by: CutBy, sink: &mut F) {
        self.call = None;
        self.state = State::Tools;
        self.note(K3Note::IncompleteCall { cut_by }, sink);
        sink(Event::ToolCallIncomplete {
            index: self.completed,
        });
    }

    fn end_turn<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        if self.state == State::Call {
            self.cut_call(CutBy::Marker(Marker::EndOfMsg), sink);
        }
        self.state = State::Ended;
        sink(Event::TurnEnd);
    }

    /// The end of the stream with `tail` held back: part of a token's text is text; a cut
    /// marker is dropped, except `<|close|>NAME`, which closes NAME.
    fn finish_tail<F: FnMut(Event<'_>)>(&mut self, tail: &str, sink: &mut F) {
        let at = self.offset;
        if self.state == State::Value {
            self.span(tail, sink);
            return;
        }
        if let Some(name) = tail.strip_prefix(K3_CLOSE) {
            sink(Event::Marker {
                marker: Marker::Close,
                offset: at,
            });
            if let Some(name) = Name::exactly(name.as_bytes()) {
                self.close(name, true, tail, at, sink);
            }
        } else if tail.starts_with(K3_OPEN) {
            sink(Event::Marker {
                marker: Marker::Open,
                offset: at,
            });
        } else {
            self.span(tail, sink);
        }
    }

    fn not_closed<F: FnMut(Event<'_>)>(
        &mut self,
        channel: &'static str,
        by: &'static str,
        sink: &mut F,
    ) {
        self.note(K3Note::ChannelNotClosed { channel, by }, sink);
    }

    /// Report `note` unless its kind was reported already: one line per kind, not a flood.
    fn note<F: FnMut(Event<'_>)>(&mut self, note: K3Note, sink: &mut F) {
        let kind = NoteKind::of(&note);
        if !self.noted.contains(&kind) {
            self.noted.push(kind);
            sink(Event::Warning {
                warning: Warning::K3(note),
            });
        }
    }
}

/// What makes two notes the same kind: the variant, plus the channel and cause of an unclosed
/// channel, and whether an incomplete call was cut by the end of the stream (which makes the
/// finish reason `length`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NoteKind(mem::Discriminant<K3Note>, &'static str, &'static str);

impl NoteKind {
    fn of(note: &K3Note) -> NoteKind {
        let (a, b) = match note {
            K3Note::ChannelNotClosed { channel, by } => (*channel, *by),
            K3Note::IncompleteCall {
                cut_by: CutBy::StreamEnd,
            } => ("stream end", ""),
            _ => ("", ""),
        };
        NoteKind(mem::discriminant(note), a, b)
    }
}

#[cfg(test)]
mod tests;
