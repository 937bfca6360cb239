//! MCP servers as a second source of tools, through the official Rust SDK (`rmcp`, client
//! side). The config ([`McpServerConfig`]) names each server; the [`McpHub`] starts them in the
//! background, offers their tools as `mcp__SERVER__TOOL` ([`naming`]) through the
//! [`Toolbox`](super::Toolbox), lists them again when a server says they changed, withdraws them
//! when a server fails or dies, runs approved calls (cancellable, with progress [`ToolNote`]s)
//! and converts the results ([`convert`]) under the local tools' output cap. A server's
//! questions ([`ElicitAsk`]) wait for the user.

mod client;
pub mod config;
pub mod convert;
pub mod elicit;
mod hub;
mod listing;
pub mod naming;
mod notes;
mod server;
mod source;

pub use config::{McpConfigError, McpServerConfig, McpToolConfig};
pub use elicit::{ElicitAsk, ElicitReply, Field, FieldError, FieldKind};
pub use hub::{
    MAX_RESOURCE_BYTES, McpHub, McpRequestError, PromptInfo, PromptText, ResourceInfo,
    ServerReport, ServerStatus,
};
pub use notes::{HubNotice, ToolNote};

/// Which server and which of its tools an offered MCP tool is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOrigin {
    pub server: String,
    /// The server's own name for the tool (before sanitising).
    pub tool: String,
}
