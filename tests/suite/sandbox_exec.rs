//! `exec` with sandboxed tools, as a user runs it: the real binary, the real mock server
//! emitting one call (`--tool-call-name`, `--tool-call-args`), a tool that tries to write
//! `$HOME/x` or reach a loopback listener. Confined, it cannot (or, on a kernel that cannot
//! enforce the sandbox, it is refused with the reason and does not run); unconfined, it can.

use std::path::Path;
use std::process::Command;

use kimi_core::tools::sandbox::{SandboxMode, SandboxPolicy, check, support};
use serde_json::Value;

use super::mock_process::MockProcess;

/// Runs `exec --json` against a mock that calls `probe` once; `probe` runs `script` under
/// `sh -c` with `HOME` set to `home` and the given extra TOML lines. Returns the tool
/// message's content.
fn exec_probe(home: &Path, script: &str, tool_extra: &str) -> String {
    let mock = MockProcess::start(["--tool-call-name", "probe", "--tool-call-args", "{}"]);
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    let toml = format!(
        r#"default_profile = "test"

[profiles.test]
mode = "chat"
base_url = "{base_url}"

[[tools]]
name = "probe"
command = ["sh", "-c", {script:?}]
approval = "auto"
env = {{ HOME = {home:?} }}
{tool_extra}
"#,
        base_url = mock.url,
        home = home.display().to_string(),
    );
    std::fs::write(&cfg, toml).expect("write config");
    let state = dir.path().join("state");
    let out = Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .env("XDG_STATE_HOME", &state)
        .env("XDG_DATA_HOME", state.join("data"))
        .arg("exec")
        .arg("--config")
        .arg(&cfg)
        .args(["--json", "go"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let conv: Value = serde_json::from_slice(&out.stdout).expect("JSON conversation");
    assert_eq!(conv[2]["role"], "tool", "{conv}");
    conv[2]["content"].as_str().expect("content").to_owned()
}

#[test]
fn a_read_only_tool_cannot_write_home_and_the_same_tool_unconfined_can() {
    let home = tempfile::tempdir().expect("home");
    let script = r#"touch "$HOME/x" && echo wrote"#;
    let policy = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        network: true,
    };

    let content = exec_probe(home.path(), script, "sandbox = \"read-only\"");
    match check(policy, support()) {
        Ok(()) => {
            assert!(content.contains("[exit code 1]"), "{content}");
            assert!(content.contains("Permission denied"), "{content}");
        }
        Err(why) => assert_eq!(content, format!("[could not start `sh`: {why}]")),
    }
    assert!(!home.path().join("x").exists(), "{content}");

    let content = exec_probe(home.path(), script, "");
    assert_eq!(content, "wrote\n");
    assert!(home.path().join("x").exists());
}

#[test]
fn a_tool_without_network_cannot_connect_and_the_same_tool_with_it_can() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let home = tempfile::tempdir().expect("home");
    let script = format!("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected'");
    let policy = SandboxPolicy {
        mode: SandboxMode::None,
        network: false,
    };

    let content = exec_probe(home.path(), &script, "network = false");
    match check(policy, support()) {
        Ok(()) => {
            assert!(content.contains("[exit code 1]"), "{content}");
            assert!(content.contains("Permission denied"), "{content}");
        }
        Err(why) => assert_eq!(content, format!("[could not start `sh`: {why}]")),
    }
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "a connection got through");

    let content = exec_probe(home.path(), &script, "");
    assert_eq!(content, "connected\n");
    assert!(listener.accept().is_ok());
}
