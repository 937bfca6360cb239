//! The agent's two channels while it works: operations keep arriving while a turn streams, waits
//! for an approval or runs a tool, and are taken in (a cancel acts at once, the rest waits for
//! its place); events go out with `send().await`, so the reader sets the pace.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::approval::Decision;
use super::event::{EngineEvent, Op};

pub(crate) struct Io {
    ops: mpsc::UnboundedReceiver<Op>,
    events: mpsc::Sender<EngineEvent>,
    /// Operations taken in during a turn, applied in order at their place.
    pub queued: VecDeque<Op>,
    /// The running turn's token.
    pub cancel: CancellationToken,
    /// Nobody can send operations any more, or nobody reads the events: finish and stop.
    pub closed: bool,
    /// Decisions taken in and not yet claimed by the approval they answer.
    decisions: VecDeque<Answer>,
    /// The id the next approval request gets.
    next_approval: u64,
    /// Writes every event that changes the conversation to the session's journal.
    pub recorder: Option<super::recorder::Recorder>,
}

/// An [`Op::Approve`] as taken in.
pub(crate) struct Answer {
    pub id: u64,
    pub decision: Decision,
    pub always: bool,
}

impl Io {
    pub(super) fn new(ops: mpsc::UnboundedReceiver<Op>, events: mpsc::Sender<EngineEvent>) -> Self {
        Io {
            ops,
            events,
            queued: VecDeque::new(),
            cancel: CancellationToken::new(),
            closed: false,
            decisions: VecDeque::new(),
            next_approval: 1,
            recorder: None,
        }
    }

    /// A new approval id.
    pub(crate) fn approval_id(&mut self) -> u64 {
        let id = self.next_approval;
        self.next_approval += 1;
        id
    }

    /// Wait for the decision about approval `id`; `None` when the turn is cancelled (or the
    /// agent is closing) first. Decisions for other ids are stale: dropped with a log line.
    pub(super) async fn decision(&mut self, id: u64) -> Option<Answer> {
        poll_fn(|cx| {
            self.poll_ops(cx);
            while let Some(answer) = self.decisions.pop_front() {
                if answer.id == id {
                    return Poll::Ready(Some(answer));
                }
                ignored(answer.id);
            }
            if self.cancel.is_cancelled() {
                Poll::Ready(None)
            } else {
                Poll::Pending
            }
        })
        .await
    }

    /// The next operation when idle: a queued one first. `None` when the agent should stop.
    pub(crate) async fn next_op(&mut self) -> Option<Op> {
        if let Some(op) = self.queued.pop_front() {
            return Some(op);
        }
        if self.closed {
            return None;
        }
        let op = self.ops.recv().await;
        if op.is_none() {
            self.closed = true;
        }
        op
    }

    fn intake(&mut self, op: Op) {
        match op {
            Op::Cancel => self.cancel.cancel(),
            Op::Shutdown => {
                if let Some(r) = self.recorder.as_mut() {
                    r.close();
                }
                self.cancel.cancel();
                self.queued.push_back(Op::Shutdown);
            }
            Op::Approve {
                id,
                decision,
                always,
            } => self.decisions.push_back(Answer {
                id,
                decision,
                always,
            }),
            other => self.queued.push_back(other),
        }
    }

    /// Decisions nobody waits for any more (the call was cancelled, or the id is unknown).
    pub(crate) fn drop_decisions(&mut self) {
        for answer in std::mem::take(&mut self.decisions) {
            ignored(answer.id);
        }
    }

    /// Take in every operation already sent; registers for a wake-up when there is none.
    fn poll_ops(&mut self, cx: &mut std::task::Context<'_>) {
        while !self.closed {
            match self.ops.poll_recv(cx) {
                Poll::Ready(Some(op)) => self.intake(op),
                Poll::Ready(None) => {
                    self.closed = true;
                    self.cancel.cancel();
                }
                Poll::Pending => break,
            }
        }
    }

    /// Await `fut`, taking operations in meanwhile.
    pub(super) async fn run<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = pin!(fut);
        poll_fn(|cx| {
            self.poll_ops(cx);
            fut.as_mut().poll(cx)
        })
        .await
    }

    /// Send one event, waiting for room. A reader gone cancels the turn: nobody would see it.
    pub(super) async fn emit(&mut self, event: EngineEvent) {
        // Whoever listens (the TUI, exec), tool outcomes reach the log file.
        crate::logging::engine_event(&event);
        // Recorded before it is sent: what a reader saw is in the journal, or being written.
        let follow = match self.recorder.as_mut() {
            Some(r) => r.observe(&event),
            None => Vec::new(),
        };
        self.send(event).await;
        for e in follow {
            self.send(e).await;
        }
    }

    async fn send(&mut self, event: EngineEvent) {
        let events = self.events.clone();
        if self.run(events.send(event)).await.is_err() {
            self.closed = true;
            self.cancel.cancel();
        }
    }
}

/// A decision that answers no waiting approval: not an error of the agent, but worth a trace.
pub(crate) fn ignored(id: u64) {
    tracing::info!(
        id,
        "a decision for an approval nobody waits for was ignored"
    );
}
