//! The inspector's actions on the trace in view: `s` saves it as a replayable file (the
//! README's trace format), `x` writes it as a reproducer, `}`/`{` jump between stalls.

use std::path::Path;

use super::state::App;
use kimi_core::backend::repro;
use kimi_protocol::Trace;
use kimi_protocol::trace_file::TraceFile;

/// Move the inspector to the next (or previous) chunk that came after a stall, from the line
/// on top; says so when there is none.
pub(crate) fn jump(app: &mut App, forward: bool) {
    let view = &app.layers.inspector.view;
    // From the stall (or search match) jumped to last: near the end the view shows it lower
    // than the top, and the next jump must not find it again.
    let from = app
        .layers
        .inspector
        .hit
        .unwrap_or(app.layers.inspector.scroll);
    app.layers.inspector.message = Some(match view.stall_line(from, forward) {
        Some((k, line)) => {
            app.layers.inspector.scroll = line;
            app.layers.inspector.hit = Some(line);
            format!(
                "stall {} of {}: line {}",
                k + 1,
                view.stall_count(),
                line + 1
            )
        }
        None if view.stall_count() == 0 => format!(
            "no stalls (gaps of {} ms or more) in this request",
            app.layers.inspector.stall_ms
        ),
        None if forward => "no stall below".to_owned(),
        None => "no stall above".to_owned(),
    });
}

/// Write `trace` as a trace file in `dir` (created private), every secret of the profile
/// masked; the inspector's footer says where, or why not.
pub(crate) fn save_trace(app: &mut App, trace: Trace, dir: &Path) {
    let now = kimi_core::session::time::now_unix_ms();
    let text = app.secrets.trace_json(&TraceFile::new(trace, now));
    write_beside(app, dir, ("trace", now, "json"), &text, |p| {
        format!("saved to {p} · replay: kimi-tui replay {p}")
    });
}

/// Write `trace` as a reproducer (`kimi-tui repro`'s JSON lines) in `dir`, beside the saved
/// traces, every secret of the profile masked; the footer names the file, or says why not.
pub(crate) fn save_repro(app: &mut App, trace: &Trace, dir: &Path) {
    let now = kimi_core::session::time::now_unix_ms();
    let text = app
        .secrets
        .mask_json(repro::to_jsonl(&repro::from_trace(trace)));
    write_beside(app, dir, ("repro", now, "jsonl"), &text, |p| {
        format!(
            "reproducer written to {p} · vLLM/SGLang tests: s, then kimi-tui repro TRACE --format vllm"
        )
    });
}

/// Write `text` as `STEM-SECONDS.EXT` in `dir`; the footer says `saved(path)` or why not.
fn write_beside(
    app: &mut App,
    dir: &Path,
    (stem, now_ms, ext): (&str, u64, &str),
    text: &str,
    saved: impl FnOnce(&str) -> String,
) {
    // The stream can hold anything the user or the model wrote: private (0600). Two saves in
    // the same second get two files: an earlier one is never replaced.
    let result = kimi_core::private_fs::create_numbered(
        dir,
        &format!("{stem}-{}", now_ms / 1000),
        ext,
        text.as_bytes(),
    );
    app.layers.inspector.message = Some(match result {
        Ok(path) => saved(&path.display().to_string()),
        Err(e) => format!("cannot save in {}: {e}", dir.display()),
    });
    app.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An app whose profile's key is `sk-live-123456`.
    fn app_with_key() -> App {
        let mut app = App::new(
            super::super::state::Connection {
                profile: "p".into(),
                mode: kimi_protocol::Mode::Raw,
                model: "m".into(),
                host: "h".into(),
            },
            kimi_core::tools::Toolbox::default(),
            None,
        );
        app.secrets = kimi_core::redactor::Redactor::new(["sk-live-123456".to_owned()]);
        app
    }

    #[test]
    fn a_saved_trace_is_private_readable_and_holds_no_key() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut app = app_with_key();
        let mut t = Trace {
            error: Some("HTTP 401: key sk-live-123456 is invalid".into()),
            ..Trace::default()
        };
        t.push_chunk("hi", 5);
        save_trace(&mut app, t, &dir.path().join("state"));
        let msg = app.layers.inspector.message.clone().expect("a message");
        let path = msg
            .strip_prefix("saved to ")
            .and_then(|m| m.split(" · ").next())
            .expect("a path");
        let text = std::fs::read_to_string(path).expect("written");
        assert!(!text.contains("sk-live"), "{text}");
        let back = TraceFile::parse(&text).expect("a trace file");
        assert_eq!(back.trace.chunks().collect::<Vec<_>>(), vec![("hi", 5)]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(msg.contains("kimi-tui replay "), "{msg}");
    }

    #[test]
    fn a_reproducer_is_written_beside_the_traces_private_and_without_the_key() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut app = app_with_key();
        let mut t = Trace {
            request: serde_json::json!({"model": "m"}),
            ..Trace::default()
        };
        t.push_chunk("echo sk-live-123456 ", 5);
        t.push_chunk(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0",
            7,
        );
        t.push_chunk("<|tool_call_argument_begin|>{}<|tool_call_end|>", 9);
        let state = dir.path().join("state");
        save_repro(&mut app, &t, &state);
        let msg = app.layers.inspector.message.clone().expect("a message");
        let path = msg
            .strip_prefix("reproducer written to ")
            .and_then(|m| m.split(" · ").next())
            .expect("a path");
        assert!(path.starts_with(state.to_str().expect("utf-8")), "{path}");
        assert!(path.ends_with(".jsonl"), "{path}");
        let text = std::fs::read_to_string(path).expect("written");
        assert!(!text.contains("sk-live"), "{text}");
        let back = repro::read_jsonl(&text).expect("a reproducer");
        assert_eq!(back.chunks.len(), 3);
        assert_eq!(back.chunks[0].data, "echo [redacted] ");
        assert_eq!(back.parsed.result["tool_calls"][0]["function"]["name"], "f");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A second one in the same second gets its own file.
        save_repro(&mut app, &t, &state);
        let again = app.layers.inspector.message.clone().expect("a message");
        assert_ne!(again, msg);
    }
}
