//! Job control in a real shell: `kill -TSTP` stops the app with the terminal given back to the
//! shell (which then takes commands), and `fg` brings it back redrawn and taking input.

use std::time::Duration;

use kimi_test_support::tmux::{Tmux, home_env};

/// The state letter of process `pid` (`T` stopped, `S` sleeping, ...), from /proc.
fn state(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // `pid (comm) S ...`: the name may hold spaces, the state follows its closing parenthesis.
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
        .unwrap_or('?')
}

/// The one child of the pane's shell: the app the shell started as a job.
fn app_pid(t: &Tmux) -> u32 {
    let out = t
        .command()
        .args(["display-message", "-p", "-t", t.target(), "#{pane_pid}"])
        .output()
        .expect("tmux display");
    let shell = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
        .expect("the shell's children");
    let pids: Vec<u32> = children
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    assert_eq!(pids.len(), 1, "one job: {children:?}");
    pids[0]
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill {sig} {pid}");
}

#[test]
fn sigtstp_gives_the_shell_the_terminal_and_fg_brings_the_app_back() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_shell(
        "tstp",
        "env -i PATH=/usr/bin:/bin TERM=xterm-256color bash --norc --noprofile -i",
        (100, 30),
    );
    t.send_line("PS1='$ '");
    t.send_line(&format!(
        "{} {} --demo",
        home_env(home.path()),
        env!("CARGO_BIN_EXE_kimi-tui")
    ));
    t.wait_for(&["Type a message", "│ idle"], "the welcome screen");
    let pid = app_pid(&t);

    signal(pid, "-TSTP");
    let screen = t.wait_for(&["Stopped"], "the shell's job-stopped message");
    assert!(
        !screen.contains("│ idle"),
        "the app's screen is gone: {screen}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while state(pid) != 'T' {
        assert!(std::time::Instant::now() < deadline, "state {}", state(pid));
        std::thread::sleep(Duration::from_millis(50));
    }
    // The shell has the terminal, in cooked mode: it echoes and runs a command.
    t.send_line("echo shell-$((6*7))");
    t.wait_for(
        &["echo shell-$((6*7))", "shell-42"],
        "the shell running a command",
    );
    assert_eq!(state(pid), 'T', "the app stays stopped meanwhile");

    t.send_line("fg");
    t.wait_for(&["Type a message", "│ idle"], "the app redrawn after fg");
    t.literal("typed after fg");
    let screen = t.wait_for(&["typed after fg"], "the typed text in the input");
    assert!(
        !screen.contains("shell-42"),
        "the whole screen redrawn: {screen}"
    );

    // Again with the continue sent by hand, as `kill -CONT` does.
    signal(pid, "-TSTP");
    t.wait_until("the second stop", Duration::from_secs(10), |_| {
        state(pid) == 'T'
    });
    signal(pid, "-CONT");
    // The shell still thinks the job stopped: `fg` gives it the terminal again.
    t.send_line("fg");
    t.wait_for(&["typed after fg", "│ idle"], "the app with its draft");
    // The first Ctrl-C clears the draft, the next two quit.
    t.keys(&["C-c", "C-c", "C-c"]);
    t.wait_until("the app's exit", Duration::from_secs(10), |_| {
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || state(pid) == 'Z'
    });
}

#[test]
fn inline_a_stop_leaves_the_conversation_and_fg_draws_the_viewport_below_the_shell() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_shell(
        "tstp-inline",
        "env -i PATH=/usr/bin:/bin TERM=xterm-256color bash --norc --noprofile -i",
        (100, 30),
    );
    t.send_line("PS1='$ '");
    t.send_line(&format!(
        "{} {} --demo --inline",
        home_env(home.path()),
        env!("CARGO_BIN_EXE_kimi-tui")
    ));
    t.wait_for(&["Type a message", "│ idle"], "the welcome screen");
    t.send_line("hello there");
    t.wait_for(&["thanks for testing", "│ idle"], "the answer");
    let pid = app_pid(&t);

    signal(pid, "-TSTP");
    let screen = t.wait_for(&["Stopped"], "the shell's job-stopped message");
    // The conversation stays above; the viewport made room for the shell.
    assert!(screen.contains("hello there"), "{screen}");
    assert!(!screen.contains("│ idle"), "the viewport is gone: {screen}");
    t.send_line("echo shell-$((6*7))");
    t.wait_for(&["shell-42"], "the shell running a command");

    t.send_line("fg");
    let screen = t.wait_for(&["│ idle"], "the viewport drawn again after fg");
    let rows: Vec<&str> = screen.lines().collect();
    let shell = rows
        .iter()
        .rposition(|r| r.contains("shell-42"))
        .expect("shell");
    let status = rows
        .iter()
        .position(|r| r.contains("│ idle"))
        .expect("status");
    assert!(shell < status, "below the shell's lines: {screen}");
    assert_eq!(screen.matches("│ idle").count(), 1, "{screen}");
    t.literal("typed after fg");
    t.wait_for(&["typed after fg"], "the typed text in the input");
    t.keys(&["C-u", "C-c", "C-c"]);
    t.wait_until("the app's exit", Duration::from_secs(10), |_| {
        !std::path::Path::new(&format!("/proc/{pid}")).exists() || state(pid) == 'Z'
    });
}
