//! `kimi-tui replay TRACE --compare HOW` over loopback against the mock, in both modes: a
//! correct server agrees with itself every way (streamed, non-streamed, raw against chat, the
//! prompts compared through `/tokenize`), and each planted difference shows as the field that
//! differs, with exit status 1.

use std::path::Path;
use std::process::Output;

use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Mode, Trace};
use serde_json::Value;

use super::trace_replay::{self, run, save};

/// The replay tests' mock (one call to `get_weather`, small chunks), without an API key: the
/// command line sends none.
fn calling_mock() -> MockOptions {
    MockOptions {
        api_key: None,
        ..trace_replay::calling_mock()
    }
}

/// One live request as the engine makes it, recorded as its trace.
async fn live(server: &MockServer, mode: Mode) -> Trace {
    trace_replay::live(server, mode).await.0
}

/// `replay FILE --compare HOW --base-url URL [--json]`.
fn compare(dir: &Path, file: &Path, how: &str, url: &str, json: bool) -> Output {
    let mut args = vec![
        "replay",
        file.to_str().expect("utf-8"),
        "--compare",
        how,
        "--base-url",
        url,
    ];
    if json {
        args.push("--json");
    }
    tokio::task::block_in_place(|| run(dir, &args))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The lines of the table that mark a difference.
fn differing(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('≠'))
        .map(|l| {
            l.trim_start_matches('≠')
                .split("   ")
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correct_server_agrees_with_itself_every_way_in_both_modes() {
    let server = MockServer::start(calling_mock(), 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let raw = save(dir.path(), "raw.json", live(&server, Mode::Raw).await);
    let chat = save(dir.path(), "chat.json", live(&server, Mode::Chat).await);
    let url = server.base_url();
    for (file, how) in [
        (&raw, "stream"),
        (&raw, "non-stream"),
        (&raw, "chat"),
        (&chat, "stream"),
        (&chat, "non-stream"),
        (&chat, "raw"),
    ] {
        let out = compare(dir.path(), file, how, &url, false);
        let said = text(&out);
        assert!(out.status.success(), "{how}: {said}");
        assert!(said.contains("the two answers agree"), "{how}: {said}");
        // Every way compares the prompts: the raw one as sent, the chat one as the server
        // renders it (its /tokenize).
        assert!(said.contains("prompt: the same "), "{how}: {said}");
        assert!(
            said.contains("= call 1") && said.contains("get_weather {\"city\": \"Paris\"}"),
            "{how}: {said}"
        );
    }
    // Across the modes the prompts are compared: this client's render against the one the
    // server shows through /tokenize.
    let out = compare(dir.path(), &raw, "chat", &url, true);
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["agree"], true, "{v}");
    assert_eq!(v["b"], "chat (chat, streamed)");
    assert!(
        v["prompt"]
            .as_str()
            .is_some_and(|p| p.starts_with("the same ") && p.ends_with(" bytes on both sides")),
        "{v}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_only_fault_shows_against_the_non_streamed_answer() {
    // The saved stream came from a server whose streamed tool_calls deltas are empty.
    let bug = MockServer::start(
        MockOptions {
            empty_tool_call_deltas: true,
            ..calling_mock()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let chat = save(dir.path(), "chat.json", live(&bug, Mode::Chat).await);
    let out = compare(dir.path(), &chat, "non-stream", &bug.base_url(), false);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(differing(&out), ["calls", "call 1"], "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("none") && said.contains("1: get_weather"),
        "{said}"
    );
    assert!(said.contains("2 differences"), "{said}");
    bug.shutdown().await;

    // Raw mode: a non-streamed answer that drops the calls.
    let bug = MockServer::start(
        MockOptions {
            nonstream_differs: true,
            ..calling_mock()
        },
        0,
    )
    .await
    .expect("mock");
    let raw = save(dir.path(), "raw.json", live(&bug, Mode::Raw).await);
    let out = compare(dir.path(), &raw, "non-stream", &bug.base_url(), false);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let rows = differing(&out);
    assert!(rows.contains(&"calls".to_owned()), "{}", text(&out));
    bug.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_chat_template_differs_shows_in_the_prompt_diff() {
    let server = MockServer::start(
        MockOptions {
            stale_chat_template: true,
            ..calling_mock()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let raw = save(dir.path(), "raw.json", live(&server, Mode::Raw).await);
    let out = compare(dir.path(), &raw, "chat", &server.base_url(), false);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    // The same answer, but the server's prompt lacks the default system message.
    assert_eq!(differing(&out), ["prompt tokens"], "{said}");
    assert!(
        said.contains("prompt: they part at byte ")
            && said.contains("A has «system|>system<|im_middle|>You are Kimi")
            && said.contains("B «user|>user<|im_middle|>What is"),
        "{said}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comparison_that_cannot_be_made_says_why() {
    let server = MockServer::start(calling_mock(), 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let mut trace = live(&server, Mode::Raw).await;
    let out = compare(
        dir.path(),
        &save(dir.path(), "raw.json", trace.clone()),
        "raw",
        &server.base_url(),
        false,
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("cannot compare raw: the request is already a raw one"),
        "{}",
        text(&out)
    );
    // A trace from before the messages were kept: only the same-mode comparisons.
    trace.source = None;
    let old = save(dir.path(), "old.json", trace);
    let out = compare(dir.path(), &old, "chat", &server.base_url(), false);
    assert!(
        text(&out).contains("saved by an older kimi-tui"),
        "{}",
        text(&out)
    );
    let out = compare(dir.path(), &old, "bogus", &server.base_url(), false);
    assert!(
        text(&out).contains("expected one of stream, non-stream, raw, chat"),
        "{}",
        text(&out)
    );
    server.shutdown().await;
}
