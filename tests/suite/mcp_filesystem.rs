//! The reference filesystem MCP server from the npm registry, started by `npx` against a
//! temporary directory (`.ci/run` installs it first; node 20 and npm are required): its tools
//! are listed and validated, and a file is read through a call approved in the agent loop.

use std::time::Duration;

use kimi_client::{Backend, Endpoint};
use kimi_core::engine::{Agent, AgentInit, Decision, EVENT_QUEUE, EngineEvent, Op};
use kimi_core::tools::mcp::{McpHub, McpServerConfig, ServerStatus};
use kimi_core::tools::{CallProblem, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Mode;

/// The pinned version (supports node 20); `.ci/run` installs the same one.
pub(crate) const PACKAGE: &str = "@modelcontextprotocol/server-filesystem@2026.1.14";

#[tokio::test]
async fn the_filesystem_server_lists_its_tools_and_reads_a_file_through_an_approved_call() {
    let dir = tempfile::tempdir().expect("tmp");
    // The server resolves symlinks (a macOS /tmp); use the canonical path it will allow.
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::write(root.join("note.txt"), "hello from a real file\n").expect("write");
    let mut server = McpServerConfig::stdio(
        "fs",
        vec![
            "npx".into(),
            "-y".into(),
            PACKAGE.into(),
            root.display().to_string(),
        ],
    );
    // The first run may download the package.
    server.startup_timeout_secs = 180;
    let hub = McpHub::new(vec![server], Vec::<String>::new());
    hub.start();
    hub.wait_started(Duration::from_secs(200)).await;
    let report = hub.reports().remove(0);
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    for tool in [
        "mcp__fs__read_text_file",
        "mcp__fs__list_directory",
        "mcp__fs__write_file",
    ] {
        assert!(
            report.tools.iter().any(|t| t == tool),
            "{tool} in {:?}",
            report.tools
        );
    }
    let toolbox = Toolbox::default().with_mcp(hub.clone());
    // Its inputSchema is enforced before asking.
    let problem = toolbox
        .check_call("mcp__fs__read_text_file", "{}")
        .expect_err("path is required");
    assert!(
        matches!(&problem, CallProblem::Schema { errors } if errors.iter().any(|e| e.contains("path"))),
        "{problem:?}"
    );

    // The agent loop, with the scripted model asking for the file and the call approved here.
    let model = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let backend = Backend::new(Endpoint::new(
        Mode::Raw,
        &model.base_url(),
        "moonshotai/Kimi-K2-Instruct",
    ))
    .expect("backend");
    let mut agent = Agent::spawn(
        AgentInit {
            backend,
            toolbox,
            max_rounds: 4,
            system_prompt: None,
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        EVENT_QUEUE,
    );
    let note = root.join("note.txt").display().to_string();
    let outside = "/etc/hostname";
    agent.send(Op::UserTurn {
        text: format!(
            "call mcp__fs__read_text_file with {{\"path\": \"{note}\"}}\ncall mcp__fs__read_text_file with {{\"path\": \"{outside}\"}}"
        ),
    });
    let mut asked = Vec::new();
    let mut results = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(60), agent.events.recv())
        .await
        .expect("the turn goes on")
    {
        match e {
            EngineEvent::ApprovalRequested { id, request } => {
                let origin = request.spec.mcp.clone().expect("an MCP tool");
                asked.push((origin.server, origin.tool));
                agent.send(Op::Approve {
                    id,
                    decision: Decision::Approve {
                        arguments: request.arguments,
                    },
                    always: false,
                });
            }
            EngineEvent::ToolFinished { outcome, .. } => results.push(*outcome),
            EngineEvent::TurnDone { .. } => {
                agent.send(Op::Snapshot);
            }
            EngineEvent::Snapshot { messages, .. } => {
                let tool_msgs: Vec<String> = messages
                    .iter()
                    .filter(|m| m.role == "tool")
                    .map(|m| m.text())
                    .collect();
                assert_eq!(tool_msgs.len(), 2, "{messages:?}");
                assert_eq!(tool_msgs[0], "hello from a real file\n");
                // Outside the allowed directory: the server's error result, shown as a failure.
                assert!(
                    tool_msgs[1].ends_with("[the tool reported an error]"),
                    "{}",
                    tool_msgs[1]
                );
                assert!(tool_msgs[1].contains("denied"), "{}", tool_msgs[1]);
                agent.send(Op::Shutdown);
            }
            _ => {}
        }
    }
    assert_eq!(
        asked,
        [
            ("fs".to_owned(), "read_text_file".to_owned()),
            ("fs".to_owned(), "read_text_file".to_owned())
        ]
    );
    assert_eq!(results.len(), 2);
    assert!(results[0].success());
    assert!(!results[1].success());
    hub.shutdown();
    model.shutdown().await;
}
