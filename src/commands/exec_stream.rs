//! `exec --json-stream`: the run as one JSON object per line on stdout, each written and
//! flushed as it happens, for scripts. The schema is in the README ("exec --json-stream").

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Value, json};

use kimi_core::engine::{EngineEvent, TurnOutcome};
use kimi_core::tools::ToolStatus;
use kimi_core::tools::rules::Verdict;
use kimi_protocol::StreamEvent;

/// Turns the agent's events into lines.
#[derive(Default)]
pub(super) struct JsonStream {
    /// The calls of this round streaming in, by index: id, name, arguments so far.
    calls: BTreeMap<usize, (String, String, String)>,
    /// The last round's finish reason (`stop`, `tool_calls`, `length`).
    finish: String,
}

impl JsonStream {
    /// The line(s) of `e`, if it has any.
    pub(super) fn event(&mut self, e: &EngineEvent) {
        let line = match e {
            EngineEvent::RoundStarted { round } => json!({"type": "round", "round": round}),
            EngineEvent::Stream(StreamEvent::Text(t)) => json!({"type": "text", "text": t}),
            EngineEvent::Stream(StreamEvent::Reasoning(t)) => {
                json!({"type": "reasoning", "text": t})
            }
            // The round's reasoning was its answer (a K3 model writing in its think channel).
            EngineEvent::Stream(StreamEvent::ReasoningWasText) => {
                json!({"type": "reasoning_was_text"})
            }
            EngineEvent::Stream(StreamEvent::ToolCallBegin { index, id, name }) => {
                self.calls
                    .insert(*index, (id.clone(), name.clone(), String::new()));
                return;
            }
            EngineEvent::Stream(StreamEvent::ToolCallArgs { index, delta }) => {
                if let Some(call) = self.calls.get_mut(index) {
                    call.2.push_str(delta);
                }
                return;
            }
            EngineEvent::Stream(StreamEvent::ToolCallEnd { index }) => {
                let Some((id, name, arguments)) = self.calls.remove(index) else {
                    return;
                };
                json!({"type": "tool_call", "index": index, "id": id, "name": name,
                       "arguments": arguments})
            }
            EngineEvent::Stream(StreamEvent::Warning(w)) => {
                json!({"type": "warning", "message": w})
            }
            EngineEvent::Notice { text, error } => {
                json!({"type": if *error { "error" } else { "notice" }, "message": text})
            }
            EngineEvent::RoundFinished { finish, .. } => {
                self.finish.clone_from(finish);
                self.calls.clear();
                return;
            }
            // A rule (or the tool's `approval`) decided: allow and deny are final, ask waits
            // for `--yes` (see [`JsonStream::approval`]).
            EngineEvent::CallDecided {
                call_id, decision, ..
            } => match decision.verdict {
                Verdict::Ask => return,
                v => approval_line(call_id, v == Verdict::Allow, &decision.to_string()),
            },
            EngineEvent::ToolRefused { call, problem, .. } => json!({
                "type": "tool_result", "call_id": call.id, "name": call.function.name,
                "ran": false, "ok": false, "status": "not run", "message": problem.to_string(),
            }),
            EngineEvent::ToolFinished { call, outcome, .. } => json!({
                "type": "tool_result", "call_id": call.id, "name": call.function.name,
                "ran": true, "ok": outcome.status == ToolStatus::Ok,
                "status": outcome.status.label(),
                "duration_ms": outcome.duration.as_millis() as u64,
                "output": outcome.output, "output_bytes": outcome.output_total_bytes,
                "truncated": outcome.truncated,
            }),
            EngineEvent::RetryScheduled {
                error,
                attempt,
                attempts,
                wait,
            } => json!({
                "type": "retry", "message": error.what_failed(), "attempt": attempt,
                "attempts": attempts, "wait_ms": wait.as_millis() as u64,
            }),
            _ => return,
        };
        write_line(&line);
    }

    /// exec's answer to an `ask` call: approved with `--yes` (valid arguments only).
    pub(super) fn approval(&mut self, call_id: &str, approved: bool, yes: bool) {
        let by = match (approved, yes) {
            (true, _) => "--yes",
            (false, true) => "invalid arguments (--yes approves valid ones only)",
            (false, false) => "exec without --yes",
        };
        write_line(&approval_line(call_id, approved, by));
    }

    /// The turn is over: its error (if any), then how it ended.
    pub(super) fn turn_end(&mut self, outcome: &Result<TurnOutcome, String>) {
        let o = match outcome {
            Ok(o) => o,
            Err(message) => {
                write_line(&json!({"type": "error", "message": message, "internal": true}));
                write_line(&json!({"type": "turn_end", "stop_reason": "error"}));
                return;
            }
        };
        if let Some(e) = &o.error {
            write_line(&json!({"type": "error", "message": e.to_string(),
                               "detail": e.with_detail()}));
        }
        let stop_reason = if o.error.is_some() {
            "error"
        } else if o.cancelled {
            "cancelled"
        } else if o.hit_max_rounds {
            "max_rounds"
        } else if o.truncated {
            "length"
        } else if self.finish.is_empty() {
            "stop"
        } else {
            &self.finish
        };
        write_line(&json!({
            "type": "turn_end", "stop_reason": stop_reason, "rounds": o.rounds,
            "usage": o.usage,
        }));
    }
}

fn approval_line(call_id: &str, approved: bool, by: &str) -> Value {
    json!({"type": "approval", "call_id": call_id, "approved": approved, "by": by})
}

/// One line, flushed: a script reading the pipe sees each event as it happens. The JSON keeps
/// no character a terminal would act on, should stdout be one.
fn write_line(v: &Value) {
    let Ok(text) = kimi_core::json_out::to_string(v) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}
