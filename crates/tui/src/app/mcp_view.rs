//! What the TUI shows of MCP servers: their part of `/tools`, `/mcp`, and a notice when one
//! fails (with its stderr tail), so a failure is never silent. [`Ready`] is the app's view of
//! the ready servers and their prompts, refreshed by the event loop, so `update` reads no hub.

use kimi_core::engine::{status_text, stderr_lines};
use kimi_core::tools::mcp::{PromptInfo, ServerReport, ServerStatus};
use kimi_protocol::sanitize::one_line;

use super::state::App;

/// The ready servers and their prompts, as the hub last reported them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Ready {
    pub(crate) servers: Vec<String>,
    /// `(server, prompt)` of the ready servers.
    pub(crate) prompts: Vec<(String, PromptInfo)>,
}

impl Ready {
    pub(crate) fn from_reports(reports: &[ServerReport]) -> Ready {
        let ready = reports.iter().filter(|r| r.status == ServerStatus::Ready);
        Ready {
            servers: ready.clone().map(|r| r.name.clone()).collect(),
            prompts: ready
                .flat_map(|r| r.prompts.iter().map(|p| (r.name.clone(), p.clone())))
                .collect(),
        }
    }
}

/// A prompt's slash command: `/mcp__SERVER__PROMPT`.
pub(crate) fn prompt_command(server: &str, prompt: &str) -> String {
    format!("/mcp__{server}__{prompt}")
}

/// A prompt's usage: its command and arguments, optional ones in brackets.
pub(crate) fn prompt_usage(server: &str, p: &PromptInfo) -> String {
    let mut s = one_line(&prompt_command(server, &p.name), 200);
    for (name, required) in &p.arguments {
        let name = one_line(name, 64);
        if *required {
            s.push_str(&format!(" {name}=…"));
        } else {
            s.push_str(&format!(" [{name}=…]"));
        }
    }
    s
}

/// `/mcp`: every server with its state, version, endpoint, instructions, tools (with their
/// approval; `always` when allowed for the session), resources, prompts (as commands), withheld
/// tools, last log lines, and for a failed one why and its stderr tail. Server text on one line
/// each.
pub(crate) fn mcp_report(
    reports: &[ServerReport],
    approval_of: impl Fn(&str) -> String,
    always_allow: &[String],
) -> String {
    if reports.is_empty() {
        return "No MCP servers are configured.".to_owned();
    }
    let mut s = String::from("MCP servers:");
    for r in reports {
        s.push_str(&format!("\n{} · {}", one_line(&r.name, 64), status_text(r)));
        if let Some(v) = &r.version {
            s.push_str(&format!("\n  version: {}", one_line(v, 120)));
        }
        if !r.endpoint.is_empty() {
            s.push_str(&format!("\n  endpoint: {}", one_line(&r.endpoint, 300)));
        }
        if let Some(i) = &r.instructions {
            let where_ = if r.instructions_in_prompt {
                "in the system prompt"
            } else {
                "not in the system prompt (`instructions = true` puts them there)"
            };
            s.push_str(&format!(
                "\n  instructions ({where_}): {}",
                one_line(i, 500)
            ));
        }
        if !r.tools.is_empty() {
            s.push_str("\n  tools:");
        }
        for name in &r.tools {
            let always = if always_allow.contains(name) {
                ", always"
            } else {
                ""
            };
            s.push_str(&format!(
                "\n    {} [{}{always}]",
                one_line(name, 200),
                approval_of(name)
            ));
        }
        if !r.resources.is_empty() {
            s.push_str("\n  resources (attach with @SERVER:URI in a message):");
        }
        for res in &r.resources {
            s.push_str(&format!(
                "\n    @{}:{} · {}",
                one_line(&r.name, 64),
                one_line(&res.uri, 300),
                one_line(&res.name, 120)
            ));
        }
        if !r.prompts.is_empty() {
            s.push_str("\n  prompts:");
        }
        for p in &r.prompts {
            s.push_str(&format!("\n    {}", prompt_usage(&r.name, p)));
            if let Some(d) = &p.description {
                s.push_str(&format!(" · {}", one_line(d, 200)));
            }
        }
        for skipped in &r.skipped {
            s.push_str(&format!("\n  withheld: {}", one_line(skipped, 300)));
        }
        if !r.log.is_empty() {
            s.push_str("\n  log:");
            let from = r.log.len().saturating_sub(5);
            for l in &r.log[from..] {
                s.push_str(&format!("\n    {}", one_line(l, 300)));
            }
        }
        if matches!(r.status, ServerStatus::Failed(_)) {
            s.push_str(&stderr_lines(r));
        }
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
    let reports = hub.reports();
    app.mcp = Ready::from_reports(&reports);
    for r in reports {
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
}
