//! Kimi K3 end to end through `exec`, the agent loop and the mock playing K3 over loopback:
//! raw mode (the XTML prompt, the answer parsed locally, the tool result sent back by name and
//! position, each next prompt an append of the last) and chat mode, in the trained shape and in
//! every broken shape servers have been seen to pass on.

use std::path::{Path, PathBuf};
use std::process::Command;

use kimi_mock::{MockOptions, MockServer};

fn config(dir: &Path, base_url: &str, mode: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        r#"default_profile = "k3"

[profiles.k3]
mode = "{mode}"
base_url = "{base_url}"
model = "kimi-k3"
max_tokens = 2048

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["{weather}"]
approval = "ask"
timeout_secs = 10
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        weather = kimi_test_support::tool_script("weather.sh")
    );
    std::fs::write(&path, text).expect("write config");
    path
}

struct Run {
    stdout: String,
    stderr: String,
    ok: bool,
    requests: Vec<serde_json::Value>,
}

async fn exec(opts: MockOptions, mode: &str) -> Run {
    let server = MockServer::start(
        MockOptions {
            model: "kimi-k3".into(),
            ..opts
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &server.base_url(), mode);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args(["exec", "--yes", "--config"])
        .arg(&cfg)
        .arg("What's the weather like in Paris?");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let requests = server.requests();
    server.shutdown().await;
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ok: out.status.success(),
        requests,
    }
}

fn prompts(run: &Run) -> Vec<String> {
    run.requests
        .iter()
        .filter_map(|r| r["prompt"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn raw_mode_runs_the_tool_round_and_each_prompt_extends_the_last() {
    let run = exec(MockOptions::default(), "raw").await;
    assert!(run.ok, "{}", run.stderr);
    assert!(
        run.stdout.contains("The get_weather tool returned:"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("<|"),
        "no marker reaches the answer: {}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("[tool] get_weather (get_weather_0) running"),
        "{}",
        run.stderr
    );
    let p = prompts(&run);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[0].ends_with("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"));
    // The second prompt is the first, the model's answer as it wrote it, the result: an
    // append, so a server's prefix cache hits.
    assert!(p[1].starts_with(&p[0]), "the next prompt extends the last");
    let answer = &p[1][p[0].len()..];
    assert!(
        answer.contains("<|close|>think<|sep|><|open|>response<|sep|>")
            && answer.contains("<|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>")
            && answer.contains("<|close|>message<|sep|><|end_of_msg|><|open|>message role=\"tool\" tool=\"get_weather\" index=\"1\"<|sep|>"),
        "{answer}"
    );
    for r in &run.requests {
        assert_eq!(r["stop"][0], "<|end_of_msg|>");
        assert_eq!(r["skip_special_tokens"], false);
    }
}

#[tokio::test]
async fn every_broken_shape_still_runs_the_call_and_says_what_was_irregular() {
    for (shape, _) in kimi_mock::k3::SHAPES {
        let run = exec(
            MockOptions {
                k3_shape: Some(shape.to_owned()),
                ..MockOptions::default()
            },
            "raw",
        )
        .await;
        assert!(run.ok, "{shape}: {}", run.stderr);
        assert!(!run.stdout.contains("<|"), "{shape}: {}", run.stdout);
        if shape == "cut-by-max-tokens" {
            // The answer stopped inside a marker: no call, the text kept, nothing leaked.
            assert_eq!(prompts(&run).len(), 1, "{shape}");
            continue;
        }
        assert!(
            run.stdout.contains("The get_weather tool returned:"),
            "{shape}: the call ran: {}\n{}",
            run.stdout,
            run.stderr
        );
        assert!(
            run.stderr.contains("kimi-tui: warning:"),
            "{shape}: {}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn chat_mode_with_and_without_the_servers_k3_parsers() {
    for markers_in_content in [false, true] {
        let run = exec(
            MockOptions {
                markers_in_content,
                ..MockOptions::default()
            },
            "chat",
        )
        .await;
        assert!(run.ok, "{markers_in_content}: {}", run.stderr);
        assert!(
            run.stdout.contains("The get_weather tool returned:"),
            "{markers_in_content}: {}\n{}",
            run.stdout,
            run.stderr
        );
        assert!(!run.stdout.contains("<|"), "{}", run.stdout);
        // Every assistant message went back with its reasoning.
        let second = &run.requests[1]["messages"];
        let assistant = second
            .as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
            .expect("the call's message");
        assert!(
            assistant["reasoning_content"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{markers_in_content}: {assistant}"
        );
    }
}
