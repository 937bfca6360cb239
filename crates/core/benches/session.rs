//! Saving a session after a message: a 20-round chat-mode session with long answers (64 KB
//! each, streamed as 16,000 SSE events whose payloads the traces keep), tens of MB on disk (the
//! bench prints the size).
//! The way it is saved: the agent's recorder clones the new records and sends them to the
//! journal writer thread, which appends and fsyncs only them. Measured against the obvious way,
//! the whole file rewritten and fsynced on every save, which is what grows with the session.
//! Also measured: the recorder's share, cloning the records (what it does) against encoding
//! them (what it would do if it serialized them itself).
//! And listing: 200 saved sessions of 5 MB (`/sessions`, `kimi-tui sessions`), each journal
//! ending with its summary record (read: its first and last line), against the same journals
//! without it (read whole, as journals of older builds are).

// A bench: a failed unwrap in setup is a broken bench, as in tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kimi_core::session::journal::{self, Record};
use kimi_core::session::writer::{JournalWriter, Target};
use kimi_core::session::{Session, SessionStore, SessionView};
use kimi_protocol::Message;
use kimi_protocol::{Mode, Trace};

const ROUNDS: usize = 20;
const ANSWER_BYTES: usize = 64 * 1024;
const TOKEN: &str = "lore";

/// One round: the question, a long answer, and the trace of its request (the whole
/// conversation in the body, every SSE payload in `data`).
fn round(messages: &[Message], k: usize) -> (Message, Message, Trace) {
    let user = Message::user(format!("Question {k}: tell me more about it, at length."));
    let answer = Message::assistant(TOKEN.repeat(ANSWER_BYTES / TOKEN.len()));
    let mut request: Vec<&Message> = messages.iter().collect();
    request.push(&user);
    let mut t = Trace {
        mode: Mode::Chat,
        url: "http://127.0.0.1:8000/v1/chat/completions".into(),
        headers: vec![("Authorization".into(), "Bearer sk-bench-secret".into())],
        request: serde_json::json!({"model": "kimi-k2", "stream": true, "messages": request}),
        started_unix_ms: 1_796_040_062_345,
        status: Some(200),
        ..Trace::default()
    };
    for i in 0..ANSWER_BYTES / TOKEN.len() {
        let payload = format!(
            r#"{{"id":"chatcmpl-{k}","object":"chat.completion.chunk","created":1796040062,"model":"kimi-k2","choices":[{{"index":0,"delta":{{"content":"{TOKEN}"}}}}]}}"#
        );
        t.push_chunk(&payload, i as u64 * 12_000);
    }
    (user, answer, t)
}

/// A session of `ROUNDS` rounds.
pub fn session() -> Session {
    let mut s = Session::new("bench", Mode::Chat, "kimi-k2", "http://127.0.0.1:8000/v1");
    for k in 0..ROUNDS {
        let (user, answer, trace) = round(&s.messages, k);
        s.messages.push(user);
        s.messages.push(answer);
        let i = s.messages.len() - 1;
        s.push_trace(i, trace);
    }
    s
}

fn bench(c: &mut Criterion) {
    let s = session();
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let path = store.save(&s).expect("saved");
    let size = std::fs::metadata(&path).expect("meta").len();
    eprintln!("20-round session file: {:.1} MB", size as f64 / 1e6);
    let mut g = c.benchmark_group("session_save_per_message");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    // The yardstick: every save rewrites and fsyncs the whole file.
    g.bench_function("full_rewrite_20_rounds", |b| {
        b.iter(|| {
            let view = SessionView::of(black_box(&s));
            store.save_view(&view, false).expect("saved")
        })
    });
    // What the app does: one answer appended to the 20-round journal, written and fsynced by
    // the writer.
    let journal_path = store.save(&s).expect("journal");
    let size = std::fs::metadata(&journal_path).expect("meta").len();
    eprintln!("20-round journal: {:.1} MB", size as f64 / 1e6);
    let mut w = JournalWriter::spawn(&store, &s.id, Target::Continue).expect("writer");
    let answer = s.messages[s.messages.len() - 1].clone();
    let trace = s.traces[s.traces.len() - 1].trace.clone();
    let mut index = s.messages.len();
    let mut tindex = s.traces.len();
    g.bench_function("journal_append_answer", |b| {
        b.iter(|| {
            w.send(vec![Record::Message {
                at: 1,
                index,
                message: answer.clone(),
            }]);
            index += 1;
            assert!(w.flush(Duration::from_secs(30)));
        })
    });
    // A whole round's end: the answer and its request's trace (2.6 MB of SSE payloads).
    g.bench_function("journal_append_answer_and_trace", |b| {
        b.iter(|| {
            w.send(vec![
                Record::Message {
                    at: 1,
                    index,
                    message: answer.clone(),
                },
                Record::Trace {
                    at: 1,
                    index: tindex,
                    message_index: index,
                    trace: Box::new(trace.clone()).into(),
                },
            ]);
            index += 1;
            tindex += 1;
            assert!(w.flush(Duration::from_secs(30)));
        })
    });
    assert!(w.error().is_none());
    g.finish();

    // The UI's share of a round's save: clone the records for the writer (what it does)...
    let mut g = c.benchmark_group("session_save_ui_share");
    g.bench_function("clone_answer_and_trace", |b| {
        b.iter(|| {
            black_box(vec![
                Record::Message {
                    at: 1,
                    index: 40,
                    message: black_box(&answer).clone(),
                },
                Record::Trace {
                    at: 1,
                    index: 20,
                    message_index: 40,
                    trace: Box::new(black_box(&trace).clone()).into(),
                },
            ])
        })
    });
    // ...or encode them itself.
    g.bench_function("encode_answer_and_trace", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            out.clear();
            let mut m = Record::Message {
                at: 1,
                index: 40,
                message: answer.clone(),
            };
            let mut t = Record::Trace {
                at: 1,
                index: 20,
                message_index: 40,
                trace: Box::new(trace.clone()).into(),
            };
            journal::encode(&mut m, &mut out).expect("encode");
            journal::encode(&mut t, &mut out).expect("encode");
            black_box(out.len())
        })
    });
    g.finish();
}

/// A session of about 5 MB: three long answers with their traces.
fn five_mb() -> Session {
    let mut s = Session::new("bench", Mode::Raw, "kimi-k2", "http://127.0.0.1:8000/v1");
    let chunk = "lorem ipsum dolor sit amet, ".repeat(36);
    for round in 0..3 {
        s.messages.push(Message::user(format!("question {round}")));
        let mut t = Trace::default();
        for k in 0..1700 {
            t.push_chunk(&chunk, k);
        }
        s.push_trace(s.messages.len(), t);
        s.messages.push(Message::assistant("a long answer"));
    }
    s
}

/// 200 sessions of 5 MB: one journal hard-linked under 200 names (each listed as a file of its
/// own), with or without the summary record at its end.
fn store_of_200(summary: bool) -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let s = five_mb();
    let path = store.save(&s).expect("saved");
    if !summary {
        let text = std::fs::read_to_string(&path).expect("read");
        let body = text.trim_end_matches('\n');
        std::fs::write(&path, &body[..body.rfind('\n').expect("lines") + 1]).expect("write");
    }
    for i in 1..200 {
        let id = format!("20261201-000000-{i:04}");
        std::fs::hard_link(&path, store.journal_path(&id)).expect("link");
    }
    (dir, store)
}

fn list(c: &mut Criterion) {
    let mut g = c.benchmark_group("list 200 sessions of 5 MB");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for summary in [true, false] {
        let (_dir, store) = store_of_200(summary);
        assert_eq!(store.list().sessions.len(), 200);
        let name = if summary {
            "header and summary read"
        } else {
            "read whole (older journals)"
        };
        g.bench_function(name, |b| b.iter(|| black_box(store.list().sessions.len())));
    }
    g.finish();
}

criterion_group!(benches, bench, list);
criterion_main!(benches);
