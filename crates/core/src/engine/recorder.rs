//! The session recorder: the agent's own account of what it did, written to the session's
//! journal as it happens. Every event the agent emits passes through [`Recorder::observe`]
//! first; the ones that change what the agent owns (a message appended, a trace finished, the
//! system prompt changed, a cut, a call's end) become journal records, in the order emitted,
//! through the [`JournalWriter`] thread (nothing here waits for the disk). The answer streaming
//! now is saved as a partial answer at most once a second, so that a crash mid-answer keeps it.
//!
//! The session is locked (one writer per session) before its first record, and its journal
//! created then: a run that sends nothing leaves no file.

use std::time::{Duration, Instant};

use super::event::{EngineEvent, SystemChange};
use super::live_answer::{LiveAnswer, Size};
use super::shared_trace::SharedTrace;
use crate::session::journal::{self, Header, Record, TraceBody};
use crate::session::time::now_unix_ms;
use crate::session::writer::{JournalWriter, Target};
use crate::session::{
    CallDecision, Resumed, Session, SessionLock, SessionStore, ToolEnd, first_line,
};
use kimi_protocol::Message;

/// Least time between two saves of a streaming answer: each appends what arrived since the
/// last one.
pub const PARTIAL_SAVE_EVERY: Duration = Duration::from_secs(1);

/// Records a conversation into one session of a store.
pub struct Recorder {
    store: SessionStore,
    /// The session's metadata (its messages and traces are not kept here).
    meta: Session,
    lock: Option<SessionLock>,
    target: Target,
    writer: Option<JournalWriter>,
    /// Records that go first into a journal this recorder creates: the header, or all of a
    /// session continued under a new id (or from an old `.json`).
    seed: Vec<Record>,
    /// Writers of sessions left behind (`/clear`, a switch), drained and flushed at the end.
    retired: Vec<JournalWriter>,
    /// Whether each message of the conversation is a user message, and the first one's line.
    users: Vec<bool>,
    first: Option<(usize, String)>,
    traces: Vec<SharedTrace>,
    /// The round streaming now, its trace, and the size of the answer last saved.
    live: Option<LiveAnswer>,
    round_trace: Option<usize>,
    saved: Option<Size>,
    last_partial: Option<Instant>,
    /// History being replayed: already in the journal.
    paused: bool,
    /// Saving failed: nothing more is written.
    off: bool,
}

impl Recorder {
    /// Record a new session, `meta` (empty), into `store`.
    pub fn new(store: SessionStore, meta: Session) -> Recorder {
        let seed = vec![Record::Header(Header::of(&meta))];
        let target = Target::Create {
            beside_legacy: false,
        };
        Recorder::start(store, meta, None, target, seed)
    }

    /// A recorder that has written nothing yet: `seed` goes first, to `target`.
    fn start(
        store: SessionStore,
        meta: Session,
        lock: Option<SessionLock>,
        target: Target,
        seed: Vec<Record>,
    ) -> Recorder {
        Recorder {
            store,
            meta,
            lock,
            target,
            writer: None,
            seed,
            retired: Vec::new(),
            users: Vec::new(),
            first: None,
            traces: Vec::new(),
            live: None,
            round_trace: None,
            saved: None,
            last_partial: None,
            paused: false,
            off: false,
        }
    }

    /// Continue `resumed`, whose conversation the agent holds with these traces: appended to
    /// its journal, or (forked, or read from an old `.json` or from elsewhere) written whole
    /// as a new journal with the first record.
    pub fn resumed(store: SessionStore, r: Resumed, traces: &[SharedTrace]) -> Recorder {
        let Resumed {
            mut session,
            lock,
            forked,
            journal,
            ..
        } = r;
        let (target, seed) = if journal && !forked {
            (Target::Continue, Vec::new())
        } else {
            let beside_legacy = !forked;
            (
                Target::Create { beside_legacy },
                journal::records_of(&session),
            )
        };
        let users = session.messages.iter().map(|m| m.role == "user").collect();
        let first = first_user(&session.messages);
        session.messages.clear();
        session.traces.clear();
        session.partial.clear();
        session.tool_ends.clear();
        session.decisions.clear();
        Recorder {
            users,
            first,
            traces: traces.to_vec(),
            ..Recorder::start(store, session, Some(lock), target, seed)
        }
    }

    /// The session recorded into.
    pub fn meta(&self) -> &Session {
        &self.meta
    }

    /// Whether its journal has been written to by this recorder.
    pub fn started(&self) -> bool {
        self.writer.is_some()
    }

    pub(crate) fn pause(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Take in one event the agent is about to emit; returns the events to emit after it (the
    /// journal was created, or saving failed).
    pub fn observe(&mut self, e: &EngineEvent) -> Vec<EngineEvent> {
        self.observe_at(e, Instant::now())
    }

    /// [`Recorder::observe`] at `now`: the partial answer is saved when a second has passed
    /// since the last save, by this clock.
    pub fn observe_at(&mut self, e: &EngineEvent, now: Instant) -> Vec<EngineEvent> {
        let mut out = Vec::new();
        if self.paused {
            return out;
        }
        // A failure the writer found since (creating the journal, a full disk) is said now.
        if let Some(e) = self.writer.as_ref().and_then(JournalWriter::error) {
            self.stop(e.to_string(), &mut out);
        }
        let at = now_unix_ms();
        let records = self.records(e, at, now);
        if !records.is_empty() && !self.off {
            self.write(records, &mut out);
        }
        out
    }

    /// The records `e` makes, and the model of the conversation brought up to it.
    fn records(&mut self, e: &EngineEvent, at: u64, now: Instant) -> Vec<Record> {
        let mut out = Vec::new();
        match e {
            EngineEvent::MessageAppended { index, message } => {
                self.users.truncate(*index);
                self.users.push(message.role == "user");
                if self.first.is_none() && message.role == "user" {
                    self.first = Some((*index, first_line(std::slice::from_ref(message))));
                }
                out.push(Record::Message {
                    at,
                    index: *index,
                    message: (**message).clone(),
                });
            }
            EngineEvent::RoundStarted { .. } => {
                self.live = Some(LiveAnswer::new(self.users.len()));
                self.saved = None;
                self.round_trace = None;
            }
            EngineEvent::TraceStarted { index, trace } => {
                self.traces.truncate(*index);
                self.traces.push(trace.clone());
                self.round_trace = self.live.as_ref().map(|_| *index);
            }
            EngineEvent::Stream(s) => {
                let grew = self.live.as_mut().is_some_and(|l| l.take(s));
                if grew && self.partial_due(now) {
                    self.partial(at, now, &mut out);
                }
            }
            EngineEvent::TraceFinished {
                index,
                message_index,
            } => {
                if let Some(trace) = self.traces.get(*index) {
                    out.push(Record::Trace {
                        at,
                        index: *index,
                        message_index: *message_index,
                        // Finished: the writer reads the agent's trace in place, no copy.
                        trace: TraceBody::Shared(trace.clone()),
                    });
                }
                if self.round_trace == Some(*index) {
                    self.round_trace = None;
                }
            }
            EngineEvent::RoundFinished { .. } => {
                // Its message and trace are written: the partial record is done with.
                if let Some(live) = self.live.take()
                    && self.saved.take().is_some()
                {
                    out.push(Record::PartialEnd {
                        at,
                        after_message: live.answer.after_message,
                    });
                }
            }
            EngineEvent::CallDecided {
                call_id,
                arguments,
                decision,
                ..
            } => out.push(Record::CallDecided {
                at,
                call: CallDecision {
                    call_id: call_id.clone(),
                    arguments: arguments.clone(),
                    decision: decision.clone(),
                },
            }),
            EngineEvent::ToolFinished { call, outcome, .. } => out.push(Record::ToolEnd {
                at,
                end: ToolEnd {
                    call_id: call.id.clone(),
                    exit: (&outcome.status).into(),
                    duration_ns: u64::try_from(outcome.duration.as_nanos()).unwrap_or(u64::MAX),
                },
            }),
            EngineEvent::SystemSet { prompt, change } => {
                if *change != SystemChange::Stored {
                    out.push(Record::System {
                        at,
                        content: prompt.clone(),
                    });
                }
                if *change == SystemChange::Inserted {
                    self.users.insert(0, false);
                    if let Some((i, _)) = self.first.as_mut() {
                        *i += 1;
                    }
                    if let Some(l) = self.live.as_mut() {
                        l.answer.after_message += 1;
                    }
                }
                if *change != SystemChange::Stored {
                    out.push(self.summary(at));
                }
            }
            EngineEvent::Truncated { messages, traces } => {
                self.users.truncate(*messages);
                self.first = self.first.take().filter(|(i, _)| i < messages);
                self.traces.truncate(*traces);
                self.live = None;
                self.saved = None;
                out.push(Record::Truncate {
                    at,
                    messages: *messages,
                    traces: *traces,
                });
                out.push(self.summary(at));
            }
            EngineEvent::TurnDone { .. } | EngineEvent::TurnFailed { .. }
                if !self.users.is_empty() =>
            {
                out.push(self.summary(at));
            }
            EngineEvent::Cleared => self.next_session(),
            EngineEvent::ModeSet(mode) => self.meta.mode = *mode,
            EngineEvent::EndpointSet {
                mode,
                model,
                base_url,
                ..
            } => {
                self.meta.mode = *mode;
                self.meta.model = model.clone();
                self.meta.base_url = base_url.clone();
            }
            _ => {}
        }
        out
    }

    fn summary(&self, at: u64) -> Record {
        Record::Summary {
            at,
            turns: self.users.iter().filter(|u| **u).count(),
            first_line: self.first.as_ref().map(|f| f.1.clone()).unwrap_or_default(),
        }
    }

    /// Whether the streaming answer may be saved now: not saved within the last second, and
    /// the writer has written the last one (each holds what arrived since the one before).
    fn partial_due(&self, now: Instant) -> bool {
        self.writer.as_ref().is_none_or(|w| !w.busy())
            && (self.last_partial)
                .is_none_or(|t| now.saturating_duration_since(t) >= PARTIAL_SAVE_EVERY)
    }

    /// The streaming answer as it stands: what arrived since the last save, or all of it.
    fn partial(&mut self, at: u64, now: Instant, out: &mut Vec<Record>) {
        let Some(live) = self.live.as_mut().filter(|l| !l.is_empty()) else {
            return;
        };
        live.answer.saved_unix_ms = at;
        if self.saved.is_none()
            && let Some(k) = self.round_trace
            && let Some(trace) = self.traces.get(k)
        {
            // The streaming request's trace goes with its first partial record, so that a
            // crash keeps the request; its final version replaces it when the round ends.
            out.push(Record::Trace {
                at,
                index: k,
                message_index: live.answer.after_message,
                // A copy: the agent is still adding to it.
                trace: TraceBody::from(trace.read().clone()),
            });
        }
        let (partial, more) = match self.saved.as_ref().and_then(|from| live.since(from)) {
            Some(part) => (part, true),
            None => (live.answer.clone(), false),
        };
        out.push(Record::Partial { at, partial, more });
        self.saved = Some(live.size());
        self.last_partial = Some(now);
    }

    /// `/clear`: what follows is a new session (the old journal stays as it was).
    fn next_session(&mut self) {
        if let Some(w) = self.writer.take() {
            self.retired.push(w);
        }
        self.lock = None;
        let m = &self.meta;
        self.meta = Session::new(&m.profile, m.mode, &m.model, &m.base_url);
        self.target = Target::Create {
            beside_legacy: false,
        };
        self.seed = vec![Record::Header(Header::of(&self.meta))];
        self.users.clear();
        self.first = None;
        self.traces.clear();
        self.live = None;
        self.saved = None;
        self.round_trace = None;
    }

    fn write(&mut self, records: Vec<Record>, out: &mut Vec<EngineEvent>) {
        if self.writer.is_none() {
            if let Err(why) = self.open() {
                return self.stop(why, out);
            }
            out.push(EngineEvent::SessionStarted {
                meta: Box::new(self.meta.clone()),
            });
        }
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        if self.seed.is_empty() {
            w.send(records);
        } else {
            let mut all = std::mem::take(&mut self.seed);
            all.extend(records);
            w.send(all);
        }
        if let Some(e) = w.error() {
            self.stop(e.to_string(), out);
        }
        for r in &mut self.retired {
            r.send(Vec::new());
        }
    }

    /// Lock the session (first write of this id) and start its writer.
    fn open(&mut self) -> Result<(), String> {
        if self.lock.as_ref().is_none_or(|l| l.id != self.meta.id) {
            self.lock = None;
            self.lock = Some(self.store.lock(&self.meta.id).map_err(|e| e.to_string())?);
        }
        let w = JournalWriter::spawn(&self.store, &self.meta.id, self.target)
            .map_err(|e| format!("cannot start the session writer: {e}"))?;
        self.writer = Some(w);
        Ok(())
    }

    fn stop(&mut self, why: String, out: &mut Vec<EngineEvent>) {
        tracing::error!("session not saved: {why}");
        self.off = true;
        self.writer = None;
        out.push(EngineEvent::SessionStopped {
            reason: format!("Session not saved: {why}. Saving is off for this run."),
        });
    }

    /// The agent is stopping mid-turn (quit, a closed terminal): the answer streaming now is
    /// saved as it stands, as a partial answer (shown interrupted when resumed, never sent), and
    /// nothing after it is recorded: the cancelled turn's end would make it a message.
    pub(crate) fn close(&mut self) {
        if self.paused || self.off {
            return;
        }
        let at = now_unix_ms();
        let mut records = Vec::new();
        if self.live.as_ref().is_some_and(|l| !l.is_empty()) {
            self.partial(at, Instant::now(), &mut records);
        }
        if !records.is_empty() {
            // What it would tell (the journal started, or failed) has nobody left to hear it.
            self.write(records, &mut Vec::new());
        }
        self.paused = true;
    }

    /// Wait (at most `timeout`) until every writer has written and fsynced what it was sent;
    /// `false` when one took longer. Blocks: run it off the async tasks.
    pub fn flush(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut done = true;
        for w in self.retired.iter_mut().chain(self.writer.as_mut()) {
            done &= w.flush(deadline.saturating_duration_since(Instant::now()));
        }
        self.retired.clear();
        done
    }
}

/// Where the first user message is, and its line.
fn first_user(messages: &[Message]) -> Option<(usize, String)> {
    let i = messages.iter().position(|m| m.role == "user")?;
    Some((i, first_line(&messages[i..=i])))
}
