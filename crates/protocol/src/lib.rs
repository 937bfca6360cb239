//! The Kimi K2 wire format (tokens, the chat templates of the K2 family, the tokenizer-side
//! preprocessing with K2.5's TypeScript tool declaration, the stream parser with its reasoning
//! channel) and the data types every layer shares (stream events, usage, mode, traces), plus
//! the text sanitizers; and Kimi K3's XTML prompt ([`k3`]). Pure: no I/O anywhere in its dependencies.

pub mod call_id;
mod chunk_marks;
pub mod completion;
pub mod event;
pub mod family;
pub mod invisible;
pub mod json;
pub mod k3;
pub mod message;
pub mod parser;
mod produced_log;
pub mod prompt_diff;
pub(crate) mod python;
pub mod reasoning_resent;
pub mod request;
pub mod sanitize;
mod seq_serde;
pub mod special;
pub mod stream;
pub(crate) mod template;
pub mod tokens;
pub mod tools_ts;
pub mod trace;
pub mod trace_file;
pub mod trace_tokens;
pub mod warning;

pub use completion::{
    Collector, FinishReason, ParsedCompletion, parse_chunks, parse_chunks_with, parse_completion,
};
pub use event::Event;
pub use family::{Model, Template};
pub use message::{AnswerEdit, Content, FunctionCall, Message, ToolCall};
pub use parser::Parser;
pub use stream::{Mode, RequestSent, StreamEvent, StreamMeta, Usage};
pub use template::{RenderOptions, render, render_traced, render_with_tools_ts};
pub use tokens::Marker;
pub use trace::{MarkerHit, Trace};
pub use trace_tokens::{TokenLogprob, TokenTrace, TopLogprob};
pub use warning::Warning;
