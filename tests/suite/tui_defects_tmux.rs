//! Defects once found in daily use, end to end: the real binary with `--demo` inside tmux, as a
//! person types and pastes.

use std::time::Duration;

use kimi_test_support::tmux::{Tmux, home_env};

fn demo(name: &str, home: &std::path::Path) -> Tmux {
    let t = Tmux::start_sized(
        name,
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home,
        (100, 30),
    );
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t
}

/// The input box's rows: between its top border and the status bar.
fn input_rows(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows.iter().rposition(|r| r.starts_with('─')).unwrap_or(0);
    let top = rows[..top]
        .iter()
        .rposition(|r| r.starts_with('─'))
        .unwrap_or(0);
    rows[top + 1..]
        .iter()
        .take_while(|r| !r.starts_with('─'))
        .map(|r| r.trim_end().to_owned())
        .collect()
}

#[test]
fn a_pasted_text_keeps_its_line_breaks_and_ctrl_c_clears_the_draft_first() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("paste-cr", home.path());
    // tmux turns the LFs of a buffer into CRs on paste, as terminals send them.
    let file = home.path().join("paste.txt");
    std::fs::write(&file, "first line\nsecond line\nthird line").expect("write");
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
    let screen = t.wait_for(&["third line"], "the pasted text in the input");
    assert_eq!(
        input_rows(&screen),
        ["first line", "second line", "third line"],
        "{screen}"
    );
    assert!(!screen.contains("◆ Kimi"), "nothing was sent:\n{screen}");
    // Ctrl-C with a draft: cleared, not quit; Up brings it back.
    t.keys(&["C-c"]);
    let screen = t.wait_for(&["Draft cleared"], "the draft cleared");
    assert!(!screen.contains("third line"), "{screen}");
    assert!(t.alive());
    t.keys(&["Up"]);
    t.wait_for(&["third line"], "the draft recalled");
    // Readline keys: Ctrl-U deletes to the start of the line, Ctrl-Z undoes it.
    t.keys(&["C-u"]);
    t.wait_until("third line deleted", Duration::from_secs(5), |s| {
        !s.contains("third line") && s.contains("second line")
    });
    t.keys(&["C-z"]);
    t.wait_for(&["third line"], "undo");
    // Twice more: cleared, then quit on the empty input.
    t.keys(&["C-c"]);
    t.wait_until("the draft cleared again", Duration::from_secs(5), |s| {
        !s.contains("third line")
    });
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

#[test]
fn the_newline_keys_the_help_lists_are_the_ones_that_work_here() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("newline", home.path());
    t.literal("one");
    t.keys(&["C-j"]);
    t.literal("two");
    t.keys(&["M-Enter"]);
    t.literal("three");
    let screen = t.wait_for(&["three"], "three lines typed");
    assert_eq!(input_rows(&screen), ["one", "two", "three"], "{screen}");
    assert!(!screen.contains("◆ Kimi"), "nothing was sent:\n{screen}");
    // tmux does not speak the keyboard enhancement protocol: Shift-Enter would arrive as a
    // plain Enter, so neither the help nor the input's placeholder offers it.
    t.keys(&["C-u", "C-u", "C-u", "C-u", "C-u"]);
    t.keys(&["F1"]);
    let help = t.wait_for(&["Ctrl-J, Alt-Enter", "new line"], "the help");
    assert!(!help.contains("Shift-Enter"), "{help}");
    t.keys(&["Escape"]);
    t.quit();
}

#[test]
fn on_exit_the_resume_command_is_printed_and_resume_alone_continues_a_demo_session() {
    let home = tempfile::tempdir().expect("tmp home");
    let bin = env!("CARGO_BIN_EXE_kimi-tui");
    let shell = |args: &str| {
        format!(
            "{} {bin} {args}; echo EXITED; sleep 30",
            home_env(home.path())
        )
    };
    // Nothing sent: nothing saved, nothing to resume, nothing printed.
    let t = Tmux::start_shell("exit-hint", &shell("--demo"), (100, 30));
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.keys(&["C-c", "C-c"]);
    let screen = t.wait_for(&["EXITED"], "the shell after the app");
    assert!(!screen.contains("Continue it with"), "{screen}");
    drop(t);

    let t = Tmux::start_shell("exit-hint", &shell("--demo"), (100, 30));
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.send_line("Hello there");
    t.wait_for(&["◆ Kimi", "│ idle │"], "the answer");
    t.keys(&["C-c", "C-c"]);
    let screen = t.wait_for(&["EXITED", "Continue it with"], "the resume hint");
    let id = screen
        .lines()
        .find_map(|l| l.trim().strip_prefix("kimi-tui --session "))
        .unwrap_or_else(|| panic!("no resume command:\n{screen}"))
        .trim()
        .to_owned();
    assert!(screen.contains(&format!("Session {id} saved")), "{screen}");
    drop(t);

    // `--resume` alone (no --demo, no config file) continues it, on the demo server.
    let t = Tmux::start_shell("exit-hint", &shell("--resume"), (100, 30));
    let screen = t.wait_for(&["Hello there", "demo"], "the resumed demo session");
    assert!(!screen.contains("no config file"), "{screen}");
    t.send_line("And again");
    t.wait_until("a second answer", Duration::from_secs(20), |s| {
        s.contains("You asked: \"And again\"") && s.contains("│ idle │")
    });
    t.keys(&["C-c", "C-c"]);
    t.wait_for(
        &["EXITED", &format!("kimi-tui --session {id}")],
        "the same session",
    );
}

#[test]
fn a_message_typed_while_the_answer_streams_is_queued_then_sent() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo("queued", home.path());
    t.send_line("Tell me something");
    t.wait_for(&["streaming"], "the answer streaming");
    t.send_line("And a follow-up");
    t.wait_for(&["1 queued"], "the queued message in the status bar");
    t.wait_for_within(
        &["You asked: \"And a follow-up\"", "│ idle │"],
        Duration::from_secs(30),
        "the queued message sent and answered",
    );
    t.quit();
}
