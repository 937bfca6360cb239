//! What the TUI writes, through the real binary in a real terminal (tmux): a `kill -9` in the
//! middle of an answer loses neither the message nor the answer so far, a second instance on
//! the same session is refused, an older copy given with `--session PATH` never replaces the
//! stored session, every file and directory written is private, and an `exec` run is a session
//! the TUI resumes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kimi_core::session::{Session, SessionStore};
use kimi_protocol::Message;
use kimi_protocol::Mode;
use kimi_test_support::tmux::{DEFAULT_SIZE, Tmux, home_env};

const BIN: &str = env!("CARGO_BIN_EXE_kimi-tui");

/// `args` run by the binary in `home` (its cwd) under umask 022, as a typical shell has.
fn start(name: &str, home: &Path, args: &str) -> Tmux {
    let cmd = format!(
        "cd {h} && umask 022 && exec {env} {BIN} {args}",
        h = home.display(),
        env = home_env(home)
    );
    Tmux::start_shell(name, &cmd, DEFAULT_SIZE)
}

/// Wait until the mock's answer to `question` has streamed to its end.
fn wait_answered(t: &Tmux, question: &str) {
    let asked = format!("You asked: \"{question}\"");
    // The status bar says idle before the first message too: the answer must be there.
    t.wait_until(
        &format!("the answer to {question:?}"),
        Duration::from_secs(30),
        |screen| {
            screen.contains(&asked)
                && screen.contains("thanks for testing")
                && screen.contains("│ idle │")
                && !screen.contains("streaming")
        },
    );
}

fn store_of(home: &Path) -> SessionStore {
    SessionStore::new(home.join("data/kimi-tui/sessions"))
}

/// The only session file in the store, once it exists.
fn only_session(store: &SessionStore) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list = store.list();
        if let [one] = list.sessions.as_slice() {
            return one.path.clone();
        }
        assert!(
            Instant::now() < deadline,
            "sessions: {:?}",
            list.sessions.iter().map(|s| &s.id).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid this session's lock file names: the instance holding it.
fn holder_pid(path: &Path) -> u32 {
    let lock = path.with_extension("lock");
    std::fs::read_to_string(&lock)
        .unwrap_or_else(|e| panic!("{}: {e}", lock.display()))
        .trim()
        .parse()
        .expect("a pid")
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64
}

#[test]
fn kill_9_mid_answer_keeps_the_message_and_the_answer_so_far() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("kill", home.path(), "--demo");
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    // The demo streams a token every 12 ms: 2000 tokens take about 24 s.
    t.literal("Please stream 2000 tokens");
    t.keys(&["Enter"]);
    t.wait_for(&["streaming"], "the answer streaming");
    let path = only_session(&store_of(home.path()));
    std::thread::sleep(Duration::from_secs(3));
    let pid = holder_pid(&path);
    let killed_at = now_ms();
    let status = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    t.wait_gone();

    let s = SessionStore::load_path(&path).expect("the file is whole");
    assert_eq!(s.messages, vec![Message::user("Please stream 2000 tokens")]);
    assert_eq!(s.partial.len(), 1, "the partial answer: {:?}", s.partial);
    let p = &s.partial[0];
    assert_eq!(p.after_message, 1);
    assert!(p.content.split_whitespace().count() > 20, "{:?}", p.content);
    assert!(
        killed_at.saturating_sub(p.saved_unix_ms) <= 2000,
        "saved {} ms before the kill",
        killed_at - p.saved_unix_ms
    );
    drop(t);

    // Resumed: the lock died with the process; the answer shows, marked interrupted.
    let t = start("kill2", home.path(), "--demo --resume");
    let screen = t.wait_for(
        &[
            "Resumed session",
            "Please stream 2000 tokens",
            "interrupted",
        ],
        "the resumed, interrupted answer",
    );
    assert!(
        screen.contains("⚠ interrupted: kimi-tui stopped while this answer streamed"),
        "{screen}"
    );
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
    // Quitting saved it again: the partial answer is still there.
    let again = SessionStore::load_path(&path).expect("loads");
    assert_eq!(again.partial, s.partial);
}

#[test]
fn a_closed_terminal_mid_answer_saves_everything_streamed() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("hup", home.path(), "--demo");
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("Please stream 2000 tokens");
    t.keys(&["Enter"]);
    // Well within the first second: before any timed save of the answer.
    t.wait_for(&["lorem ipsum dolor"], "the first words");
    let path = only_session(&store_of(home.path()));
    let pid = holder_pid(&path);
    // Closing the window: tmux sends SIGHUP to the program.
    let _ = t
        .command()
        .args(["kill-session", "-t", t.target()])
        .output();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "pid {pid} still running");
        std::thread::sleep(Duration::from_millis(50));
    }
    let s = SessionStore::load_path(&path).expect("loads");
    assert_eq!(s.partial.len(), 1, "{s:?}");
    assert!(
        s.partial[0]
            .content
            .trim_start()
            .starts_with("lorem ipsum dolor"),
        "{:?}",
        s.partial[0].content
    );
}

fn run(home: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(home)
        .args(args);
    cmd.output().expect("runs")
}

#[test]
fn a_second_instance_on_the_same_session_is_refused() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("two", home.path(), "--demo");
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("hello");
    t.keys(&["Enter"]);
    wait_answered(&t, "hello");
    let path = only_session(&store_of(home.path()));
    let id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("id")
        .to_owned();
    let pid = holder_pid(&path);
    let before = std::fs::read(&path).expect("read");
    for args in [
        vec!["--demo", "--resume"],
        vec!["--demo", "--session", id.as_str()],
    ] {
        let o = run(home.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "kimi-tui: error: session `{id}` is open in another kimi-tui (pid {pid}); quit that one first, or start a new session without --resume/--session"
            ),
            "{args:?}"
        );
    }
    assert_eq!(std::fs::read(&path).expect("read"), before, "untouched");
    // The first instance goes on saving.
    t.literal("again");
    t.keys(&["Enter"]);
    wait_answered(&t, "again");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
    let s = SessionStore::load_path(&path).expect("loads");
    assert_eq!(s.turns(), 2);
    // Quit: the session can be opened again.
    let t = start("two2", home.path(), &format!("--demo --session {id}"));
    t.wait_for(&["Resumed session", "again"], "the session reopened");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

#[test]
fn an_older_copy_given_by_path_never_replaces_the_stored_session() {
    let home = tempfile::tempdir().expect("tmp");
    let store = store_of(home.path());
    let mut newer = Session::new("demo", Mode::Raw, "kimi", "http://127.0.0.1:1/v1");
    newer.messages = vec![
        Message::user("first question"),
        Message::assistant("first answer"),
        Message::user("second question"),
        Message::assistant("second answer"),
    ];
    let mut older = newer.clone();
    older.messages.truncate(2);
    older.updated_unix_ms -= 60_000;
    let stored = store.save(&newer).expect("save");
    let before = std::fs::read(&stored).expect("read");
    let copy = home.path().join("old-copy.json");
    std::fs::write(&copy, serde_json::to_vec(&older).expect("json")).expect("write");

    let t = start(
        "copy",
        home.path(),
        &format!("--demo --session {}", copy.display()),
    );
    let screen = t.wait_for(
        &["is a copy of session", "so that neither is"],
        "the fork notice",
    );
    assert!(screen.contains("first question"), "{screen}");
    t.literal("third question");
    t.keys(&["Enter"]);
    wait_answered(&t, "third question");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();

    assert_eq!(
        std::fs::read(&stored).expect("read"),
        before,
        "stored one untouched"
    );
    let list = store.list();
    assert_eq!(list.sessions.len(), 2, "{:?}", list.problems);
    let fork = list
        .sessions
        .iter()
        .find(|s| s.id != newer.id)
        .expect("the new session");
    let fork = store.load(&fork.id).expect("loads");
    assert_eq!(fork.messages[..2], older.messages[..]);
    assert_eq!(fork.messages[2], Message::user("third question"));
    // The copy given is left as it was too.
    let copy_back: Session = serde_json::from_slice(&std::fs::read(&copy).expect("r")).expect("j");
    assert_eq!(copy_back, older);
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777
}

/// Every file and directory under `dir`, depth first.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let p = e.expect("entry").path();
        out.push(p.clone());
        if p.is_dir() {
            walk(&p, out);
        }
    }
}

#[test]
fn every_file_the_program_writes_is_private() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("modes", home.path(), "--demo");
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("hello");
    t.keys(&["Enter"]);
    wait_answered(&t, "hello");
    t.literal("/export md out/tui/chat.md");
    t.keys(&["Enter"]);
    t.wait_for(&["Exported to /", "/out/tui/chat.md"], "the export");
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector"], "the inspector");
    t.keys(&["s"]);
    t.wait_for(&["saved to"], "the saved trace");
    t.keys(&["Escape"]);
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
    let id = store_of(home.path()).list().sessions[0].id.clone();
    // The subcommands, under umask 022 too.
    let sh = |args: &str| {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "cd {h} && umask 022 && exec {env} {BIN} {args}",
                h = home.path().display(),
                env = home_env(home.path())
            ))
            .output()
            .expect("sh");
        assert!(
            o.status.success(),
            "{args}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    sh(&format!("export {id} -o out/cli/chat.json"));
    sh(&format!("export {id} -o out/cli/chat.md"));
    sh("config init");
    sh("--config out/cfg/other.toml config init");

    let mut all = Vec::new();
    walk(home.path(), &mut all);
    let names = |pred: &dyn Fn(&PathBuf) -> bool| -> Vec<String> {
        all.iter()
            .filter(|p| pred(p))
            .map(|p| {
                p.strip_prefix(home.path())
                    .expect("inside")
                    .display()
                    .to_string()
            })
            .collect()
    };
    // Each kind of file is there to be checked.
    let files = names(&|p| p.is_file());
    for want in [
        "data/kimi-tui/sessions/",
        ".lock",
        "state/kimi-tui/kimi-tui.log",
        "state/kimi-tui/trace-",
        "out/tui/chat.md",
        "out/cli/chat.json",
        "out/cli/chat.md",
        "config/kimi-tui/config.toml",
        "out/cfg/other.toml",
        "config/kimi-tui/tools/weather.sh",
    ] {
        assert!(
            files.iter().any(|f| f.contains(want)),
            "{want} in {files:?}"
        );
    }
    // The example tools (`--demo`, and beside a config from `config init`) are the user's
    // own executables: 0700.
    let demo_tools = |p: &PathBuf| {
        p.to_string_lossy().contains("demo-tools/")
            || p.is_file() && p.parent().is_some_and(|d| d.ends_with("tools"))
    };
    let bad: Vec<String> = all
        .iter()
        .filter(|p| {
            let want = if p.is_dir() || demo_tools(p) {
                0o700
            } else {
                0o600
            };
            mode(p) != want
        })
        .map(|p| format!("{:o} {}", mode(p), p.display()))
        .collect();
    assert!(bad.is_empty(), "not private: {bad:#?}");
}

#[test]
fn an_exec_run_leaves_a_session_that_sessions_lists_and_the_tui_resumes() {
    let home = tempfile::tempdir().expect("tmp");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime
        .block_on(kimi_mock::MockServer::start(
            kimi_mock::MockOptions::default(),
            0,
        ))
        .expect("mock");
    let url = server.base_url();
    let connect = ["--base-url", url.as_str(), "--mode", "raw"];
    let o = run(
        home.path(),
        &[&["exec"], &connect[..], &["Tell me about exec."]].concat(),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("You asked: \"Tell me about exec.\""), "{out}");
    // Written whole by the time exec ends, with the summary a listing reads.
    let path = only_session(&store_of(home.path()));
    let id = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("id")
        .to_owned();
    let s = SessionStore::load_path(&path).expect("loads");
    assert_eq!(s.turns(), 1);
    assert_eq!(s.traces.len(), 1);
    let o = run(home.path(), &["sessions"]);
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        listed.contains(&id) && listed.contains("Tell me about exec."),
        "{listed}"
    );
    // The TUI continues it: the exchange is on the screen, and the next one is added to it.
    let args = format!("--base-url {url} --mode raw --session {id}");
    let t = start("exec-resume", home.path(), &args);
    t.wait_for(
        &[
            "Resumed session",
            "Tell me about exec.",
            "thanks for testing",
        ],
        "the exec session resumed",
    );
    t.literal("and then?");
    t.keys(&["Enter"]);
    wait_answered(&t, "and then?");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
    let s = SessionStore::load_path(&path).expect("loads");
    assert_eq!(s.turns(), 2);
    runtime.block_on(server.shutdown());
}
