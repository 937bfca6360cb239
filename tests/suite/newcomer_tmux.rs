//! A new user's first minutes in a real terminal (tmux): one Ctrl-C on the empty input does
//! not quit, two do; `/export json ~/x.json` writes under `$HOME`, says the absolute path, and
//! asks before replacing the file; `/ex` lists the matching commands and Tab completes one.

use std::path::Path;
use std::time::Duration;

use kimi_test_support::tmux::{DEFAULT_SIZE, Tmux, home_env};

const BIN: &str = env!("CARGO_BIN_EXE_kimi-tui");

/// The demo with `home` as `$HOME`, started from `cwd`.
fn start(name: &str, home: &Path, cwd: &Path) -> Tmux {
    let cmd = format!(
        "cd {cwd} && exec {env} {BIN} --demo",
        cwd = cwd.display(),
        env = home_env(home)
    );
    Tmux::start_shell(name, &cmd, DEFAULT_SIZE)
}

#[test]
fn one_ctrl_c_on_the_empty_input_asks_and_two_quit() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("ctrl-c-twice", home.path(), home.path());
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.keys(&["C-c"]);
    t.wait_for(&["Press Ctrl-C again to quit."], "the question");
    // Past the window the first press has lapsed: the next one asks again.
    std::thread::sleep(Duration::from_millis(2000));
    assert!(t.alive(), "one Ctrl-C quit:\n{}", t.capture());
    t.keys(&["C-c"]);
    t.wait_for(&["Press Ctrl-C again to quit. ×2"], "asked again");
    assert!(t.alive(), "a late second Ctrl-C quit:\n{}", t.capture());
    t.keys(&["C-c"]);
    t.wait_gone();
}

#[test]
fn export_to_a_tilde_path_writes_under_home_and_asks_before_replacing() {
    let home = tempfile::tempdir().expect("tmp");
    let cwd = home.path().join("project");
    std::fs::create_dir(&cwd).expect("mkdir");
    let t = start("export-tilde", home.path(), &cwd);
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.send_line("hello");
    t.wait_until("the answer", Duration::from_secs(30), |s| {
        s.contains("thanks for testing") && s.contains("│ idle │")
    });
    let target = home.path().join("x.json");
    t.send_line("/export json ~/x.json");
    t.wait_for(
        &[&format!("Exported to {}.", target.display())],
        "the absolute path written",
    );
    let first = std::fs::read_to_string(&target).expect("$HOME/x.json written");
    assert!(first.contains("hello"), "{first}");
    assert!(!cwd.join("~").exists(), "a directory named ~ was made");
    // Again: the file is there, so the user is asked; `n` keeps it.
    std::fs::write(&target, "mine").expect("write");
    t.send_line("/export json ~/x.json");
    t.wait_for(&["x.json exists. Replace it? y/n"], "the question");
    t.keys(&["n"]);
    t.wait_for(&["Not exported:", "is kept."], "kept");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "mine");
    // And `y` replaces it.
    t.send_line("/export json ~/x.json");
    t.wait_until("asked again", Duration::from_secs(10), |s| {
        s.matches("Replace it? y/n").count() >= 2
    });
    t.keys(&["y"]);
    t.wait_until("replaced", Duration::from_secs(10), |s| {
        s.matches("Exported to").count() >= 2
    });
    let replaced = std::fs::read_to_string(&target).expect("read");
    assert!(replaced.contains("hello"), "{replaced}");
    t.quit();
}

#[test]
fn typing_a_slash_lists_the_commands_and_tab_completes_one() {
    let home = tempfile::tempdir().expect("tmp");
    let t = start("slash-popup", home.path(), home.path());
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("/ex");
    let shown = t.wait_for(
        &["/export", "write the conversation as Markdown", "/exit"],
        "the popup with /export and its help",
    );
    // The popup sits right above the input, whose line holds what was typed.
    let lines: Vec<&str> = shown.lines().collect();
    let input = lines
        .iter()
        .rposition(|l| l.trim_end() == "/ex")
        .unwrap_or_else(|| panic!("no input line `/ex`:\n{shown}"));
    assert!(
        lines[input - 2].contains("Tab complete"),
        "the popup is not above the input:\n{shown}"
    );
    t.keys(&["Tab"]);
    let shown = t.wait_until("the command completed", Duration::from_secs(10), |s| {
        !s.contains("Tab complete")
    });
    assert!(shown.lines().any(|l| l.trim_end() == "/export"), "{shown}");
    // The space is there: what is typed next is the argument.
    t.literal("json");
    t.wait_until(
        "the argument after the space",
        Duration::from_secs(10),
        |s| s.lines().any(|l| l.trim_end() == "/export json"),
    );
    // The first Ctrl-C clears the draft.
    t.keys(&["C-c"]);
    t.quit();
}
