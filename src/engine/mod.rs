//! The agent loop: send the conversation, stream the answer, ask about each call, run the
//! approved ones, send the results back, until the model answers without calls.

pub mod approval;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use approval::{ApprovalRequest, Approver, Decision, FixedPolicy};

use crate::backend::{Backend, BackendError, StreamEvent, Trace, TurnResult, Usage};
use crate::protocol::{Message, ToolCall};
use crate::tools::{self, Approval, CallProblem, ToolOutcome, Toolbox};

/// What the loop reports as it goes. Listeners render these; the loop owns the conversation.
#[derive(Debug, Clone)]
pub enum EngineEvent {
    /// A request to the model is about to be sent (`round` counts from 1 within the turn).
    RoundStarted {
        round: u32,
    },
    Stream(StreamEvent),
    /// The model's answer for this round is complete (or failed): the message appended, and
    /// the request's trace for the inspector.
    RoundFinished {
        round: u32,
        message: Option<Box<Message>>,
        finish: String,
        error: Option<Box<BackendError>>,
        cancelled: bool,
        trace: Box<Trace>,
    },
    /// A call that will not run: unknown tool, bad arguments, denied by config or user.
    ToolRefused {
        index: usize,
        call: ToolCall,
        problem: CallProblem,
    },
    /// An approved call is starting, with the arguments it gets.
    ToolStarted {
        index: usize,
        call: ToolCall,
        arguments: String,
    },
    ToolFinished {
        index: usize,
        call: ToolCall,
        outcome: Box<ToolOutcome>,
    },
    /// A tool result appended to the conversation.
    ToolResult {
        index: usize,
        message: Message,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, Default)]
pub struct TurnOutcome {
    pub rounds: u32,
    pub error: Option<BackendError>,
    pub cancelled: bool,
    /// The loop stopped at `max_rounds` while the model still wanted tools.
    pub hit_max_rounds: bool,
    /// The last answer was cut off (max_tokens) rather than finished.
    pub truncated: bool,
    pub usage: Usage,
}

/// The loop's fixed parts.
pub struct Agent<'a> {
    pub backend: &'a Backend,
    pub toolbox: &'a Toolbox,
    pub max_rounds: u32,
}

impl Agent<'_> {
    /// Run one user turn to the end. The conversation must already hold the user's message;
    /// everything the model and the tools produce is appended to it, even when the turn fails
    /// (a partial answer is kept).
    pub async fn run_turn(
        &self,
        conversation: &mut Vec<Message>,
        approver: &mut impl Approver,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(EngineEvent) + Send),
    ) -> TurnOutcome {
        // Whoever listens (the TUI, exec), tool outcomes reach the log file.
        let on_event = &mut |e: EngineEvent| {
            crate::logging::engine_event(&e);
            on_event(e)
        };
        let tools: Vec<Value> = self.toolbox.openai_tools();
        let mut outcome = TurnOutcome::default();
        for round in 1..=self.max_rounds {
            outcome.rounds = round;
            on_event(EngineEvent::RoundStarted { round });
            let result = self
                .backend
                .stream_turn(conversation, &tools, cancel, &mut |e| {
                    on_event(EngineEvent::Stream(e))
                })
                .await;
            if let Some(u) = result.usage {
                outcome.usage.prompt_tokens += u.prompt_tokens;
                outcome.usage.completion_tokens += u.completion_tokens;
                outcome.usage.total_tokens += u.total_tokens;
            }
            let failed = result.error.is_some() || result.cancelled;
            let message = finished_message(&result, failed);
            if let Some(m) = &message {
                conversation.push(m.clone());
            }
            let calls = if failed {
                Vec::new()
            } else {
                result.tool_calls.clone()
            };
            let finish = result.effective_finish().to_owned();
            outcome.truncated = finish == "length";
            outcome.cancelled = result.cancelled;
            outcome.error = result.error.clone();
            on_event(EngineEvent::RoundFinished {
                round,
                message: message.map(Box::new),
                finish,
                error: result.error.map(Box::new),
                cancelled: result.cancelled,
                trace: Box::new(result.trace),
            });
            if failed || calls.is_empty() {
                return outcome;
            }
            for (index, call) in calls.iter().enumerate() {
                let content = if cancel.is_cancelled() {
                    "[cancelled by the user before it ran]".to_owned()
                } else {
                    self.handle_call(index, call, approver, cancel, on_event)
                        .await
                };
                let message = Message::tool_result(&call.id, &call.function.name, content);
                conversation.push(message.clone());
                on_event(EngineEvent::ToolResult { index, message });
            }
            if cancel.is_cancelled() {
                outcome.cancelled = true;
                return outcome;
            }
        }
        outcome.hit_max_rounds = true;
        outcome
    }

    /// Decide about one call and run it if approved; the content of its `tool` message.
    async fn handle_call(
        &self,
        index: usize,
        call: &ToolCall,
        approver: &mut impl Approver,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(EngineEvent) + Send),
    ) -> String {
        let name = &call.function.name;
        let refuse = |problem: CallProblem, on_event: &mut (dyn FnMut(EngineEvent) + Send)| {
            let content = format!("Error: {problem}");
            on_event(EngineEvent::ToolRefused {
                index,
                call: call.clone(),
                problem,
            });
            content
        };
        let Some(spec) = self.toolbox.get(name) else {
            let problem = self
                .toolbox
                .check_call(name, &call.function.arguments)
                .err()
                .unwrap_or(CallProblem::UnknownTool {
                    name: name.clone(),
                    known: Vec::new(),
                });
            return refuse(problem, on_event);
        };
        if spec.approval == Approval::Deny {
            return refuse(CallProblem::denied_by_config(name), on_event);
        }
        let mut arguments = call.function.arguments.clone();
        // Ask until the arguments are valid and approved, or the call is denied.
        let arguments = loop {
            let problems: Vec<CallProblem> = self
                .toolbox
                .check_call(name, &arguments)
                .err()
                .into_iter()
                .collect();
            if spec.approval == Approval::Auto && problems.is_empty() {
                break arguments;
            }
            let request = ApprovalRequest {
                index,
                call: call.clone(),
                spec: spec.clone(),
                arguments: arguments.clone(),
                problems: problems.clone(),
            };
            let decision = approver.decide(request).await;
            crate::logging::approval(
                name,
                &call.id,
                &decision,
                arguments != call.function.arguments,
            );
            match decision {
                Decision::Deny { reason } => {
                    // Bad arguments are what the model needs to hear about, with any reason.
                    let problem = match problems.into_iter().next() {
                        Some(p) if reason.is_none() => p,
                        _ => CallProblem::declined_by_user(reason),
                    };
                    return refuse(problem, on_event);
                }
                Decision::Approve {
                    arguments: approved,
                } => match self.toolbox.check_call(name, &approved) {
                    Ok(_) => break approved,
                    // An edit that is still invalid: ask again, showing the new problems.
                    Err(_) if approved != arguments => arguments = approved,
                    // Approving arguments known to be invalid is refused, never looped on.
                    Err(problem) => return refuse(problem, on_event),
                },
            }
        };
        on_event(EngineEvent::ToolStarted {
            index,
            call: call.clone(),
            arguments: arguments.clone(),
        });
        let outcome = tools::run(spec, &call.id, &arguments, cancel.child_token()).await;
        let mut content = outcome.to_model_content();
        if arguments != call.function.arguments {
            content = format!("[the user edited the arguments to: {arguments}]\n{content}");
        }
        on_event(EngineEvent::ToolFinished {
            index,
            call: call.clone(),
            outcome: Box::new(outcome),
        });
        content
    }
}

/// The assistant message a round leaves in the conversation: the whole answer, or on failure
/// the partial text (without calls, which never run from a broken stream); nothing if nothing
/// arrived.
fn finished_message(result: &TurnResult, failed: bool) -> Option<Message> {
    if !failed {
        return Some(result.assistant_message());
    }
    (!result.content.is_empty()).then(|| Message::assistant(result.content.clone()))
}
