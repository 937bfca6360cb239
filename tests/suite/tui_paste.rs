//! A huge paste through a real terminal: the real binary with `--demo` inside tmux, the text
//! delivered by `tmux paste-buffer -p` as a terminal delivers a paste (bracketed).

use std::time::Duration;

use kimi_test_support::tmux::Tmux;

#[test]
fn a_10_mb_paste_is_refused_at_once_and_the_app_stays_usable() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        "paste",
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for_within(
        &["kimi-tui", "demo"],
        Duration::from_secs(30),
        "welcome screen",
    );
    let file = home.path().join("paste.txt");
    let line = "2026-12-01T12:00:00Z INFO request handled in 12 ms path=/v1/completions\n";
    std::fs::write(&file, line.repeat(10_000_000 / line.len())).expect("write");
    let file = file.to_str().expect("utf-8 path");
    t.run(&["load-buffer", "-b", t.target(), file]);
    t.run(&[
        "paste-buffer",
        "-p",
        "-d",
        "-b",
        t.target(),
        "-t",
        t.target(),
    ]);
    // The 10 MB reach the app through the pty (tmux gives them to `cat` in about 0.3 s); the
    // notice follows as soon as the paste ends. The limit allows for a loaded test machine.
    let screen = t.wait_for_within(
        &["Paste not inserted", "1 MiB limit"],
        Duration::from_secs(10),
        "notice for the refused paste",
    );
    assert!(
        !screen.contains("request handled"),
        "nothing inserted:\n{screen}"
    );
    // Still usable: typing shows up right away.
    t.run(&["send-keys", "-t", t.target(), "-l", "still here"]);
    t.wait_for_within(&["still here"], Duration::from_secs(2), "typed text");
}
