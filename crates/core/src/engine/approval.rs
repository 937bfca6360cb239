//! Who decides whether a call runs. The agent loop asks an [`Approver`] about every call that
//! the config does not settle (`auto` with valid arguments runs, `deny` never does); the TUI
//! plugs an interactive dialog in here, `exec` a fixed policy.

use std::future::Future;

use crate::tools::rules::RuleDecision;
use crate::tools::{CallProblem, ToolSpec};
use kimi_protocol::ToolCall;

/// What the approver decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run with these arguments (the model's, or the user's edit of them).
    Approve { arguments: String },
    /// Do not run; the reason, if any, goes to the model.
    Deny { reason: Option<String> },
}

/// A call awaiting a decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// Position of the call in the assistant turn.
    pub index: usize,
    pub call: ToolCall,
    pub spec: ToolSpec,
    /// The arguments under consideration (the model's, or an earlier edit).
    pub arguments: String,
    /// Why the arguments cannot run as they are; empty when they can.
    pub problems: Vec<CallProblem>,
    /// Why the dialog is shown: an `ask` rule (which, from which file and line), or the
    /// tool's `approval` when no rule matched. An `allow` here means the rules would run
    /// the arguments as they are but they are invalid.
    pub rule: RuleDecision,
}

pub trait Approver: Send {
    fn decide(&mut self, request: ApprovalRequest) -> impl Future<Output = Decision> + Send;
}

/// `exec`'s policy: approve valid `ask` calls only with `--yes`; never approve invalid arguments.
#[derive(Debug, Clone, Copy)]
pub struct FixedPolicy {
    pub yes: bool,
}

impl Approver for FixedPolicy {
    async fn decide(&mut self, request: ApprovalRequest) -> Decision {
        if self.yes && request.problems.is_empty() {
            Decision::Approve {
                arguments: request.arguments,
            }
        } else {
            Decision::Deny { reason: None }
        }
    }
}
