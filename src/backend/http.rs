//! What both modes share: the HTTP client, one streamed POST read as SSE, timeouts,
//! cancellation, and turning failures into [`BackendError`]s.

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::server_message;
use super::trace::REDACTED;
use super::{BackendError, Endpoint, StreamEvent, Trace, Usage};

/// One request's context.
pub(super) struct Call<'a> {
    pub client: &'a reqwest::Client,
    pub endpoint: &'a Endpoint,
    pub cancel: &'a CancellationToken,
}

/// How a stream ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// `data: [DONE]`.
    Done,
    /// The body ended cleanly without `[DONE]`.
    Eof,
    /// The user cancelled; reading stopped.
    Cancelled,
}

pub(super) fn client(ep: &Endpoint) -> Result<reqwest::Client, BackendError> {
    static PROVIDER: Once = Once::new();
    // reqwest is built without a bundled crypto provider; ring is installed once for the process.
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .connect_timeout(ep.connect_timeout)
        .build()
        .map_err(|e| BackendError::Setup(format!("cannot create the HTTP client: {}", chain(&e))))
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An error with its sources, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let s_text = s.to_string();
        if !out.contains(&s_text) {
            out.push_str(": ");
            out.push_str(&s_text);
        }
        src = s.source();
    }
    out
}

fn send_error(url: &str, e: &reqwest::Error, idle: Duration) -> BackendError {
    if e.is_timeout() {
        BackendError::Timeout {
            url: url.to_owned(),
            secs: idle.as_secs(),
            stage: "connecting".to_owned(),
        }
    } else {
        BackendError::Connect {
            url: url.to_owned(),
            detail: chain(e),
        }
    }
}

/// POST `body` to `{base_url}/{path}` and read the SSE answer, handing each `data:` payload
/// (with its arrival time in microseconds) to `on_payload`. Fills the trace's request side.
pub(super) async fn stream_sse<F>(
    call: &Call<'_>,
    path: &str,
    body: &Value,
    trace: &mut Trace,
    mut on_payload: F,
) -> Result<End, BackendError>
where
    F: FnMut(&str, u64, &mut Trace) -> Result<(), BackendError>,
{
    let ep = call.endpoint;
    let url = format!("{}/{path}", ep.base_url);
    trace.mode = ep.mode;
    trace.url = url.clone();
    trace.request = body.clone();
    trace.started_unix_ms = unix_ms();
    trace.headers = vec![
        ("Content-Type".into(), "application/json".into()),
        ("Accept".into(), "text/event-stream".into()),
    ];
    let mut req = call
        .client
        .post(&url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .json(body);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
        trace
            .headers
            .push(("Authorization".into(), REDACTED.into()));
    }

    let start = Instant::now();
    let idle = ep.idle_timeout;
    let timeout = |stage: &str| BackendError::Timeout {
        url: url.clone(),
        secs: idle.as_secs(),
        stage: stage.to_owned(),
    };
    let resp = tokio::select! {
        _ = call.cancel.cancelled() => return Ok(End::Cancelled),
        r = tokio::time::timeout(idle, req.send()) => match r {
            Err(_) => return Err(timeout("waiting for response headers")),
            Ok(Err(e)) => return Err(send_error(&url, &e, idle)),
            Ok(Ok(resp)) => resp,
        },
    };
    let status = resp.status();
    trace.status = Some(status.as_u16());
    if !status.is_success() {
        let retry_after_secs = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let text = tokio::time::timeout(idle, resp.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        return Err(BackendError::Http {
            status: status.as_u16(),
            url,
            message: server_message(&text),
            retry_after_secs,
        });
    }

    // Counted for the "dropped after N bytes" message; atomic only so the future stays Send.
    let bytes_seen = AtomicU64::new(0);
    let counted = resp.bytes_stream().map(|r| {
        if let Ok(b) = &r {
            bytes_seen.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
        r
    });
    let mut events = std::pin::pin!(counted.eventsource());
    loop {
        let next = tokio::select! {
            _ = call.cancel.cancelled() => return Ok(End::Cancelled),
            n = tokio::time::timeout(idle, events.next()) => n,
        };
        let at_us = start.elapsed().as_micros() as u64;
        let event = match next {
            Err(_) => return Err(timeout("waiting for the next chunk")),
            Ok(None) => return Ok(End::Eof),
            Ok(Some(Ok(event))) => event,
            Ok(Some(Err(EventStreamError::Transport(e)))) => {
                return Err(BackendError::Dropped {
                    bytes: bytes_seen.load(Ordering::Relaxed),
                    detail: chain(&e),
                });
            }
            Ok(Some(Err(e))) => {
                return Err(BackendError::Dropped {
                    bytes: bytes_seen.load(Ordering::Relaxed),
                    detail: format!("unreadable event stream: {e}"),
                });
            }
        };
        let data = event.data.as_str();
        if data.trim() == "[DONE]" {
            return Ok(End::Done);
        }
        if data.is_empty() {
            continue;
        }
        on_payload(data, at_us, trace)?;
    }
}

/// The parts of an SSE payload both endpoints share, around each endpoint's own `choices`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub(super) struct Payload<C> {
    #[serde(default = "Vec::new")]
    pub choices: Vec<C>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    object: Option<String>,
}

/// Decode one SSE payload, once. A malformed one is skipped with a warning (`Ok(None)`); an
/// `{"error": ...}` event (or vLLM's `{"object": "error"}`) ends the stream (`Err`).
pub(super) fn decode<'a, C: Deserialize<'a>>(
    data: &'a str,
    warnings: &mut Vec<String>,
    on_event: &mut dyn FnMut(StreamEvent),
) -> Result<Option<Payload<C>>, BackendError> {
    match serde_json::from_str::<Payload<C>>(data) {
        Err(e) => {
            let w = format!("malformed SSE event skipped ({e}): {}", preview(data));
            on_event(StreamEvent::Warning(w.clone()));
            warnings.push(w);
            Ok(None)
        }
        Ok(p)
            if p.error.as_ref().is_some_and(|e| !e.is_null())
                || p.object.as_deref() == Some("error") =>
        {
            Err(BackendError::ServerEvent {
                message: server_message(data),
            })
        }
        Ok(p) => Ok(Some(p)),
    }
}

/// The start of a payload, for a one-line warning.
fn preview(data: &str) -> String {
    const MAX: usize = 120;
    match data.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &data[..i]),
        None => data.to_owned(),
    }
}

/// How the stream ended: the turn's error (a clean end of the body before the answer finished
/// counts as a drop) and whether the user cancelled. Records both in the trace.
pub(super) fn outcome(
    end: Result<End, BackendError>,
    finished: bool,
    trace: &mut Trace,
    started: Instant,
) -> (Option<BackendError>, bool) {
    let (error, cancelled) = match end {
        Ok(End::Cancelled) => (None, true),
        Ok(End::Eof) if !finished => (
            Some(BackendError::Dropped {
                bytes: trace.data.len() as u64,
                detail: "the server closed the stream before it finished".into(),
            }),
            false,
        ),
        Ok(_) => (None, false),
        Err(e) => (Some(e), false),
    };
    trace.total_us = Some(started.elapsed().as_micros() as u64);
    trace.error = error.as_ref().map(ToString::to_string);
    (error, cancelled)
}

/// GET `{base_url}/models`.
pub(super) async fn list_models(
    client: &reqwest::Client,
    ep: &Endpoint,
) -> Result<Vec<String>, BackendError> {
    let url = format!("{}/models", ep.base_url);
    let mut req = client.get(&url);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    let resp = tokio::time::timeout(ep.idle_timeout, req.send())
        .await
        .map_err(|_| BackendError::Timeout {
            url: url.clone(),
            secs: ep.idle_timeout.as_secs(),
            stage: "listing models".into(),
        })?
        .map_err(|e| send_error(&url, &e, ep.idle_timeout))?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(BackendError::Http {
            status: status.as_u16(),
            url,
            message: server_message(&text),
            retry_after_secs: None,
        });
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| BackendError::Http {
        status: status.as_u16(),
        url: url.clone(),
        message: format!("the model list is not JSON: {e}"),
        retry_after_secs: None,
    })?;
    Ok(v.get("data")
        .and_then(Value::as_array)
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}
