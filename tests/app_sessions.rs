//! The TUI's sessions: saved after every message as the events arrive, restored with panes,
//! results and inspector traces, exported.

use std::os::unix::fs::PermissionsExt;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_tui::app::event::{AppEvent, Effect};
use kimi_tui::app::saved;
use kimi_tui::app::state::{App, Connection, Entry, PaneState};
use kimi_tui::app::update::update;
use kimi_tui::backend::{Mode, StreamEvent, Trace};
use kimi_tui::engine::{EngineEvent, TurnOutcome};
use kimi_tui::protocol::{Message, ToolCall};
use kimi_tui::session::{Session, SessionStore};
use kimi_tui::tools::Toolbox;

fn app() -> App {
    let connection = Connection {
        profile: "local".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "h".into(),
    };
    let mut a = App::new(connection, Toolbox::default(), None);
    a.session = Some(Session::new("local", Mode::Raw, "m", "http://h/v1"));
    a
}

/// Apply an event and carry out its save effects, as the event loop does.
fn apply(a: &mut App, store: &SessionStore, e: AppEvent) -> usize {
    let mut saves = 0;
    for fx in update(a, e) {
        if fx == Effect::SaveSession {
            saved::save(a, Some(store));
            saves += 1;
        }
    }
    saves
}

fn trace(text: &str) -> Box<Trace> {
    let mut t = Trace {
        url: "http://h/v1/completions".into(),
        headers: vec![(
            "Authorization".into(),
            "Bearer sk-should-never-be-saved".into(),
        )],
        ..Trace::default()
    };
    t.push_chunk(text, 10);
    Box::new(t)
}

#[test]
fn a_turn_is_saved_message_by_message_and_restores_whole() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    for c in "Weather?".chars() {
        update(
            &mut a,
            AppEvent::Terminal(Event::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            ))),
        );
    }
    update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        ))),
    );
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Paris"}"#,
    );
    let round1 = Message::assistant_with_calls("Checking.", vec![call.clone()]);
    let result = Message::tool_result(&call.id, "get_weather", "Sunny");
    let answer = Message::assistant("It is sunny.");
    let mut saves = 0;
    for e in [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::Stream(StreamEvent::Text("Checking.".into())),
        EngineEvent::Stream(StreamEvent::ToolCallBegin {
            index: 0,
            id: call.id.clone(),
            name: "get_weather".into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallEnd { index: 0 }),
        EngineEvent::RoundFinished {
            round: 1,
            message: Some(Box::new(round1.clone())),
            finish: "tool_calls".into(),
            error: None,
            cancelled: false,
            trace: trace("Checking.<|tool_calls_section_begin|>"),
        },
        EngineEvent::ToolResult {
            index: 0,
            message: result.clone(),
        },
        EngineEvent::RoundStarted { round: 2 },
        EngineEvent::Stream(StreamEvent::Text("It is sunny.".into())),
        EngineEvent::RoundFinished {
            round: 2,
            message: Some(Box::new(answer.clone())),
            finish: "stop".into(),
            error: None,
            cancelled: false,
            trace: trace("It is sunny."),
        },
    ] {
        saves += apply(&mut a, &store, AppEvent::Engine(e));
        if saves == 1 {
            // After the first message the file already holds it.
            let s = store.latest().expect("readable").expect("saved");
            assert_eq!(s.messages.len(), 2);
        }
    }
    assert_eq!(saves, 3, "saved after each message");
    let want = vec![Message::user("Weather?"), round1, result, answer];
    assert_eq!(a.conversation, want);
    apply(
        &mut a,
        &store,
        AppEvent::TurnDone {
            conversation: want.clone(),
            outcome: Box::new(TurnOutcome::default()),
        },
    );

    let id = a.session.as_ref().expect("session").id.clone();
    let path = store.path_of(&id);
    let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let raw = std::fs::read_to_string(&path).expect("read");
    assert!(
        !raw.contains("sk-should-never-be-saved"),
        "no key in the file"
    );

    let mut b = app();
    saved::restore(&mut b, store.load(&id).expect("loads"));
    assert_eq!(b.conversation, want);
    assert_eq!(b.traces.len(), 2);
    assert_eq!(b.trace_messages, vec![1, 3]);
    let kinds: Vec<&str> = b
        .entries
        .iter()
        .map(|e| match e {
            Entry::User { .. } => "user",
            Entry::Assistant(_) => "assistant",
            Entry::Notice { .. } => "notice",
        })
        .collect();
    assert_eq!(kinds, ["user", "assistant", "assistant", "notice"]);
    let Entry::Assistant(t) = &b.entries[1] else {
        panic!()
    };
    assert_eq!(t.trace, Some(0));
    assert_eq!(t.panes[0].state, PaneState::Answered);
    assert_eq!(t.panes[0].result.as_deref(), Some("Sunny"));
    assert_eq!(t.markdown.text(), "Checking.");

    let out = dir.path().join("out.md");
    saved::export_to(&mut b, true, out.to_str().expect("utf-8"));
    let md = std::fs::read_to_string(&out).expect("exported");
    assert!(
        md.contains("Weather?") && md.contains("get_weather") && md.contains("It is sunny."),
        "{md}"
    );
}

#[test]
fn a_corrupt_session_file_is_reported_and_left_untouched() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    let id = a.session.as_ref().expect("session").id.clone();
    std::fs::write(store.path_of(&id), "{ not json").expect("write");
    a.conversation.push(Message::user("hi"));
    saved::save(&mut a, Some(&store));
    assert_eq!(
        std::fs::read_to_string(store.path_of(&id)).expect("read"),
        "{ not json"
    );
    assert!(a.session.is_none(), "saving stops");
    assert!(matches!(
        a.entries.last(),
        Some(Entry::Notice { error: true, .. })
    ));
}
