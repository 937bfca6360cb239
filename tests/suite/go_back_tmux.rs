//! Going back, prompt history and `/sessions` end to end: the real binary with
//! `--demo` inside tmux, its data directory in a temp home, the files read back after it quit.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use kimi_core::session::SessionStore;
use kimi_test_support::tmux::Tmux;

fn demo(name: &str, home: &Path) -> Tmux {
    let t = Tmux::start_sized(
        name,
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home,
        (110, 32),
    );
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t
}

/// Send `text` and wait for the demo's answer to it.
fn ask(t: &Tmux, text: &str) {
    t.send_line(text);
    t.wait_for_within(
        &[&format!("You asked: \"{text}\""), "│ idle │"],
        Duration::from_secs(30),
        "the answer",
    );
}

fn store(home: &Path) -> SessionStore {
    SessionStore::new(home.join("data/kimi-tui/sessions"))
}

fn user_messages(s: &kimi_core::session::Session) -> Vec<String> {
    s.messages
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.text())
        .collect()
}

#[test]
fn esc_esc_edits_an_earlier_message_resends_it_and_the_file_keeps_the_cut_part() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("go-back", home.path());
    ask(&t, "alpha question");
    ask(&t, "beta question");
    t.keys(&["Escape"]);
    t.wait_for(&["Esc again: edit an earlier message"], "armed");
    t.keys(&["Escape"]);
    let screen = t.wait_for(&["Edit an earlier message"], "the picker");
    let beta = screen.find("› ").map(|i| &screen[i..]).unwrap_or_default();
    assert!(
        beta.starts_with("›   2  beta question"),
        "newest first:\n{screen}"
    );
    t.keys(&["Down"]);
    t.wait_for(&["›   1  alpha question"], "the older message selected");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["Went back"], "the cut");
    assert!(
        !screen.contains("beta question"),
        "the cut cells are gone:\n{screen}"
    );
    assert!(!screen.contains("You asked"), "{screen}");
    // The message is in the input: edited and sent.
    t.literal(", edited");
    t.keys(&["Enter"]);
    t.wait_for_within(
        &["You asked: \"alpha question, edited\"", "│ idle │"],
        Duration::from_secs(30),
        "the edited message answered",
    );
    t.quit();
    let store = store(home.path());
    let list = store.list();
    assert_eq!(list.sessions.len(), 1, "{list:?}");
    let path = &list.sessions[0].path;
    let file = std::fs::read_to_string(path).expect("the journal");
    assert!(
        file.contains("beta question"),
        "the cut part stays:\n{file}"
    );
    assert!(file.contains(r#""type":"truncate""#), "{file}");
    let session = store.load(&list.sessions[0].id).expect("loads");
    assert_eq!(user_messages(&session), ["alpha question, edited"]);
    assert_eq!(list.sessions[0].turns, 1);
    // `export` writes the conversation after the cut.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .args(["export", &list.sessions[0].id, "--format", "md"])
        .output()
        .expect("export runs");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(md.contains("alpha question, edited"), "{md}");
    assert!(!md.contains("beta question"), "{md}");
}

#[test]
fn history_from_a_previous_run_is_recalled_with_up_and_found_with_ctrl_r() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("history-1", home.path());
    ask(&t, "first remembered prompt");
    ask(&t, "second remembered prompt");
    t.quit();
    drop(t);
    let file = home.path().join("data/kimi-tui/history.jsonl");
    let mode = std::fs::metadata(&file)
        .expect("the history file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let t = demo("history-2", home.path());
    t.keys(&["Up"]);
    t.wait_for(
        &["second remembered prompt"],
        "the last prompt of the run before",
    );
    t.keys(&["Up"]);
    let screen = t.wait_for(&["first remembered prompt"], "the one before it");
    assert!(!screen.contains("second remembered prompt"), "{screen}");
    t.keys(&["Down", "Down"]);
    t.wait_until("the input empty again", Duration::from_secs(5), |s| {
        !s.contains("remembered prompt")
    });
    t.keys(&["C-r"]);
    t.wait_for(&["(reverse-i-search)`'"], "the search");
    t.literal("first");
    t.wait_for(
        &["(reverse-i-search)`first'", "first remembered prompt"],
        "the match",
    );
    t.keys(&["Enter"]);
    t.wait_until("the search ended", Duration::from_secs(5), |s| {
        !s.contains("reverse-i-search") && s.contains("first remembered prompt")
    });
    t.keys(&["Enter"]);
    t.wait_for_within(
        &["You asked: \"first remembered prompt\"", "│ idle │"],
        Duration::from_secs(30),
        "the recalled prompt sent",
    );
    t.quit();
}

#[test]
fn sessions_resumes_a_saved_session_in_place() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("sessions-1", home.path());
    ask(&t, "from the old session");
    t.quit();
    drop(t);
    let store = store(home.path());
    let old = store.list().sessions[0].id.clone();

    let t = demo("sessions-2", home.path());
    ask(&t, "in the new session");
    t.send_line("/sessions");
    let screen = t.wait_for(&["Saved sessions", "(this one)"], "the picker");
    assert!(screen.contains("from the old session"), "{screen}");
    assert!(screen.contains("1 turn "), "{screen}");
    t.keys(&["Down"]);
    t.wait_for(&["› "], "a row selected");
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        &["Resumed session", "from the old session"],
        "the old session",
    );
    assert!(!screen.contains("in the new session"), "{screen}");
    ask(&t, "continuing the old one");
    t.quit();
    let resumed = store.load(&old).expect("loads");
    assert_eq!(
        user_messages(&resumed),
        ["from the old session", "continuing the old one"]
    );
    // The other session was saved whole before the switch.
    let list = store.list();
    assert_eq!(list.sessions.len(), 2);
    let new = list
        .sessions
        .iter()
        .find(|s| s.id != old)
        .expect("the new one");
    assert_eq!(new.first_line, "in the new session");
}

/// The TUI on `config` (a file in `home` pointing at `server`), with `KIMI_T_HIST_KEY` set.
fn configured(name: &str, home: &Path, server: &kimi_mock::MockServer, extra: &str) -> Tmux {
    let cfg = home.join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "{extra}[profiles.test]\nmode = \"raw\"\nbase_url = \"{}\"\napi_key_env = \"KIMI_T_HIST_KEY\"\n",
            server.base_url()
        ),
    )
    .expect("config");
    let t = Tmux::start(
        name,
        &format!(
            "env KIMI_T_HIST_KEY=sk-hist-e2e-secret {} --config {}",
            env!("CARGO_BIN_EXE_kimi-tui"),
            cfg.display()
        ),
        home,
    );
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t
}

#[test]
fn the_api_key_never_reaches_the_history_and_history_false_writes_none() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let opts = kimi_mock::MockOptions {
        api_key: Some("sk-hist-e2e-secret".into()),
        ..kimi_mock::MockOptions::default()
    };
    let server = rt
        .block_on(kimi_mock::MockServer::start(opts, 0))
        .expect("mock");
    let home = tempfile::tempdir().expect("tmp home");
    let t = configured("history-key", home.path(), &server, "");
    ask(&t, "my key is sk-hist-e2e-secret");
    ask(&t, "a prompt worth keeping");
    t.quit();
    drop(t);
    let file = home.path().join("data/kimi-tui/history.jsonl");
    let text = std::fs::read_to_string(&file).expect("the history file");
    assert!(!text.contains("sk-hist-e2e-secret"), "{text}");
    assert!(text.contains("a prompt worth keeping"), "{text}");

    let home = tempfile::tempdir().expect("tmp home");
    let t = configured("history-off", home.path(), &server, "history = false\n");
    ask(&t, "not for the history");
    // Up still recalls it in this run.
    t.keys(&["Up"]);
    t.wait_until("the prompt recalled", Duration::from_secs(5), |s| {
        s.matches("not for the history").count() >= 2
    });
    t.keys(&["C-c"]);
    t.quit();
    assert!(!home.path().join("data/kimi-tui/history.jsonl").exists());
    rt.block_on(server.shutdown());
}
