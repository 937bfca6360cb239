//! `e` in the inspector: the last answer's raw output in the editor, `Ctrl-S` sends the edit to
//! the core to continue from, `Esc` changes nothing; refused while a turn runs or with no answer.

use super::app_update::{app, ctrl, key, typed};
use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::Entry;
use crossterm::event::KeyCode;
use kimi_core::engine::{EngineEvent, Op};
use kimi_protocol::{AnswerEdit, Message, Trace};

const BROKEN: &str = "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|";

/// An app whose last answer (raw mode) came as `BROKEN` in two chunks.
fn answered() -> crate::app::state::App {
    let mut a = app();
    a.conversation = vec![Message::user("weather?"), Message::assistant("Checking.")];
    let mut t = Trace {
        mode: kimi_protocol::Mode::Raw,
        ..Trace::default()
    };
    let (one, two) = BROKEN.split_at(20);
    t.push_chunk(one, 1);
    t.push_chunk(two, 2);
    a.traces = vec![t.into()];
    a.trace_messages = vec![1];
    a.transcript.entries.push(Entry::Assistant(Box::new(
        crate::app::state::AssistantTurn::new(Some(0)),
    )));
    a
}

fn footer(a: &crate::app::state::App) -> String {
    a.layers.inspector.message.clone().unwrap_or_default()
}

#[test]
fn the_raw_output_is_edited_and_the_core_continues_from_the_edit() {
    let mut a = answered();
    ctrl(&mut a, 't');
    key(&mut a, KeyCode::Char('e'));
    let edit = a.layers.inspector.edit.as_ref().expect("the editor opens");
    assert_eq!(edit.editor.lines().join("\n"), BROKEN);
    // The cursor is at the end: the repair is typed there.
    typed(&mut a, ">");
    let fx = ctrl(&mut a, 's');
    assert_eq!(
        fx,
        vec![Effect::Agent(Op::ContinueEdited {
            text: format!("{BROKEN}>")
        })]
    );
    assert!(a.layers.inspector.edit.is_none() && !a.layers.inspector.open);
    assert!(a.busy, "the continued answer is a turn");
    assert!(
        !a.transcript
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Assistant(_))),
        "the edited answer's cell goes; the continuation streams into a new one"
    );
}

#[test]
fn esc_cancels_the_edit_without_change() {
    let mut a = answered();
    ctrl(&mut a, 't');
    key(&mut a, KeyCode::Char('e'));
    typed(&mut a, "xyz");
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert!(a.layers.inspector.edit.is_none());
    assert!(a.layers.inspector.open, "back in the inspector");
    assert!(footer(&a).contains("cancelled"), "{}", footer(&a));
    assert_eq!(a.conversation[1].text(), "Checking.");
    assert!(!a.busy);
}

#[test]
fn no_answer_or_a_running_turn_is_said_in_the_footer() {
    let mut a = app();
    ctrl(&mut a, 't');
    key(&mut a, KeyCode::Char('e'));
    assert!(a.layers.inspector.edit.is_none());
    assert!(footer(&a).contains("no answer to edit"), "{}", footer(&a));
    let mut b = answered();
    b.busy = true;
    ctrl(&mut b, 't');
    key(&mut b, KeyCode::Char('e'));
    assert!(b.layers.inspector.edit.is_none());
    assert!(footer(&b).contains("a turn is running"), "{}", footer(&b));
}

#[test]
fn an_answer_with_an_escape_sequence_is_not_drawn_in_the_editor() {
    let mut a = answered();
    let mut t = Trace {
        mode: kimi_protocol::Mode::Raw,
        ..Trace::default()
    };
    t.push_chunk("Hi \u{1b}]0;pwned\u{7}", 1);
    a.traces = vec![t.into()];
    ctrl(&mut a, 't');
    key(&mut a, KeyCode::Char('e'));
    assert!(a.layers.inspector.edit.is_none());
    assert!(footer(&a).contains("do not print"), "{}", footer(&a));
}

#[test]
fn the_continued_answer_is_tagged_edited() {
    let mut a = app();
    a.conversation = vec![Message::user("weather?")];
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    let message = Message {
        edited: Some(Box::new(AnswerEdit {
            original: "Chec".into(),
            original_calls: Vec::new(),
            prefix: "Check".into(),
        })),
        ..Message::assistant("Checking.")
    };
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::MessageAppended {
            index: 1,
            message: Box::new(message),
        }),
    );
    let turn = a
        .transcript
        .entries
        .iter()
        .find_map(|e| match e {
            Entry::Assistant(t) => Some(t),
            _ => None,
        })
        .expect("the turn");
    assert!(turn.edited);
    let header = crate::ui::transcript::TurnCell::header(turn, true);
    let text: String = header[0].spans.iter().map(|s| s.content.as_ref()).collect();
    assert!(text.contains("edited"), "{text}");
}

/// The whole flow with a real agent against the mock (`broken_marker`), recorded, then resumed
/// into a fresh app: the continued answer is tagged edited both times and holds the repaired
/// call, which ran (the tool is `auto`).
#[tokio::test(flavor = "current_thread")]
async fn live_and_resumed_the_continued_answer_is_tagged_edited() {
    use super::recorded::{agent_init, pump, say};
    use kimi_core::engine::{Agent, EVENT_QUEUE, SessionHandoff};
    use kimi_core::session::{Session, SessionStore, open_stored};
    use kimi_core::tools::{Approval, ToolSpec, Toolbox};
    use kimi_mock::{MockOptions, MockServer};

    let toolbox = || {
        Toolbox::new(vec![ToolSpec {
            parameters: serde_json::json!({"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string"}}}),
            approval: Approval::Auto,
            ..ToolSpec::new(
                "get_weather",
                vec![kimi_test_support::tool_script("weather.sh")],
            )
        }])
        .expect("tools")
    };
    let opts = MockOptions {
        broken_marker: true,
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock starts");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut live = app();
    live.toolbox = toolbox();
    let mut agent = Agent::spawn(agent_init(&server, toolbox(), None), EVENT_QUEUE);
    let meta = Session::new("local", kimi_protocol::Mode::Raw, "m", "http://h/v1");
    let id = meta.id.clone();
    assert!(agent.send(Op::Record(SessionHandoff::new_session(store.clone(), meta))));
    say(&mut live, &mut agent, "What's the weather like in Paris?").await;
    ctrl(&mut live, 't');
    key(&mut live, KeyCode::Char('e'));
    typed(&mut live, ">");
    for fx in ctrl(&mut live, 's') {
        if let Effect::Agent(op) = fx {
            assert!(agent.send(op));
        }
    }
    pump(&mut live, &mut agent, |e| {
        matches!(e, EngineEvent::TurnDone { .. })
    })
    .await;
    let tagged = |a: &crate::app::state::App| {
        a.transcript
            .entries
            .iter()
            .filter(|e| matches!(e, Entry::Assistant(t) if t.edited))
            .count()
    };
    assert_eq!(tagged(&live), 1, "the continued answer, and only it");
    let answer = &live.conversation[1];
    assert_eq!(
        answer.tool_calls[0].function.arguments,
        r#"{"city": "Paris"}"#
    );
    assert!(
        live.conversation[2].text().contains("Sunny"),
        "the call ran"
    );
    assert!(agent.send(Op::Shutdown));
    (&mut agent.task).await.expect("the agent ends");

    let mut resumed = app();
    let mut second = Agent::spawn(agent_init(&server, toolbox(), None), EVENT_QUEUE);
    let opened = open_stored(&store, &id).expect("opens");
    assert!(second.send(Op::Record(SessionHandoff::resume(store.clone(), opened))));
    pump(&mut resumed, &mut second, |e| {
        matches!(e, EngineEvent::Resumed { .. })
    })
    .await;
    assert_eq!(resumed.conversation, live.conversation);
    assert_eq!(tagged(&resumed), 1, "the tag survives resuming");
    assert!(second.send(Op::Shutdown));
    server.shutdown().await;
}

#[test]
fn the_continued_cell_is_tagged_from_its_start_and_a_failed_one_gives_the_original_back() {
    let mut a = answered();
    ctrl(&mut a, 't');
    key(&mut a, KeyCode::Char('e'));
    ctrl(&mut a, 's');
    for e in [
        EngineEvent::Truncated {
            messages: 1,
            traces: 1,
        },
        EngineEvent::RoundStarted { round: 1 },
    ] {
        update(&mut a, AppEvent::Engine(e));
    }
    let cell = |a: &crate::app::state::App| match a.transcript.entries.last() {
        Some(Entry::Assistant(t)) => (t.edited, t.text().to_owned()),
        _ => panic!("an answer cell"),
    };
    assert!(cell(&a).0, "tagged while it streams");
    // The server refused: the core puts the original answer back.
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::MessageAppended {
            index: 1,
            message: Box::new(Message::assistant("Checking.")),
        }),
    );
    assert_eq!(cell(&a), (false, "Checking.".to_owned()));
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::TurnDone {
            outcome: Box::default(),
        }),
    );
    assert!(!a.continuing && !a.busy);
    // The next turn is an ordinary one.
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    assert!(!cell(&a).0);
}
