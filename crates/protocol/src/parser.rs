//! Incremental parser for a streamed raw Kimi K2 completion: chunks in, [`Event`]s out.
//!
//! It scans each byte once: `memchr` finds the next `<`, everything before it is released at
//! once, and only a `<...` suffix that can still become a marker is held back (at most
//! [`Marker::MAX_LEN`] bytes, copied once). Events are therefore never retracted, and the work
//! is linear in the input whatever the chunking (vLLM's and SGLang's parsers re-scan the whole
//! buffer per chunk, which is quadratic).

use std::borrow::Cow;
use std::mem;

use super::call_id;
use super::event::Event;
use super::tokens::Marker;
use super::warning::{CutBy, Warning};

/// Join buffers larger than this are freed after use rather than kept.
const SCRATCH_KEEP: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Assistant text.
    Content,
    /// Reasoning of a thinking model: after a leading `<think>`, or from the start when the
    /// prompt ended inside an open `<think>`, until `</think>`.
    Reasoning,
    /// Inside `<|tool_calls_section_begin|>`, between calls.
    Section,
    /// After `<|tool_call_begin|>`, reading the id.
    CallId,
    /// After `<|tool_call_argument_begin|>`, reading the arguments.
    CallArgs,
    /// After `<|im_end|>`: nothing more is content.
    Done,
}

/// The streaming parser. Feed it chunks with [`Parser::feed`], then call [`Parser::finish`].
#[derive(Debug)]
pub struct Parser {
    state: State,
    /// Where a tool section returns when it closes: `Content`, or `Reasoning` for a section
    /// opened before `</think>` (K2-Thinking may call tools before it ends its reasoning).
    resume: State,
    /// A held-back suffix that may still become a marker; always starts with `<`.
    tail: String,
    /// Reused buffer for joining `tail` with the next chunk.
    scratch: String,
    /// Stream offset of the first byte not yet consumed (the start of `tail`).
    offset: u64,
    /// Index of the current (or next) call within the turn.
    index: usize,
    /// The current call was opened without a section around it.
    implicit_section: bool,
    id: String,
    /// Whether non-whitespace argument text has been emitted for the current call.
    args_started: bool,
    /// Whitespace at the end of the arguments so far: emitted only if more text follows.
    args_ws: String,
    /// Text seen between calls in a section, reported at the next marker unless it is blank.
    stray: String,
    bytes_after_end: u64,
    finished: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    /// A parser for a completion that starts in content (K2-Instruct, K2-Thinking, K2.5/K2.6
    /// with thinking off). A leading `<think>` still opens the reasoning.
    pub fn new() -> Self {
        Self::starting_in(State::Content)
    }

    /// A parser for a completion whose prompt ended inside an open `<think>` (K2.5/K2.6 with
    /// thinking on): the text is reasoning until `</think>`.
    pub fn starting_in_reasoning() -> Self {
        Self::starting_in(State::Reasoning)
    }

    /// [`Parser::new`] or [`Parser::starting_in_reasoning`].
    pub fn with_reasoning(starts_in_reasoning: bool) -> Self {
        if starts_in_reasoning {
            Self::starting_in_reasoning()
        } else {
            Self::new()
        }
    }

    fn starting_in(state: State) -> Self {
        Parser {
            state,
            resume: state,
            tail: String::new(),
            scratch: String::new(),
            offset: 0,
            index: 0,
            implicit_section: false,
            id: String::new(),
            args_started: false,
            args_ws: String::new(),
            stray: String::new(),
            bytes_after_end: 0,
            finished: false,
        }
    }

    /// True once `<|im_end|>` (or another turn marker) has been seen: a client may stop reading.
    pub fn turn_ended(&self) -> bool {
        self.state == State::Done
    }

    /// Feed the next chunk of completion text; events go to `sink` as soon as they are certain.
    pub fn feed<F: FnMut(Event<'_>)>(&mut self, chunk: &str, sink: &mut F) {
        if self.finished || chunk.is_empty() {
            return;
        }
        if self.state == State::Done {
            self.bytes_after_end += chunk.len() as u64;
            return;
        }
        if self.tail.is_empty() {
            self.scan(chunk, sink);
        } else {
            // The previous chunk ended in a possible marker. Join once and rescan from its `<`;
            // the tail is at most MAX_LEN bytes, so each input byte is still copied at most once.
            // The join buffer is reused so that tiny chunks cost no allocation.
            let mut joined = mem::take(&mut self.scratch);
            joined.clear();
            joined.push_str(&self.tail);
            joined.push_str(chunk);
            self.tail.clear();
            self.scan(&joined, sink);
            if joined.capacity() <= SCRATCH_KEEP {
                self.scratch = joined;
            }
        }
    }

    /// The stream is over: release a held-back tail as text and report anything left open.
    pub fn finish<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        if self.finished {
            return;
        }
        if !self.tail.is_empty() {
            // It never became a marker, so it is plain text of the current state.
            let tail = mem::take(&mut self.tail);
            self.span(&tail, sink);
        }
        if self.state == State::Done {
            if self.bytes_after_end > 0 {
                let bytes = self.bytes_after_end;
                warn(sink, Warning::TextAfterEnd { bytes });
            }
        } else {
            self.close_open(CutBy::StreamEnd, sink);
        }
        self.finished = true;
    }

    /// Scan `data`, which starts at stream offset `self.offset`.
    fn scan<F: FnMut(Event<'_>)>(&mut self, data: &str, sink: &mut F) {
        let bytes = data.as_bytes();
        let base = self.offset;
        let mut start = 0; // first byte not yet emitted
        let mut search = 0; // where to look for the next `<`
        while let Some(rel) = memchr::memchr(b'<', &bytes[search..]) {
            let lt = search + rel;
            let rest = &bytes[lt..];
            let at = base + lt as u64;
            // Fast path: `<` is text unless `<|` (K2 markers), `<t` at byte 0 (`<think>`) or
            // `</` in the reasoning (`</think>`): the only places a marker may start.
            if rest.len() >= 2
                && !match rest[1] {
                    b'|' => true,
                    b't' => at == 0,
                    b'/' => self.state == State::Reasoning,
                    _ => false,
                }
            {
                search = lt + 1;
                continue;
            }
            if let Some(marker) = Marker::at_start(rest).filter(|m| self.allowed(*m, at)) {
                self.span(&data[start..lt], sink);
                self.on_marker(marker, base + lt as u64, sink);
                start = lt + marker.text().len();
                search = start;
                if self.state == State::Done {
                    self.bytes_after_end += (bytes.len() - start) as u64;
                    self.offset = base + bytes.len() as u64;
                    return;
                }
            } else if self.may_become_marker(rest, at) {
                // Only possible at the very end of `data`: hold it back.
                self.span(&data[start..lt], sink);
                self.tail.push_str(&data[lt..]);
                self.offset = base + lt as u64;
                return;
            } else {
                search = lt + 1;
            }
        }
        self.span(&data[start..], sink);
        self.offset = base + bytes.len() as u64;
    }

    /// `<think>` is a marker only as the very first bytes of the completion and `</think>` only
    /// in the reasoning; everywhere else they are text, also inside calls.
    fn allowed(&self, marker: Marker, at: u64) -> bool {
        match marker {
            Marker::ThinkBegin => at == 0,
            Marker::ThinkEnd => self.state == State::Reasoning,
            _ => true,
        }
    }

    /// `rest` (starting with `<`) is a proper prefix of a marker allowed here.
    fn may_become_marker(&self, rest: &[u8], at: u64) -> bool {
        // Only the end of the data can be a proper prefix: most `<|` in text stop here.
        if rest.len() >= Marker::MAX_LEN {
            return false;
        }
        Marker::ALL.into_iter().any(|m| {
            let t = m.text().as_bytes();
            rest.len() < t.len() && t.starts_with(rest) && self.allowed(m, at)
        })
    }

    /// Text between markers, interpreted by the current state.
    fn span<F: FnMut(Event<'_>)>(&mut self, text: &str, sink: &mut F) {
        if text.is_empty() {
            return;
        }
        match self.state {
            State::Content => sink(Event::Text {
                text: Cow::Borrowed(text),
            }),
            State::Reasoning => sink(Event::Reasoning {
                text: Cow::Borrowed(text),
            }),
            State::Section => self.stray.push_str(text),
            State::CallId => self.id.push_str(text),
            State::CallArgs => self.args_text(text, sink),
            State::Done => self.bytes_after_end += text.len() as u64,
        }
    }

    /// Argument text, with the whole argument's surrounding whitespace kept out of the deltas.
    fn args_text<F: FnMut(Event<'_>)>(&mut self, mut text: &str, sink: &mut F) {
        if !self.args_started {
            text = text.trim_start();
            if text.is_empty() {
                return;
            }
            self.args_started = true;
        }
        // Most spans end in a visible ASCII byte: skip the Unicode-aware trim for them.
        let last = text.as_bytes()[text.len() - 1];
        let body = if last > b' ' && last < 0x80 {
            text
        } else {
            text.trim_end()
        };
        if body.is_empty() {
            self.args_ws.push_str(text);
            return;
        }
        let index = self.index;
        if !self.args_ws.is_empty() {
            sink(Event::ToolCallArgs {
                index,
                delta: Cow::Borrowed(&self.args_ws),
            });
            self.args_ws.clear();
        }
        sink(Event::ToolCallArgs {
            index,
            delta: Cow::Borrowed(body),
        });
        self.args_ws.push_str(&text[body.len()..]);
    }

    fn on_marker<F: FnMut(Event<'_>)>(&mut self, marker: Marker, offset: u64, sink: &mut F) {
        use Marker::*;
        sink(Event::Marker { marker, offset });
        let stray = |sink: &mut F| warn(sink, Warning::StrayMarker { marker, offset });
        match (self.state, marker) {
            (_, ImUser | ImAssistant | ImSystem) => {
                warn(sink, Warning::TurnMarker { marker });
                self.end_turn(marker, sink);
            }
            (_, ImEnd) => self.end_turn(marker, sink),
            (State::Done, _) => {}

            // A leading `<think>` (only allowed at byte 0) opens the reasoning.
            (State::Content | State::Reasoning, ThinkBegin) => {
                self.state = State::Reasoning;
                self.resume = State::Reasoning;
            }
            (State::Reasoning, ThinkEnd) => {
                self.state = State::Content;
                self.resume = State::Content;
            }
            // A section opened in the reasoning ends it implicitly; the state is kept in
            // `resume` so the section returns to it.
            (State::Content | State::Reasoning, SectionBegin | SectionBeginSingular) => {
                self.resume = self.state;
                self.state = State::Section;
                sink(Event::SectionBegin);
            }
            (State::Content | State::Reasoning, CallBegin) => {
                warn(sink, Warning::CallOutsideSection { index: self.index });
                self.resume = self.state;
                self.implicit_section = true;
                self.begin_header();
            }
            (State::Content | State::Reasoning, _) => stray(sink),

            (State::Section, CallBegin) => {
                self.flush_stray(sink);
                self.implicit_section = false;
                self.begin_header();
            }
            (State::Section, SectionEnd | SectionEndSingular) => {
                self.flush_stray(sink);
                self.state = self.resume;
                sink(Event::SectionEnd);
            }
            (State::Section, _) => {
                self.flush_stray(sink);
                stray(sink);
            }

            (State::CallId, ArgumentBegin) => {
                self.emit_call_begin(sink);
                self.state = State::CallArgs;
            }
            // No argument marker: the header may hold the arguments too (`get_weather:0 {...}`),
            // so no call is made of it; it is reported and never runs.
            (State::CallId, CallEnd) => {
                let header = self.id.trim().to_owned();
                warn(
                    sink,
                    Warning::CallWithoutArguments {
                        index: self.index,
                        header,
                    },
                );
                self.next_call();
            }
            (State::CallId | State::CallArgs, CallBegin) => {
                self.cut_call(CutBy::Marker(marker), sink);
                self.begin_header();
            }
            (State::CallId | State::CallArgs, SectionEnd | SectionEndSingular) => {
                self.cut_call(CutBy::Marker(marker), sink);
                self.state = self.resume;
                if !self.implicit_section {
                    sink(Event::SectionEnd);
                }
            }
            (State::CallId, _) => stray(sink),

            (State::CallArgs, CallEnd) => self.end_call(sink),
            (State::CallArgs, _) => stray(sink),
        }
    }

    fn begin_header(&mut self) {
        self.id.clear();
        self.state = State::CallId;
    }

    fn emit_call_begin<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        let id = self.id.trim();
        sink(Event::ToolCallBegin {
            index: self.index,
            id: Cow::Borrowed(id),
            name: Cow::Borrowed(call_id::function_name(id)),
        });
        self.args_started = false;
        self.args_ws.clear();
    }

    fn end_call<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        sink(Event::ToolCallEnd { index: self.index });
        self.next_call();
    }

    /// The current call (in its header or its arguments) was cut off by `by`.
    fn cut_call<F: FnMut(Event<'_>)>(&mut self, by: CutBy, sink: &mut F) {
        let index = self.index;
        if self.state == State::CallId {
            warn(sink, Warning::IncompleteHeader { index, cut_by: by });
        } else {
            let id = self.id.trim().to_owned();
            warn(
                sink,
                Warning::IncompleteCall {
                    index,
                    id,
                    cut_by: by,
                },
            );
            sink(Event::ToolCallIncomplete { index });
        }
        self.next_call();
    }

    fn next_call(&mut self) {
        self.index += 1;
        self.id.clear();
        self.args_ws.clear();
        self.state = if self.implicit_section {
            self.resume
        } else {
            State::Section
        };
    }

    fn end_turn<F: FnMut(Event<'_>)>(&mut self, marker: Marker, sink: &mut F) {
        if self.state != State::Done {
            self.close_open(CutBy::Marker(marker), sink);
            self.state = State::Done;
            sink(Event::TurnEnd);
        }
    }

    /// The turn or stream ends: cut an open call and report an open section.
    fn close_open<F: FnMut(Event<'_>)>(&mut self, by: CutBy, sink: &mut F) {
        let section_open = match self.state {
            State::CallId | State::CallArgs => {
                let explicit = !self.implicit_section;
                self.cut_call(by, sink);
                explicit
            }
            State::Section => {
                self.flush_stray(sink);
                true
            }
            State::Content | State::Reasoning | State::Done => false,
        };
        if section_open {
            warn(sink, Warning::UnclosedSection);
        }
    }

    fn flush_stray<F: FnMut(Event<'_>)>(&mut self, sink: &mut F) {
        // Whitespace between calls is normal; anything else is reported.
        let text = mem::take(&mut self.stray);
        if !text.trim().is_empty() {
            warn(sink, Warning::TextInSection { text });
        }
    }
}

fn warn<F: FnMut(Event<'_>)>(sink: &mut F, warning: Warning) {
    sink(Event::Warning { warning });
}

/// Parse a whole completion, fed in the given chunks, into owned events (adjacent text and
/// argument deltas concatenated).
pub fn events_of<'c>(chunks: impl IntoIterator<Item = &'c str>) -> Vec<Event<'static>> {
    events_with(Parser::new(), chunks)
}

/// [`events_of`] with a given parser (e.g. [`Parser::starting_in_reasoning`]).
pub fn events_with<'c>(
    mut parser: Parser,
    chunks: impl IntoIterator<Item = &'c str>,
) -> Vec<Event<'static>> {
    let mut out = super::event::Coalescer::default();
    let mut sink = |ev: Event<'_>| out.push(ev);
    for chunk in chunks {
        parser.feed(chunk, &mut sink);
    }
    parser.finish(&mut sink);
    out.into_events()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::*;
    use pretty_assertions::assert_eq;

    fn text(s: &str) -> Event<'static> {
        Event::Text {
            text: Cow::Owned(s.into()),
        }
    }

    fn semantic(events: Vec<Event<'static>>) -> Vec<Event<'static>> {
        events
            .into_iter()
            .filter(|e| !matches!(e, Event::Marker { .. }))
            .collect()
    }

    /// Every split into 1-byte..=len chunks at char boundaries gives the same events.
    fn assert_split_invariant(s: &str) -> Vec<Event<'static>> {
        split_invariant_from(false, s)
    }

    /// [`assert_split_invariant`] for a parser starting in reasoning or not.
    fn split_invariant_from(in_reasoning: bool, s: &str) -> Vec<Event<'static>> {
        let run = |chunks: &[&str]| {
            events_with(Parser::with_reasoning(in_reasoning), chunks.iter().copied())
        };
        let whole = run(&[s]);
        let bounds: Vec<usize> = (0..=s.len()).filter(|i| s.is_char_boundary(*i)).collect();
        let chars: Vec<&str> = bounds.windows(2).map(|w| &s[w[0]..w[1]]).collect();
        assert_eq!(run(&chars), whole, "1-char chunks");
        for &cut in &bounds {
            assert_eq!(run(&[&s[..cut], &s[cut..]]), whole, "split at byte {cut}");
        }
        whole
    }

    fn reasoning(s: &str) -> Event<'static> {
        Event::Reasoning {
            text: Cow::Owned(s.into()),
        }
    }

    fn call_events(index: usize, id: &str, name: &str, args: &str) -> Vec<Event<'static>> {
        vec![
            Event::ToolCallBegin {
                index,
                id: id.to_owned().into(),
                name: name.to_owned().into(),
            },
            Event::ToolCallArgs {
                index,
                delta: args.to_owned().into(),
            },
            Event::ToolCallEnd { index },
        ]
    }

    #[test]
    fn completion_starting_in_reasoning_switches_at_think_end() {
        let evs = split_invariant_from(true, "Let me think. <b>x</b></think>Answer.<|im_end|>");
        assert_eq!(
            semantic(evs),
            vec![
                reasoning("Let me think. <b>x</b>"),
                text("Answer."),
                Event::TurnEnd
            ]
        );
    }

    #[test]
    fn leading_think_opens_reasoning_and_its_markers_are_reported() {
        let s = "<think>r</think>a";
        let evs = split_invariant_from(false, s);
        assert_eq!(
            evs,
            vec![
                Event::Marker {
                    marker: Marker::ThinkBegin,
                    offset: 0
                },
                reasoning("r"),
                Event::Marker {
                    marker: Marker::ThinkEnd,
                    offset: 8
                },
                text("a"),
            ]
        );
        // Also when the prompt already opened it (consumed, not text).
        assert_eq!(
            semantic(split_invariant_from(true, s)),
            vec![reasoning("r"), text("a")]
        );
    }

    #[test]
    fn think_markers_elsewhere_are_plain_text() {
        let evs = split_invariant_from(false, " <think>a</think>b<thi");
        assert_eq!(evs, vec![text(" <think>a</think>b<thi")]);
        let evs = split_invariant_from(true, "r</think>a</think><think>");
        assert_eq!(
            semantic(evs),
            vec![reasoning("r"), text("a</think><think>")]
        );
    }

    #[test]
    fn section_before_think_end_ends_reasoning_and_returns_to_it() {
        let s = format!(
            "Need it. {TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.f:0{TOOL_CALL_ARGUMENT_BEGIN}{{\"c\": \"</think> <think>\"}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}more</think>done{IM_END}"
        );
        for in_reasoning in [true, false] {
            let s = if in_reasoning {
                s.clone()
            } else {
                format!("{THINK_BEGIN}{s}")
            };
            let mut want = vec![reasoning("Need it. "), Event::SectionBegin];
            want.extend(call_events(
                0,
                "functions.f:0",
                "f",
                "{\"c\": \"</think> <think>\"}",
            ));
            want.extend([
                Event::SectionEnd,
                reasoning("more"),
                text("done"),
                Event::TurnEnd,
            ]);
            assert_eq!(semantic(split_invariant_from(in_reasoning, &s)), want);
        }
    }

    #[test]
    fn stream_ending_in_reasoning_is_not_an_error() {
        let evs = split_invariant_from(true, "still thinking <|tool_ca");
        assert_eq!(evs, vec![reasoning("still thinking <|tool_ca")]);
    }

    #[test]
    fn call_without_argument_marker_is_incomplete_not_a_garbage_call() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.get_weather:0 {{\"city\": \"Tokyo\"}}{TOOL_CALL_END}{TOOL_CALL_BEGIN}functions.b:1{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        let mut want = vec![
            Event::SectionBegin,
            Event::Warning {
                warning: Warning::CallWithoutArguments {
                    index: 0,
                    header: "functions.get_weather:0 {\"city\": \"Tokyo\"}".into(),
                },
            },
        ];
        want.extend(call_events(1, "functions.b:1", "b", "{}"));
        want.push(Event::SectionEnd);
        assert_eq!(evs, want);
        let parsed = crate::parse_completion(&s);
        assert_eq!(parsed.tool_calls.len(), 1);
        assert!(parsed.warnings[0].to_string().contains("will not run"));
    }

    #[test]
    fn plain_text_passes_through_and_im_end_ends_the_turn() {
        let evs = assert_split_invariant("Hello <b>world</b> a<|b <|im_end|>junk");
        assert_eq!(
            evs,
            vec![
                text("Hello <b>world</b> a<|b "),
                Event::Marker {
                    marker: Marker::ImEnd,
                    offset: 24
                },
                Event::TurnEnd,
                Event::Warning {
                    warning: Warning::TextAfterEnd { bytes: 4 }
                },
            ]
        );
    }

    #[test]
    fn partial_marker_is_held_not_retracted() {
        let mut p = Parser::new();
        let mut got = Vec::new();
        p.feed("abc<|tool_ca", &mut |e| got.push(e.into_owned()));
        assert_eq!(got, vec![text("abc")], "the marker prefix is held back");
        got.clear();
        p.feed("x and more", &mut |e| got.push(e.into_owned()));
        assert_eq!(
            got,
            vec![text("<|tool_cax and more")],
            "released when it stops looking like a marker"
        );
        got.clear();
        p.feed("<|im", &mut |e| got.push(e.into_owned()));
        assert!(got.is_empty());
        p.finish(&mut |e| got.push(e.into_owned()));
        assert_eq!(got, vec![text("<|im")], "released at end of stream");
    }

    #[test]
    fn text_before_section_in_the_same_chunk_is_kept() {
        let s = format!(
            "Sure.{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.get_weather:0{TOOL_CALL_ARGUMENT_BEGIN}{{\"city\": \"Paris\"}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert_eq!(
            evs,
            vec![
                text("Sure."),
                Event::SectionBegin,
                Event::ToolCallBegin {
                    index: 0,
                    id: "functions.get_weather:0".into(),
                    name: "get_weather".into()
                },
                Event::ToolCallArgs {
                    index: 0,
                    delta: "{\"city\": \"Paris\"}".into()
                },
                Event::ToolCallEnd { index: 0 },
                Event::SectionEnd,
            ]
        );
    }

    #[test]
    fn end_and_begin_in_one_chunk_are_two_calls() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.a:0{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END}{TOOL_CALL_BEGIN}functions.b:1{TOOL_CALL_ARGUMENT_BEGIN}{{\"x\":1}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        let begins: Vec<_> = evs
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallBegin { index, name, .. } => Some((*index, name.to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(begins, vec![(0, "a".to_string()), (1, "b".to_string())]);
        assert!(!evs.iter().any(|e| matches!(e, Event::Warning { .. })));
    }

    #[test]
    fn whitespace_around_id_and_arguments_is_trimmed() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}\n{TOOL_CALL_BEGIN}\n functions.get_weather: 0 \n{TOOL_CALL_ARGUMENT_BEGIN} \n{{\n  \"city\": \"Paris\"\n}}\n\n{TOOL_CALL_END}\n{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert_eq!(
            evs[1],
            Event::ToolCallBegin {
                index: 0,
                id: "functions.get_weather: 0".into(),
                name: "get_weather".into()
            }
        );
        assert_eq!(
            evs[2],
            Event::ToolCallArgs {
                index: 0,
                delta: "{\n  \"city\": \"Paris\"\n}".into()
            }
        );
        assert!(!evs.iter().any(|e| matches!(e, Event::Warning { .. })));
    }

    #[test]
    fn empty_section_keeps_surrounding_text() {
        let s = format!("before {TOOL_CALLS_SECTION_BEGIN}{TOOL_CALLS_SECTION_END} after");
        let evs = semantic(assert_split_invariant(&s));
        assert_eq!(
            evs,
            vec![
                text("before "),
                Event::SectionBegin,
                Event::SectionEnd,
                text(" after")
            ]
        );
    }

    #[test]
    fn singular_section_spellings_are_accepted() {
        let s = format!(
            "<|tool_call_section_begin|>{TOOL_CALL_BEGIN}functions.f:0{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END}<|tool_call_section_end|>tail"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert_eq!(evs.first(), Some(&Event::SectionBegin));
        assert!(evs.contains(&Event::ToolCallEnd { index: 0 }));
        assert_eq!(evs.last(), Some(&text("tail")));
    }

    #[test]
    fn stream_ending_inside_arguments_is_incomplete() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.write:0{TOOL_CALL_ARGUMENT_BEGIN}{{\"path\": \"a\", \"content\": \"hel"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert!(evs.contains(&Event::ToolCallIncomplete { index: 0 }));
        assert!(!evs.contains(&Event::ToolCallEnd { index: 0 }));
        assert!(evs.iter().any(|e| matches!(
            e,
            Event::Warning {
                warning: Warning::IncompleteCall {
                    cut_by: CutBy::StreamEnd,
                    ..
                }
            }
        )));
    }

    #[test]
    fn im_end_inside_a_call_cuts_it() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.f:0{TOOL_CALL_ARGUMENT_BEGIN}{{\"a\"{IM_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert!(evs.contains(&Event::ToolCallIncomplete { index: 0 }));
        assert_eq!(evs.last(), Some(&Event::TurnEnd));
    }

    #[test]
    fn stream_ending_in_header_starts_no_call() {
        let s = format!("{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.get_wea");
        let evs = semantic(assert_split_invariant(&s));
        assert!(!evs.iter().any(|e| matches!(e, Event::ToolCallBegin { .. })));
        assert!(evs.iter().any(|e| matches!(
            e,
            Event::Warning {
                warning: Warning::IncompleteHeader { index: 0, .. }
            }
        )));
    }

    #[test]
    fn begin_without_end_cuts_the_first_call() {
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.a:0{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_BEGIN}functions.b:1{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert!(evs.contains(&Event::ToolCallIncomplete { index: 0 }));
        assert!(evs.contains(&Event::ToolCallEnd { index: 1 }));
    }

    #[test]
    fn call_without_section_is_parsed_with_a_warning() {
        let s = format!(
            "Hi {TOOL_CALL_BEGIN}functions.f:0{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END} bye"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert!(evs.contains(&Event::ToolCallEnd { index: 0 }));
        assert_eq!(evs.first(), Some(&text("Hi ")));
        assert_eq!(evs.last(), Some(&text(" bye")));
    }

    #[test]
    fn stray_markers_and_section_text_are_dropped_with_warnings() {
        let s = format!(
            "a{TOOL_CALL_END}b{TOOL_CALLS_SECTION_BEGIN} junk {TOOL_CALL_BEGIN}functions.f:0{TOOL_CALL_ARGUMENT_BEGIN}{{}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let evs = semantic(assert_split_invariant(&s));
        assert_eq!(evs[0], text("a"));
        assert!(matches!(
            evs[1],
            Event::Warning {
                warning: Warning::StrayMarker {
                    marker: Marker::CallEnd,
                    offset: 1
                }
            }
        ));
        assert_eq!(evs[2], text("b"));
        assert!(evs.contains(&Event::Warning {
            warning: Warning::TextInSection {
                text: " junk ".into()
            }
        }));
    }

    #[test]
    fn new_turn_marker_ends_the_turn() {
        let evs = semantic(assert_split_invariant("hi<|im_user|>user<|im_middle|>x"));
        assert_eq!(evs[0], text("hi"));
        assert!(evs.contains(&Event::TurnEnd));
        assert!(
            !evs.iter()
                .any(|e| matches!(e, Event::Text { text } if text.contains('x')))
        );
    }

    #[test]
    fn large_arguments_stream_incrementally() {
        let big = "x".repeat(200_000);
        let s = format!(
            "{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALL_BEGIN}functions.w:0{TOOL_CALL_ARGUMENT_BEGIN}{{\"c\": \"{big}\"}}{TOOL_CALL_END}{TOOL_CALLS_SECTION_END}"
        );
        let mut p = Parser::new();
        let mut deltas = 0usize;
        let mut total = 0usize;
        for chunk in s.as_bytes().chunks(4096) {
            let chunk = std::str::from_utf8(chunk).expect("ascii");
            p.feed(chunk, &mut |e| {
                if let Event::ToolCallArgs { delta, .. } = e {
                    deltas += 1;
                    total += delta.len();
                }
            });
        }
        assert!(
            deltas > 40,
            "arguments stream as they arrive ({deltas} deltas)"
        );
        assert_eq!(total, big.len() + 9);
    }

    #[test]
    fn marker_offsets_are_stream_positions() {
        let s = format!("ab{TOOL_CALLS_SECTION_BEGIN}{TOOL_CALLS_SECTION_END}{IM_END}");
        let offsets: Vec<(Marker, u64)> = assert_split_invariant(&s)
            .into_iter()
            .filter_map(|e| match e {
                Event::Marker { marker, offset } => Some((marker, offset)),
                _ => None,
            })
            .collect();
        let l = TOOL_CALLS_SECTION_BEGIN.len() as u64;
        let m = TOOL_CALLS_SECTION_END.len() as u64;
        assert_eq!(
            offsets,
            vec![
                (Marker::SectionBegin, 2),
                (Marker::SectionEnd, 2 + l),
                (Marker::ImEnd, 2 + l + m)
            ]
        );
    }
}
