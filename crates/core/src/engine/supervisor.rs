//! The agent's supervisor: what a screen talks to instead of the agent itself. It forwards
//! operations to the agent and its events back, and answers on its own what needs the
//! server's model list, the config's profiles or the toolbox but not the conversation: model
//! listing and switching, profile switching, checking edited arguments, the `/tools` report.
//! When the agent's task dies (a panic outside a turn's guard), it starts a new agent from the
//! last conversation and endpoint and says so ([`EngineEvent::AgentRestarted`]).
//!
//! Its own answers are queued and handed out before the agent's next event, so an answer
//! follows the events that came before the question.

use std::collections::{BTreeMap, VecDeque};

use kimi_client::{Backend, BackendError, ModelList};
use kimi_protocol::{Message, StreamEvent, sanitize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::{Agent, AgentHandle, AgentInit, panic_message};
use super::event::{EngineEvent, Op};
use super::mirror::Mirror;
use super::shared_trace::SharedTrace;
use super::switchboard::Switchboard;
use super::tools_report::ToolsReport;
use crate::tools::Toolbox;

/// What the first agent starts from, beside the switchboard's endpoint.
pub struct SupervisorInit {
    pub toolbox: Toolbox,
    /// Goes first in a new conversation.
    pub system_prompt: Option<String>,
    /// A resumed conversation and its traces (shared with the caller's view).
    pub conversation: Vec<Message>,
    pub traces: Vec<(usize, SharedTrace)>,
}

/// What a model listing is for.
#[derive(Debug)]
enum Purpose {
    /// `/model`: the list is shown.
    Show,
    /// At start, after `/profile` or a turn: the context length is learnt, nothing said.
    Quiet,
    /// `/model NAME`: switch if the server lists it (or cannot list).
    Switch(String),
}

/// A listing came back.
struct Listing {
    purpose: Purpose,
    result: Result<ModelList, BackendError>,
}

/// Most models a notice names: a server can list any number.
const LISTED: usize = 50;

pub struct Supervisor {
    agent: AgentHandle,
    board: Switchboard,
    /// The client for the board's endpoint: what a new agent starts with (the last endpoint
    /// that could be built, should a later one fail).
    backend: Backend,
    toolbox: Toolbox,
    mirror: Mirror,
    /// Answers of the supervisor's own, handed out before the agent's next event.
    own: VecDeque<EngineEvent>,
    listings_tx: mpsc::UnboundedSender<Listing>,
    listings: mpsc::UnboundedReceiver<Listing>,
    /// Answers worked out off the loop that need nothing more from it (A/B comparisons).
    done_tx: mpsc::UnboundedSender<EngineEvent>,
    done: mpsc::UnboundedReceiver<EngineEvent>,
    /// The A/B comparison on its way: one at a time, a new one gives up the old.
    comparing: Option<CancellationToken>,
    /// A turn was asked for and has not ended.
    running: bool,
    /// `Shutdown` was sent: the agent's end is not a failure.
    stopping: bool,
    /// The calls of the round streaming now: name and arguments so far, by index.
    calls: BTreeMap<usize, (String, String)>,
    queue: usize,
}

impl Supervisor {
    /// Start the first agent on the current runtime; `queue` events may wait for the reader.
    pub fn spawn(
        board: Switchboard,
        init: SupervisorInit,
        queue: usize,
    ) -> Result<Self, BackendError> {
        let backend = board.backend()?;
        let mirror = Mirror::new(init.system_prompt, init.conversation, init.traces);
        let agent = spawn_agent(&backend, &board, &init.toolbox, &mirror, queue);
        let (listings_tx, listings) = mpsc::unbounded_channel();
        let (done_tx, done) = mpsc::unbounded_channel();
        Ok(Supervisor {
            agent,
            board,
            backend,
            toolbox: init.toolbox,
            mirror,
            own: VecDeque::new(),
            listings_tx,
            listings,
            done_tx,
            done,
            comparing: None,
            running: false,
            stopping: false,
            calls: BTreeMap::new(),
            queue,
        })
    }

    /// Send an operation: to the agent, or answered here. `false` when the agent has stopped
    /// and has not been replaced yet.
    pub fn send(&mut self, op: Op) -> bool {
        match op {
            Op::ListModels { show } => self.list(if show { Purpose::Show } else { Purpose::Quiet }),
            Op::SwitchModel { id } => self.list(Purpose::Switch(id)),
            Op::SwitchProfile { name } => return self.switch_profile(&name),
            Op::Compare {
                index,
                trace,
                variant,
            } => {
                if let Some(old) = self.comparing.take() {
                    old.cancel();
                }
                let cancel = CancellationToken::new();
                self.comparing = Some(cancel.clone());
                super::compare::spawn(
                    self.board.endpoint().clone(),
                    index,
                    *trace,
                    variant,
                    self.done_tx.clone(),
                    cancel,
                );
            }
            op @ (Op::CheckArguments { .. }
            | Op::ToolsReport
            | Op::AddRule { .. }
            | Op::RemoveRule { .. }
            | Op::ListRules) => {
                self.own.extend(toolbox_answer(&self.toolbox, op));
            }
            op => return self.forward(op),
        }
        true
    }

    /// The next event: the supervisor's own answers first, then the agent's. `None` once the
    /// agent has stopped after `Shutdown`. Cancel-safe (for `select!`).
    pub async fn recv(&mut self) -> Option<EngineEvent> {
        loop {
            if let Some(e) = self.own.pop_front() {
                return Some(e);
            }
            tokio::select! {
                Some(listing) = self.listings.recv() => self.listed(listing),
                Some(e) = self.done.recv() => return Some(e),
                e = self.agent.events.recv() => match e {
                    Some(e) => {
                        self.observe(&e);
                        return Some(e);
                    }
                    None if self.stopping => return None,
                    None => self.restart().await,
                },
            }
        }
    }

    /// An event ready now, without waiting (a burst of tokens is drained this way); a
    /// stopped agent is replaced by the next [`Supervisor::recv`].
    pub fn try_recv(&mut self) -> Option<EngineEvent> {
        if let Some(e) = self.own.pop_front() {
            return Some(e);
        }
        if let Ok(e) = self.done.try_recv() {
            return Some(e);
        }
        let e = self.agent.events.try_recv().ok()?;
        self.observe(&e);
        Some(e)
    }

    /// After `Shutdown`: wait at most `wait` for the agent's task to end (its recorder writes
    /// what it has on the way out), then the events it reported meanwhile.
    pub async fn stopped(&mut self, wait: std::time::Duration) -> Vec<EngineEvent> {
        if tokio::time::timeout(wait, &mut self.agent.task)
            .await
            .is_err()
        {
            tracing::error!("the agent did not stop within {wait:?}");
        }
        let mut events: Vec<EngineEvent> = self.own.drain(..).collect();
        while let Ok(e) = self.agent.events.try_recv() {
            events.push(e);
        }
        events
    }

    fn forward(&mut self, op: Op) -> bool {
        match &op {
            Op::UserTurn { .. } | Op::Retry | Op::ContinueEdited { .. } => self.running = true,
            Op::Shutdown => self.stopping = true,
            Op::SetThinking(on) => {
                self.board.thinking_set(*on);
                self.rebuild();
            }
            Op::SetEndpoint {
                endpoint,
                max_rounds,
            } => {
                self.board.endpoint_set((**endpoint).clone(), *max_rounds);
                self.rebuild();
            }
            _ => {}
        }
        self.agent.send(op)
    }

    /// The client for the board's endpoint, kept when it can be built.
    fn rebuild(&mut self) {
        match self.board.backend() {
            Ok(b) => self.backend = b,
            Err(e) => tracing::warn!(error = %e, "the endpoint in use cannot be built"),
        }
    }

    fn observe(&mut self, e: &EngineEvent) {
        self.mirror.observe(e);
        match e {
            EngineEvent::ModeSet(mode) => {
                self.board.mode_set(*mode);
                self.rebuild();
            }
            EngineEvent::TurnDone { .. } | EngineEvent::TurnFailed { .. } => self.running = false,
            EngineEvent::RoundStarted { .. } => self.calls.clear(),
            EngineEvent::Stream(s) => self.streamed(s),
            _ => {}
        }
    }

    /// A streamed call's arguments are checked as soon as they are complete.
    fn streamed(&mut self, s: &StreamEvent) {
        match s {
            StreamEvent::ToolCallBegin { index, name, .. } => {
                self.calls.insert(*index, (name.clone(), String::new()));
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                if let Some((_, args)) = self.calls.get_mut(index) {
                    args.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd { index } => {
                if let Some((name, args)) = self.calls.get(index) {
                    let problem = self.toolbox.check_call(name, args).err();
                    self.own.push_back(EngineEvent::CallChecked {
                        index: *index,
                        problem,
                    });
                }
            }
            _ => {}
        }
    }

    /// GET `/models` off the loop; the answer comes back through `listings`.
    fn list(&mut self, purpose: Purpose) {
        let endpoint = self.board.endpoint().clone();
        let tx = self.listings_tx.clone();
        tokio::spawn(async move {
            let result = {
                // The model to switch to is kept wherever the server lists it.
                let wanted: Vec<&str> = match &purpose {
                    Purpose::Switch(name) => vec![name.as_str()],
                    _ => Vec::new(),
                };
                match Backend::new(endpoint) {
                    Ok(b) => b.list_models(&wanted).await,
                    Err(e) => Err(e),
                }
            };
            let _ = tx.send(Listing { purpose, result });
        });
    }

    fn listed(&mut self, Listing { purpose, result }: Listing) {
        let shown = matches!(purpose, Purpose::Show);
        let name = match purpose {
            Purpose::Switch(name) => Some(name),
            _ => None,
        };
        // What `/model NAME` does with the list: switch, or a notice why not.
        let go = name.as_ref().map(|name| match &result {
            Ok(list) if list.models.is_empty() => (
                Some(format!(
                    "The server lists no models; switching to {} anyway.",
                    one_line(name)
                )),
                false,
                true,
            ),
            Ok(list) if list.models.iter().any(|m| m.id == *name) => (None, false, true),
            Ok(list) => {
                let ids: Vec<String> = (list.models.iter().take(LISTED))
                    .map(|m| one_line(&m.id))
                    .collect();
                let more = match list.total().saturating_sub(LISTED) {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                let text = format!(
                    "Unknown model {}: the server lists {}{more}.",
                    one_line(name),
                    ids.join(", ")
                );
                (Some(text), true, false)
            }
            Err(e) => (
                Some(format!(
                    "Cannot check {} against the server's models ({e}); switching anyway.",
                    one_line(name)
                )),
                true,
                true,
            ),
        });
        let listing = result.map(Box::new).map_err(Box::new);
        self.own.push_back(EngineEvent::Models { shown, listing });
        if let (Some(name), Some((text, error, switch))) = (name, go) {
            if let Some(text) = text {
                self.own.push_back(EngineEvent::Notice { text, error });
            }
            if switch {
                self.switch_model(name);
            }
        }
    }

    fn switch_model(&mut self, name: String) {
        match self.board.switch_model(&name) {
            Err(e) => self.notice(e.to_string(), true),
            Ok(op) => {
                if self.running {
                    let text = format!("Model {} applies from the next request.", one_line(&name));
                    self.notice(text, false);
                }
                self.own.push_back(EngineEvent::ModelChosen { model: name });
                self.rebuild();
                self.agent_send(op);
            }
        }
    }

    fn switch_profile(&mut self, name: &str) -> bool {
        match self.board.switch_profile(name) {
            Err(e) => {
                self.notice(e.to_string(), true);
                true
            }
            Ok((op, choice)) => {
                if self.running {
                    self.notice(
                        format!("Profile {name} applies from the next request."),
                        false,
                    );
                }
                let learn = choice.context_window.is_none();
                let choice = Box::new(choice);
                self.own.push_back(EngineEvent::ProfileChosen { choice });
                self.rebuild();
                let sent = self.agent_send(op);
                if learn {
                    self.list(Purpose::Quiet);
                }
                sent
            }
        }
    }

    /// An operation the switchboard made: the agent applies it and reports it.
    fn agent_send(&mut self, op: Op) -> bool {
        self.agent.send(op)
    }

    fn notice(&mut self, text: String, error: bool) {
        self.own.push_back(EngineEvent::Notice { text, error });
    }

    /// The agent's task is over without `Shutdown`: a new agent takes over the conversation
    /// and the endpoint; a turn it was running ends as failed.
    async fn restart(&mut self) {
        let message = match (&mut self.agent.task).await {
            Err(e) if e.is_panic() => panic_message(e.into_panic()),
            _ => "the agent stopped".to_owned(),
        };
        tracing::error!(%message, "the agent stopped; starting a new one");
        self.agent = spawn_agent(
            &self.backend,
            &self.board,
            &self.toolbox,
            &self.mirror,
            self.queue,
        );
        self.calls.clear();
        self.own.push_back(EngineEvent::AgentRestarted {
            message: message.clone(),
        });
        if std::mem::take(&mut self.running) {
            self.own.push_back(EngineEvent::TurnFailed { message });
        }
    }
}

/// The answer to an operation that only needs the toolbox ([`Op::CheckArguments`],
/// [`Op::ToolsReport`], the rule operations); `None` for any other.
pub fn toolbox_answer(toolbox: &Toolbox, op: Op) -> Option<EngineEvent> {
    if let Some(answer) = super::rule_ops::answer(toolbox, &op) {
        return Some(answer);
    }
    match op {
        Op::CheckArguments {
            id,
            tool,
            arguments,
        } => {
            let result = toolbox.check_call(&tool, &arguments).map(Box::new);
            Some(EngineEvent::ArgumentsChecked {
                id,
                arguments,
                result,
            })
        }
        Op::ToolsReport => Some(EngineEvent::Tools {
            report: Box::new(ToolsReport::of(toolbox)),
        }),
        _ => None,
    }
}

fn spawn_agent(
    backend: &Backend,
    board: &Switchboard,
    toolbox: &Toolbox,
    mirror: &Mirror,
    queue: usize,
) -> AgentHandle {
    Agent::spawn(
        AgentInit {
            backend: backend.clone(),
            toolbox: toolbox.clone(),
            max_rounds: board.max_rounds(),
            system_prompt: mirror.system_prompt.clone(),
            conversation: mirror.conversation.clone(),
            // The same traces, shared: nothing is copied.
            traces: mirror.traces.clone(),
        },
        queue,
    )
}

/// Model ids come from the server: one line, escaped.
fn one_line(id: &str) -> String {
    sanitize::one_line(id, 120)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::Profile;
    use kimi_mock::{MockOptions, MockServer};
    use kimi_protocol::Mode;

    async fn next(s: &mut Supervisor) -> EngineEvent {
        tokio::time::timeout(Duration::from_secs(20), s.recv())
            .await
            .expect("an event within 20 s")
            .expect("the supervisor runs")
    }

    /// Events until one `stop` accepts, which is returned.
    async fn until(
        s: &mut Supervisor,
        stop: impl Fn(&EngineEvent) -> bool,
    ) -> (Vec<EngineEvent>, EngineEvent) {
        let mut seen = Vec::new();
        loop {
            let e = next(s).await;
            if stop(&e) {
                return (seen, e);
            }
            seen.push(e);
        }
    }

    /// A comparison stuck on a server that never answers is given up for the next one: only
    /// the next one is answered.
    #[tokio::test]
    async fn a_new_comparison_gives_up_the_one_still_on_its_way() {
        // Accepts and never answers; says when the client hangs up.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let silent_url = format!("http://{}/v1", silent.local_addr().expect("addr"));
        let (hung_up, mut hangups) = mpsc::unbounded_channel();
        let held = tokio::spawn(async move {
            while let Ok((mut socket, _)) = silent.accept().await {
                let hung_up = hung_up.clone();
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buf = [0u8; 4096];
                    while socket.read(&mut buf).await.is_ok_and(|n| n > 0) {}
                    let _ = hung_up.send(());
                });
            }
        });
        let server = MockServer::start(MockOptions::default(), 0)
            .await
            .expect("mock starts");
        let mut profile = Profile::new(Mode::Chat, &silent_url);
        profile.model = "moonshotai/Kimi-K2-Instruct".into();
        let board = Switchboard::new("local".into(), profile, BTreeMap::new(), None)
            .expect("no key needed");
        let init = SupervisorInit {
            toolbox: Toolbox::new(Vec::new()).expect("no tools"),
            system_prompt: None,
            conversation: Vec::new(),
            traces: Vec::new(),
        };
        let mut s = Supervisor::spawn(board, init, 64).expect("client");
        let trace = kimi_protocol::Trace {
            mode: Mode::Chat,
            request: serde_json::json!({"model": "moonshotai/Kimi-K2-Instruct",
                "messages": [{"role": "user", "content": "Tell me about Rust."}], "stream": true}),
            ..kimi_protocol::Trace::default()
        };
        let compare = |index| Op::Compare {
            index,
            trace: Box::new(trace.clone()),
            variant: kimi_client::ab::Variant::NonStream,
        };
        assert!(s.send(compare(0)));
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The server answers from now on.
        let model = s.board.endpoint().model.clone();
        let answering = kimi_client::Endpoint::new(Mode::Chat, &server.base_url(), &model);
        s.board.endpoint_set(answering, 8);
        assert!(s.send(compare(1)));
        let (_, answered) = until(&mut s, |e| matches!(e, EngineEvent::Compared { .. })).await;
        let EngineEvent::Compared { index, outcome, .. } = answered else {
            unreachable!()
        };
        assert_eq!(index, 1, "the newer comparison");
        // The saved trace holds no answer; the new one does.
        let c = outcome.expect("compared");
        let text = c.rows.iter().find(|r| r.field == "text").expect("text row");
        assert!(
            text.a == "(none)" && text.b.contains("Mock answer"),
            "{c:?}"
        );
        // The one given up was dropped (its connection closed) and never answers.
        tokio::time::timeout(Duration::from_secs(5), hangups.recv())
            .await
            .expect("the request given up hangs up");
        let late = tokio::time::timeout(Duration::from_millis(500), s.recv()).await;
        assert!(
            !matches!(late, Ok(Some(EngineEvent::Compared { .. }))),
            "{late:?}"
        );
        held.abort();
    }

    #[tokio::test]
    async fn a_panicked_agent_is_replaced_with_the_conversation_and_a_running_turn_fails() {
        let server = MockServer::start(MockOptions::default(), 0)
            .await
            .expect("mock starts");
        let mut profile = Profile::new(Mode::Chat, &server.base_url());
        profile.model = "moonshotai/Kimi-K2-Instruct".into();
        let board = Switchboard::new("local".into(), profile, BTreeMap::new(), None)
            .expect("no key needed");
        let init = SupervisorInit {
            toolbox: Toolbox::new(Vec::new()).expect("no tools"),
            system_prompt: Some("You are Kimi.".into()),
            conversation: Vec::new(),
            traces: Vec::new(),
        };
        let mut s = Supervisor::spawn(board, init, 64).expect("client");
        assert!(s.send(Op::UserTurn {
            text: "Tell me about Rust.".into()
        }));
        until(&mut s, |e| matches!(e, EngineEvent::TurnDone { .. })).await;
        let before = s.mirror.conversation.len();
        assert_eq!(before, 3, "system, user, assistant");

        // The task dies while a turn is counted as running: the turn is reported failed.
        s.running = true;
        assert!(s.send(Op::PanicForTest));
        let restarted = next(&mut s).await;
        let EngineEvent::AgentRestarted { message } = restarted else {
            panic!("{restarted:?}")
        };
        assert_eq!(message, "the agent was told to panic");
        let failed = next(&mut s).await;
        assert!(
            matches!(&failed, EngineEvent::TurnFailed { message } if message == "the agent was told to panic"),
            "{failed:?}"
        );

        // The new agent has the conversation and answers over the same endpoint.
        assert!(s.send(Op::Snapshot));
        let (_, snap) = until(&mut s, |e| matches!(e, EngineEvent::Snapshot { .. })).await;
        let EngineEvent::Snapshot { messages, traces } = snap else {
            unreachable!()
        };
        assert_eq!(messages.len(), before);
        assert_eq!(traces.len(), 1);
        assert!(s.send(Op::UserTurn {
            text: "And about Go?".into()
        }));
        let (_, done) = until(&mut s, |e| matches!(e, EngineEvent::TurnDone { .. })).await;
        let EngineEvent::TurnDone { outcome } = done else {
            unreachable!()
        };
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        assert_eq!(s.mirror.conversation.len(), before + 2);

        // A stop that was asked for is not a failure: nothing restarts.
        assert!(s.send(Op::Shutdown));
        let end = tokio::time::timeout(Duration::from_secs(20), async {
            while s.recv().await.is_some() {}
        })
        .await;
        assert!(end.is_ok(), "the supervisor ends after Shutdown");
        server.shutdown().await;
    }
}
