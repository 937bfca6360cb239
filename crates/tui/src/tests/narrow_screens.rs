//! The screens a newcomer meets, at 40x15: nothing that matters is cut off. The status bar
//! keeps what is happening and the context gauge, a tool pane its state, the help every word.

use std::time::Duration;

use super::ui_snapshots::{app, assistant, screen, user};
use crate::app::state::{ApprovalDialog, PaneState, ToolPane, TurnState};
use crate::app::status_line::Activity;
use kimi_core::engine::ApprovalRequest;
use kimi_core::tools::rules::{RuleDecision, Verdict};
use kimi_core::tools::{Approval, ToolSpec};
use kimi_protocol::{Mode, ToolCall};
use serde_json::json;

const W: u16 = 40;
const H: u16 = 15;
const MCP_TOOL: &str = "mcp__filesystem__read_multiple_files_with_long_name";
const MCP_ARGS: &str = r#"{"paths": ["a.txt", "b.txt"]}"#;

/// The last row: the status bar.
fn status_bar(shown: &str) -> &str {
    shown.lines().last().unwrap_or_default()
}

#[test]
fn idle_screen_at_40_columns() {
    let mut a = app(Mode::Raw);
    let shown = screen(&mut a, W, H);
    let bar = status_bar(&shown);
    assert!(bar.contains("local") && bar.contains("raw"), "{bar}");
    assert!(
        bar.contains("Kimi-K2-Instruct") && bar.ends_with("│ idle"),
        "{bar}"
    );
    insta::assert_snapshot!(shown);
}

#[test]
fn help_overlay_at_40_columns() {
    let mut a = app(Mode::Raw);
    a.layers.help.open = true;
    let shown = screen(&mut a, W, H);
    // Every row inside the frame: each line ends with its right border.
    for l in shown.lines().filter(|l| l.starts_with('│')) {
        assert!(l.ends_with('│'), "cut: {l:?}\n{shown}");
    }
    insta::assert_snapshot!(shown);
}

#[test]
fn streaming_turn_keeps_the_state_and_the_gauge_at_40_columns() {
    let mut a = app(Mode::Chat);
    user(&mut a, "Tell me about Paris");
    assistant(
        &mut a,
        "Paris is the capital of France and",
        TurnState::Streaming,
    );
    a.busy = true;
    a.status.activity = Activity::Streaming {
        since: a.now,
        chunks: 84,
    };
    a.now += Duration::from_secs(2);
    a.status.context.window = Some(131_072);
    a.status.context.measured = Some(53_400);
    let shown = screen(&mut a, W, H);
    let bar = status_bar(&shown);
    assert!(
        bar.contains("│ streaming") && bar.contains("ctx 40%"),
        "{bar}"
    );
    assert!(bar.contains("local"), "{bar}");
    // Wide, the same bar keeps everything.
    let wide = screen(&mut a, 160, H);
    let wide_bar = status_bar(&wide);
    assert!(
        wide_bar.contains("moonshotai/Kimi-K2-Instruct")
            && wide_bar.contains("streaming 42 tok/s")
            && wide_bar.contains("ctx 40% 53k/131k"),
        "{wide_bar}"
    );
    insta::assert_snapshot!(shown);
}

fn mcp_spec() -> ToolSpec {
    ToolSpec {
        description: "Read several files at once".into(),
        parameters: json!({"type": "object", "properties": {"paths": {"type": "array"}}}),
        approval: Approval::Ask,
        ..ToolSpec::new(MCP_TOOL, Vec::new())
    }
}

/// A turn whose MCP call waits for approval.
fn awaiting_approval() -> crate::app::state::App {
    let mut a = app(Mode::Chat);
    user(&mut a, "Read a.txt and b.txt");
    let t = assistant(&mut a, "Reading them.", TurnState::Streaming);
    let mut p = ToolPane::new(0, format!("functions.{MCP_TOOL}:0"), MCP_TOOL.into());
    p.arguments = MCP_ARGS.into();
    p.state = PaneState::WaitingApproval;
    t.panes.push(p);
    a.status.activity = Activity::WaitingApproval;
    a
}

#[test]
fn tool_pane_with_a_long_mcp_name_keeps_its_state_at_40_columns() {
    let mut a = awaiting_approval();
    let shown = screen(&mut a, W, H);
    let title = (shown.lines())
        .find(|l| l.starts_with("┌ ⚙"))
        .expect("the pane's title row");
    assert!(title.contains("mcp__") && title.contains('…'), "{title}");
    assert!(title.ends_with("? waiting for approval"), "{shown}");
    assert!(
        status_bar(&shown).contains("waiting for approval"),
        "{shown}"
    );
    insta::assert_snapshot!(shown);
}

#[test]
fn approval_dialog_at_40_columns() {
    let mut a = awaiting_approval();
    a.layers.dialog = Some(ApprovalDialog::new(
        ApprovalRequest {
            index: 0,
            call: ToolCall::new(format!("functions.{MCP_TOOL}:0"), MCP_TOOL, MCP_ARGS),
            spec: mcp_spec(),
            arguments: MCP_ARGS.into(),
            rule: RuleDecision::by_tool(Verdict::Ask),
            problems: Vec::new(),
        },
        None,
    ));
    let shown = screen(&mut a, W, H);
    assert!(shown.contains("mcp__"), "{shown}");
    insta::assert_snapshot!(shown);
}
