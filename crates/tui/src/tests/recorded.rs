//! An app driven as the event loop drives it by the agent's events, each recorded first by a
//! session recorder as the agent records it: what a test feeds is what the journal gets, and
//! the operations the app asks of the agent come back as the events the agent reports for them.

use std::time::{Duration, Instant};

use crate::app::event::{AppEvent, Effect};
use crate::app::state::App;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op, Recorder, set_system, user_message_index};
use kimi_core::session::{Session, SessionStore};
use kimi_protocol::{Message, Mode};

use super::app_sessions::app;

pub(super) const WAIT: Duration = Duration::from_secs(10);

pub(super) struct Recorded {
    pub app: App,
    pub rec: Recorder,
    /// The recorder's clock: a test makes a second pass with [`Recorded::later`].
    pub clock: Instant,
}

impl Recorded {
    /// A new app recording a new session into `store`.
    pub(super) fn new(store: &SessionStore) -> Recorded {
        let meta = Session::new("local", Mode::Raw, "m", "http://h/v1");
        let mut a = app();
        // Set when the agent says it wrote the journal.
        a.session = None;
        Recorded::with(a, Recorder::new(store.clone(), meta))
    }

    pub(super) fn with(app: App, rec: Recorder) -> Recorded {
        Recorded {
            app,
            rec,
            clock: Instant::now(),
        }
    }

    /// The id of the session recorded into.
    pub(super) fn id(&self) -> String {
        self.rec.meta().id.clone()
    }

    pub(super) fn later(&mut self, d: Duration) {
        self.clock += d;
    }

    /// One event of the agent: recorded, then shown, with what the recorder adds after it; the
    /// writer is waited for so that the file can be read.
    pub(super) fn engine(&mut self, e: EngineEvent) {
        let follow = self.rec.observe_at(&e, self.clock);
        let mut fx = super::update(&mut self.app, AppEvent::Engine(e));
        for f in follow {
            fx.extend(super::update(&mut self.app, AppEvent::Engine(f)));
        }
        self.effects(fx);
        assert!(self.rec.flush(WAIT), "the writer finished");
    }

    /// An event of the terminal (or the ticker): what the app asked for is returned.
    pub(super) fn event(&mut self, e: AppEvent) -> Vec<Effect> {
        let fx = super::update(&mut self.app, e);
        self.effects(fx.clone());
        assert!(self.rec.flush(WAIT), "the writer finished");
        fx
    }

    /// The agent's answer to what the app asked of it, before any request is made.
    fn effects(&mut self, fx: Vec<Effect>) {
        for fx in fx {
            match fx {
                Effect::Agent(Op::Rewind { user_index }) => {
                    let conversation = &self.app.conversation;
                    let cut = user_message_index(conversation, user_index).expect("a message");
                    let traces = (self.app.trace_messages.iter())
                        .position(|m| *m > cut)
                        .unwrap_or(self.app.trace_messages.len());
                    self.engine(EngineEvent::Truncated {
                        messages: cut,
                        traces,
                    });
                }
                Effect::Agent(Op::UserTurn { text }) => {
                    let index = self.app.conversation.len();
                    self.appended(index, Message::user(text));
                }
                Effect::Agent(Op::SetSystem { prompt }) => {
                    let change = set_system(&mut self.app.conversation.clone(), &prompt);
                    self.engine(EngineEvent::SystemSet { prompt, change });
                }
                _ => {}
            }
        }
    }

    pub(super) fn appended(&mut self, index: usize, message: Message) {
        self.engine(EngineEvent::MessageAppended {
            index,
            message: Box::new(message),
        });
    }

    /// `text` typed and sent with Enter.
    pub(super) fn enter(&mut self, text: &str) {
        for c in text.chars() {
            self.event(key(KeyCode::Char(c)));
        }
        self.event(key(KeyCode::Enter));
    }
}

pub(super) fn key(code: KeyCode) -> AppEvent {
    AppEvent::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// A fresh app showing `session` resumed, from the events the agent reports for it.
pub(super) fn resumed(session: &Session) -> App {
    let mut b = app();
    b.session = None;
    let (events, _) = kimi_core::engine::replay::resume_events(session, None);
    for e in events {
        super::update(&mut b, AppEvent::Engine(e));
    }
    b
}

/// A real agent's events into `app`, as the event loop takes them (what the app asks of the
/// agent is sent to it), until one for which `until` says so has been taken.
pub(super) async fn pump(
    app: &mut App,
    agent: &mut kimi_core::engine::AgentHandle,
    mut until: impl FnMut(&EngineEvent) -> bool,
) {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), agent.events.recv())
            .await
            .expect("an event within 20 s")
            .expect("the agent runs");
        let stop = until(&e);
        for fx in super::update(app, AppEvent::Engine(e)) {
            if let Effect::Agent(op) = fx {
                assert!(agent.send(op), "the agent runs");
            }
        }
        if stop {
            return;
        }
    }
}

/// `text` typed into `app` and sent, its operations going to `agent`; then the turn, to its end.
pub(super) async fn say(app: &mut App, agent: &mut kimi_core::engine::AgentHandle, text: &str) {
    for c in text.chars() {
        super::update(app, key(KeyCode::Char(c)));
    }
    for fx in super::update(app, key(KeyCode::Enter)) {
        if let Effect::Agent(op) = fx {
            assert!(agent.send(op), "the agent runs");
        }
    }
    pump(app, agent, |e| {
        matches!(
            e,
            EngineEvent::TurnDone { .. } | EngineEvent::TurnFailed { .. }
        )
    })
    .await;
}

/// What starts an agent against `server` in raw mode (K2 Instruct), as a profile would.
pub(super) fn agent_init(
    server: &kimi_mock::MockServer,
    toolbox: kimi_core::tools::Toolbox,
    system_prompt: Option<String>,
) -> kimi_core::engine::AgentInit {
    let mut profile = kimi_core::config::Profile::new(kimi_protocol::Mode::Raw, &server.base_url());
    profile.model = "moonshotai/Kimi-K2-Instruct".into();
    let board =
        kimi_core::engine::Switchboard::new("local".into(), profile, Default::default(), None)
            .expect("no key needed");
    kimi_core::engine::AgentInit {
        backend: board.backend().expect("client"),
        toolbox,
        max_rounds: 4,
        system_prompt,
        conversation: Vec::new(),
        traces: Vec::new(),
    }
}
