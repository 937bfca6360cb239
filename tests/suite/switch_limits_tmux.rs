//! Switching and limits end to end: the real binary in tmux (its own tmux server) against the real
//! `kimi-tui mock-server`: the context gauge after an answer (and its warning), a retry
//! countdown then the answer, `/model` and `/profile` switching with the status bar updated.

use kimi_test_support::tmux::Tmux;

use super::mock_process::MockProcess;

/// The app in tmux against `mock_url` with one profile `p` in `mode` (plus `more` config),
/// at its welcome screen. The directory holds the config and the app's home.
fn start(name: &str, mode: &str, mock_url: &str, more: &str) -> (tempfile::TempDir, Tmux) {
    let dir = tempfile::tempdir().expect("tmp");
    let config = dir.path().join("config.toml");
    let text = format!(
        "default_profile = \"p\"\n[profiles.p]\nmode = \"{mode}\"\nbase_url = \"{mock_url}\"\n{more}"
    );
    std::fs::write(&config, text).expect("config");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let t = super::tui_with_config(name, &config, &home, (120, 40));
    t.wait_for(&["kimi-tui"], "the welcome screen");
    (dir, t)
}

/// The status bar: the screen's last non-empty row.
fn status_bar(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_gauge_shows_the_context_used_after_an_answer_and_warns_at_80_percent() {
    let mock = MockProcess::start(["--max-model-len", "131072"]);
    // No context_window: the length comes from the server's /models.
    let small = format!(
        "\n[profiles.small]\nmode = \"chat\"\nbase_url = \"{}\"\ncontext_window = 120\n",
        mock.url
    );
    let (_dir, t) = start("gauge", "raw", &mock.url, &small);
    t.send_line("hello");
    let screen = t.wait_until(
        "the answer and the gauge",
        std::time::Duration::from_secs(30),
        // The window comes from GET /models, asked in the background at start: under load
        // it can arrive after the answer.
        |s| {
            let bar = status_bar(s);
            bar.contains("│ idle │")
                && bar.contains("│ ctx ")
                && !bar.contains("out 0 ")
                && bar.contains("/131k │")
        },
    );
    let bar = status_bar(&screen);
    eprintln!("status bar, normal:\n{bar}");
    assert!(bar.contains("/131k │"), "{bar}");
    assert!(!bar.contains('⚠'), "{bar}");
    // A profile with a small window: the same conversation fills it.
    t.send_line("/profile small");
    t.wait_for(&["Now using", "profile small"], "the switch");
    t.send_line("hello again");
    let screen = t.wait_for(
        &["The context window is", "⚠ ctx", "/120 │", "│ idle │"],
        "the warning",
    );
    let bar = status_bar(&screen);
    eprintln!("status bar, warning:\n{bar}");
    assert!(bar.starts_with(" small  chat "), "{bar}");
    assert_eq!(
        screen.matches("The context window is").count(),
        1,
        "{screen}"
    );
}

#[test]
fn a_503_shows_a_countdown_then_the_answer_arrives() {
    let mock = MockProcess::start([
        "--fail-status",
        "503",
        "--fail-times",
        "1",
        "--retry-after",
        "2",
    ]);
    let (_dir, t) = start("retry", "chat", &mock.url, "");
    t.send_line("hello");
    let waiting = t.wait_for(
        &[
            "HTTP 503",
            "retrying in",
            "(attempt 2/4) — Esc cancels",
            "retry in",
        ],
        "the countdown",
    );
    assert!(status_bar(&waiting).contains("retry in"), "{waiting}");
    let done = t.wait_for(
        &["retried (attempt 2/4)", "│ idle │"],
        "the answer after the retry",
    );
    assert!(!done.contains("✗"), "no failure shown: {done}");
    assert!(!status_bar(&done).contains("retry in"), "{done}");
}

#[test]
fn esc_cancels_a_retry_wait_and_the_error_stays() {
    let mock = MockProcess::start(["--fail-status", "503", "--retry-after", "30"]);
    let (_dir, t) = start("retry-esc", "raw", &mock.url, "");
    t.send_line("hello");
    t.wait_for(&["retrying in", "Esc cancels"], "the countdown");
    t.keys(&["Escape"]);
    let done = t.wait_for(&["the turn ended before attempt 2/4"], "the turn ended");
    assert!(done.contains("✗ HTTP 503"), "the error stays: {done}");
    let idle = t.wait_for(&["│ idle │"], "the app idle again");
    assert!(!status_bar(&idle).contains("retry in"), "{idle}");
}

#[test]
fn slash_model_lists_and_switches_and_the_status_bar_follows() {
    let mock = MockProcess::start(["--extra-models", "moonshotai/Kimi-K2.5"]);
    let (_dir, t) = start("model", "raw", &mock.url, "");
    t.send_line("/model");
    let listed = t.wait_for(
        &[
            "* moonshotai/Kimi-K2-Instruct (131k context)  (active)",
            "moonshotai/Kimi-K2.5 (131k context)",
        ],
        "the list",
    );
    assert!(
        status_bar(&listed).contains(" moonshotai/Kimi-K2-Instruct @ "),
        "{listed}"
    );
    t.send_line("/model nope");
    t.wait_for(&["Unknown model nope: the server lists"], "the refusal");
    t.send_line("/model moonshotai/Kimi-K2.5");
    let switched = t.wait_for(&["Now using moonshotai/Kimi-K2.5"], "the switch");
    let bar = status_bar(&switched);
    assert!(
        bar.contains(" k2.5 ") && bar.contains("moonshotai/Kimi-K2.5 @ 127.0.0.1"),
        "{bar}"
    );
}
