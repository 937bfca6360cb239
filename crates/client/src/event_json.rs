//! Stream events as JSON, one object per event: each chunk with its arrival time and gap, then
//! what the client made of it; and a turn's result as one object. Shared by `parse --trace`,
//! `replay --print` and the reproducers ([`crate::repro`]).

use serde_json::{Value, json};

use kimi_protocol::{StreamEvent, StreamMeta};

use crate::TurnResult;

/// Milliseconds, to the microsecond.
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Turns events into JSON lines, numbering chunks and measuring the gaps between them.
#[derive(Debug, Default)]
pub struct Lines {
    chunks: usize,
    last_at_us: u64,
}

impl Lines {
    /// The JSON line of `event`, or `None` for what is not part of the answer (the request,
    /// the status, headers, the end). Events carry the number of the chunk they came from.
    pub fn line(&mut self, event: &StreamEvent) -> Option<Value> {
        let chunk = self.chunks.checked_sub(1);
        let v = match event {
            StreamEvent::Chunk { data, at_us } => {
                let gap = at_us.saturating_sub(self.last_at_us);
                self.last_at_us = *at_us;
                self.chunks += 1;
                return Some(json!({
                    "type": "chunk", "chunk": self.chunks - 1, "at_ms": ms(*at_us),
                    "gap_ms": ms(gap), "data": data,
                }));
            }
            StreamEvent::Text(t) => json!({"type": "text", "text": t}),
            StreamEvent::Reasoning(t) => json!({"type": "reasoning", "text": t}),
            StreamEvent::ReasoningWasText => json!({"type": "reasoning_was_text"}),
            StreamEvent::Marker(m) => json!({
                "type": "marker", "marker": m.marker, "token": m.marker.text(),
                "offset": m.offset, "call": m.call,
            }),
            StreamEvent::ToolCallBegin { index, id, name } => {
                json!({"type": "tool_call_begin", "index": index, "id": id, "name": name})
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                json!({"type": "tool_call_args", "index": index, "delta": delta})
            }
            StreamEvent::ToolCallEnd { index } => json!({"type": "tool_call_end", "index": index}),
            StreamEvent::ToolCallIncomplete { index } => {
                json!({"type": "tool_call_incomplete", "index": index})
            }
            StreamEvent::Warning(w) => json!({"type": "warning", "message": w}),
            StreamEvent::Usage(u) => json!({"type": "usage", "usage": u}),
            // The server's token data for the chunk before (`logprobs`).
            StreamEvent::Tokens(tokens) => json!({
                "type": "tokens",
                "tokens": tokens
                    .iter()
                    .map(|t| json!({"id": t.id, "text": t.text, "logprob": t.logprob}))
                    .collect::<Vec<_>>(),
            }),
            StreamEvent::Meta(StreamMeta::FinishReason(r)) => {
                json!({"type": "finish_reason", "finish_reason": r})
            }
            StreamEvent::Request(_)
            | StreamEvent::Response { .. }
            | StreamEvent::Meta(_)
            | StreamEvent::Finished { .. } => return None,
        };
        let mut v = v;
        v["chunk"] = chunk.map_or(Value::Null, Value::from);
        Some(v)
    }
}

/// Whether a JSON line is the parser's work on chunk text (what `parse --trace` must equal
/// in a live run): not the server's own fields (usage, finish reason, token data), which raw
/// mode's saved chunks do not carry.
pub fn is_parsed(line: &Value) -> bool {
    !matches!(
        line["type"].as_str(),
        Some("usage" | "finish_reason" | "tokens") | None
    )
}

/// The parsed result as one JSON object: what a turn keeps of the answer.
pub fn result_json(r: &TurnResult) -> Value {
    json!({
        "type": "result",
        "content": r.content,
        "reasoning": r.reasoning,
        "tool_calls": r.tool_calls,
        "finish_reason": r.effective_finish(),
        "warnings": r.warnings,
        "error": r.error.as_ref().map(ToString::to_string),
    })
}
