//! Raw mode: render the Kimi K2 prompt, POST `/completions`, parse the markers locally.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::BackendError;
use super::TurnResult;
use super::http::{self, Call, Progress, Prompt, StreamChoice};
use super::logprobs::{self, CompletionLogprobs};
use super::markers::LocalParse;
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

pub(super) async fn stream(
    call: Call<'_>,
    messages: &[Message],
    tools: &[Value],
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> TurnResult {
    let ep = call.endpoint;
    // Refused before anything is rendered or sent.
    if let Some(why) = ep.raw_mode_refusal() {
        return TurnResult {
            error: Some(BackendError::Setup(why)),
            ..TurnResult::default()
        };
    }
    let opts = ep.raw_render_options();
    let (prompt, from_text) = render_traced(messages, tools, opts);
    let mut body = request_body(&ep.model, &prompt, ep.max_tokens, ep.temperature);
    logprobs::raw_fields(&mut body, ep.logprobs);
    let mut got_tokens = false;
    let prompt = Prompt {
        text: prompt,
        text_markers: from_text.into_iter().map(|r| (r.start, r.end)).collect(),
    };
    // A K2.5/K2.6 prompt ends inside `<think>`: the completion starts in the reasoning.
    let mut local = LocalParse::with_reasoning(opts.ends_in_reasoning());
    let mut progress = Progress::default();
    let mut bytes = 0u64;
    let started = Instant::now();

    let end = http::stream_sse(
        &call,
        "completions",
        body,
        Some(prompt),
        on_event,
        |data, at_us, on_event| {
            let Some(choice) = progress.accept::<Choice>(data, on_event)? else {
                return Ok(());
            };
            let text = choice.text.unwrap_or_default();
            if !text.is_empty() {
                bytes += text.len() as u64;
                on_event(StreamEvent::Chunk {
                    data: text.to_string(),
                    at_us,
                });
            }
            // Reported after its chunk (the trace files tokens under the last chunk) and
            // before the parser's events for it.
            if let Some(lp) = choice.logprobs {
                let tokens = lp.tokens(&text);
                if !tokens.is_empty() {
                    got_tokens = true;
                    on_event(StreamEvent::Tokens(tokens));
                }
            }
            if !text.is_empty() {
                local.feed(&text, on_event);
            }
            Ok(())
        },
    )
    .await;

    local.finish(on_event);
    let finished = progress.finish_reason.is_some() || local.turn_ended();
    let (error, cancelled) = http::outcome(end, finished, bytes, started, on_event);
    let Progress {
        finish_reason,
        usage,
        mut warnings,
    } = progress;
    let mut result = TurnResult {
        finish_reason,
        usage,
        error,
        cancelled,
        logprobs: logprobs::outcome(ep.logprobs, got_tokens),
        ..TurnResult::default()
    };
    result.incomplete_calls = local.incomplete();
    let parsed = local.into_parsed();
    result.content = parsed.content;
    result.reasoning = parsed.reasoning;
    result.tool_calls = parsed.tool_calls;
    warnings.extend(parsed.warnings.iter().map(ToString::to_string));
    result.warnings = warnings;
    result
}
