//! What the client logs about each request: its start, how it ended, and why it failed (see
//! kimi-core's `logging` for the log file itself). No key, header or userinfo is logged, and
//! server text is escaped on one line.

use std::time::Duration;

use kimi_protocol::Mode;
use kimi_protocol::sanitize::one_line;

use crate::{BackendError, Endpoint, TurnResult};

/// Server and model text in the log is cut after this many characters.
pub const TEXT_CHARS: usize = 2000;

/// `e` and its sources, outermost first: `a: b: c`.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        // Many errors repeat their source's text in their own.
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    one_line(&text, TEXT_CHARS)
}

fn path_of(mode: Mode) -> &'static str {
    match mode {
        Mode::Raw => "completions",
        Mode::Chat => "chat/completions",
    }
}

/// A request to the model is about to be sent.
pub(crate) fn request_started(ep: &Endpoint, messages: usize) {
    tracing::info!(
        url = %ep.shown_url(path_of(ep.mode)),
        mode = ep.mode.as_str(),
        model = %one_line(&ep.model, 200),
        messages,
        "request started"
    );
}

/// How a request's stream ended (after `bytes` of chunks): its error with the cause,
/// cancelled, or finished.
pub(crate) fn stream_ended(result: &TurnResult, elapsed: Duration, bytes: u64) {
    let ms = elapsed.as_millis() as u64;
    match &result.error {
        Some(e) => {
            let status = match e {
                BackendError::Http { status, .. } => Some(*status),
                _ => None,
            };
            tracing::error!(
                kind = error_kind(e),
                status,
                bytes,
                ms,
                error = %one_line(&e.with_detail(), TEXT_CHARS),
                "stream failed"
            );
        }
        None if result.cancelled => tracing::info!(bytes, ms, "stream cancelled"),
        None => tracing::info!(
            finish = %one_line(result.effective_finish(), 64),
            calls = result.tool_calls.len(),
            bytes,
            ms,
            "stream ended"
        ),
    }
}

fn error_kind(e: &BackendError) -> &'static str {
    match e {
        BackendError::Connect { .. } => "connect",
        BackendError::Timeout { .. } => "timeout",
        BackendError::Http { .. } => "http",
        BackendError::ServerEvent { .. } => "server_event",
        BackendError::Dropped { .. } => "dropped",
        BackendError::Setup(_) => "setup",
        BackendError::NotEventStream { .. } => "not_event_stream",
        BackendError::Redirected { .. } => "redirected",
        BackendError::Unreadable { .. } => "unreadable",
    }
}
