//! One request and its answer as a stream: the request is announced, the headers awaited, then
//! the SSE body is read one event at a time into the mode's decoder, whose events wait in a
//! small queue and go out one per poll. The socket is read again only when the queue is empty,
//! so a consumer that stops polling stops the reading: the stream itself is the backpressure.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::Stream;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::chat::ChatDecoder;
use super::completions::RawDecoder;
use super::events::Events;
use super::http::{self, Call, End, Opened, Opening, Prompt};
use super::reader::{Limits, Read, Reader};
use super::turn_stream::TurnItem;
use super::{BackendError, TurnResult};
use kimi_protocol::reasoning_resent::ReasoningResent;
use kimi_protocol::{StreamEvent, StreamMeta};

/// The decoder of the request's mode: payloads in, events out, the result at the end.
pub(super) enum Decoder {
    Raw(Box<RawDecoder>),
    Chat(Box<ChatDecoder>),
}

impl Decoder {
    fn payload(&mut self, data: &str, at_us: u64, out: &mut Events) -> Result<(), BackendError> {
        match self {
            Decoder::Raw(d) => d.payload(data, at_us, out),
            Decoder::Chat(d) => d.payload(data, at_us, out),
        }
    }

    fn finish(
        self,
        end: Result<End, BackendError>,
        started: Instant,
        out: &mut Events,
    ) -> TurnResult {
        match self {
            Decoder::Raw(d) => d.finish(end, started, out),
            Decoder::Chat(d) => d.finish(end, started, out),
        }
    }
}

type OpenFuture = Pin<Box<dyn Future<Output = Opened> + Send>>;

enum State {
    /// Waiting for the headers; then the body is read with these limits.
    Opening {
        open: OpenFuture,
        limits: Limits,
        sent: Instant,
        cancel: CancellationToken,
    },
    Reading(Reader),
    /// The answer is over: the result goes out once the queue is empty.
    Done(Box<TurnResult>),
    /// The result went out.
    Over,
}

/// One request's answer: [`TurnItem::Event`]s, then one [`TurnItem::Done`].
pub(crate) struct Exchange {
    out: Events,
    state: State,
    decoder: Option<Decoder>,
    /// When the request was made: the end's `total_us` counts from here.
    started: Instant,
    /// Socket reads of the body so far (kept when the reader goes).
    reads: u64,
}

impl Exchange {
    /// POST `body` to `{base_url}/{path}` and decode the SSE answer with `decoder`. `out` holds
    /// what was said before the request (setup warnings); the request itself is reported next,
    /// then the status and headers, then what the decoder makes of each payload.
    pub(crate) fn open(
        call: &Call<'_>,
        path: &str,
        body: Value,
        prompt: Option<Prompt>,
        decoder: Decoder,
        mut out: Events,
        reasoning_resent: Option<ReasoningResent>,
    ) -> Self {
        let started = Instant::now();
        let (req, sent) = http::request(call, path, body, prompt, reasoning_resent);
        let ep = call.endpoint;
        let url = sent.url.clone();
        out.push(StreamEvent::Request(Box::new(sent)));
        let open = http::open(
            req,
            Opening {
                url: url.clone(),
                idle: ep.idle_timeout,
                connect: ep.connect_timeout,
                api_key: ep.api_key.clone(),
                cancel: call.cancel.clone(),
            },
        );
        Exchange {
            out,
            state: State::Opening {
                open: Box::pin(open),
                limits: Limits {
                    url,
                    idle: ep.idle_timeout,
                    keepalive_limit: ep.keepalive_limit,
                },
                sent: Instant::now(),
                cancel: call.cancel.clone(),
            },
            decoder: Some(decoder),
            started,
            reads: 0,
        }
    }

    /// A request that could not be made: no events, only the result.
    pub(crate) fn failed(result: TurnResult) -> Self {
        Exchange {
            out: Events::default(),
            state: State::Done(Box::new(result)),
            decoder: None,
            started: Instant::now(),
            reads: 0,
        }
    }

    /// Events decoded and not yet handed out.
    pub(crate) fn queued(&self) -> usize {
        self.out.len()
    }

    /// Reads of the socket so far.
    pub(crate) fn reads(&self) -> u64 {
        match &self.state {
            State::Reading(r) => r.reads(),
            _ => self.reads,
        }
    }

    /// The answer ended: flush the decoder into the queue, keep the result for last.
    fn end(&mut self, end: Result<End, BackendError>) {
        if let State::Reading(r) = &self.state {
            self.reads = r.reads();
        }
        let result = match self.decoder.take() {
            Some(d) => d.finish(end, self.started, &mut self.out),
            // Never expected: the decoder goes only here.
            None => TurnResult::default(),
        };
        self.state = State::Done(Box::new(result));
    }

    /// One step of the answer with the queue empty: `Ready` once something was queued or the
    /// answer ended.
    fn poll_advance(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.state {
            State::Opening { open, .. } => {
                let Poll::Ready(opened) = open.as_mut().poll(cx) else {
                    return Poll::Pending;
                };
                self.out.extend(opened.events);
                let opening = std::mem::replace(&mut self.state, State::Over);
                match (opened.body, opening) {
                    (
                        Ok(resp),
                        State::Opening {
                            limits,
                            sent,
                            cancel,
                            ..
                        },
                    ) => self.state = State::Reading(Reader::new(resp, limits, sent, cancel)),
                    // Never: the state left here is the opening just polled.
                    (Ok(_), _) => self.end(Ok(End::Eof)),
                    (Err(end), _) => self.end(end),
                }
            }
            State::Reading(reader) => match reader.poll_read(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Read::Payload(data, at_us)) => {
                    let decoder = self.decoder.as_mut();
                    let decoded =
                        decoder.map_or(Ok(()), |d| d.payload(&data, at_us, &mut self.out));
                    if let Err(e) = decoded {
                        self.end(Err(e));
                    }
                }
                Poll::Ready(Read::Done) => {
                    self.out.push(StreamEvent::Meta(StreamMeta::Done));
                    self.end(Ok(End::Done));
                }
                Poll::Ready(Read::End(end)) => self.end(end),
            },
            State::Done(_) | State::Over => {}
        }
        Poll::Ready(())
    }
}

impl Stream for Exchange {
    type Item = TurnItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<TurnItem>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.out.pop() {
                return Poll::Ready(Some(TurnItem::Event(event)));
            }
            match std::mem::replace(&mut this.state, State::Over) {
                State::Done(result) => return Poll::Ready(Some(TurnItem::Done(*result))),
                State::Over => return Poll::Ready(None),
                other => this.state = other,
            }
            if this.poll_advance(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}
