//! Tools: specs ([`ToolSpec`]), argument validation ([`Toolbox::check_call`], [`CallProblem`]),
//! and their sources ([`ToolSource`]): the config's local tools ([`LocalTools`], each call a
//! process run by [`run`]) and the MCP servers ([`mcp::McpHub`]).
//!
//! The flow for one call: [`Toolbox::check_call`] parses and validates the arguments (an unknown
//! tool or bad arguments never run); the caller applies [`ToolSpec::approval`] (ask the user, run,
//! or answer [`CallProblem::denied_by_config`]); an approved call goes to
//! [`Toolbox::run_call`], which hands it to the source that offered the tool. Every source
//! answers with a [`ToolResult`], whose `content` is the `tool` message. A refused call's
//! message is the problem's `Display`. A tool or stdio server with `sandbox` or
//! `network = false` runs confined by the kernel ([`sandbox`]), or not at all.

pub mod env;
mod local;
pub mod mcp;
mod result;
pub mod rules;
pub(crate) mod runner;
pub mod sandbox;
mod source;
pub mod spec;
pub mod toolbox;
pub(crate) mod validate;

pub use local::LocalTools;
pub use result::{Failure, ToolResult, ToolStatus};
pub use runner::{ExitKind, ToolOutcome, run};
pub use source::{CallFuture, OfferedTool, ToolSource};
pub use spec::{Approval, DEFAULT_MAX_OUTPUT_BYTES, SchemaError, ToolSpec, ToolSpecError};
pub use toolbox::{Toolbox, ToolboxError};
pub use validate::{CallProblem, check_against_schema};
