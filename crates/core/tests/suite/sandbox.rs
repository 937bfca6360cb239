//! The sandbox with real child processes: a read-only tool writes only in its own TMPDIR, a
//! workspace-write tool also under its cwd, a `network = false` tool cannot reach a loopback
//! listener, and a read-only MCP stdio server cannot write; the same tools unconfined can.
//! On a kernel without the Landlock rules a policy needs, each confined call must be refused
//! with the reason instead, and must not have run.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use kimi_core::tools::mcp::{McpHub, McpServerConfig, ServerStatus};
use kimi_core::tools::sandbox::{SandboxMode, SandboxPolicy, check, support};
use kimi_core::tools::{ExitKind, ToolOutcome, ToolSpec, Toolbox, run};
use tokio_util::sync::CancellationToken;

/// A `sh -c` tool with `HOME` pointed at `home`.
fn shell_tool(script: &str, home: &Path) -> ToolSpec {
    ToolSpec {
        env: BTreeMap::from([("HOME".to_owned(), home.display().to_string())]),
        ..ToolSpec::new("t", vec!["sh".into(), "-c".into(), script.into()])
    }
}

async fn run_now(spec: &ToolSpec) -> ToolOutcome {
    run(spec, "functions.t:0", "{}", CancellationToken::new()).await
}

/// Whether this kernel enforces `spec`'s sandbox; if not, asserts the call was refused
/// (saying why) and returns false, so the caller skips the confined expectations.
fn enforced_or_refused(spec: &ToolSpec, out: &ToolOutcome) -> bool {
    match check(spec.sandbox_policy(), support()) {
        Ok(()) => true,
        Err(why) => {
            assert_eq!(
                out.exit,
                ExitKind::FailedToStart(format!("could not start `sh`: {why}")),
                "{out:?}"
            );
            false
        }
    }
}

#[tokio::test]
async fn a_read_only_tool_writes_only_in_its_own_tmpdir() {
    let home = tempfile::tempdir().expect("home");
    let script = r#"touch "$HOME/x" && echo home-written; echo t > "$TMPDIR/y" && echo tmp-written; echo "$TMPDIR"; ls -ld "$TMPDIR" | cut -c1-10; echo done > /dev/null && echo null-ok"#;
    let open = shell_tool(script, home.path());
    let confined = ToolSpec {
        sandbox: SandboxMode::ReadOnly,
        ..open.clone()
    };

    let out = run_now(&confined).await;
    if enforced_or_refused(&confined, &out) {
        assert!(out.success(), "{out:?}");
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert!(!home.path().join("x").exists(), "wrote in HOME: {out:?}");
        assert!(!out.stdout.contains("home-written"), "{out:?}");
        assert!(out.stderr_tail.contains("Permission denied"), "{out:?}");
        assert_eq!(lines[0], "tmp-written", "{out:?}");
        // Its own directory, private, and gone after the call.
        let tmpdir = Path::new(lines[1]);
        assert!(
            tmpdir.is_absolute() && lines[1].contains("kimi-tool-"),
            "{out:?}"
        );
        assert_eq!(lines[2], "drwx------", "{out:?}");
        assert_eq!(lines[3], "null-ok", "{out:?}");
        assert!(!tmpdir.exists(), "the private TMPDIR outlived the call");
    }
    assert!(!home.path().join("x").exists());

    let out = run_now(&open).await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.starts_with("home-written\n"), "{out:?}");
    assert!(home.path().join("x").exists());
}

#[tokio::test]
async fn a_workspace_write_tool_writes_under_its_cwd_and_nowhere_else() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    std::fs::create_dir(work.path().join("sub")).expect("mkdir");
    let script = r#"echo a > made && echo cwd-written; echo b > sub/deep && echo sub-written; touch "$HOME/x" && echo home-written; true"#;
    let open = ToolSpec {
        cwd: Some(work.path().to_path_buf()),
        ..shell_tool(script, home.path())
    };
    let confined = ToolSpec {
        sandbox: SandboxMode::WorkspaceWrite,
        ..open.clone()
    };

    let out = run_now(&confined).await;
    if enforced_or_refused(&confined, &out) {
        assert_eq!(out.stdout, "cwd-written\nsub-written\n", "{out:?}");
        assert!(work.path().join("made").exists());
        assert!(work.path().join("sub/deep").exists());
        assert!(!home.path().join("x").exists(), "wrote outside its cwd");
    } else {
        assert!(!work.path().join("made").exists());
    }

    let out = run_now(&open).await;
    assert_eq!(
        out.stdout, "cwd-written\nsub-written\nhome-written\n",
        "{out:?}"
    );
    assert!(home.path().join("x").exists());
}

#[tokio::test]
async fn a_tool_without_network_cannot_reach_a_loopback_listener() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let home = tempfile::tempdir().expect("home");
    // bash opens TCP connections through /dev/tcp; no other program is needed.
    let script = format!("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected'");
    let open = shell_tool(&script, home.path());
    let offline = ToolSpec {
        network: false,
        ..open.clone()
    };

    let out = run_now(&offline).await;
    if enforced_or_refused(&offline, &out) {
        assert_eq!(out.exit, ExitKind::Exited(1), "{out:?}");
        assert!(!out.stdout.contains("connected"), "{out:?}");
        assert!(out.stderr_tail.contains("Permission denied"), "{out:?}");
    }
    // Nothing reached the listener.
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "a connection got through");

    let out = run_now(&open).await;
    assert_eq!(out.stdout, "connected\n", "{out:?}");
    assert!(listener.accept().is_ok());
}

/// A stdio MCP server in `sh`: answers `initialize` and `tools/list` with one tool, `write`,
/// whose call tries to create `$HOME/x` and says whether it could.
const WRITING_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"writer","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"write","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      if touch "$HOME/x" 2>/dev/null; then r=wrote; else r=refused; fi
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$id" "$r" ;;
  esac
done
"#;

async fn call_write(config: McpServerConfig) -> Result<String, String> {
    let local = Toolbox::new(Vec::new()).expect("empty toolbox");
    let hub = McpHub::new(vec![config], local.names());
    hub.start();
    hub.wait_started(Duration::from_secs(20)).await;
    let report = hub.reports().remove(0);
    if let ServerStatus::Failed(why) = report.status {
        hub.shutdown();
        return Err(why);
    }
    let tb = local.with_mcp(hub.clone());
    let spec = tb.find("mcp__w__write").expect("offered");
    let result = tb
        .run_call(&spec, "functions.x:0", "{}", CancellationToken::new(), None)
        .await;
    hub.shutdown();
    Ok(result.content)
}

#[tokio::test]
async fn a_read_only_mcp_server_cannot_write() {
    let home = tempfile::tempdir().expect("home");
    let open = McpServerConfig {
        env: BTreeMap::from([("HOME".to_owned(), home.path().display().to_string())]),
        ..McpServerConfig::stdio("w", vec!["sh".into(), "-c".into(), WRITING_SERVER.into()])
    };
    let confined = McpServerConfig {
        sandbox: SandboxMode::ReadOnly,
        ..open.clone()
    };
    let policy = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        network: true,
    };
    match check(policy, support()) {
        Ok(()) => {
            assert_eq!(call_write(confined).await.as_deref(), Ok("refused"));
            assert!(!home.path().join("x").exists());
        }
        Err(why) => {
            assert_eq!(call_write(confined).await, Err(why.to_string()));
        }
    }
    assert_eq!(call_write(open).await.as_deref(), Ok("wrote"));
    assert!(home.path().join("x").exists());
}

#[test]
fn a_misspelt_sandbox_is_a_config_error_naming_the_line_and_the_choices() {
    let text = "[profiles.a]\nbase_url = \"http://x/v1\"\n\n[[tools]]\nname = \"t\"\ncommand = [\"date\"]\nsandbox = \"readonly\"\n";
    let e = kimi_core::config::Config::parse(Path::new("c.toml"), text)
        .expect_err("unknown mode")
        .to_string();
    assert!(e.contains("c.toml:7"), "{e}");
    assert!(
        e.contains("none") && e.contains("read-only") && e.contains("workspace-write"),
        "{e}"
    );
    let text = text.replace("\"readonly\"", "\"read-only\"\nnetwork = \"off\"");
    let e = kimi_core::config::Config::parse(Path::new("c.toml"), &text)
        .expect_err("not a boolean")
        .to_string();
    assert!(e.contains("c.toml:8"), "{e}");
}
