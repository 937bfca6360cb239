//! One user turn: send the conversation, stream the answer, ask about each call, run the
//! approved ones, send the results back, until the model answers without calls.

use std::collections::HashMap;

use futures_util::StreamExt;
use serde_json::Value;

use super::agent::State;
use super::approval::{ApprovalRequest, Decision};
use super::event::{EngineEvent, Op, TurnOutcome};
use super::inbox::Io;
use super::shared_trace::SharedTrace;
use crate::tools::rules::{Decided, DecisionOrigin, RuleDecision, Verdict};
use crate::tools::{Approval, CallProblem, ToolSpec};
use kimi_client::{TurnItem, TurnResult};
use kimi_protocol::{Message, ToolCall};
use kimi_protocol::{StreamEvent, Trace};

/// Run one turn on the conversation as it is (its last message is the user's). Everything the
/// model and the tools produce is appended, even when the turn fails (a partial answer is kept).
pub(crate) async fn run(state: &mut State, io: &mut Io) -> TurnOutcome {
    let mut outcome = TurnOutcome::default();
    // Whether a request of the turn reported its usage yet: the first one is the sum so far.
    let mut reported = false;
    // An edited answer to continue: the first round's request goes on from it.
    let mut continuation = state.continuation.take();
    for round in 1..=state.max_rounds {
        // Operations that wait for a round boundary: the next request sees them. Not before a
        // continuation: its edit was made for the mode and conversation it was taken from.
        if continuation.is_none() {
            state.apply_between_rounds(io).await;
        }
        let tools: Vec<Value> = state.toolbox.openai_tools();
        outcome.rounds = round;
        io.emit(EngineEvent::RoundStarted { round }).await;
        // Transient failures before the answer began are retried in there.
        let prefix = continuation.as_ref().map(|c| c.edit.prefix.as_str());
        let (mut result, trace) = super::retry::stream(state, &tools, io, prefix).await;
        if let Some(u) = result.usage {
            outcome.usage = if reported { outcome.usage.plus(u) } else { u };
            reported = true;
        }
        let failed = result.error.is_some() || result.cancelled;
        let calls = if failed {
            Vec::new()
        } else {
            result.tool_calls.clone()
        };
        let finish = result.effective_finish().to_owned();
        // A broken stream also ends with "length" (its call was cut): that is not max_tokens.
        outcome.truncated = !failed && finish == "length";
        outcome.cancelled = result.cancelled;
        outcome.error = result.error.clone();
        let continued = continuation.take();
        // The trace belongs to the message its answer left, or (none kept) to the next one.
        // A continuation that failed leaves none: the answer it replaced goes back.
        let message = match &continued {
            Some(_) if failed => None,
            _ => finished_message(&mut result, failed),
        };
        if let Some(mut m) = message {
            m.edited = continued.as_ref().map(|c| Box::new(c.edit.clone()));
            state.append(io, m).await;
        }
        if let Some(trace) = trace {
            state.finish_trace(io, trace).await;
        }
        if let Some(c) = continued.filter(|_| failed) {
            super::continue_edit::restore(state, io, c, result.error.as_ref()).await;
        }
        super::logprobs::after_round(state, io, result.logprobs).await;
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
            let (content, edited) = if io.cancel.is_cancelled() {
                ("[cancelled by the user before it ran]".to_owned(), None)
            } else {
                handle_call(state, io, index, call).await
            };
            let mut message = Message::tool_result(&call.id, &call.function.name, content);
            message.edited_arguments = edited;
            state.append(io, message).await;
        }
        if io.cancel.is_cancelled() {
            outcome.cancelled = true;
            return outcome;
        }
    }
    // No round ran (`max_rounds` 0): the answer the continuation replaced goes back.
    if let Some(c) = continuation {
        super::continue_edit::restore(state, io, c, None).await;
    }
    outcome.hit_max_rounds = true;
    outcome
}

/// Stream one request; also the index of its trace. The backend's stream is read one item
/// at a time, raced with incoming operations (a cancel stops it at once); it reads the socket
/// only when asked for an item, so the reader's pace carries back to the server. Delivering an
/// event records it in the request's trace first (the one place traces are built), then
/// reports it.
pub(super) async fn stream(
    state: &mut State,
    tools: &[Value],
    io: &mut Io,
    prefix: Option<&str>,
) -> (TurnResult, usize) {
    let cancel = io.cancel.clone();
    // The answer, if one is kept, becomes the next message: its trace points there.
    let message_index = state.conversation.len();
    let traces = &mut state.traces;
    let mut trace = None;
    let mut answer = match prefix {
        Some(p) => (state.backend).stream_continue(&state.conversation, p, tools, &cancel),
        None => state
            .backend
            .stream_turn(&state.conversation, tools, &cancel),
    };
    let result = loop {
        match io.run(answer.next()).await {
            Some(TurnItem::Event(e)) => deliver(traces, io, &mut trace, message_index, e).await,
            Some(TurnItem::Done(result)) => break result,
            // Never expected: the stream ends with its result.
            None => break TurnResult::default(),
        }
    };
    let index = match trace {
        Some((index, _)) => index,
        // Never expected (every request is announced); the round still gets its trace.
        None => super::agent::start_trace(traces, io, message_index, Trace::default()).await,
    };
    (result, index)
}

/// One event of the stream: into the request's trace, then out to the reader. The request
/// itself starts the trace, reported as `TraceStarted` instead of being forwarded. A chunk
/// goes out without its text: the trace (shared with the reader) holds it, and a copy per
/// token in the channel is what a reader that only counts chunks would pay for.
async fn deliver(
    traces: &mut Vec<(usize, SharedTrace)>,
    io: &mut Io,
    trace: &mut Option<(usize, SharedTrace)>,
    message_index: usize,
    mut event: StreamEvent,
) {
    if let StreamEvent::Request(request) = event {
        let started = Trace::started(*request);
        let index = super::agent::start_trace(traces, io, message_index, started).await;
        *trace = traces.get(index).map(|(_, t)| (index, t.clone()));
        return;
    }
    if let Some((_, t)) = trace {
        t.record(&event);
    }
    if let StreamEvent::Chunk { data, .. } = &mut event {
        *data = String::new();
    }
    io.emit(EngineEvent::Stream(event)).await;
}

/// Decide about one call and run it if approved; the content of its `tool` message, and the
/// arguments it ran with when the user edited them.
async fn handle_call(
    state: &mut State,
    io: &mut Io,
    index: usize,
    call: &ToolCall,
) -> (String, Option<String>) {
    let toolbox = &state.toolbox;
    let always_allow = &mut state.always_allow;
    let name = &call.function.name;
    // Local, or offered by an MCP server now (one that died since the answer is gone).
    let Some(spec) = toolbox.find(name) else {
        let problem = toolbox
            .check_call(name, &call.function.arguments)
            .err()
            .unwrap_or(CallProblem::UnknownTool {
                name: name.clone(),
                known: Vec::new(),
            });
        return (refuse(io, index, call, problem).await, None);
    };
    if spec.approval == Approval::Deny {
        let decision = RuleDecision::by_tool(Verdict::Deny);
        decided(io, index, call, &call.function.arguments, &decision).await;
        return (
            refuse(io, index, call, CallProblem::denied_by_config(name)).await,
            None,
        );
    }
    let mut arguments = call.function.arguments.clone();
    // Ask until the arguments are valid and approved, or the call is denied.
    let arguments = loop {
        let checked = toolbox.check_call(name, &arguments);
        // The rules see the arguments as parsed; ones that do not parse match no pattern.
        let parsed = checked.as_ref().cloned().unwrap_or(Value::Null);
        let problems: Vec<CallProblem> = checked.err().into_iter().collect();
        let rule = decide(toolbox, io, index, call, &spec, &arguments, &parsed).await;
        if let Some(problem) = rule_denial(&rule) {
            return (refuse(io, index, call, problem).await, None);
        }
        // Allowed by a rule or by an `auto` tool, or by the user for the session (only when
        // no rule spoke: an `ask` rule asks), runs on valid arguments.
        let always = always_covers(always_allow, &spec);
        let by_tool = rule.rule().is_none();
        if problems.is_empty()
            && (rule.verdict == Verdict::Allow || (by_tool && always == Some(true)))
        {
            break arguments;
        }
        if always == Some(false) {
            always_allow.remove(name);
            io.emit(EngineEvent::AllowanceDropped { tool: name.clone() })
                .await;
        }
        let request = ApprovalRequest {
            index,
            call: call.clone(),
            spec: spec.clone(),
            arguments: arguments.clone(),
            problems: problems.clone(),
            rule,
        };
        let (decision, always) = ask(io, request).await;
        if always && matches!(decision, Decision::Approve { .. }) {
            always_allow.insert(name.clone(), spec.fingerprint());
        }
        let edited = matches!(&decision, Decision::Approve { arguments: a } if *a != call.function.arguments);
        crate::logging::approval(name, &call.id, &decision, edited);
        match decision {
            Decision::Deny { reason } => {
                // Bad arguments are what the model needs to hear about, with any reason.
                let problem = match problems.into_iter().next() {
                    Some(p) if reason.is_none() => p,
                    _ => CallProblem::declined_by_user(reason),
                };
                return (refuse(io, index, call, problem).await, None);
            }
            Decision::Approve {
                arguments: approved,
            } => match toolbox.check_call(name, &approved) {
                Ok(_) if approved == arguments => break approved,
                // An edit is checked against the rules again: approving it cannot get round
                // a deny rule.
                Ok(parsed) => {
                    let rule = decide(toolbox, io, index, call, &spec, &approved, &parsed).await;
                    if let Some(problem) = rule_denial(&rule) {
                        return (refuse(io, index, call, problem).await, None);
                    }
                    break approved;
                }
                // An edit that is still invalid: ask again, showing the new problems.
                Err(_) if approved != arguments => arguments = approved,
                // Approving arguments known to be invalid is refused, never looped on.
                Err(problem) => return (refuse(io, index, call, problem).await, None),
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
    // Progress and log lines of an MCP call are reported while it runs.
    let (notes_tx, mut notes) = tokio::sync::mpsc::unbounded_channel();
    let mut running =
        std::pin::pin!(toolbox.run_call(&spec, &call.id, &arguments, cancel, Some(notes_tx)));
    let mut result = loop {
        let next = io
            .run(async {
                tokio::select! {
                    biased;
                    out = running.as_mut() => Err(out),
                    Some(note) = notes.recv() => Ok(note),
                }
            })
            .await;
        match next {
            Ok(note) => {
                io.emit(EngineEvent::ToolNote {
                    index,
                    call_id: call.id.clone(),
                    note,
                })
                .await;
            }
            Err(out) => break out,
        }
    };
    let edited = (arguments != call.function.arguments).then(|| arguments.clone());
    if let Some(a) = &edited {
        result.content = format!(
            "[the user edited the arguments to: {a}]\n{}",
            result.content
        );
    }
    // The text goes into the `tool` message; the event says how the call ended.
    let content = std::mem::take(&mut result.content);
    io.emit(EngineEvent::ToolFinished {
        index,
        call: call.clone(),
        outcome: Box::new(result),
    })
    .await;
    (content, edited)
}

/// What the rules decide about `arguments` (parsed) of the call, reported (with any rule
/// found unusable for this tool) before anything else happens to the call.
async fn decide(
    toolbox: &crate::tools::Toolbox,
    io: &mut Io,
    index: usize,
    call: &ToolCall,
    spec: &ToolSpec,
    arguments: &str,
    parsed: &Value,
) -> RuleDecision {
    let Decided { decision, notices } = toolbox.rules().decide(spec, parsed);
    for text in notices {
        io.emit(EngineEvent::Notice { text, error: true }).await;
    }
    decided(io, index, call, arguments, &decision).await;
    decision
}

async fn decided(io: &mut Io, index: usize, call: &ToolCall, arguments: &str, d: &RuleDecision) {
    io.emit(EngineEvent::CallDecided {
        index,
        call_id: call.id.clone(),
        arguments: arguments.to_owned(),
        decision: d.clone(),
    })
    .await;
}

/// The problem a `deny` decision refuses the call with.
fn rule_denial(d: &RuleDecision) -> Option<CallProblem> {
    if d.verdict != Verdict::Deny {
        return None;
    }
    Some(match &d.origin {
        DecisionOrigin::Rule { label, source, .. } => CallProblem::DeniedByRule {
            rule: label.clone(),
            at: source.to_string(),
        },
        // Only a tool whose `approval` is `deny` is denied without a rule, caught before.
        DecisionOrigin::ToolApproval => CallProblem::Denied { reason: None },
    })
}

/// Whether "always allow" covers `spec` now: `None` when it was never given, `Some(false)` when
/// it was given for the tool as it was then and the tool's description or schema has changed
/// since (its server listed it anew), so it must be approved again.
fn always_covers(always_allow: &HashMap<String, u64>, spec: &ToolSpec) -> Option<bool> {
    always_allow
        .get(&spec.name)
        .map(|&f| f == spec.fingerprint())
}

/// Ask the reader of the events and wait for its [`Op::Approve`]; a cancelled turn denies.
/// Also whether the user allowed the tool for the session.
async fn ask(io: &mut Io, request: ApprovalRequest) -> (Decision, bool) {
    let id = io.approval_id();
    let request = Box::new(request);
    io.emit(EngineEvent::ApprovalRequested { id, request })
        .await;
    match io.decision(id).await {
        Some(answer) => (answer.decision, answer.always),
        None => (Decision::Deny { reason: None }, false),
    }
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
/// arrived. The text moves out of `result` (a long answer is not held twice).
fn finished_message(result: &mut TurnResult, failed: bool) -> Option<Message> {
    let content = std::mem::take(&mut result.content);
    // The reasoning goes with it: it is part of the answer's history (what later requests
    // send back of it is the template's or the server's business).
    let reasoning = std::mem::take(&mut result.reasoning);
    let reasoning_content = (!reasoning.is_empty()).then_some(reasoning);
    if !failed {
        // As `TurnResult::assistant_message`, without copying the text.
        return Some(Message {
            reasoning_content,
            ..Message::assistant_with_calls(content, result.tool_calls.clone())
        });
    }
    (!content.is_empty()).then(|| Message {
        reasoning_content,
        ..Message::assistant(content)
    })
}

/// Operations that are not for a running turn, kept for after it.
pub(crate) fn waits_for_turn_end(op: &Op) -> bool {
    matches!(
        op,
        Op::UserTurn { .. }
            | Op::Clear
            | Op::Retry
            | Op::ContinueEdited { .. }
            | Op::Shutdown
            | Op::Rewind { .. }
            | Op::Record(_)
            | Op::Resume { .. }
    )
}

#[cfg(test)]
mod always_tests {
    use super::*;

    #[test]
    fn always_holds_for_the_tool_as_it_was_allowed() {
        let spec = ToolSpec {
            description: "Reads a file".into(),
            ..ToolSpec::new("mcp__files__read", Vec::new())
        };
        let mut allowed = HashMap::new();
        assert_eq!(always_covers(&allowed, &spec), None);
        allowed.insert(spec.name.clone(), spec.fingerprint());
        assert_eq!(always_covers(&allowed, &spec), Some(true));
        // The server changed what the tool says it does: asked again.
        let changed = ToolSpec {
            description: "Reads a file. Also uploads it.".into(),
            ..spec.clone()
        };
        assert_eq!(always_covers(&allowed, &changed), Some(false));
        let schema = ToolSpec {
            parameters: serde_json::json!({"type": "object", "properties": {"x": {}}}),
            ..spec.clone()
        };
        assert_eq!(always_covers(&allowed, &schema), Some(false));
    }
}
