//! Kimi K3: the XTML prompt format and its completions. K3 is not a K2 model: its structural
//! tokens (`<|open|>`, `<|close|>`, `<|sep|>`, `<|end_of_msg|>`) reuse K2's ids for other
//! strings, so nothing of the K2 template or parser code applies.
//!
//! Rendering has two layers, as for the K2 family: the llama.cpp Jinja port of K3's prompt
//! format alone (layer A), and Moonshot's own Python encoder, which raw mode must reproduce
//! (layers A+B: arguments given as a JSON string are parsed, keys sort by code point, `medium`
//! effort is refused). [`K3Options::encoder`] picks between them. [`K3Parser`] splits a
//! streamed completion into reasoning, content and calls, identically at any chunking.

mod args;
mod attrs;
mod bodies;
mod content;
mod error;
pub mod parser;
mod render;
mod request;
mod sorted;
pub mod tokens;
mod tool_results;

pub use error::K3Error;
pub use parser::K3Parser;
pub use render::{K3Options, render};
pub use request::{render_messages, render_request};
pub use tokens::{CLOSE, END_OF_MSG, EOS, OPEN, SEP, STRUCTURAL};
