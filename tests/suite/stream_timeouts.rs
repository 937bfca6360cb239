//! The idle timeout against a live but slow server: SSE keepalive comments restart it (a
//! reasoning model may think for minutes), the bytes of one event trickled forever do not.
//! A hand-written HTTP server on loopback sends exactly the bytes under test.

use std::time::{Duration, Instant};

use kimi_client::{Backend, BackendError, Endpoint};
use kimi_protocol::{Message, Mode, StreamEvent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

const IDLE: Duration = Duration::from_millis(600);

/// A server answering one request with an event stream: `pieces` written with a pause before
/// each.
async fn serve(pieces: Vec<(Duration, &'static str)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.expect("accept");
        // The request: headers, then a body of Content-Length bytes; its content is not needed.
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = sock.read(&mut buf).await.expect("read");
            assert!(n > 0, "the request ended early");
            req.extend_from_slice(&buf[..n]);
        }
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        sock.write_all(head.as_bytes()).await.expect("write");
        for (pause, piece) in pieces {
            tokio::time::sleep(pause).await;
            if sock.write_all(piece.as_bytes()).await.is_err() {
                return;
            }
        }
    });
    format!("http://{addr}/v1")
}

async fn turn(base: &str) -> (kimi_client::TurnResult, String, Duration) {
    turn_with(base, kimi_client::KEEPALIVE_LIMIT).await
}

async fn turn_with(
    base: &str,
    keepalive_limit: Duration,
) -> (kimi_client::TurnResult, String, Duration) {
    let mut ep = Endpoint::new(Mode::Chat, base, "m");
    ep.idle_timeout = IDLE;
    ep.keepalive_limit = keepalive_limit;
    let backend = Backend::new(ep).expect("backend");
    let mut text = String::new();
    let started = Instant::now();
    let (events, result) = backend
        .stream_turn(
            &[Message::user("think hard")],
            &[],
            &CancellationToken::new(),
        )
        .events_and_result()
        .await;
    for e in events {
        if let StreamEvent::Text(t) = e {
            text.push_str(&t);
        }
    }
    (result, text, started.elapsed())
}

#[tokio::test]
async fn keepalive_comments_keep_a_slow_stream_alive() {
    let tick = Duration::from_millis(200);
    // Three times the idle timeout of keepalives only, then the answer.
    let mut pieces = vec![(tick, ": keepalive\n\n"); 9];
    pieces.push((
        tick,
        "data: {\"choices\":[{\"delta\":{\"content\":\"Thought it over.\"}}]}\n\n",
    ));
    pieces.push((
        Duration::ZERO,
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    ));
    let base = serve(pieces).await;
    let (result, text, took) = turn(&base).await;
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(text, "Thought it over.");
    assert!(
        took > IDLE * 3,
        "the stream really was idle that long: {took:?}"
    );
}

#[tokio::test]
async fn silence_after_a_keepalive_still_times_out() {
    let base = serve(vec![
        (Duration::from_millis(100), ": keepalive\n\n"),
        (Duration::from_secs(30), "data: [DONE]\n\n"),
    ])
    .await;
    let (result, _, took) = turn(&base).await;
    assert!(
        matches!(result.error, Some(BackendError::Timeout { ref stage, .. }) if stage == "waiting for the next event"),
        "{:?}",
        result.error
    );
    // Timed from the keepalive, not from the start, and not a window later.
    assert!(took >= IDLE + Duration::from_millis(100), "{took:?}");
    assert!(took < IDLE * 2 + Duration::from_millis(300), "{took:?}");
}

#[tokio::test]
async fn an_event_trickled_a_byte_at_a_time_still_times_out() {
    let tick = Duration::from_millis(150);
    // Bytes keep coming, but never a whole line: no event, no keepalive.
    let base = serve(vec![
        (tick, "d"),
        (tick, "a"),
        (tick, "t"),
        (tick, "a"),
        (tick, ":"),
        (tick, " "),
        (tick, "{"),
        (tick, "\""),
        (tick, "x"),
    ])
    .await;
    let (result, _, took) = turn(&base).await;
    assert!(
        matches!(result.error, Some(BackendError::Timeout { .. })),
        "{:?}",
        result.error
    );
    assert!(took < Duration::from_millis(1300), "{took:?}");
}

#[tokio::test]
async fn keepalives_after_part_of_an_answer_end_the_turn_at_the_limit() {
    let limit = Duration::from_millis(1500);
    // Part of an answer, then keepalives well inside the idle timeout, for ever (a minute).
    let mut pieces = vec![(
        Duration::ZERO,
        "data: {\"choices\":[{\"delta\":{\"content\":\"The answer is\"}}]}\n\n",
    )];
    pieces.extend(vec![(Duration::from_millis(100), ": keep-alive\n\n"); 600]);
    let base = serve(pieces).await;
    let (result, text, took) = turn_with(&base, limit).await;
    assert_eq!(text, "The answer is");
    assert!(
        matches!(result.error, Some(BackendError::Timeout { ref stage, .. }) if stage.contains("only keepalive comments")),
        "{:?}",
        result.error
    );
    assert!(took >= limit, "{took:?}");
    assert!(took < limit + IDLE, "{took:?}");
}
