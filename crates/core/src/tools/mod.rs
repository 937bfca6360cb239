//! Tools from the config file: specs ([`ToolSpec`]), argument validation ([`Toolbox::check_call`],
//! [`CallProblem`]) and the process runner ([`run`]).
//!
//! The flow for one call: [`Toolbox::check_call`] parses and validates the arguments (an unknown
//! tool or bad arguments never run); the caller applies [`ToolSpec::approval`] (ask the user, run,
//! or answer [`CallProblem::denied_by_config`]); an approved call goes to [`run`], whose
//! [`ToolOutcome::to_model_content`] is the `tool` message. A refused call's message is the
//! problem's `Display`.

pub mod env;
pub mod mcp;
pub(crate) mod runner;
pub mod spec;
pub mod toolbox;
pub(crate) mod validate;

pub use runner::{ExitKind, ToolOutcome, run};
pub use spec::{Approval, DEFAULT_MAX_OUTPUT_BYTES, SchemaError, ToolSpec, ToolSpecError};
pub use toolbox::{Toolbox, ToolboxError};
pub use validate::CallProblem;
