//! `kimi-tui replay TRACE --compare HOW`: the saved answer beside the same request sent again
//! another way (see `kimi_client::ab`).

use anyhow::{Context, Result};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::write_stdout;
use kimi_client::Endpoint;
use kimi_client::ab::{self, Variant};
use kimi_protocol::Trace;

pub(super) fn run(saved: &Trace, variant: Variant, ep: &Endpoint, json: bool) -> Result<()> {
    ab::check(saved, variant)
        .map_err(|why| anyhow::anyhow!("cannot compare {}: {why}", variant.as_str()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let cancel = CancellationToken::new();
    let c = runtime
        .block_on(ab::compare(saved, variant, ep, &cancel))
        .map_err(|why| anyhow::anyhow!("cannot compare {}: {why}", variant.as_str()))?;
    let sampled = sampling_note(saved);
    let text = if json {
        let mut v = c.json();
        v["sampling"] = sampled.clone().map_or(Value::Null, Value::String);
        format!(
            "{}\n",
            kimi_core::json_out::to_string(&v).unwrap_or_default()
        )
    } else {
        let mut t = c.table();
        if let Some(note) = &sampled {
            t.push_str(note);
            t.push('\n');
        }
        t
    };
    write_stdout(text.as_bytes())?;
    match c.differences() {
        0 => Ok(()),
        1 => anyhow::bail!("the two answers differ in 1 field"),
        n => anyhow::bail!("the two answers differ in {n} fields"),
    }
}

/// A request that samples can answer otherwise without any fault: said beside the verdict.
fn sampling_note(saved: &Trace) -> Option<String> {
    let t = saved.request.get("temperature").and_then(Value::as_f64)?;
    (t > 0.0).then(|| {
        format!("note: the request samples at temperature {t}: the answers may differ without a server fault (0 compares like for like)")
    })
}
