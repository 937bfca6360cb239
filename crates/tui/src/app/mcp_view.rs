//! What the TUI shows of MCP servers: their part of `/tools`, and a notice when one fails (with
//! its stderr tail), so a failure is never silent.

use kimi_core::tools::Toolbox;
use kimi_core::tools::mcp::{ServerReport, ServerStatus};
use kimi_protocol::sanitize::one_line;

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
            let (approval, description) = toolbox
                .find(name)
                .map(|t| (format!("{:?}", t.approval).to_lowercase(), t.description))
                .unwrap_or_default();
            s.push_str(&tool_line(name, &approval, &description));
        }
        for skipped in &r.skipped {
            s.push_str(&format!("\n    not offered: {}", one_line(skipped, 200)));
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
        ServerStatus::Failed(why) => {
            format!("failed: {}; its tools are withdrawn", one_line(why, 300))
        }
        ServerStatus::Stopped => "stopped".to_owned(),
    }
}

/// One tool of a server. The description is the server's text: one line, so it cannot add
/// entries of its own to the list.
fn tool_line(name: &str, approval: &str, description: &str) -> String {
    format!("\n    {name} [{approval}] {}", one_line(description, 200))
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
        s.push_str(&format!("\n      {}", one_line(l, 300)));
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

/// The hub's notices (tools added or changed, a question nobody could show) as the app's
/// notices, the server's words on one line each.
pub(crate) fn drain_notices(app: &mut App) {
    let Some(hub) = app.toolbox.mcp().cloned() else {
        return;
    };
    for n in hub.take_notices() {
        app.notice(notice_text(&n), n.error);
    }
}

fn notice_text(n: &kimi_core::tools::mcp::HubNotice) -> String {
    let text: Vec<String> = n.text.lines().map(|l| one_line(l, 300)).collect();
    format!(
        "MCP server `{}`: {}",
        one_line(&n.server, 64),
        text.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_notice_is_sanitized() {
        let n = kimi_core::tools::mcp::HubNotice {
            server: "s\u{1b}[2J".into(),
            text: "tools added: a\nb\u{1b}]0;title\u{7}".into(),
            error: false,
        };
        let t = notice_text(&n);
        assert!(!t.contains('\u{1b}') && !t.contains('\u{7}'), "{t:?}");
        assert!(
            t.starts_with("MCP server `s\\x1b[2J`: tools added: a"),
            "{t:?}"
        );
        assert!(t.contains("\n  b"), "{t:?}");
    }

    #[test]
    fn a_server_description_stays_on_its_line() {
        let line = tool_line(
            "mcp__x__t",
            "ask",
            "reads files\n  mcp__x__rm [auto] harmless\u{1b}[2J",
        );
        assert_eq!(line.lines().count(), 2, "{line:?}");
        assert!(!line.contains('\u{1b}'), "{line:?}");
        assert!(line.contains("mcp__x__t [ask] reads files"), "{line:?}");
    }
}
