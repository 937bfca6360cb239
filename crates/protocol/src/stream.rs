//! What every layer shares about one streamed answer: the connection mode, the events a stream
//! reports as they happen, and the token counts. Data only: the client produces them, the
//! engine and the UI consume them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::trace::MarkerHit;
use crate::trace_tokens::TokenLogprob;

/// How the client talks to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
    /// The request is about to be sent: everything its trace starts from.
    Request(Box<RequestSent>),
    /// The response's status arrived (any status: an error response is reported too).
    Response {
        status: u16,
    },
    /// A raw piece as received (completion text in raw mode, the SSE payload in chat mode).
    Chunk {
        data: String,
        at_us: u64,
    },
    Marker(MarkerHit),
    /// Token-level data (`logprobs`) of the chunk just reported: real token boundaries, ids,
    /// log-probabilities and alternatives (see `trace_tokens`).
    Tokens(Vec<TokenLogprob>),
    Text(String),
    /// Reasoning of a thinking model (`reasoning_content`/`reasoning` deltas in chat mode, the
    /// text between `<think>` and `</think>` in raw mode). Never part of the answer.
    Reasoning(String),
    /// Everything received as reasoning so far was the answer (a K3 model that wrote its
    /// answer in the think channel): it moves, once, to the front of the answer.
    ReasoningWasText,
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
    /// What the server said besides the answer (headers, finish reason, `[DONE]`): for the
    /// inspector's header and footer.
    Meta(StreamMeta),
    /// The response is over (events worked out from what arrived may follow): how long it
    /// took from the request, and why it failed, if it did (a cancel is no failure).
    Finished {
        total_us: u64,
        error: Option<String>,
    },
}

/// What a stream reports besides the answer, recorded in its trace.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamMeta {
    /// The response headers, secrets masked ([`crate::trace::redact_headers`]).
    Headers(Vec<(String, String)>),
    /// A choice's `finish_reason`, as sent.
    FinishReason(String),
    /// `data: [DONE]` arrived.
    Done,
    /// The user cancelled; reading stopped (a resumed session shows the answer cancelled).
    Cancelled,
}

/// One request as it goes out, the key redacted: what its trace starts with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSent {
    pub mode: Mode,
    /// As shown: without any userinfo.
    pub url: String,
    /// Request headers as sent, with `Authorization` redacted.
    pub headers: Vec<(String, String)>,
    /// The JSON body sent (it never holds the API key).
    pub body: Value,
    /// Raw mode: the rendered prompt.
    pub prompt: Option<String>,
    /// Raw mode: byte ranges in `prompt` of special-token strings that came from user
    /// messages or tool results, not from the template.
    pub prompt_text_markers: Vec<(usize, usize)>,
    /// Raw mode: what `prompt` was rendered from, `{"messages": [...], "tools": [...]}`, so
    /// that the request can be sent again to the server's chat endpoint (an A/B of the two
    /// templates and parsers).
    pub source: Option<Value>,
    /// Raw mode, an answer continued from an edit: the edited start of the answer, which ends
    /// `prompt` and which the parse of the completion began with.
    pub prefix: Option<String>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}
