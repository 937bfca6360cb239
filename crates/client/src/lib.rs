//! Streaming from a server. Both modes produce the same [`kimi_protocol::StreamEvent`]s and [`TurnResult`]:
//! raw mode (`completions.rs`) renders the prompt and parses markers locally; chat mode
//! (`chat.rs`) assembles `tool_calls` deltas. `http.rs` holds what they share: the client, the
//! request, timeouts, cancellation and error messages; `reader.rs` reads the SSE body and
//! `exchange.rs` turns one request into a stream of events; `turn_stream.rs` is the turn.

pub mod ab;
pub mod answer;
mod chat;
mod chat_reasoning;
mod chat_request;
mod completions;
mod connect;
mod error;
pub mod event_json;
mod events;
mod exchange;
mod http;
pub mod log;
pub mod logprobs;
mod markers;
pub mod probe;
mod reader;
pub mod replay;
pub mod repro;
mod resent;
mod retry;
pub mod sse;
mod turn_stream;
mod url;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use chat_request::{ReasoningField, is_moonshot, partial_mode_spelling};
pub use connect::ConnectCause;
pub use error::BackendError;
pub use http::{MODELS_KEPT, http_client};
pub use logprobs::LogprobsOutcome;
pub use retry::{RetryPolicy, parse_retry_after};
pub use turn_stream::{TurnItem, TurnStream};
pub use url::{host_and_port, redact_url};

use kimi_protocol::{Message, Mode, Model, RenderOptions, Template, ToolCall, Usage};

/// Everything needed to reach one model.
#[derive(Clone, PartialEq)]
pub struct Endpoint {
    pub mode: Mode,
    /// Up to and including `/v1`, without a trailing slash, and without any `user:password@`
    /// (this is the form shown and saved).
    pub base_url: String,
    /// `base_url` as configured, userinfo included: only ever handed to reqwest, which sends
    /// the userinfo as Basic auth.
    request_base: String,
    pub model: String,
    pub api_key: Option<String>,
    pub temperature: f64,
    pub max_tokens: u32,
    pub connect_timeout: Duration,
    /// The longest wait for the headers, for each streamed event (a server trickling one event
    /// forever hits it too), and for a whole non-streamed body.
    pub idle_timeout: Duration,
    /// The longest wait for the next event while only SSE keepalive comments arrive (each
    /// restarts the idle wait, but not past this); [`KEEPALIVE_LIMIT`] unless a test shortens
    /// it. Never shorter than `idle_timeout`.
    pub keepalive_limit: Duration,
    /// Raw mode: sort tool schema keys when rendering.
    pub sort_tool_keys: bool,
    /// Break special-token strings in tool results before sending (both modes).
    pub neutralize_tool_markers: bool,
    // Raw mode and the Kimi K2 family: the template, its keyword arguments,
    // and the tokenizer-side preprocessing. See `Endpoint::raw_render_options`.
    /// Raw mode: the chat template; `None` picks it from the model name
    /// (`Template::for_model`).
    pub template: Option<Template>,
    /// Raw mode: the `thinking` keyword (K2.5/K2.6); `None` leaves it to the template (on).
    pub thinking: Option<bool>,
    /// Raw mode: K2.6's `preserve_thinking` keyword (secondhand rule).
    pub preserve_thinking: bool,
    /// Raw mode: apply Moonshot's tokenizer preprocessing for K2-Thinking/K2.5/K2.6 (sorted
    /// tool keys, K2.5/K2.6 TypeScript declaration), as official servers do. On by default.
    pub preprocess_tools: bool,
    // Chat mode and thinking models.
    /// Chat mode: under which name(s) assistant reasoning is sent back.
    pub reasoning_field: ReasoningField,
    // Transient failures.
    /// Retrying a request that failed before its answer began (the agent's loop).
    pub retry: RetryPolicy,
    // Token level.
    /// Ask for token-level data with this many alternatives per token (0: off). Raw mode:
    /// `logprobs: N` and `return_tokens_as_token_ids`; chat mode: `logprobs: true,
    /// top_logprobs: N`.
    pub logprobs: u8,
    /// Kimi K3's thinking effort (`low`, `high`, `max`); `None`: the model's default (`max`).
    pub thinking_effort: Option<String>,
    /// `tool_choice` when tools are offered (`auto` when `None`).
    pub tool_choice: Option<String>,
    /// `response_format` of every request, checked by [`check_response_format`].
    pub response_format: Option<serde_json::Value>,
    /// The profile set `temperature` itself (K3 on Moonshot's API fixes it: said, not sent).
    pub temperature_set: bool,
}

/// How long keepalive comments alone may stand in for events: ten minutes without a real
/// event, however many comments came, ends the turn. A model thinking where the stream does
/// not show it gets that long; a server stuck after part of an answer gets no longer.
pub const KEEPALIVE_LIMIT: Duration = Duration::from_secs(600);

/// The thinking efforts Kimi K3 accepts (its encoder refuses `medium`).
pub const THINKING_EFFORTS: [&str; 3] = ["low", "high", "max"];

/// The `tool_choice` values Kimi's API accepts (no named function).
pub const TOOL_CHOICES: [&str; 3] = ["auto", "none", "required"];

/// Why `format` is not a `response_format` Kimi's API takes: `{"type": "text" | "json_object"}`,
/// or `{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}`.
pub fn check_response_format(format: &serde_json::Value) -> Result<(), ResponseFormatError> {
    match format.get("type").and_then(serde_json::Value::as_str) {
        Some("text" | "json_object") => Ok(()),
        Some("json_schema") => {
            let js = format.get("json_schema");
            let named = js
                .and_then(|j| j.get("name"))
                .and_then(serde_json::Value::as_str)
                .is_some_and(|n| !n.is_empty());
            let schema = js
                .and_then(|j| j.get("schema"))
                .is_some_and(serde_json::Value::is_object);
            if named && schema {
                Ok(())
            } else {
                Err(ResponseFormatError::IncompleteSchema)
            }
        }
        _ => Err(ResponseFormatError::UnknownType),
    }
}

/// Why a `response_format` is not one Kimi's API takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResponseFormatError {
    #[error("expected type = \"text\", \"json_object\" or \"json_schema\"")]
    UnknownType,
    #[error("json_schema needs json_schema.name and a json_schema.schema table")]
    IncompleteSchema,
}

impl Endpoint {
    pub fn new(mode: Mode, base_url: &str, model: &str) -> Self {
        let base = base_url.trim_end_matches('/');
        Endpoint {
            mode,
            base_url: redact_url(base),
            request_base: base.to_owned(),
            model: model.to_owned(),
            api_key: None,
            temperature: 0.6,
            max_tokens: 4096,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            keepalive_limit: KEEPALIVE_LIMIT,
            sort_tool_keys: false,
            neutralize_tool_markers: false,
            template: None,
            thinking: None,
            preserve_thinking: false,
            preprocess_tools: true,
            reasoning_field: ReasoningField::default(),
            retry: RetryPolicy::NONE,
            logprobs: 0,
            thinking_effort: None,
            tool_choice: None,
            response_format: None,
            temperature_set: false,
        }
    }

    /// Whether this turn's model thinks: a thinking template with `thinking` not turned off
    /// (K2-Thinking ignores the switch: it always thinks).
    pub fn thinks(&self) -> bool {
        match self.template() {
            Template::K2Instruct => false,
            Template::K2Thinking => true,
            Template::K25 | Template::K26 | Template::K3 => self.thinking != Some(false),
        }
    }

    /// The template raw mode renders: the configured one, else the model name's.
    pub fn template(&self) -> Template {
        self.template
            .unwrap_or_else(|| Template::for_model(&self.model))
    }

    /// The rendering options of a raw-mode request.
    pub fn raw_render_options(&self) -> RenderOptions {
        RenderOptions {
            add_generation_prompt: true,
            sort_tool_keys: self.sort_tool_keys,
            neutralize_tool_markers: self.neutralize_tool_markers,
            template: self.template(),
            thinking: self.thinking,
            preserve_thinking: self.preserve_thinking,
            preprocess_tools: self.preprocess_tools,
        }
    }

    /// The options of a Kimi K3 raw prompt: Moonshot's encoder, a generation prompt, the
    /// profile's thinking, effort (the encoder's `max` by default) and tool choice.
    pub fn k3_render_options(&self) -> kimi_protocol::k3::K3Options {
        kimi_protocol::k3::K3Options {
            thinking: self.thinking != Some(false),
            thinking_effort: Some(self.thinking_effort.clone().unwrap_or_else(|| "max".into())),
            tool_choice: self.tool_choice.clone().map(serde_json::Value::String),
            response_format: self.response_format.clone(),
            ..kimi_protocol::k3::K3Options::default()
        }
    }

    /// Raw mode cannot speak to this model with this template: Kimi K3 reuses K2's token ids
    /// for another protocol, so no K2 template may be sent to a K3 model, whatever `template`
    /// says (the K3 template is what it speaks).
    pub fn raw_mode_refusal(&self) -> Option<String> {
        (Model::classify(&self.model) == Model::K3 && self.template().is_k2()).then(|| {
            format!(
                "raw mode cannot send a {} prompt to {}: Kimi K3 speaks its own XTML format; set template = \"k3\" (or leave template unset)",
                self.template().as_str(),
                self.model
            )
        })
    }

    /// `{base_url}/{path}` as shown: in errors, the inspector, saved sessions.
    pub(crate) fn shown_url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    /// `{base_url}/{path}` as requested, with the configured userinfo.
    pub(crate) fn request_url(&self, path: &str) -> String {
        format!("{}/{path}", self.request_base)
    }
}

// By hand: the derived one would print the key and the userinfo.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("mode", &self.mode)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// One entry of `/models`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub id: String,
    /// The context length in tokens: vLLM's `max_model_len`, or `context_length` /
    /// `context_window` as other servers name it; `None` when the server does not say.
    pub context_length: Option<u64>,
}

/// What `/models` listed, bounded: the first entries (see [`MODELS_KEPT`]) and the
/// models asked about, and how many others the server named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
    /// Entries counted but not kept.
    pub unlisted: usize,
}

impl ModelList {
    /// How many models the server listed.
    pub fn total(&self) -> usize {
        self.models.len() + self.unlisted
    }
}

impl From<Vec<ModelInfo>> for ModelList {
    fn from(models: Vec<ModelInfo>) -> Self {
        ModelList {
            models,
            unlisted: 0,
        }
    }
}

/// How one request ended, with everything that arrived.
#[derive(Debug, Clone, Default)]
pub struct TurnResult {
    /// Assistant text, exactly as received (markers removed).
    pub content: String,
    /// The model's reasoning (thinking models), markers removed; empty when there was none.
    pub reasoning: String,
    /// Complete calls, in order, ids verbatim.
    pub tool_calls: Vec<ToolCall>,
    /// How many calls began but never completed.
    pub(crate) incomplete_calls: usize,
    /// As the server reported it, if it did.
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub warnings: Vec<String>,
    /// Set when the stream failed; `content` then holds the partial answer.
    pub error: Option<BackendError>,
    pub cancelled: bool,
    /// What became of the request's `logprobs`.
    pub logprobs: LogprobsOutcome,
}

impl TurnResult {
    /// The finish reason decided from what arrived: calls beat whatever the server said.
    pub fn effective_finish(&self) -> &str {
        if !self.tool_calls.is_empty() {
            "tool_calls"
        } else if self.incomplete_calls > 0 {
            "length"
        } else {
            self.finish_reason.as_deref().unwrap_or("stop")
        }
    }

    /// The assistant message to append to the conversation.
    pub fn assistant_message(&self) -> Message {
        Message {
            reasoning_content: (!self.reasoning.is_empty()).then(|| self.reasoning.clone()),
            ..Message::assistant_with_calls(self.content.clone(), self.tool_calls.clone())
        }
    }
}

/// One request of a turn in the endpoint's mode; with `prefix`, one that continues that
/// edited start of the answer.
fn stream_once(
    call: http::Call<'_>,
    messages: &[Message],
    tools: &[Value],
    prefix: Option<&str>,
) -> exchange::Exchange {
    match call.endpoint.mode {
        Mode::Raw => completions::stream(call, messages, tools, prefix),
        Mode::Chat => chat::stream(call, messages, tools, prefix),
    }
}

/// A configured connection to a server.
#[derive(Debug, Clone)]
pub struct Backend {
    endpoint: Endpoint,
    client: reqwest::Client,
    /// A request with `logprobs` has succeeded on this connection: a later 400 is not
    /// taken for a refusal of them unless its message names them.
    logprobs_confirmed: Arc<AtomicBool>,
}

impl Backend {
    pub fn new(endpoint: Endpoint) -> Result<Self, BackendError> {
        let client = http::client(&endpoint)?;
        Ok(Backend {
            endpoint,
            client,
            logprobs_confirmed: Arc::default(),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// A request of this backend's client to `endpoint` (its own, or a variant of it).
    fn call<'a>(&'a self, endpoint: &'a Endpoint, cancel: &'a CancellationToken) -> http::Call<'a> {
        http::Call {
            client: &self.client,
            endpoint,
            cancel,
        }
    }

    /// Send the conversation and stream the answer: each event as it arrives, then the end
    /// ([`TurnItem::Done`]) with the result. Never fails outright: errors are in
    /// `TurnResult::error`, alongside whatever arrived before them. The events say everything
    /// a trace holds (`Trace::record` builds one from them); the result keeps no copy. Nothing
    /// is read from the server while events wait to be taken, and `cancel` ends the stream at
    /// once with what arrived.
    pub fn stream_turn<'a>(
        &'a self,
        messages: &'a [Message],
        tools: &'a [Value],
        cancel: &'a CancellationToken,
    ) -> TurnStream<'a> {
        TurnStream::turn(self, messages, tools, None, cancel)
    }

    /// As [`Backend::stream_turn`], but the answer goes on from `prefix`, the start of an
    /// answer to `messages` as the user edited it from the model's output. Raw mode sends the
    /// rendered prompt followed by `prefix` byte for byte and parses `prefix` and the
    /// completion as one stream (the prefix's text and calls are reported first, its markers
    /// are in the prompt); chat mode sends `prefix` as a partial assistant message
    /// ([`partial_mode_spelling`]). Either way the result is the whole answer, `prefix`
    /// included, unless the request failed before any of the completion arrived.
    pub fn stream_continue<'a>(
        &'a self,
        messages: &'a [Message],
        prefix: &'a str,
        tools: &'a [Value],
        cancel: &'a CancellationToken,
    ) -> TurnStream<'a> {
        TurnStream::turn(self, messages, tools, Some(prefix), cancel)
    }

    /// GET `{base_url}/models`: each model with its context length when the server says it,
    /// bounded (see [`ModelList`]); this endpoint's model and `wanted` are kept wherever the
    /// server lists them.
    pub async fn list_models(&self, wanted: &[&str]) -> Result<ModelList, BackendError> {
        http::list_models(&self.client, &self.endpoint, wanted).await
    }
}
