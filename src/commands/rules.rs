//! `kimi-tui rules check [--config PATH] TOOL ARGS_JSON`: what the rules in force decide about
//! a call, without running anything. The tool's own `approval` comes from the config (a local
//! tool, or an MCP server's setting for its `mcp__SERVER__TOOL`); a tool the config does not
//! name asks, as an unknown MCP tool would.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::{RulesAction, RulesArgs, RulesCheckArgs};
use kimi_core::config::{self, Config};
use kimi_core::tools::ToolSpec;
use kimi_core::tools::rules::{self, DecisionOrigin};
use kimi_protocol::sanitize;

pub fn run(args: &RulesArgs, global_config: Option<&PathBuf>) -> Result<()> {
    match &args.action {
        RulesAction::Check(check) => run_check(check, global_config),
    }
}

fn run_check(args: &RulesCheckArgs, global_config: Option<&PathBuf>) -> Result<()> {
    let path = args
        .config
        .clone()
        .or_else(|| global_config.cloned())
        .or_else(config::default_path);
    let named = args.config.is_some() || global_config.is_some();
    let config = match &path {
        Some(p) if named || p.exists() => Some(Config::load(p)?),
        _ => None,
    };
    let arguments: serde_json::Value =
        serde_json::from_str(&args.args_json).context("ARGS_JSON is not valid JSON")?;
    anyhow::ensure!(arguments.is_object(), "ARGS_JSON must be a JSON object");
    let spec = tool_spec(config.as_ref(), &args.tool);
    let tools = config.as_ref().map(|c| c.tools.clone()).unwrap_or_default();
    let config_rules = match (&config, &path) {
        (Some(c), Some(p)) => c.rules_in_force(p),
        _ => Vec::new(),
    };
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let trusted = args.trust_project || kimi_core::trust::is_trusted(&cwd);
    let session = rules::session_rules(config_rules, path, &cwd, &tools, trusted)?;
    for n in &session.notices {
        eprintln!("kimi-tui: {}", sanitize::for_terminal(n));
    }
    let decided = session.rules.preview(&spec, &arguments);
    for n in &decided.notices {
        eprintln!("kimi-tui: {}", sanitize::for_terminal(n));
    }
    let d = decided.decision;
    let mut out = format!("decision: {}\n", d.verdict);
    match &d.origin {
        DecisionOrigin::Rule { label, source, .. } => {
            // The label is one line already; a path could hold a line break.
            let at = sanitize::one_line(&source.to_string(), 1000);
            out.push_str(&format!("rule: {label}\nat: {at}\n"));
        }
        DecisionOrigin::ToolApproval => {
            out.push_str(&format!(
                "rule: none (the tool's approval setting: {})\n",
                approval_word(&spec)
            ));
        }
    }
    super::write_stdout(sanitize::for_terminal(&out).as_bytes())
}

/// The config's tool `name`; else an MCP tool with its server's approval (no schema known
/// without starting the server); else an unknown tool, which asks.
fn tool_spec(config: Option<&Config>, name: &str) -> ToolSpec {
    let mut spec = ToolSpec::new(name, Vec::new());
    // No schema: every argument a rule names may exist.
    spec.parameters = serde_json::json!({"type": "object"});
    let Some(c) = config else {
        return spec;
    };
    if let Some(local) = c.tools.iter().find(|t| t.name == name) {
        return local.clone();
    }
    let server = c.mcp_servers.iter().find_map(|s| {
        let prefix = format!("{}{}__", kimi_core::tools::mcp::naming::PREFIX, s.name);
        name.strip_prefix(&prefix).map(|tool| (s, tool))
    });
    if let Some((s, tool)) = server {
        spec.approval = s.approval_for(tool);
    }
    spec
}

fn approval_word(spec: &ToolSpec) -> &'static str {
    match spec.approval {
        kimi_core::tools::Approval::Ask => "ask",
        kimi_core::tools::Approval::Auto => "auto",
        kimi_core::tools::Approval::Deny => "deny",
    }
}
