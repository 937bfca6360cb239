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

pub(super) fn stream(call: Call<'_>, messages: &[Message], tools: &[Value]) -> Exchange {
    let ep = call.endpoint;
    // Refused before anything is rendered or sent.
    if let Some(why) = ep.raw_mode_refusal() {
        return setup_error(why);
    }
    if ep.template() == Template::K3 {
        return stream_k3(call, messages, tools);
    }
    let opts = ep.raw_render_options();
    let (prompt, from_text) = render_traced(messages, tools, opts);
    let mut body = request_body(&ep.model, &prompt, ep.max_tokens, ep.temperature);
    logprobs::raw_fields(&mut body, ep.logprobs);
    let prompt = Prompt {
        text: prompt,
        text_markers: from_text.into_iter().map(|r| (r.start, r.end)).collect(),
        source: Some(source(messages, tools)),
    };
    // A K2.5/K2.6 prompt ends inside `<think>`: the completion starts in the reasoning.
    let start = ParseStart::K2 {
        in_reasoning: opts.ends_in_reasoning(),
    };
    send(call, body, Some(prompt), start, Events::default())
}

/// Raw mode for Kimi K3: the XTML prompt as Moonshot's encoder writes it, stopped at
/// `<|end_of_msg|>`, parsed from inside the think channel (or the response one with thinking
/// off). Text that holds a structural marker string is said before it goes: a string prompt
/// lets the server read it as structure.
fn stream_k3(call: Call<'_>, messages: &[Message], tools: &[Value]) -> Exchange {
    let ep = call.endpoint;
    if let Some(why) = k3_images(messages) {
        return setup_error(why);
    }
    let opts = ep.k3_render_options();
    let prompt = match k3::render_messages(messages, tools, &opts) {
        Ok(p) => p,
        Err(e) => return setup_error(format!("the K3 prompt cannot be rendered: {e}")),
    };
    let mut said = Events::default();
    for warning in k3_marker_warnings(messages) {
        said.push(StreamEvent::Warning(warning));
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
    };
    send(
        call,
        body,
        Some(prompt),
        ParseStart::K3 {
            thinking: opts.thinking,
            first_call: calls_so_far(messages),
        },
        said,
    )
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

/// POST `body` (a raw completion request, as built or as saved) and parse the answer; `said`
/// holds what was said before the request.
pub(super) fn send(
    call: Call<'_>,
    body: Value,
    prompt: Option<Prompt>,
    start: ParseStart,
    said: Events,
) -> Exchange {
    let mut decoder = RawDecoder::new(start);
    decoder.asked = logprobs::requested(&body);
    let decoder = Decoder::Raw(Box::new(decoder));
    Exchange::open(&call, "completions", body, prompt, decoder, said)
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
}

impl RawDecoder {
    pub(crate) fn new(start: ParseStart) -> Self {
        RawDecoder {
            local: LocalParse::new(start),
            progress: Progress::default(),
            bytes: 0,
            asked: 0,
            got_tokens: false,
        }
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
        let local = &mut self.local;
        local.finish(out);
        let finished = self.progress.finish_reason.is_some() || local.turn_ended();
        let (error, cancelled) = http::outcome(end, finished, self.bytes, started, out);
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
        result.incomplete_calls = self.local.incomplete();
        let parsed = self.local.into_parsed();
        result.content = parsed.content;
        result.reasoning = parsed.reasoning;
        result.tool_calls = parsed.tool_calls;
        warnings.extend(parsed.warnings.iter().map(ToString::to_string));
        result.warnings = warnings;
        result
    }
}
