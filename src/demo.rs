//! `--demo`: the built-in mock server on a free loopback port and demo tools that work on any
//! Unix machine, so a new user sees streaming, a tool call, approval and the inspector with
//! nothing installed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use kimi_core::config::{Profile, Resolved};
use kimi_core::tools::mcp::McpServerConfig;
use kimi_core::tools::{Approval, ToolSpec};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Mode;

/// Write the demo scripts into `dir` (executable) and describe them as tools.
pub fn demo_tools(dir: &Path) -> Result<Vec<ToolSpec>> {
    crate::commands::example_tools::install(dir)?;
    let script = |n: &str| vec![dir.join(n).display().to_string()];
    Ok(vec![
        ToolSpec {
            description: "Get the current weather for a city".into(),
            parameters: json!({"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string", "description": "City name"}}}),
            approval: Approval::Ask,
            timeout_secs: 10,
            command: script("weather.sh"),
            ..ToolSpec::new("get_weather", Vec::new())
        },
        ToolSpec {
            description: "Get the current date and time".into(),
            parameters: json!({"type": "object", "properties": {}}),
            approval: Approval::Auto,
            timeout_secs: 5,
            command: script("time.sh"),
            ..ToolSpec::new("get_time", Vec::new())
        },
        ToolSpec {
            description: "List the files in a directory".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "Directory to list"}}}),
            approval: Approval::Ask,
            timeout_secs: 10,
            command: script("list_dir.sh"),
            ..ToolSpec::new("list_dir", Vec::new())
        },
    ])
}

/// The profile name of a demo run, as its saved sessions record it.
pub const PROFILE: &str = "demo";

/// Where the demo scripts go.
pub fn tools_dir() -> PathBuf {
    kimi_ui::state_dir().join("demo-tools")
}

/// Start the mock server (streaming at a visible pace) and the demo profile. `model` picks the
/// mock's model: `--demo --model kimi-k2-thinking` (or K2.5/K2.6 names) runs the thinking model.
pub async fn start(mode: Option<Mode>, model: Option<String>) -> Result<(MockServer, Resolved)> {
    let defaults = MockOptions::default();
    let model = model.unwrap_or(defaults.model.clone());
    let server = MockServer::start(
        MockOptions {
            delay_ms: 12,
            // A thinking model's reasoning, a sentence or two, would stream by in a blink.
            reasoning_ms: 900,
            model: model.clone(),
            ..defaults
        },
        0,
    )
    .await
    .context("cannot start the demo server")?;
    let mut profile = Profile::new(mode.unwrap_or(Mode::Raw), &server.base_url());
    profile.model = model;
    // The inspector's token view (`t`) has data to show: ids, logprobs, 5 alternatives.
    profile.logprobs = 5;
    if !profile.template().thinks() {
        profile.max_tokens = Some(4096);
    }
    let tools = demo_tools(&tools_dir())?;
    let profile_copy = profile.clone();
    Ok((
        server,
        Resolved {
            profile_name: PROFILE.into(),
            profile,
            tools,
            config_path: None,
            mcp_servers: demo_mcp_servers(),
            // The demo's tools ask, as they always did: no rules.
            rules: Vec::new(),
            ui: Default::default(),
            // The demo's prompts are the user's prompts: recalled in the next run too.
            history: true,
            // The demo has one profile: `/profile` lists it.
            profiles: [(PROFILE.to_owned(), profile_copy)].into(),
        },
    ))
}

/// The demo's MCP server: this binary's `mock-mcp-server` (stdio), offering `echo`, `add`,
/// `image` and `ask` (a question for the user) as `mcp__demo__*`. None when this binary's path is unknown.
pub fn demo_mcp_servers() -> Vec<McpServerConfig> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let mut server = McpServerConfig::stdio(
        "demo",
        vec![exe.display().to_string(), "mock-mcp-server".to_owned()],
    );
    server.enabled_tools = Some(vec![
        "echo".into(),
        "add".into(),
        "image".into(),
        "ask".into(),
    ]);
    server.startup_timeout_secs = 10;
    vec![server]
}
