//! The prompt history across runs: the file (0600 in a 0700 directory, JSON Lines so that
//! multi-line prompts round-trip, capped and compacted, the previous entry not repeated, the API
//! key never written), Up/Down over an earlier run's prompts, and `Ctrl-R`'s reverse search.

use std::os::unix::fs::PermissionsExt;

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::history_file::{self, CAP, HistoryFile, SLACK};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::app_update::{app, ctrl, draft, key, screen, typed};

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
}

#[test]
fn the_file_is_private_round_trips_multi_line_prompts_and_never_holds_the_key() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("data/kimi-tui/history.jsonl");
    let (file, entries, problem) = HistoryFile::open(
        path.clone(),
        kimi_core::redactor::Redactor::new([
            "sk-history-secret-42".to_owned(),
            "sk-other-profile-7".to_owned(),
        ]),
    );
    assert!(entries.is_empty() && problem.is_none());
    file.record("first line\nsecond line\twith a tab \u{1b}[31m");
    file.record("the same twice");
    file.record("the same twice");
    file.record("my key is sk-history-secret-42, keep it");
    file.record("   ");
    file.record(&"a pasted log line\n".repeat(history_file::ENTRY_MAX / 18 + 1));
    file.record("last");
    assert!(!file.allows("x sk-history-secret-42"));
    // Every profile's key, not only the one in use.
    file.record("the other: sk-other-profile-7");
    assert!(!file.allows("sk-other-profile-7"));
    file.close();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().expect("dir")), 0o700);
    let raw = std::fs::read_to_string(&path).expect("read");
    assert!(!raw.contains("sk-history-secret-42"), "{raw}");
    assert!(!raw.contains("sk-other-profile-7"), "{raw}");
    assert!(!raw.contains('\u{1b}'), "escaped in the file: {raw}");
    assert_eq!(raw.lines().count(), 3, "one line per entry: {raw}");
    assert_eq!(
        history_file::load(&path).expect("load"),
        [
            "first line\nsecond line\twith a tab \u{1b}[31m",
            "the same twice",
            "last"
        ]
    );
    // The next run: the previous entry is not added again, a cut-off last line is skipped.
    let (file, entries, _) = HistoryFile::open(path.clone(), Default::default());
    assert_eq!(entries.len(), 3);
    file.record("last");
    file.close();
    assert_eq!(history_file::load(&path).expect("load").len(), 3);
    let mut raw = std::fs::read(&path).expect("read");
    raw.extend_from_slice(b"\"cut off by a cra");
    std::fs::write(&path, raw).expect("write");
    let (file, entries, problem) = HistoryFile::open(path.clone(), Default::default());
    assert!(problem.is_none());
    assert_eq!(entries.last().map(String::as_str), Some("last"));
    file.record("after the crash");
    file.close();
    assert_eq!(
        history_file::load(&path)
            .expect("load")
            .last()
            .map(String::as_str),
        Some("after the crash")
    );
}

#[test]
fn the_file_is_capped_oldest_first_out_and_compacted() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("history.jsonl");
    let (file, _, _) = HistoryFile::open(path.clone(), Default::default());
    let n = CAP + SLACK + 7;
    for i in 0..n {
        file.record(&format!("prompt {i}"));
    }
    file.close();
    let lines = std::fs::read_to_string(&path)
        .expect("read")
        .lines()
        .count();
    assert!(lines <= CAP + SLACK, "compacted: {lines} lines");
    let entries = history_file::load(&path).expect("load");
    assert_eq!(entries.len(), CAP);
    assert_eq!(entries[0], format!("prompt {}", n - CAP));
    assert_eq!(entries[CAP - 1], format!("prompt {}", n - 1));
    assert_eq!(mode(&path), 0o600, "the rewritten file is private too");
}

#[test]
fn up_and_down_walk_an_earlier_runs_history_and_sent_prompts_go_to_the_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("history.jsonl");
    std::fs::write(
        &path,
        "\"from yesterday\"\n\"two lines\\nof it\"\n\"from this morning\"\n",
    )
    .expect("write");
    let (file, entries, _) = HistoryFile::open(path.clone(), Default::default());
    let mut a = app();
    a.composer.history = entries;
    a.composer.history_file = Some(file);
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "from this morning");
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "two lines\nof it");
    // The cursor is on the last line of a multi-line entry: Up moves in it first.
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "two lines\nof it");
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "from yesterday");
    key(&mut a, KeyCode::Down);
    assert_eq!(draft(&a), "two lines\nof it");
    // A prompt sent now goes to the file (through the writer, as an effect).
    let mut a = app();
    let (file, entries, _) = HistoryFile::open(path.clone(), Default::default());
    a.composer.history = entries;
    a.composer.history_file = Some(file);
    typed(&mut a, "a new prompt");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(
        fx.contains(&Effect::History("a new prompt".into())),
        "{fx:?}"
    );
    assert_eq!(
        a.composer.history.last().map(String::as_str),
        Some("a new prompt")
    );
    // A draft cleared with Ctrl-C still comes back with Up (this run only: not written).
    a.busy = false;
    typed(&mut a, "a draft");
    let fx = ctrl(&mut a, 'c');
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::History(_))),
        "{fx:?}"
    );
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "a draft");
    // Without a history file nothing is written.
    let mut b = app();
    typed(&mut b, "kept in memory");
    let fx = key(&mut b, KeyCode::Enter);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::History(_))),
        "{fx:?}"
    );
}

#[test]
fn ctrl_r_searches_back_narrows_goes_older_and_enter_or_esc_end_it() {
    let mut a = app();
    a.composer.history = vec![
        "cargo build".into(),
        "git status".into(),
        "cargo test --locked".into(),
        "echo hi".into(),
    ];
    typed(&mut a, "my draft");
    ctrl(&mut a, 'r');
    assert!(a.layers.history_search.is_some());
    let s = screen(&mut a, 80, 12);
    assert!(s.contains("(reverse-i-search)`'"), "{s}");
    typed(&mut a, "car");
    assert_eq!(draft(&a), "cargo test --locked", "the newest match");
    typed(&mut a, "go b");
    assert_eq!(draft(&a), "cargo build", "typing narrows");
    let s = screen(&mut a, 80, 12);
    assert!(s.contains("(reverse-i-search)`cargo b'"), "{s}");
    // Backspace widens from the newest again; Ctrl-R goes older.
    key(&mut a, KeyCode::Backspace);
    key(&mut a, KeyCode::Backspace);
    assert_eq!(draft(&a), "cargo test --locked");
    ctrl(&mut a, 'r');
    assert_eq!(draft(&a), "cargo build");
    ctrl(&mut a, 'r');
    assert_eq!(draft(&a), "cargo build", "no older match: stays");
    let s = screen(&mut a, 80, 12);
    assert!(s.contains("(failed reverse-i-search)`cargo'"), "{s}");
    // Esc puts the draft back.
    key(&mut a, KeyCode::Esc);
    assert!(a.layers.history_search.is_none());
    assert_eq!(draft(&a), "my draft");
    // Enter keeps the match in the input, to edit: nothing is sent.
    ctrl(&mut a, 'r');
    typed(&mut a, "status");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(draft(&a), "git status");
    assert!(a.layers.history_search.is_none());
    assert!(!screen(&mut a, 80, 12).contains("reverse-i-search"));
    // Ctrl-C while searching ends the search, draft back; it does not quit.
    ctrl(&mut a, 'r');
    typed(&mut a, "echo");
    assert_eq!(draft(&a), "echo hi");
    let fx = update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Char('c'),
            KeyModifiers::CONTROL,
        ))),
    );
    assert!(!fx.contains(&Effect::Quit));
    assert_eq!(draft(&a), "git status");
}

#[test]
fn a_huge_file_is_read_from_its_end_within_the_caps() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("history.jsonl");
    let mut f = std::fs::File::create(&path).expect("create");
    // Old entries beyond what is read, then a line longer than any entry could be (valid
    // JSON: only its length rules it out), then the newest entries.
    let filler = format!("{}\n", serde_json::json!("x".repeat(1000)));
    for _ in 0..(history_file::READ_MAX as usize / filler.len() + 10) {
        f.write_all(filler.as_bytes()).expect("w");
    }
    let huge = serde_json::json!("y".repeat(8 * history_file::ENTRY_MAX)).to_string();
    writeln!(f, "{huge}").expect("w");
    for i in 0..CAP + 50 {
        writeln!(f, "{}", serde_json::json!(format!("prompt {i}"))).expect("w");
    }
    drop(f);
    assert!(std::fs::metadata(&path).expect("meta").len() > history_file::READ_MAX);
    let entries = history_file::load(&path).expect("load");
    assert_eq!(entries.len(), CAP);
    assert_eq!(entries[0], "prompt 50");
    assert_eq!(entries[CAP - 1], format!("prompt {}", CAP + 49));
    // Only the newest part was read: with fewer newest entries, what precedes them in the
    // last READ_MAX bytes comes next (the filler), never the oversized line.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    let len = std::fs::metadata(&path).expect("meta").len();
    f.set_len(len - 1000 * 11).expect("cut");
    drop(f);
    let entries = history_file::load(&path).expect("load");
    assert_eq!(entries.len(), CAP);
    assert!(entries.iter().all(|e| e.len() <= history_file::ENTRY_MAX));
}

#[test]
fn an_endless_history_file_is_read_no_further_than_the_cap() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("history.jsonl");
    // A device with no end and no newline: the old reader never returned.
    std::os::unix::fs::symlink("/dev/zero", &path).expect("symlink");
    assert!(history_file::load(&path).expect("load").is_empty());
}

#[test]
fn a_history_file_planted_as_a_symbolic_link_is_never_written_through() {
    let dir = tempfile::tempdir().expect("tmp");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me\n").expect("write");
    let path = dir.path().join("history.jsonl");
    std::os::unix::fs::symlink(&victim, &path).expect("symlink");
    let (file, _, _) = HistoryFile::open(path.clone(), Default::default());
    file.record("a prompt");
    file.close();
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep me\n");
}
