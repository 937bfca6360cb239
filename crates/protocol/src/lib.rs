//! The Kimi K2 wire format: tokens, the chat template, the stream parser. Pure: no I/O.

pub mod call_id;
pub mod completion;
pub mod event;
pub mod json;
pub mod message;
pub mod parser;
pub mod special;
pub mod template;
pub mod tokens;
pub mod warning;

pub use completion::{Collector, FinishReason, ParsedCompletion, parse_chunks, parse_completion};
pub use event::Event;
pub use message::{Content, FunctionCall, Message, ToolCall};
pub use parser::Parser;
pub use template::{RenderOptions, render, render_traced};
pub use tokens::Marker;
pub use warning::Warning;
