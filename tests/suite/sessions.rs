//! Session files end to end: a real request's trace saved without its key, and
//! `kimi-tui sessions` / `kimi-tui export` through the real binary with the data directory in a
//! temp dir.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kimi_protocol::{Mode, Trace};

use kimi_client::{Backend, Endpoint};
use kimi_core::session::{Session, SessionStore, SessionView};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, ToolCall};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_saved_session_never_holds_the_api_key() {
    const SECRET: &str = "sk-session-secret-0815";
    let server = MockServer::start(
        MockOptions {
            api_key: Some(SECRET.into()),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path().join("sessions"));
    for mode in [Mode::Raw, Mode::Chat] {
        let mut ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
        ep.api_key = Some(SECRET.into());
        let backend = Backend::new(ep.clone()).expect("backend");
        let mut session = Session::for_endpoint("test", &ep);
        session.messages.push(Message::user("Say hi"));
        // The trace built as the engine builds it, from the stream's events.
        let mut trace = Trace::default();
        let (events, result) = backend
            .stream_turn(&session.messages, &[], &CancellationToken::new())
            .events_and_result()
            .await;
        for e in &events {
            trace.record(e);
        }
        assert!(result.error.is_none(), "{:?}", result.error);
        session.messages.push(result.assistant_message());
        session.push_trace(1, trace);
        session.touch();
        let path = store.save(&session).expect("saved");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains(SECRET), "{mode:?}: the key leaked");
        assert!(text.contains("Bearer [redacted]"), "{mode:?}");
        // The trace is really there: the request and the streamed chunks.
        let loaded = store.load(&session.id).expect("loads");
        assert_eq!(loaded, session);
        let trace = &loaded.traces[0].trace;
        assert_eq!(trace.status, Some(200));
        assert!(!trace.chunks.is_empty());
        assert!(trace.request.get("model").is_some());
    }
    server.shutdown().await;
}

fn bin(data_home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.env("XDG_DATA_HOME", data_home).current_dir(data_home);
    cmd
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The store the binary uses under `XDG_DATA_HOME=data_home`.
fn store_in(data_home: &Path) -> SessionStore {
    SessionStore::new(data_home.join("kimi-tui/sessions"))
}

fn session(id: &str, updated: u64, profile: &str, question: &str) -> Session {
    let mut s = Session::new(profile, Mode::Chat, "kimi-k2", "http://h/v1");
    s.id = id.to_owned();
    s.created_unix_ms = updated - 60_000;
    s.updated_unix_ms = updated;
    s.messages = vec![
        Message::system("Be brief."),
        Message::user(question),
        Message::assistant_with_calls(
            "",
            vec![ToolCall::new(
                "functions.get_weather:0",
                "get_weather",
                "{\"city\": \"Beijing\"}",
            )],
        ),
        Message::tool_result("functions.get_weather:0", "get_weather", "Sunny"),
        Message::assistant("Sunny."),
        Message::user("Thanks"),
    ];
    s
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("runs")
}

#[test]
fn sessions_says_where_they_go_when_there_are_none() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = run(bin(dir.path()).arg("sessions"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        format!(
            "no sessions yet (they are saved in {})\n",
            dir.path().join("kimi-tui/sessions").display()
        )
    );
}

/// Two sessions (2026-11-30 12:01 and 2026-12-01 08:30 UTC) and an unreadable file.
fn populated() -> (tempfile::TempDir, Session, Session) {
    let dir = tempfile::tempdir().expect("tmp");
    let store = store_in(dir.path());
    let older = session(
        "20261130-120002-aaaa",
        1_796_040_062_345,
        "local",
        "What's the weather in Beijing?\nAnd tomorrow?",
    );
    let newer = session(
        "20261201-082900-bbbb",
        1_796_113_800_000,
        "moonshot",
        "A question that is quite a bit longer than sixty characters, so it is cut",
    );
    store.save(&older).expect("save");
    store.save(&newer).expect("save");
    std::fs::write(
        store.dir.join("20261129-000000-dead.json"),
        "{\"version\": 1,",
    )
    .expect("w");
    (dir, older, newer)
}

#[test]
fn sessions_lists_newest_first_in_a_table() {
    let (dir, _, _) = populated();
    let o = run(bin(dir.path()).arg("sessions"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("UPDATED (UTC)"), "{out}");
    assert_eq!(
        lines[1],
        "2026-12-01 08:30  20261201-082900-bbbb  moonshot      2  A question that is quite a bit longer than sixty characters…"
    );
    assert_eq!(
        lines[2],
        "2026-11-30 12:01  20261130-120002-aaaa  local         2  What's the weather in Beijing? And tomorrow?"
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("20261129-000000-dead.json") && err.contains("line 1"),
        "the unreadable file is named: {err}"
    );
}

#[test]
fn export_by_id_latest_and_path_in_both_formats() {
    let (dir, older, newer) = populated();
    let md = run(bin(dir.path()).args(["export", &older.id]));
    assert!(md.status.success(), "{}", text(&md.stderr));
    let md = text(&md.stdout);
    assert!(
        md.starts_with("# Kimi session 2026-11-30 12:00 UTC: local, kimi-k2\n"),
        "{md}"
    );
    for needle in [
        "### System\n\nBe brief.\n",
        "### User\n\nWhat's the weather in Beijing?\nAnd tomorrow?\n",
        "Tool call `get_weather` (`functions.get_weather:0`):\n\n```json\n{\n  \"city\": \"Beijing\"\n}\n```\n",
        "### Tool result: get_weather (functions.get_weather:0)\n\n```\nSunny\n```\n",
    ] {
        assert!(md.contains(needle), "{needle:?} in\n{md}");
    }

    let json = run(bin(dir.path()).args(["export", "latest", "--format", "json"]));
    assert!(json.status.success(), "{}", text(&json.stderr));
    let back: Vec<Message> = serde_json::from_slice(&json.stdout).expect("a JSON array");
    assert_eq!(back, newer.messages);

    let path = store_in(dir.path()).path_of(&older.id);
    let by_path = run(bin(dir.path()).args(["export", &path.display().to_string()]));
    assert!(by_path.status.success(), "{}", text(&by_path.stderr));
    assert_eq!(text(&by_path.stdout), md);

    // --output: the format follows the extension unless given.
    let o = run(bin(dir.path()).args(["export", &older.id, "--output", "out/chat.json"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/chat.json")).expect("r"),
    )
    .expect("json");
    assert_eq!(written[3]["role"], "tool");
    let o = run(bin(dir.path()).args(["export", &older.id, "-o", "chat.md"]));
    assert!(o.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("chat.md")).expect("r"),
        md
    );
}

#[test]
fn export_errors_name_what_is_wrong_and_touch_nothing() {
    let (dir, older, _) = populated();
    let o = run(bin(dir.path()).args(["export", "20260101-000000-ffff"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("no session `20260101-000000-ffff`"),
        "{}",
        text(&o.stderr)
    );

    let o = run(bin(dir.path()).args(["export", "20261129-000000-dead"]));
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("20261129-000000-dead.json: not a valid session file")
            && err.contains("line 1"),
        "{err}"
    );

    let path: PathBuf = store_in(dir.path()).path_of(&older.id);
    let newer_format = r#"{"version": 2, "id": "x"}"#;
    std::fs::write(&path, newer_format).expect("write");
    let o = run(bin(dir.path()).args(["export", &older.id]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("written by a newer kimi-tui (version 2); left untouched"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&path).expect("r"), newer_format);

    let empty = tempfile::tempdir().expect("tmp");
    let o = run(bin(empty.path()).args(["export", "latest"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no sessions yet"));
}

#[test]
fn the_dir_flag_overrides_the_data_dir() {
    let (dir, older, _) = populated();
    let elsewhere = tempfile::tempdir().expect("tmp");
    let sessions = store_in(dir.path()).dir.display().to_string();
    let o = run(bin(elsewhere.path()).args(["sessions", "--dir", &sessions]));
    assert!(text(&o.stdout).contains(&older.id), "{}", text(&o.stdout));
    let o = run(bin(elsewhere.path()).args(["export", &older.id, "--dir", &sessions]));
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn a_dir_that_is_not_a_directory_is_an_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("w");
    let missing = dir.path().join("missing");
    for (args, why) in [
        (vec!["sessions", "--dir"], "not a directory"),
        (vec!["export", "latest", "--dir"], "not a directory"),
    ] {
        let o = run(bin(dir.path()).args(&args).arg(&file));
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&o.stderr),
            format!("kimi-tui: error: --dir {}: {why}\n", file.display())
        );
        assert!(o.stdout.is_empty());
    }
    // A directory that cannot be read, given or the default one.
    let locked = dir.path().join("kimi-tui/sessions");
    std::fs::create_dir_all(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::read_dir(&locked).is_err() {
        // (root reads anything: this part only means something for other users)
        let o = run(bin(dir.path()).args(["sessions"]));
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            text(&o.stderr),
            format!("kimi-tui: error: {}: Permission denied\n", locked.display())
        );
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let o = run(bin(dir.path()).args(["sessions", "--dir"]).arg(&missing));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "kimi-tui: error: --dir {}: No such file or directory\n",
            missing.display()
        )
    );
}

#[test]
fn trace_offsets_out_of_range_or_inside_a_character_make_a_corrupt_session() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = store_in(dir.path());
    let mut s = session("20261201-000000-0bad", 1_796_113_800_000, "local", "hi");
    let mut t = Trace::default();
    t.push_chunk("北京", 10);
    s.push_trace(4, t);
    let path = store.save(&s).expect("save");
    for (bad, field) in [("\"end\":6", "\"end\":99"), ("\"end\":6", "\"end\":4")] {
        let good = std::fs::read_to_string(&path).expect("r");
        let damaged = good.replace(bad, field);
        assert_ne!(good, damaged);
        std::fs::write(&path, &damaged).expect("w");
        let o = run(bin(dir.path()).args(["export", &s.id]));
        assert_eq!(o.status.code(), Some(1), "{field}");
        let err = text(&o.stderr);
        assert!(
            err.contains("not a valid session file: traces[0].trace.chunks[0].end"),
            "{err}"
        );
        // The TUI refuses it before taking the terminal, and leaves it as it is.
        let o = run(bin(dir.path()).args(["--demo", "--session", &s.id]));
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o.stderr).contains("traces[0].trace.chunks[0].end"),
            "{}",
            text(&o.stderr)
        );
        assert_eq!(std::fs::read_to_string(&path).expect("r"), damaged);
        std::fs::write(&path, good).expect("w");
    }
}

/// A session whose answer tries to drive the terminal.
fn hostile() -> Session {
    let mut s = session("20261201-000000-0e5c", 1_796_113_800_000, "local", "hi");
    s.messages.push(Message::assistant(
        "A\u{1b}]0;pwned\u{7}B\u{1b}]52;c;ZWNobyBoaQ==\u{7}C\u{1b}[2JD\u{9b}31mE\u{202e}F\u{2066}G\u{200b}H",
    ));
    s
}

#[test]
fn json_export_escapes_controls_and_invisible_characters() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = hostile();
    store_in(dir.path()).save(&s).expect("save");
    let o = run(bin(dir.path()).args(["export", &s.id, "--format", "json"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for esc in [
        "\\u001b]0;pwned",
        "\\u009b31m",
        "\\u202e",
        "\\u2066",
        "\\u200b",
    ] {
        assert!(out.contains(esc), "{esc} in {out}");
    }
    assert!(
        !out.chars()
            .any(|c| (c.is_control() && c != '\n')
                || matches!(c, '\u{202e}' | '\u{2066}' | '\u{200b}')),
        "{out:?}"
    );
    let back: Vec<Message> = serde_json::from_str(&out).expect("JSON");
    assert_eq!(back, s.messages);
}

#[test]
fn export_to_a_terminal_is_sanitized_and_to_a_pipe_is_exact() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = hostile();
    store_in(dir.path()).save(&s).expect("save");
    // `script` gives the command a real pty as its stdout.
    let o = Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "{} export {} --format md",
            env!("CARGO_BIN_EXE_kimi-tui"),
            s.id
        ))
        .arg("/dev/null")
        .env("XDG_DATA_HOME", dir.path())
        .current_dir(dir.path())
        .output()
        .expect("script runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // The escape sequences go whole; the text around them stays.
    assert!(
        out.contains("ABC") && out.contains("EFG"),
        "the text, without the controls: {out:?}"
    );
    assert!(
        !out.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\r')
                || matches!(c, '\u{202e}' | '\u{2066}')),
        "{out:?}"
    );
    // To a pipe (a file, another program) the Markdown is exactly what was said.
    let o = run(bin(dir.path()).args(["export", &s.id, "--format", "md"]));
    assert!(text(&o.stdout).contains("A\u{1b}]0;pwned\u{7}B"));
}

/// `export` of a journal whose last record was cut off says so on stderr and exports the rest;
/// an old `ID.json` and the same conversation as a journal export the same bytes.
#[test]
fn export_reads_cut_off_journals_and_old_files_alike() {
    let dir = tempfile::tempdir().expect("tmp");
    let store = store_in(dir.path());
    let s = session("20261201-101010-0c07", 1_764_583_810_000, "local", "Cut?");
    store.save(&s).expect("journal");
    let path = store.journal_path(&s.id);
    let bytes = std::fs::read(&path).expect("read");
    // Half of the last record: a torn write.
    let last = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .expect("lines")
        + 1;
    std::fs::write(&path, &bytes[..last + (bytes.len() - last) / 2]).expect("cut");
    let o = run(bin(dir.path()).args(["export", &s.id, "--format", "json"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("kimi-tui: warning: ") && err.contains("the last record was cut off"),
        "{err}"
    );
    let back: Vec<Message> = serde_json::from_slice(&o.stdout).expect("json");
    let kept = store.load(&s.id).expect("loads what is whole");
    assert_eq!(back, kept.messages);
    assert!(!back.is_empty() && back.len() <= s.messages.len());

    let old_home = tempfile::tempdir().expect("tmp");
    let old_store = store_in(old_home.path());
    let legacy = old_store
        .save_view(&SessionView::of(&s), true)
        .expect("old format");
    assert_eq!(legacy, old_store.legacy_path(&s.id));
    let new_home = tempfile::tempdir().expect("tmp");
    store_in(new_home.path()).save(&s).expect("journal");
    for fmt in ["md", "json"] {
        let from_old = run(bin(old_home.path()).args(["export", &s.id, "--format", fmt]));
        let from_journal = run(bin(new_home.path()).args(["export", &s.id, "--format", fmt]));
        assert!(from_old.status.success(), "{}", text(&from_old.stderr));
        assert!(from_old.stdout.len() > 100, "{fmt}");
        assert_eq!(from_old.stdout, from_journal.stdout, "{fmt}");
    }
}
