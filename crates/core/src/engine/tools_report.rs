//! `/tools` as data: each configured tool with its approval and command, and the MCP servers'
//! section already rendered (each server, its state, its tools, and for a failed one why and
//! its stderr tail). The screen adds what only it knows ("always allowed this session").

use kimi_protocol::sanitize::one_line;

use crate::tools::Toolbox;
use crate::tools::mcp::{ServerReport, ServerStatus};

/// One configured tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLine {
    pub name: String,
    /// `auto`, `ask` or `deny`.
    pub approval: String,
    /// The command line, joined by spaces.
    pub command: String,
    pub description: String,
}

/// A line of the MCP section: rendered text, or one of a server's tools, kept apart so that
/// the screen can mark it allowed for the session as it does a configured tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpLine {
    Text(String),
    Tool {
        name: String,
        approval: String,
        description: String,
    },
}

/// What `/tools` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsReport {
    pub tools: Vec<ToolLine>,
    /// The MCP section; empty without servers.
    pub mcp: Vec<McpLine>,
}

impl ToolsReport {
    pub fn of(toolbox: &Toolbox) -> ToolsReport {
        ToolsReport {
            tools: (toolbox.specs().iter())
                .map(|t| ToolLine {
                    name: t.name.clone(),
                    approval: approval_text(&t.approval),
                    command: t.command.join(" "),
                    description: t.description.clone(),
                })
                .collect(),
            mcp: mcp_section(toolbox),
        }
    }

    /// The MCP section as text (empty without servers); `always(name)` says which tools are
    /// allowed for the session.
    pub fn mcp_text(&self, always: impl Fn(&str) -> bool) -> String {
        let mut s = String::new();
        for line in &self.mcp {
            match line {
                McpLine::Text(t) => s.push_str(t),
                McpLine::Tool {
                    name,
                    approval,
                    description,
                } if always(name) => s.push_str(&tool_line(
                    name,
                    &format!("{approval}, always allowed this session"),
                    description,
                )),
                McpLine::Tool {
                    name,
                    approval,
                    description,
                } => s.push_str(&tool_line(name, approval, description)),
            }
        }
        s
    }
}

fn approval_text(a: &impl std::fmt::Debug) -> String {
    format!("{a:?}").to_lowercase()
}

/// The MCP section of `/tools`. Empty without servers.
fn mcp_section(toolbox: &Toolbox) -> Vec<McpLine> {
    let Some(hub) = toolbox.mcp() else {
        return Vec::new();
    };
    let mut lines = vec![McpLine::Text("MCP servers:".to_owned())];
    for r in hub.reports() {
        let mut s = format!("\n  {} · {}", r.name, status_text(&r));
        for name in &r.tools {
            let (approval, description) = toolbox
                .find(name)
                .map(|t| (approval_text(&t.approval), t.description))
                .unwrap_or_default();
            lines.push(McpLine::Text(std::mem::take(&mut s)));
            lines.push(McpLine::Tool {
                name: name.clone(),
                approval,
                description,
            });
        }
        for skipped in &r.skipped {
            s.push_str(&format!("\n    not offered: {}", one_line(skipped, 200)));
        }
        if matches!(r.status, ServerStatus::Failed(_)) {
            s.push_str(&stderr_lines(&r));
        }
        lines.push(McpLine::Text(s));
    }
    lines
}

/// A server's state in a line: `ready, 3 tools`, `failed: why; ...`.
pub fn status_text(r: &ServerReport) -> String {
    match &r.status {
        ServerStatus::Starting => "starting".to_owned(),
        ServerStatus::Ready => match r.tools.len() {
            1 => "ready, 1 tool".to_owned(),
            n => format!("ready, {n} tools"),
        },
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

/// The last lines of a server's stderr, which explain a failure; empty when it wrote none.
pub fn stderr_lines(r: &ServerReport) -> String {
    let tail = r.stderr_tail.trim_end();
    if tail.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = tail.lines().collect();
    let from = lines.len().saturating_sub(8);
    let mut s = String::from("\n    stderr:");
    for l in &lines[from..] {
        s.push_str(&format!("\n      {}", one_line(l, 300)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolSpec;

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

    #[test]
    fn a_ready_server_counts_its_tools_in_words() {
        let mut r = ServerReport {
            name: "srv".into(),
            status: ServerStatus::Ready,
            tools: vec!["mcp__srv__a".into()],
            skipped: Vec::new(),
            stderr_tail: String::new(),
            version: None,
            instructions: None,
            instructions_in_prompt: false,
            resources: Vec::new(),
            prompts: Vec::new(),
            log: Vec::new(),
            endpoint: String::new(),
        };
        assert_eq!(status_text(&r), "ready, 1 tool");
        r.tools.push("mcp__srv__b".into());
        assert_eq!(status_text(&r), "ready, 2 tools");
    }

    #[test]
    fn the_mcp_section_marks_only_the_tools_said_to_be_always_allowed() {
        let report = ToolsReport {
            tools: Vec::new(),
            mcp: vec![
                McpLine::Text("MCP servers:\n  srv · ready, 2 tools".into()),
                McpLine::Tool {
                    name: "mcp__srv__a".into(),
                    approval: "ask".into(),
                    description: "first".into(),
                },
                McpLine::Tool {
                    name: "mcp__srv__b".into(),
                    approval: "ask".into(),
                    description: "second".into(),
                },
            ],
        };
        assert_eq!(
            report.mcp_text(|n| n == "mcp__srv__b"),
            "MCP servers:\n  srv · ready, 2 tools\n    mcp__srv__a [ask] first\n    mcp__srv__b [ask, always allowed this session] second"
        );
    }

    #[test]
    fn configured_tools_are_reported_with_approval_and_command() {
        let spec = ToolSpec {
            description: "Get weather".into(),
            ..ToolSpec::new("get_weather", vec!["./weather.sh".into(), "-q".into()])
        };
        let report = ToolsReport::of(&Toolbox::new(vec![spec]).expect("valid"));
        assert_eq!(
            report.tools,
            [ToolLine {
                name: "get_weather".into(),
                approval: "ask".into(),
                command: "./weather.sh -q".into(),
                description: "Get weather".into(),
            }]
        );
        assert!(report.mcp.is_empty());
    }
}
