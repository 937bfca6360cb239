//! Saved traces through the binary: a trace saved from a real run against the mock
//! holds no key, `parse --trace` gives exactly the events the live run produced, and `replay`
//! sends the exact body again and says where the new stream differs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kimi_client::{Backend, Endpoint, TurnResult};
use kimi_mock::{MockOptions, MockServer, ScriptedCall};
use kimi_protocol::trace_file::TraceFile;
use kimi_protocol::{Message, Mode, StreamEvent, Trace};
use kimi_tui::commands::stream_json::{Lines, is_parsed};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::weather_tool;

const KEY: &str = "sk-trace-test-0123456789";

pub(super) fn calling_mock() -> MockOptions {
    MockOptions {
        // Small pieces: markers split across chunks, as the parser must survive.
        chunk_bytes: Some(5),
        api_key: Some(KEY.into()),
        tool_calls: vec![ScriptedCall {
            id: None,
            name: "get_weather".into(),
            arguments: r#"{"city": "Paris"}"#.into(),
        }],
        ..MockOptions::default()
    }
}

/// One live request as the engine makes it: the backend's events, each recorded in the trace
/// (as the agent does) and kept.
pub(super) async fn live(server: &MockServer, mode: Mode) -> (Trace, Vec<StreamEvent>, TurnResult) {
    let mut ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
    ep.api_key = Some(KEY.into());
    let backend = Backend::new(ep).expect("backend");
    let mut trace = Trace::default();
    let (events, result) = backend
        .stream_turn(
            &[Message::user(
                "What is the weather in Paris? Answer in one word, please.",
            )],
            &[weather_tool()],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    for e in &events {
        trace.record(e);
    }
    assert!(result.error.is_none(), "{:?}", result.error);
    (trace, events, result)
}

pub(super) fn save(dir: &Path, name: &str, trace: Trace) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, TraceFile::new(trace, 1).to_json(&[KEY])).expect("write");
    path
}

pub(super) fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(args)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .output()
        .expect("runs")
}

fn json_lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_trace_gives_exactly_the_events_of_the_live_run() {
    let server = MockServer::start(calling_mock(), 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    for mode in [Mode::Raw, Mode::Chat] {
        let (trace, events, result) = live(&server, mode).await;
        assert_eq!(result.tool_calls.len(), 1, "{mode:?}: a call came back");
        assert!(trace.chunks.len() > 5, "{mode:?}: chunked");
        let path = save(dir.path(), &format!("{}.json", mode.as_str()), trace);
        let out = tokio::task::block_in_place(|| {
            run(
                dir.path(),
                &["parse", "--trace", path.to_str().expect("utf-8")],
            )
        });
        let mut parsed = json_lines(&out);
        let last = parsed.pop().expect("a result line");
        let mut lines = Lines::default();
        let want: Vec<Value> = events
            .iter()
            .filter_map(|e| lines.line(e))
            .filter(is_parsed)
            .collect();
        let got: Vec<Value> = parsed.into_iter().filter(is_parsed).collect();
        assert!(
            want.iter().any(|l| l["type"] == "tool_call_begin"),
            "{want:?}"
        );
        pretty_assertions::assert_eq!(got, want, "{mode:?}");
        assert_eq!(last["type"], "result");
        assert_eq!(last["tool_calls"][0]["function"]["name"], "get_weather");
        assert_eq!(
            last["tool_calls"][0]["function"]["arguments"],
            result.tool_calls[0].function.arguments
        );
        assert_eq!(last["finish_reason"], "tool_calls");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_trace_holds_no_key_and_what_the_raw_view_used_to_drop() {
    let server = MockServer::start(calling_mock(), 0).await.expect("mock");
    let (trace, _, _) = live(&server, Mode::Chat).await;
    let dir = tempfile::tempdir().expect("tmp");
    let path = save(dir.path(), "t.json", trace);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains(KEY), "{text}");
    assert!(!text.contains("sk-trace"), "{text}");
    let file = TraceFile::parse(&text).expect("reads back");
    let t = &file.trace;
    assert_eq!(file.endpoint, "chat/completions");
    assert!(
        t.headers
            .iter()
            .any(|(k, v)| k == "Authorization" && !v.contains(KEY))
    );
    assert_eq!(t.status, Some(200));
    assert!(t.done, "[DONE] recorded");
    assert!(t.finish_reason.is_some() && t.usage.is_some(), "{t:?}");
    assert!(
        t.response_headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/event-stream")),
        "{:?}",
        t.response_headers
    );
    assert!(!t.produced.is_empty() && !t.call_heads.is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_sends_the_exact_body_and_says_where_the_stream_differs() {
    let opts = MockOptions {
        api_key: None,
        ..calling_mock()
    };
    let first = MockServer::start(opts.clone(), 0).await.expect("mock");
    let (trace, _, _) = live(&first, Mode::Raw).await;
    let body = trace.request.clone();
    let dir = tempfile::tempdir().expect("tmp");
    let path = save(dir.path(), "raw.json", trace);
    let file = path.to_str().expect("utf-8").to_owned();
    let replay = |url: String, print: bool| {
        let mut args = vec!["replay", file.as_str(), "--base-url", url.as_str()];
        if print {
            args.push("--print");
        }
        let out = tokio::task::block_in_place(|| run(dir.path(), &args));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    // The same server: the same bytes, chunks and parse, and the body as saved.
    let same = replay(first.base_url(), true);
    assert!(same.contains("stream: the same "), "{same}");
    assert!(same.contains(" in the same "), "{same}");
    assert!(same.contains("parsed: the same content"), "{same}");
    assert!(
        same.contains("replayed: POST ") && same.contains("/completions · HTTP 200"),
        "{same}"
    );
    assert!(
        same.contains("#0 ") && same.contains("tool_call_begin"),
        "--print lists chunks: {same}"
    );
    let sent = first.requests();
    assert_eq!(sent.last(), Some(&body), "the exact body");
    first.shutdown().await;
    // Another chunking: the same bytes, cut elsewhere.
    let other = MockServer::start(
        MockOptions {
            chunk_bytes: Some(7),
            ..opts.clone()
        },
        0,
    )
    .await
    .expect("mock");
    let chunked = replay(other.base_url(), false);
    assert!(
        chunked.contains(" bytes, chunked differently from chunk 0"),
        "{chunked}"
    );
    assert!(!chunked.contains("#0 "), "no --print: {chunked}");
    other.shutdown().await;
    // A server that strips the special tokens: the parse breaks where the markers were.
    let stripping = MockServer::start(
        MockOptions {
            strip_special_tokens: true,
            ..opts
        },
        0,
    )
    .await
    .expect("mock");
    let broken = replay(stripping.base_url(), false);
    assert!(broken.contains("stream: differs from byte "), "{broken}");
    assert!(
        broken.contains("saved «<|tool_calls_section_begin|>"),
        "{broken}"
    );
    assert!(
        broken.contains("parsed: differs from the saved answer's"),
        "{broken}"
    );
    stripping.shutdown().await;
}

#[test]
fn parse_trace_refuses_what_is_not_a_trace() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("x.json");
    std::fs::write(&path, r#"{"format": "other", "version": 1}"#).expect("write");
    let out = run(
        dir.path(),
        &["parse", "--trace", path.to_str().expect("utf-8")],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a kimi-tui trace"), "{err}");
}
