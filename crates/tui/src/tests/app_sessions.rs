//! The TUI's sessions: saved after every message as the events arrive, restored with panes,
//! results and inspector traces, exported.

use std::os::unix::fs::PermissionsExt;

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::saved;
use crate::app::state::{App, Connection, Entry, PaneState, TurnState};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op, SharedTrace, TurnOutcome, set_system};
use kimi_core::session::{Session, SessionStore};
use kimi_core::tools::Toolbox;
use kimi_protocol::{Message, ToolCall};
use kimi_protocol::{Mode, StreamEvent, Trace};

/// An app with a new session, as `kimi-tui` starts one.
pub(super) fn app() -> App {
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

/// Apply an event and carry out its save effects, as the event loop does, then wait for the
/// journal writer so that the file can be read. Operations for the agent come back as the events
/// the agent reports for them before any request is made.
fn apply(a: &mut App, store: &SessionStore, e: AppEvent) -> usize {
    let mut saves = 0;
    for fx in update(a, e) {
        match fx {
            Effect::SaveSession => {
                saved::save(a, Some(store));
                saves += 1;
            }
            Effect::Agent(Op::UserTurn { text }) => {
                let index = a.conversation.len();
                saves += appended(a, store, index, Message::user(text));
            }
            Effect::Agent(Op::SetSystem { prompt }) => {
                let change = set_system(&mut a.conversation.clone(), &prompt);
                let e = EngineEvent::SystemSet { prompt, change };
                saves += apply(a, store, AppEvent::Engine(e));
            }
            _ => {}
        }
    }
    assert!(saved::flush(a, WAIT), "the writer finished");
    saves
}

fn appended(a: &mut App, store: &SessionStore, index: usize, message: Message) -> usize {
    let message = Box::new(message);
    apply(
        a,
        store,
        AppEvent::Engine(EngineEvent::MessageAppended { index, message }),
    )
}

/// A round's end as the agent reports it (its trace, shared, reported late for brevity): its
/// message, its trace, the end.
fn round_end(round: u32, index: usize, message: Message, trace: Box<Trace>) -> [EngineEvent; 4] {
    let [appended, finished, end] = round_finish(round, index, message);
    [
        EngineEvent::TraceStarted {
            index: round as usize - 1,
            trace: SharedTrace::new(*trace),
        },
        appended,
        finished,
        end,
    ]
}

/// The end of a round whose trace was started: its message, its trace finished, the end.
fn round_finish(round: u32, index: usize, message: Message) -> [EngineEvent; 3] {
    [
        EngineEvent::MessageAppended {
            index,
            message: Box::new(message),
        },
        EngineEvent::TraceFinished {
            index: round as usize - 1,
            message_index: index,
        },
        EngineEvent::RoundFinished {
            round,
            finish: "stop".into(),
            error: None,
            cancelled: false,
        },
    ]
}

fn turn_done() -> AppEvent {
    AppEvent::Engine(EngineEvent::TurnDone {
        outcome: Box::new(TurnOutcome::default()),
    })
}

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

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
    enter(&mut a, &store, "Weather?");
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Paris"}"#,
    );
    let round1 = Message::assistant_with_calls("Checking.", vec![call.clone()]);
    let result = Message::tool_result(&call.id, "get_weather", "Sunny");
    let answer = Message::assistant("It is sunny.");
    let mut saves = 0;
    let round1_end = round_end(
        1,
        1,
        round1.clone(),
        trace("Checking.<|tool_calls_section_begin|>"),
    );
    let round2_end = round_end(2, 3, answer.clone(), trace("It is sunny."));
    let events = [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::Stream(StreamEvent::Text("Checking.".into())),
        EngineEvent::Stream(StreamEvent::ToolCallBegin {
            index: 0,
            id: call.id.clone(),
            name: "get_weather".into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallEnd { index: 0 }),
    ]
    .into_iter()
    .chain(round1_end)
    .chain([
        EngineEvent::MessageAppended {
            index: 2,
            message: Box::new(result.clone()),
        },
        EngineEvent::RoundStarted { round: 2 },
        EngineEvent::Stream(StreamEvent::Text("It is sunny.".into())),
    ])
    .chain(round2_end);
    for e in events {
        let round_end = matches!(e, EngineEvent::RoundFinished { .. });
        let tool =
            matches!(&e, EngineEvent::MessageAppended { message, .. } if message.role == "tool");
        saves += apply(&mut a, &store, AppEvent::Engine(e));
        if round_end || tool {
            // The file holds every message so far: an answer once its round ends (with its
            // trace), a tool result at once.
            let s = store.latest().expect("readable").expect("saved");
            assert_eq!(s.messages, a.conversation);
            assert_eq!(s.traces.len(), a.traces.len());
        }
    }
    assert_eq!(saves, 3, "one write per round, one per tool result");
    let want = vec![Message::user("Weather?"), round1, result, answer];
    assert_eq!(a.conversation, want);
    apply(&mut a, &store, turn_done());

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
        .transcript
        .entries
        .iter()
        .map(|e| match e {
            Entry::User { .. } => "user",
            Entry::Assistant(_) => "assistant",
            Entry::Notice { .. } => "notice",
        })
        .collect();
    assert_eq!(kinds, ["user", "assistant", "assistant", "notice"]);
    let Entry::Assistant(t) = &b.transcript.entries[1] else {
        panic!()
    };
    assert_eq!(t.trace, Some(0));
    assert_eq!(t.panes[0].state, PaneState::Answered);
    assert_eq!(t.panes[0].result.as_deref(), Some("Sunny"));
    assert_eq!(t.text(), "Checking.");

    let out = dir.path().join("out.md");
    saved::export_to(&mut b, true, Some(out.to_str().expect("utf-8")));
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
    saved::flush(&mut a, WAIT);
    assert_eq!(
        std::fs::read_to_string(store.path_of(&id)).expect("read"),
        "{ not json"
    );
    assert!(a.session.is_none(), "saving stops");
    assert!(matches!(
        a.transcript.entries.last(),
        Some(Entry::Notice { error: true, .. })
    ));
}

fn enter(a: &mut App, store: &SessionStore, text: &str) -> usize {
    for c in text.chars() {
        update(
            a,
            AppEvent::Terminal(Event::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            ))),
        );
    }
    apply(
        a,
        store,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        ))),
    )
}

fn kinds(a: &App) -> Vec<&'static str> {
    a.transcript
        .entries
        .iter()
        .map(|e| match e {
            Entry::User { .. } => "user",
            Entry::Assistant(_) => "assistant",
            Entry::Notice { .. } => "notice",
        })
        .collect()
}

#[test]
fn the_message_is_saved_when_sent_and_the_partial_answer_while_it_streams() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    let id = a.session.as_ref().expect("session").id.clone();
    // Sent: on disk before any answer (or request) exists.
    assert_eq!(enter(&mut a, &store, "Tell me a story"), 1);
    let s = store.load(&id).expect("saved at send");
    assert_eq!(s.messages, vec![Message::user("Tell me a story")]);
    assert!(s.partial.is_empty());
    assert!(
        !std::fs::read_to_string(store.path_of(&id))
            .expect("read")
            .contains("\"partial\""),
        "no partial field in a file without one (version-1 shape)"
    );

    apply(
        &mut a,
        &store,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    // The agent's trace of the request, which it fills in as the chunks arrive.
    apply(
        &mut a,
        &store,
        AppEvent::Engine(EngineEvent::TraceStarted {
            index: 0,
            trace: SharedTrace::new(*trace("Once upon")),
        }),
    );
    for e in [
        StreamEvent::Chunk {
            data: "Once upon".into(),
            at_us: 5,
        },
        StreamEvent::Text("Once upon \u{1b}]0;x\u{7}a time".into()),
        StreamEvent::ToolCallBegin {
            index: 0,
            id: "functions.get_weather:0".into(),
            name: "get_weather".into(),
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "{\"city\": \"Pa".into(),
        },
    ] {
        apply(&mut a, &store, AppEvent::Engine(EngineEvent::Stream(e)));
    }
    // Within a second of the last save, a tick does not write.
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 0);
    assert!(store.load(&id).expect("loads").partial.is_empty());
    // A second later it does, with the text as sent and the call seen so far.
    a.last_save = Some(std::time::Instant::now() - std::time::Duration::from_millis(1100));
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 1);
    let s = store.load(&id).expect("loads");
    assert_eq!(s.messages, vec![Message::user("Tell me a story")]);
    assert_eq!(s.partial.len(), 1, "{:?}", s.partial);
    let p = &s.partial[0];
    assert_eq!(p.after_message, 1);
    assert_eq!(p.content, "Once upon \u{1b}]0;x\u{7}a time");
    assert_eq!(p.tool_calls[0].function.name, "get_weather");
    assert_eq!(p.tool_calls[0].function.arguments, "{\"city\": \"Pa");
    assert!(p.saved_unix_ms > 0);
    assert_eq!(s.traces.len(), 1, "the streaming request's trace too");
    // Nothing new: no write, however long it has been.
    a.last_save = Some(std::time::Instant::now() - std::time::Duration::from_secs(5));
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 0);

    // Resumed after a kill, from what the disk held then (a copy: `a` goes on below): the
    // partial answer shows, marked interrupted, not in the conversation sent to the model.
    let crashed = tempfile::tempdir().expect("tmp");
    let image = SessionStore::new(crashed.path());
    let journal = store.journal_path(&id);
    std::fs::copy(&journal, image.journal_path(&id)).expect("copy");
    let mut b = app();
    saved::restore(&mut b, s.clone());
    assert_eq!(b.conversation, vec![Message::user("Tell me a story")]);
    assert_eq!(kinds(&b), ["user", "assistant", "notice"]);
    let Entry::Assistant(t) = &b.transcript.entries[1] else {
        panic!()
    };
    assert_eq!(t.state, TurnState::Interrupted);
    assert_eq!(t.text(), "Once upon a time", "sanitized for the screen");
    assert_eq!(t.panes[0].state, PaneState::Incomplete);
    assert_eq!(t.trace, Some(0));
    // It stays in the file when the resumed session is saved again, and in the export.
    enter(&mut b, &image, "Go on");
    let again = image.load(&id).expect("loads");
    assert_eq!(again.partial, s.partial);
    assert_eq!(again.messages.len(), 2);
    let out = dir.path().join("x/out.md");
    saved::export_to(&mut b, true, Some(out.to_str().expect("utf-8")));
    let md = std::fs::read_to_string(&out).expect("exported");
    assert!(md.contains("interrupted") && md.contains("a time"), "{md}");
    drop(b);

    // More arrives: the next save writes only that, and loading joins the pieces.
    for e in [
        StreamEvent::Text(" there".into()),
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "ris\"}".into(),
        },
    ] {
        apply(&mut a, &store, AppEvent::Engine(EngineEvent::Stream(e)));
    }
    a.last_save = Some(std::time::Instant::now() - std::time::Duration::from_millis(1100));
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 1);
    let journal = std::fs::read_to_string(store.journal_path(&id)).expect("read");
    let last = journal.lines().last().expect("a line");
    assert!(
        last.contains("\"more\":true") && last.contains(" there") && !last.contains("Once"),
        "{last}"
    );
    let p = &store.load(&id).expect("loads").partial[0];
    assert_eq!(p.content, "Once upon \u{1b}]0;x\u{7}a time there");
    assert_eq!(p.tool_calls[0].function.arguments, "{\"city\": \"Paris\"}");

    // The round ends: its message replaces the partial record.
    for e in round_finish(1, 1, Message::assistant("Once upon a time.")) {
        apply(&mut a, &store, AppEvent::Engine(e));
    }
    let s = store.load(&id).expect("loads");
    assert!(s.partial.is_empty(), "{:?}", s.partial);
    assert_eq!(s.messages.len(), 2);
}

#[test]
fn an_interrupted_answer_keeps_its_reasoning_saved_restored_and_folded() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    let id = a.session.as_ref().expect("session").id.clone();
    enter(&mut a, &store, "Weather in Paris?");
    apply(
        &mut a,
        &store,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    // Killed while still thinking: the reasoning alone is worth saving.
    for piece in ["The user asks ", "about \u{1b}[31mParis."] {
        let e = EngineEvent::Stream(StreamEvent::Reasoning(piece.into()));
        apply(&mut a, &store, AppEvent::Engine(e));
    }
    a.last_save = Some(std::time::Instant::now() - std::time::Duration::from_millis(1100));
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 1);
    let p = &store.load(&id).expect("loads").partial;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        p[0].reasoning_content,
        "The user asks about \u{1b}[31mParis."
    );
    assert_eq!(p[0].content, "");
    // Then the answer starts: both are kept, apart.
    let e = EngineEvent::Stream(StreamEvent::Text("Sunny.".into()));
    apply(&mut a, &store, AppEvent::Engine(e));
    a.last_save = Some(std::time::Instant::now() - std::time::Duration::from_millis(1100));
    assert_eq!(apply(&mut a, &store, AppEvent::Tick), 1);
    let s = store.load(&id).expect("loads");
    let p = &s.partial[0];
    assert_eq!(
        (p.reasoning_content.as_str(), p.content.as_str()),
        ("The user asks about \u{1b}[31mParis.", "Sunny.")
    );

    // Resumed: the reasoning is in its cell, over and folded, never in the answer.
    let mut b = app();
    saved::restore(&mut b, s.clone());
    let Some(Entry::Assistant(t)) = b.transcript.entries.get(1) else {
        panic!("{:?}", kinds(&b))
    };
    assert_eq!(t.state, TurnState::Interrupted);
    assert_eq!(t.text(), "Sunny.");
    assert_eq!(
        t.reasoning.text(),
        "The user asks about Paris.",
        "sanitized"
    );
    assert!(!t.reasoning.live() && !b.transcript.reasoning_open);
    let cell = crate::ui::reasoning::lines(
        &t.reasoning,
        b.transcript.reasoning_open,
        60,
        std::time::Instant::now(),
    );
    assert_eq!(cell.len(), 1, "folded to its header: {cell:?}");
    // Saved again as it was, and exported in a collapsed block.
    let out = dir.path().join("out.md");
    saved::export_to(&mut b, true, Some(out.to_str().expect("utf-8")));
    let md = std::fs::read_to_string(&out).expect("exported");
    assert!(
        md.contains("<summary>Reasoning</summary>")
            && md.contains("about")
            && md.contains("Sunny."),
        "{md}"
    );
    let again = tempfile::tempdir().expect("tmp");
    let image = SessionStore::new(again.path());
    std::fs::copy(store.journal_path(&id), image.journal_path(&id)).expect("copy");
    enter(&mut b, &image, "Go on");
    assert_eq!(image.load(&id).expect("loads").partial, s.partial);
}

#[test]
fn a_session_left_without_an_answer_is_marked_interrupted() {
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.messages = vec![Message::user("hello?")];
    let mut b = app();
    saved::restore(&mut b, s);
    let texts: Vec<String> = b
        .transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Notice { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        texts[0].starts_with("The last turn was interrupted: no answer"),
        "{texts:?}"
    );
}

#[test]
fn a_second_app_on_the_same_session_does_not_write_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    let id = a.session.as_ref().expect("session").id.clone();
    enter(&mut a, &store, "first");
    // A second instance with the same session: refused at its first write, file untouched.
    let mut b = app();
    saved::restore(&mut b, store.load(&id).expect("loads"));
    b.conversation.push(Message::user("second"));
    saved::save(&mut b, Some(&store));
    assert!(b.session.is_none(), "saving stops");
    let Some(Entry::Notice { text, error, .. }) = b.transcript.entries.last() else {
        panic!("{:?}", kinds(&b))
    };
    assert!(*error);
    assert!(
        text.contains(&format!(
            "session `{id}` is open in another kimi-tui (pid {})",
            std::process::id()
        )),
        "{text}"
    );
    assert_eq!(
        store.load(&id).expect("loads").messages,
        vec![Message::user("first")]
    );
}

#[test]
fn a_new_system_prompt_is_saved_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = app();
    let id = a.session.as_ref().expect("session").id.clone();
    enter(&mut a, &store, "hi");
    appended(&mut a, &store, 1, Message::assistant("hello"));
    apply(&mut a, &store, turn_done());
    assert_eq!(store.load(&id).expect("loads").messages.len(), 2);
    assert_eq!(enter(&mut a, &store, "/system Be terse."), 1);
    let s = store.load(&id).expect("loads");
    assert_eq!(s.messages[0], Message::system("Be terse."));
    // Same number of messages, different content: still written.
    assert_eq!(enter(&mut a, &store, "/system Be kind."), 1);
    let s = store.load(&id).expect("loads");
    assert_eq!(s.messages.len(), 3);
    assert_eq!(s.messages[0], Message::system("Be kind."));
}

#[test]
fn a_failed_last_request_is_not_called_interrupted() {
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.messages = vec![Message::user("hello?")];
    let t = Trace {
        error: Some("HTTP 500".into()),
        ..Trace::default()
    };
    s.push_trace(1, t);
    let mut b = app();
    saved::restore(&mut b, s);
    assert_eq!(kinds(&b), ["user", "notice"], "only the resumed notice");
}

/// The text an app shows for its assistant answers, in order.
fn shown_answers(a: &App) -> Vec<String> {
    a.transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Assistant(t) => Some(t.text().to_owned()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_resumed_session_shows_exactly_what_was_shown_live_however_the_text_was_split() {
    let hostile = "Hello \u{1b}[31mred\u{1b}[0m world \u{1b}]8;;http://evil\u{1b}\\link\u{1b}]8;;\u{7} \
                   \u{9b}2J\u{202e}rev\u{2066} 北京\r\n```sh\nls\u{1b}[1A\n```\n";
    let want = "Hello red world link rev 北京\n```sh\nls\n```\n";
    for (cut, _) in hostile.char_indices() {
        for finished in [true, false] {
            let mut live = app();
            update(
                &mut live,
                AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
            );
            for piece in [&hostile[..cut], &hostile[cut..]] {
                update(
                    &mut live,
                    AppEvent::Engine(EngineEvent::Stream(StreamEvent::Text(piece.into()))),
                );
            }
            if finished {
                let index = live.conversation.len();
                for e in round_end(1, index, Message::assistant(hostile), trace(hostile)) {
                    update(&mut live, AppEvent::Engine(e));
                }
            }
            assert_eq!(shown_answers(&live), vec![want], "live, split at {cut}");
            // Saved (finished: as a message; not: as the partial answer) and restored.
            let session = saved::snapshot(&live).expect("a session");
            let mut resumed = app();
            saved::restore(&mut resumed, session);
            assert_eq!(
                shown_answers(&resumed),
                shown_answers(&live),
                "resumed, split at {cut}, finished {finished}"
            );
        }
    }
}

#[test]
fn a_resumed_answer_shown_as_saved_is_held_once() {
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.messages = vec![
        Message::user("hello?"),
        Message::assistant("Hi there."),
        Message::user("and red?"),
        Message::assistant("Hi \u{1b}[31mred"),
    ];
    let mut b = app();
    saved::restore(&mut b, s);
    let turns: Vec<*const u8> = b
        .transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Assistant(t) => Some(t.text().as_ptr()),
            _ => None,
        })
        .collect();
    let messages: Vec<*const u8> = [1, 3]
        .iter()
        .map(|&i| match &b.conversation[i].content {
            Some(kimi_protocol::Content::Text(t)) => t.as_ptr(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(turns[0], messages[0], "shown as saved: the message's text");
    assert_ne!(
        turns[1], messages[1],
        "sanitized for the screen: its own text"
    );
}
