//! `kimi-tui repro`: a trace recorded from a live run against the mock, written as a
//! reproducer, reads back (JSONL) to exactly the recorded chunks, token ids and the events the
//! live run produced; the vLLM and SGLang forms are valid Python holding the same stream.

use std::path::Path;
use std::process::{Command, Output};

use kimi_client::repro::{self, Repro};
use kimi_client::{Backend, Endpoint};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::trace_file::TraceFile;
use kimi_protocol::{Message, Mode, StreamEvent, Trace};
use kimi_tui::commands::stream_json::{Lines, is_parsed};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::weather_tool;

/// One live turn with token ids asked for, recorded as the engine records it.
async fn live(server: &MockServer, mode: Mode) -> (Trace, Vec<StreamEvent>) {
    let mut ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    ep.logprobs = 1;
    let backend = Backend::new(ep).expect("backend");
    let (events, result) = backend
        .stream_turn(
            &[Message::user("What's the weather like in Paris?")],
            &[weather_tool()],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.tool_calls.len(), 1, "{mode:?}");
    let mut trace = Trace::default();
    for e in &events {
        trace.record(e);
    }
    (trace, events)
}

fn repro(dir: &Path, path: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(["repro", path.to_str().expect("utf-8"), "--format", format])
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .output()
        .expect("runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_reads_back_to_the_recorded_chunks_and_the_live_events() {
    let opts = MockOptions {
        // Small pieces: markers split across chunks.
        chunk_bytes: Some(7),
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let whole = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    for (server, mode) in [
        (&server, Mode::Raw),
        (&server, Mode::Chat),
        (&whole, Mode::Raw),
    ] {
        let (trace, events) = live(server, mode).await;
        let path = dir.path().join(format!("{}.json", mode.as_str()));
        std::fs::write(&path, TraceFile::new(trace.clone(), 1).to_json(&[])).expect("write");
        let text = stdout(&tokio::task::block_in_place(|| {
            repro(dir.path(), &path, "jsonl")
        }));
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<Value>(l).is_ok())
        );
        let back: Repro = repro::read_jsonl(&text).expect("reads back");
        assert_eq!(back.header.mode, mode);
        assert_eq!(back.header.model, "moonshotai/Kimi-K2-Instruct");
        assert_eq!(
            back.header.tools[0]["function"]["name"], "get_weather",
            "{mode:?}: the request's tools"
        );
        let chunks: Vec<&str> = back.chunks.iter().map(|c| c.data.as_str()).collect();
        let recorded: Vec<&str> = trace.chunks().map(|(d, _)| d).collect();
        assert_eq!(chunks, recorded, "{mode:?}");
        let mut lines = Lines::default();
        let want: Vec<Value> = events
            .iter()
            .filter_map(|e| lines.line(e))
            .filter(|l| is_parsed(l) && l["type"] != "chunk")
            .collect();
        assert!(want.iter().any(|l| l["type"] == "tool_call_begin"));
        pretty_assertions::assert_eq!(back.parsed.events, want, "{mode:?}");
        assert_eq!(
            back.parsed.result["tool_calls"][0]["function"]["arguments"],
            "{\"city\": \"Paris\"}"
        );
        assert_eq!(back, repro::from_trace(&trace));
        if mode == Mode::Raw && server.base_url() == whole.base_url() {
            // One token per chunk: each chunk carries its token's id, a marker's special id
            // among them.
            assert!(
                back.chunks.iter().all(|c| c.token_ids.len() == 1),
                "{back:?}"
            );
            assert!(
                back.chunks
                    .iter()
                    .any(|c| c.data == "<|tool_call_begin|>" && c.token_ids == [163_597]),
                "{:?}",
                back.chunks
            );
        }
    }
    server.shutdown().await;
    whole.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllm_and_sglang_forms_are_python_holding_the_stream() {
    let server = MockServer::start(
        MockOptions {
            chunk_bytes: Some(5),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let (trace, _) = live(&server, Mode::Raw).await;
    let path = dir.path().join("t.json");
    std::fs::write(&path, TraceFile::new(trace.clone(), 1).to_json(&[])).expect("write");
    for (format, parser) in [("vllm", "KimiK2ToolParser"), ("sglang", "KimiK2Detector")] {
        let text = stdout(&tokio::task::block_in_place(|| {
            repro(dir.path(), &path, format)
        }));
        assert!(text.contains(parser), "{text}");
        assert!(
            text.contains("def test_streamed_matches_kimi_tui"),
            "{text}"
        );
        assert!(text.contains("get_weather"), "{text}");
        let py = dir.path().join(format!("test_{format}.py"));
        std::fs::write(&py, &text).expect("write");
        let compiled = Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(&py)
            .output();
        match compiled {
            Ok(out) => assert!(
                out.status.success(),
                "{format}: {}\n{text}",
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => eprintln!("python3 not found ({e}): syntax not checked"),
        }
        // The deltas: every chunk, in order, as a Python string literal a line.
        let mut from = text.find("DELTAS = [\n").expect("a DELTAS list");
        for (chunk, _) in trace.chunks() {
            let line = format!("    {},\n", serde_json::to_string(chunk).expect("json"));
            let at = text[from..]
                .find(&line)
                .unwrap_or_else(|| panic!("{line:?} not in order in\n{text}"));
            from += at + line.len();
        }
        assert!(text[from..].starts_with("]\n"), "nothing else in DELTAS");
    }
    server.shutdown().await;
}
