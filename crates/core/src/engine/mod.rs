//! The agent as an actor. One tokio task ([`Agent`]) owns the conversation, the traces, the
//! tools and the backend; callers send it [`Op`]s and read [`EngineEvent`]s from a bounded
//! channel. Every event is sent with `send().await`, so a slow reader slows the stream down
//! instead of queueing it (no `block_in_place`: it runs on a current-thread runtime too).
//!
//! The agent loop itself (`turn.rs`): send the conversation, stream the answer, ask about each
//! call, run the approved ones, send the results back, until the model answers without calls.

mod agent;
pub(crate) mod approval;
mod compare;
mod continue_edit;
mod event;
mod inbox;
mod live_answer;
mod logprobs;
mod mirror;
mod recorder;
pub mod replay;
mod retry;
mod rewind;
mod rule_ops;
mod session_op;
mod session_start;
mod shared_trace;
mod supervisor;
mod switchboard;
mod tools_report;
mod turn;

pub use agent::{Agent, AgentHandle, AgentInit, EVENT_QUEUE, panic_message};
pub use approval::{ApprovalRequest, Approver, Decision, FixedPolicy};
pub use continue_edit::{EditableAnswer, editable_answer};
pub use event::{EngineEvent, Op, SystemChange, TurnOutcome, set_system};
pub use recorder::{PARTIAL_SAVE_EVERY, Recorder};
pub use rewind::user_message_index;
pub use session_op::SessionHandoff;
pub use shared_trace::SharedTrace;
pub use supervisor::{Supervisor, SupervisorInit, toolbox_answer};
pub use switchboard::{
    ConnectionView, ProfileChoice, ProfileSummary, StartError, SwitchRefused, Switchboard,
};
pub use tools_report::{McpLine, ToolLine, ToolsReport, status_text, stderr_lines};
