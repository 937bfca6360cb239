//! The SSE body of one answer, read one event at a time as the turn's stream asks for it: the
//! socket is read only when that happens, within the idle timeout and the keepalive limit, and
//! a cancel stops the reading at once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::BackendError;
use super::http::{End, chain};
use super::sse::{EventStream, SseError};

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The response body, counting what was read of it: the bytes for the "dropped after N bytes"
/// message, the reads to show that nothing is read while decoded events wait.
struct Counted {
    inner: Body,
    bytes: u64,
    reads: u64,
}

impl Stream for Counted {
    type Item = reqwest::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &next {
            let len = chunk.len() as u64;
            self.bytes += len;
            self.reads += 1;
        }
        next
    }
}

/// What one read gave.
pub(super) enum Read {
    /// A `data:` payload, with its arrival time in microseconds since the request was sent.
    Payload(String, u64),
    /// `data: [DONE]`.
    Done,
    /// The body ended, failed, stalled or was cancelled.
    End(Result<End, BackendError>),
}

/// Limits of the wait for the next event.
pub(super) struct Limits {
    /// The URL as errors show it.
    pub url: String,
    pub idle: Duration,
    /// Keepalive comments alone extend the idle wait up to this (never below `idle`).
    pub keepalive_limit: Duration,
}

/// The current wait for an event: its deadline (moved on by keepalives) and the latest it can
/// be moved to.
struct Wait {
    deadline: Instant,
    last: Instant,
}

pub(super) struct Reader {
    events: EventStream<Counted>,
    limits: Limits,
    /// When the request went out: what arrival times count from.
    sent: std::time::Instant,
    cancel: CancellationToken,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    wait: Option<Wait>,
    /// One timer for every wait, moved to each deadline.
    sleep: Pin<Box<Sleep>>,
}

impl Reader {
    pub(crate) fn new(
        resp: reqwest::Response,
        limits: Limits,
        sent: std::time::Instant,
        cancel: CancellationToken,
    ) -> Self {
        let body = Counted {
            inner: Box::pin(resp.bytes_stream()),
            bytes: 0,
            reads: 0,
        };
        let limits = Limits {
            keepalive_limit: limits.keepalive_limit.max(limits.idle),
            ..limits
        };
        Reader {
            events: EventStream::new(body),
            sleep: Box::pin(tokio::time::sleep(limits.idle)),
            limits,
            sent,
            cancelled: Box::pin(cancel.clone().cancelled_owned()),
            cancel,
            wait: None,
        }
    }

    /// Body bytes read so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.events.get_ref().bytes
    }

    /// Reads of the socket so far (each gave a chunk of the body).
    pub(crate) fn reads(&self) -> u64 {
        self.events.get_ref().reads
    }

    /// The next payload, or how the body ended. A keepalive comment restarts the idle wait
    /// (the server is alive, the model slow: a reasoning model may think for minutes), but
    /// only up to the keepalive limit after the wait began: comments alone are not progress,
    /// and a server stuck after part of an answer must not hold the turn forever.
    pub(crate) fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Read> {
        if self.cancel.is_cancelled() {
            return Poll::Ready(Read::End(Ok(End::Cancelled)));
        }
        while let Poll::Ready(next) = Pin::new(&mut self.events).poll_next(cx) {
            self.wait = None;
            let at_us = self.sent.elapsed().as_micros() as u64;
            let event = match next {
                None => return Poll::Ready(Read::End(Ok(End::Eof))),
                Some(Ok(event)) => event,
                Some(Err(SseError::Transport(e))) => {
                    return Poll::Ready(Read::End(Err(BackendError::Dropped {
                        bytes: self.bytes(),
                        detail: chain(&e),
                    })));
                }
                Some(Err(e)) => {
                    return Poll::Ready(Read::End(Err(BackendError::Unreadable {
                        bytes: self.bytes(),
                        detail: e.to_string(),
                    })));
                }
            };
            if event.data.trim() == "[DONE]" {
                return Poll::Ready(Read::Done);
            }
            if !event.data.is_empty() {
                return Poll::Ready(Read::Payload(event.data, at_us));
            }
        }
        if self.cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Read::End(Ok(End::Cancelled)));
        }
        self.poll_stall(cx).map(|e| Read::End(Err(e)))
    }

    /// Nothing to read now: whether the wait has run out (the timer is armed when it begins).
    fn poll_stall(&mut self, cx: &mut Context<'_>) -> Poll<BackendError> {
        let Limits {
            idle,
            keepalive_limit,
            ..
        } = self.limits;
        let wait = match &mut self.wait {
            Some(wait) => wait,
            None => {
                let now = Instant::now();
                let wait = self.wait.insert(Wait {
                    deadline: now + idle,
                    last: now + keepalive_limit,
                });
                self.sleep.as_mut().reset(wait.deadline);
                wait
            }
        };
        loop {
            if self.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            match self.events.last_keepalive() {
                Some(at) if Instant::from_std(at) + idle > wait.deadline => {
                    let next = (Instant::from_std(at) + idle).min(wait.last);
                    if next <= wait.deadline {
                        return Poll::Ready(BackendError::Timeout {
                            url: self.limits.url.clone(),
                            secs: keepalive_limit.as_secs(),
                            stage: "waiting for the next event; only keepalive comments came"
                                .to_owned(),
                        });
                    }
                    wait.deadline = next;
                    self.sleep.as_mut().reset(next);
                }
                _ => {
                    return Poll::Ready(BackendError::Timeout {
                        url: self.limits.url.clone(),
                        secs: idle.as_secs(),
                        stage: "waiting for the next event".to_owned(),
                    });
                }
            }
        }
    }
}
