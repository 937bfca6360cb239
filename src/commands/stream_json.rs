//! The stream of a saved trace (`parse --trace`) or of a replay, one JSON object per line:
//! each chunk with its arrival time and gap, then what the client made of it.

use anyhow::{Context, Result};

use kimi_protocol::trace_file::TraceFile;

pub use kimi_client::event_json::{Lines, is_parsed};

/// Read a saved trace file (see the README's "Inspecting a server").
pub fn load(path: &std::path::Path) -> Result<TraceFile> {
    let (name, text) = super::input::read(Some(path))?;
    TraceFile::parse(&text).with_context(|| format!("{name}: not a trace kimi-tui can read"))
}
