//! `kimi-tui render`: request JSON in, prompt bytes out.

use anyhow::Result;
use serde_json::Value;

use super::{input, write_stdout};
use crate::cli::RenderArgs;
use kimi_protocol::Template;
pub use kimi_protocol::request::RenderRequest;

pub fn run(args: &RenderArgs) -> Result<()> {
    let (name, text) = input::read(args.file.as_deref())?;
    // Checked (and its errors worded) as before; then read again as Python reads numbers
    // (`-0` an integer, wide integers with all their digits), which is what the server's
    // template sees.
    let _: Value = input::json(&name, &text, "a request object")?;
    let (value, wide_ints) = kimi_protocol::json::parse(&text)
        .map_err(|e| anyhow::anyhow!("{name}: invalid JSON: {e}"))?;
    // K3 reads the request as JSON itself: its requests may hold shapes the typed K2
    // messages do not keep (non-object messages, flat calls, a `tool` field).
    if args.template.or_else(|| request_template(&value)) == Some(Template::K3) {
        let prompt = kimi_protocol::json::with_wide_ints(&wide_ints, || {
            kimi_protocol::k3::render_request(&value, !args.template_only)
        })
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        return write_stdout(prompt.as_bytes());
    }
    let req = RenderRequest::try_from(value).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let template = args.template.or(req.template).unwrap_or_default();
    let mut opts = req.options(template, !args.template_only);
    opts.sort_tool_keys = args.sort_tool_keys;
    let prompt = kimi_protocol::json::with_wide_ints(&wide_ints, || req.render(opts));
    write_stdout(prompt.as_bytes())
}

/// The template the request's own `"template"` key names, if it is a known one (an unknown
/// name is reported by the K2 reader).
fn request_template(value: &Value) -> Option<Template> {
    value
        .get("template")
        .and_then(Value::as_str)
        .and_then(Template::parse)
}
