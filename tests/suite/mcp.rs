//! MCP servers, hermetic: the client side (`kimi_core::tools::mcp`) against the real
//! `kimi-tui mock-mcp-server` child (rmcp's server side over stdio): listing, calls, an error
//! result, a slow call cancelled (the server hears `notifications/cancelled`), a call timeout,
//! a crash mid-call, servers that fail to start, the process group killed on shutdown, and
//! `exec` using an MCP tool through the agent loop.

use std::path::Path;
use std::time::Duration;

use kimi_core::tools::mcp::{McpHub, McpServerConfig, ServerStatus};
use kimi_core::tools::{Approval, CallProblem, Failure, ToolResult, ToolSpec, ToolStatus, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use tokio_util::sync::CancellationToken;

fn exe() -> String {
    env!("CARGO_BIN_EXE_kimi-tui").to_owned()
}

fn mock_server(name: &str) -> McpServerConfig {
    McpServerConfig::stdio(name, vec![exe(), "mock-mcp-server".to_owned()])
}

/// A toolbox with one local tool and the servers, started and settled.
async fn started(servers: Vec<McpServerConfig>) -> (Toolbox, McpHub) {
    let local = Toolbox::new(vec![ToolSpec::new("local_tool", vec!["true".to_owned()])])
        .expect("valid local tool");
    let hub = McpHub::new(servers, local.names());
    hub.start();
    hub.wait_started(Duration::from_secs(20)).await;
    (local.with_mcp(hub.clone()), hub)
}

async fn call(tb: &Toolbox, name: &str, args: &str) -> (ToolResult, String) {
    let spec = tb.find(name).expect("offered");
    let args = tb
        .check_call(name, args)
        .expect("valid arguments")
        .to_string();
    let result = tb
        .run_call(
            &spec,
            "functions.x:0",
            &args,
            CancellationToken::new(),
            None,
        )
        .await;
    let content = result.content.clone();
    (result, content)
}

/// Poll `cond` for up to 10 s.
async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cond()
}

#[tokio::test]
async fn tools_are_listed_offered_validated_and_called() {
    let mut server = mock_server("t");
    server.tools.insert(
        "add".to_owned(),
        kimi_core::tools::mcp::McpToolConfig {
            approval: Approval::Auto,
        },
    );
    server.disabled_tools = vec!["crash".to_owned()];
    let (tb, hub) = started(vec![server]).await;
    let reports = hub.reports();
    assert_eq!(reports[0].status, ServerStatus::Ready, "{reports:?}");
    assert_eq!(
        reports[0].tools,
        [
            "mcp__t__echo",
            "mcp__t__add",
            "mcp__t__fail",
            "mcp__t__image",
            "mcp__t__slow",
            "mcp__t__ask"
        ]
    );
    assert!(reports[0].stderr_tail.contains("mock MCP server: ready"));

    // Offered to the model after the local tools, with the server's schema.
    let declared = tb.openai_tools();
    let names: Vec<&str> = declared
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names[0], "local_tool");
    assert_eq!(names[1], "mcp__t__echo");
    assert_eq!(declared[1]["function"]["parameters"]["required"][0], "text");
    assert_eq!(
        tb.find("mcp__t__add").map(|s| s.approval),
        Some(Approval::Auto)
    );
    assert_eq!(
        tb.find("mcp__t__echo").map(|s| s.approval),
        Some(Approval::Ask)
    );
    let origin = tb
        .find("mcp__t__echo")
        .and_then(|s| s.mcp)
        .expect("an MCP tool");
    assert_eq!(
        (origin.server.as_str(), origin.tool.as_str()),
        ("t", "echo")
    );

    // Validated against the inputSchema before anything runs.
    let problem = tb
        .check_call("mcp__t__echo", r#"{"txt": "x"}"#)
        .expect_err("invalid");
    assert!(matches!(problem, CallProblem::Schema { .. }), "{problem:?}");
    assert!(
        problem
            .to_string()
            .contains("\"text\" is a required property"),
        "{problem}"
    );

    let (outcome, content) = call(&tb, "mcp__t__echo", r#"{"text": "hi there"}"#).await;
    assert_eq!(outcome.status, ToolStatus::Ok);
    assert_eq!(content, "echo: hi there");

    let (_, content) = call(&tb, "mcp__t__add", r#"{"a": 1, "b": 2.5}"#).await;
    assert!(content.contains(r#""sum":3.5"#), "{content}");

    let (_, content) = call(&tb, "mcp__t__image", "{}").await;
    assert_eq!(
        content,
        "[image: image/png, 16 bytes; not sent to the model]"
    );

    let (outcome, content) = call(&tb, "mcp__t__fail", "{}").await;
    assert_eq!(
        outcome.status,
        ToolStatus::Failed(Failure::ErrorResult),
        "an isError result is a failure"
    );
    assert_eq!(
        content,
        "it failed on purpose\n[the tool reported an error]"
    );
    hub.shutdown();
    assert!(
        tb.find("mcp__t__echo").is_none(),
        "tools withdrawn on shutdown"
    );
}

#[tokio::test]
async fn a_slow_call_is_cancelled_and_the_server_hears_it() {
    let (tb, hub) = started(vec![mock_server("s")]).await;
    let spec = tb.find("mcp__s__slow").expect("offered");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = tb
        .run_call(&spec, "functions.x:0", r#"{"secs": 60}"#, cancel, None)
        .await;
    let content = &outcome.content;
    assert_eq!(outcome.status, ToolStatus::Cancelled);
    assert_eq!(content, "[cancelled by the user]");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The server got `notifications/cancelled` and stopped the work.
    assert!(
        eventually(|| hub.reports()[0]
            .stderr_tail
            .contains("slow: cancelled by the client"))
        .await,
        "{:?}",
        hub.reports()[0].stderr_tail
    );
    // The session with the server goes on.
    let (_, content) = call(&tb, "mcp__s__echo", r#"{"text": "still here"}"#).await;
    assert_eq!(content, "echo: still here");
    hub.shutdown();
}

#[tokio::test]
async fn a_call_past_tool_timeout_secs_times_out() {
    let mut server = mock_server("s");
    server.tool_timeout_secs = 1;
    let (tb, hub) = started(vec![server]).await;
    let (outcome, content) = call(&tb, "mcp__s__slow", r#"{"secs": 60}"#).await;
    assert_eq!(outcome.status, ToolStatus::TimedOut);
    assert!(content.starts_with("[timed out after 1 s"), "{content}");
    hub.shutdown();
}

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_and_withdraws_the_tools() {
    let (tb, hub) = started(vec![mock_server("c")]).await;
    let mut changes = hub.subscribe();
    let (outcome, content) = call(&tb, "mcp__c__crash", "{}").await;
    assert!(
        matches!(&outcome.status, ToolStatus::CouldNotStart(m) if m.contains("MCP server `c`")),
        "{outcome:?}"
    );
    assert!(
        content.starts_with("[the MCP server `c` failed the call"),
        "{content}"
    );
    assert!(eventually(|| matches!(hub.reports()[0].status, ServerStatus::Failed(_))).await);
    assert!(changes.has_changed().unwrap_or(false), "watchers are told");
    let report = &hub.reports()[0];
    assert!(report.tools.is_empty());
    assert!(
        report.stderr_tail.contains("crash: exiting mid-call"),
        "{report:?}"
    );
    assert!(tb.find("mcp__c__echo").is_none());
    assert_eq!(tb.openai_tools().len(), 1, "only the local tool is left");
    assert!(matches!(
        tb.check_call("mcp__c__echo", "{}"),
        Err(CallProblem::UnknownTool { .. })
    ));
    assert_eq!(hub.summary(), Some(("MCP 0/1 ✗ c".to_owned(), true)));
    let _ = changes.changed().await;
}

#[tokio::test]
async fn servers_that_cannot_start_are_reported_with_their_stderr() {
    let missing = McpServerConfig::stdio("missing", vec!["/nonexistent/mcp-server".to_owned()]);
    let dies = McpServerConfig::stdio(
        "dies",
        vec![
            "sh".into(),
            "-c".into(),
            "echo 'cannot open database' >&2; exit 3".into(),
        ],
    );
    let mut mute = McpServerConfig::stdio("mute", vec!["sleep".into(), "30".into()]);
    mute.startup_timeout_secs = 1;
    let (tb, hub) = started(vec![missing, dies, mute, mock_server("ok")]).await;
    let r = hub.reports();
    assert!(
        matches!(&r[0].status, ServerStatus::Failed(m) if m.contains("could not start `/nonexistent/mcp-server`: No such file or directory")),
        "{:?}",
        r[0]
    );
    assert!(
        matches!(&r[1].status, ServerStatus::Failed(m) if m.starts_with("initialize failed")),
        "{:?}",
        r[1]
    );
    assert!(
        r[1].stderr_tail.contains("cannot open database"),
        "{:?}",
        r[1]
    );
    assert_eq!(
        r[2].status,
        ServerStatus::Failed("did not start within 1 s (startup_timeout_secs)".to_owned())
    );
    assert_eq!(r[3].status, ServerStatus::Ready, "the others go on");
    assert!(tb.find("mcp__ok__echo").is_some());
    hub.shutdown();
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test]
async fn shutdown_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("pid");
    // A wrapper that leaves a grandchild behind, as `npx` does.
    let script = format!(
        "sleep 300 & echo $! > '{}'; exec '{}' mock-mcp-server",
        pidfile.display(),
        exe()
    );
    let server = McpServerConfig::stdio("g", vec!["sh".into(), "-c".into(), script]);
    let (_tb, hub) = started(vec![server]).await;
    assert_eq!(hub.reports()[0].status, ServerStatus::Ready);
    let pid: i32 = read_pid(&pidfile);
    assert!(alive(pid));
    hub.shutdown();
    assert!(
        eventually(|| !alive(pid) || zombie(pid)).await,
        "grandchild {pid} survived"
    );
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid")
}

/// A killed grandchild whose parent is gone may linger as a zombie until reaped.
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
        .unwrap_or(true)
}

#[tokio::test]
async fn exec_calls_an_mcp_tool_through_the_agent_loop() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"[profiles.test]
base_url = "{}"

[[mcp_servers]]
name = "demo"
command = ["{}", "mock-mcp-server"]

[[mcp_servers]]
name = "broken"
command = ["/nonexistent/server"]
"#,
            server.base_url(),
            exe()
        ),
    )
    .expect("write");
    let state = dir.path().join("state");
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(exe());
        cmd.env("XDG_STATE_HOME", &state)
            .env("XDG_DATA_HOME", state.join("data"))
            .arg("exec")
            .arg("--config")
            .arg(&cfg)
            .args(args);
        cmd
    };
    let prompt = r#"call mcp__demo__echo with {"text": "from exec"}"#;
    let mut cmd = run(&["--yes", "--json", prompt]);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[MCP server broken failed: could not start `/nonexistent/server`"),
        "{stderr}"
    );
    let conv: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let msgs = conv.as_array().expect("array");
    assert_eq!(
        msgs[1]["tool_calls"][0]["function"]["name"],
        "mcp__demo__echo"
    );
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["content"], "echo: from exec");

    // Without --yes an `ask` MCP tool does not run.
    let mut cmd = run(&["--json", prompt]);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let conv: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let content = conv[2]["content"].as_str().unwrap_or("").to_owned();
    assert!(content.contains("declined"), "{content}");
    server.shutdown().await;
}

#[tokio::test]
async fn doctor_starts_each_server_lists_its_tools_and_reports_failures() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            r#"[profiles.test]
base_url = "{}"

[[mcp_servers]]
name = "demo"
command = ["{}", "mock-mcp-server"]
approval = "auto"
tools.fail.approval = "deny"
disabled_tools = ["crash"]

[[mcp_servers]]
name = "broken"
command = ["sh", "-c", "echo 'missing API token' >&2; exit 1"]
"#,
            server.base_url(),
            exe()
        ),
    )
    .expect("write");
    let mut cmd = std::process::Command::new(exe());
    cmd.env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .arg("doctor")
        .arg("--config")
        .arg(&cfg);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let ok = stdout
        .lines()
        .find(|l| l.starts_with("✓ MCP server demo: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        ok,
        "✓ MCP server demo: kimi-tui-demo 0.1.0; 6 tools: mcp__demo__echo (auto), mcp__demo__add (auto), mcp__demo__fail (deny), mcp__demo__image (auto), mcp__demo__slow (auto), mcp__demo__ask (auto); 0 resources, 0 prompts"
    );
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.starts_with("✗ MCP server broken: "));
    let failed = lines.next().unwrap_or_else(|| panic!("{stdout}"));
    assert!(failed.contains("initialize failed"), "{failed}");
    assert_eq!(lines.next(), Some("  stderr: missing API token"));
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("  fix: run its `command` by hand"))
    );
    server.shutdown().await;
}

#[test]
fn the_example_config_shows_a_stdio_and_an_http_server_that_parse() {
    let example = include_str!("../../config.example.toml");
    // The MCP blocks are `## `-commented, to be uncommented whole.
    let uncommented: String = example
        .lines()
        .map(|l| l.strip_prefix("## ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(uncommented, example);
    let c = kimi_core::config::Config::parse(Path::new("example.toml"), &uncommented)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.mcp_servers.len(), 2);
    let files = &c.mcp_servers[0];
    assert_eq!(files.name, "files");
    assert_eq!(files.command.as_ref().map(|c| c[0].as_str()), Some("npx"));
    assert_eq!(files.approval_for("write_file"), Approval::Deny);
    assert_eq!(
        files.approval_for("list_allowed_directories"),
        Approval::Auto
    );
    assert!(!files.offers("move_file"));
    let remote = &c.mcp_servers[1];
    assert_eq!(remote.url.as_deref(), Some("https://mcp.example.com/mcp"));
    assert_eq!(remote.bearer_token_env.as_deref(), Some("REMOTE_MCP_TOKEN"));
    // As shipped, nothing starts.
    let shipped = kimi_core::config::Config::parse(Path::new("example.toml"), example)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(shipped.mcp_servers.is_empty());
}

#[tokio::test]
async fn an_http_server_without_its_token_variable_fails_with_the_variable_named() {
    let mut config = McpServerConfig::stdio("remote", Vec::new());
    config.command = None;
    config.url = Some("http://127.0.0.1:9/mcp".to_owned());
    config.bearer_token_env = Some("KIMI_TEST_MCP_TOKEN_UNSET_4711".to_owned());
    config.check().expect("valid entry");
    let (_, hub) = started(vec![config]).await;
    assert_eq!(
        hub.reports()[0].status,
        ServerStatus::Failed(
            "the environment variable KIMI_TEST_MCP_TOKEN_UNSET_4711 (bearer_token_env) is not set"
                .to_owned()
        )
    );
}
