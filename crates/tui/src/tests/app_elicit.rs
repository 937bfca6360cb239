//! An MCP server's question (elicitation) through `update`: the dialog shows one question at a
//! time, the user's keys fill the form, and only Enter (a valid form), Ctrl-D or Esc answer;
//! a question the server gave up on goes with a notice.

use super::update;
use crate::app::event::AppEvent;
use crate::app::state::{App, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::tools::mcp::{ElicitAsk, ElicitReply, Field, FieldKind};
use serde_json::json;
use tokio::sync::oneshot::Receiver;
use tokio::sync::oneshot::error::TryRecvError;

fn field(name: &str, kind: FieldKind, required: bool) -> Field {
    Field {
        name: name.into(),
        title: None,
        description: None,
        kind,
        required,
        default: None,
    }
}

fn text() -> FieldKind {
    FieldKind::Text {
        format: None,
        min_length: None,
        max_length: None,
    }
}

/// A question with a required text, an optional whole number (default 2), an optional yes/no
/// and a choice.
fn question(server: &str) -> (ElicitAsk, Receiver<ElicitReply>) {
    let mut name = field("name", text(), true);
    name.title = Some("Your name".into());
    name.description = Some("as on your badge".into());
    let mut count = field(
        "count",
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(10.0),
        },
        false,
    );
    count.default = Some(json!(2));
    let subscribe = field("subscribe", FieldKind::Boolean, false);
    let color = field(
        "color",
        FieldKind::Choice {
            values: vec!["r".into(), "g".into()],
            labels: vec!["Red".into(), "Green".into()],
        },
        false,
    );
    ElicitAsk::new(
        server.into(),
        "Who is deploying?".into(),
        vec![name, count, subscribe, color],
    )
}

fn key(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    update(
        app,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, mods))),
    );
}

fn press(app: &mut App, code: KeyCode) {
    key(app, code, KeyModifiers::NONE);
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn notices(app: &App) -> Vec<(String, bool)> {
    app.transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Notice { text, error, .. } => Some((text.clone(), *error)),
            _ => None,
        })
        .collect()
}

#[test]
fn typing_and_enter_send_the_parsed_form_with_empty_optional_fields_left_out() {
    let mut app = super::app_update::app();
    let (ask, mut rx) = question("deploy");
    update(&mut app, AppEvent::Elicit(ask));
    let d = app.layers.questions.open.as_ref().expect("the dialog");
    // The default is prefilled.
    assert_eq!(d.inputs, ["", "2", "", ""]);
    typed(&mut app, "Ada");
    press(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    typed(&mut app, "3");
    // Shift-Tab and Up go back, Down and Tab forward: to the choice, by its label.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::BackTab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    typed(&mut app, "Green");
    assert_eq!(
        rx.try_recv(),
        Err(TryRecvError::Empty),
        "nothing sent before Enter"
    );
    press(&mut app, KeyCode::Enter);
    assert!(app.layers.questions.open.is_none());
    let want = json!({"name": "Ada", "count": 3, "color": "g"});
    match rx.try_recv() {
        Ok(ElicitReply::Accept(values)) => assert_eq!(serde_json::Value::Object(values), want),
        other => panic!("{other:?}"),
    }
    let n = notices(&app);
    assert!(
        n.iter()
            .any(|(t, e)| !e && t.contains("`deploy`") && t.contains("sent your answer")),
        "{n:?}"
    );
}

#[test]
fn an_invalid_form_shows_its_problems_and_sends_nothing() {
    let mut app = super::app_update::app();
    let (ask, mut rx) = question("deploy");
    update(&mut app, AppEvent::Elicit(ask));
    // The required name left empty, a count out of range.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Backspace);
    typed(&mut app, "11");
    press(&mut app, KeyCode::Enter);
    let d = app.layers.questions.open.as_ref().expect("still open");
    assert_eq!(d.problems, ["count: at most 10"], "parse problems first");
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Enter);
    let d = app.layers.questions.open.as_ref().expect("still open");
    assert_eq!(d.problems, ["Your name: required"]);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    // Nothing answers for the user: time passing leaves the question waiting.
    for _ in 0..50 {
        update(&mut app, AppEvent::Tick);
    }
    assert!(app.layers.questions.open.is_some());
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
}

#[test]
fn ctrl_d_declines_and_esc_cancels_one_question_at_a_time() {
    let mut app = super::app_update::app();
    let (first, mut rx1) = question("one");
    let (second, mut rx2) = question("two");
    update(&mut app, AppEvent::Elicit(first));
    update(&mut app, AppEvent::Elicit(second));
    assert_eq!(app.layers.questions.waiting.len(), 1);
    assert_eq!(
        app.layers
            .questions
            .open
            .as_ref()
            .map(|d| d.ask.server.as_str()),
        Some("one")
    );
    key(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert_eq!(rx1.try_recv(), Ok(ElicitReply::Decline));
    // The next one shows; Esc cancels it, and the transcript is not touched by the keys.
    assert_eq!(
        app.layers
            .questions
            .open
            .as_ref()
            .map(|d| d.ask.server.as_str()),
        Some("two")
    );
    press(&mut app, KeyCode::Esc);
    assert_eq!(rx2.try_recv(), Ok(ElicitReply::Cancel));
    assert!(app.layers.questions.open.is_none());
    assert!(app.composer.input.is_empty(), "the keys went to the dialog");
}

#[test]
fn a_question_the_server_gave_up_on_goes_with_a_notice() {
    let mut app = super::app_update::app();
    let (ask, rx) = question("slowpoke");
    update(&mut app, AppEvent::Elicit(ask));
    drop(rx);
    update(&mut app, AppEvent::Tick);
    assert!(app.layers.questions.open.is_none());
    let n = notices(&app);
    assert!(
        n.iter()
            .any(|(t, e)| *e && t.contains("`slowpoke` stopped waiting")),
        "{n:?}"
    );
    // One that arrives already abandoned is never shown.
    let (ask, rx) = question("late");
    drop(rx);
    update(&mut app, AppEvent::Elicit(ask));
    assert!(app.layers.questions.open.is_none());
}

#[test]
fn pasted_text_goes_into_the_focused_field_on_one_line() {
    let mut app = super::app_update::app();
    let (ask, mut rx) = question("deploy");
    update(&mut app, AppEvent::Elicit(ask));
    update(
        &mut app,
        AppEvent::Terminal(Event::Paste("Ada\n\u{1b}[31mLovelace".into())),
    );
    assert_eq!(
        app.layers.questions.open.as_ref().expect("open").inputs[0],
        "Ada Lovelace"
    );
    press(&mut app, KeyCode::Enter);
    match rx.try_recv() {
        Ok(ElicitReply::Accept(v)) => assert_eq!(v["name"], "Ada Lovelace"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_server_asking_faster_than_anyone_answers_has_its_extra_questions_cancelled() {
    let mut app = super::app_update::app();
    let mut replies = Vec::new();
    for _ in 0..12 {
        let (ask, rx) = question("flood");
        update(&mut app, AppEvent::Elicit(ask));
        replies.push(rx);
    }
    // One open, eight waiting, the last three cancelled at once and said.
    assert!(app.layers.questions.open.is_some());
    assert_eq!(app.layers.questions.waiting.len(), 8);
    for rx in &mut replies[..9] {
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }
    for rx in &mut replies[9..] {
        assert_eq!(rx.try_recv(), Ok(ElicitReply::Cancel));
    }
    // Said once for each, the same notice counted on one line.
    let said: u32 = (app.transcript.entries.iter())
        .filter_map(|e| match e {
            crate::app::state::Entry::Notice {
                text,
                error: true,
                repeats,
                ..
            } if text.contains("asked more questions than wait here (8)") => Some(*repeats),
            _ => None,
        })
        .sum();
    assert_eq!(said, 3);
}
