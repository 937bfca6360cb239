//! Raw mode: render the Kimi K2 prompt, POST `/completions`, parse the markers locally.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::BackendError;
use super::TurnResult;
use super::events::Events;
use super::exchange::{Decoder, Exchange};
use super::http::{self, Call, Progress, Prompt, StreamChoice};
use super::logprobs::{self, CompletionLogprobs};
use super::markers::{LocalParse, ParseStart};
use kimi_protocol::family::Template;
use kimi_protocol::k3;
use kimi_protocol::reasoning_resent::ReasoningResent;
use kimi_protocol::{Message, render_traced, tokens::IM_END};
use kimi_protocol::{StreamEvent, Usage};

/// One choice of a streamed completion chunk, borrowed where it can be.
#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    finish_reason: Option<String>,
    /// Moonshot's API puts usage here.
    #[serde(default)]
    usage: Option<Usage>,
    /// Token-level data, when asked for (`logprobs`).
    #[serde(default)]
    logprobs: Option<CompletionLogprobs>,
}

impl StreamChoice for Choice<'_> {
    fn take_finish_reason(&mut self) -> Option<String> {
        self.finish_reason.take()
    }
    fn usage(&self) -> Option<Usage> {
        self.usage
    }
}

/// The request body for a raw completion of `prompt`.
pub(super) fn request_body(model: &str, prompt: &str, max_tokens: u32, temperature: f64) -> Value {
    json!({
        "model": model,
        "prompt": prompt,
        "stream": true,
        "max_tokens": max_tokens,
        "temperature": temperature,
        // Without these the server strips the markers the client parses.
        "skip_special_tokens": false,
        "spaces_between_special_tokens": false,
        "stop": [IM_END],
        "stream_options": {"include_usage": true},
    })
}

/// A raw completion of `messages`; with `prefix`, of the prompt followed by that edited start
/// of the answer (see `Backend::stream_continue`).
pub(super) fn stream(
    call: Call<'_>,
    messages: &[Message],
    tools: &[Value],
    prefix: Option<&str>,
) -> Exchange {
    let ep = call.endpoint;
    // Refused before anything is rendered or sent.
    if let Some(why) = ep.raw_mode_refusal() {
        return setup_error(why);
    }
    if ep.template() == Template::K3 {
        return stream_k3(call, messages, tools, prefix);
    }
    let opts = ep.raw_render_options();
    let (mut prompt, from_text) = render_traced(messages, tools, opts);
    // Measured on the prompt of the conversation, before a continued answer's start joins it.
    let resent = super::resent::raw(ep, messages, tools, &prompt);
    // A K2.5/K2.6 prompt ends inside `<think>`: the completion starts in the reasoning.
    let start = ParseStart::K2 {
        in_reasoning: opts.ends_in_reasoning(),
    };
    let mut decoder = RawDecoder::new(start);
    if let Some(p) = prefix {
        prompt.push_str(p);
        decoder.prefix(p);
    }
    let mut body = request_body(&ep.model, &prompt, ep.max_tokens, ep.temperature);
    logprobs::raw_fields(&mut body, ep.logprobs);
    let prompt = Prompt {
        text: prompt,
        text_markers: from_text.into_iter().map(|r| (r.start, r.end)).collect(),
        source: Some(source(messages, tools)),
        prefix: prefix.map(str::to_owned),
    };
    open(call, body, Some(prompt), decoder, Events::default(), resent)
}

/// Raw mode for Kimi K3: the XTML prompt as Moonshot's encoder writes it, stopped at
/// `<|end_of_msg|>`, parsed from inside the think channel (or the response one with thinking
/// off). Text that holds a structural marker string is said before it goes: a string prompt
/// lets the server read it as structure.
fn stream_k3(
    call: Call<'_>,
    messages: &[Message],
    tools: &[Value],
    prefix: Option<&str>,
) -> Exchange {
    let ep = call.endpoint;
    if let Some(why) = k3_images(messages) {
        return setup_error(why);
    }
    let opts = ep.k3_render_options();
    let mut prompt = match k3::render_messages(messages, tools, &opts) {
        Ok(p) => p,
        Err(e) => return setup_error(format!("the K3 prompt cannot be rendered: {e}")),
    };
    let resent = super::resent::raw(ep, messages, tools, &prompt);
    let mut said = Events::default();
    for warning in k3_marker_warnings(messages) {
        said.push(StreamEvent::Warning(warning));
    }
    let mut decoder = RawDecoder::new(ParseStart::K3 {
        thinking: opts.thinking,
        first_call: calls_so_far(messages),
    });
    if let Some(p) = prefix {
        prompt.push_str(p);
        decoder.prefix(p);
    }
    let mut body = request_body(&ep.model, &prompt, ep.max_tokens, ep.temperature);
    body["stop"] = json!([k3::END_OF_MSG, k3::EOS]);
    // K3's sampling for open-source servers (Moonshot's API takes no raw completions).
    body["top_p"] = json!(0.95);
    logprobs::raw_fields(&mut body, ep.logprobs);
    let prompt = Prompt {
        text: prompt,
        text_markers: Vec::new(),
        source: Some(source(messages, tools)),
        prefix: prefix.map(str::to_owned),
    };
    open(call, body, Some(prompt), decoder, said, resent)
}

/// What a raw prompt is rendered from, as a chat request carries it.
fn source(messages: &[Message], tools: &[Value]) -> Value {
    json!({"messages": messages, "tools": tools})
}

/// A request refused before it was made: no events, the error in the result.
fn setup_error(why: String) -> Exchange {
    Exchange::failed(TurnResult {
        error: Some(BackendError::Setup(why)),
        ..TurnResult::default()
    })
}

/// Calls already made in the conversation: K3 ids (`NAME_n`) continue from there, so a call
/// id is never given twice in one conversation.
fn calls_so_far(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.tool_calls.len()).sum()
}

/// Images cannot go in a K3 raw prompt: the server's image processor expands them from the
/// image itself.
fn k3_images(messages: &[Message]) -> Option<String> {
    let i = messages.iter().position(Message::has_image)?;
    Some(format!(
        "message {i} has an image, which a Kimi K3 raw prompt cannot carry (the server expands images from the image itself): use chat mode for it"
    ))
}

/// One warning per message whose text holds a K3 structural marker string.
fn k3_marker_warnings(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role != "assistant")
        .filter_map(|(i, m)| {
            let text = m.text();
            let found: Vec<&str> = k3::STRUCTURAL
                .iter()
                .copied()
                .filter(|t| text.contains(t))
                .collect();
            (!found.is_empty()).then(|| {
                format!(
                    "message {i} ({}) contains {}: sent as text in a string prompt, the server reads it as Kimi K3 structure",
                    m.role,
                    found.join(", ")
                )
            })
        })
        .collect()
}

/// POST `body` and parse the answer with `decoder` (which may have parsed a prefix already).
pub(super) fn open(
    call: Call<'_>,
    body: Value,
    prompt: Option<Prompt>,
    mut decoder: RawDecoder,
    said: Events,
    resent: Option<ReasoningResent>,
) -> Exchange {
    decoder.asked = logprobs::requested(&body);
    let decoder = Decoder::Raw(Box::new(decoder));
    Exchange::open(&call, "completions", body, prompt, decoder, said, resent)
}

/// A raw completion's payloads in, events out: what `send` does with each payload, and what
/// `reparse` does with each saved chunk.
pub(super) struct RawDecoder {
    local: LocalParse,
    progress: Progress,
    bytes: u64,
    /// Alternatives per token the request asked for (`logprobs`; 0: none).
    asked: u8,
    got_tokens: bool,
    /// The parse began with an edited prefix of the answer (it is in the prompt).
    prefixed: bool,
    /// What the prefix made, reported just before the first chunk (or at a successful end):
    /// an attempt that fails before any of its completion arrives shows none of it.
    pending: Vec<StreamEvent>,
}

impl RawDecoder {
    pub(crate) fn new(start: ParseStart) -> Self {
        RawDecoder {
            local: LocalParse::new(start),
            progress: Progress::default(),
            bytes: 0,
            asked: 0,
            got_tokens: false,
            prefixed: false,
            pending: Vec::new(),
        }
    }

    /// Parse `text`, the edited start of the answer the completion continues, as the first
    /// part of the one stream the parser sees. What it makes is reported before the first
    /// chunk, except its markers: they are the prompt's, with no chunk to point into.
    pub(crate) fn prefix(&mut self, text: &str) {
        self.prefixed = true;
        let mut made: Vec<StreamEvent> = Vec::new();
        self.local.feed(text, &mut made);
        self.local.completion_starts(text.len() as u64);
        made.retain(|e| !matches!(e, StreamEvent::Marker(_)));
        self.pending = made;
    }

    pub(crate) fn payload(
        &mut self,
        data: &str,
        at_us: u64,
        out: &mut Events,
    ) -> Result<(), BackendError> {
        let Some(choice) = self.progress.accept::<Choice>(data, out)? else {
            return Ok(());
        };
        let text = choice.text.unwrap_or_default();
        if !text.is_empty() {
            self.chunk(&text, at_us, out);
        }
        // Reported after its chunk (the trace files tokens under the last chunk) and before
        // the parser's events for it.
        if let Some(lp) = choice.logprobs {
            let tokens = lp.tokens(&text, self.asked);
            if !tokens.is_empty() {
                self.got_tokens = true;
                out.push(StreamEvent::Tokens(tokens));
            }
        }
        if !text.is_empty() {
            self.local.feed(&text, out);
        }
        Ok(())
    }

    fn chunk(&mut self, text: &str, at_us: u64, out: &mut Events) {
        out.extend(self.pending.drain(..));
        self.bytes += text.len() as u64;
        out.push(StreamEvent::Chunk {
            data: text.to_owned(),
            at_us,
        });
    }

    /// One piece of completion text: a chunk, then what the parser makes of it.
    pub(crate) fn text(&mut self, text: &str, at_us: u64, out: &mut Events) {
        self.chunk(text, at_us, out);
        self.local.feed(text, out);
    }

    /// The finish reason the payloads carried (a saved raw trace keeps it apart).
    pub(crate) fn set_finish_reason(&mut self, reason: Option<String>) {
        self.progress.finish_reason = reason;
    }

    /// The stream ended (`end`): flush the parser, report the end, and assemble the result.
    pub(crate) fn finish(
        mut self,
        end: Result<http::End, BackendError>,
        started: Instant,
        out: &mut Events,
    ) -> TurnResult {
        // What the parser still holds, and how the request ended, are decided before they go
        // out: a continuation that failed before its completion began shows nothing of the
        // prefix (not even a call it left open), and one that ended well with nothing more is
        // the prefix alone.
        let mut flushed = Events::default();
        let local = &mut self.local;
        local.finish(&mut flushed);
        let finished = self.progress.finish_reason.is_some() || local.turn_ended();
        let mut ended = Events::default();
        let (error, cancelled) = http::outcome(end, finished, self.bytes, started, &mut ended);
        // The prefix alone is the user's text, not the model's: no answer at all.
        let no_answer = self.prefixed && self.bytes == 0 && error.is_some();
        if !no_answer {
            out.extend(self.pending.drain(..));
            out.append(flushed);
        }
        out.append(ended);
        let Progress {
            finish_reason,
            usage,
            mut warnings,
        } = self.progress;
        let mut result = TurnResult {
            finish_reason,
            usage,
            error,
            cancelled,
            logprobs: logprobs::outcome(self.asked, self.got_tokens),
            ..TurnResult::default()
        };
        if no_answer {
            result.warnings = warnings;
            return result;
        }
        result.incomplete_calls = self.local.incomplete();
        let parsed = self.local.into_parsed();
        warnings.extend(parsed.warnings.iter().map(ToString::to_string));
        result.warnings = warnings;
        result.content = parsed.content;
        result.reasoning = parsed.reasoning;
        result.tool_calls = parsed.tool_calls;
        result
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::*;
    use kimi_protocol::Marker;

    const OPEN_CALL: &str = "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>";

    /// A continuation that failed before its completion began shows nothing of the prefix,
    /// not even the call the prefix left open; one that ended well with no more text is the
    /// prefix alone.
    #[test]
    fn a_continuation_without_a_completion_shows_the_prefix_only_when_it_ended_well() {
        let decoder = || {
            let mut d = RawDecoder::new(ParseStart::K2 {
                in_reasoning: false,
            });
            d.prefix("Checking.");
            d
        };
        let mut out = Events::default();
        let failed = Err(BackendError::Dropped {
            bytes: 0,
            detail: "connection reset".into(),
        });
        let mut open = RawDecoder::new(ParseStart::K2 {
            in_reasoning: false,
        });
        open.prefix(OPEN_CALL);
        let result = open.finish(failed, Instant::now(), &mut out);
        assert!(result.error.is_some() && result.content.is_empty());
        let shown: Vec<StreamEvent> = out.into_vec();
        assert!(
            shown
                .iter()
                .all(|e| matches!(e, StreamEvent::Finished { .. })),
            "{shown:?}"
        );
        let mut out = Events::default();
        let result = decoder().finish(Ok(http::End::Done), Instant::now(), &mut out);
        assert_eq!(result.content, "Checking.");
        assert_eq!(out.into_vec()[0], StreamEvent::Text("Checking.".into()));
    }

    /// An edited prefix and the completion are one stream to the parser: the call the prefix
    /// opens is completed by the completion; the prefix's markers are the prompt's (not
    /// reported), and the completion's count from the completion's start.
    #[test]
    fn the_prefix_and_the_completion_parse_as_one_stream() {
        let prefix = "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>";
        let mut d = RawDecoder::new(ParseStart::K2 {
            in_reasoning: false,
        });
        d.prefix(prefix);
        let mut out = Events::default();
        let completion = r#"{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>"#;
        d.text(completion, 1, &mut out);
        let out = out.into_vec();
        // What the prefix made comes first, before the first chunk; its markers not at all.
        assert_eq!(out[0], StreamEvent::Text("Checking.".into()), "{out:?}");
        let first_chunk = out
            .iter()
            .position(|e| matches!(e, StreamEvent::Chunk { .. }));
        let first_marker = out.iter().position(|e| matches!(e, StreamEvent::Marker(_)));
        assert!(first_chunk < first_marker, "{out:?}");
        let markers: Vec<(Marker, u64)> = (out.into_iter())
            .filter_map(|e| match e {
                StreamEvent::Marker(h) => Some((h.marker, h.offset)),
                _ => None,
            })
            .collect();
        assert_eq!(
            markers,
            [(Marker::CallEnd, 17), (Marker::SectionEnd, 34)],
            "offsets within the completion"
        );
        let parsed = d.local.into_parsed();
        assert_eq!(parsed.content, "Checking.");
        assert_eq!(parsed.tool_calls.len(), 1);
        assert_eq!(
            parsed.tool_calls[0].function.arguments,
            r#"{"city": "Paris"}"#
        );
    }
}
