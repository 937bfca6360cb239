//! The MCP servers as a tool source: the tools of the ready servers, each call a `tools/call`
//! to its server.

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::hub::McpHub;
use super::notes::ToolNote;
use crate::tools::source::{CallFuture, OfferedTool, ToolSource};
use crate::tools::spec::ToolSpec;

impl ToolSource for McpHub {
    fn specs(&self) -> Vec<ToolSpec> {
        McpHub::specs(self)
    }

    fn lookup(&self, name: &str) -> Option<OfferedTool> {
        McpHub::lookup(self, name)
    }

    /// A tool that came from a server; the server may have withdrawn it since, which the call
    /// then reports.
    fn runs(&self, spec: &ToolSpec) -> bool {
        spec.mcp.is_some()
    }

    fn call<'a>(
        &'a self,
        spec: &'a ToolSpec,
        _call_id: &'a str,
        arguments: &'a str,
        cancel: CancellationToken,
        notes: Option<UnboundedSender<ToolNote>>,
    ) -> CallFuture<'a> {
        Box::pin(self.call_tool(spec, arguments, cancel, notes))
    }
}
