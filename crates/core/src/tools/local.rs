//! The config's `[[tools]]` as a tool source: each call runs the tool's process ([`run`]).

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::mcp::ToolNote;
use super::result::ToolResult;
use super::runner::run;
use super::source::{CallFuture, OfferedTool, ToolSource};
use super::spec::{ToolSpec, compile_parameters};
use super::toolbox::ToolboxError;

/// The declared tools with their compiled schemas, in config order.
#[derive(Debug, Default)]
pub struct LocalTools {
    specs: Vec<ToolSpec>,
    /// `validators[i]` checks the arguments of `specs[i]`.
    validators: Vec<Arc<jsonschema::Validator>>,
}

impl LocalTools {
    /// Check every spec ([`ToolSpec::check`]) and compile its schema. Duplicate names are
    /// rejected. The error is one line per bad tool, each starting with ``tool `name`: `` (or
    /// `tool #3:` for a tool without a name, counting from 1).
    pub fn new(specs: Vec<ToolSpec>) -> Result<LocalTools, ToolboxError> {
        let mut problems = Vec::new();
        let mut validators = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let label = if spec.name.is_empty() {
                format!("tool #{}", i + 1)
            } else {
                format!("tool `{}`", spec.name)
            };
            if let Err(e) = spec.check() {
                problems.push(format!("{label}: {e}"));
                continue;
            }
            if specs[..i].iter().any(|s| s.name == spec.name) {
                problems.push(format!(
                    "{label}: declared twice; tool names must be unique"
                ));
                continue;
            }
            match compile_parameters(&spec.parameters) {
                Ok(v) => validators.push(Arc::new(v)),
                Err(e) => problems.push(format!("{label}: parameters: {e}")),
            }
        }
        if problems.is_empty() {
            Ok(LocalTools { specs, validators })
        } else {
            Err(ToolboxError { problems })
        }
    }

    pub fn declared(&self) -> &[ToolSpec] {
        &self.specs
    }
}

impl ToolSource for LocalTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    fn lookup(&self, name: &str) -> Option<OfferedTool> {
        let i = self.specs.iter().position(|s| s.name == name)?;
        Some(OfferedTool {
            spec: self.specs[i].clone(),
            validator: self.validators[i].clone(),
        })
    }

    /// Every spec that is not an MCP server's is a process to run.
    fn runs(&self, spec: &ToolSpec) -> bool {
        spec.mcp.is_none()
    }

    fn call<'a>(
        &'a self,
        spec: &'a ToolSpec,
        call_id: &'a str,
        arguments: &'a str,
        cancel: CancellationToken,
        _notes: Option<UnboundedSender<ToolNote>>,
    ) -> CallFuture<'a> {
        Box::pin(async move { ToolResult::from(run(spec, call_id, arguments, cancel).await) })
    }
}
