//! "Always allow calls like this", end to end: the real binary inside tmux against the real
//! `kimi-tui mock-server` emitting the same call for every message, with a tool that is a
//! script appending its stdin to a file. The rule added from the dialog for the session lets
//! the second, identical call run without the dialog.

use std::time::{Duration, Instant};

use super::mock_process::MockProcess;

/// Lines the tool has written (one per run).
fn runs(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[test]
fn a_session_rule_from_the_dialog_runs_the_next_identical_call_without_asking() {
    let dir = tempfile::tempdir().expect("tmp");
    let mock = MockProcess::start([
        "--tool-call-name",
        "run_command",
        "--tool-call-args",
        r#"{"command": "git status -s"}"#,
    ]);
    let record = dir.path().join("ran.txt");
    let tool = dir.path().join("record.sh");
    std::fs::write(
        &tool,
        format!(
            "#!/bin/sh\ncat >> '{}'\necho >> '{}'\necho '{{\"ok\": true}}'\n",
            record.display(),
            record.display()
        ),
    )
    .expect("tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            r#"default_profile = "p"
[profiles.p]
mode = "chat"
base_url = "{url}"
model = "moonshotai/Kimi-K2-Instruct"

[[tools]]
name = "run_command"
description = "Run a command"
command = ["{tool}"]
approval = "ask"
parameters = {{ type = "object", properties = {{ command = {{ type = "string" }} }} }}
"#,
            url = mock.url,
            tool = tool.display()
        ),
    )
    .expect("config");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let tmux = super::tui_with_config("rules", &config, &home, (110, 40));
    tmux.wait_for(&["kimi-tui"], "the welcome screen");
    tmux.literal("go");
    tmux.keys(&["Enter"]);
    tmux.wait_for(&["Tool call needs approval"], "the approval dialog");
    // The rule it would add, prefilled with the call's arguments as exact patterns.
    tmux.keys(&["r"]);
    // Waited for whole: a capture can land while the form is half drawn.
    tmux.wait_for(
        &[
            "Rule for calls like this",
            r#"args = { command = "git status -s" }"#,
            "[this session]",
        ],
        "the rule form, prefilled",
    );
    tmux.keys(&["C-s"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while runs(&record) < 1 {
        assert!(
            Instant::now() < deadline,
            "the first call did not run; screen:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.wait_for(&["Rule `allowed from the dialog` added"], "the rule added");
    // The same call again: no dialog, it runs, and its pane names the rule.
    tmux.literal("go");
    tmux.keys(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while runs(&record) < 2 {
        let screen = tmux.capture();
        assert!(
            !screen.contains("Tool call needs approval"),
            "the second call asked:\n{screen}"
        );
        assert!(
            Instant::now() < deadline,
            "the second call did not run; screen:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let screen = tmux.wait_for(
        &["allowed by rule `allowed from the dialog`, session"],
        "the pane naming the rule",
    );
    assert!(!screen.contains("Tool call needs approval"), "{screen}");
    // `/rules` lists it, matched by the second call.
    tmux.literal("/rules");
    tmux.keys(&["Enter"]);
    tmux.wait_for(&["this session · matched"], "the listing");
    tmux.quit();
}
