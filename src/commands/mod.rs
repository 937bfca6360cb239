//! The non-interactive subcommands.

pub mod config_file;
pub mod doctor;
pub mod example_tools;
pub mod exec;
mod exec_prompt;
mod exec_stream;
mod input;
pub mod parse;
pub mod render;
pub mod replay;
mod replay_compare;
pub mod repro;
pub mod rules;
pub mod sessions;
pub mod stream_json;

use std::io::{self, Write};

/// Write to stdout; a closed pipe (`kimi-tui parse | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
