//! What the conformance requests brought back, as plain data: the checks read only this, so
//! they run as well on hand-made answers as on a server's.

use serde_json::Value;

pub use kimi_client::answer::{Answer, CallRec, Chunk};
use kimi_protocol::Mode;

/// Everything one conformance run recorded.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub mode: Mode,
    pub model: String,
    /// The model thinks (its template reasons before answering).
    pub thinks: bool,
    /// Raw mode asked for token ids (`logprobs` with `return_tokens_as_token_ids`).
    pub asked_token_ids: bool,
    pub exchanges: Vec<Exchange>,
}

/// One request of the set, sent streamed and (when asked) again non-streamed.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// The request's name in the set (`nested`, `parallel`, ...), with its round.
    pub request: String,
    /// Which repetition of the set (from 1).
    pub round: usize,
    /// The tools offered, OpenAI-style.
    pub tools: Vec<Value>,
    pub expect: Expect,
    /// Bytes of the prompt this client renders for the request (raw mode sends exactly it;
    /// in chat mode the server renders its own, which should grow alike).
    pub rendered_bytes: usize,
    pub streamed: Answer,
    pub plain: Option<Answer>,
}

/// What a correct server's answer holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Expect {
    /// At least one call.
    #[default]
    Calls,
    /// At least two calls in one answer.
    Parallel,
    /// No call at all: a plain answer.
    NoCall,
    /// Either (an answer to a tool result may call again).
    Any,
}
