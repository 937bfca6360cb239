//! The actor: a task that owns the conversation, the traces, the tools and the backend, takes
//! [`Op`]s and reports [`EngineEvent`]s.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::event::{EngineEvent, Op, SystemChange, TurnOutcome, set_system};
use super::inbox::Io;
use super::shared_trace::SharedTrace;
use super::turn;
use crate::tools::Toolbox;
use kimi_client::{Backend, Endpoint};
use kimi_protocol::Message;
use kimi_protocol::{Mode, Trace};

/// Events buffered between the agent and its reader: when the reader falls behind a fast
/// stream, the stream waits instead of queueing every token in memory.
pub const EVENT_QUEUE: usize = 1024;

/// What the agent starts from.
pub struct AgentInit {
    pub backend: Backend,
    pub toolbox: Toolbox,
    pub max_rounds: u32,
    /// Goes first in a new conversation.
    pub system_prompt: Option<String>,
    /// A resumed conversation, and its traces with the index of the message each produced
    /// (shared with the caller's view: the agent only ever adds to new traces).
    pub conversation: Vec<Message>,
    pub traces: Vec<(usize, SharedTrace)>,
}

/// The caller's side of a running agent.
pub struct AgentHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub events: mpsc::Receiver<EngineEvent>,
    pub task: JoinHandle<()>,
}

impl AgentHandle {
    /// Send an operation; `false` when the agent has stopped.
    pub fn send(&self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }
}

/// What the agent owns.
pub(crate) struct State {
    pub backend: Backend,
    pub toolbox: Toolbox,
    pub max_rounds: u32,
    pub system_prompt: Option<String>,
    pub conversation: Vec<Message>,
    pub traces: Vec<(usize, SharedTrace)>,
    /// Tools the user allowed for the session (`Op::Approve` with `always`), each with the
    /// fingerprint it had then.
    pub(crate) always_allow: HashMap<String, u64>,
    /// Token-level data: what the user was told about it, so each state is told once.
    pub(crate) logprobs: super::logprobs::LogprobsState,
    /// An edited answer the next turn's first request continues ([`Op::ContinueEdited`]).
    pub(crate) continuation: Option<super::continue_edit::Continuation>,
}

pub struct Agent {
    state: State,
    io: Io,
}

impl Agent {
    /// Start the agent on the current runtime; `queue` events may wait for the reader.
    pub fn spawn(init: AgentInit, queue: usize) -> AgentHandle {
        let (ops, ops_rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::channel(queue.max(1));
        let agent = Agent::new(init, ops_rx, events_tx);
        let task = tokio::spawn(agent.run());
        AgentHandle { ops, events, task }
    }

    pub fn new(
        init: AgentInit,
        ops: mpsc::UnboundedReceiver<Op>,
        events: mpsc::Sender<EngineEvent>,
    ) -> Self {
        Agent {
            state: State {
                backend: init.backend,
                toolbox: init.toolbox,
                max_rounds: init.max_rounds,
                system_prompt: init.system_prompt,
                conversation: init.conversation,
                traces: init.traces,
                always_allow: HashMap::new(),
                logprobs: Default::default(),
                continuation: None,
            },
            io: Io::new(ops, events),
        }
    }

    /// Take operations until `Shutdown`, or until the senders are gone and the queue is empty.
    pub async fn run(mut self) {
        while let Some(op) = self.io.next_op().await {
            if matches!(
                op,
                Op::UserTurn { .. } | Op::Retry | Op::ContinueEdited { .. }
            ) {
                // A fresh token before anything is sent: a cancel taken in from here on
                // (even while the user's message is reported) is for this turn.
                self.io.cancel = CancellationToken::new();
            }
            match op {
                Op::Shutdown => break,
                Op::UserTurn { text } => {
                    if self.state.conversation.is_empty()
                        && let Some(sys) = self.state.first_system_message()
                    {
                        self.state.append(&mut self.io, Message::system(sys)).await;
                    }
                    self.state.append(&mut self.io, Message::user(text)).await;
                    self.turn().await;
                }
                Op::Retry => {
                    let Some(last_user) = self
                        .state
                        .conversation
                        .iter()
                        .rposition(|m| m.role == "user")
                    else {
                        let text = "Nothing to retry yet.".to_owned();
                        self.io
                            .emit(EngineEvent::Notice { text, error: true })
                            .await;
                        let outcome = Box::default();
                        self.io.emit(EngineEvent::TurnDone { outcome }).await;
                        continue;
                    };
                    let s = &mut self.state;
                    s.conversation.truncate(last_user + 1);
                    // Traces of the answers being replaced go too.
                    let keep = s
                        .traces
                        .iter()
                        .position(|(m, _)| *m > last_user)
                        .unwrap_or(s.traces.len());
                    s.traces.truncate(keep);
                    let (messages, traces) = (s.conversation.len(), keep);
                    self.io
                        .emit(EngineEvent::Truncated { messages, traces })
                        .await;
                    self.turn().await;
                }
                Op::ContinueEdited { text } => {
                    if super::continue_edit::start(&mut self.state, &mut self.io, text).await {
                        self.turn().await;
                    }
                }
                Op::Rewind { user_index } => {
                    super::rewind::rewind(&mut self.state, &mut self.io, user_index).await
                }
                Op::Record(handoff) => {
                    super::session_start::record(&mut self.state, &mut self.io, handoff).await
                }
                Op::Resume { store, id } => {
                    super::session_start::resume(&mut self.state, &mut self.io, store, id).await
                }
                Op::Cancel => {}
                Op::Approve { id, .. } => super::inbox::ignored(id),
                Op::Snapshot => {
                    let messages = self.state.conversation.clone();
                    let traces = (self.state.traces.iter())
                        .map(|(m, t)| (*m, t.read().clone()))
                        .collect();
                    self.io
                        .emit(EngineEvent::Snapshot { messages, traces })
                        .await;
                }
                #[cfg(test)]
                Op::PanicForTest => panic!("the agent was told to panic"),
                other => self.state.apply(&mut self.io, other).await,
            }
        }
        // Leave what was cancelled in the queue: nothing.
        self.io.cancel.cancel();
        // What was recorded is on disk before the agent's task ends.
        super::session_start::finish_recording(&mut self.io).await;
    }

    /// Run a turn. A panic inside it (a bug) ends the turn as failed with a
    /// message; the agent and what it appended before the panic stay.
    async fn turn(&mut self) {
        let event = guarded(turn::run(&mut self.state, &mut self.io)).await;
        self.io.emit(event).await;
        // Decisions that arrived after their call was settled answer nothing now.
        self.io.drop_decisions();
        // What was queued for a round boundary but met the turn's end instead.
        self.state.apply_between_rounds(&mut self.io).await;
    }
}

impl State {
    /// The system message a new conversation starts with: the system prompt, then the
    /// instructions of each ready MCP server whose entry says `instructions = true` (the
    /// server's words reach the model only when the user said so).
    fn first_system_message(&self) -> Option<String> {
        let servers = self
            .toolbox
            .mcp()
            .map(crate::tools::mcp::McpHub::instructions)
            .unwrap_or_default();
        let mut parts: Vec<String> = self.system_prompt.iter().cloned().collect();
        for (server, text) in servers {
            parts.push(format!(
                "Instructions from the MCP server `{server}`:\n{text}"
            ));
        }
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    pub(super) async fn append(&mut self, io: &mut Io, message: Message) {
        let index = self.conversation.len();
        self.conversation.push(message.clone());
        let message = Box::new(message);
        io.emit(EngineEvent::MessageAppended { index, message })
            .await;
    }

    /// The trace at `index` is complete.
    pub(crate) async fn finish_trace(&mut self, io: &mut Io, index: usize) {
        let Some((message_index, _)) = self.traces.get(index) else {
            return;
        };
        let message_index = *message_index;
        io.emit(EngineEvent::TraceFinished {
            index,
            message_index,
        })
        .await;
    }

    /// Apply the queued operations that may run between two rounds (system prompt, mode),
    /// in order; the others stay queued for the turn's end.
    pub(crate) async fn apply_between_rounds(&mut self, io: &mut Io) {
        let queued = std::mem::take(&mut io.queued);
        for op in queued {
            if turn::waits_for_turn_end(&op) || matches!(op, Op::Snapshot) {
                io.queued.push_back(op);
            } else {
                self.apply(io, op).await;
            }
        }
    }

    /// `SetSystem`, `SetMode`, `Revoke`, `Clear`.
    pub(super) async fn apply(&mut self, io: &mut Io, op: Op) {
        match op {
            Op::SetSystem { prompt } => {
                let change = set_system(&mut self.conversation, &prompt);
                if change == SystemChange::Inserted {
                    // Every message moved up by one, the traces' messages with them.
                    self.traces.iter_mut().for_each(|(m, _)| *m += 1);
                }
                self.system_prompt = Some(prompt.clone());
                io.emit(EngineEvent::SystemSet { prompt, change }).await;
            }
            Op::SetMode(mode) => self.set_mode(io, mode).await,
            Op::Revoke { tool: None } => self.always_allow.clear(),
            Op::Revoke { tool: Some(t) } => {
                self.always_allow.remove(&t);
            }
            Op::SetThinking(on) => self.set_thinking(io, on).await,
            Op::SetEndpoint {
                endpoint,
                max_rounds,
            } => self.set_endpoint(io, *endpoint, max_rounds).await,
            Op::SetLogprobs(n) => super::logprobs::set(self, io, n).await,
            Op::Clear => {
                self.conversation.clear();
                self.traces.clear();
                io.emit(EngineEvent::Cleared).await;
            }
            Op::UserTurn { .. }
            | Op::Retry
            | Op::ContinueEdited { .. }
            | Op::Snapshot
            | Op::Cancel
            | Op::Shutdown
            | Op::Approve { .. }
            | Op::Rewind { .. }
            | Op::Record(_)
            | Op::Resume { .. } => {}
            // The supervisor answers these; an agent without one has nothing to do.
            Op::ListModels { .. }
            | Op::SwitchModel { .. }
            | Op::SwitchProfile { .. }
            | Op::CheckArguments { .. }
            | Op::Compare { .. }
            | Op::ToolsReport => {}
            // Rules are the toolbox's, shared with a supervisor if there is one.
            op @ (Op::AddRule { .. } | Op::RemoveRule { .. } | Op::ListRules) => {
                if let Some(answer) = super::rule_ops::answer(&self.toolbox, &op) {
                    io.emit(answer).await;
                }
            }
            #[cfg(test)]
            Op::PanicForTest => {}
        }
    }

    /// `/thinking on|off`: the next request carries the switch (chat: the server's kwarg or
    /// Moonshot's `thinking`; raw: the template's `thinking`).
    async fn set_thinking(&mut self, io: &mut Io, on: bool) {
        let mut endpoint = self.backend.endpoint().clone();
        endpoint.thinking = Some(on);
        let text = match Backend::new(endpoint) {
            Ok(b) => {
                self.backend = b;
                return;
            }
            Err(e) => format!("cannot switch thinking: {e}"),
        };
        io.emit(EngineEvent::Notice { text, error: true }).await;
    }

    /// `/model`, `/profile`: a new backend for the next request; the conversation stays.
    async fn set_endpoint(&mut self, io: &mut Io, endpoint: Endpoint, max_rounds: u32) {
        match Backend::new(endpoint) {
            Ok(b) => {
                self.backend = b;
                self.max_rounds = max_rounds;
                let ep = self.backend.endpoint();
                io.emit(EngineEvent::EndpointSet {
                    mode: ep.mode,
                    model: ep.model.clone(),
                    base_url: ep.base_url.clone(),
                    template: ep.template(),
                    thinking: ep.thinking,
                })
                .await;
            }
            Err(e) => {
                let text = format!("cannot switch: {e}");
                io.emit(EngineEvent::Notice { text, error: true }).await;
            }
        }
    }

    async fn set_mode(&mut self, io: &mut Io, mode: Mode) {
        let mut endpoint = self.backend.endpoint().clone();
        endpoint.mode = mode;
        match Backend::new(endpoint) {
            Ok(b) => {
                self.backend = b;
                io.emit(EngineEvent::ModeSet(mode)).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot switch mode");
                let text = format!("cannot switch mode: {e}");
                io.emit(EngineEvent::Notice { text, error: true }).await;
            }
        }
    }
}

/// Add a trace to `traces` and report it (a free function: a request borrows the rest of the
/// state while it streams).
pub(crate) async fn start_trace(
    traces: &mut Vec<(usize, SharedTrace)>,
    io: &mut Io,
    message_index: usize,
    trace: Trace,
) -> usize {
    let index = traces.len();
    let trace = SharedTrace::new(trace);
    traces.push((message_index, trace.clone()));
    io.emit(EngineEvent::TraceStarted { index, trace }).await;
    index
}

/// Await a turn: its outcome, or the message of a panic inside it.
async fn guarded(turn: impl std::future::Future<Output = TurnOutcome>) -> EngineEvent {
    match AssertUnwindSafe(turn).catch_unwind().await {
        Ok(outcome) => EngineEvent::TurnDone {
            outcome: Box::new(outcome),
        },
        Err(payload) => {
            let message = panic_message(payload);
            tracing::error!(%message, "the turn panicked");
            EngineEvent::TurnFailed { message }
        }
    }
}

/// The message of a panic's payload.
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_panic_in_the_turn_is_reported_as_a_failed_turn() {
        let turn = async {
            let v: Vec<u8> = Vec::new();
            // A bug of the kind eventsource-stream 0.2.3 had on a BOM.
            let _ = v[usize::from(v.is_empty())];
            TurnOutcome::default()
        };
        match guarded(turn).await {
            EngineEvent::TurnFailed { message } => {
                assert!(message.contains("index out of bounds"), "{message}");
            }
            other => panic!("expected a failed turn, got {other:?}"),
        }
        let ok = async {
            TurnOutcome {
                rounds: 3,
                ..TurnOutcome::default()
            }
        };
        assert!(matches!(
            guarded(ok).await,
            EngineEvent::TurnDone { outcome } if outcome.rounds == 3
        ));
    }
}
