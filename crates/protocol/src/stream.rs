//! What every layer shares about one streamed answer: the connection mode, the events a stream
//! reports as they happen, and the token counts. Data only: the client produces them, the
//! engine and the UI consume them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reasoning_resent::ReasoningResent;
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

/// Token counts as the server reports them. The prompt-cache hit and the reasoning tokens are
/// optional: `None` is "not reported", never 0. Read from the wire shapes (OpenAI, vLLM and
/// SGLang nest them in `prompt_tokens_details` and `completion_tokens_details`, Moonshot's API
/// puts `cached_tokens` at the top level) and from the flat shape saved here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "WireUsage")]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Prompt tokens the server's prefix cache served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Completion tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// This usage and `other`'s added, as a turn's over its requests. A detail stays only when
    /// both report it: a sum over some requests would read as the whole. Saturating: a server's
    /// counts are not trusted to be sane.
    pub fn plus(self, other: Usage) -> Usage {
        let both = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_add(b?));
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cached_tokens: both(self.cached_tokens, other.cached_tokens),
            reasoning_tokens: both(self.reasoning_tokens, other.reasoning_tokens),
        }
    }
}

/// Every shape a usage object arrives in; a detail that is `null` or absent is not reported.
#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(w: WireUsage) -> Self {
        Usage {
            prompt_tokens: w.prompt_tokens.unwrap_or(0),
            completion_tokens: w.completion_tokens.unwrap_or(0),
            total_tokens: w.total_tokens.unwrap_or(0),
            cached_tokens: w
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .or(w.cached_tokens),
            reasoning_tokens: w
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .or(w.reasoning_tokens),
        }
    }
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
    /// The earlier reasoning the prompt carries, when it could be measured.
    pub reasoning_resent: Option<ReasoningResent>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: serde_json::Value) -> Usage {
        serde_json::from_value(v).expect("usage")
    }

    #[test]
    fn the_openai_shape_nests_the_cache_hit_and_the_reasoning() {
        let u = read(
            json!({"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160,
            "prompt_tokens_details": {"cached_tokens": 96},
            "completion_tokens_details": {"reasoning_tokens": 31}}),
        );
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.total_tokens),
            (120, 40, 160)
        );
        assert_eq!((u.cached_tokens, u.reasoning_tokens), (Some(96), Some(31)));
    }

    #[test]
    fn moonshots_shape_puts_the_cache_hit_at_the_top() {
        let u = read(
            json!({"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55,
            "cached_tokens": 48}),
        );
        assert_eq!((u.cached_tokens, u.reasoning_tokens), (Some(48), None));
    }

    #[test]
    fn an_old_or_bare_usage_reports_neither_and_null_details_are_not_zero() {
        let old = read(json!({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}));
        assert_eq!((old.cached_tokens, old.reasoning_tokens), (None, None));
        assert_eq!(old.prompt_tokens, 7);
        let nulls = read(json!({"prompt_tokens": 7, "prompt_tokens_details": null,
            "completion_tokens_details": {"reasoning_tokens": null}}));
        assert_eq!((nulls.cached_tokens, nulls.reasoning_tokens), (None, None));
        // A detail of 0 is reported: 0, not "not reported".
        let zero = read(json!({"prompt_tokens_details": {"cached_tokens": 0}}));
        assert_eq!(zero.cached_tokens, Some(0));
    }

    #[test]
    fn a_sum_keeps_a_detail_only_when_both_report_it() {
        let a = read(
            json!({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
            "prompt_tokens_details": {"cached_tokens": 4},
            "completion_tokens_details": {"reasoning_tokens": 1}}),
        );
        let b = read(
            json!({"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23,
            "cached_tokens": 10}),
        );
        let sum = a.plus(b);
        assert_eq!(
            (sum.prompt_tokens, sum.completion_tokens, sum.total_tokens),
            (30, 5, 35)
        );
        assert_eq!((sum.cached_tokens, sum.reasoning_tokens), (Some(14), None));
        let huge = Usage {
            prompt_tokens: u64::MAX,
            ..a
        };
        assert_eq!(huge.plus(a).prompt_tokens, u64::MAX);
    }

    #[test]
    fn what_is_saved_reads_back_the_same_and_an_old_save_omits_nothing_new() {
        let u = Usage {
            prompt_tokens: 10,
            completion_tokens: 4,
            total_tokens: 14,
            cached_tokens: Some(8),
            reasoning_tokens: Some(3),
        };
        let saved = serde_json::to_value(u).expect("saves");
        assert_eq!(read(saved), u);
        let bare = Usage {
            cached_tokens: None,
            reasoning_tokens: None,
            ..u
        };
        assert_eq!(
            serde_json::to_value(bare).expect("saves"),
            json!({"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14})
        );
    }
}
