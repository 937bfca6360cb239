//! Both screens in a real terminal (tmux), with a long answer streamed by the mock server:
//! the inline screen leaves every line of the answer in tmux's own scrollback once, in order,
//! through a resize in the middle of the stream and after quitting, and comes back from the
//! inspector exactly as it was; the full screen survives a resize while streaming.

use std::path::Path;
use std::time::Duration;

use kimi_mock::{MockOptions, MockServer};
use kimi_test_support::tmux::{Tmux, home_env};

const BIN: &str = env!("CARGO_BIN_EXE_kimi-tui");

/// The mock's `stream N tokens of lines`: one-line paragraphs `Line 00000 ...`, 7 tokens each.
const TOKENS: usize = 1400;
const LINES: usize = TOKENS / 7;

struct Run {
    rt: tokio::runtime::Runtime,
    server: Option<MockServer>,
    home: tempfile::TempDir,
}

impl Run {
    fn new() -> Run {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let opts = MockOptions {
            delay_ms: 1,
            ..MockOptions::default()
        };
        let server = rt.block_on(MockServer::start(opts, 0)).expect("mock");
        let home = tempfile::tempdir().expect("tmp home");
        let cfg = home.path().join("config.toml");
        std::fs::write(
            &cfg,
            format!(
                "default_profile = \"m\"\n[profiles.m]\nmode = \"raw\"\nbase_url = \"{}\"\n\
                 model = \"{}\"\n",
                server.base_url(),
                MockOptions::default().model
            ),
        )
        .expect("config");
        Run {
            rt,
            server: Some(server),
            home,
        }
    }

    /// A shell in tmux (it stays when the app quits, with the scrollback) running the app
    /// with `flag`.
    fn start(&self, name: &str, flag: &str, size: (u16, u16)) -> Tmux {
        let t = Tmux::start_shell(name, "exec bash --norc --noprofile", size);
        t.run(&["set-option", "-g", "history-limit", "50000"]);
        let cmd = command(self.home.path(), flag);
        t.send_line(&format!("PS1='$ '; clear; {cmd}"));
        t.wait_for(&["Type a message"], "the welcome screen");
        t
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.rt.block_on(server.shutdown());
        }
    }
}

fn command(home: &Path, flag: &str) -> String {
    format!(
        "{} {BIN} --config {} {flag}",
        home_env(home),
        home.join("config.toml").display()
    )
}

/// Everything tmux holds for the pane, its scrollback and its screen, wrapped lines joined.
fn scrollback(t: &Tmux) -> String {
    let out = t
        .command()
        .args(["capture-pane", "-p", "-J", "-S", "-", "-t", t.target()])
        .output()
        .expect("capture-pane");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The numbers of the answer's lines, in the order they are found.
fn answer_lines(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("Line "))
        .filter_map(|rest| rest.get(..5)?.parse().ok())
        .collect()
}

fn assert_every_line_once(text: &str, when: &str) {
    let seen = answer_lines(text);
    let want: Vec<usize> = (0..LINES).collect();
    assert_eq!(
        seen, want,
        "{when}: each answer line once, in order:\n{text}"
    );
}

fn wait_answered(t: &Tmux) {
    t.wait_until("the answer's end", Duration::from_secs(60), |s| {
        s.contains(&format!("Line {:05}", LINES - 1)) && s.contains("│ idle │")
    });
}

#[test]
fn inline_the_whole_answer_is_in_the_scrollback_once_through_a_resize_and_after_quitting() {
    let run = Run::new();
    let t = run.start("inline-scrollback", "--inline", (100, 30));
    t.send_line(&format!("stream {TOKENS} tokens of lines"));
    t.wait_for(&["Line 00010"], "the stream under way");
    // Narrower and shorter in the middle of the stream: the terminal rewraps what it shows.
    t.run(&["resize-window", "-t", t.target(), "-x", "70", "-y", "24"]);
    wait_answered(&t);
    assert_every_line_once(&scrollback(&t), "after the answer");
    // Wider again, then quit: the conversation stays on the screen, the viewport does not.
    t.run(&["resize-window", "-t", t.target(), "-x", "110", "-y", "32"]);
    t.wait_until("redrawn at 110 columns", Duration::from_secs(10), |s| {
        s.lines()
            .any(|l| l.chars().count() == 110 && l.starts_with('─'))
    });
    t.keys(&["C-c", "C-c"]);
    t.wait_for(&["kimi-tui --session"], "the resume hint after quitting");
    let after = scrollback(&t);
    assert_every_line_once(&after, "after quitting");
    assert!(
        !after.contains("Message Kimi"),
        "the viewport was left:\n{after}"
    );
    let you = after.find("▌ You").expect("the question is kept");
    let hint = after.find("kimi-tui --session").expect("the hint");
    assert!(you < hint, "the hint follows the conversation:\n{after}");
}

#[test]
fn inline_the_inspector_opens_on_the_alternate_screen_and_the_view_comes_back_as_it_was() {
    let run = Run::new();
    let t = run.start("inline-inspector", "--inline", (90, 26));
    t.send_line("stream 70 tokens of lines");
    let before = t.wait_until("the answer", Duration::from_secs(30), |s| {
        s.contains("Line 00009") && s.contains("│ idle │")
    });
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector", "Request 1 of 1"], "the inspector");
    t.keys(&["Escape"]);
    let after = t.wait_until("the inline view back", Duration::from_secs(10), |s| {
        !s.contains("Inspector")
    });
    assert_eq!(before, after, "the view came back changed");
    // The help too, and the rows written before it are not written again.
    t.keys(&["F1"]);
    t.wait_for(&["Help"], "the help");
    t.keys(&["Escape"]);
    t.wait_until("the inline view back", Duration::from_secs(10), |s| {
        s == before
    });
    let all = scrollback(&t);
    let seen = answer_lines(&all);
    assert_eq!(seen, (0..10).collect::<Vec<_>>(), "{all}");
    t.keys(&["C-c", "C-c"]);
    t.wait_for(&["kimi-tui --session"], "quit");
}

#[test]
fn fullscreen_survives_a_resize_while_streaming_and_leaves_the_shell_as_it_was() {
    let run = Run::new();
    let t = run.start("full-resize", "", (100, 30));
    t.send_line(&format!("stream {TOKENS} tokens of lines"));
    t.wait_for(&["Line 00010"], "the stream under way");
    t.run(&["resize-window", "-t", t.target(), "-x", "60", "-y", "20"]);
    let screen = t.wait_until("the answer's end", Duration::from_secs(60), |s| {
        s.contains(&format!("Line {:05}", LINES - 1)) && s.contains("│ idle │")
    });
    // The last line sits above the composer, the status bar on the last row.
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows.len(), 20, "{screen}");
    assert!(rows[19].contains("│ idle │"), "{screen}");
    assert!(rows.iter().all(|r| r.chars().count() <= 60), "{screen}");
    t.keys(&["C-c", "C-c"]);
    t.wait_for(&["kimi-tui --session"], "quit");
    // The alternate screen is gone: the shell's own screen holds no line of the answer.
    let after = scrollback(&t);
    assert!(answer_lines(&after).is_empty(), "{after}");
}

#[test]
fn inline_the_approval_dialog_lives_in_the_viewport_and_the_call_is_written_once_with_its_result() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_shell("inline-approval", "exec bash --norc --noprofile", (100, 30));
    t.send_line(&format!(
        "PS1='$ '; clear; {} {BIN} --demo --inline",
        home_env(home.path())
    ));
    t.wait_for(&["Type a message"], "the welcome screen");
    t.send_line("What's the weather like in Paris?");
    let asking = t.wait_for(&["Tool call needs approval"], "the dialog");
    // The call's pane is live above the dialog, which sits above the composer.
    let rows: Vec<&str> = asking.lines().collect();
    let pane = rows.iter().position(|r| r.contains("⚙ get_weather"));
    let dialog = rows
        .iter()
        .position(|r| r.contains("Tool call needs approval"));
    let input = rows.iter().position(|r| r.contains("Message Kimi"));
    assert!(pane < dialog && dialog < input, "{asking}");
    t.keys(&["y"]);
    t.wait_until("the answer", Duration::from_secs(30), |s| {
        s.contains("That is the result of the tool call.") && s.contains("│ idle │")
    });
    t.keys(&["C-c", "C-c"]);
    t.wait_for(&["kimi-tui --session"], "quit");
    let all = scrollback(&t);
    let count = |needle: &str| all.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(count("⚙ get_weather"), 1, "{all}");
    assert_eq!(count("├─ result"), 1, "{all}");
    assert_eq!(count("▌ What's the weather like in Paris?"), 1, "{all}");
    assert_eq!(count("Tool call needs approval"), 0, "{all}");
    assert!(all.contains("✓ done"), "{all}");
}
