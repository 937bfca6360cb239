//! `kimi-tui replay FILE`: send a saved trace's request again, exactly, and say how the new
//! answer compares with the saved one: its bytes, its chunking, its timing, its parse.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::{stream_json, write_stdout};
use crate::cli::ReplayArgs;
use futures_util::StreamExt;
use kimi_client::{Backend, TurnItem, TurnResult};
use kimi_core::config;
use kimi_protocol::Trace;
use kimi_protocol::prompt_diff::{self, PromptDiff};

pub fn run(args: &ReplayArgs) -> Result<()> {
    let file = stream_json::load(&args.file)?;
    let saved = file.trace;
    let mut overrides = args.connect.overrides();
    // The saved body decides the endpoint: the profile's mode does not apply.
    overrides.mode = Some(saved.mode);
    let resolved = config::resolve(&overrides)?;
    let endpoint = resolved
        .profile
        .endpoint()
        .map_err(|m| anyhow::anyhow!("{}: {m}", resolved.origin()))?;
    if let Some(variant) = args.compare {
        return super::replay_compare::run(&saved, variant, &endpoint, args.json);
    }
    let backend = Backend::new(endpoint)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let print = args.print;
    let mut lines = stream_json::Lines::default();
    let mut now = Trace::default();
    let cancel = CancellationToken::new();
    let result = runtime.block_on(async {
        let mut answer = backend.replay(&saved, &cancel);
        while let Some(item) = answer.next().await {
            let ev = match item {
                TurnItem::Event(ev) => ev,
                TurnItem::Done(result) => return result,
            };
            now.record(&ev);
            // As it arrives: a stall shows as a pause in the output too.
            if print && let Some(line) = lines.line(&ev) {
                let _ = write_stdout(format!("{}\n", show(&line)).as_bytes());
            }
        }
        // Never expected: the stream ends with its result.
        kimi_client::TurnResult::default()
    });
    // The saved answer as this build parses it: a parser change is not a server change.
    let (_, again) = kimi_client::replay::reparse(&saved).events_and_result();
    write_stdout(report(&saved, &now, &again, &result).as_bytes())?;
    if let Some(e) = &result.error {
        anyhow::bail!("the replayed request failed: {e}");
    }
    Ok(())
}

/// One event of `--print`, for a person: a chunk with its time and gap, else the event.
fn show(line: &serde_json::Value) -> String {
    if line["type"] == "chunk" {
        let data = line["data"].as_str().unwrap_or_default();
        format!(
            "{:>10.1} ms {:>+9.1} #{:<5} {}",
            line["at_ms"].as_f64().unwrap_or_default(),
            line["gap_ms"].as_f64().unwrap_or_default(),
            line["chunk"],
            kimi_protocol::sanitize::visible(data)
        )
    } else {
        let mut v = line.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("chunk");
        }
        format!(
            "{:>30} {}",
            "→",
            kimi_protocol::sanitize::visible(&v.to_string())
        )
    }
}

/// How the replay compares with the saved answer.
fn report(saved: &Trace, now: &Trace, saved_result: &TurnResult, result: &TurnResult) -> String {
    let mut o = String::new();
    let ms =
        |us: Option<u64>| us.map_or("-".to_owned(), |u| format!("{:.1} ms", u as f64 / 1000.0));
    let _ = writeln!(
        o,
        "replayed: POST {} · HTTP {}",
        now.url,
        now.status.map_or("-".into(), |s| s.to_string())
    );
    let _ = writeln!(
        o,
        "chunks: {} now, {} saved · first chunk {} now, {} saved · total {} now, {} saved",
        now.chunks.len(),
        saved.chunks.len(),
        ms(now.first_chunk_us),
        ms(saved.first_chunk_us),
        ms(now.total_us),
        ms(saved.total_us),
    );
    let _ = writeln!(
        o,
        "result: {}",
        terminal_json(&super::parse::result_json(result))
    );
    let _ = writeln!(o, "stream: {}", compare_streams(saved, now));
    let same_parse = saved_result.content == result.content
        && saved_result.reasoning == result.reasoning
        && saved_result.tool_calls == result.tool_calls
        && saved_result.effective_finish() == result.effective_finish();
    let _ = writeln!(
        o,
        "parsed: {}",
        if same_parse {
            "the same content, reasoning, tool calls and finish reason as saved".to_owned()
        } else {
            format!(
                "differs from the saved answer's: {}",
                terminal_json(&super::parse::result_json(saved_result))
            )
        }
    );
    o
}

/// A result as JSON that is safe to print: the answer is the server's text, and serde_json
/// leaves C1 controls and bidi characters as they are.
fn terminal_json(v: &serde_json::Value) -> String {
    kimi_core::json_out::to_string(v).unwrap_or_else(|e| format!("(not printable: {e})"))
}

/// The new stream against the saved one: the same bytes in the same chunks, the same bytes
/// chunked differently, or where the bytes first differ.
fn compare_streams(saved: &Trace, now: &Trace) -> String {
    let kept = compare_kept(saved, now);
    if saved.dropped_chunks > 0 || now.dropped_chunks > 0 {
        return format!("longer than a trace keeps: compared up to the cap only; {kept}");
    }
    kept
}

/// [`compare_streams`] over the chunks both traces kept.
fn compare_kept(saved: &Trace, now: &Trace) -> String {
    match prompt_diff::diff(&saved.data, &now.data) {
        PromptDiff::Same => {
            let bounds = |t: &Trace| t.chunks.iter().map(|c| c.end).collect::<Vec<_>>();
            let (a, b) = (bounds(saved), bounds(now));
            match a.iter().zip(&b).position(|(x, y)| x != y) {
                None if a.len() == b.len() => {
                    format!(
                        "the same {} bytes in the same {} chunks",
                        now.data.len(),
                        a.len()
                    )
                }
                at => format!(
                    "the same {} bytes, chunked differently from chunk {}",
                    now.data.len(),
                    at.unwrap_or(a.len().min(b.len()))
                ),
            }
        }
        PromptDiff::Append { added } => {
            format!("the saved stream, then {added} more bytes (the saved one ended early)")
        }
        PromptDiff::Changed(c) => {
            let chunk = |t: &Trace| t.chunks.ending_by(t.chunks.len(), c.offset as u64);
            format!(
                "differs from byte {} (saved chunk {}, new chunk {}): after «{}» saved «{}», now «{}»",
                c.offset,
                chunk(saved),
                chunk(now),
                kimi_protocol::sanitize::visible(&c.before),
                kimi_protocol::sanitize::visible(&c.old),
                kimi_protocol::sanitize::visible(&c.new),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replayed_answer_is_printed_without_terminal_controls() {
        let mut result = TurnResult::default();
        result.content = "red \u{9b}31m text \u{202e}reversed \u{1b}]52;c;eA==\u{7}".into();
        let out = terminal_json(&super::super::parse::result_json(&result));
        assert!(
            !out.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{out:?}"
        );
        assert!(
            out.contains("\\u009b31m") && out.contains("\\u202e"),
            "{out}"
        );
        // Still JSON that reads back to the same text.
        let back: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(back["content"], result.content);
    }
}
