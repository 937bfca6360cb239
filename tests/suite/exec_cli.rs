//! `kimi-tui exec` as a user runs it: the real binary, a real config file, the mock server on
//! loopback, real tool scripts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kimi_mock::{MockOptions, MockServer};
use serde_json::Value;

/// The binary, logging into a state directory of the test run's own (exec logs), never the
/// user's; a test that sets `XDG_STATE_HOME` itself overrides it.
pub(super) fn bin() -> Command {
    let state = std::env::temp_dir().join(format!("kimi-tui-test-state-{}", std::process::id()));
    let mut c = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    // The sessions exec saves go beside it, never to the user's data directory.
    c.env("XDG_DATA_HOME", state.join("data"));
    c.env("XDG_STATE_HOME", state);
    c
}

fn script(name: &str) -> String {
    kimi_test_support::tool_script(name)
}

/// A config file for `base_url` in `mode`, with the weather tool at `approval`.
fn config(dir: &Path, base_url: &str, mode: &str, approval: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "{mode}"
base_url = "{base_url}"
max_tokens = 2048

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["{weather}"]
approval = "{approval}"
timeout_secs = 10
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        weather = script("weather.sh")
    );
    std::fs::write(&path, text).expect("write config");
    path
}

pub(super) async fn exec(opts: MockOptions, mode: &str, approval: &str, args: &[&str]) -> Output {
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &server.base_url(), mode, approval);
    let mut cmd = bin();
    cmd.arg("exec").arg("--config").arg(&cfg).args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    server.shutdown().await;
    out
}

/// `exec ARGS` with a config of one profile, `[profiles.t]` then `profile` (its keys).
async fn exec_profile(profile: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, format!("[profiles.t]\n{profile}")).expect("config");
    let mut cmd = bin();
    cmd.arg("exec").arg("--config").arg(&cfg).args(args);
    tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join")
}

pub(super) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn a_plain_answer_streams_to_stdout() {
    for mode in ["raw", "chat"] {
        let o = exec(
            MockOptions::default(),
            mode,
            "ask",
            &["Tell me about Rust."],
        )
        .await;
        assert!(o.status.success(), "{mode}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(
            out.contains("```rust") && out.contains("你好"),
            "{mode}: {out}"
        );
        assert!(!out.contains("<|"), "{mode}: no markers");
    }
}

#[tokio::test]
async fn ask_tools_are_declined_without_yes_and_run_with_it() {
    for mode in ["raw", "chat"] {
        let o = exec(
            MockOptions::default(),
            mode,
            "ask",
            &["What's the weather in Paris?"],
        )
        .await;
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("not run"), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("only with --yes"),
            "the flag that approves is named: {}",
            text(&o.stderr)
        );
        assert!(text(&o.stdout).contains("declined"), "{}", text(&o.stdout));

        let o = exec(
            MockOptions::default(),
            mode,
            "ask",
            &["--yes", "--json", "What's the weather in Paris?"],
        )
        .await;
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("running with"),
            "{}",
            text(&o.stderr)
        );
        let conv: Value =
            serde_json::from_slice(&o.stdout).expect("stdout is the JSON conversation");
        let msgs = conv.as_array().expect("array");
        let roles: Vec<&str> = msgs
            .iter()
            .map(|m| m["role"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{mode}");
        assert_eq!(msgs[1]["tool_calls"][0]["id"], "functions.get_weather:0");
        assert_eq!(msgs[2]["tool_call_id"], "functions.get_weather:0");
        assert!(msgs[2]["content"].as_str().unwrap_or("").contains("Paris"));
        assert!(msgs[3]["content"].as_str().unwrap_or("").contains("Sunny"));
    }
}

#[tokio::test]
async fn deny_tools_never_run_even_with_yes() {
    let o = exec(
        MockOptions::default(),
        "raw",
        "deny",
        &["--yes", "What's the weather in Paris?"],
    )
    .await;
    assert!(o.status.success());
    assert!(!text(&o.stderr).contains("running with"));
    assert!(text(&o.stderr).contains("deny"), "{}", text(&o.stderr));
}

#[tokio::test]
async fn a_failure_exits_non_zero_with_one_clear_line() {
    let opts = MockOptions {
        fail_status: Some(503),
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["hello"]).await;
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("HTTP 503") && err.contains("mock failure"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
    assert_eq!(text(&o.stdout), "", "no stray newline on stdout");
}

/// A connection that fails before any answer: one line on stderr saying what failed and
/// what to try, never the HTTP library's chain.
#[tokio::test]
async fn connection_failures_are_one_line_saying_what_to_try() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let https = server.base_url().replacen("http://", "https://", 1);
    let cases = [
        (
            format!("http://127.0.0.1:{closed}/v1"),
            format!(
                "kimi-tui: error: Cannot connect to 127.0.0.1:{closed} (connection refused). Is the server running? Check with `kimi-tui doctor`."
            ),
        ),
        (
            https.clone(),
            "(TLS handshake failed: the server answered in plain HTTP). Use http:// instead of https:// in base_url.".to_owned(),
        ),
    ];
    for (url, said) in cases {
        let profile = format!("mode = \"chat\"\nbase_url = \"{url}\"\nretries = 0\n");
        let o = exec_profile(&profile, &["hi"]).await;
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&said), "{url}: {err}");
        assert!(!err.contains("error sending request"), "{err}");
        assert_eq!(text(&o.stdout), "");
    }
    server.shutdown().await;

    // A base_url without its scheme is refused before anything is sent.
    let o = bin()
        .args(["exec", "--base-url", "localhost:8000/v1", "hi"])
        .output()
        .expect("runs");
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--base-url") && err.contains("write \"http://localhost:8000/v1\""),
        "{err}"
    );
}

#[tokio::test]
async fn a_dropped_stream_still_prints_the_partial_conversation() {
    let opts = MockOptions {
        drop_after_bytes: Some(2000),
        ..MockOptions::default()
    };
    let o = exec(opts, "raw", "ask", &["--json", "Tell me about Rust."]).await;
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("dropped"), "{}", text(&o.stderr));
    let conv: Value = serde_json::from_slice(&o.stdout).expect("JSON even on failure");
    let msgs = conv.as_array().expect("array");
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1]["role"], "assistant");
    assert!(!msgs[1]["content"].as_str().unwrap_or("").is_empty());
}

#[test]
fn missing_and_broken_configs_are_explained() {
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("nope.toml");
    let o = bin()
        .args(["exec", "--config"])
        .arg(&missing)
        .arg("hi")
        .output()
        .expect("runs");
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("nope.toml"), "{}", text(&o.stderr));

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[profiles.x]\nbase_url = \"http://h/v1\"\nmax_tokens = \"lots\"\n",
    )
    .expect("write");
    let o = bin()
        .args(["exec", "--config"])
        .arg(&bad)
        .arg("hi")
        .output()
        .expect("runs");
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.toml:3") && err.contains("max_tokens"),
        "{err}"
    );

    // No config anywhere and no --base-url: say what to do.
    let o = bin()
        .args(["exec", "hi"])
        .env("XDG_CONFIG_HOME", dir.path().join("empty"))
        .env("HOME", dir.path().join("home"))
        .output()
        .expect("runs");
    let err = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("config init") && err.contains("--demo"),
        "{err}"
    );
}

/// A hostile call id (chat mode, through the mock's `tool_calls` flag) cannot add lines to the
/// tool activity on stderr: id, name and arguments stay on their line, escaped.
#[tokio::test]
async fn hostile_ids_and_arguments_stay_on_one_stderr_line() {
    let opts = MockOptions {
        tool_calls: vec![kimi_mock::ScriptedCall {
            id: Some(format!(
                "call_0\ncommand: ./safe.sh\n\u{1b}[2J{}",
                "\n".repeat(40)
            )),
            name: "get_weather".into(),
            arguments: "{\"city\": \"Paris\u{200b}\"}".into(),
        }],
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["--yes", "weather?"]).await;
    let err = text(&o.stderr);
    let running = err
        .lines()
        .find(|l| l.contains("running with"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        running.contains(r#"("call_0\ncommand: ./safe.sh\n\x1b[2J\n"#),
        "{running}"
    );
    assert!(running.contains("⚠ unusual id"), "{running}");
    assert!(running.contains(r#"Paris\u{200b}"#), "{running}");
    assert!(!err.lines().any(|l| l.starts_with("command:")), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// Bytes that drive a terminal when printed raw: ESC, C1 controls, bidi and zero-width format
/// characters, line/paragraph separators.
fn raw_controls(out: &str) -> Vec<char> {
    out.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2028}' | '\u{2029}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
        })
        .collect()
}

#[tokio::test]
async fn json_output_escapes_c1_bidi_and_invisible_characters() {
    // The mock quotes the question back: the model's answer carries them too.
    let question = "hi \u{9b}31m \u{1b}]0;title\u{7} \u{202e}gnp.exe \u{200b}x\u{2028}y";
    for mode in ["raw", "chat"] {
        let o = exec(MockOptions::default(), mode, "ask", &["--json", question]).await;
        assert!(o.status.success(), "{mode}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert_eq!(raw_controls(&out), Vec::<char>::new(), "{mode}: {out}");
        for esc in ["\\u009b", "\\u001b", "\\u202e", "\\u200b", "\\u2028"] {
            assert!(out.contains(esc), "{mode}: {esc} in {out}");
        }
        let back: Value = serde_json::from_str(&out).expect("still JSON");
        assert_eq!(back[0]["content"], question, "{mode}: same strings");
        assert!(
            back[1]["content"]
                .as_str()
                .is_some_and(|a| a.contains("\u{9b}31m") && a.contains("\u{202e}gnp")),
            "{mode}: {back}"
        );
    }
}

/// Runs `exec --yes --json` with `get_weather` bound to `/usr/bin/env` (plus `tool_extra` lines),
/// two profiles with keys and every key variable set in kimi-tui's own environment; returns the
/// lines the tool printed.
async fn tool_env_lines(tool_extra: &str) -> Vec<String> {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    let toml = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "raw"
base_url = "{base_url}"
api_key_env = "KIMI_T_ACTIVE_KEY"

[profiles.other]
mode = "chat"
base_url = "https://api.example.com/v1"
api_key_env = "KIMI_T_OTHER_KEY"

[[tools]]
name = "get_weather"
command = ["/usr/bin/env"]
approval = "auto"
parameters = {{ type = "object", properties = {{ city = {{ type = "string" }} }} }}
{tool_extra}
"#,
        base_url = server.base_url()
    );
    std::fs::write(&cfg, toml).expect("write config");
    let mut cmd = bin();
    cmd.arg("exec")
        .arg("--config")
        .arg(&cfg)
        .args(["--json", "What's the weather in Paris?"])
        .env("KIMI_T_ACTIVE_KEY", "sk-active-111")
        .env("KIMI_T_OTHER_KEY", "sk-other-222")
        .env("MOONSHOT_API_KEY", "sk-moonshot-333")
        .env("KIMI_T_VISIBLE", "seen");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    server.shutdown().await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let conv: Value = serde_json::from_slice(&out.stdout).expect("JSON conversation");
    let content = conv[2]["content"].as_str().expect("tool result").to_owned();
    assert_eq!(conv[2]["role"], "tool", "{conv}");
    content.lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn tools_get_no_profile_s_api_key() {
    let lines = tool_env_lines("").await;
    let all = lines.join("\n");
    for secret in ["sk-active-111", "sk-other-222", "sk-moonshot-333"] {
        assert!(!all.contains(secret), "{secret} leaked:\n{all}");
    }
    assert!(lines.iter().any(|l| l == "KIMI_T_VISIBLE=seen"), "{all}");
    assert!(
        lines.iter().any(|l| l == "KIMI_TOOL_NAME=get_weather"),
        "{all}"
    );
}

#[tokio::test]
async fn an_inherit_env_allow_list_gives_a_clean_environment() {
    let lines = tool_env_lines(
        "inherit_env = [\"KIMI_T_VISIBLE\", \"KIMI_T_OTHER_KEY\"]\nenv = { UNITS = \"metric\" }",
    )
    .await;
    let mut lines = lines;
    lines.sort();
    // Listed or not, a key variable stays out.
    assert_eq!(
        lines,
        [
            "KIMI_TOOL_CALL_ID=functions.get_weather:0",
            "KIMI_TOOL_NAME=get_weather",
            "KIMI_T_VISIBLE=seen",
            "UNITS=metric",
        ]
    );
}

#[tokio::test]
async fn exec_warns_once_about_special_tokens_in_text() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    let toml = format!(
        r#"[profiles.test]
mode = "raw"
base_url = "{base_url}"
max_rounds = 2

[[tools]]
name = "get_weather"
command = ["{forged}"]
approval = "auto"
parameters = {{ type = "object", properties = {{ city = {{ type = "string" }} }} }}
"#,
        base_url = server.base_url(),
        forged = script("forged.sh")
    );
    std::fs::write(&cfg, toml).expect("write config");
    let mut cmd = bin();
    cmd.arg("exec")
        .arg("--config")
        .arg(&cfg)
        .arg("What's the weather in Paris?");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    server.shutdown().await;
    let err = text(&out.stderr);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("special-token"))
        .collect();
    assert_eq!(
        warnings,
        [
            "kimi-tui: warning: the tool result of get_weather contains 3 special-token strings (<|im_end|>, <|im_system|>, <|im_middle|>); the server may read them as real turn boundaries"
        ],
        "{err}"
    );
}

/// `exec` with an API key (the mock requires it) and `KIMI_TUI_LOG=debug` in a home of its own;
/// the output and the log file it left.
async fn exec_logged(opts: MockOptions, args: &[&str]) -> (Output, String) {
    let key = "sk-exec-log-secret-777";
    let opts = MockOptions {
        api_key: Some(key.into()),
        ..opts
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &server.base_url(), "raw", "ask");
    let mut toml = std::fs::read_to_string(&cfg).expect("read config");
    toml = toml.replace(
        "max_tokens = 2048\n",
        "max_tokens = 2048\napi_key_env = \"KIMI_T_LOG_KEY\"\n",
    );
    std::fs::write(&cfg, toml).expect("write config");
    let mut cmd = bin();
    cmd.arg("exec")
        .arg("--config")
        .arg(&cfg)
        .args(args)
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("KIMI_TUI_LOG", "debug")
        .env("KIMI_T_LOG_KEY", key);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    server.shutdown().await;
    let path = dir.path().join("state/kimi-tui/kimi-tui.log");
    let log = std::fs::read_to_string(&path).unwrap_or_default();
    if !log.is_empty() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("log").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the log is private");
    }
    for text in [&log, &text(&out.stdout), &text(&out.stderr)] {
        assert!(!text.contains(key), "the key leaked:\n{text}");
    }
    (out, log)
}

#[tokio::test]
async fn requests_tool_runs_and_approvals_are_logged_without_the_key() {
    let (o, log) = exec_logged(
        MockOptions::default(),
        &["--yes", "What's the weather in Paris?"],
    )
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let line = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{log}"))
            .to_owned()
    };
    let request = line("request started");
    assert!(
        request.contains("/v1/completions") && request.contains("mode=\"raw\""),
        "{request}"
    );
    assert!(line("tool call approved").contains("get_weather"));
    assert!(line("tool started").contains("get_weather"));
    let finished = line("tool finished");
    assert!(
        finished.contains("exit_code=0") && finished.contains("ms="),
        "{finished}"
    );
    assert!(line("stream ended").contains("tool_calls"));
    // Two requests: the call, then the answer to its result.
    assert_eq!(log.matches("request started").count(), 2, "{log}");
    // Nothing of the log on the terminal.
    assert!(!text(&o.stderr).contains("request started"));
}

#[tokio::test]
async fn a_failed_stream_leaves_its_cause_in_the_log() {
    let (o, log) = exec_logged(
        MockOptions {
            fail_status: Some(503),
            ..MockOptions::default()
        },
        &["hello"],
    )
    .await;
    assert!(!o.status.success());
    let failed = log
        .lines()
        .find(|l| l.contains("stream failed"))
        .unwrap_or_else(|| panic!("no failure line in:\n{log}"));
    assert!(
        failed.contains("ERROR") && failed.contains("status=503"),
        "{failed}"
    );
    assert!(failed.contains("kind=\"http\""), "{failed}");
}

/// `--json-stream`'s lines, each parsed as JSON.
fn stream_lines(o: &Output) -> Vec<Value> {
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The event types in order, a run of one type counted once.
fn sequence(lines: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in lines {
        let t = l["type"].as_str().unwrap_or("?").to_owned();
        if out.last() != Some(&t) {
            out.push(t);
        }
    }
    out
}

#[tokio::test]
async fn json_stream_prints_one_event_per_line_in_order() {
    let o = exec(
        MockOptions::default(),
        "chat",
        "ask",
        &["--yes", "--json-stream", "What's the weather in Paris?"],
    )
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines = stream_lines(&o);
    assert_eq!(
        sequence(&lines),
        [
            "round",
            "text",
            "tool_call",
            "approval",
            "tool_result",
            "round",
            "text",
            "turn_end"
        ],
        "{}",
        text(&o.stdout)
    );
    let call = lines
        .iter()
        .find(|l| l["type"] == "tool_call")
        .expect("call");
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["id"], "functions.get_weather:0");
    let args: Value = serde_json::from_str(call["arguments"].as_str().expect("arguments text"))
        .expect("whole arguments");
    assert_eq!(args["city"], "Paris");
    let approval = lines
        .iter()
        .find(|l| l["type"] == "approval")
        .expect("approval");
    assert_eq!(
        (&approval["approved"], &approval["by"]),
        (&Value::Bool(true), &Value::from("--yes"))
    );
    let result = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .expect("result");
    assert_eq!(
        (&result["ok"], &result["status"]),
        (&Value::Bool(true), &Value::from("ok"))
    );
    assert!(
        result["output"].as_str().unwrap_or("").contains("Paris"),
        "{result}"
    );
    let answer: String = lines
        .iter()
        .skip_while(|l| l["type"] != "tool_result")
        .filter(|l| l["type"] == "text")
        .filter_map(|l| l["text"].as_str())
        .collect();
    assert!(answer.contains("Sunny"), "{answer}");
    let end = lines.last().expect("an end");
    assert_eq!(end["stop_reason"], "stop");
    assert_eq!(end["rounds"], 2);
    assert!(
        end["usage"]["total_tokens"].as_u64().unwrap_or(0) > 0,
        "{end}"
    );

    // Without --yes: the call is declined, saying why.
    let o = exec(
        MockOptions::default(),
        "raw",
        "ask",
        &["--json-stream", "What's the weather in Paris?"],
    )
    .await;
    let lines = stream_lines(&o);
    let approval = lines
        .iter()
        .find(|l| l["type"] == "approval")
        .expect("approval");
    assert_eq!(approval["approved"], false);
    assert_eq!(approval["by"], "exec without --yes");
    let result = lines
        .iter()
        .find(|l| l["type"] == "tool_result")
        .expect("result");
    assert_eq!(
        (&result["ran"], &result["ok"]),
        (&Value::Bool(false), &Value::Bool(false))
    );
}

#[tokio::test]
async fn json_stream_ends_a_failed_turn_with_its_error() {
    let opts = MockOptions {
        fail_status: Some(400),
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["--json-stream", "hello"]).await;
    assert!(!o.status.success());
    let lines = stream_lines(&o);
    assert_eq!(
        sequence(&lines),
        ["round", "error", "turn_end"],
        "{}",
        text(&o.stdout)
    );
    assert!(
        lines[1]["message"]
            .as_str()
            .unwrap_or("")
            .contains("HTTP 400"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["stop_reason"], "error");

    // Reasoning deltas of a thinking model come as their own events, before the answer.
    let thinking = MockOptions {
        model: "kimi-k2-thinking".into(),
        ..MockOptions::default()
    };
    let server = MockServer::start(thinking, 0).await.expect("mock");
    let profile = format!(
        "mode = \"chat\"\nmodel = \"kimi-k2-thinking\"\nbase_url = \"{}\"\n",
        server.base_url()
    );
    let o = exec_profile(&profile, &["--json-stream", "Tell me about Rust."]).await;
    server.shutdown().await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let seq = sequence(&stream_lines(&o));
    assert_eq!(
        seq,
        ["round", "reasoning", "text", "turn_end"],
        "{}",
        text(&o.stdout)
    );
}
