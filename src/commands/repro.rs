//! `kimi-tui repro FILE`: a saved trace as a minimal test case for a server bug report
//! (see `kimi_client::repro`).

use anyhow::Result;
use kimi_client::repro::{self, Flavor};

use super::{stream_json, write_stdout};
use crate::cli::{ReproArgs, ReproFormat};

pub fn run(args: &ReproArgs) -> Result<()> {
    let file = stream_json::load(&args.file)?;
    write_stdout(render(&repro::from_trace(&file.trace), args.format).as_bytes())
}

/// The reproducer in `format`.
pub fn render(r: &repro::Repro, format: ReproFormat) -> String {
    match format {
        ReproFormat::Jsonl => repro::to_jsonl(r),
        ReproFormat::Vllm => repro::to_python(r, Flavor::Vllm),
        ReproFormat::Sglang => repro::to_python(r, Flavor::Sglang),
    }
}
