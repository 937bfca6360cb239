//! `kimi-tui doctor` as a user runs it: the real binary, a real config file in a temp dir, the
//! mock server (or a closed port, or a tiny stub server) on loopback. Every branch of every
//! check, asserted on the printed lines and the exit code.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use kimi_mock::{MockOptions, MockServer};
use serde_json::Value;

const KEY_VAR: &str = "KIMI_DOCTOR_TEST_KEY";

fn weather_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/tools/weather.sh")
        .display()
        .to_string()
}

/// A config with one profile `test` and the weather tool (absolute path), plus `extra` TOML.
pub(super) fn write_config(dir: &Path, base_url: &str, mode: &str, extra: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "{mode}"
base_url = "{base_url}"
{extra}

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["{weather}"]
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        weather = weather_script()
    );
    std::fs::write(&path, text).expect("write config");
    path
}

pub(super) struct Run {
    pub(super) code: Option<i32>,
    pub(super) out: String,
    pub(super) err: String,
}

impl Run {
    /// The line starting with `prefix` (a status symbol and a check name).
    pub(super) fn line(&self, prefix: &str) -> &str {
        self.out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{}", self.out))
    }

    /// The `fix:` line right after the line starting with `prefix`.
    fn fix(&self, prefix: &str) -> &str {
        let mut lines = self.out.lines().skip_while(|l| !l.starts_with(prefix));
        lines.next();
        match lines.next() {
            Some(l) if l.starts_with("  fix: ") => l,
            _ => panic!("no fix line after {prefix:?} in:\n{}", self.out),
        }
    }

    pub(super) fn has(&self, prefix: &str) -> bool {
        self.out.lines().any(|l| l.starts_with(prefix))
    }
}

/// Run `kimi-tui doctor ARGS` in `cwd` with `env` set (and the test key variable unset unless
/// given).
pub(super) async fn doctor(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.arg("doctor")
        .args(args)
        .current_dir(cwd)
        .env_remove(KEY_VAR)
        .env("XDG_CONFIG_HOME", cwd.join("xdg-config"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    Run {
        code: out.status.code(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Doctor against a mock started with `opts`, profile in `mode` with `extra` TOML.
pub(super) async fn against_mock(opts: MockOptions, mode: &str, extra: &str) -> (Run, Vec<Value>) {
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(dir.path(), &server.base_url(), mode, extra);
    let run = doctor(dir.path(), &["--config", &cfg.display().to_string()], &[]).await;
    let requests = server.requests();
    server.shutdown().await;
    (run, requests)
}

#[tokio::test]
async fn raw_mode_passes_against_the_mock() {
    let (r, requests) = against_mock(MockOptions::default(), "raw", "").await;
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.line("✓ config: ").contains("profile `test`: raw mode"));
    assert!(r.line("✓ API key: ").contains("none configured"));
    assert!(r.line("✓ server: ").contains("/models answered (1 model)"));
    assert!(
        r.line("✓ model: ")
            .contains("moonshotai/Kimi-K2-Instruct is served")
    );
    assert!(
        r.line("✓ special tokens: ").contains("<|tool_call_end|>"),
        "{}",
        r.out
    );
    assert!(r.line("✓ tool get_weather: ").contains("weather.sh"));
    assert!(r.out.ends_with("all checks passed\n"), "{}", r.out);
    assert!(!r.out.contains('✗'));
    // The probe: one completions request that keeps special tokens and ends inside a call.
    assert_eq!(requests.len(), 1, "{requests:?}");
    let body = &requests[0];
    assert_eq!(body["skip_special_tokens"], false);
    assert_eq!(body["spaces_between_special_tokens"], false);
    assert_eq!(body["max_tokens"], 16);
    let prompt = body["prompt"].as_str().expect("prompt");
    assert!(prompt.starts_with("<|im_system|>tool_declare<|im_middle|>"));
    assert!(
        prompt.ends_with(
            "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}"
        ),
        "{prompt}"
    );
}

#[tokio::test]
async fn chat_mode_passes_against_the_mock() {
    let (r, requests) = against_mock(MockOptions::default(), "chat", "").await;
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert_eq!(
        r.line("✓ tool calls: "),
        "✓ tool calls: parsed by the server (get_weather {\"city\": \"Beijing\"})"
    );
    assert!(!r.has("✓ special tokens"), "no raw check in chat mode");
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0]["messages"][0]["content"],
        "What's the weather in Beijing? Use the tool."
    );
    assert_eq!(requests[0]["tools"][0]["function"]["name"], "get_weather");
}

#[tokio::test]
async fn stripped_special_tokens_are_reported() {
    let opts = MockOptions {
        strip_special_tokens: true,
        ..MockOptions::default()
    };
    let (r, _) = against_mock(opts, "raw", "").await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.line("✗ special tokens: ")
            .contains("special tokens are stripped: the server ignores skip_special_tokens=false"),
        "{}",
        r.out
    );
    assert!(
        r.fix("✗ special tokens: ")
            .contains("use a vLLM/SGLang version that honours"),
        "{}",
        r.out
    );
    assert!(r.line("✓ server: ").contains("answered"));
    assert!(r.err.contains("1 check failed"), "{}", r.err);
}

#[tokio::test]
async fn a_chat_server_with_its_tool_parser_off_is_reported() {
    let opts = MockOptions {
        markers_in_content: true,
        ..MockOptions::default()
    };
    let (r, _) = against_mock(opts, "chat", "").await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    let line = r.line("✗ tool calls: ");
    assert!(line.contains("the server's tool parser is off"), "{line}");
    assert!(
        line.contains("<|tool_call_begin|>"),
        "shows what came: {line}"
    );
    assert!(
        r.fix("✗ tool calls: ")
            .contains("--enable-auto-tool-choice --tool-call-parser kimi_k2"),
        "{}",
        r.out
    );
}

#[tokio::test]
async fn http_errors_are_explained_in_both_modes() {
    for (status, fix_needle) in [(401, "api_key_env"), (404, "base_url"), (500, "log")] {
        for (mode, check) in [("raw", "special tokens"), ("chat", "tool calls")] {
            let opts = MockOptions {
                fail_status: Some(status),
                ..MockOptions::default()
            };
            let (r, _) = against_mock(opts, mode, "").await;
            assert_eq!(r.code, Some(1), "{status} {mode}: {}", r.out);
            let prefix = format!("✗ {check}: ");
            let line = r.line(&prefix);
            assert!(line.contains(&format!("HTTP {status}")), "{line}");
            assert!(
                line.contains(&format!("mock failure: HTTP {status}")),
                "the server's own words: {line}"
            );
            assert!(
                r.fix(&prefix).contains(fix_needle),
                "{status} {mode}: {}",
                r.out
            );
        }
    }
}

#[tokio::test]
async fn a_wrong_model_name_lists_what_is_served() {
    let opts = MockOptions {
        model: "kimi-k2-served".into(),
        ..MockOptions::default()
    };
    let (r, requests) = against_mock(opts, "raw", "").await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert_eq!(
        r.line("✗ model: "),
        "✗ model: moonshotai/Kimi-K2-Instruct is not served; the server lists: kimi-k2-served"
    );
    assert_eq!(
        r.fix("✗ model: "),
        "  fix: set model = \"kimi-k2-served\" in profile `test` (or pass --model)"
    );
    assert!(r.line("! special tokens: ").contains("not checked"));
    assert!(
        requests.is_empty(),
        "no generation request after a bad model"
    );
    // --model fixes it.
    let server = MockServer::start(
        MockOptions {
            model: "kimi-k2-served".into(),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(dir.path(), &server.base_url(), "raw", "");
    let cfg = cfg.display().to_string();
    let r = doctor(
        dir.path(),
        &["--config", &cfg, "--model", "kimi-k2-served"],
        &[],
    )
    .await;
    server.shutdown().await;
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.line("✓ model: ").contains("kimi-k2-served"));
}

#[tokio::test]
async fn a_closed_port_says_to_start_the_server_and_still_checks_tools() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(
        dir.path(),
        &format!("http://127.0.0.1:{port}/v1"),
        "raw",
        "",
    );
    let r = doctor(dir.path(), &["--config", &cfg.display().to_string()], &[]).await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    let line = r.line("✗ server: ");
    assert!(
        line.contains(&format!(
            "Cannot connect to 127.0.0.1:{port} (connection refused)"
        )) && !line.contains("os error")
            && !line.contains("doctor"),
        "{line}"
    );
    let fix = r.fix("✗ server: ");
    assert!(
        fix.contains("start the model server") && fix.contains("vllm serve"),
        "{fix}"
    );
    assert!(r.line("! model: ").contains("not checked"));
    assert!(r.line("! special tokens: ").contains("not checked"));
    assert!(r.has("✓ tool get_weather: "), "{}", r.out);
}

#[tokio::test]
async fn tool_programs_are_checked_like_the_runner_resolves_them() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let dir = tempfile::tempdir().expect("tmp");
    let tools = dir.path().join("tools");
    std::fs::create_dir(&tools).expect("mkdir");
    let ok = tools.join("ok.sh");
    std::fs::write(&ok, "#!/bin/sh\necho ok\n").expect("write");
    std::fs::set_permissions(&ok, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let plain = tools.join("plain.sh");
    std::fs::write(&plain, "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let extra = r#"
[[tools]]
name = "relative_ok"
command = ["./tools/ok.sh"]

[[tools]]
name = "in_cwd"
command = ["./ok.sh"]
cwd = "tools"

[[tools]]
name = "missing"
command = ["./tools/nope.sh"]

[[tools]]
name = "not_executable"
command = ["./tools/plain.sh"]

[[tools]]
name = "on_path"
command = ["sh", "-c", "true"]

[[tools]]
name = "not_on_path"
command = ["kimi-doctor-no-such-command"]

[[tools]]
name = "bad_cwd"
command = ["./ok.sh"]
cwd = "no-such-dir"
"#;
    let cfg = write_config(
        dir.path(),
        &format!("http://127.0.0.1:{port}/v1"),
        "raw",
        "",
    );
    let mut text = std::fs::read_to_string(&cfg).expect("read");
    text.push_str(extra);
    std::fs::write(&cfg, text).expect("write");
    let r = doctor(dir.path(), &["--config", &cfg.display().to_string()], &[]).await;
    assert_eq!(r.code, Some(1));
    let here = dir.path().display().to_string();
    assert!(
        r.line("✓ tool relative_ok: ")
            .contains(&format!("{here}/tools/ok.sh")),
        "{}",
        r.out
    );
    assert!(
        r.line("✓ tool in_cwd: ")
            .contains(&format!("{here}/tools/ok.sh"))
    );
    assert!(r.line("✓ tool on_path: ").contains("/sh"));
    let missing = r.line("✗ tool missing: ");
    assert!(
        missing.contains(&format!("no file at {here}/tools/nope.sh")),
        "{missing}"
    );
    assert!(
        r.fix("✗ tool missing: ")
            .contains("command[0] of tool `missing`")
    );
    assert!(
        r.line("✗ tool not_executable: ")
            .contains("is not executable")
    );
    assert_eq!(
        r.fix("✗ tool not_executable: "),
        format!("  fix: chmod +x {here}/tools/plain.sh")
    );
    assert!(
        r.line("✗ tool not_on_path: ")
            .contains("`kimi-doctor-no-such-command` is not found on PATH")
    );
    assert!(r.line("✗ tool bad_cwd: ").contains("working directory"));
    assert!(r.err.contains("5 checks failed"), "{}", r.err);
}

#[tokio::test]
async fn api_keys_are_checked_and_never_printed() {
    const SECRET: &str = "sk-doctor-secret-4711";
    let server = MockServer::start(
        MockOptions {
            api_key: Some(SECRET.into()),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let extra = format!("api_key_env = \"{KEY_VAR}\"");
    let cfg = write_config(dir.path(), &server.base_url(), "chat", &extra);
    let cfg = cfg.display().to_string();

    let good = doctor(dir.path(), &["--config", &cfg], &[(KEY_VAR, SECRET)]).await;
    assert_eq!(good.code, Some(0), "{}", good.out);
    assert_eq!(
        good.line("✓ API key: "),
        format!("✓ API key: ${KEY_VAR} is set")
    );
    assert!(!good.out.contains(SECRET) && !good.err.contains(SECRET));

    let wrong = doctor(dir.path(), &["--config", &cfg], &[(KEY_VAR, "sk-wrong")]).await;
    assert_eq!(wrong.code, Some(1));
    assert!(wrong.line("✗ server: ").contains("HTTP 401"));
    assert!(
        wrong
            .fix("✗ server: ")
            .contains(&format!("check the API key in ${KEY_VAR}"))
    );
    assert!(!wrong.out.contains("sk-wrong"));

    let unset = doctor(dir.path(), &["--config", &cfg], &[]).await;
    server.shutdown().await;
    assert_eq!(unset.code, Some(1));
    assert!(unset.line("✗ API key: ").contains(KEY_VAR));
    assert!(
        unset
            .fix("✗ API key: ")
            .contains(&format!("export {KEY_VAR}="))
    );
    assert!(
        unset.line("✗ server: ").contains("HTTP 401"),
        "the server is still asked"
    );
    assert!(unset.err.contains("2 checks failed"), "{}", unset.err);
}

#[tokio::test]
async fn config_problems_stop_the_other_checks() {
    let dir = tempfile::tempdir().expect("tmp");
    // No config anywhere.
    let r = doctor(dir.path(), &[], &[]).await;
    assert_eq!(r.code, Some(1));
    assert!(r.line("✗ config: ").contains("no config file at"));
    assert!(r.fix("✗ config: ").contains("kimi-tui config init"));
    assert!(r.line("! other checks: ").contains("not run"));
    assert!(!r.has("✓ server") && !r.has("✗ server"));

    // An explicit path that does not exist.
    let r = doctor(dir.path(), &["--config", "missing.toml"], &[]).await;
    assert!(r.line("✗ config: ").contains("missing.toml"));
    assert!(r.fix("✗ config: ").contains("config init --config"));

    // A mistake in the file: named with its line.
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[profiles.a]\nbase_url = \"http://127.0.0.1:1/v1\"\ntemprature = 0.5\n",
    )
    .expect("write");
    let r = doctor(dir.path(), &["--config", &path.display().to_string()], &[]).await;
    assert_eq!(r.code, Some(1));
    let line = r.line("✗ config: ");
    assert!(
        line.contains("bad.toml:3") && line.contains("temprature"),
        "{line}"
    );
    assert!(r.fix("✗ config: ").contains("config.example.toml"));

    // An unknown profile.
    let cfg = write_config(dir.path(), "http://127.0.0.1:1/v1", "raw", "");
    let r = doctor(
        dir.path(),
        &["--config", &cfg.display().to_string(), "--profile", "nope"],
        &[],
    )
    .await;
    assert!(r.line("✗ config: ").contains("no profile named `nope`"));
    assert!(r.fix("✗ config: ").contains("--profile"));
}

#[tokio::test]
async fn a_base_url_without_v1_is_a_warning() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let root = server.base_url().trim_end_matches("/v1").to_owned();
    let cfg = write_config(dir.path(), &root, "raw", "");
    let r = doctor(dir.path(), &["--config", &cfg.display().to_string()], &[]).await;
    server.shutdown().await;
    assert!(r.line("! base_url: ").contains("does not end in /v1"));
    // The mock answers 404 outside /v1.
    assert!(r.line("✗ server: ").contains("HTTP 404"));
    assert!(r.fix("✗ server: ").contains("it should end in /v1"));
}

/// A server whose model answers without calling the tool, and whose completions endpoint
/// answers without `choices`.
async fn stub_server() -> (String, tokio::task::JoinHandle<()>) {
    use axum::Json;
    use axum::routing::{get, post};
    use serde_json::json;
    let app = axum::Router::new()
        .route(
            "/v1/models",
            get(|| async { Json(json!({"data": [{"id": "moonshotai/Kimi-K2-Instruct"}]})) }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async {
                Json(
                    json!({"choices": [{"index": 0, "message": {"role": "assistant",
                    "content": "It is sunny in Beijing."}, "finish_reason": "stop"}]}),
                )
            }),
        )
        .route(
            "/v1/completions",
            post(|| async { Json(json!({"object": "error", "message": "odd"})) }),
        );
    serve(app).await
}

/// Serve `app` on a free loopback port: its base URL (`.../v1`) and the task serving it.
pub(super) async fn serve(app: axum::Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

#[tokio::test]
async fn a_model_that_does_not_call_the_tool_is_reported() {
    let (url, task) = stub_server().await;
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(dir.path(), &url, "chat", "");
    let cfg = cfg.display().to_string();
    let r = doctor(dir.path(), &["--config", &cfg], &[]).await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    let line = r.line("✗ tool calls: ");
    assert!(
        line.contains("the model did not call the tool")
            && line.contains("It is sunny in Beijing."),
        "{line}"
    );
    assert!(r.fix("✗ tool calls: ").contains("Kimi K2"));

    let r = doctor(dir.path(), &["--config", &cfg, "--mode", "raw"], &[]).await;
    task.abort();
    assert!(
        r.line("✗ special tokens: ")
            .contains("has no choices[0].text"),
        "{}",
        r.out
    );
}

/// The `--strip-special-tokens` flag of the real `kimi-tui mock-server`.
#[test]
fn the_mock_server_binary_can_strip_special_tokens() {
    let server = super::mock_process::MockProcess::start(["--strip-special-tokens"]);
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(dir.path(), &server.url, "raw", "");
    let out = Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(["doctor", "--config", &cfg.display().to_string()])
        .current_dir(dir.path())
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("✗ special tokens: special tokens are stripped"),
        "{stdout}"
    );
}

/// A Kimi K3 model in the mock.
fn k3(split_markers: bool, markers_in_content: bool) -> MockOptions {
    MockOptions {
        model: "kimi-k3".into(),
        split_markers,
        markers_in_content,
        ..MockOptions::default()
    }
}

#[tokio::test]
async fn a_k3_model_in_raw_mode_is_recognised_and_its_tokens_checked() {
    let (r, _) = against_mock(k3(false, false), "raw", "model = \"kimi-k3\"").await;
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.line("✓ model family: ").contains("Kimi K3"), "{}", r.out);
    assert!(
        r.line("✓ K3 raw round: ")
            .contains(r#"get_weather {"city": "Beijing"}"#),
        "{}",
        r.out
    );
    assert!(
        r.line("✓ special tokens: ")
            .contains("single tokens with K3's ids"),
        "{}",
        r.out
    );
    // The same answer with its markers spelled from ordinary tokens: named, with the ids.
    let (r, _) = against_mock(k3(true, false), "raw", "model = \"kimi-k3\"").await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    let line = r.line("✗ special tokens: ");
    assert!(
        line.contains("spelled from ordinary tokens") && line.contains("as ids ["),
        "{line}"
    );
}

#[tokio::test]
async fn a_k3_model_in_chat_mode_says_whether_the_server_runs_the_k3_parsers() {
    let (r, _) = against_mock(k3(false, false), "chat", "model = \"kimi-k3\"").await;
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(
        r.line("✓ reasoning: ")
            .contains("kimi_k3 reasoning parser is on")
    );
    assert!(
        r.line("✓ tool calls: ")
            .contains("get_weather get_weather_0"),
        "{}",
        r.out
    );
    let (r, _) = against_mock(k3(false, true), "chat", "model = \"kimi-k3\"").await;
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(
        r.line("✗ tool calls: ")
            .contains("K3 markers came back in content")
    );
    assert!(
        r.fix("✗ tool calls: ")
            .contains("--tool-call-parser kimi_k3")
    );
}

#[tokio::test]
async fn the_sandbox_line_says_what_this_kernel_enforces() {
    use kimi_core::tools::sandbox::{SandboxMode, SandboxPolicy, check, support};
    let extra = "[[tools]]\nname = \"offline\"\ncommand = [\"true\"]\nsandbox = \"read-only\"\nnetwork = false\n";
    let (r, _) = against_mock(MockOptions::default(), "raw", extra).await;
    let support = support();
    let policy = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        network: false,
    };
    match check(policy, support) {
        Ok(()) => {
            assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
            assert_eq!(
                r.line("✓ sandbox: "),
                format!("✓ sandbox: {}", support.summary())
            );
            assert!(r.line("✓ sandbox: ").contains("Landlock ABI"), "{}", r.out);
        }
        Err(why) => {
            // The config is right; the tool refuses to run here, and doctor says so.
            assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
            assert_eq!(
                r.line("! tool offline: "),
                format!("! tool offline: will not run here: {why}")
            );
            assert!(r.fix("! tool offline: ").contains("Landlock"), "{}", r.out);
            assert!(r.has("! sandbox: "), "{}", r.out);
        }
    }
}
