//! Sessions as an append-only journal (`ID.jsonl`): round trip, a cut-off last record, a
//! corrupt middle one, old `ID.json` sessions loaded and continued, exports unchanged, and the
//! writer thread that the agent's recorder never waits for. Real files in temp dirs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, Connection, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op, Recorder, SharedTrace, set_system};
use kimi_core::session::writer::{JournalWriter, Target};
use kimi_core::session::{
    PartialAnswer, Session, SessionError, SessionStore, SessionView, open_stored, to_markdown,
    to_openai_json,
};
use kimi_core::tools::Toolbox;
use kimi_protocol::{Message, ToolCall};
use kimi_protocol::{Mode, Trace};

/// `update` with the event stamped now, as the event loop does.
fn update(app: &mut App, event: AppEvent) -> Vec<Effect> {
    crate::app::update::update(app, event, std::time::Instant::now())
}

const WAIT: Duration = Duration::from_secs(10);
const SECRET: &str = "sk-journal-secret-4711";

fn sample(id: &str) -> Session {
    let mut s = Session::new(
        "local",
        Mode::Raw,
        "kimi",
        "http://user:pw@127.0.0.1:8000/v1",
    );
    s.id = id.to_owned();
    s.messages = vec![
        Message::system("Be brief."),
        Message::user("What's the weather\nin Beijing?"),
        Message::assistant_with_calls(
            "Checking. ",
            vec![ToolCall::new(
                "functions.get_weather:0",
                "get_weather",
                "{\"city\": \"Beijing\"}",
            )],
        ),
        Message::tool_result("functions.get_weather:0", "get_weather", "Sunny \u{1b}[31m"),
        Message::assistant("It is sunny."),
    ];
    let mut t = Trace {
        headers: vec![("Authorization".into(), format!("Bearer {SECRET}"))],
        ..Trace::default()
    };
    t.push_chunk("Checking. ", 10);
    s.push_trace(2, t.clone());
    s.push_trace(4, t);
    s.partial.push(PartialAnswer {
        after_message: 5,
        content: "Half an ans".into(),
        reasoning_content: String::new(),
        tool_calls: Vec::new(),
        saved_unix_ms: 7,
    });
    s
}

/// An app driven by the agent's events, each recorded first by a session recorder as the
/// agent records it; the recorder's clock is `clock`.
struct Run {
    a: App,
    rec: Recorder,
    clock: Instant,
}

fn app() -> App {
    let connection = Connection {
        profile: "local".into(),
        mode: Mode::Raw,
        model: "kimi".into(),
        host: "h".into(),
    };
    App::new(connection, Toolbox::default(), None)
}

impl Run {
    /// A new session recorded into `store`.
    fn new(store: &SessionStore) -> Run {
        let meta = Session::new("local", Mode::Raw, "kimi", "http://h/v1");
        Run::with(app(), Recorder::new(store.clone(), meta))
    }

    fn with(a: App, rec: Recorder) -> Run {
        Run {
            a,
            rec,
            clock: Instant::now(),
        }
    }

    /// `session` (opened from `store`) resumed into a fresh app, recorded on.
    fn resumed(store: &SessionStore, opened: kimi_core::session::Resumed) -> Run {
        let mut a = app();
        let (events, traces) = kimi_core::engine::replay::resume_events(&opened.session, None);
        for e in events {
            update(&mut a, AppEvent::Engine(e));
        }
        let shared: Vec<SharedTrace> = traces.into_iter().map(|(_, t)| t).collect();
        Run::with(a, Recorder::resumed(store.clone(), opened, &shared))
    }

    fn id(&self) -> String {
        self.rec.meta().id.clone()
    }

    fn flush(&mut self, timeout: Duration) -> bool {
        self.rec.flush(timeout)
    }

    /// Type `text` and Enter; the agent's answer to what that asks; the effects of the Enter.
    fn send(&mut self, text: &str) -> Vec<Effect> {
        for c in text.chars() {
            key(&mut self.a, KeyCode::Char(c));
        }
        let fx = key(&mut self.a, KeyCode::Enter);
        self.answer(fx.clone());
        fx
    }

    /// One event of the agent: recorded, then shown with what the recorder adds after it.
    fn engine(&mut self, e: EngineEvent) {
        let follow = self.rec.observe_at(&e, self.clock);
        let mut fx = update(&mut self.a, AppEvent::Engine(e));
        for f in follow {
            fx.extend(update(&mut self.a, AppEvent::Engine(f)));
        }
        self.answer(fx);
    }

    /// Operations for the agent come back as the events the agent reports for them (as in
    /// the app's tests).
    fn answer(&mut self, fx: Vec<Effect>) {
        for f in fx {
            let a = &self.a;
            let events = match f {
                Effect::Agent(Op::UserTurn { text }) => vec![EngineEvent::MessageAppended {
                    index: a.conversation.len(),
                    message: Box::new(Message::user(text)),
                }],
                Effect::Agent(Op::SetSystem { prompt }) => {
                    let change = set_system(&mut a.conversation.clone(), &prompt);
                    vec![EngineEvent::SystemSet { prompt, change }]
                }
                Effect::Agent(Op::Retry) => {
                    let last_user = a
                        .conversation
                        .iter()
                        .rposition(|m| m.role == "user")
                        .expect("a user message");
                    let traces = a
                        .trace_messages
                        .iter()
                        .position(|&m| m > last_user)
                        .unwrap_or(a.trace_messages.len());
                    vec![EngineEvent::Truncated {
                        messages: last_user + 1,
                        traces,
                    }]
                }
                _ => continue,
            };
            for e in events {
                self.engine(e);
            }
        }
    }
}

fn key(a: &mut App, code: KeyCode) -> Vec<Effect> {
    update(
        a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    )
}

#[test]
fn a_journal_round_trips_one_private_line_per_record_without_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path().join("a/sessions"));
    let s = sample("20261201-101010-aaaa");
    let path = store.save(&s).expect("saved");
    assert_eq!(path, store.journal_path(&s.id));
    assert_eq!(path, store.path_of(&s.id));
    let meta = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(meta(&path), 0o600);
    assert_eq!(meta(&store.dir), 0o700);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains(SECRET), "no key");
    assert!(!text.contains("pw@"), "no userinfo");
    assert!(!text.contains('\u{1b}'), "escaped, not raw");
    // Header, 5 messages, 2 traces, 1 partial, the listing's summary: one line each.
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["type"].as_str().expect("type").to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "header", "message", "message", "message", "message", "message", "trace", "trace",
            "partial", "summary"
        ]
    );
    let mut want = s.clone();
    want.base_url = "http://127.0.0.1:8000/v1".into();
    for t in &mut want.traces {
        t.trace.headers[0].1 = "Bearer [redacted]".into();
    }
    let back = store.load(&s.id).expect("loads");
    assert_eq!(back, want);
    let opened = store.open(&s.id).expect("opens");
    assert!(opened.journal && opened.notice.is_none());
}

/// The file as the TUI leaves it after two turns, and the byte length before the last record.
fn two_turns(store: &SessionStore) -> (String, Vec<u8>, usize) {
    let mut r = Run::new(store);
    let id = r.id();
    r.send("first");
    r.engine(EngineEvent::MessageAppended {
        index: 1,
        message: Box::new(Message::assistant("one")),
    });
    r.engine(turn_done());
    r.send("second question");
    assert!(r.flush(WAIT));
    let bytes = std::fs::read(store.journal_path(&id)).expect("read");
    let before_last = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("lines")
        + 1;
    (id, bytes, before_last)
}

#[test]
fn a_cut_off_last_record_loses_that_record_only_at_every_byte() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let (id, bytes, start) = two_turns(&store);
    let whole = store.load(&id).expect("loads");
    assert_eq!(whole.messages.len(), 3);
    let path = store.journal_path(&id);
    let mut before = whole.clone();
    before.messages.pop();
    for cut in start..bytes.len() {
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let o = store
            .open(&id)
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let (s, notice) = (o.session, o.notice);
        if cut == start {
            assert_eq!(notice, None);
        } else if cut == bytes.len() - 1 {
            // Only the newline is missing: the record is whole.
            assert_eq!(notice, None);
            assert_eq!(s.messages, whole.messages);
            continue;
        } else {
            let n = notice.unwrap_or_else(|| panic!("a notice at {cut}"));
            assert!(
                n.ends_with(&format!(
                    "the last record was cut off (crash mid-write?); {} bytes ignored",
                    cut - start
                )),
                "{n}"
            );
        }
        assert_eq!(s.messages, before.messages, "cut at {cut}");
    }

    // Continued after a cut: the torn bytes go, the new record starts a line of its own.
    std::fs::write(&path, &bytes[..start + 7]).expect("write");
    let opened = store.open(&id).expect("opens");
    assert!(opened.notice.is_some());
    // What `export` writes (the binary's own test checks its warning): the rest.
    assert!(
        opened
            .notice
            .as_deref()
            .unwrap_or_default()
            .contains("the last record was cut off"),
        "{:?}",
        opened.notice
    );
    let back: Vec<Message> = serde_json::from_str(&to_openai_json(&opened.session)).expect("json");
    assert_eq!(back, before.messages);
    drop(opened);
    let mut r = Run::resumed(&store, open_stored(&store, &id).expect("opens"));
    r.send("third");
    assert!(r.flush(WAIT));
    drop(r);
    let o = store.open(&id).expect("opens");
    assert_eq!(o.notice, None);
    assert_eq!(
        o.session.messages,
        [
            Message::user("first"),
            Message::assistant("one"),
            Message::user("third")
        ]
    );
}

#[test]
fn a_bad_record_in_the_middle_is_corruption_and_the_file_is_left_untouched() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let (id, bytes, _) = two_turns(&store);
    let text = String::from_utf8(bytes).expect("utf-8");
    let damaged = text.replacen("\"type\":\"message\"", "\"type\":\"mesage\"", 1);
    assert_ne!(damaged, text);
    let path = store.journal_path(&id);
    std::fs::write(&path, &damaged).expect("write");
    let e = store.load(&id).expect_err("corrupt");
    let msg = e.to_string();
    assert!(
        msg.contains(&path.display().to_string())
            && msg.contains("not a valid session file: line 2: unknown variant `mesage`"),
        "{msg}"
    );
    // The TUI refuses to continue it (`--session ID`, `/sessions`): nothing written.
    let e = open_stored(&store, &id).expect_err("refused");
    assert!(
        e.to_string().contains("line 2: unknown variant `mesage`"),
        "{e}"
    );
    // Nor does a new session that happens to get its id write over it.
    let mut meta = Session::new("local", Mode::Raw, "kimi", "http://h/v1");
    meta.id = id.clone();
    let mut r = Run::with(app(), Recorder::new(store.clone(), meta));
    r.send("x");
    assert!(r.flush(WAIT));
    r.engine(turn_done());
    assert!(r.a.session.is_none(), "saving stopped");
    let said = r.a.transcript.entries.iter().any(
        |e| matches!(e, Entry::Notice { text, error: true, .. } if text.contains("left untouched")),
    );
    assert!(said, "an error notice");
    assert_eq!(std::fs::read_to_string(&path).expect("r"), damaged);
    // A newer journal is refused as such.
    let newer = "{\"type\":\"header\",\"version\":9,\"whatever\":1}\n";
    std::fs::write(&path, newer).expect("write");
    assert!(matches!(
        store.load(&id),
        Err(SessionError::Newer { version: 9, .. })
    ));
}

#[test]
fn an_old_json_session_loads_lists_exports_the_same_and_continues_as_a_journal() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut old = sample("20261201-101010-0001");
    old.base_url = "http://127.0.0.1:8000/v1".into();
    let legacy = store
        .save_view(&SessionView::of(&old), true)
        .expect("old format");
    assert_eq!(legacy, store.legacy_path(&old.id));
    let legacy_bytes = std::fs::read(&legacy).expect("read");
    let opened = store.open(&old.id).expect("loads");
    assert!(!opened.journal);
    let loaded = opened.session;
    let list = store.list();
    assert_eq!(list.sessions.len(), 1);
    assert_eq!(list.sessions[0].path, legacy);

    // The same conversation as a journal (in another directory) exports the same, byte for
    // byte, in both formats.
    let elsewhere = SessionStore::new(dir.path().join("journals"));
    elsewhere.save(&loaded).expect("journal");
    let from_journal = elsewhere.load(&old.id).expect("loads");
    assert_eq!(from_journal, loaded);
    assert_eq!(to_markdown(&from_journal), to_markdown(&loaded));
    assert_eq!(to_openai_json(&from_journal), to_openai_json(&loaded));
    // Continued (as `--session ID` does for an old file): a new ID.jsonl with all of it.
    let opened = open_stored(&store, &old.id).expect("opens");
    assert!(!opened.journal);
    let mut r = Run::resumed(&store, opened);
    r.send("and tomorrow?");
    assert!(r.flush(WAIT));
    assert!(r.a.session.is_some(), "{:?}", r.a.transcript.entries.last());
    r.engine(turn_done());
    assert!(r.flush(WAIT));
    assert_eq!(
        std::fs::read(&legacy).expect("read"),
        legacy_bytes,
        "old file untouched"
    );
    let now = store.open(&old.id).expect("loads");
    assert!(now.journal);
    assert_eq!(now.session.messages.len(), loaded.messages.len() + 1);
    assert_eq!(
        now.session.messages[..loaded.messages.len()],
        loaded.messages[..]
    );
    assert_eq!(
        now.session.partial, loaded.partial,
        "interrupted answers kept"
    );
    assert_eq!(now.session.traces.len(), 2);
    let list = store.list();
    assert_eq!(list.sessions.len(), 1, "one session, not two");
    assert_eq!(list.sessions[0].path, store.journal_path(&old.id));
    assert_eq!(list.sessions[0].turns, 2);
}

#[test]
fn a_save_is_sent_to_the_writer_and_never_waited_for() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    // A resumed session: continued, so the writer opens the file.
    let saved = Session::new("local", Mode::Raw, "kimi", "http://h/v1");
    let id = saved.id.clone();
    store.save(&saved).expect("saved");
    let mut r = Run::resumed(&store, open_stored(&store, &id).expect("opens"));
    // A "disk" that does not answer: the journal is a FIFO nobody writes to, so the writer
    // blocks opening it until this test does.
    let fifo = store.journal_path(&id);
    std::fs::remove_file(&fifo).expect("rm");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("c");
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = Instant::now();
    let fx = r.send("hello");
    // The message is the agent's to append; it is recorded as it is reported.
    assert!(
        matches!(fx.as_slice(), [Effect::Agent(Op::UserTurn { .. })]),
        "{fx:?}"
    );
    // More records while the writer is stuck: each returns at once.
    for k in 0..200 {
        r.engine(EngineEvent::MessageAppended {
            index: k + 1,
            message: Box::new(Message::assistant(format!("answer {k}"))),
        });
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(
        !r.flush(Duration::from_millis(200)),
        "the writer is still stuck"
    );
    assert!(r.a.session.is_some(), "no failure yet");
    // The disk answers (with something that is not a journal): the writer reports it, said
    // with the next event.
    std::fs::write(&fifo, "not a journal\n").expect("write the fifo");
    assert!(r.flush(WAIT));
    r.engine(turn_done());
    assert!(r.a.session.is_none(), "saving stopped");
    let Some(Entry::Notice {
        text, error: true, ..
    }) = r.a.transcript.entries.last()
    else {
        panic!("an error notice")
    };
    assert!(
        text.contains("Session not saved") && text.contains("not a valid session file"),
        "{text}"
    );
}

#[test]
fn the_writer_appends_and_fsyncs_what_it_is_sent() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let s = sample("20261201-101010-0003");
    store.save(&s).expect("saved");
    let mut w = JournalWriter::spawn(&store, &s.id, Target::Continue).expect("spawn");
    assert!(!w.busy());
    w.send(vec![kimi_core::session::journal::Record::Message {
        at: s.updated_unix_ms + 5,
        index: 5,
        message: Message::user("more"),
    }]);
    assert!(w.flush(WAIT));
    assert!(!w.busy(), "a message is no partial answer");
    w.send(vec![kimi_core::session::journal::Record::Partial {
        at: s.updated_unix_ms + 5,
        partial: PartialAnswer {
            after_message: 6,
            content: "so far".into(),
            ..PartialAnswer::default()
        },
        more: false,
    }]);
    assert!(w.flush(WAIT));
    // Written: a timed save of a streaming answer may send the next copy.
    assert!(!w.busy());
    assert!(w.error().is_none());
    let back = store.load(&s.id).expect("loads");
    assert_eq!(back.messages.last(), Some(&Message::user("more")));
    assert_eq!(back.updated_unix_ms, s.updated_unix_ms + 5);
    // A new session's writer never replaces a file already there.
    let mut w = JournalWriter::spawn(
        &store,
        &s.id,
        Target::Create {
            beside_legacy: false,
        },
    )
    .expect("spawn");
    let before = std::fs::read(store.journal_path(&s.id)).expect("read");
    w.send(kimi_core::session::journal::records_of(&s));
    assert!(w.flush(WAIT));
    let e = w.error().expect("refused");
    assert!(
        e.to_string()
            .contains("already holds a different session with the same id"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(store.journal_path(&s.id)).expect("read"),
        before
    );
}

/// The journal read back holds what the app holds: messages, partial answers, and the traces
/// with the messages they belong to (a streaming request's trace is saved as it first was).
fn assert_journal_matches(r: &mut Run, store: &SessionStore, step: &str, live: Option<&str>) {
    assert!(r.flush(WAIT), "{step}");
    let a = &r.a;
    assert!(
        a.session.is_some(),
        "{step}: {:?}",
        a.transcript.entries.last()
    );
    let mut want = crate::app::export::snapshot(a).expect("snapshot");
    // The answer streaming now is the journal's partial answer.
    want.partial.extend(live.map(|text| PartialAnswer {
        after_message: a.conversation.len(),
        content: text.to_owned(),
        ..PartialAnswer::default()
    }));
    let got = store
        .load(&want.id)
        .unwrap_or_else(|e| panic!("{step}: {e}"));
    assert_eq!(got.messages, want.messages, "{step}");
    let strip = |p: &[PartialAnswer]| {
        (p.iter())
            .map(|p| (p.after_message, p.content.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&got.partial), strip(&want.partial), "{step}");
    let at = |s: &Session| s.traces.iter().map(|t| t.message_index).collect::<Vec<_>>();
    assert_eq!(at(&got), at(&want), "{step}");
    let finals = a.trace_messages.len();
    assert_eq!(got.traces[..finals], want.traces[..finals], "{step}");
}

fn round(r: &mut Run, store: &SessionStore, answer: &str, step: &str) {
    use kimi_protocol::StreamEvent;
    // Finished traces before this request: its own is added at this index.
    let trace_index = r.a.trace_messages.len();
    r.engine(EngineEvent::RoundStarted { round: 1 });
    // The agent's trace of the request (a key in it, as a careless builder might leave),
    // shared with the view.
    let trace = SharedTrace::new(Trace {
        url: "http://h/v1/completions".into(),
        request: serde_json::json!({"prompt": "p"}),
        prompt: Some("p".into()),
        headers: vec![("Authorization".into(), format!("Bearer {SECRET}"))],
        ..Trace::default()
    });
    let index = trace_index;
    let shared = trace.clone();
    r.engine(EngineEvent::TraceStarted { index, trace });
    // The timed save of the answer so far: a second after the last one.
    r.clock += Duration::from_secs(2);
    r.engine(EngineEvent::Stream(StreamEvent::Text(
        answer[..3].to_owned(),
    )));
    assert_journal_matches(r, store, &format!("{step}: streaming"), Some(&answer[..3]));
    shared.record(&StreamEvent::Chunk {
        data: answer.to_owned(),
        at_us: 5,
    });
    // The round's end as the agent reports it: its message, its trace, the end.
    let message_index = r.a.conversation.len();
    for e in [
        EngineEvent::MessageAppended {
            index: message_index,
            message: Box::new(Message::assistant(answer)),
        },
        EngineEvent::TraceFinished {
            index: trace_index,
            message_index,
        },
        EngineEvent::RoundFinished {
            round: 1,
            finish: "stop".into(),
            error: None,
            cancelled: false,
        },
    ] {
        r.engine(e);
    }
    assert_journal_matches(r, store, &format!("{step}: finished"), None);
    r.engine(turn_done());
}

fn turn_done() -> EngineEvent {
    EngineEvent::TurnDone {
        outcome: Box::default(),
    }
}

#[test]
fn the_journal_follows_system_prompts_retries_and_streaming_answers() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let mut r = Run::new(&store);
    r.send("first");
    assert_journal_matches(&mut r, &store, "sent", None);
    round(&mut r, &store, "one, at length", "round 1");
    // A system prompt put before the conversation, then replaced.
    r.send("/system Be terse.");
    assert_journal_matches(&mut r, &store, "system inserted", None);
    assert_eq!(r.a.conversation[0], Message::system("Be terse."));
    r.send("/system Be kind.");
    assert_journal_matches(&mut r, &store, "system replaced", None);
    r.send("second");
    round(&mut r, &store, "two, at length", "round 2");
    // /retry drops the last answer and its trace, and asks again.
    r.send("/retry");
    assert_journal_matches(&mut r, &store, "retried", None);
    round(&mut r, &store, "two again", "round 2 again");
    let s = store.load(&r.id()).expect("loads");
    assert_eq!(
        s.messages,
        [
            Message::system("Be kind."),
            Message::user("first"),
            Message::assistant("one, at length"),
            Message::user("second"),
            Message::assistant("two again"),
        ]
    );
    let text = std::fs::read_to_string(store.journal_path(&s.id)).expect("read");
    assert!(!text.contains(SECRET));
    assert!(text.contains("\"type\":\"truncate\"") && text.contains("\"type\":\"system\""));
}
