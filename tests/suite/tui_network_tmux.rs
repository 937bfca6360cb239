//! The TUI in tmux against hostile servers (the mock's fault flags): a BOM before the first
//! event used to panic the turn task, leaving the screen restored under a running app stuck in
//! "streaming"; a proxy's login page was "dropped mid-stream after 0 bytes".

use kimi_mock::{MockOptions, MockServer};
use kimi_test_support::tmux::Tmux;

/// The TUI pointed at a mock started with `opts`, one question asked; the screen once it
/// shows every one of `needles`.
fn ask(name: &str, opts: MockOptions, mode: &str, needles: &[&str]) -> String {
    ask_with_key(name, opts, mode, needles, None).0
}

/// [`ask`] with an API key in the environment (`KIMI_T_TUI_KEY`) and debug logging; also
/// returns the log file the app left behind.
fn ask_with_key(
    name: &str,
    opts: MockOptions,
    mode: &str,
    needles: &[&str],
    key: Option<&str>,
) -> (String, String) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start(opts, 0)).expect("mock");
    let home = tempfile::tempdir().expect("tmp home");
    let cfg = home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.test]\nmode = \"{mode}\"\nbase_url = \"{}\"\n{}",
            server.base_url(),
            if key.is_some() {
                "api_key_env = \"KIMI_T_TUI_KEY\"\n"
            } else {
                ""
            }
        ),
    )
    .expect("config");
    let env = key
        .map(|k| format!("env KIMI_T_TUI_KEY={k} KIMI_TUI_LOG=debug "))
        .unwrap_or_default();
    let t = Tmux::start(
        name,
        &format!(
            "{env}{} --config {}",
            env!("CARGO_BIN_EXE_kimi-tui"),
            cfg.display()
        ),
        home.path(),
    );
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t.literal("Tell me about Rust.");
    t.keys(&["Enter"]);
    let screen = t.wait_for(needles, "the end of the turn");
    // The app still owns the terminal and takes keys: Ctrl-C quits it.
    t.quit();
    rt.block_on(server.shutdown());
    // Written by the app's log thread, flushed when it exited.
    let log = std::fs::read_to_string(home.path().join("state/kimi-tui/kimi-tui.log"))
        .unwrap_or_default();
    (screen, log)
}

#[test]
fn a_bom_before_the_first_event_streams_normally() {
    let opts = MockOptions {
        bom: true,
        ..MockOptions::default()
    };
    let screen = ask("bom", opts, "raw", &["你好", "│ idle │"]);
    assert!(!screen.contains("panicked"), "{screen}");
}

#[test]
fn a_proxy_login_page_ends_the_turn_with_what_arrived() {
    let opts = MockOptions {
        content_type: Some("text/html".into()),
        ..MockOptions::default()
    };
    let screen = ask(
        "html",
        opts,
        "chat",
        &[
            "the server answered text/html, not an event stream",
            "│ idle │",
        ],
    );
    assert!(screen.contains("Corporate proxy"), "{screen}");
    assert!(!screen.contains("dropped"), "{screen}");
}

#[test]
fn a_failed_stream_is_logged_with_its_cause_off_screen_and_without_the_key() {
    let key = "sk-tui-log-secret-4242";
    let opts = MockOptions {
        error_event: true,
        api_key: Some(key.into()),
        ..MockOptions::default()
    };
    let (screen, log) = ask_with_key(
        "log",
        opts,
        "raw",
        &["model overloaded mid-stream", "│ idle │"],
        Some(key),
    );
    assert!(log.contains("request started"), "{log}");
    assert!(log.contains("/v1/completions"), "{log}");
    let failed = log
        .lines()
        .find(|l| l.contains("stream failed"))
        .unwrap_or_else(|| panic!("no failure line in:\n{log}"));
    assert!(failed.contains("ERROR"), "{failed}");
    assert!(failed.contains("server_event"), "{failed}");
    assert!(failed.contains("model overloaded mid-stream"), "{failed}");
    assert!(!log.contains(key), "the key is in the log:\n{log}");
    // Logging never draws over the TUI.
    assert!(!screen.contains("stream failed"), "{screen}");
    assert!(!screen.contains("request started"), "{screen}");
}

#[test]
fn a_refused_connection_is_one_line_and_the_inspector_has_the_chain() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let home = tempfile::tempdir().expect("tmp home");
    let cfg = home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.test]\nmode = \"chat\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nretries = 1\n"
        ),
    )
    .expect("config");
    let t = Tmux::start_sized(
        "refused",
        &format!(
            "env KIMI_TUI_LOG=debug {} --config {}",
            env!("CARGO_BIN_EXE_kimi-tui"),
            cfg.display()
        ),
        home.path(),
        (140, 40),
    );
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t.literal("hello");
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["failed after 2 attempts", "│ idle"], "the failed turn");
    let said = format!(
        "Cannot connect to 127.0.0.1:{port} (connection refused). Is the server running? Check with `kimi-tui doctor`."
    );
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("127.0.0.1")).collect();
    // The status bar names the host too; the transcript holds the one error row.
    let errors: Vec<&&str> = rows
        .iter()
        .filter(|l| l.contains("Cannot connect"))
        .collect();
    assert_eq!(errors.len(), 1, "{screen}");
    assert_eq!(errors[0].trim_end(), format!("✗ {said}"), "{screen}");
    for chain in [
        "os error",
        "tcp connect",
        "error sending request",
        "retrying",
    ] {
        assert!(!screen.contains(chain), "{chain}: {screen}");
    }
    t.keys(&["C-t"]);
    let inspector = t.wait_for(&["Inspector", "cause:"], "the inspector");
    assert!(inspector.contains(&format!("✗ {said}")), "{inspector}");
    assert!(
        inspector.contains("tcp connect error") && inspector.contains("os error"),
        "the inspector shows the library's chain: {inspector}"
    );
    t.keys(&["Escape"]);
    t.quit();
    let log = std::fs::read_to_string(home.path().join("state/kimi-tui/kimi-tui.log"))
        .unwrap_or_default();
    assert!(
        log.contains("stream failed") && log.contains("tcp connect error"),
        "{log}"
    );
}
