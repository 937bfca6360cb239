//! A real Streamable HTTP MCP server: the reference "everything" server from the npm registry
//! (`npx`, its `streamableHttp` mode on a free loopback port; `.ci/run` installs it first):
//! initialize, list its tools, call one, through rmcp's Streamable HTTP client.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use kimi_core::tools::mcp::{McpHub, McpServerConfig, ServerStatus};
use kimi_core::tools::{ToolStatus, Toolbox};
use tokio_util::sync::CancellationToken;

/// The pinned version (supports node 20); `.ci/run` installs the same one.
pub(crate) const PACKAGE: &str = "@modelcontextprotocol/server-everything@2026.1.26";

/// The server's process group, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: only sends a signal to the group this test started.
        unsafe {
            libc::killpg(self.0.id() as i32, libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn a_streamable_http_server_is_listed_and_called() {
    let port = free_port();
    let mut child = Command::new("npx")
        .args(["-y", PACKAGE, "streamableHttp"])
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("npx starts");
    let stderr = child.stderr.take().expect("stderr");
    let server = Server(child);
    // It says where it listens once it does (the first run may download the package).
    let listening = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.contains("listening on port"))
    });
    let ready = tokio::time::timeout(Duration::from_secs(180), listening)
        .await
        .expect("the server starts within 180 s")
        .expect("join");
    assert!(ready, "the server did not say it listens");

    let mut config = McpServerConfig::stdio("ev", Vec::new());
    config.command = None;
    config.url = Some(format!("http://127.0.0.1:{port}/mcp"));
    config.check().expect("a valid HTTP server entry");
    let hub = McpHub::new(vec![config], Vec::<String>::new());
    hub.start();
    hub.wait_started(Duration::from_secs(40)).await;
    let report = hub.reports().remove(0);
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    assert!(report.tools.len() > 3, "{:?}", report.tools);
    assert!(
        report.tools.iter().any(|t| t == "mcp__ev__echo"),
        "{:?}",
        report.tools
    );

    let toolbox = Toolbox::default().with_mcp(hub.clone());
    let spec = toolbox.find("mcp__ev__echo").expect("offered");
    assert!(
        toolbox.check_call("mcp__ev__echo", "{}").is_err(),
        "message is required"
    );
    let args = toolbox
        .check_call("mcp__ev__echo", r#"{"message": "over HTTP"}"#)
        .expect("valid")
        .to_string();
    let outcome = toolbox
        .run_call(
            &spec,
            "functions.mcp__ev__echo:0",
            &args,
            CancellationToken::new(),
            None,
        )
        .await;
    let content = &outcome.content;
    assert_eq!(outcome.status, ToolStatus::Ok, "{content}");
    assert!(content.contains("over HTTP"), "{content}");
    hub.shutdown();
    drop(server);
}

/// The same server over stdio: a tool that needs MCP tasks is withheld with its reason, the
/// question tool is there (elicitation is advertised), and its image result is described and
/// saved, never sent as base64.
#[tokio::test]
async fn the_everything_server_over_stdio_withholds_task_tools_and_keeps_image_bytes() {
    let media = tempfile::tempdir().expect("tmp");
    let config = McpServerConfig::stdio(
        "ev",
        vec!["npx".into(), "-y".into(), PACKAGE.into(), "stdio".into()],
    );
    let hub = McpHub::new(vec![config], Vec::<String>::new())
        .with_media_dir(Some(media.path().to_owned()));
    hub.start();
    hub.wait_started(Duration::from_secs(180)).await;
    let report = hub.reports().remove(0);
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    assert!(
        report.skipped.iter().any(|s| s.starts_with(
            "simulate-research-query: needs MCP tasks (execution.taskSupport = required)"
        )),
        "{:?}",
        report.skipped
    );
    assert!(!report.tools.iter().any(|t| t.contains("simulate-research")));
    assert!(
        report
            .tools
            .iter()
            .any(|t| t == "mcp__ev__trigger-elicitation-request"),
        "{:?}",
        report.tools
    );
    let toolbox = Toolbox::default().with_mcp(hub.clone());
    let spec = toolbox.find("mcp__ev__get-tiny-image").expect("offered");
    let outcome = toolbox
        .run_call(&spec, "x", "{}", CancellationToken::new(), None)
        .await;
    let content = &outcome.content;
    assert!(content.contains("[image: image/png,"), "{content}");
    assert!(content.len() < 1000, "no base64 in {content}");
    assert!(outcome.output.contains("saved to"), "{}", outcome.output);
    hub.close(Duration::from_secs(3)).await;
}
