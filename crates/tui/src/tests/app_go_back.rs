//! Going back (`Esc Esc`) at the level of `update`, with the session recorded to a real journal
//! as the agent records it: the picker of earlier messages, the cut, the message back in the
//! input, the cut part kept in the file, and resume giving the conversation after the cut.

use super::app_update::draft;
use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::picker::PickTarget;
use crate::app::state::{App, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op, TurnOutcome};
use kimi_core::session::SessionStore;
use kimi_protocol::{Message, StreamEvent};

use super::recorded::Recorded;

/// An event, with what it asks of the agent answered as the agent would (see [`Recorded`]).
fn apply(a: &mut Recorded, e: AppEvent) -> Vec<Effect> {
    a.event(e)
}

fn press(a: &mut Recorded, code: KeyCode) -> Vec<Effect> {
    let k = KeyEvent::new(code, KeyModifiers::NONE);
    apply(a, AppEvent::Terminal(Event::Key(k)))
}

fn type_text(a: &mut Recorded, text: &str) {
    for c in text.chars() {
        press(a, KeyCode::Char(c));
    }
}

/// One question and its answer, as the agent reports them.
fn exchange(a: &mut Recorded, question: &str, answer: &str) {
    type_text(a, question);
    press(a, KeyCode::Enter);
    let index = a.app.conversation.len();
    for e in [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::Stream(StreamEvent::Text(answer.into())),
        EngineEvent::MessageAppended {
            index,
            message: Box::new(Message::assistant(answer)),
        },
        EngineEvent::RoundFinished {
            round: 1,
            finish: "stop".into(),
            error: None,
            cancelled: false,
        },
        EngineEvent::TurnDone {
            outcome: Box::default(),
        },
    ] {
        a.engine(e);
    }
    assert!(!a.app.busy);
}

/// The user messages the transcript shows, in order.
pub(super) fn users(a: &App) -> Vec<String> {
    a.transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::User { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn esc_esc_picks_an_earlier_message_cuts_there_and_the_file_keeps_the_cut_part() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    exchange(&mut a, "first question", "first answer");
    exchange(&mut a, "second question", "second answer");
    exchange(&mut a, "third question", "third answer");

    // The first Esc arms (the placeholder says so), the second opens the picker.
    assert!(press(&mut a, KeyCode::Esc).is_empty());
    assert!(a.app.composer.esc_armed);
    assert!(
        a.app
            .composer
            .input
            .placeholder_text()
            .contains("Esc again")
    );
    assert!(a.app.layers.picker.is_none());
    press(&mut a, KeyCode::Esc);
    let p = a.app.layers.picker.as_ref().expect("the picker opened");
    let labels: Vec<&str> = p.items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(labels.len(), 3);
    assert!(
        labels[0].contains("third question"),
        "newest first: {labels:?}"
    );
    assert!(labels[2].contains("first question"), "{labels:?}");
    assert!(
        !a.app
            .composer
            .input
            .placeholder_text()
            .contains("Esc again")
    );

    // Down to the second question; Enter cuts before it.
    press(&mut a, KeyCode::Down);
    assert_eq!(
        a.app
            .layers
            .picker
            .as_ref()
            .and_then(|p| p.chosen())
            .map(|i| &i.target),
        Some(&PickTarget::Message {
            user_index: 1,
            text: "second question".into()
        })
    );
    let fx = press(&mut a, KeyCode::Enter);
    assert!(
        fx.contains(&Effect::Agent(Op::Rewind { user_index: 1 })),
        "{fx:?}"
    );
    assert!(a.app.layers.picker.is_none());
    assert_eq!(
        draft(&a.app),
        "second question",
        "the message is back to edit"
    );
    assert_eq!(users(&a.app), ["first question"], "the cut cells are gone");
    assert_eq!(a.app.conversation.len(), 2);

    // Edited and sent: the conversation goes on from the cut.
    for _ in 0.."question".len() {
        press(&mut a, KeyCode::Backspace);
    }
    type_text(&mut a, "try, edited");
    assert_eq!(draft(&a.app), "second try, edited");
    let fx = press(&mut a, KeyCode::Enter);
    assert!(
        fx.contains(&Effect::Agent(Op::UserTurn {
            text: "second try, edited".into()
        })),
        "{fx:?}"
    );
    let index = a.app.conversation.len();
    for e in [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::MessageAppended {
            index,
            message: Box::new(Message::assistant("the edited answer")),
        },
        EngineEvent::TurnDone {
            outcome: Box::new(TurnOutcome::default()),
        },
    ] {
        a.engine(e);
    }

    // The file holds every line ever written; loading it gives the branch after the cut.
    let id = a.id();
    let text = std::fs::read_to_string(store.journal_path(&id)).expect("the journal");
    assert!(
        text.contains("third question") && text.contains("third answer"),
        "{text}"
    );
    assert!(text.contains(r#""type":"truncate""#), "{text}");
    let loaded = store.load(&id).expect("loads");
    let texts: Vec<String> = loaded.messages.iter().map(|m| m.text()).collect();
    assert_eq!(
        texts,
        [
            "first question",
            "first answer",
            "second try, edited",
            "the edited answer"
        ]
    );
    // Resumed, the app shows the same.
    let b = super::recorded::resumed(&loaded);
    assert_eq!(users(&b), ["first question", "second try, edited"]);
}

#[test]
fn going_back_before_the_first_message_writes_the_cut_of_everything() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    exchange(&mut a, "only question", "only answer");
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Enter);
    assert!(a.app.conversation.is_empty());
    assert_eq!(draft(&a.app), "only question");
    let id = a.id();
    // Written at once: the file says the conversation is empty now.
    assert!(store.load(&id).expect("loads").messages.is_empty());
    type_text(&mut a, " again");
    press(&mut a, KeyCode::Enter);
    let loaded = store.load(&id).expect("loads");
    assert_eq!(loaded.messages, [Message::user("only question again")]);
}

#[test]
fn esc_keeps_its_other_meanings_and_any_other_key_disarms() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    // Nothing said yet: the second Esc says there is nothing to go back to.
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(a.app.layers.picker.is_none());
    assert!(
        matches!(a.app.transcript.entries.last(), Some(Entry::Notice { text, .. }) if text.contains("No earlier message"))
    );

    exchange(&mut a, "a question", "an answer");
    // A draft: Esc does not arm (going back would replace it).
    type_text(&mut a, "draft");
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(a.app.layers.picker.is_none() && !a.app.composer.esc_armed);
    assert_eq!(draft(&a.app), "draft");
    for _ in 0..5 {
        press(&mut a, KeyCode::Backspace);
    }
    // Armed, then another key: the next Esc only arms again.
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::PageUp);
    assert!(!a.app.composer.esc_armed);
    press(&mut a, KeyCode::Esc);
    assert!(a.app.layers.picker.is_none() && a.app.composer.esc_armed);
    // While a turn runs, Esc cancels it and never arms.
    type_text(&mut a, "next");
    press(&mut a, KeyCode::Enter);
    assert!(a.app.busy);
    let fx = press(&mut a, KeyCode::Esc);
    assert!(fx.contains(&Effect::Agent(Op::Cancel)), "{fx:?}");
    let fx = press(&mut a, KeyCode::Esc);
    assert!(
        a.app.layers.picker.is_none() && !a.app.composer.esc_armed,
        "{fx:?}"
    );
}

#[test]
fn the_picker_closes_with_esc_or_ctrl_c_without_cutting_or_quitting() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    exchange(&mut a, "one", "1");
    exchange(&mut a, "two", "2");
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    assert!(a.app.layers.picker.is_some());
    // Keys move in the list, they are not typed.
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.app.layers.picker.as_ref().map(|p| p.selected), Some(1));
    press(&mut a, KeyCode::Down);
    assert_eq!(
        a.app.layers.picker.as_ref().map(|p| p.selected),
        Some(1),
        "stops at the oldest"
    );
    let fx = press(&mut a, KeyCode::Esc);
    assert!(a.app.layers.picker.is_none() && fx.is_empty(), "{fx:?}");
    assert_eq!(draft(&a.app), "");
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    let k = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let fx = apply(&mut a, AppEvent::Terminal(Event::Key(k)));
    assert!(a.app.layers.picker.is_none());
    assert!(!fx.contains(&Effect::Quit), "{fx:?}");
    assert_eq!(a.app.conversation.len(), 4, "nothing was cut");
}

#[test]
fn a_message_that_starts_with_a_slash_comes_back_escaped_and_is_sent_again_as_a_message() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    exchange(&mut a, "//etc/hosts is a file", "yes");
    assert_eq!(a.app.conversation[0], Message::user("/etc/hosts is a file"));
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Enter);
    assert_eq!(draft(&a.app), "//etc/hosts is a file");
    let fx = press(&mut a, KeyCode::Enter);
    assert!(
        fx.contains(&Effect::Agent(Op::UserTurn {
            text: "/etc/hosts is a file".into()
        })),
        "{fx:?}"
    );
}

#[test]
fn the_picker_is_drawn_over_the_transcript_with_the_selection_marked() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    // More messages than the picker has rows at this height: the selection stays in view.
    for i in 0..12 {
        exchange(&mut a, &format!("question number {i}"), "ok");
    }
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Esc);
    for _ in 0..10 {
        press(&mut a, KeyCode::Down);
    }
    let (w, h) = (80, 16);
    update(&mut a.app, AppEvent::Terminal(Event::Resize(w, h)));
    let frame = super::drawn(&mut a.app, w, h);
    let buf = &frame;
    let rows: Vec<String> = (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect())
        .collect();
    let screen = rows.join("\n");
    assert!(screen.contains("Edit an earlier message"), "{screen}");
    assert!(screen.contains("Esc: close"), "{screen}");
    let selected: Vec<&String> = rows.iter().filter(|r| r.contains("› ")).collect();
    assert_eq!(selected.len(), 1, "{screen}");
    assert!(selected[0].contains("question number 1 "), "{screen}");
    assert!(
        !screen.contains("question number 11 "),
        "scrolled past the newest: {screen}"
    );
}
