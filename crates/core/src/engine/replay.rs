//! A saved session's history as the events a live turn produces: each answer as a round (its
//! trace started, its reasoning, text and calls streamed, its message appended, its trace
//! finished), each call that ran started and finished, failed requests as failed rounds, an
//! answer that was still streaming when its run stopped as an interrupted round. A view that
//! follows a live turn follows these the same way, and shows what it showed then.

use std::collections::HashMap;
use std::time::Duration;

use super::event::EngineEvent;
use super::shared_trace::SharedTrace;
use crate::session::{CallDecision, PartialAnswer, Session, ToolEnd};
use crate::tools::ToolResult;
use kimi_client::BackendError;
use kimi_protocol::{Message, StreamEvent, ToolCall};

/// `session` as the agent reports it when it is resumed: [`EngineEvent::Resuming`] (with
/// `notice`), its history, [`EngineEvent::Resumed`]; and its traces, shared with those events,
/// each with the index of its message, for whoever holds the conversation.
pub fn resume_events(
    session: &Session,
    notice: Option<String>,
) -> (Vec<EngineEvent>, Vec<(usize, SharedTrace)>) {
    let traces: Vec<(usize, SharedTrace)> = (session.traces.iter())
        .map(|t| (t.message_index, SharedTrace::new(t.trace.clone())))
        .collect();
    // Its metadata, and the interrupted answers it keeps (shown, exported, never sent).
    let meta = Session {
        messages: Vec::new(),
        traces: Vec::new(),
        tool_ends: Vec::new(),
        decisions: Vec::new(),
        partial: Vec::new(),
        ..session.clone()
    };
    let mut out = vec![EngineEvent::Resuming {
        meta: Box::new(meta.clone()),
        notice,
    }];
    out.extend(history(session, &traces));
    out.push(EngineEvent::Resumed {
        meta: Box::new(Session {
            partial: session.partial.clone(),
            ..meta
        }),
        turns: session.turns(),
    });
    (out, traces)
}

/// The events that rebuild `session` in a view, its traces being `traces` (the agent's, in
/// order, each with the index of its message).
pub fn history(session: &Session, traces: &[(usize, SharedTrace)]) -> Vec<EngineEvent> {
    let messages = &session.messages;
    let mut partials: Vec<&PartialAnswer> = session.partial.iter().collect();
    partials.sort_by_key(|p| p.after_message);
    let ends: HashMap<&str, &ToolEnd> = (session.tool_ends.iter())
        .map(|e| (e.call_id.as_str(), e))
        .collect();
    let mut decided: HashMap<&str, Vec<&CallDecision>> = HashMap::new();
    for d in &session.decisions {
        decided.entry(d.call_id.as_str()).or_default().push(d);
    }
    let mut out = History {
        out: Vec::new(),
        round: 0,
    };
    let (mut t, mut p) = (0, 0);
    for i in 0..=messages.len() {
        // The requests made with `i` messages in the conversation (and any pointing before,
        // not yet shown): failed ones, an interrupted answer's, and the one answered by
        // message `i`.
        let start = t;
        while traces.get(t).is_some_and(|(m, _)| *m <= i) {
            t += 1;
        }
        let mut here: Vec<usize> = (start..t).collect();
        let message = messages.get(i);
        let own = match message {
            Some(m) if m.role == "assistant" => here.pop(),
            _ => None,
        };
        let mut interrupted = Vec::new();
        while let Some(pa) = partials.get(p).filter(|pa| pa.after_message <= i) {
            interrupted.push(*pa);
            p += 1;
        }
        let interrupted_trace = if interrupted.is_empty() {
            None
        } else {
            here.pop()
        };
        for k in here {
            out.failed_round(i, k, &traces[k].1);
        }
        let last = interrupted.len().saturating_sub(1);
        for (j, pa) in interrupted.into_iter().enumerate() {
            let trace = interrupted_trace
                .filter(|_| j == last)
                .map(|k| (k, &traces[k].1));
            out.interrupted_round(pa, trace);
        }
        let Some(m) = message else {
            continue;
        };
        match m.role.as_str() {
            "assistant" => out.answer_round(i, m, own.map(|k| (k, &traces[k].1))),
            "tool" => {
                out.decided(messages, i, m, &decided);
                out.tool_end(messages, i, m, &ends);
                out.appended(i, m);
            }
            "user" => {
                out.round = 0;
                out.appended(i, m);
            }
            _ => out.appended(i, m),
        }
    }
    if let Some(why) = unfinished(session, traces) {
        out.out.push(EngineEvent::Notice {
            text: format!("The last turn was interrupted: {why}. /retry asks again."),
            error: true,
        });
    }
    out.out
}

struct History {
    out: Vec<EngineEvent>,
    /// Counted from 1 within each turn, as a live turn does.
    round: u32,
}

impl History {
    fn appended(&mut self, index: usize, m: &Message) {
        self.out.push(EngineEvent::MessageAppended {
            index,
            message: Box::new(m.clone()),
        });
    }

    fn stream(&mut self, e: StreamEvent) {
        self.out.push(EngineEvent::Stream(e));
    }

    fn round_started(&mut self, trace: Option<(usize, &SharedTrace)>) {
        self.round += 1;
        self.out
            .push(EngineEvent::RoundStarted { round: self.round });
        if let Some((index, trace)) = trace {
            self.out.push(EngineEvent::TraceStarted {
                index,
                trace: trace.clone(),
            });
        }
    }

    /// The reasoning, then the text, as one delta each.
    fn answer_text(&mut self, reasoning: &str, text: &str) {
        if !reasoning.trim().is_empty() {
            self.stream(StreamEvent::Reasoning(reasoning.to_owned()));
        }
        if !text.is_empty() {
            self.stream(StreamEvent::Text(text.to_owned()));
        }
    }

    /// The stream's warnings, and the usage it reported last, as a live stream ends.
    fn warnings(&mut self, trace: Option<(usize, &SharedTrace)>) {
        let Some((_, t)) = trace else {
            return;
        };
        let (warnings, usage) = {
            let t = t.read();
            (t.warnings.clone(), t.usage)
        };
        for w in warnings {
            self.stream(StreamEvent::Warning(w));
        }
        if let Some(u) = usage {
            self.stream(StreamEvent::Usage(u));
        }
    }

    fn trace_finished(&mut self, trace: Option<(usize, &SharedTrace)>, message_index: usize) {
        if let Some((index, _)) = trace {
            self.out.push(EngineEvent::TraceFinished {
                index,
                message_index,
            });
        }
    }

    fn answer_round(&mut self, i: usize, m: &Message, trace: Option<(usize, &SharedTrace)>) {
        self.round_started(trace);
        self.answer_text(m.reasoning_content.as_deref().unwrap_or(""), &m.text());
        self.calls(&m.tool_calls, true);
        self.warnings(trace);
        self.appended(i, m);
        self.trace_finished(trace, i);
        let (finish, error, cancelled) = match trace {
            Some((_, t)) => ended(&t.read()),
            None => ("stop".to_owned(), None, false),
        };
        self.out.push(EngineEvent::RoundFinished {
            round: self.round,
            finish,
            error: error.map(|e| Box::new(BackendError::Setup(e))),
            cancelled,
        });
    }

    /// An answer's calls as they streamed: each whole, or (the answer cut short) incomplete.
    fn calls(&mut self, calls: &[ToolCall], whole: bool) {
        for (index, call) in calls.iter().enumerate() {
            self.stream(StreamEvent::ToolCallBegin {
                index,
                id: call.id.clone(),
                name: call.function.name.clone(),
            });
            self.stream(StreamEvent::ToolCallArgs {
                index,
                delta: call.function.arguments.clone(),
            });
            self.stream(if whole {
                StreamEvent::ToolCallEnd { index }
            } else {
                StreamEvent::ToolCallIncomplete { index }
            });
        }
    }

    /// A request that produced no message: failed (its trace says how), or cancelled.
    fn failed_round(&mut self, i: usize, k: usize, trace: &SharedTrace) {
        self.round_started(Some((k, trace)));
        self.warnings(Some((k, trace)));
        self.trace_finished(Some((k, trace)), i);
        let (finish, error) = {
            let t = trace.read();
            (t.finish_reason.clone().unwrap_or_default(), t.error.clone())
        };
        self.out.push(EngineEvent::RoundFinished {
            round: self.round,
            finish,
            cancelled: error.is_none(),
            // The trace keeps the error's cause on the lines after the first; the transcript
            // shows the first line, as it did live.
            error: error.map(|e| {
                let first = e.lines().next().unwrap_or_default().to_owned();
                Box::new(BackendError::Setup(first))
            }),
        });
    }

    fn interrupted_round(&mut self, p: &PartialAnswer, trace: Option<(usize, &SharedTrace)>) {
        self.round_started(trace);
        self.answer_text(&p.reasoning_content, &p.content);
        // Cut short: they never run.
        self.calls(&p.tool_calls, false);
        self.warnings(trace);
        self.trace_finished(trace, p.after_message);
        self.out.push(EngineEvent::RoundInterrupted);
    }

    /// What decided the call message `i` answers, as it was reported live.
    fn decided(
        &mut self,
        messages: &[Message],
        i: usize,
        m: &Message,
        decided: &HashMap<&str, Vec<&CallDecision>>,
    ) {
        let Some(id) = m.tool_call_id.as_deref() else {
            return;
        };
        let Some(list) = decided.get(id) else {
            return;
        };
        let Some((index, _)) = call_answered(messages, i, id) else {
            return;
        };
        for d in list {
            self.out.push(EngineEvent::CallDecided {
                index,
                call_id: d.call_id.clone(),
                arguments: d.arguments.clone(),
                decision: d.decision.clone(),
            });
        }
    }

    /// The call message `i` answers ran and ended as saved: started and finished.
    fn tool_end(
        &mut self,
        messages: &[Message],
        i: usize,
        m: &Message,
        ends: &HashMap<&str, &ToolEnd>,
    ) {
        let Some(id) = m.tool_call_id.as_deref() else {
            return;
        };
        let Some(end) = ends.get(id) else {
            return;
        };
        let Some((index, call)) = call_answered(messages, i, id) else {
            return;
        };
        self.out.push(EngineEvent::ToolStarted {
            index,
            call: call.clone(),
            arguments: call.function.arguments.clone(),
        });
        self.out.push(EngineEvent::ToolFinished {
            index,
            call: call.clone(),
            outcome: Box::new(ToolResult::without_output(
                (&end.exit).into(),
                String::new(),
                Duration::from_nanos(end.duration_ns),
            )),
        });
    }
}

/// How the request of an answer that was kept ended, as its trace says: its finish reason, its
/// error, and whether the user cancelled it. A trace saved before cancels were recorded says
/// so by what it lacks: no error, no finish reason, no `[DONE]`.
fn ended(t: &kimi_protocol::Trace) -> (String, Option<String>, bool) {
    let cut_short = t.error.is_none() && t.finish_reason.is_none() && !t.done;
    let finish = t.finish_reason.clone().unwrap_or_else(|| "stop".to_owned());
    (finish, t.error.clone(), t.cancelled || cut_short)
}

/// Why the last turn did not end, if it did not: a request that failed (its trace says how)
/// or a saved partial answer ended it; one without either was cut off.
fn unfinished(session: &Session, traces: &[(usize, SharedTrace)]) -> Option<&'static str> {
    let end = session.messages.len();
    let ended = session.partial.iter().any(|p| p.after_message >= end)
        || (traces.iter()).any(|(k, t)| *k == end && t.read().error.is_some());
    match session.messages.last() {
        _ if ended => None,
        Some(m) if m.role == "user" => Some("no answer to the last message was saved"),
        Some(m) if m.role == "tool" => Some("the model never answered the last tool result"),
        Some(m) if m.role == "assistant" && !m.tool_calls.is_empty() => {
            Some("its tool calls never ran to the end")
        }
        _ => None,
    }
}

/// The call `id` that message `i` answers: its position in the assistant message before.
fn call_answered<'a>(messages: &'a [Message], i: usize, id: &str) -> Option<(usize, &'a ToolCall)> {
    messages[..i]
        .iter()
        .rev()
        .find_map(|a| (a.tool_calls.iter().enumerate()).find(|(_, c)| c.id == id))
}
