//! What the TUI shows of MCP servers: their part of `/tools`, and a notice when one fails (with
//! its stderr tail), so a failure is never silent.

use kimi_core::tools::Toolbox;
use kimi_core::tools::mcp::{ServerReport, ServerStatus};

use super::state::App;

/// The MCP section of `/tools`: each server, its state, its tools (with their approval), and
/// for a failed one why and its stderr tail. Empty without servers.
pub(crate) fn tools_section(toolbox: &Toolbox) -> String {
    let Some(hub) = toolbox.mcp() else {
        return String::new();
    };
    let mut s = String::from("MCP servers:");
    for r in hub.reports() {
        s.push_str(&format!("\n  {} · {}", r.name, status_text(&r)));
        for name in &r.tools {
            let approval = toolbox
                .find(name)
                .map(|t| format!("{:?}", t.approval).to_lowercase())
                .unwrap_or_default();
            let description = toolbox
                .find(name)
                .map(|t| t.description)
                .unwrap_or_default();
            s.push_str(&format!("\n    {name} [{approval}] {description}"));
        }
        for skipped in &r.skipped {
            s.push_str(&format!("\n    not offered: {skipped}"));
        }
        if matches!(r.status, ServerStatus::Failed(_)) {
            s.push_str(&stderr_lines(&r));
        }
    }
    s
}

fn status_text(r: &ServerReport) -> String {
    match &r.status {
        ServerStatus::Starting => "starting".to_owned(),
        ServerStatus::Ready => format!("ready, {} tools", r.tools.len()),
        ServerStatus::Failed(why) => format!("failed: {why}; its tools are withdrawn"),
        ServerStatus::Stopped => "stopped".to_owned(),
    }
}

fn stderr_lines(r: &ServerReport) -> String {
    let tail = r.stderr_tail.trim_end();
    if tail.is_empty() {
        return String::new();
    }
    // The last few lines are what explains a failure.
    let lines: Vec<&str> = tail.lines().collect();
    let from = lines.len().saturating_sub(8);
    let mut s = String::from("\n    stderr:");
    for l in &lines[from..] {
        s.push_str(&format!(
            "\n      {}",
            kimi_protocol::sanitize::one_line(l, 300)
        ));
    }
    s
}

/// Servers' states as last announced, to notice changes.
#[derive(Debug, Default)]
pub(crate) struct Announced(Vec<(String, ServerStatus)>);

/// Post a notice for each server that failed since the last call (why, and its stderr tail).
pub(crate) fn announce_changes(app: &mut App, seen: &mut Announced) {
    let Some(hub) = app.toolbox.mcp().cloned() else {
        return;
    };
    for r in hub.reports() {
        let before = seen.0.iter().find(|(n, _)| *n == r.name).map(|(_, s)| s);
        if before == Some(&r.status) {
            continue;
        }
        match &r.status {
            ServerStatus::Failed(why) => app.notice(
                format!(
                    "MCP server `{}` failed: {why}. Its tools are withdrawn; the session goes on.{}",
                    r.name,
                    stderr_lines(&r)
                ),
                true,
            ),
            // Readiness shows in the status bar; only a failure interrupts.
            ServerStatus::Starting | ServerStatus::Ready | ServerStatus::Stopped => {}
        }
        seen.0.retain(|(n, _)| *n != r.name);
        seen.0.push((r.name.clone(), r.status.clone()));
    }
    app.dirty = true;
}
