//! `kimi-tui exec` as a newcomer first tries it: the prompt piped in with `-`, a call declined
//! for want of `--yes` saying so, a failing tool's status in words, and nothing on stdout when
//! the run fails before any answer.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use kimi_mock::{MockOptions, MockServer};

use super::exec_cli::{bin, text};

/// A config for `base_url` (chat mode) with `get_weather` run by the test tool `tool`.
fn config(dir: &Path, base_url: &str, tool: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "chat"
base_url = "{base_url}"
retries = 0

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["{tool}"]
approval = "ask"
timeout_secs = 10
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        tool = kimi_test_support::tool_script(tool)
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// `exec --config CFG ARGS...` against `base_url`, with `stdin` piped in.
async fn exec(base_url: String, tool: &str, args: &[&str], stdin: &str) -> Output {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &base_url, tool);
    let mut cmd = bin();
    cmd.arg("exec").arg("--config").arg(&cfg).args(args);
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = (cmd.stdin(Stdio::piped()).stdout(Stdio::piped()))
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        let mut input = child.stdin.take().expect("stdin");
        input.write_all(stdin.as_bytes()).expect("write stdin");
        drop(input);
        child.wait_with_output().expect("waits")
    })
    .await
    .expect("join")
}

async fn with_mock(tool: &str, args: &[&str], stdin: &str) -> Output {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let out = exec(server.base_url(), tool, args, stdin).await;
    server.shutdown().await;
    out
}

#[tokio::test]
async fn a_dash_reads_the_prompt_from_stdin() {
    let o = with_mock(
        "weather.sh",
        &["--yes", "-"],
        "What's the weather in Paris?\n",
    )
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The mock calls the weather tool only for a prompt asking for the weather: stdin was read.
    assert!(
        text(&o.stderr).contains("running with"),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stdout).contains("Sunny"), "{}", text(&o.stdout));
}

#[tokio::test]
async fn a_call_declined_without_yes_names_the_flag_that_approves() {
    let o = with_mock("weather.sh", &["What's the weather in Paris?"], "").await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let line = (err.lines())
        .find(|l| l.contains("not run"))
        .unwrap_or_else(|| panic!("a declined call: {err}"));
    assert!(line.contains("--yes"), "{line}");
    // With --yes nothing was declined for want of it.
    let o = with_mock("fail.sh", &["--yes", "What's the weather in Paris?"], "").await;
    assert!(
        !text(&o.stderr).contains("only with --yes"),
        "{}",
        text(&o.stderr)
    );
}

#[tokio::test]
async fn a_failing_tool_s_status_is_printed_in_words() {
    let o = with_mock("fail.sh", &["--yes", "What's the weather in Paris?"], "").await;
    let err = text(&o.stderr);
    let line = (err.lines())
        .find(|l| l.starts_with("[tool]") && l.contains(" in ") && l.contains(" ms"))
        .unwrap_or_else(|| panic!("the finished call: {err}"));
    assert!(line.contains("exit 3"), "{line}");
    assert!(!err.contains("Exited("), "{err}");
}

#[tokio::test]
async fn a_run_that_fails_before_answering_prints_nothing_on_stdout() {
    // A port that refuses: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let o = exec(base, "weather.sh", &["hello"], "").await;
    assert!(!o.status.success());
    assert_eq!(text(&o.stdout), "", "stderr: {}", text(&o.stderr));
    assert!(!text(&o.stderr).is_empty());
}
