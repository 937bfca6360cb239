//! Thinking models through the binary: `exec` keeps the reasoning off stdout, prints it to
//! stderr with `--reasoning`, and `--json` carries it; the mock's thinking model over loopback.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kimi_mock::{MockOptions, MockServer};
use serde_json::Value;

fn bin() -> Command {
    let state = std::env::temp_dir().join(format!("kimi-tui-test-state-{}", std::process::id()));
    let mut c = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    c.env("XDG_DATA_HOME", state.join("data"));
    c.env("XDG_STATE_HOME", state);
    c
}

fn config(dir: &Path, base_url: &str, model: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        r#"[profiles.test]
mode = "chat"
base_url = "{base_url}"
model = "{model}"

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["{weather}"]
approval = "auto"
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        weather = kimi_test_support::tool_script("weather.sh")
    );
    std::fs::write(&path, text).expect("write config");
    path
}

async fn exec(opts: MockOptions, args: &[&str]) -> (Output, Vec<Value>) {
    let model = opts.model.clone();
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &server.base_url(), &model);
    let mut cmd = bin();
    cmd.arg("exec").arg("--config").arg(&cfg).args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let requests = server.requests();
    server.shutdown().await;
    (out, requests)
}

fn thinking() -> MockOptions {
    MockOptions {
        model: "kimi-k2-thinking".into(),
        require_reasoning: true,
        ..MockOptions::default()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const REASONING: &str = "I should call get_weather";

#[tokio::test]
async fn exec_keeps_reasoning_off_stdout_and_shows_it_with_the_flag() {
    let (o, requests) = exec(thinking(), &["What's the weather like in Paris?"]).await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("Paris"), "{out}");
    assert!(
        !out.contains(REASONING) && !err.contains(REASONING),
        "{out}\n{err}"
    );
    // The tool round finished: the second request carried the reasoning (else 400).
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]["temperature"] == 1.0,
        "thinking default: {}",
        requests[0]
    );
    assert!(requests[0]["max_tokens"] == 32768);

    let (o, _) = exec(
        thinking(),
        &["--reasoning", "What's the weather like in Paris?"],
    )
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(err.contains("[reasoning] The user"), "{err}");
    assert!(err.contains(REASONING), "{err}");
    assert!(!out.contains(REASONING), "{out}");
}

#[tokio::test]
async fn exec_json_includes_the_reasoning() {
    let (o, _) = exec(thinking(), &["--json", "What's the weather like in Paris?"]).await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let conv: Vec<Value> = serde_json::from_slice(&o.stdout).expect("a JSON array");
    let answers: Vec<&Value> = conv.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(answers.len(), 2);
    for a in answers {
        let r = a["reasoning_content"].as_str().expect("reasoning kept");
        assert!(r.starts_with("The user"), "{a}");
    }
}

#[tokio::test]
async fn exec_keeps_k2_5_reasoning_sent_as_content_off_stdout() {
    // No reasoning parser: K2.5 starts inside the reasoning, so the content is reasoning until
    // `</think>`, with no opener to tell it apart while it streams.
    let opts = || MockOptions {
        model: "kimi-k2.5".into(),
        reasoning_in_content: true,
        ..MockOptions::default()
    };
    let (o, requests) = exec(opts(), &["What's the weather like in Paris?"]).await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(requests.len(), 2, "{err}");
    assert!(out.contains("Paris"), "{out}");
    assert!(!out.contains(REASONING), "reasoning on stdout: {out}");
    assert!(!out.contains("The user"), "reasoning on stdout: {out}");
    assert!(err.contains("reasoning inside the content"), "{err}");

    let (o, _) = exec(
        opts(),
        &["--reasoning", "What's the weather like in Paris?"],
    )
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("Paris") && !out.contains(REASONING), "{out}");
    assert!(err.contains(REASONING), "{err}");
}
