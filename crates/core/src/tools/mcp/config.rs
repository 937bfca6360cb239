//! One `[[mcp_servers]]` entry of the config file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::tools::sandbox::{SandboxMode, SandboxPolicy};
use crate::tools::spec::Approval;

/// One `[[mcp_servers]]` entry: a stdio server (`command`, optional `env`) or a Streamable HTTP
/// server (`url`, optional `bearer_token_env`).
///
/// ```toml
/// [[mcp_servers]]
/// name = "files"
/// command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/tmp"]
/// approval = "ask"                       # the default for its tools
/// tools.read_text_file.approval = "auto" # per-tool override
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// `[A-Za-z0-9-]` and single `_`: the middle part of `mcp__SERVER__TOOL`.
    pub name: String,
    /// A stdio server's argv, run without a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Extra environment variables for a stdio server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A Streamable HTTP server's endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding the bearer token for `url`; the token is never in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// The approval of its tools unless `tools.NAME.approval` says otherwise.
    #[serde(default)]
    pub approval: Approval,
    /// Per-tool settings, by the server's own tool name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, McpToolConfig>,
    /// When set, only these tools (the server's names) are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// Tools never offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// Time to start, initialize and list the tools. Default 30 s (`npx` may download first).
    #[serde(default = "default_startup_timeout")]
    pub startup_timeout_secs: u64,
    /// Time one call may take before it is cancelled. Default 60 s.
    #[serde(default = "default_tool_timeout")]
    pub tool_timeout_secs: u64,
    /// Bytes of a result kept for the model. Default 64 KiB, as for local tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<usize>,
    /// Directories the server may know of (`roots/list`), as paths. Empty (the default): the
    /// roots capability is not advertised at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<String>,
    /// Put the server's `instructions` into the system prompt. Off by default: they are the
    /// server's words, shown in `/mcp`, and reach the model only when the user says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub instructions: bool,
    /// Where a stdio server's process may write, as for a local tool (`none`, `read-only`,
    /// `workspace-write`); its workspace is this program's current directory. A server whose
    /// sandbox this kernel cannot enforce does not start. See [`crate::tools::sandbox`].
    #[serde(default, skip_serializing_if = "SandboxMode::is_none")]
    pub sandbox: SandboxMode,
    /// `false`: a stdio server's process may not open TCP connections nor listen.
    #[serde(
        default = "crate::tools::sandbox::default_network",
        skip_serializing_if = "crate::tools::sandbox::is_true"
    )]
    pub network: bool,
    /// Variables removed from a stdio server's environment: every profile's API key variable.
    /// Set by the program, not the config file.
    #[serde(skip)]
    pub hidden_env: Vec<String>,
}

/// `tools.NAME` of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpToolConfig {
    pub approval: Approval,
}

fn default_startup_timeout() -> u64 {
    30
}
fn default_tool_timeout() -> u64 {
    60
}

/// How to reach a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport<'a> {
    Stdio(&'a [String]),
    Http(&'a str),
}

impl McpServerConfig {
    /// A stdio server with the defaults.
    pub fn stdio(name: impl Into<String>, command: Vec<String>) -> McpServerConfig {
        McpServerConfig {
            name: name.into(),
            command: Some(command),
            env: BTreeMap::new(),
            url: None,
            bearer_token_env: None,
            approval: Approval::default(),
            tools: BTreeMap::new(),
            enabled_tools: None,
            disabled_tools: Vec::new(),
            startup_timeout_secs: default_startup_timeout(),
            tool_timeout_secs: default_tool_timeout(),
            max_output_bytes: None,
            roots: Vec::new(),
            instructions: false,
            sandbox: SandboxMode::None,
            network: true,
            hidden_env: Vec::new(),
        }
    }

    /// What a stdio server's process is confined to: its `sandbox` and `network` settings.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        SandboxPolicy {
            mode: self.sandbox,
            network: self.network,
        }
    }

    /// The transport; `None` only for a config [`McpServerConfig::check`] rejects.
    pub fn transport(&self) -> Option<Transport<'_>> {
        match (&self.command, &self.url) {
            (Some(c), None) => Some(Transport::Stdio(c)),
            (None, Some(u)) => Some(Transport::Http(u)),
            _ => None,
        }
    }

    /// The approval of the server's tool `tool`.
    pub fn approval_for(&self, tool: &str) -> Approval {
        self.tools.get(tool).map_or(self.approval, |t| t.approval)
    }

    /// Whether the server's tool `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|e| e.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// The cap on a result's text.
    pub fn output_cap(&self) -> usize {
        self.max_output_bytes
            .unwrap_or(crate::tools::DEFAULT_MAX_OUTPUT_BYTES)
    }

    /// Problems a config author must fix, `; `-joined on one line, each naming its key.
    pub fn check(&self) -> Result<(), McpConfigError> {
        let mut problems = Vec::new();
        if let Err(e) = super::naming::check_server_name(&self.name) {
            problems.push(format!("name: {e}"));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => problems.push(
                "command and url: set one of them (command for a stdio server, url for an HTTP one), not both"
                    .to_owned(),
            ),
            (None, None) => problems.push(
                "command or url: missing; set command = [\"program\", \"arg\"] for a stdio server or url = \"https://...\" for an HTTP one"
                    .to_owned(),
            ),
            (Some(c), None) => {
                if c.first().is_none_or(String::is_empty) {
                    problems.push("command: the program (first element) must not be empty".to_owned());
                }
                if c.iter().any(|a| a.contains('\0')) {
                    problems.push("command: must not contain NUL characters".to_owned());
                }
            }
            (None, Some(u)) => {
                if !(u.starts_with("http://") || u.starts_with("https://")) {
                    problems.push(format!(
                        "url: expected an http:// or https:// URL, got {:?}",
                        kimi_client::redact_url(u)
                    ));
                }
            }
        }
        if self.url.is_none() && self.bearer_token_env.is_some() {
            problems.push("bearer_token_env: only for a server with url".to_owned());
        }
        if self.command.is_none() && !self.env.is_empty() {
            problems.push("env: only for a server with command".to_owned());
        }
        if self.command.is_none() && !self.sandbox_policy().is_unconfined() {
            problems.push(
                "sandbox and network: only for a server with command (an HTTP server is not a process of ours)"
                    .to_owned(),
            );
        }
        for (key, value) in &self.env {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                problems.push(format!("env: {key:?} is not a valid variable name"));
            } else if value.contains('\0') {
                problems.push(format!("env: the value of {key} must not contain NUL"));
            }
        }
        for (k, v) in [
            ("startup_timeout_secs", self.startup_timeout_secs),
            ("tool_timeout_secs", self.tool_timeout_secs),
        ] {
            if v == 0 {
                problems.push(format!("{k}: must be at least 1"));
            } else if v > crate::config::MAX_DURATION_SECS {
                problems.push(format!(
                    "{k}: must be from 1 to {} (a day), got {v}",
                    crate::config::MAX_DURATION_SECS
                ));
            }
        }
        for root in &self.roots {
            if !root.starts_with('/') {
                problems.push(format!("roots: {root:?} is not an absolute path"));
            }
        }
        if self.max_output_bytes == Some(0) {
            problems.push("max_output_bytes: must be at least 1".to_owned());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(McpConfigError { problems })
        }
    }
}

/// What a config author must fix in an `[[mcp_servers]]` entry: each problem starts with its
/// key (`url: ...`), and they show on one line joined with `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("; "))]
pub struct McpConfigError {
    pub problems: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> McpServerConfig {
        toml::from_str(text).expect("valid TOML")
    }

    #[test]
    fn stdio_and_http_parse_with_defaults() {
        let s = parse("name = \"files\"\ncommand = [\"npx\", \"-y\", \"x\"]\n");
        assert_eq!(
            s,
            McpServerConfig::stdio("files", vec!["npx".into(), "-y".into(), "x".into()])
        );
        assert_eq!(
            s.transport(),
            Some(Transport::Stdio(&["npx".into(), "-y".into(), "x".into()]))
        );
        assert_eq!((s.startup_timeout_secs, s.tool_timeout_secs), (30, 60));
        s.check().expect("valid");
        let h = parse(
            "name = \"web\"\nurl = \"https://mcp.example.com/mcp\"\nbearer_token_env = \"T\"\napproval = \"auto\"\ntools.fetch.approval = \"deny\"\n",
        );
        assert_eq!(
            h.transport(),
            Some(Transport::Http("https://mcp.example.com/mcp"))
        );
        assert_eq!(h.approval_for("fetch"), Approval::Deny);
        assert_eq!(h.approval_for("other"), Approval::Auto);
        h.check().expect("valid");
    }

    #[test]
    fn a_stdio_server_takes_a_sandbox() {
        let s =
            parse("name = \"f\"\ncommand = [\"x\"]\nsandbox = \"read-only\"\nnetwork = false\n");
        assert_eq!(
            s.sandbox_policy(),
            SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                network: false
            }
        );
        s.check().expect("valid");
        assert!(
            McpServerConfig::stdio("f", vec!["x".into()])
                .sandbox_policy()
                .is_unconfined()
        );
    }

    #[test]
    fn enabled_and_disabled_tools_filter() {
        let mut s = McpServerConfig::stdio("s", vec!["x".into()]);
        assert!(s.offers("a"));
        s.enabled_tools = Some(vec!["a".into(), "b".into()]);
        s.disabled_tools = vec!["b".into()];
        assert!(s.offers("a"));
        assert!(!s.offers("b"));
        assert!(!s.offers("c"));
    }

    #[test]
    fn check_names_each_bad_key() {
        let cases = [
            ("name = \"a b\"\ncommand = [\"x\"]\n", "name: "),
            ("name = \"a__b\"\ncommand = [\"x\"]\n", "name: "),
            ("name = \"a\"\n", "command or url: missing"),
            (
                "name = \"a\"\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n",
                "not both",
            ),
            ("name = \"a\"\ncommand = [\"\"]\n", "command: the program"),
            ("name = \"a\"\nurl = \"ftp://h\"\n", "url: expected"),
            (
                "name = \"a\"\ncommand = [\"x\"]\nbearer_token_env = \"T\"\n",
                "bearer_token_env: only",
            ),
            (
                "name = \"a\"\ncommand = [\"x\"]\ntool_timeout_secs = 0\n",
                "tool_timeout_secs: must be at least 1",
            ),
            (
                "name = \"a\"\ncommand = [\"x\"]\nenv = { \"A=B\" = \"1\" }\n",
                "env: \"A=B\"",
            ),
            (
                "name = \"a\"\nurl = \"http://h/mcp\"\nsandbox = \"read-only\"\n",
                "sandbox and network: only for a server with command",
            ),
            (
                "name = \"a\"\nurl = \"http://h/mcp\"\nnetwork = false\n",
                "sandbox and network: only",
            ),
        ];
        for (text, expected) in cases {
            let e = parse(text).check().expect_err(expected).to_string();
            assert!(e.contains(expected), "{e:?} should contain {expected:?}");
        }
        let e = toml::from_str::<McpServerConfig>(
            "name = \"a\"\ncommand = [\"x\"]\napprovl = \"ask\"\n",
        )
        .expect_err("unknown key");
        assert!(e.to_string().contains("approvl"), "{e}");
    }
}
