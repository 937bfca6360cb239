//! The ways the mock misbehaves on purpose: HTTP errors with OpenAI error bodies, broken or error
//! events mid-stream, and connections dropped partway through a body.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::json;

/// The broken event of `malformed_sse`: a `data:` line whose JSON never ends.
pub(crate) const MALFORMED_EVENT: &str = "data: {\"choices\": [{\"text\": \n\n";
/// The event of `error_event`, after which the stream ends without `[DONE]`.
pub(crate) const ERROR_EVENT: &str = "data: {\"error\":{\"message\":\"mock: model overloaded mid-stream\",\"type\":\"server_error\",\"code\":500}}\n\n";

/// A JSON error response in the OpenAI shape.
pub(crate) fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "code": status.as_u16()}});
    (status, axum::Json(body)).into_response()
}

/// The answer of `fail_status`: that status, the matching error type, and for 429 a
/// `Retry-After` header.
pub(crate) fn fail_response(code: u16) -> Response {
    fail_response_after(code, None)
}

/// [`fail_response`] with this `Retry-After` value (any status), when given.
pub(crate) fn fail_response_after(code: u16, retry_after: Option<&str>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let kind = match status.as_u16() {
        429 => "rate_limit_error",
        401 => "authentication_error",
        404 => "not_found_error",
        _ => "server_error",
    };
    let message = format!("mock failure: HTTP {}", status.as_u16());
    let mut resp = error_response(status, kind, &message);
    match retry_after.map(HeaderValue::from_str) {
        Some(Ok(v)) => {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        _ if status == StatusCode::TOO_MANY_REQUESTS => {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
        }
        _ => {}
    }
    resp
}

/// Inserts the malformed and/or error event after `at` events. After an error event the stream
/// ends, as a server that gave up would.
pub(crate) struct Inject<I> {
    inner: I,
    at: usize,
    seen: usize,
    malformed: bool,
    error: bool,
    pending: Vec<Bytes>,
    ended: bool,
}

impl<I: Iterator<Item = Bytes>> Inject<I> {
    pub(crate) fn new(inner: I, at: usize, malformed: bool, error: bool) -> Self {
        Inject {
            inner,
            at,
            seen: 0,
            malformed,
            error,
            pending: Vec::new(),
            ended: false,
        }
    }
}

impl<I: Iterator<Item = Bytes>> Iterator for Inject<I> {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if let Some(b) = self.pending.pop() {
            return Some(b);
        }
        if self.ended {
            return None;
        }
        if self.seen == self.at {
            self.seen += 1;
            // `pending` is popped from the back.
            if self.error {
                self.pending
                    .push(Bytes::from_static(ERROR_EVENT.as_bytes()));
                self.ended = true;
            }
            if self.malformed {
                self.pending
                    .push(Bytes::from_static(MALFORMED_EVENT.as_bytes()));
            }
            if let Some(b) = self.pending.pop() {
                return Some(b);
            }
        }
        self.seen += 1;
        self.inner.next()
    }
}

/// Where a fault goes: after about a third of `total` events.
pub(crate) fn inject_point(total: usize) -> usize {
    (total / 3).max(1)
}

/// Pass the first `limit` bytes of `body`, then fail, so hyper aborts the connection and the
/// client sees a truncated body instead of a clean end.
pub(crate) fn drop_after(
    body: BoxStream<'static, Bytes>,
    limit: usize,
) -> BoxStream<'static, Result<Bytes, std::io::Error>> {
    enum State {
        Passing(BoxStream<'static, Bytes>, usize),
        Abort,
        Gone,
    }
    stream::unfold(State::Passing(body, 0), move |state| async move {
        match state {
            State::Passing(mut body, sent) => match body.next().await {
                None => None,
                Some(chunk) if sent + chunk.len() < limit => {
                    let sent = sent + chunk.len();
                    Some((Ok(chunk), State::Passing(body, sent)))
                }
                Some(chunk) => Some((Ok(chunk.slice(..limit - sent)), State::Abort)),
            },
            State::Abort => {
                // Yield once so hyper flushes what it holds: it only flushes while the body is
                // pending, and it discards its buffer when the body fails.
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((
                    Err(std::io::Error::other("mock: connection dropped")),
                    State::Gone,
                ))
            }
            State::Gone => None,
        }
    })
    .boxed()
}

/// The UTF-8 byte order mark of `--bom`.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What a proxy answers in place of the model: `200 text/html`, a login page.
pub(crate) const LOGIN_PAGE: &str = "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><h1>Corporate proxy: sign in to continue</h1></body></html>\n";

/// One event whose `data:` line carries `n` bytes of text (`x`), sent whole: completion text
/// in raw mode, `delta.content` in chat mode.
pub(crate) fn long_event(chat: bool, n: usize) -> Bytes {
    let text = "x".repeat(n);
    let payload = if chat {
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
    } else {
        json!({"choices": [{"index": 0, "text": text, "finish_reason": null}]})
    };
    Bytes::from(format!("data: {payload}\n\n"))
}

/// `fail_response(code)` with its body padded to `total` bytes (still valid JSON when whole),
/// produced lazily: a 200 MB error page costs the mock nothing.
pub(crate) fn huge_error(code: u16, total: usize) -> Response {
    let resp = fail_response(code);
    let status = resp.status();
    let kind = match status.as_u16() {
        429 => "rate_limit_error",
        401 => "authentication_error",
        404 => "not_found_error",
        _ => "server_error",
    };
    let head = format!(
        "{{\"error\":{{\"message\":\"mock failure: HTTP {}\",\"type\":\"{kind}\",\"code\":{}}},\"padding\":\"",
        status.as_u16(),
        status.as_u16()
    );
    let tail = "\"}";
    let pad_total = total.saturating_sub(head.len() + tail.len());
    const PIECE: usize = 64 << 10;
    let piece = Bytes::from(vec![b' '; PIECE]);
    let pads = (0..pad_total.div_ceil(PIECE))
        .map(move |i| piece.slice(..PIECE.min(pad_total - i * PIECE)));
    let body = stream::iter(
        std::iter::once(Bytes::from(head))
            .chain(pads)
            .chain(std::iter::once(Bytes::from_static(tail.as_bytes())))
            .map(Ok::<_, std::io::Error>),
    );
    let mut out = (status, axum::body::Body::from_stream(body)).into_response();
    *out.headers_mut() = resp.headers().clone();
    out
}

/// `body` at about `bps` bytes per second, in pieces of a tenth of that (at least one byte).
pub(crate) fn throttle(
    body: BoxStream<'static, Result<Bytes, axum::Error>>,
    bps: u64,
) -> BoxStream<'static, Result<Bytes, axum::Error>> {
    let bps = bps.max(1);
    let piece = (bps / 10).max(1) as usize;
    let gap = Duration::from_nanos(piece as u64 * 1_000_000_000 / bps);
    stream::unfold(
        (body, Bytes::new()),
        move |(mut body, mut held)| async move {
            if held.is_empty() {
                match body.next().await? {
                    Ok(b) => held = b,
                    Err(e) => return Some((Err(e), (body, Bytes::new()))),
                }
            }
            tokio::time::sleep(gap).await;
            let out = held.split_to(piece.min(held.len()));
            Some((Ok(out), (body, held)))
        },
    )
    .boxed()
}

/// A redirect of `path` (`/v1/...`) to the same path under `base` (another server's `.../v1`).
pub(crate) fn redirect_response(base: &str, path: &str, code: u16) -> Response {
    let status = StatusCode::from_u16(code)
        .ok()
        .filter(StatusCode::is_redirection)
        .unwrap_or(StatusCode::TEMPORARY_REDIRECT);
    let rest = path.strip_prefix("/v1").unwrap_or(path);
    let location = format!("{}{rest}", base.trim_end_matches('/'));
    match HeaderValue::from_str(&location) {
        Ok(v) => (status, [(header::LOCATION, v)]).into_response(),
        Err(_) => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "mock: --redirect-to is not a valid header value",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evs(n: usize) -> Vec<Bytes> {
        (0..n).map(|i| Bytes::from(format!("{i}"))).collect()
    }

    #[test]
    fn malformed_is_inserted_and_the_stream_goes_on() {
        let out: Vec<Bytes> = Inject::new(evs(6).into_iter(), 2, true, false).collect();
        assert_eq!(out.len(), 7);
        assert_eq!(out[2], MALFORMED_EVENT.as_bytes());
        assert_eq!(out[6], "5".as_bytes());
    }

    #[test]
    fn error_ends_the_stream() {
        let out: Vec<Bytes> = Inject::new(evs(6).into_iter(), 2, true, true).collect();
        assert_eq!(out.len(), 4);
        assert_eq!(out[2], MALFORMED_EVENT.as_bytes());
        assert_eq!(out[3], ERROR_EVENT.as_bytes());
    }

    #[test]
    fn fail_status_types() {
        let r = fail_response(429);
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()[header::RETRY_AFTER], "2");
        assert_eq!(fail_response(503).status(), 503);
        assert!(
            fail_response(503)
                .headers()
                .get(header::RETRY_AFTER)
                .is_none()
        );
        assert_eq!(fail_response(7).status(), 500);
    }

    #[tokio::test]
    async fn huge_errors_are_as_long_as_asked_and_valid_json() {
        let resp = huge_error(500, 300_000);
        assert_eq!(resp.status(), 500);
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body");
        assert_eq!(body.len(), 300_000);
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(v["error"]["message"], "mock failure: HTTP 500");
    }

    #[tokio::test]
    async fn throttle_keeps_every_byte_in_order() {
        let body = stream::iter(vec![Ok(Bytes::from("hello")), Ok(Bytes::from(" world"))]).boxed();
        let started = std::time::Instant::now();
        let out: Vec<_> = throttle(body, 100).collect().await;
        let joined: Vec<u8> = out
            .into_iter()
            .flat_map(|b| b.expect("data").to_vec())
            .collect();
        assert_eq!(joined, b"hello world");
        // 11 bytes at 100 B/s in 10-byte pieces: two gaps of 100 ms.
        assert!(started.elapsed() >= Duration::from_millis(150));
    }

    #[test]
    fn redirects_keep_the_path_under_the_new_base() {
        let r = redirect_response("http://other:9/v1/", "/v1/chat/completions", 308);
        assert_eq!(r.status(), 308);
        assert_eq!(
            r.headers()[header::LOCATION],
            "http://other:9/v1/chat/completions"
        );
        assert_eq!(
            redirect_response("http://o/v1", "/v1/models", 200).status(),
            307
        );
    }

    #[tokio::test]
    async fn drop_after_cuts_then_fails() {
        let body = stream::iter(vec![Bytes::from("hello "), Bytes::from("world")]).boxed();
        let out: Vec<_> = drop_after(body, 8).collect().await;
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].as_ref().expect("data"), "hello ");
        assert_eq!(out[1].as_ref().expect("data"), "wo");
        assert!(out[2].is_err());
        let short = stream::iter(vec![Bytes::from("hi")]).boxed();
        let out: Vec<_> = drop_after(short, 8).collect().await;
        assert_eq!(out.len(), 1, "a shorter body ends cleanly");
    }
}
