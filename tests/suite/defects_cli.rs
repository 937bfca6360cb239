//! Defects once found in daily use, seen through the binary: doctor probing as the real
//! requests go, `config init` followed by a passing `doctor`, `exec`'s stderr and its error
//! texts.

use kimi_mock::MockOptions;

use super::doctor::against_mock;

#[tokio::test]
async fn doctor_passes_against_a_server_that_always_streams() {
    for mode in ["raw", "chat"] {
        let opts = MockOptions {
            always_stream: true,
            chunk_bytes: Some(3),
            ..MockOptions::default()
        };
        let (r, requests) = against_mock(opts, mode, "").await;
        assert_eq!(r.code, Some(0), "{mode}: {}\n{}", r.out, r.err);
        assert!(!r.out.contains('✗'), "{mode}: {}", r.out);
        // The probe asks for a stream, like the app's own requests.
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0]["stream"], true, "{mode}");
    }
    // The chat probe puts the call together from its streamed deltas.
    let (r, _) = against_mock(MockOptions::default(), "chat", "").await;
    assert!(
        r.line("✓ tool calls: ").contains("get_weather {\"city\""),
        "{}",
        r.out
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_passes_right_after_config_init_from_any_directory() {
    let server = kimi_mock::MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let home = tempfile::tempdir().expect("tmp");
    // Run from a directory that is not the source tree: relative tool paths would fail here.
    let elsewhere = home.path().join("somewhere/else");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let bin = env!("CARGO_BIN_EXE_kimi-tui");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .current_dir(&elsewhere)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .output()
            .expect("runs")
    };
    let init = tokio::task::block_in_place(|| run(&["config", "init"]));
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let url = server.base_url();
    let out = tokio::task::block_in_place(|| run(&["doctor", "--base-url", &url]));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for tool in ["get_weather", "get_time", "list_dir"] {
        assert!(text.contains(&format!("✓ tool {tool}: ")), "{text}");
    }
    // The example tools run sandboxed; a kernel that cannot confine them gets a warning each.
    use kimi_core::tools::sandbox::{SandboxMode, SandboxPolicy, check, support};
    let example = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        network: false,
    };
    let end = match check(example, support()) {
        Ok(()) => "all checks passed\n",
        Err(_) => "all checks passed (3 warnings)\n",
    };
    assert!(text.ends_with(end), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn exec_caps_long_tool_arguments_on_stderr_and_names_where_errors_come_from() {
    use super::exec_cli::{exec, text};
    let city = "Paris ".repeat(170);
    let opts = MockOptions {
        tool_calls: vec![kimi_mock::ScriptedCall {
            id: None,
            name: "get_weather".into(),
            arguments: serde_json::json!({"city": city, "units": "metric"}).to_string(),
        }],
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["--yes", "weather?"]).await;
    let err = text(&o.stderr);
    let running = err
        .lines()
        .find(|l| l.contains("running with"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(running.chars().count() < 400, "{running}");
    assert!(
        running.contains("bytes in all, keys: city, units"),
        "{running}"
    );
    // A failing server: the error says which profile of which file sent the request.
    let opts = MockOptions {
        fail_status: Some(401),
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["hello"]).await;
    let err = text(&o.stderr);
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(err.contains("profile `test` in "), "{err}");
    assert!(err.contains("config.toml]"), "{err}");
}
