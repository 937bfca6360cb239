//! Chat mode's two text channels, content and reasoning, each through the local marker parser,
//! because servers differ in where they put what the model wrote:
//! - reasoning deltas are scanned for tool-call markers (servers whose reasoning parser only
//!   splits at `</think>` leave K2-Thinking's early tool section there);
//! - a server without a reasoning parser sends `<think>…</think>` (K2-Thinking) or
//!   `reasoning…</think>` (K2.5/K2.6) as content: it is split here, once, with a warning.

use super::markers::{LocalParse, ParseStart};
use kimi_protocol::{ParsedCompletion, StreamEvent};

const THINK: &str = "<think>";
const END_THINK: &str = "</think>";

/// The channel a parsed event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Channel {
    Content,
    Reasoning,
}

impl Channel {
    /// How warnings name it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Channel::Content => "the content",
            Channel::Reasoning => "the reasoning",
        }
    }
}

/// Where the content stream stands with respect to `<think>` tags.
#[derive(Debug)]
enum Split {
    /// Nothing decided: the content so far is a prefix of `<think>`.
    Start,
    /// Inside `<think>`: content is reasoning until `</think>`.
    Think,
    /// Plain content; `</think>` is still looked for while no reasoning was seen.
    Content,
    /// `</think>` was handled (or reasoning deltas arrived): content is content.
    Settled,
}

/// Where the channels put what they parse: each event with the channel it came from.
pub(super) type Sink = Vec<(Channel, StreamEvent)>;

/// One channel's parser output, tagged on its way into the [`Sink`]; the reasoning channel's
/// text is reasoning.
struct Tagged<'a> {
    channel: Channel,
    sink: &'a mut Sink,
}

impl<'a> Tagged<'a> {
    fn content(sink: &'a mut Sink) -> Self {
        Tagged {
            channel: Channel::Content,
            sink,
        }
    }

    fn reasoning(sink: &'a mut Sink) -> Self {
        Tagged {
            channel: Channel::Reasoning,
            sink,
        }
    }
}

impl Extend<StreamEvent> for Tagged<'_> {
    fn extend<T: IntoIterator<Item = StreamEvent>>(&mut self, iter: T) {
        let channel = self.channel;
        self.sink.extend(iter.into_iter().map(|ev| match channel {
            Channel::Content => (channel, ev),
            Channel::Reasoning => (channel, as_reasoning(ev)),
        }));
    }
}

/// Both channels of one chat turn.
#[derive(Debug)]
pub(super) struct Channels {
    content: LocalParse,
    reasoning: LocalParse,
    split: Split,
    /// Content bytes held back: a possible `<think>` / `</think>` prefix.
    hold: String,
    /// Reasoning moved out of the content at `</think>` (K2.5/K2.6 without a reasoning parser).
    moved: String,
    /// Bytes at the start of the parsed content that were moved to the reasoning.
    moved_len: usize,
    saw_reasoning: bool,
    warnings: Vec<String>,
}

impl Default for Channels {
    fn default() -> Self {
        Channels {
            content: LocalParse::default(),
            // Reasoning deltas start inside the reasoning (a `</think>` there ends it; a section
            // opened inside returns to it). Any text event it still makes is read as reasoning
            // below (`as_reasoning`).
            reasoning: LocalParse::with_reasoning(true),
            split: Split::Start,
            hold: String::new(),
            moved: String::new(),
            moved_len: 0,
            saw_reasoning: false,
            warnings: Vec::new(),
        }
    }
}

impl Channels {
    /// Kimi K3's channels: content is parsed as a completion in the response channel, so a
    /// server with the K3 parsers gives its answer unchanged, and XTML markers in content (a
    /// server without them) still split: text before a think close becomes the reasoning, a
    /// tools channel gives its calls. A reasoning delta is think-channel text, where a leaked
    /// tools channel still gives its calls. Ids of calls parsed here count on from
    /// `first_call`, the calls the conversation already has.
    pub(crate) fn k3(first_call: usize) -> Self {
        let k3 = |thinking| {
            LocalParse::new(ParseStart::K3 {
                thinking,
                first_call,
            })
        };
        Channels {
            content: k3(false),
            reasoning: k3(true),
            // XTML has no `<think>` tag to look for.
            split: Split::Settled,
            ..Channels::default()
        }
    }
}

/// What the channels hold at the end.
pub(super) struct Finished {
    pub content: ParsedCompletion,
    pub reasoning: ParsedCompletion,
    /// Reasoning text, markers removed: moved content first, then the reasoning channel's.
    pub reasoning_text: String,
    /// The parsed content without the part moved to the reasoning.
    pub content_text: String,
    pub incomplete: usize,
    /// Warnings of the channels themselves (reasoning found in the content).
    pub notes: Vec<String>,
}

impl Channels {
    /// A `reasoning_content` / `reasoning` delta.
    pub(crate) fn reasoning(&mut self, text: &str, sink: &mut Sink) {
        if !self.saw_reasoning {
            self.saw_reasoning = true;
            // The server splits reasoning itself: content is content from now on.
            if matches!(self.split, Split::Content | Split::Start) {
                self.split = Split::Settled;
                let held = std::mem::take(&mut self.hold);
                self.feed_content(&held, sink);
            }
        }
        self.feed_reasoning(text, sink);
    }

    /// A `content` delta.
    pub(crate) fn content(&mut self, text: &str, sink: &mut Sink) {
        match self.split {
            Split::Settled => self.feed_content(text, sink),
            Split::Start => {
                self.hold.push_str(text);
                if let Some(rest) = self.hold.strip_prefix(THINK) {
                    let rest = rest.to_owned();
                    self.hold.clear();
                    self.split = Split::Think;
                    self.no_parser(sink);
                    self.think(&rest, sink);
                } else if !THINK.starts_with(self.hold.as_str()) {
                    self.split = Split::Content;
                    let held = std::mem::take(&mut self.hold);
                    self.content_watching(&held, sink);
                }
            }
            Split::Think => self.think(text, sink),
            Split::Content => self.content_watching(text, sink),
        }
    }

    /// Inside `<think>`: up to `</think>` is reasoning.
    fn think(&mut self, text: &str, sink: &mut Sink) {
        let mut buf = std::mem::take(&mut self.hold);
        buf.push_str(text);
        if let Some(at) = buf.find(END_THINK) {
            self.feed_reasoning(&buf[..at], sink);
            self.split = Split::Settled;
            self.feed_content(&buf[at + END_THINK.len()..], sink);
        } else {
            let keep = partial_suffix(&buf, END_THINK);
            self.hold = buf.split_off(buf.len() - keep);
            self.feed_reasoning(&buf, sink);
        }
    }

    /// Content while no reasoning arrived: a `</think>` means everything before was reasoning.
    fn content_watching(&mut self, text: &str, sink: &mut Sink) {
        // The common case (a server that never thinks): nothing held and no `<`, no copy.
        if self.hold.is_empty() && memchr::memchr(b'<', text.as_bytes()).is_none() {
            self.feed_content(text, sink);
            return;
        }
        let mut buf = std::mem::take(&mut self.hold);
        buf.push_str(text);
        if let Some(at) = buf.find(END_THINK) {
            self.feed_content(&buf[..at], sink);
            self.split = Split::Settled;
            // Everything shown as content so far was reasoning.
            self.moved = self.content.content().to_owned();
            self.moved_len = self.moved.len();
            self.no_parser(sink);
            if !self.moved.is_empty() {
                sink.push((
                    Channel::Reasoning,
                    StreamEvent::Reasoning(self.moved.clone()),
                ));
            }
            self.feed_content(&buf[at + END_THINK.len()..], sink);
        } else {
            let keep = partial_suffix(&buf, END_THINK);
            self.hold = buf.split_off(buf.len() - keep);
            self.feed_content(&buf, sink);
        }
    }

    fn no_parser(&mut self, sink: &mut Sink) {
        let w = "the server sent the model's reasoning inside the content (<think> tags): \
                 it was split out here; enable the server's reasoning parser (vLLM/SGLang: \
                 --reasoning-parser kimi_k2)"
            .to_owned();
        sink.push((Channel::Content, StreamEvent::Warning(w.clone())));
        self.warnings.push(w);
    }

    fn feed_content(&mut self, text: &str, sink: &mut Sink) {
        if text.is_empty() {
            return;
        }
        self.content.feed(text, &mut Tagged::content(sink));
    }

    fn feed_reasoning(&mut self, text: &str, sink: &mut Sink) {
        if text.is_empty() {
            return;
        }
        self.reasoning.feed(text, &mut Tagged::reasoning(sink));
    }

    /// The stream is over: release what is held and close both parsers.
    pub(crate) fn finish(mut self, sink: &mut Sink) -> Finished {
        let held = std::mem::take(&mut self.hold);
        match self.split {
            Split::Think => self.feed_reasoning(&held, sink),
            _ => self.feed_content(&held, sink),
        }
        self.content.finish(&mut Tagged::content(sink));
        self.reasoning.finish(&mut Tagged::reasoning(sink));
        let incomplete = self.content.incomplete() + self.reasoning.incomplete();
        let content = self.content.into_parsed();
        let reasoning = self.reasoning.into_parsed();
        let mut reasoning_text = self.moved;
        // Reasoning parsed out of the content (K3 markers in content) comes first.
        reasoning_text.push_str(&content.reasoning);
        // The reasoning parser reports reasoning as text today, as reasoning once it has the
        // reasoning channel: either way it is all reasoning.
        reasoning_text.push_str(&reasoning.reasoning);
        reasoning_text.push_str(&reasoning.content);
        let content_text = content
            .content
            .get(self.moved_len..)
            .unwrap_or_default()
            .to_owned();
        Finished {
            content,
            reasoning,
            reasoning_text,
            content_text,
            incomplete,
            notes: self.warnings,
        }
    }
}

/// Text of the reasoning channel is reasoning.
fn as_reasoning(ev: StreamEvent) -> StreamEvent {
    match ev {
        StreamEvent::Text(t) => StreamEvent::Reasoning(t),
        other => other,
    }
}

/// The length of the longest proper suffix of `s` that is a prefix of `marker`.
fn partial_suffix(s: &str, marker: &str) -> usize {
    (1..marker.len().min(s.len() + 1))
        .rev()
        .find(|&n| s.is_char_boundary(s.len() - n) && marker.starts_with(&s[s.len() - n..]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed content chunks (and reasoning chunks marked with `R:`); the events and the result.
    fn run(chunks: &[&str]) -> (Vec<(Channel, StreamEvent)>, Finished) {
        let mut ch = Channels::default();
        let mut evs = Vec::new();
        for c in chunks {
            match c.strip_prefix("R:") {
                Some(r) => ch.reasoning(r, &mut evs),
                None => ch.content(c, &mut evs),
            }
        }
        let f = ch.finish(&mut evs);
        (evs, f)
    }

    fn every_split(text: &str) -> Vec<Vec<String>> {
        let cuts: Vec<usize> = (1..text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        let mut out = vec![vec![text.to_owned()]];
        for &a in &cuts {
            out.push(vec![text[..a].to_owned(), text[a..].to_owned()]);
        }
        out.push(text.chars().map(String::from).collect());
        out
    }

    #[test]
    fn think_tags_in_content_are_split_at_every_chunking() {
        for chunks in every_split("<think>plan it</think>Answer") {
            let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let (_, f) = run(&refs);
            assert_eq!(f.reasoning_text, "plan it", "{chunks:?}");
            assert_eq!(f.content_text, "Answer", "{chunks:?}");
        }
    }

    #[test]
    fn k25_without_a_parser_moves_shown_text_to_reasoning_once() {
        for chunks in every_split("thinking here</think>The answer") {
            let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let (evs, f) = run(&refs);
            assert_eq!(f.reasoning_text, "thinking here", "{chunks:?}");
            assert_eq!(f.content_text, "The answer", "{chunks:?}");
            let moved: Vec<&StreamEvent> = evs
                .iter()
                .filter(|(_, e)| matches!(e, StreamEvent::Reasoning(_)))
                .map(|(_, e)| e)
                .collect();
            assert_eq!(moved, [&StreamEvent::Reasoning("thinking here".into())]);
            assert_eq!(
                evs.iter()
                    .filter(|(_, e)| matches!(e, StreamEvent::Warning(_)))
                    .count(),
                1,
                "one warning"
            );
        }
    }

    #[test]
    fn end_think_after_reasoning_deltas_is_plain_content() {
        let (_, f) = run(&["R:thought", "a </think> b"]);
        assert_eq!(f.reasoning_text, "thought");
        assert_eq!(f.content_text, "a </think> b");
        assert!(f.content.warnings.is_empty());
    }

    #[test]
    fn content_that_only_looks_like_think_is_content() {
        let (_, f) = run(&["<thin", "king>"]);
        assert_eq!(f.content_text, "<thinking>");
        assert_eq!(f.reasoning_text, "");
        let (_, f) = run(&["<thi"]);
        assert_eq!(f.content_text, "<thi");
    }

    #[test]
    fn markers_inside_reasoning_become_calls_and_leave_the_text() {
        let r = "R:Let me check. <|tool_calls_section_begin|> <|tool_call_begin|> \
                 functions.get_weather:0 <|tool_call_argument_begin|> {\"city\": \"Paris\"} \
                 <|tool_call_end|> <|tool_calls_section_end|>";
        let (evs, f) = run(&[r]);
        assert_eq!(f.reasoning.tool_calls.len(), 1);
        assert_eq!(f.reasoning.tool_calls[0].function.name, "get_weather");
        assert!(!f.reasoning_text.contains("<|"), "{:?}", f.reasoning_text);
        assert!(f.reasoning_text.starts_with("Let me check."));
        assert!(evs.iter().any(
            |(c, e)| *c == Channel::Reasoning && matches!(e, StreamEvent::ToolCallBegin { .. })
        ));
    }

    #[test]
    fn a_call_without_an_argument_marker_is_incomplete_not_a_garbage_name() {
        for channel in ["", "R:"] {
            let text = format!(
                "{channel}<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 \
                 {{\"city\": \"Tokyo\"}}<|tool_call_end|><|tool_calls_section_end|>"
            );
            let (evs, f) = run(&[&text]);
            assert!(f.content.tool_calls.is_empty() && f.reasoning.tool_calls.is_empty());
            assert!(
                !evs.iter()
                    .any(|(_, e)| matches!(e, StreamEvent::ToolCallBegin { .. })),
                "{channel}: {evs:?}"
            );
            assert!(
                evs.iter()
                    .any(|(_, e)| matches!(e, StreamEvent::Warning(_))),
                "{channel}: {evs:?}"
            );
        }
    }
}
