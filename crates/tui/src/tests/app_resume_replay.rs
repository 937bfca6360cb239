//! A resumed session looks exactly like the live one did: the same script (a question that
//! makes the model call a tool, the call run, the answer; then a plain question) run live in
//! an app driven by a real agent's events over HTTP against the mock server, then resumed from
//! the journal that agent recorded into a fresh app by a fresh agent: the transcript's cells,
//! their warnings and panes, and the inspector's view of every trace are the same.

use super::recorded::{agent_init, pump, say};
use crate::app::state::{App, Connection, Entry};
use kimi_core::engine::SessionHandoff;
use kimi_core::engine::{Agent, AgentHandle, EVENT_QUEUE, EngineEvent, Op};
use kimi_core::session::{Session, SessionStore, open_stored};
use kimi_core::tools::{Approval, ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Mode;
use serde_json::json;

pub(super) fn toolbox() -> Toolbox {
    Toolbox::new(vec![ToolSpec {
        name: "get_weather".into(),
        description: "test tool get_weather".into(),
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}}}),
        command: vec![kimi_test_support::tool_script("weather.sh")],
        approval: Approval::Auto,
        timeout_secs: 10,
        cwd: None,
        env: Default::default(),
        max_output_bytes: None,
        inherit_env: None,
        sandbox: Default::default(),
        network: true,
        hidden_env: Vec::new(),
        mcp: None,
    }])
    .expect("valid tools")
}

fn agent(server: &MockServer) -> AgentHandle {
    Agent::spawn(
        agent_init(server, toolbox(), Some("You are Kimi.".into())),
        EVENT_QUEUE,
    )
}

fn app() -> App {
    let connection = Connection {
        profile: "local".into(),
        mode: Mode::Raw,
        model: "moonshotai/Kimi-K2-Instruct".into(),
        host: "h".into(),
    };
    App::new(connection, toolbox(), Some("You are Kimi.".into()))
}

/// The screen's rows, top to bottom.
fn screen(app: &mut App, w: u16, h: u16) -> Vec<String> {
    let buf = super::drawn(app, w, h);
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect())
        .collect()
}

/// What the conversation looks like: its cells, the screen drawn without the notices (they
/// tell what happened to the app, not the conversation), and the inspector drawn on each trace.
fn looks(app: &mut App) -> (Vec<String>, Vec<String>, Vec<Vec<String>>) {
    app.transcript
        .entries
        .retain(|e| !matches!(e, Entry::Notice { .. }));
    let cells = (app.transcript.entries.iter())
        .map(|e| match e {
            Entry::User { text, .. } => format!("user {text:?}"),
            Entry::Assistant(t) => format!(
                "assistant {:?} state {:?} trace {:?} warnings {:?} panes {:?}",
                t.text(),
                t.state,
                t.trace,
                t.warnings,
                (t.panes.iter())
                    .map(|p| (&p.id, &p.arguments, &p.state, &p.result, &p.problem))
                    .collect::<Vec<_>>()
            ),
            Entry::Notice { .. } => unreachable!(),
        })
        .collect();
    let (w, h) = (100, 60);
    super::update(
        app,
        crate::app::event::AppEvent::Terminal(crossterm::event::Event::Resize(w, h)),
    );
    let transcript = screen(app, w, h);
    let mut inspector = Vec::new();
    for k in 0..app.traces.len() {
        app.layers.inspector.open = true;
        app.layers.inspector.selected = Some(k);
        inspector.push(screen(app, w, h));
    }
    app.layers.inspector.open = false;
    (cells, transcript, inspector)
}

#[tokio::test(flavor = "current_thread")]
async fn a_resumed_session_looks_exactly_like_the_live_one_did() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());

    // Live.
    let mut live = app();
    let mut first = agent(&server);
    let meta = Session::new(
        "local",
        Mode::Raw,
        "moonshotai/Kimi-K2-Instruct",
        "http://h/v1",
    );
    let id = meta.id.clone();
    assert!(first.send(Op::Record(SessionHandoff::new_session(store.clone(), meta))));
    say(&mut live, &mut first, "What's the weather like in Paris?").await;
    say(&mut live, &mut first, "Thanks!").await;
    assert!(first.send(Op::Shutdown));
    (&mut first.task).await.expect("the agent ends");
    assert_eq!(live.traces.len(), 3, "two rounds, then one");
    let tools_ran =
        live.transcript.entries.iter().any(
            |e| matches!(e, Entry::Assistant(t) if t.panes.iter().any(|p| p.result.is_some())),
        );
    assert!(tools_ran, "the script ran a tool");

    // Resumed by a fresh agent into a fresh app.
    let mut resumed = app();
    let mut second = agent(&server);
    let opened = open_stored(&store, &id).expect("opens");
    assert!(second.send(Op::Record(SessionHandoff::resume(store.clone(), opened))));
    pump(&mut resumed, &mut second, |e| {
        matches!(e, EngineEvent::Resumed { .. })
    })
    .await;
    assert_eq!(resumed.conversation, live.conversation);

    let (live_cells, live_screen, live_inspector) = looks(&mut live);
    let (cells, screen, inspector) = looks(&mut resumed);
    assert_eq!(cells, live_cells);
    assert_eq!(screen, live_screen, "the transcript as drawn");
    assert_eq!(inspector.len(), live_inspector.len());
    for (k, (got, want)) in inspector.iter().zip(&live_inspector).enumerate() {
        assert_eq!(got, want, "the inspector on trace {k}");
    }
    assert!(second.send(Op::Shutdown));
    server.shutdown().await;
}
