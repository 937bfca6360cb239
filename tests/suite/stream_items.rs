//! The turn as a stream (`Backend::stream_turn`) over loopback HTTP: the events it yields for
//! the golden parser fixtures are the ones the decoders make of the same chunks fed directly,
//! its result is the fixture's, and it ends with exactly one `Done`; a reader that stops
//! taking items stops the reading (the server's writes stall, bounded); a cancel ends the
//! stream at once with the partial answer.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kimi_client::{Backend, Endpoint, TurnItem, TurnResult};
use kimi_protocol::{Message, Mode, StreamEvent, Trace};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// What the server does after the headers of a `/completions` answer.
#[derive(Clone)]
enum Script {
    /// These text pieces, one SSE payload each, then `finish_reason: stop` and `[DONE]`.
    Pieces(Vec<String>),
    /// These pieces, then nothing (the connection stays open).
    ThenStall(Vec<String>),
    /// Payloads forever, counting the bytes the socket took.
    Endless(Arc<AtomicU64>),
}

fn payload(text: &str) -> String {
    let ev = json!({"choices": [{"index": 0, "text": text, "finish_reason": null}]});
    format!("data: {ev}\n\n")
}

/// Read one request (headers and body) from `sock`.
async fn read_request(sock: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 8192];
        let n = sock.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return false;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return true;
            }
        }
    }
}

/// A server answering every connection with `script`; its base URL.
async fn server(script: Script) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let script = script.clone();
            tokio::spawn(async move {
                if !read_request(&mut sock).await {
                    return;
                }
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                sock.write_all(head.as_bytes()).await.ok();
                match script {
                    Script::Pieces(pieces) => {
                        for p in &pieces {
                            sock.write_all(payload(p).as_bytes()).await.ok();
                        }
                        let end = "data: {\"choices\": [{\"index\": 0, \"text\": \"\", \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";
                        sock.write_all(end.as_bytes()).await.ok();
                        sock.shutdown().await.ok();
                    }
                    Script::ThenStall(pieces) => {
                        for p in &pieces {
                            sock.write_all(payload(p).as_bytes()).await.ok();
                        }
                        tokio::time::sleep(Duration::from_secs(60)).await;
                    }
                    Script::Endless(written) => {
                        let piece = payload(&"many words of a long answer ".repeat(8));
                        while sock.write_all(piece.as_bytes()).await.is_ok() {
                            written.fetch_add(piece.len() as u64, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    base
}

fn backend(base: &str) -> Backend {
    let mut ep = Endpoint::new(Mode::Raw, base, "moonshotai/Kimi-K2-Instruct");
    ep.idle_timeout = Duration::from_secs(10);
    Backend::new(ep).expect("backend")
}

/// `text` cut every `n` bytes (at character boundaries).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + n).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_owned());
        start = end;
    }
    out
}

/// What the decoders make of the chunks: the events a trace replays (not the transport's).
fn decoded(e: &StreamEvent) -> bool {
    !matches!(
        e,
        StreamEvent::Request(_)
            | StreamEvent::Response { .. }
            | StreamEvent::Meta(_)
            | StreamEvent::Usage(_)
            | StreamEvent::Finished { .. }
    )
}

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parser");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_fixtures_stream_the_events_the_decoders_make_and_one_done_last() {
    for path in fixtures() {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let text = fixture["text"].as_str().expect("text");
        let base = server(Script::Pieces(pieces(text, 7))).await;
        let backend = backend(&base);
        let (messages, cancel) = ([Message::user("go")], CancellationToken::new());
        let mut stream = backend.stream_turn(&messages, &[], &cancel);
        let mut events = Vec::new();
        let mut done: Vec<TurnResult> = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                TurnItem::Event(e) if done.is_empty() => events.push(e),
                TurnItem::Event(e) => panic!("{path:?}: an event after the end: {e:?}"),
                TurnItem::Done(r) => done.push(r),
            }
        }
        assert_eq!(done.len(), 1, "{path:?}: one end");
        let result = done.remove(0);
        assert!(result.error.is_none(), "{path:?}: {:?}", result.error);
        // The result is the fixture's.
        let expect = &fixture["expect"];
        assert_eq!(result.content, expect["content"].as_str().expect("content"));
        let calls: Vec<(String, String, String)> = result
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    c.function.name.clone(),
                    c.function.arguments.clone(),
                )
            })
            .collect();
        let want_calls: Vec<(String, String, String)> = expect["tool_calls"]
            .as_array()
            .expect("calls")
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().expect("string").to_owned();
                (s("id"), s("name"), s("arguments"))
            })
            .collect();
        assert_eq!(calls, want_calls, "{path:?}");
        // The same chunks fed to the decoder without any I/O give the same events, in order.
        let mut trace = Trace::default();
        for e in &events {
            trace.record(e);
        }
        assert_eq!(trace.chunks.len(), pieces(text, 7).len(), "{path:?}");
        let (direct, again) = kimi_client::replay::reparse(&trace).events_and_result();
        let streamed: Vec<&StreamEvent> = events.iter().filter(|e| decoded(e)).collect();
        let direct: Vec<&StreamEvent> = direct.iter().filter(|e| decoded(e)).collect();
        pretty_assertions::assert_eq!(streamed, direct, "{path:?}");
        assert_eq!(again.content, result.content, "{path:?}");
        assert_eq!(again.tool_calls, result.tool_calls, "{path:?}");
        // The transport's events frame them: the request first, the end last.
        assert!(matches!(events.first(), Some(StreamEvent::Request(_))));
        assert!(matches!(
            events.last(),
            Some(StreamEvent::Finished { error: None, .. })
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_taking_items_stops_the_reading() {
    let written = Arc::new(AtomicU64::new(0));
    let base = server(Script::Endless(written.clone())).await;
    let backend = backend(&base);
    let (messages, cancel) = ([Message::user("go")], CancellationToken::new());
    let mut stream = backend.stream_turn(&messages, &[], &cancel);
    // Take a good part of the answer, checking that the socket is read only when no decoded
    // event waits.
    let mut texts = 0;
    let mut most_queued = 0;
    while texts < 2_000 {
        let (reads, queued) = (stream.reads(), stream.queued());
        most_queued = most_queued.max(queued);
        match stream.next().await {
            Some(TurnItem::Event(StreamEvent::Text(_))) => texts += 1,
            Some(TurnItem::Event(_)) => {}
            other => panic!("the answer goes on: {other:?}"),
        }
        if queued > 0 {
            assert_eq!(stream.reads(), reads, "read while {queued} events waited");
        }
    }
    // A payload makes a chunk and a text event: what waits is one payload's events.
    assert!(most_queued <= 4, "{most_queued} events queued at once");
    // Held without being polled: the server can write only what the buffers between take,
    // and then nothing more.
    let reads = stream.reads();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let settled = written.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let later = written.load(Ordering::Relaxed);
    assert_eq!(
        later, settled,
        "the server kept writing to a reader that reads nothing"
    );
    assert!(later < 64 << 20, "{later} bytes written while held");
    assert_eq!(stream.reads(), reads);
    // Taken again, it goes on.
    assert!(matches!(stream.next().await, Some(TurnItem::Event(_))));
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_stream_ends_it_at_once_with_the_partial_answer() {
    let base = server(Script::ThenStall(vec![
        "Part of ".into(),
        "an answer".into(),
    ]))
    .await;
    let backend = backend(&base);
    let (messages, cancel) = ([Message::user("go")], CancellationToken::new());
    let mut stream = backend.stream_turn(&messages, &[], &cancel);
    let mut shown = String::new();
    while shown != "Part of an answer" {
        match stream.next().await {
            Some(TurnItem::Event(StreamEvent::Text(t))) => shown.push_str(&t),
            Some(TurnItem::Event(_)) => {}
            other => panic!("the answer goes on: {other:?}"),
        }
    }
    // The server now says nothing (the idle timeout is 10 s): the cancel alone ends it.
    let cancelled = Instant::now();
    cancel.cancel();
    let mut rest = Vec::new();
    let result = loop {
        match tokio::time::timeout(Duration::from_secs(2), stream.next()).await {
            Ok(Some(TurnItem::Event(e))) => rest.push(e),
            Ok(Some(TurnItem::Done(r))) => break r,
            Ok(None) => panic!("ended without a result"),
            Err(_) => panic!("the cancel did not end the stream"),
        }
    };
    assert!(cancelled.elapsed() < Duration::from_secs(1));
    assert!(result.cancelled && result.error.is_none(), "{result:?}");
    assert_eq!(result.content, "Part of an answer");
    assert!(
        matches!(rest.last(), Some(StreamEvent::Finished { error: None, .. })),
        "{rest:?}"
    );
    assert!(stream.next().await.is_none(), "nothing after the end");
}
