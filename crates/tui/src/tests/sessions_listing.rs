//! `/sessions` with many long sessions: the store is listed off the event loop and the app
//! keeps drawing meanwhile. 200 saved sessions of 5 MB each (one journal, hard-linked under
//! 200 names: each is listed as its own file), plus a few journals of older builds without
//! the summary record (read whole); frames are drawn every 16 ms while the listing runs on
//! another thread, as the event loop does, and each frame's `update` + draw is timed.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::app::event::{AppEvent, Effect};
use kimi_core::session::{Session, SessionStore};
use kimi_protocol::{Message, Mode, Trace};

use super::app_sessions::app;
use super::recorded::key;

/// A session of about 5 MB: three long answers, each with its request's trace.
fn long_session(id: &str) -> Session {
    let mut s = Session::new("local", Mode::Raw, "m", "http://h/v1");
    s.id = id.into();
    let chunk = "lorem ipsum dolor sit amet, ".repeat(36);
    for round in 0..3 {
        s.messages
            .push(Message::user(format!("question {round} of {id}")));
        let mut t = Trace::default();
        for k in 0..1700 {
            t.push_chunk(&chunk, k);
        }
        s.push_trace(s.messages.len(), t);
        s.messages.push(Message::assistant("a long answer"));
    }
    s
}

#[test]
fn listing_200_sessions_of_5_mb_never_holds_up_a_frame() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path());
    let first = long_session("20261201-000000-0000");
    let path = store.save(&first).expect("saved");
    let bytes = std::fs::metadata(&path).expect("meta").len();
    assert!(bytes > 5_000_000, "{bytes} bytes");
    for i in 1..200 {
        let id = format!("20261201-000000-{i:04}");
        std::fs::hard_link(&path, store.journal_path(&id)).expect("link");
    }
    // With the summary at their end, a listing reads each file's first and last line.
    let started = Instant::now();
    let summarized = store.list();
    let quick = started.elapsed();
    assert_eq!(summarized.sessions.len(), 200);
    // Older journals (no summary at the end): read whole.
    let text = std::fs::read_to_string(&path).expect("read");
    let body = text.trim_end_matches('\n');
    let without_summary = &body[..body.rfind('\n').expect("lines") + 1];
    for i in 0..5 {
        let id = format!("20261130-000000-{i:04}");
        std::fs::write(store.journal_path(&id), without_summary).expect("write");
    }

    // The listing alone, and what one journal read whole costs.
    let started = Instant::now();
    let list = store.list();
    let listing = started.elapsed();
    let started = Instant::now();
    SessionStore::load_path(&store.journal_path("20261130-000000-0000")).expect("loads");
    let whole = started.elapsed();
    assert_eq!(list.sessions.len(), 205, "{:?}", list.problems);
    assert!(list.problems.is_empty(), "{:?}", list.problems);
    assert!(
        list.sessions
            .iter()
            .all(|s| s.turns == 3 && s.bytes > 5_000_000)
    );

    // `/sessions` in the app: the listing runs on another thread, frames go on.
    let mut a = app();
    a.session = None;
    let fx = super::update(&mut a, key(crossterm::event::KeyCode::Char('/')));
    assert!(fx.is_empty());
    for c in "sessions".chars() {
        super::update(&mut a, key(crossterm::event::KeyCode::Char(c)));
    }
    let fx = super::update(&mut a, key(crossterm::event::KeyCode::Enter));
    assert_eq!(fx, vec![Effect::ListSessions]);
    let (tx, rx) = mpsc::channel();
    let background = store.clone();
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(background.list());
    });
    let mut frames = Vec::new();
    let list = loop {
        let frame = Instant::now();
        super::update_after(&mut a, Duration::from_millis(16), AppEvent::Tick);
        super::drawn(&mut a, 100, 40);
        frames.push(frame.elapsed());
        match rx.recv_timeout(Duration::from_millis(16)) {
            Ok(list) => break list,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("the listing thread: {e}"),
        }
    };
    let background_listing = started.elapsed();
    super::update(&mut a, AppEvent::SessionsListed(Box::new(list)));
    assert_eq!(a.layers.picker.as_ref().map(|p| p.items.len()), Some(205));
    frames.sort();
    let longest = *frames.last().expect("a frame");
    let median = frames[frames.len() / 2];
    eprintln!(
        "listing 200 x {bytes} B: {quick:?}; with 5 more without summary: {listing:?} alone, \
         {background_listing:?} in the background ({whole:?} to read one whole); {} frames \
         meanwhile, median {median:?}, longest {longest:?}",
        frames.len()
    );
    // Frames kept coming while the listing ran, none of them waiting for it.
    assert!(
        frames.len() >= 2,
        "{} frames in {background_listing:?}",
        frames.len()
    );
    assert!(
        longest < Duration::from_millis(250) && longest * 2 < background_listing,
        "longest frame {longest:?}, listing {background_listing:?}"
    );
}
