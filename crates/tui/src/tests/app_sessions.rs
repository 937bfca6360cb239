//! The TUI's sessions: recorded by the agent's recorder as the events arrive (see
//! [`super::recorded`]), resumed from the events the agent reports for a saved session, with
//! panes, results and inspector traces, exported.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use super::recorded::{Recorded, WAIT, resumed};
use super::update;
use crate::app::event::AppEvent;
use crate::app::export;
use crate::app::state::{App, Connection, Entry, PaneState, TurnState};
use kimi_core::engine::{EngineEvent, SharedTrace, TurnOutcome};
use kimi_core::session::{Session, SessionStore, open_stored};
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

fn turn_done() -> EngineEvent {
    EngineEvent::TurnDone {
        outcome: Box::new(TurnOutcome::default()),
    }
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

fn export_to(app: &App, markdown: bool, path: &std::path::Path) {
    let session = export::snapshot(app).expect("a session");
    export::write(&session, markdown, Some(path.to_path_buf()), true).expect("exported");
}

#[test]
fn a_turn_is_saved_message_by_message_and_restores_whole() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    a.enter("Weather?");
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Paris"}"#,
    );
    let round1 = Message::assistant_with_calls("Checking.", vec![call.clone()]);
    let result = Message::tool_result(&call.id, "get_weather", "Sunny");
    let answer = Message::assistant("It is sunny.");
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
        a.engine(e);
        if round_end || tool {
            // The file holds every message so far: an answer once its round ends (with its
            // trace), a tool result at once.
            let s = store.latest().expect("readable").expect("saved");
            assert_eq!(s.messages, a.app.conversation);
            assert_eq!(s.traces.len(), a.app.traces.len());
        }
    }
    let want = vec![Message::user("Weather?"), round1, result, answer];
    assert_eq!(a.app.conversation, want);
    a.engine(turn_done());

    let id = a.app.session.as_ref().expect("session").id.clone();
    assert_eq!(id, a.id());
    let path = store.path_of(&id);
    let mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let raw = std::fs::read_to_string(&path).expect("read");
    assert!(
        !raw.contains("sk-should-never-be-saved"),
        "no key in the file"
    );

    let b = resumed(&store.load(&id).expect("loads"));
    assert_eq!(b.conversation, want);
    assert_eq!(b.traces.len(), 2);
    assert_eq!(b.trace_messages, vec![1, 3]);
    assert_eq!(kinds(&b), ["user", "assistant", "assistant", "notice"]);
    let Entry::Assistant(t) = &b.transcript.entries[1] else {
        panic!()
    };
    assert_eq!(t.trace, Some(0));
    // No run of the call was recorded (the events above have none): its result came back.
    assert_eq!(t.panes[0].state, PaneState::Answered);
    assert_eq!(t.panes[0].result.as_deref(), Some("Sunny"));
    assert_eq!(t.text(), "Checking.");

    let out = dir.path().join("out.md");
    export_to(&b, true, &out);
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
    let mut a = Recorded::new(&store);
    let id = a.id();
    std::fs::write(store.path_of(&id), "{ not json").expect("write");
    a.enter("hi");
    // The writer's refusal is said with the next event.
    a.engine(EngineEvent::RoundStarted { round: 1 });
    assert_eq!(
        std::fs::read_to_string(store.path_of(&id)).expect("read"),
        "{ not json"
    );
    assert!(a.app.session.is_none(), "saving stops");
    let said = a.app.transcript.entries.iter().any(|e| {
        matches!(e, Entry::Notice { text, error: true, .. }
            if text.contains("Saving is off") && text.contains("not a valid session file"))
    });
    assert!(said, "{:?}", a.app.transcript.entries.len());
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
    let mut a = Recorded::new(&store);
    let id = a.id();
    // Sent: on disk before any answer (or request) exists.
    a.enter("Tell me a story");
    let s = store.load(&id).expect("saved at send");
    assert_eq!(s.messages, vec![Message::user("Tell me a story")]);
    assert!(s.partial.is_empty());
    assert!(
        !std::fs::read_to_string(store.path_of(&id))
            .expect("read")
            .contains("\"partial\""),
        "no partial record before an answer streams"
    );

    a.engine(EngineEvent::RoundStarted { round: 1 });
    // The agent's trace of the request, which it fills in as the chunks arrive.
    a.engine(EngineEvent::TraceStarted {
        index: 0,
        trace: SharedTrace::new(*trace("Once upon")),
    });
    a.engine(EngineEvent::Stream(StreamEvent::Chunk {
        data: "Once upon".into(),
        at_us: 5,
    }));
    // The first piece is saved at once, with the streaming request's trace.
    a.engine(EngineEvent::Stream(StreamEvent::Text(
        "Once upon \u{1b}]0;x\u{7}a time".into(),
    )));
    let s = store.load(&id).expect("loads");
    assert_eq!(s.partial[0].content, "Once upon \u{1b}]0;x\u{7}a time");
    assert_eq!(s.traces.len(), 1, "the streaming request's trace too");
    // Within a second of that save, nothing more is written.
    for e in [
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
        a.engine(EngineEvent::Stream(e));
    }
    assert!(
        store.load(&id).expect("loads").partial[0]
            .tool_calls
            .is_empty()
    );
    // A second later it is, with the text as sent and the call seen so far.
    a.later(Duration::from_millis(1100));
    a.engine(EngineEvent::Stream(StreamEvent::Usage(Default::default())));
    a.engine(EngineEvent::Stream(StreamEvent::ToolCallArgs {
        index: 0,
        delta: "".into(),
    }));
    let s = store.load(&id).expect("loads");
    assert_eq!(s.messages, vec![Message::user("Tell me a story")]);
    assert_eq!(s.partial.len(), 1, "{:?}", s.partial);
    let p = &s.partial[0];
    assert_eq!(p.after_message, 1);
    assert_eq!(p.content, "Once upon \u{1b}]0;x\u{7}a time");
    assert_eq!(p.tool_calls[0].function.name, "get_weather");
    assert_eq!(p.tool_calls[0].function.arguments, "{\"city\": \"Pa");
    assert!(p.saved_unix_ms > 0);
    assert_eq!(s.traces.len(), 1);

    // Resumed after a kill, from what the disk held then (a copy: `a` goes on below): the
    // partial answer shows, marked interrupted, not in the conversation sent to the model.
    let crashed = tempfile::tempdir().expect("tmp");
    let image = SessionStore::new(crashed.path());
    let journal = store.journal_path(&id);
    std::fs::copy(&journal, image.journal_path(&id)).expect("copy");
    let b = resumed(&s);
    assert_eq!(b.conversation, vec![Message::user("Tell me a story")]);
    assert_eq!(kinds(&b), ["user", "assistant", "notice"]);
    let Entry::Assistant(t) = &b.transcript.entries[1] else {
        panic!()
    };
    assert_eq!(t.state, TurnState::Interrupted);
    assert_eq!(t.text(), "Once upon a time", "sanitized for the screen");
    assert_eq!(t.panes[0].state, PaneState::Incomplete);
    assert_eq!(t.trace, Some(0));
    // It stays in the file when the resumed session is recorded on, and in the export.
    let opened = open_stored(&image, &id).expect("opens");
    let rec = kimi_core::engine::Recorder::resumed(image.clone(), opened, &b.traces);
    let mut b = Recorded::with(b, rec);
    b.enter("Go on");
    let again = image.load(&id).expect("loads");
    assert_eq!(again.partial, s.partial);
    assert_eq!(again.messages.len(), 2);
    let out = dir.path().join("x/out.md");
    std::fs::create_dir_all(dir.path().join("x")).expect("mkdir");
    export_to(&b.app, true, &out);
    let md = std::fs::read_to_string(&out).expect("exported");
    assert!(md.contains("interrupted") && md.contains("a time"), "{md}");
    drop(b);

    // More arrives: the next save writes only that, and loading joins the pieces.
    a.later(Duration::from_millis(1100));
    for e in [
        StreamEvent::Text(" there".into()),
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "ris\"}".into(),
        },
    ] {
        a.engine(EngineEvent::Stream(e));
    }
    a.later(Duration::from_millis(1100));
    a.engine(EngineEvent::Stream(StreamEvent::ToolCallArgs {
        index: 0,
        delta: "".into(),
    }));
    let journal = std::fs::read_to_string(store.journal_path(&id)).expect("read");
    let last = journal.lines().last().expect("a line");
    assert!(
        last.contains("\"more\":true") && last.contains("ris") && !last.contains("Once"),
        "{last}"
    );
    let p = &store.load(&id).expect("loads").partial[0];
    assert_eq!(p.content, "Once upon \u{1b}]0;x\u{7}a time there");
    assert_eq!(p.tool_calls[0].function.arguments, "{\"city\": \"Paris\"}");

    // The round ends: its message replaces the partial record.
    for e in round_finish(1, 1, Message::assistant("Once upon a time.")) {
        a.engine(e);
    }
    let s = store.load(&id).expect("loads");
    assert!(s.partial.is_empty(), "{:?}", s.partial);
    assert_eq!(s.messages.len(), 2);
}

#[test]
fn an_interrupted_answer_keeps_its_reasoning_saved_restored_and_folded() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut a = Recorded::new(&store);
    let id = a.id();
    a.enter("Weather in Paris?");
    a.engine(EngineEvent::RoundStarted { round: 1 });
    // Killed while still thinking: the reasoning alone is worth saving.
    for piece in ["The user asks ", "about \u{1b}[31mParis."] {
        a.later(Duration::from_millis(1100));
        a.engine(EngineEvent::Stream(StreamEvent::Reasoning(piece.into())));
    }
    let p = &store.load(&id).expect("loads").partial;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        p[0].reasoning_content,
        "The user asks about \u{1b}[31mParis."
    );
    assert_eq!(p[0].content, "");
    // Then the answer starts: both are kept, apart.
    a.later(Duration::from_millis(1100));
    a.engine(EngineEvent::Stream(StreamEvent::Text("Sunny.".into())));
    let s = store.load(&id).expect("loads");
    let p = &s.partial[0];
    assert_eq!(
        (p.reasoning_content.as_str(), p.content.as_str()),
        ("The user asks about \u{1b}[31mParis.", "Sunny.")
    );

    // Resumed: the reasoning is in its cell, over and folded, never in the answer.
    let b = resumed(&s);
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
    // Exported in a collapsed block, and kept when recorded on.
    let out = dir.path().join("out.md");
    export_to(&b, true, &out);
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
    let opened = open_stored(&image, &id).expect("opens");
    let rec = kimi_core::engine::Recorder::resumed(image.clone(), opened, &b.traces);
    let mut b = Recorded::with(b, rec);
    b.enter("Go on");
    assert_eq!(image.load(&id).expect("loads").partial, s.partial);
}

#[test]
fn a_session_left_without_an_answer_is_marked_interrupted() {
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.messages = vec![Message::user("hello?")];
    let b = resumed(&s);
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
    let mut a = Recorded::new(&store);
    let id = a.id();
    a.enter("first");
    // A second instance on the same session is refused before it reads it: file untouched.
    let e = open_stored(&store, &id).expect_err("locked");
    assert!(
        e.to_string().contains(&format!(
            "session `{id}` is open in another kimi-tui (pid {})",
            std::process::id()
        )),
        "{e}"
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
    let mut a = Recorded::new(&store);
    let id = a.id();
    a.enter("hi");
    a.appended(1, Message::assistant("hello"));
    a.engine(turn_done());
    assert_eq!(store.load(&id).expect("loads").messages.len(), 2);
    a.enter("/system Be terse.");
    let s = store.load(&id).expect("loads");
    assert_eq!(s.messages[0], Message::system("Be terse."));
    // Same number of messages, different content: still written.
    a.enter("/system Be kind.");
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
    let b = resumed(&s);
    // The failed request shows as the failed round it was live, and no interruption is claimed.
    assert_eq!(
        kinds(&b),
        ["user", "assistant", "notice"],
        "and the resumed notice"
    );
    let Entry::Assistant(t) = &b.transcript.entries[1] else {
        panic!()
    };
    assert_eq!(t.state, TurnState::Failed("HTTP 500".into()));
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
            let mut session = export::snapshot(&live).expect("a session");
            if finished {
                let index = live.conversation.len();
                for e in round_end(1, index, Message::assistant(hostile), trace(hostile)) {
                    update(&mut live, AppEvent::Engine(e));
                }
                session = export::snapshot(&live).expect("a session");
            } else {
                // Saved as the partial answer it was.
                session.partial.push(kimi_core::session::PartialAnswer {
                    after_message: 0,
                    content: hostile.into(),
                    ..Default::default()
                });
            }
            assert_eq!(shown_answers(&live), vec![want], "live, split at {cut}");
            let resumed = resumed(&session);
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
    let b = resumed(&s);
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

#[test]
fn a_resumed_session_is_told_with_its_turns_and_time() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.messages = vec![Message::user("a"), Message::assistant("b")];
    store.save(&s).expect("saved");
    let b = resumed(&store.load(&s.id).expect("loads"));
    let Some(Entry::Notice { text, error, .. }) = b.transcript.entries.last() else {
        panic!("{:?}", kinds(&b))
    };
    assert!(!error && text.starts_with(&format!("Resumed session {} (1 turn,", s.id)));
    assert_eq!(
        b.session.as_ref().map(|m| m.id.as_str()),
        Some(s.id.as_str())
    );
    let _ = WAIT;
}
