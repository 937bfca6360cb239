//! Getting text out and composing, end to end: the real binary with `--demo` in tmux.
//! `/copy` is observed through tmux itself (with `set-clipboard on` tmux takes an application's
//! OSC 52 into a paste buffer, which `show-buffer` prints), mouse capture through tmux's record
//! of the modes the pane asked for, `Ctrl-G` with a fake `$EDITOR` script that reads the
//! terminal (so the app's own reader must have let go of it).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use kimi_test_support::tmux::Tmux;

fn demo_with(name: &str, home: &Path, env: &str) -> Tmux {
    let t = Tmux::start_sized(
        name,
        &format!("env {env} {} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home,
        (100, 30),
    );
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t
}

fn tmux_out(t: &Tmux, args: &[&str]) -> String {
    let out: std::process::Output = t.command().args(args).output().expect("tmux");
    assert!(out.status.success(), "tmux {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The newest paste buffer, waited for: tmux makes one from each OSC 52 it accepts.
fn newest_buffer(t: &Tmux, after: usize, what: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let count = tmux_out(t, &["list-buffers", "-F", "#{buffer_name}"])
            .lines()
            .count();
        if count > after {
            return tmux_out(t, &["show-buffer"]);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no new tmux buffer for {what}; screen:\n{}",
            t.capture()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn buffers(t: &Tmux) -> usize {
    tmux_out(t, &["list-buffers", "-F", "#{buffer_name}"])
        .lines()
        .count()
}

#[test]
fn copy_puts_the_answer_and_its_code_block_on_the_clipboard_through_osc52() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo_with("copy", home.path(), "");
    // tmux takes OSC 52 from an application only with this on (its default is `external`).
    t.run(&["set-option", "-s", "set-clipboard", "on"]);
    t.send_line("Hello there");
    t.wait_for(&["◆ Kimi", "│ idle │", "world"], "the answer");

    t.send_line("/copy code");
    t.wait_for(
        &["Copied code block 1 of 1 (rust) from answer 1: 77 chars"],
        "the confirmation",
    );
    let code = newest_buffer(&t, 0, "/copy code");
    assert_eq!(
        code,
        "fn main() {\n    let greeting = \"hello\";\n    println!(\"{greeting}, world\");\n}\n"
    );

    t.send_line("/copy");
    t.wait_for(&["Copied answer 1:"], "the confirmation");
    let answer = newest_buffer(&t, 1, "/copy");
    assert!(
        answer.starts_with("## Mock answer\n\nYou asked: \"Hello there\""),
        "{answer}"
    );
    assert!(
        answer.contains("```rust\nfn main() {") && answer.contains("你好，世界"),
        "the Markdown source, wide characters included: {answer}"
    );

    t.send_line("/copy 2");
    t.wait_for(
        &["No answer 2: there is 1 answer"],
        "the out-of-range error",
    );
    assert_eq!(buffers(&t), 2, "nothing copied");
    t.quit();
}

/// Which mouse modes the pane has asked the terminal for (tmux records each `?1000h`-family
/// sequence the program writes).
fn mouse_flag(t: &Tmux) -> String {
    tmux_out(
        t,
        &[
            "display-message",
            "-p",
            "-t",
            t.target(),
            "#{mouse_any_flag}",
        ],
    )
    .trim()
    .to_owned()
}

#[test]
fn mouse_capture_is_off_at_start_and_f3_or_mouse_turn_it_on_and_off() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo_with("mouse", home.path(), "");
    assert_eq!(mouse_flag(&t), "0", "no mouse mode at start");
    t.keys(&["F3"]);
    let screen = t.wait_for(&["Wheel scrolling on", "│ mouse"], "the notice");
    assert!(screen.contains("│ mouse "), "{screen}");
    assert_eq!(mouse_flag(&t), "1");
    t.send_line("/mouse off");
    let screen = t.wait_for(&["Wheel scrolling off"], "the notice");
    assert!(!screen.contains("│ mouse "), "{screen}");
    assert_eq!(mouse_flag(&t), "0");
    t.send_line("/mouse");
    t.wait_for(&["│ mouse "], "the indicator");
    assert_eq!(mouse_flag(&t), "1");

    // The light theme, seen in the colours tmux keeps for the pane: 256-colour codes, and none
    // of the palette's yellow or white that vanish on a white background.
    t.send_line("/theme light");
    t.wait_for(&["Theme: light."], "the switch");
    let ansi = tmux_out(&t, &["capture-pane", "-p", "-e", "-t", t.target()]);
    assert!(ansi.contains("38;5;"), "{ansi:?}");
    for sgr in [
        "[33m", "[37m", "[93m", "[97m", ";33m", ";37m", ";93m", ";97m",
    ] {
        assert!(!ansi.contains(sgr), "{sgr} in the light theme: {ansi:?}");
    }
    t.quit();
}

/// A fake editor: shows the draft file's mode and content, reads a line from the terminal
/// (keys the app's reader must not steal), and writes the new draft.
fn fake_editor(dir: &Path) -> String {
    let path = dir.join("fake-editor.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\n\
         printf 'FAKE EDITOR mode %s draft [%s]\\n' \"$(stat -c %a \"$1\")\" \"$(cat \"$1\")\"\n\
         IFS= read -r line\n\
         printf 'edited: %s\\nwas: %s\\n' \"$line\" \"$(cat \"$1\")\" > \"$1\"\n",
    )
    .expect("script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

#[test]
fn ctrl_g_edits_the_draft_in_editor_and_the_result_lands_in_the_input() {
    let home = tempfile::tempdir().expect("tmp home");
    let editor = fake_editor(home.path());
    let t = demo_with("editor", home.path(), &format!("VISUAL= EDITOR='{editor}'"));
    t.literal("my draft");
    t.wait_for(&["my draft"], "the draft");
    t.keys(&["C-g"]);
    // The editor has the main screen (the app left the alternate one) and a private file.
    let screen = t.wait_for(&["FAKE EDITOR mode 600 draft [my draft]"], "the editor");
    assert!(!screen.contains("◆"), "{screen}");
    t.send_line("typed in the editor");
    // The whole frame, status bar included, comes back (waited for together: a capture can
    // fall between the rows of one redraw).
    let screen = t.wait_for(
        &["edited: typed in the editor", "was: my draft", "│ idle │"],
        "the app drawn again with the new draft",
    );
    assert!(!screen.contains("FAKE EDITOR"), "{screen}");
    // The app reads keys again: more text goes into the draft, Enter sends it whole.
    t.literal(" and more");
    t.wait_for(&["was: my draft and more"], "typing after the editor");
    t.keys(&["Enter"]);
    t.wait_for(
        &["▌ was: my draft and more", "│ idle │"],
        "the message sent",
    );
    t.quit();
}

#[test]
fn a_failing_editor_keeps_the_draft_and_says_why() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo_with("editor-fails", home.path(), "VISUAL= EDITOR=false");
    t.literal("keep this draft");
    t.wait_for(&["keep this draft"], "the draft");
    t.keys(&["C-g"]);
    let screen = t.wait_for(
        &["Ctrl-G: the editor `false` exited with status 1; the draft is unchanged"],
        "the notice",
    );
    assert!(screen.contains("keep this draft"), "{screen}");
    // Still reading keys.
    t.literal("!");
    t.wait_for(&["keep this draft!"], "typing after the failure");
    // The first Ctrl-C clears the draft, the second quits.
    t.keys(&["C-c"]);
    t.quit();
}

/// `theme = "auto"` (the demo's): tmux answers OSC 11 with the pane's background (its
/// `window-style`), and without one only the device attributes, so each fallback is reached.
#[test]
fn the_auto_theme_asks_the_terminal_then_colorfgbg_then_is_dark() {
    let cases = [
        (Some("bg=white"), "", "light"),
        (Some("bg=black"), "COLORFGBG='0;15'", "dark"),
        (None, "COLORFGBG='0;15'", "light"),
        (None, "COLORFGBG='15;0'", "dark"),
        (None, "", "dark"),
    ];
    for (style, env, expect) in cases {
        let home = tempfile::tempdir().expect("tmp home");
        // The app starts once the style is set: its query at startup must see it.
        let t = Tmux::start_sized(
            "auto-theme",
            &format!(
                "sh -c \"sleep 0.5; exec env -u COLORFGBG {env} {} --demo\"",
                env!("CARGO_BIN_EXE_kimi-tui")
            ),
            home.path(),
            (100, 30),
        );
        if let Some(style) = style {
            t.run(&["set-option", "-g", "window-style", style]);
        }
        t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
        t.send_line("/theme");
        let screen = t.wait_for(&["Theme: "], "the theme in use");
        assert!(
            screen.contains(&format!("Theme: {expect} (")),
            "{style:?} {env}: {screen}"
        );
        t.quit();
    }
}
