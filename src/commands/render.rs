//! `kimi-tui render`: request JSON in, prompt bytes out.

use anyhow::Result;
use serde_json::Value;

use super::{input, write_stdout};
use crate::cli::RenderArgs;
pub use kimi_protocol::request::RenderRequest;

pub fn run(args: &RenderArgs) -> Result<()> {
    let (name, text) = input::read(args.file.as_deref())?;
    let value: Value = input::json(&name, &text, "a request object")?;
    let req = RenderRequest::try_from(value).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let template = args.template.or(req.template).unwrap_or_default();
    let mut opts = req.options(template, !args.template_only);
    opts.sort_tool_keys = args.sort_tool_keys;
    write_stdout(req.render(opts).as_bytes())
}
