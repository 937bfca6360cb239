//! One user turn: send the conversation, stream the answer, ask about each call, run the
//! approved ones, send the results back, until the model answers without calls.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::oneshot;

use super::agent::State;
use super::approval::{ApprovalRequest, Decision};
use super::event::{EngineEvent, Op, TurnOutcome};
use super::inbox::Io;
use crate::tools::{self, Approval, CallProblem};
use kimi_client::TurnResult;
use kimi_protocol::StreamEvent;
use kimi_protocol::{Message, ToolCall};

/// Run one turn on the conversation as it is (its last message is the user's). Everything the
/// model and the tools produce is appended, even when the turn fails (a partial answer is kept).
pub(crate) async fn run(state: &mut State, io: &mut Io) -> TurnOutcome {
    let mut outcome = TurnOutcome::default();
    for round in 1..=state.max_rounds {
        // Operations that wait for a round boundary: the next request sees them.
        state.apply_between_rounds(io).await;
        let tools: Vec<Value> = state.toolbox.openai_tools();
        outcome.rounds = round;
        io.emit(EngineEvent::RoundStarted { round }).await;
        let result = stream(state, &tools, io).await;
        if let Some(u) = result.usage {
            outcome.usage.prompt_tokens += u.prompt_tokens;
            outcome.usage.completion_tokens += u.completion_tokens;
            outcome.usage.total_tokens += u.total_tokens;
        }
        let failed = result.error.is_some() || result.cancelled;
        let calls = if failed {
            Vec::new()
        } else {
            result.tool_calls.clone()
        };
        let finish = result.effective_finish().to_owned();
        outcome.truncated = finish == "length";
        outcome.cancelled = result.cancelled;
        outcome.error = result.error.clone();
        // The trace belongs to the message its answer left, or (none kept) to the next one.
        let message_index = state.conversation.len();
        if let Some(m) = finished_message(&result, failed) {
            state.append(io, m).await;
        }
        state.add_trace(io, message_index, result.trace).await;
        io.emit(EngineEvent::RoundFinished {
            round,
            finish,
            error: result.error.map(Box::new),
            cancelled: result.cancelled,
        })
        .await;
        if failed || calls.is_empty() {
            return outcome;
        }
        for (index, call) in calls.iter().enumerate() {
            let content = if io.cancel.is_cancelled() {
                "[cancelled by the user before it ran]".to_owned()
            } else {
                handle_call(state, io, index, call).await
            };
            let message = Message::tool_result(&call.id, &call.function.name, content);
            state.append(io, message).await;
        }
        if io.cancel.is_cancelled() {
            outcome.cancelled = true;
            return outcome;
        }
    }
    outcome.hit_max_rounds = true;
    outcome
}

/// Stream one request. The backend reports through a synchronous callback; its events are
/// buffered here and the backend is not polled again until they have all been sent, so the
/// buffer holds at most what one read from the socket produced.
async fn stream(state: &State, tools: &[Value], io: &mut Io) -> TurnResult {
    let buffer: Mutex<VecDeque<StreamEvent>> = Mutex::new(VecDeque::new());
    let pop = || {
        buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    };
    let cancel = io.cancel.clone();
    let mut sink = |e: StreamEvent| {
        buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(e)
    };
    let mut fut = Box::pin(state.backend.stream_turn(
        &state.conversation,
        tools,
        &cancel,
        &mut sink,
    ));
    let ready = || {
        !buffer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    };
    loop {
        while let Some(e) = pop() {
            io.emit(EngineEvent::Stream(e)).await;
        }
        if let Some(result) = io.step(&mut fut, ready).await {
            drop(fut);
            while let Some(e) = pop() {
                io.emit(EngineEvent::Stream(e)).await;
            }
            return result;
        }
    }
}

/// Decide about one call and run it if approved; the content of its `tool` message.
async fn handle_call(state: &State, io: &mut Io, index: usize, call: &ToolCall) -> String {
    let toolbox = &state.toolbox;
    let name = &call.function.name;
    let Some(spec) = toolbox.get(name) else {
        let problem = toolbox
            .check_call(name, &call.function.arguments)
            .err()
            .unwrap_or(CallProblem::UnknownTool {
                name: name.clone(),
                known: Vec::new(),
            });
        return refuse(io, index, call, problem).await;
    };
    if spec.approval == Approval::Deny {
        return refuse(io, index, call, CallProblem::denied_by_config(name)).await;
    }
    let mut arguments = call.function.arguments.clone();
    // Ask until the arguments are valid and approved, or the call is denied.
    let arguments = loop {
        let problems: Vec<CallProblem> = toolbox
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
        let decision = ask(io, request).await;
        let edited = matches!(&decision, Decision::Approve { arguments: a } if *a != call.function.arguments);
        crate::logging::approval(name, &call.id, &decision, edited);
        match decision {
            Decision::Deny { reason } => {
                // Bad arguments are what the model needs to hear about, with any reason.
                let problem = match problems.into_iter().next() {
                    Some(p) if reason.is_none() => p,
                    _ => CallProblem::declined_by_user(reason),
                };
                return refuse(io, index, call, problem).await;
            }
            Decision::Approve {
                arguments: approved,
            } => match toolbox.check_call(name, &approved) {
                Ok(_) => break approved,
                // An edit that is still invalid: ask again, showing the new problems.
                Err(_) if approved != arguments => arguments = approved,
                // Approving arguments known to be invalid is refused, never looped on.
                Err(problem) => return refuse(io, index, call, problem).await,
            },
        }
    };
    io.emit(EngineEvent::ToolStarted {
        index,
        call: call.clone(),
        arguments: arguments.clone(),
    })
    .await;
    let cancel = io.cancel.child_token();
    let outcome = io.run(tools::run(spec, &call.id, &arguments, cancel)).await;
    let mut content = outcome.to_model_content();
    if arguments != call.function.arguments {
        content = format!("[the user edited the arguments to: {arguments}]\n{content}");
    }
    io.emit(EngineEvent::ToolFinished {
        index,
        call: call.clone(),
        outcome: Box::new(outcome),
    })
    .await;
    content
}

/// Ask the reader of the events; a cancelled turn or a dropped reply denies.
async fn ask(io: &mut Io, request: ApprovalRequest) -> Decision {
    let (reply, answer) = oneshot::channel();
    io.emit(EngineEvent::ApprovalRequested {
        request: Box::new(request),
        reply,
    })
    .await;
    let cancel = io.cancel.clone();
    let decision = io
        .run(async {
            tokio::select! {
                biased;
                d = answer => d.ok(),
                _ = cancel.cancelled() => None,
            }
        })
        .await;
    decision.unwrap_or(Decision::Deny { reason: None })
}

async fn refuse(io: &mut Io, index: usize, call: &ToolCall, problem: CallProblem) -> String {
    let content = format!("Error: {problem}");
    io.emit(EngineEvent::ToolRefused {
        index,
        call: call.clone(),
        problem,
    })
    .await;
    content
}

/// The assistant message a round leaves in the conversation: the whole answer, or on failure
/// the partial text (without calls, which never run from a broken stream); nothing if nothing
/// arrived.
fn finished_message(result: &TurnResult, failed: bool) -> Option<Message> {
    if !failed {
        return Some(result.assistant_message());
    }
    // The reasoning goes with it: it is part of the answer's history (spec k2-family 8.4).
    (!result.content.is_empty()).then(|| Message {
        reasoning_content: (!result.reasoning.is_empty()).then(|| result.reasoning.clone()),
        ..Message::assistant(result.content.clone())
    })
}

/// Operations that are not for a running turn, kept for after it.
pub(crate) fn waits_for_turn_end(op: &Op) -> bool {
    matches!(
        op,
        Op::UserTurn { .. } | Op::Clear | Op::Retry | Op::Shutdown
    )
}
