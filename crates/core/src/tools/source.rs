//! Where tools come from: one trait for every source (the config's local tools, the MCP
//! servers), so the [`Toolbox`](super::Toolbox) lists, finds, checks and runs them the same way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::mcp::ToolNote;
use super::result::ToolResult;
use super::spec::ToolSpec;

/// A running call: what [`ToolSource::call`] returns.
///
/// A boxed future rather than an `async fn` in the trait: the toolbox keeps its sources as
/// `dyn ToolSource`, and a trait with an `async fn` cannot be used that way; one allocation per
/// call is nothing next to a process or a server round trip.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// A tool offered by a source, with the validator of its arguments.
#[derive(Debug, Clone)]
pub struct OfferedTool {
    pub spec: ToolSpec,
    pub validator: Arc<jsonschema::Validator>,
}

/// A source of tools.
pub trait ToolSource: Send + Sync + std::fmt::Debug {
    /// The tools offered now, in the source's order.
    fn specs(&self) -> Vec<ToolSpec>;

    /// The tool `name` if this source offers it now.
    fn lookup(&self, name: &str) -> Option<OfferedTool>;

    /// Whether `spec` (found through this source, perhaps since withdrawn) is this source's to
    /// run.
    fn runs(&self, spec: &ToolSpec) -> bool;

    /// Run an approved, validated call of `spec`. Progress and log lines of the call go to
    /// `notes` (sources that have none ignore it). Never panics: every failure is in the
    /// result.
    fn call<'a>(
        &'a self,
        spec: &'a ToolSpec,
        call_id: &'a str,
        arguments: &'a str,
        cancel: CancellationToken,
        notes: Option<UnboundedSender<ToolNote>>,
    ) -> CallFuture<'a>;
}
