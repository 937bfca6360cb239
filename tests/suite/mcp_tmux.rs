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
            "demo · ready, 3 tools",
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
    t.keys(&["C-c"]);
    t.wait_gone();
}
