//! End to end through a real terminal: `--demo` starts its MCP server (this binary's
//! `mock-mcp-server`); the user sees its tool in `/tools` and the status bar, and approves one
//! call of it in the dialog that names the server and the tool.

use kimi_test_support::tmux::Tmux;

#[test]
fn demo_mcp_tool_call_is_approved_and_its_result_shown() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        "mcp",
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for(
        &["kimi-tui", "MCP 1/1"],
        "the demo with its MCP server ready",
    );
    t.literal("/tools");
    t.keys(&["Enter"]);
    let tools = t.wait_for(
        &[
            "MCP servers:",
            "demo · ready, 4 tools",
            "mcp__demo__echo [ask] Say the text back",
        ],
        "the MCP section of /tools",
    );
    assert!(tools.contains("mcp__demo__add"), "{tools}");
    t.literal(r#"call mcp__demo__echo with {"text": "hello over MCP"}"#);
    t.keys(&["Enter"]);
    let dialog = t.wait_for(
        &[
            "Tool call needs approval",
            "Run mcp__demo__echo?",
            "MCP server: demo · tool: echo",
        ],
        "the approval dialog naming the server and the tool",
    );
    assert!(dialog.contains("\"text\": \"hello over MCP\""), "{dialog}");
    t.keys(&["y"]);
    let answer = t.wait_for(
        &["✓ done", "echo: hello over MCP", "returned", "│ idle │"],
        "the MCP result and the final answer",
    );
    assert!(answer.contains("MCP 1/1"), "{answer}");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

/// A server that fails is a notice with its stderr and a red mark in the status bar, `/tools`
/// says why, and the session goes on: another server's `auto` tool runs, Esc cancels it, and
/// quitting kills that server's process group.
#[test]
fn a_failed_server_is_shown_and_a_running_mcp_call_is_cancelled_with_esc() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt
        .block_on(kimi_mock::MockServer::start(
            kimi_mock::MockOptions::default(),
            0,
        ))
        .expect("mock");
    let home = tempfile::tempdir().expect("tmp home");
    let cfg = home.path().join("config.toml");
    let pidfile = home.path().join("mcp.pid");
    std::fs::write(
        &cfg,
        format!(
            r#"[profiles.test]
base_url = "{}"

[[mcp_servers]]
name = "broken"
command = ["sh", "-c", "echo 'boom: missing credentials' >&2; exit 2"]

[[mcp_servers]]
name = "m"
command = ["sh", "-c", "sleep 300 & echo $! > '{pidfile}'; exec '{exe}' mock-mcp-server"]
approval = "auto"
"#,
            server.base_url(),
            pidfile = pidfile.display(),
            exe = env!("CARGO_BIN_EXE_kimi-tui")
        ),
    )
    .expect("config");
    let t = super::tui_with_config("mcpfail", &cfg, home.path(), (120, 40));
    t.wait_for(
        &[
            "MCP server `broken` failed",
            "boom: missing credentials",
            "MCP 1/2 ✗ broken",
        ],
        "the failure notice and the status bar",
    );
    t.literal("/tools");
    t.keys(&["Enter"]);
    t.wait_for(
        &["broken · failed: initialize failed", "m · ready, 7 tools"],
        "the servers in /tools",
    );
    t.literal(r#"call mcp__m__slow with {"secs": 120}"#);
    t.keys(&["Enter"]);
    t.wait_for(&["running mcp__m__slow"], "the auto call running");
    // The server's progress and log lines show in the pane while it runs, and in the inspector
    // after the stream of the request that asked for the call.
    t.wait_for(
        &["second 2 of 120", "[info] slow: 2 s done"],
        "progress in the pane",
    );
    t.keys(&["C-t"]);
    t.keys(&["End"]);
    t.wait_for(
        &["MCP server notes · mcp__m__slow", "[info] slow: "],
        "the notes in the inspector",
    );
    t.keys(&["Escape"]);
    t.wait_until(
        "the inspector closed",
        std::time::Duration::from_secs(10),
        |screen| !screen.contains("MCP server notes"),
    );
    t.keys(&["Escape"]);
    let screen = t.wait_for(&["✗ cancelled"], "the call cancelled");
    assert!(screen.contains("MCP 1/2"), "{screen}");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid");
    // SAFETY: signal 0 only checks that the process exists.
    let alive = || unsafe { libc::kill(pid, 0) == 0 };
    // A grandchild in the server's process group, as `npx` leaves: it ignores stdin, so only
    // the group kill stops it.
    assert!(alive(), "the server's group runs while the TUI does");
    t.quit();
    // Quitting stops the servers (their process groups).
    let gone = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        !alive()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|st| st.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
                .unwrap_or(true)
    });
    assert!(
        gone,
        "process {pid} of the MCP server's group outlived the TUI"
    );
    rt.block_on(server.shutdown());
}

/// Starts the demo, asks its model to call `mcp__demo__ask` and approves the call: the server's
/// question is on screen as a dialog naming the server, with its field.
fn demo_question(name: &str, home: &std::path::Path) -> Tmux {
    let t = Tmux::start_sized(
        name,
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home,
        (110, 40),
    );
    t.wait_for(
        &["kimi-tui", "MCP 1/1"],
        "the demo with its MCP server ready",
    );
    t.literal(r#"call mcp__demo__ask with {"message": "Who is there?"}"#);
    t.keys(&["Enter"]);
    t.wait_for(
        &["Tool call needs approval", "Run mcp__demo__ask?"],
        "the approval dialog",
    );
    t.keys(&["y"]);
    t.wait_for(
        &[
            "MCP server `demo` asks",
            "Who is there?",
            "Your name *",
            "one of: red, green",
            "Esc cancel",
        ],
        "the server's question as a dialog",
    );
    t
}

/// A server's question (elicitation) end to end: the user types an answer and presses Enter;
/// the tool's result (and the model's answer quoting it) holds what they typed.
#[test]
fn an_mcp_servers_question_is_answered_in_the_dialog() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo_question("elicit", home.path());
    // Enter on an empty required field sends nothing and says why.
    t.keys(&["Enter"]);
    t.wait_for(&["✗ Your name: required"], "the problem in the dialog");
    t.literal("Ada");
    t.keys(&["Tab"]);
    t.literal("green");
    t.keys(&["Enter"]);
    let screen = t.wait_for(
        &[
            "✓ done",
            "the user answered: {",
            r#""name":"Ada""#,
            r#""color":"green""#,
            "sent your answer",
            "│ idle │",
        ],
        "the tool's result with the answer",
    );
    assert!(!screen.contains("MCP server `demo` asks"), "{screen}");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

/// Esc answers "cancel": the server hears it and the call's result says so.
#[test]
fn esc_cancels_an_mcp_servers_question() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = demo_question("elicitesc", home.path());
    t.literal("Bob");
    t.keys(&["Escape"]);
    let screen = t.wait_for(
        &["the user cancelled", "question: cancelled", "│ idle │"],
        "the cancel reaching the server",
    );
    assert!(!screen.contains("Bob"), "nothing typed was sent: {screen}");
    // `/mcp` shows the server and its tools with their approval.
    t.literal("/mcp");
    t.keys(&["Enter"]);
    t.wait_for(
        &[
            "MCP servers:",
            "demo · ready, 4 tools",
            "endpoint: ",
            "mcp__demo__ask [ask]",
        ],
        "the /mcp report",
    );
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
