//! A turn as a [`Stream`]: what [`Backend::stream_turn`] and [`Backend::replay`] return. Each
//! item is an event of the answer as it arrives, and the last one is the turn's end with its
//! result; nothing is read from the server while the reader holds the stream without polling.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::exchange::Exchange;
use super::{Backend, BackendError, LogprobsOutcome, TurnResult, log, logprobs};
use kimi_protocol::{Message, StreamEvent};

/// One item of a turn's stream. The end is an item of its own rather than a variant of
/// [`StreamEvent`]: `StreamEvent` is what traces record and the engine forwards (it lives in
/// the protocol crate, which knows nothing of HTTP errors), while the result is what the turn
/// keeps. A reader gets exactly one `Done`, last.
#[derive(Debug)]
pub enum TurnItem {
    Event(StreamEvent),
    Done(TurnResult),
}

/// What a turn of [`Backend::stream_turn`] still needs after its first request: the refusal of
/// `logprobs` sends the request again without them, and the end is logged.
struct Turn<'a> {
    backend: &'a Backend,
    messages: &'a [Message],
    tools: &'a [Value],
    prefix: Option<&'a str>,
    cancel: &'a CancellationToken,
    started: Instant,
    /// Chunk bytes so far, for the log line at the end.
    bytes: u64,
    /// The request was sent again without `logprobs`.
    resent: bool,
}

/// The answer to one turn (or a replayed request), as [`TurnItem`]s.
pub struct TurnStream<'a> {
    exchange: Exchange,
    turn: Option<Turn<'a>>,
}

impl<'a> TurnStream<'a> {
    pub(super) fn turn(
        backend: &'a Backend,
        messages: &'a [Message],
        tools: &'a [Value],
        prefix: Option<&'a str>,
        cancel: &'a CancellationToken,
    ) -> Self {
        log::request_started(&backend.endpoint, messages.len());
        let started = Instant::now();
        let call = backend.call(&backend.endpoint, cancel);
        TurnStream {
            exchange: super::stream_once(call, messages, tools, prefix),
            turn: Some(Turn {
                backend,
                messages,
                tools,
                prefix,
                cancel,
                started,
                bytes: 0,
                resent: false,
            }),
        }
    }

    /// One request, as it is (a replay): no second attempt, no log line.
    pub(super) fn single(exchange: Exchange) -> Self {
        TurnStream {
            exchange,
            turn: None,
        }
    }

    /// Read the stream to its end: every event in order, and the result.
    pub async fn events_and_result(mut self) -> (Vec<StreamEvent>, TurnResult) {
        let mut events = Vec::new();
        while let Some(item) = self.next().await {
            match item {
                TurnItem::Event(e) => events.push(e),
                TurnItem::Done(result) => return (events, result),
            }
        }
        // Never expected: every stream ends with its result.
        (events, TurnResult::default())
    }

    /// Events decoded and not yet handed out.
    pub fn queued(&self) -> usize {
        self.exchange.queued()
    }

    /// Reads of the answer's body from the socket so far (of the current request).
    pub fn reads(&self) -> u64 {
        self.exchange.reads()
    }
}

impl Turn<'_> {
    /// The request's result came: `Some(result)` when the turn is over, `None` when the
    /// request goes again without `logprobs` (in `exchange`).
    fn ended(&mut self, mut result: TurnResult, exchange: &mut Exchange) -> Option<TurnResult> {
        let backend = self.backend;
        let endpoint = &backend.endpoint;
        if self.resent {
            // The same 400 without them: it was not about logprobs (they stay on).
            let again = matches!(result.error, Some(BackendError::Http { status: 400, .. }));
            result.logprobs = if again {
                LogprobsOutcome::NotAsked
            } else {
                LogprobsOutcome::Refused
            };
        } else if endpoint.logprobs > 0 {
            let confirmed = backend.logprobs_confirmed.load(Ordering::Relaxed);
            if let Some(why) = logprobs::refused(result.error.as_ref(), confirmed) {
                // Sent again, once, exactly as before but without the token-level fields.
                tracing::warn!(message = %why, "the server refused logprobs; sending again without");
                let mut plain = endpoint.clone();
                plain.logprobs = 0;
                let call = backend.call(&plain, self.cancel);
                *exchange = super::stream_once(call, self.messages, self.tools, self.prefix);
                self.resent = true;
                return None;
            } else if result.error.is_none() && !result.cancelled {
                backend.logprobs_confirmed.store(true, Ordering::Relaxed);
            }
        }
        log::stream_ended(&result, self.started.elapsed(), self.bytes);
        Some(result)
    }
}

impl Stream for TurnStream<'_> {
    type Item = TurnItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TurnItem>> {
        let this = &mut *self;
        loop {
            let item = match this.exchange.poll_next_unpin(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(item) => item,
            };
            let Some(turn) = &mut this.turn else {
                return Poll::Ready(item);
            };
            match item {
                Some(TurnItem::Event(event)) => {
                    if let StreamEvent::Chunk { data, .. } = &event {
                        turn.bytes += data.len() as u64;
                    }
                    return Poll::Ready(Some(TurnItem::Event(event)));
                }
                Some(TurnItem::Done(result)) => {
                    if let Some(result) = turn.ended(result, &mut this.exchange) {
                        return Poll::Ready(Some(TurnItem::Done(result)));
                    }
                }
                None => return Poll::Ready(None),
            }
        }
    }
}
