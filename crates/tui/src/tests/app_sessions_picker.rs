//! `/sessions`: the picker lists the store as `kimi-tui sessions` does (newest first, date,
//! profile and model, turns, size, first message), Enter resumes a session in place: the
//! current one is saved first, the chosen one is locked, its transcript rebuilt, its
//! conversation handed to the agent, and this run appends to its journal. Refused mid-turn.

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::picker::PickTarget;
use crate::app::picker_sessions;
use crate::app::saved;
use crate::app::state::{App, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op};
use kimi_core::session::{Session, SessionStore};
use kimi_protocol::{Message, Mode};

use super::app_go_back::users;
use super::app_sessions::app;

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

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
    picker_sessions::open(&mut b, store.list());
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
    for part in ["moonshot · kimi-k2-0905", "1 turns", " B ", "the newer one"] {
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

#[test]
fn resuming_in_place_saves_the_current_session_and_continues_the_chosen_journal() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let other = saved_session(&store, "20260101-000000-aaaa", 1_000, "the saved question");
    let mut a = app();
    // The current conversation, not yet written.
    for (index, m) in [
        Message::user("current question"),
        Message::assistant("current answer"),
    ]
    .into_iter()
    .enumerate()
    {
        let e = EngineEvent::MessageAppended {
            index,
            message: Box::new(m),
        };
        update(&mut a, AppEvent::Engine(e));
    }
    let current = a.session.as_ref().expect("a session").id.clone();
    let op = picker_sessions::resume(&mut a, &store, &other.id).expect("switched");
    // The current session was written before the switch.
    let kept = store.load(&current).expect("the current session was saved");
    assert_eq!(kept.messages.len(), 2);
    // The view is the chosen session's; the agent gets its conversation.
    assert_eq!(users(&a), ["the saved question"]);
    assert_eq!(a.conversation, other.messages);
    assert_eq!(a.system_prompt.as_deref(), Some("Saved system prompt."));
    assert_eq!(
        a.session.as_ref().map(|s| s.id.as_str()),
        Some(other.id.as_str())
    );
    assert_eq!(
        a.lock.as_ref().map(|l| l.id.as_str()),
        Some(other.id.as_str())
    );
    match op {
        Op::Load { messages, traces } => {
            assert_eq!(messages, other.messages);
            assert!(traces.is_empty());
        }
        other => panic!("expected Op::Load, got {other:?}"),
    }
    // The next message goes to the chosen session's journal.
    let e = EngineEvent::MessageAppended {
        index: 3,
        message: Box::new(Message::user("a follow-up")),
    };
    for fx in update(&mut a, AppEvent::Engine(e)) {
        if fx == Effect::SaveSession {
            saved::save(&mut a, Some(&store));
        }
    }
    assert!(saved::flush(&mut a, WAIT));
    let resumed = store.load(&other.id).expect("loads");
    assert_eq!(resumed.messages.len(), 4);
    assert_eq!(resumed.messages[3], Message::user("a follow-up"));
    // The old session's lock was released: another instance may open it now.
    drop(store.lock(&current).expect("the old session is free"));
}

#[test]
fn a_session_open_elsewhere_is_not_switched_to_and_nothing_changes() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let other = saved_session(&store, "20260101-000000-aaaa", 1_000, "held elsewhere");
    let _held = store.lock(&other.id).expect("another instance holds it");
    let mut a = app();
    let e = EngineEvent::MessageAppended {
        index: 0,
        message: Box::new(Message::user("mine")),
    };
    update(&mut a, AppEvent::Engine(e));
    let mine = a.session.as_ref().expect("a session").id.clone();
    assert!(picker_sessions::resume(&mut a, &store, &other.id).is_none());
    assert_eq!(
        a.session.as_ref().map(|s| s.id.as_str()),
        Some(mine.as_str())
    );
    assert_eq!(users(&a), Vec::<String>::new(), "the view was not rebuilt");
    assert_eq!(a.conversation, [Message::user("mine")]);
    assert!(
        matches!(a.transcript.entries.last(), Some(Entry::Notice { text, error: true, .. }) if text.contains("open in another kimi-tui"))
    );
}
