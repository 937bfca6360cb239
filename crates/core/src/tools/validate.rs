//! Why a tool call must not run as it is: an unknown tool, arguments that are not a JSON object,
//! arguments that break the tool's schema, or a denial.

use std::fmt;

use serde_json::Value;

use kimi_protocol::completion::{ArgumentsError, parse_arguments};

use super::spec::one_line;

/// At most this many schema errors are listed; the rest are counted.
pub(crate) const MAX_SCHEMA_ERRORS: usize = 10;

/// Why a call must not run as it is. `Display` gives one line the user and the model can read;
/// it is what the model receives as the tool result when the call is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallProblem {
    /// The model called a tool that is not declared. Such a call is never run.
    #[error("{}", unknown_tool(name, known))]
    UnknownTool { name: String, known: Vec<String> },
    /// The arguments are not valid JSON; the parser's message.
    #[error("the arguments are not valid JSON: {error}")]
    InvalidJson { error: String },
    /// The arguments are a JSON string that itself holds JSON.
    #[error(
        "the arguments are a JSON string holding JSON (double-encoded); send the object itself"
    )]
    DoubleEncoded,
    /// The arguments are valid JSON but not an object.
    #[error("the arguments must be a JSON object")]
    NotAnObject,
    /// The arguments break the tool's `parameters` schema. Each error reads
    /// `at /city: 42 is not of type "string"`; the root is shown as `/`.
    #[error("the arguments do not match the tool's parameters: {}", errors.join("; "))]
    Schema { errors: Vec<String> },
    /// The config denies the tool, or the user declined the call (with the reason they typed).
    #[error("{}", denied(reason.as_deref()))]
    Denied { reason: Option<String> },
    /// A `deny` rule matches the call: `rule` is how it is named (its reason, or what it
    /// matches), `at` where it is written.
    #[error("denied by the rule `{rule}` ({at}); do not retry this call")]
    DeniedByRule { rule: String, at: String },
}

impl CallProblem {
    /// The user declined in the approval dialog; an empty reason counts as none.
    pub(crate) fn declined_by_user(reason: Option<String>) -> CallProblem {
        CallProblem::Denied {
            reason: reason
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty()),
        }
    }

    /// The config sets `approval = "deny"` for the tool `name`.
    pub(crate) fn denied_by_config(name: &str) -> CallProblem {
        CallProblem::Denied {
            reason: Some(format!(
                "the configuration sets approval = \"deny\" for `{name}`"
            )),
        }
    }

    /// Whether the user could fix the call by editing its arguments (as opposed to an unknown
    /// tool or a denial).
    pub fn is_argument_problem(&self) -> bool {
        matches!(
            self,
            CallProblem::InvalidJson { .. }
                | CallProblem::DoubleEncoded
                | CallProblem::NotAnObject
                | CallProblem::Schema { .. }
        )
    }
}

fn unknown_tool(name: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("tool `{name}` does not exist; no tools are available")
    } else {
        format!(
            "tool `{name}` does not exist; available tools: {}",
            known.join(", ")
        )
    }
}

fn denied(reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("the user declined to run this tool: {}", one_line(r)),
        None => "the user declined to run this tool".to_owned(),
    }
}

impl From<ArgumentsError> for CallProblem {
    fn from(e: ArgumentsError) -> CallProblem {
        match e {
            ArgumentsError::Invalid(error) => CallProblem::InvalidJson { error },
            ArgumentsError::DoubleEncoded => CallProblem::DoubleEncoded,
            ArgumentsError::NotAnObject => CallProblem::NotAnObject,
        }
    }
}

/// Parse `arguments` and validate them against a tool's `parameters` schema, compiled here:
/// for checks that have the schema but no tool to run (`doctor --conformance`).
pub fn check_against_schema(parameters: &Value, arguments: &str) -> Result<Value, CallProblem> {
    let validator = jsonschema::validator_for(parameters).map_err(|e| CallProblem::Schema {
        errors: vec![one_line(&format!("the tool's schema is not valid: {e}"))],
    })?;
    check_arguments(&validator, arguments)
}

/// Parse `arguments` (shared rules with the completion parser's warnings) and validate them
/// against `validator`. Ok is the arguments object.
pub(crate) fn check_arguments(
    validator: &jsonschema::Validator,
    arguments: &str,
) -> Result<Value, CallProblem> {
    let args = Value::Object(parse_arguments(arguments)?);
    let mut errors = Vec::new();
    let mut more = 0usize;
    for e in validator.iter_errors(&args) {
        if errors.len() == MAX_SCHEMA_ERRORS {
            more += 1;
            continue;
        }
        errors.push(schema_error(e.instance_path().as_str(), &e));
    }
    if more > 0 {
        errors.push(format!("and {more} more"));
    }
    if errors.is_empty() {
        Ok(args)
    } else {
        Err(CallProblem::Schema { errors })
    }
}

fn schema_error(path: &str, error: &dyn fmt::Display) -> String {
    let path = if path.is_empty() { "/" } else { path };
    one_line(&format!("at {path}: {error}"))
}
