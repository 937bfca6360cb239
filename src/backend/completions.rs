//! Raw mode: render the Kimi K2 prompt, POST `/completions`, parse the markers locally.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Call};
use super::markers::LocalParse;
use super::{StreamEvent, Trace, TurnResult, Usage};
use crate::protocol::{Message, RenderOptions, render, tokens::IM_END};

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
    let prompt = render(
        messages,
        tools,
        RenderOptions {
            add_generation_prompt: true,
            sort_tool_keys: ep.sort_tool_keys,
        },
    );
    let body = request_body(&ep.model, &prompt, ep.max_tokens, ep.temperature);
    on_event(StreamEvent::Request {
        url: format!("{}/completions", ep.base_url),
        body: body.clone(),
        prompt: Some(prompt.clone()),
    });
    let mut trace = Trace {
        prompt: Some(prompt),
        ..Trace::default()
    };
    let mut local = LocalParse::default();
    let mut finish_reason = None;
    let mut usage = None;
    let mut warnings = Vec::new();
    let started = Instant::now();

    let end = http::stream_sse(
        &call,
        "completions",
        &body,
        &mut trace,
        |data, at_us, trace| {
            let Some(payload) = http::decode::<Choice>(data, &mut warnings, on_event)? else {
                return Ok(());
            };
            let choice = payload.choices.into_iter().next();
            if let Some(u) = payload
                .usage
                .or_else(|| choice.as_ref().and_then(|c| c.usage))
            {
                usage = Some(u);
                on_event(StreamEvent::Usage(u));
            }
            if let Some(choice) = choice {
                if let Some(text) = choice.text.filter(|t| !t.is_empty()) {
                    trace.push_chunk(&text, at_us);
                    on_event(StreamEvent::Chunk {
                        data: text.to_string(),
                        at_us,
                    });
                    local.feed(&text, on_event);
                }
                if choice.finish_reason.is_some() {
                    finish_reason = choice.finish_reason;
                }
            }
            Ok(())
        },
    )
    .await;

    local.finish(on_event);
    trace.markers = local.take_markers();
    let finished = finish_reason.is_some() || local.turn_ended();
    let (error, cancelled) = http::outcome(end, finished, &mut trace, started);
    let mut result = TurnResult {
        finish_reason,
        usage,
        error,
        cancelled,
        ..TurnResult::default()
    };
    result.incomplete_calls = local.incomplete();
    let parsed = local.into_parsed();
    result.content = parsed.content;
    result.tool_calls = parsed.tool_calls;
    warnings.extend(parsed.warnings.iter().map(ToString::to_string));
    result.warnings = warnings;
    result.trace = trace;
    result
}
