//! A/B: a recorded request sent again another way (streamed again, non-streamed, or in the
//! other mode: this client's rendered prompt and parser against the server's own chat template
//! and tool parser), and both answers set side by side ([`diff`]). Servers often break on one
//! path only: the streaming tool parser, or a template that differs from the official one.

pub mod diff;
mod server_prompt;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::answer::Answer;
use super::{Backend, BackendError, Endpoint, probe, replay};
use kimi_protocol::{Message, Mode, RequestSent, StreamEvent, Trace};

pub use diff::{Comparison, Row};

/// How the recorded request is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The same body, streamed again.
    Stream,
    /// The same body with `"stream": false`.
    NonStream,
    /// To the completions endpoint with this client's rendered prompt (from a chat request).
    Raw,
    /// To the chat endpoint with the messages the raw prompt was rendered from.
    Chat,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Stream,
        Variant::NonStream,
        Variant::Raw,
        Variant::Chat,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Stream => "stream",
            Variant::NonStream => "non-stream",
            Variant::Raw => "raw",
            Variant::Chat => "chat",
        }
    }

    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The variant that sends a request of `mode` to the other endpoint.
    pub fn other_mode(mode: Mode) -> Variant {
        match mode {
            Mode::Raw => Variant::Chat,
            Mode::Chat => Variant::Raw,
        }
    }
}

/// One side of a comparison: how it was sent and what came back.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// `saved`, `stream`, `non-stream`, `raw`, `chat`.
    pub label: String,
    pub mode: Mode,
    pub streamed: bool,
    pub answer: Answer,
    /// The prompt the model saw: raw mode's as sent; chat mode's as the server rendered it,
    /// when it shows it (see [`server_prompt`]).
    pub prompt: Option<String>,
    /// Why the prompt is not there (chat mode), for the report.
    pub prompt_note: Option<String>,
}

impl Side {
    /// `raw, streamed`.
    pub fn how(&self) -> String {
        let sent = if self.streamed {
            "streamed"
        } else {
            "non-streamed"
        };
        format!("{}, {sent}", self.mode.as_str())
    }
}

/// The saved answer of `trace`, parsed again by this build (a parser change is not a server
/// change).
pub fn saved(trace: &Trace) -> Side {
    let (events, result) = replay::reparse(trace).events_and_result();
    Side {
        label: "saved".into(),
        mode: trace.mode,
        streamed: trace.request.get("stream") != Some(&Value::Bool(false)),
        answer: Answer {
            // A raw trace keeps the usage apart from the completion text it re-parses.
            usage: result.usage.or(trace.usage),
            ..Answer::from_turn(trace.mode, &events, &result)
        },
        prompt: trace.prompt.clone(),
        prompt_note: None,
    }
}

/// The endpoint the variant goes to: `ep` (the profile's server, key and timeouts) in the
/// variant's mode, for the model the saved request named.
pub fn endpoint_for(saved: &Trace, variant: Variant, ep: &Endpoint) -> Endpoint {
    let mut ep = ep.clone();
    ep.mode = match variant {
        Variant::Stream | Variant::NonStream => saved.mode,
        Variant::Raw => Mode::Raw,
        Variant::Chat => Mode::Chat,
    };
    let body = &saved.request;
    if let Some(model) = body.get("model").and_then(Value::as_str) {
        model.clone_into(&mut ep.model);
    }
    // The same sampling as the saved request: otherwise the two answers differ by design.
    if let Some(t) = body.get("temperature").and_then(Value::as_f64) {
        ep.temperature = t;
        ep.temperature_set = true;
    }
    if let Some(n) = body
        .get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Value::as_u64)
    {
        ep.max_tokens = u32::try_from(n).unwrap_or(u32::MAX);
    }
    ep
}

/// The messages and tools of a saved request: a chat request's own, or those a raw prompt
/// was rendered from.
fn conversation(saved: &Trace) -> Result<(Vec<Message>, Vec<Value>), String> {
    let from = match saved.mode {
        Mode::Chat => &saved.request,
        Mode::Raw => saved.source.as_ref().ok_or(
            "this trace does not hold the messages its prompt was rendered from (it was saved by an older kimi-tui): only `stream` and `non-stream` can compare it",
        )?,
    };
    let messages = from
        .get("messages")
        .cloned()
        .map(serde_json::from_value::<Vec<Message>>)
        .transpose()
        .map_err(|e| format!("the request's messages cannot be read: {e}"))?
        .ok_or("the request has no messages")?;
    let tools = from
        .get("tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok((messages, tools))
}

/// A chat request that continues an edited answer: Moonshot's partial message or vLLM's
/// `continue_final_message`.
fn continues(body: &Value) -> bool {
    let partial_last = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .is_some_and(|m| m.get("partial") == Some(&Value::Bool(true)));
    partial_last || body.get("continue_final_message") == Some(&Value::Bool(true))
}

/// Whether `variant` can be sent for `saved`; why not, otherwise.
pub fn check(saved: &Trace, variant: Variant) -> Result<(), String> {
    match (variant, saved.mode) {
        (Variant::Raw, Mode::Raw) => {
            Err("the request is already a raw one: compare `stream`, `non-stream` or `chat`".into())
        }
        (Variant::Chat, Mode::Chat) => {
            Err("the request is already a chat one: compare `stream`, `non-stream` or `raw`".into())
        }
        (Variant::Raw | Variant::Chat, _) if saved.prefix.is_some() || continues(&saved.request) => Err(
            "the request continued an edited answer, which the other endpoint cannot be sent: compare `stream` or `non-stream`".into(),
        ),
        (Variant::Raw | Variant::Chat, _) => conversation(saved).map(drop),
        _ if saved.request.is_null() => Err("the trace holds no request body".into()),
        _ => Ok(()),
    }
}

/// The saved answer of `saved` beside the same request sent again as `variant` says (see
/// [`send`]). A chat request's prompt is the server's to render: it is asked for (see
/// [`server_prompt`]) when the other side has one to compare it with.
pub async fn compare(
    saved: &Trace,
    variant: Variant,
    ep: &Endpoint,
    cancel: &CancellationToken,
) -> Result<Comparison, String> {
    let again = send(saved, variant, ep, cancel).await?;
    let mut before = self::saved(saved);
    if before.prompt.is_none() && again.prompt.is_some() {
        let chat = endpoint_for(saved, Variant::Stream, ep);
        match server_prompt::fetch(&chat, &saved.request).await {
            Ok(p) => before.prompt = Some(p),
            Err(why) => before.prompt_note = Some(why),
        }
    }
    Ok(diff::compare(&before, &again))
}

/// Send `saved`'s request again as `variant` says, to `ep` (see [`endpoint_for`]), and return
/// what came back. A failed request is a side with its error: the comparison shows it.
pub async fn send(
    saved: &Trace,
    variant: Variant,
    ep: &Endpoint,
    cancel: &CancellationToken,
) -> Result<Side, String> {
    check(saved, variant)?;
    let ep = endpoint_for(saved, variant, ep);
    let backend = Backend::new(ep.clone()).map_err(|e| e.to_string())?;
    let mut side = Side {
        label: variant.as_str().into(),
        mode: ep.mode,
        streamed: variant != Variant::NonStream,
        ..Side::default()
    };
    if saved.mode == Mode::Chat && matches!(variant, Variant::Stream | Variant::NonStream) {
        side.prompt_note = Some(
            "the same messages and tools on both sides (the server renders the prompt)".into(),
        );
    }
    match variant {
        Variant::Stream => {
            let stream = backend.replay(saved, cancel);
            let (events, result) = stream.events_and_result().await;
            side.answer = Answer::from_turn(ep.mode, &events, &result);
            side.prompt.clone_from(&saved.prompt);
        }
        Variant::NonStream => {
            side.answer = non_streamed(saved, &ep).await;
            side.prompt.clone_from(&saved.prompt);
        }
        Variant::Raw | Variant::Chat => {
            let (messages, tools) = conversation(saved)?;
            let stream = backend.stream_turn(&messages, &tools, cancel);
            let (events, result) = stream.events_and_result().await;
            side.answer = Answer::from_turn(ep.mode, &events, &result);
            // The last request sent: the client sends again without `logprobs` when a
            // server refuses them.
            let sent = events.iter().rev().find_map(|e| match e {
                StreamEvent::Request(r) => Some(r),
                _ => None,
            });
            match (ep.mode, sent) {
                (Mode::Raw, Some(sent)) => side.prompt.clone_from(&sent.prompt),
                (Mode::Chat, Some(sent)) => match server_prompt::fetch(&ep, &sent.body).await {
                    Ok(p) => side.prompt = Some(p),
                    Err(why) => side.prompt_note = Some(why),
                },
                (_, None) => {}
            }
        }
    }
    Ok(side)
}

/// The saved body again with `"stream": false`: a raw answer is parsed by the same decoder as
/// a stream of one chunk, a chat answer read from its message.
async fn non_streamed(saved: &Trace, ep: &Endpoint) -> Answer {
    let path = kimi_protocol::trace_file::endpoint_of(saved.mode);
    let v = match probe::post_plain(ep, path, &saved.request).await {
        Ok(v) => v,
        Err(e) => return failed(&e),
    };
    if saved.mode == Mode::Chat {
        return Answer::from_chat_message(&v);
    }
    let text = v
        .pointer("/choices/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut one = Trace::started(RequestSent {
        mode: Mode::Raw,
        body: saved.request.clone(),
        prompt: saved.prompt.clone(),
        prefix: saved.prefix.clone(),
        ..RequestSent::default()
    });
    one.push_chunk(text, 0);
    one.done = true;
    one.finish_reason = v
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (events, result) = replay::reparse(&one).events_and_result();
    let mut a = Answer::from_turn(Mode::Raw, &events, &result);
    a.usage = crate::answer::usage_of(&v);
    a
}

fn failed(e: &BackendError) -> Answer {
    Answer {
        error: Some(e.to_string()),
        ..Answer::default()
    }
}

#[cfg(test)]
mod tests;
