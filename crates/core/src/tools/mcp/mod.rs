//! MCP servers as a second source of tools, through the official Rust SDK (`rmcp`, client
//! side). The config ([`McpServerConfig`]) names each server; the [`McpHub`] starts them in the
//! background, offers their tools as `mcp__SERVER__TOOL` ([`naming`]) through the
//! [`Toolbox`](super::Toolbox), withdraws them when a server fails or dies, runs approved calls
//! (cancellable) and converts the results ([`convert`]) under the local tools' output cap.

pub mod config;
pub mod convert;
mod hub;
pub mod naming;
mod server;

pub use config::{McpServerConfig, McpToolConfig};
pub use hub::{CallOutput, McpHub, ServerReport, ServerStatus};

/// Which server and which of its tools an offered MCP tool is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOrigin {
    pub server: String,
    /// The server's own name for the tool (before sanitising).
    pub tool: String,
}
