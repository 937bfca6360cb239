//! `/sessions`: the picker lists the store as `kimi-tui sessions` does (newest first, date,
//! profile and model, turns, size, first message), Enter resumes a session in place: the agent
//! finishes writing the current one, locks the chosen one, reports its history as events the
//! app shows as it shows live turns, and records on into its journal. Refused mid-turn.

use super::recorded::{pump, say};
use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::picker::PickTarget;
use crate::app::picker_sessions;
use crate::app::state::{App, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::SessionHandoff;
use kimi_core::engine::{Agent, AgentHandle, EVENT_QUEUE, EngineEvent, Op};
use kimi_core::session::{Session, SessionStore};
use kimi_core::tools::Toolbox;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode};

use super::app_go_back::users;
use super::app_sessions::app;

fn press(a: &mut App, code: KeyCode) -> Vec<Effect> {
    update(
        a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    )
}

fn command(a: &mut App, text: &str) -> Vec<Effect> {
    for c in text.chars() {
        press(a, KeyCode::Char(c));
    }
    press(a, KeyCode::Enter)
}

fn saved_session(store: &SessionStore, id: &str, updated: u64, question: &str) -> Session {
    let mut s = Session::new("moonshot", Mode::Chat, "kimi-k2-0905", "http://h/v1");
    s.id = id.into();
    s.messages = vec![
        Message::system("Saved system prompt."),
        Message::user(question),
        Message::assistant("a saved answer"),
    ];
    s.updated_unix_ms = updated;
    store.save(&s).expect("saved");
    s
}

#[test]
fn sessions_lists_the_store_newest_first_and_is_refused_mid_turn() {
    let mut a = app();
    assert_eq!(command(&mut a, "/sessions"), vec![Effect::ListSessions]);
    // A turn running: refused with a notice, nothing listed.
    command(&mut a, "hello");
    assert!(a.busy);
    assert!(command(&mut a, "/sessions").is_empty());
    assert!(
        matches!(a.transcript.entries.last(), Some(Entry::Notice { text, error: true, .. }) if text.contains("turn is running"))
    );

    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    saved_session(&store, "20260101-000000-aaaa", 1_000, "the older one");
    saved_session(
        &store,
        "20260102-000000-bbbb",
        2_000,
        "the newer one\u{1b}[31m",
    );
    std::fs::write(dir.path().join("broken.jsonl"), "not a journal").expect("write");
    let mut b = app();
    // The listing comes back as an event: the picker opens on it.
    update(&mut b, AppEvent::SessionsListed(Box::new(store.list())));
    let p = b.layers.picker.as_ref().expect("the picker");
    assert_eq!(p.items.len(), 2);
    let newest = &p.items[0];
    assert_eq!(
        newest.target,
        PickTarget::Session {
            id: "20260102-000000-bbbb".into()
        }
    );
    // `YYYY-MM-DD HH:MM` first.
    assert!(
        newest.label.as_bytes()[4] == b'-' && newest.label.as_bytes()[13] == b':',
        "{}",
        newest.label
    );
    for part in ["moonshot · kimi-k2-0905", "1 turn ", " B ", "the newer one"] {
        assert!(newest.label.contains(part), "{part}: {}", newest.label);
    }
    assert!(
        !newest.label.contains('\u{1b}'),
        "sanitized: {:?}",
        newest.label
    );
    assert!(p.items[1].label.contains("the older one"));
    // The unreadable file is named in a notice.
    assert!(
        b.transcript
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Notice { text, .. } if text.contains("broken.jsonl")))
    );
    // Enter asks the event loop to resume the chosen one.
    press(&mut b, KeyCode::Down);
    let fx = press(&mut b, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::ResumeSession {
            id: "20260101-000000-aaaa".into()
        }]
    );
    assert!(b.layers.picker.is_none());
    // No sessions: a notice, no picker.
    let mut c = app();
    picker_sessions::open(&mut c, Default::default());
    assert!(c.layers.picker.is_none());
}

/// An app and its agent (against `server`), recording a new session into `store`.
fn live(server: &MockServer, store: &SessionStore) -> (App, AgentHandle, String) {
    let agent = Agent::spawn(
        super::recorded::agent_init(server, Toolbox::default(), None),
        EVENT_QUEUE,
    );
    let meta = Session::new("local", Mode::Raw, "m", "http://h/v1");
    let id = meta.id.clone();
    assert!(agent.send(Op::Record(SessionHandoff::new_session(store.clone(), meta))));
    let mut a = app();
    a.session = None;
    (a, agent, id)
}

#[tokio::test(flavor = "current_thread")]
async fn resuming_in_place_finishes_the_current_session_and_continues_the_chosen_journal() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let other = saved_session(&store, "20260101-000000-aaaa", 1_000, "the saved question");
    let (mut a, mut agent, current) = live(&server, &store);
    say(&mut a, &mut agent, "current question").await;
    assert_eq!(
        a.session.as_ref().map(|s| s.id.as_str()),
        Some(current.as_str())
    );
    // Picked: the event loop sends the agent the store and the id.
    assert!(agent.send(Op::Resume {
        store: store.clone(),
        id: other.id.clone(),
    }));
    pump(&mut a, &mut agent, |e| {
        matches!(e, EngineEvent::Resumed { .. })
    })
    .await;
    // The current session was written whole before the switch, and its lock let go.
    let kept = store.load(&current).expect("the current session was saved");
    assert_eq!(kept.messages.len(), 2);
    drop(store.lock(&current).expect("the old session is free"));
    // The view is the chosen session's, its conversation the agent's.
    assert_eq!(users(&a), ["the saved question"]);
    assert_eq!(a.conversation, other.messages);
    assert_eq!(a.system_prompt.as_deref(), Some("Saved system prompt."));
    assert_eq!(
        a.session.as_ref().map(|s| s.id.as_str()),
        Some(other.id.as_str())
    );
    // Another instance cannot take it now.
    assert!(store.lock(&other.id).is_err());
    // The next exchange goes to the chosen session's journal.
    say(&mut a, &mut agent, "a follow-up").await;
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");
    let resumed = store.load(&other.id).expect("loads");
    assert_eq!(resumed.messages.len(), 5);
    assert_eq!(resumed.messages[3], Message::user("a follow-up"));
    server.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_open_elsewhere_is_not_switched_to_and_nothing_changes() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let other = saved_session(&store, "20260101-000000-aaaa", 1_000, "held elsewhere");
    let _held = store.lock(&other.id).expect("another instance holds it");
    let (mut a, mut agent, mine) = live(&server, &store);
    say(&mut a, &mut agent, "mine").await;
    assert!(agent.send(Op::Resume {
        store: store.clone(),
        id: other.id.clone(),
    }));
    pump(&mut a, &mut agent, |e| {
        matches!(e, EngineEvent::Notice { .. })
    })
    .await;
    assert_eq!(
        a.session.as_ref().map(|s| s.id.as_str()),
        Some(mine.as_str())
    );
    assert_eq!(users(&a), ["mine"], "the view was not rebuilt");
    assert_eq!(a.conversation[0], Message::user("mine"));
    assert!(
        matches!(a.transcript.entries.last(), Some(Entry::Notice { text, error: true, .. }) if text.contains("open in another kimi-tui"))
    );
    // And this session is still recorded into.
    say(&mut a, &mut agent, "still mine").await;
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");
    assert_eq!(store.load(&mine).expect("loads").messages.len(), 4);
    server.shutdown().await;
}
