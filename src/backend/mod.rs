//! Streaming from a server. Both modes produce the same [`StreamEvent`]s and [`TurnResult`]:
//! raw mode (`completions.rs`) renders the prompt and parses markers locally; chat mode
//! (`chat.rs`) assembles `tool_calls` deltas. `http.rs` holds what they share: the client, the
//! SSE loop, timeouts, cancellation and error messages.

mod chat;
mod completions;
mod error;
mod http;
mod markers;
pub mod probe;
pub mod sse;
pub mod trace;
mod url;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use error::BackendError;
pub use trace::{MarkerHit, Trace};
pub use url::redact_url;

use crate::protocol::{Message, ToolCall};

/// How the client talks to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `/v1/completions`: the client renders the template and parses markers itself.
    #[default]
    Raw,
    /// `/v1/chat/completions` with `tools`: the server parses tool calls.
    Chat,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Raw => "raw",
            Mode::Chat => "chat",
        }
    }
}

/// Everything needed to reach one model.
#[derive(Clone)]
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
    /// Raw mode: sort tool schema keys when rendering.
    pub sort_tool_keys: bool,
    /// Break special-token strings in tool results before sending (both modes).
    pub neutralize_tool_markers: bool,
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
            sort_tool_keys: false,
            neutralize_tool_markers: false,
        }
    }

    /// `{base_url}/{path}` as shown: in errors, the inspector, saved sessions.
    pub fn shown_url(&self, path: &str) -> String {
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

/// Token counts as the server reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: u64,
}

/// What a stream tells its listener as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The request is about to be sent: its URL, JSON body (never holding the key) and, in raw
    /// mode, the rendered prompt.
    Request {
        url: String,
        body: Value,
        prompt: Option<String>,
    },
    /// A raw piece as received (completion text in raw mode, the SSE payload in chat mode).
    Chunk {
        data: String,
        at_us: u64,
    },
    Marker(MarkerHit),
    Text(String),
    ToolCallBegin {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallArgs {
        index: usize,
        delta: String,
    },
    ToolCallEnd {
        index: usize,
    },
    /// The call was cut off; it will not run.
    ToolCallIncomplete {
        index: usize,
    },
    Warning(String),
    Usage(Usage),
}

/// How one request ended, with everything that arrived.
#[derive(Debug, Clone, Default)]
pub struct TurnResult {
    /// Assistant text, exactly as received (markers removed).
    pub content: String,
    /// Complete calls, in order, ids verbatim.
    pub tool_calls: Vec<ToolCall>,
    /// How many calls began but never completed.
    pub incomplete_calls: usize,
    /// As the server reported it, if it did.
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub warnings: Vec<String>,
    /// Set when the stream failed; `content` then holds the partial answer.
    pub error: Option<BackendError>,
    pub cancelled: bool,
    pub trace: Trace,
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
        Message::assistant_with_calls(self.content.clone(), self.tool_calls.clone())
    }
}

/// A configured connection to a server.
#[derive(Debug, Clone)]
pub struct Backend {
    endpoint: Endpoint,
    client: reqwest::Client,
}

impl Backend {
    pub fn new(endpoint: Endpoint) -> Result<Self, BackendError> {
        let client = http::client(&endpoint)?;
        Ok(Backend { endpoint, client })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Send the conversation and stream the answer. Never fails outright: errors are in
    /// `TurnResult::error`, alongside whatever arrived before them.
    pub async fn stream_turn(
        &self,
        messages: &[Message],
        tools: &[Value],
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> TurnResult {
        let call = http::Call {
            client: &self.client,
            endpoint: &self.endpoint,
            cancel,
        };
        crate::logging::request_started(&self.endpoint, messages.len());
        let started = std::time::Instant::now();
        let result = match self.endpoint.mode {
            Mode::Raw => completions::stream(call, messages, tools, on_event).await,
            Mode::Chat => chat::stream(call, messages, tools, on_event).await,
        };
        crate::logging::stream_ended(&result, started.elapsed());
        result
    }

    /// GET `{base_url}/models`: the model ids the server lists.
    pub async fn list_models(&self) -> Result<Vec<String>, BackendError> {
        http::list_models(&self.client, &self.endpoint).await
    }
}
