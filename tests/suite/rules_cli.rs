//! Rules on call arguments as a user meets them: `kimi-tui exec` (the real binary, a real
//! config file) against the real `kimi-tui mock-server`, which answers with the call given by
//! `--tool-call-name`/`--tool-call-args`; and `kimi-tui rules check`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::mock_process::MockProcess;

const RULES: &str = r#"
# Read-only git runs without asking.
[[rules]]
tool = "run_command"
args = { command = "git status*" }
decision = "allow"
reason = "read-only git"
match = [{ command = "git status -s" }]
not_match = [{ command = "git push" }]

[[rules]]
tool = "run_command"
args = { command = "rm **" }
decision = "deny"
reason = "no deleting"
"#;

/// A config for the mock at `url` with `run_command` (it prints its arguments, then `ran`),
/// the rules above and `extra`.
fn config(dir: &Path, url: &str, extra: &str) -> (PathBuf, String) {
    let text = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "chat"
base_url = "{url}"

[[tools]]
name = "run_command"
description = "Run a shell command"
command = ["sh", "-c", "cat; echo; echo ran"]
approval = "ask"
parameters = {{ type = "object", required = ["command"], properties = {{ command = {{ type = "string" }} }} }}
{RULES}{extra}"#
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, &text).expect("write config");
    (path, text)
}

/// The line of the `n`-th (from 0) `[[rules]]` header of `text`.
fn rule_line(text: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| *l == "[[rules]]")
        .nth(n)
        .map(|(i, _)| i + 1)
        .expect("a rule")
}

fn bin(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    let state = dir.join("state");
    c.env("XDG_STATE_HOME", &state)
        .env("XDG_DATA_HOME", state.join("data"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .current_dir(dir);
    c
}

/// `exec --config CONFIG ARGS... "hi"` against a mock that answers with `tool(args)`.
fn exec(dir: &Path, extra: &str, tool: &str, args: &str, flags: &[&str]) -> (Output, String) {
    let mock = MockProcess::start(["--tool-call-name", tool, "--tool-call-args", args]);
    let (cfg, text) = config(dir, &mock.url, extra);
    let out = bin(dir)
        .arg("exec")
        .arg("--config")
        .arg(&cfg)
        .args(flags)
        .args(["--json", "hi"])
        .output()
        .expect("runs");
    (out, text)
}

/// The tool message of a `--json` conversation.
fn tool_message(out: &Output) -> Value {
    let conv: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {:?} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (conv.as_array().expect("array").iter())
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("a tool message")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_call_a_rule_allows_runs_without_yes_and_says_which_rule() {
    let dir = tempfile::tempdir().expect("tmp");
    let (out, text) = exec(
        dir.path(),
        "",
        "run_command",
        r#"{"command": "git status -s"}"#,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let tool = tool_message(&out);
    assert!(
        tool["content"].as_str().unwrap_or("").contains("ran"),
        "{tool}"
    );
    let line = rule_line(&text, 0);
    let d = &tool["decision"];
    assert_eq!(d["verdict"], "allow", "{tool}");
    assert_eq!(d["origin"]["by"], "rule");
    assert_eq!(d["origin"]["label"], "read-only git");
    assert_eq!(d["origin"]["source"]["kind"], "config");
    assert_eq!(d["origin"]["source"]["line"], line);
    assert_eq!(
        d["text"],
        format!("allowed by rule `read-only git`, config.toml:{line}")
    );
    assert!(
        stderr(&out).contains(&format!(
            "[tool] allowed by rule `read-only git`, config.toml:{line}"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_call_no_rule_allows_is_declined_without_yes() {
    let dir = tempfile::tempdir().expect("tmp");
    let (out, _) = exec(
        dir.path(),
        "",
        "run_command",
        r#"{"command": "git push"}"#,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let tool = tool_message(&out);
    let content = tool["content"].as_str().unwrap_or("");
    assert!(content.contains("declined"), "{tool}");
    assert!(!content.contains("ran"), "{tool}");
    assert_eq!(tool["decision"]["verdict"], "ask");
    assert_eq!(tool["decision"]["origin"]["by"], "tool_approval");
    // With --yes it runs.
    let (out, _) = exec(
        dir.path(),
        "",
        "run_command",
        r#"{"command": "git push"}"#,
        &["--yes"],
    );
    assert!(
        tool_message(&out)["content"]
            .as_str()
            .unwrap_or("")
            .contains("ran")
    );
}

#[test]
fn a_denied_call_never_runs_even_with_yes() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("victim");
    std::fs::write(&marker, "keep").expect("write");
    let args = format!(r#"{{"command": "rm -f {}"}}"#, marker.display());
    let (out, text) = exec(dir.path(), "", "run_command", &args, &["--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tool = tool_message(&out);
    let line = rule_line(&text, 1);
    assert_eq!(
        tool["content"],
        format!(
            "Error: denied by the rule `no deleting` ({}:{line}); do not retry this call",
            dir.path().join("config.toml").display()
        )
    );
    assert_eq!(tool["decision"]["verdict"], "deny");
    assert!(marker.exists(), "the command never ran");
}

#[test]
fn an_mcp_tool_call_is_allowed_by_a_rule_on_its_arguments() {
    let dir = tempfile::tempdir().expect("tmp");
    let extra = format!(
        r#"
[[mcp_servers]]
name = "demo"
command = ["{}", "mock-mcp-server"]

[[rules]]
tool = "mcp__demo__*"
args = {{ text = "hello*" }}
decision = "allow"
reason = "friendly echoes"

# Names an argument echo does not have: known only once the server lists its tools.
[[rules]]
tool = "mcp__demo__echo"
args = {{ message = "*" }}
decision = "deny"
"#,
        env!("CARGO_BIN_EXE_kimi-tui")
    );
    let (out, _) = exec(
        dir.path(),
        &extra,
        "mcp__demo__echo",
        r#"{"text": "hello there"}"#,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let tool = tool_message(&out);
    assert_eq!(tool["content"], "echo: hello there", "{}", stderr(&out));
    assert_eq!(tool["decision"]["origin"]["label"], "friendly echoes");
    // The rule on an argument the server's tool lacks was reported and ignored.
    assert!(
        stderr(&out).contains(
            "is ignored: args.message: the tool `mcp__demo__echo` has no argument `message`"
        ),
        "{}",
        stderr(&out)
    );
    // Other arguments are not covered: the tool's own approval (ask) declines without --yes.
    let (out, _) = exec(
        dir.path(),
        &extra,
        "mcp__demo__echo",
        r#"{"text": "bye"}"#,
        &[],
    );
    let tool = tool_message(&out);
    assert!(
        tool["content"].as_str().unwrap_or("").contains("declined"),
        "{tool}"
    );
}

#[test]
fn a_rule_whose_not_match_example_matches_is_a_config_error_naming_the_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let extra = r#"
[[rules]]
tool = "run_command"
args = { command = "git *" }
decision = "allow"
not_match = [
  { command = "git push --force" },
]
"#;
    let (out, text) = exec(
        dir.path(),
        extra,
        "run_command",
        r#"{"command": "ls"}"#,
        &[],
    );
    assert!(!out.status.success());
    let line = text
        .lines()
        .position(|l| l.contains("git push --force"))
        .expect("the example")
        + 1;
    let cfg = dir.path().join("config.toml");
    let want = format!(
        "{}:{line}:3: rules[2].not_match[0]: the rule matches its `not_match` example {{\"command\":\"git push --force\"}}",
        cfg.display()
    );
    assert!(
        stderr(&out).contains(&want),
        "{}\nwant {want}",
        stderr(&out)
    );
    // `rules check` says the same, and fails.
    let out = bin(dir.path())
        .args(["rules", "check", "--config"])
        .arg(&cfg)
        .args(["run_command", r#"{"command": "ls"}"#])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(stderr(&out).contains(&want), "{}", stderr(&out));
}

fn check(dir: &Path, cfg: &Path, tool: &str, args: &str, flags: &[&str]) -> Output {
    bin(dir)
        .args(["rules", "check", "--config"])
        .arg(cfg)
        .args(flags)
        .args([tool, args])
        .output()
        .expect("runs")
}

#[test]
fn rules_check_prints_the_decision_the_rule_and_its_file_and_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let (cfg, text) = config(dir.path(), "http://127.0.0.1:9/v1", "");
    let out = check(
        dir.path(),
        &cfg,
        "run_command",
        r#"{"command": "git status"}"#,
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "decision: allow\nrule: read-only git\nat: {}:{}\n",
            cfg.display(),
            rule_line(&text, 0)
        )
    );
    let out = check(
        dir.path(),
        &cfg,
        "run_command",
        r#"{"command": "rm -rf /"}"#,
        &[],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("decision: deny\nrule: no deleting\n")
    );
    let out = check(dir.path(), &cfg, "run_command", r#"{"command": "ls"}"#, &[]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "decision: ask\nrule: none (the tool's approval setting: ask)\n"
    );
    let out = check(dir.path(), &cfg, "run_command", "[1]", &[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("ARGS_JSON must be a JSON object"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_project_cannot_allow_unless_trusted_but_its_deny_rules_apply() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(dir.path().join(".kimi-tui")).expect("mkdir");
    std::fs::write(
        dir.path().join(".kimi-tui/rules.toml"),
        "[[rules]]\ntool = \"run_command\"\nargs = { command = \"git status --porcelain*\" }\ndecision = \"deny\"\nreason = \"project says no\"\n\n[[rules]]\ntool = \"*\"\ndecision = \"allow\"\n",
    )
    .expect("write");
    // The project's deny beats the config's allow.
    let (out, _) = exec(
        dir.path(),
        "",
        "run_command",
        r#"{"command": "git status --porcelain"}"#,
        &[],
    );
    let tool = tool_message(&out);
    assert!(
        tool["content"]
            .as_str()
            .unwrap_or("")
            .contains("project says no"),
        "{tool}"
    );
    assert_eq!(tool["decision"]["origin"]["source"]["kind"], "project");
    // Its allow-everything rule is ignored, with a notice.
    let (out, _) = exec(dir.path(), "", "run_command", r#"{"command": "ls"}"#, &[]);
    assert!(
        tool_message(&out)["content"]
            .as_str()
            .unwrap_or("")
            .contains("declined")
    );
    assert!(
        stderr(&out)
            .contains("the allow rules at line 7 are ignored: this directory is not trusted"),
        "{}",
        stderr(&out)
    );
    // Trusted for the run, it allows.
    let (out, _) = exec(
        dir.path(),
        "",
        "run_command",
        r#"{"command": "ls"}"#,
        &["--trust-project"],
    );
    assert!(
        tool_message(&out)["content"]
            .as_str()
            .unwrap_or("")
            .contains("ran"),
        "{}",
        stderr(&out)
    );
    // `rules check` says where the project rule is.
    let (cfg, _) = config(dir.path(), "http://127.0.0.1:9/v1", "");
    let out = check(
        dir.path(),
        &cfg,
        "run_command",
        r#"{"command": "git status --porcelain"}"#,
        &[],
    );
    // The working directory as the process sees it: resolved.
    let project = (dir.path().canonicalize().expect("canon")).join(".kimi-tui/rules.toml");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "decision: deny\nrule: project says no\nat: {}:1 (project)\n",
            project.display()
        )
    );
}
