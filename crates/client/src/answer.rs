//! One answer as plain data, streamed or not, in either mode: what `doctor --conformance`
//! judges and what an A/B comparison sets side by side. Chunk indexes count the pieces as they
//! arrived from 0 (a non-streamed answer is one chunk).

use serde_json::Value;

use kimi_protocol::tokens::Marker;
use kimi_protocol::trace_tokens::TokenLogprob;
use kimi_protocol::{Mode, StreamEvent, Usage};

/// One answer, streamed or not.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Each chunk as received (raw completion text, or the chat SSE payload): when.
    pub chunks: Vec<Chunk>,
    /// Answer text, with the chunk it came in.
    pub text: Vec<(usize, String)>,
    pub reasoning: Vec<(usize, String)>,
    /// Markers the client's parser found, with their chunk.
    pub markers: Vec<(usize, Marker)>,
    /// Complete calls, in order.
    pub calls: Vec<CallRec>,
    /// Chat mode: each `tool_calls` delta that opened a call (it has an id), with its chunk.
    pub structured: Vec<(usize, String)>,
    /// Chat mode: `tool_calls` deltas that carried no call at all (an empty list or entries
    /// without id, name or arguments), with their chunk.
    pub empty_call_deltas: Vec<usize>,
    /// Chat mode: the fields reasoning arrived in (`reasoning_content`, `reasoning`).
    pub reasoning_fields: Vec<String>,
    /// Token-level data with its chunk.
    pub tokens: Vec<(usize, TokenLogprob)>,
    /// What the client's parser reported as irregular (K3's recoveries among them), with the
    /// chunk.
    pub warnings: Vec<(usize, String)>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    /// From the request to the end of the answer.
    pub total_us: u64,
}

/// When one chunk arrived, from the request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Chunk {
    pub at_us: u64,
}

/// A complete call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallRec {
    /// The chunk its header arrived in.
    pub chunk: usize,
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl CallRec {
    /// The same arguments: equal as JSON when both parse (key order and spacing aside), else
    /// byte for byte.
    pub fn same_arguments(&self, other: &CallRec) -> bool {
        match (
            serde_json::from_str::<Value>(&self.arguments),
            serde_json::from_str::<Value>(&other.arguments),
        ) {
            (Ok(x), Ok(y)) => x == y,
            _ => self.arguments == other.arguments,
        }
    }
}

impl Answer {
    /// The answer of a turn's request: its events, and the finish reason, usage and error
    /// its result settled on.
    pub fn from_turn(mode: Mode, events: &[StreamEvent], result: &crate::TurnResult) -> Answer {
        let mut a = Answer::from_events(mode, events);
        a.finish_reason.clone_from(&result.finish_reason);
        a.usage = result.usage;
        a.error = result.error.as_ref().map(ToString::to_string);
        a
    }

    /// The answer a stream's events describe (`finish_reason` and `usage` come with them).
    pub fn from_events(mode: Mode, events: &[StreamEvent]) -> Answer {
        let mut a = Answer::default();
        let mut open: Vec<(usize, CallRec)> = Vec::new();
        for event in events {
            let chunk = a.chunks.len().saturating_sub(1);
            match event {
                StreamEvent::Chunk { data, at_us } => {
                    if mode == Mode::Chat {
                        a.note_payload(a.chunks.len(), data);
                    }
                    a.chunks.push(Chunk { at_us: *at_us });
                }
                StreamEvent::Text(t) => a.text.push((chunk, t.clone())),
                StreamEvent::Reasoning(t) => a.reasoning.push((chunk, t.clone())),
                StreamEvent::ReasoningWasText => {
                    let moved = std::mem::take(&mut a.reasoning);
                    a.text.splice(0..0, moved);
                }
                StreamEvent::Marker(hit) => a.markers.push((chunk, hit.marker)),
                StreamEvent::Tokens(tokens) => {
                    a.tokens.extend(tokens.iter().map(|t| (chunk, t.clone())));
                }
                StreamEvent::ToolCallBegin { index, id, name } => open.push((
                    *index,
                    CallRec {
                        chunk,
                        id: id.clone(),
                        name: name.clone(),
                        arguments: String::new(),
                    },
                )),
                StreamEvent::ToolCallArgs { index, delta } => {
                    if let Some((_, c)) = open.iter_mut().find(|(i, _)| i == index) {
                        c.arguments.push_str(delta);
                    }
                }
                StreamEvent::ToolCallEnd { index } => {
                    if let Some(at) = open.iter().position(|(i, _)| i == index) {
                        a.calls.push(open.remove(at).1);
                    }
                }
                StreamEvent::ToolCallIncomplete { index } => open.retain(|(i, _)| i != index),
                StreamEvent::Warning(w) => a.warnings.push((chunk, w.clone())),
                StreamEvent::Usage(u) => a.usage = Some(*u),
                StreamEvent::Meta(kimi_protocol::StreamMeta::FinishReason(f)) => {
                    a.finish_reason = Some(f.clone());
                }
                StreamEvent::Finished { total_us, error } => {
                    a.total_us = *total_us;
                    if error.is_some() {
                        a.error.clone_from(error);
                    }
                }
                _ => {}
            }
        }
        a
    }

    /// What a chat payload says besides what the client parsed: the structured calls, empty
    /// call deltas and the reasoning field.
    fn note_payload(&mut self, chunk: usize, data: &str) {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let Some(delta) = v.pointer("/choices/0/delta") else {
            return;
        };
        self.note_message(chunk, delta);
    }

    /// The same for a whole message (non-streamed) or a delta.
    fn note_message(&mut self, chunk: usize, m: &Value) {
        for key in ["reasoning_content", "reasoning"] {
            let used = m
                .get(key)
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty());
            if used && !self.reasoning_fields.iter().any(|f| f == key) {
                self.reasoning_fields.push(key.to_owned());
            }
        }
        if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
            let carries = |c: &Value| {
                c.get("id").is_some_and(|i| !i.is_null())
                    || c.pointer("/function/name").is_some_and(|n| !n.is_null())
                    || c.pointer("/function/arguments")
                        .and_then(Value::as_str)
                        .is_some_and(|a| !a.is_empty())
            };
            if !calls.iter().any(carries) {
                self.empty_call_deltas.push(chunk);
            }
            for id in calls
                .iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str))
            {
                self.structured.push((chunk, id.to_owned()));
            }
        }
    }

    /// A non-streamed chat answer (`choices[0].message`), as one chunk.
    pub fn from_chat_message(body: &Value) -> Answer {
        let mut a = Answer {
            chunks: vec![Chunk::default()],
            ..Answer::default()
        };
        let m = body.pointer("/choices/0/message").unwrap_or(&Value::Null);
        a.note_message(0, m);
        for key in ["reasoning_content", "reasoning"] {
            if let Some(t) = m.get(key).and_then(Value::as_str)
                && !t.is_empty()
            {
                a.reasoning.push((0, t.to_owned()));
            }
        }
        for c in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let field = |p: &str| {
                c.pointer(p)
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .unwrap_or_default()
            };
            a.calls.push(CallRec {
                chunk: 0,
                id: field("/id"),
                name: field("/function/name"),
                arguments: field("/function/arguments"),
            });
        }
        if let Some(t) = m.get("content").and_then(Value::as_str)
            && !t.is_empty()
        {
            let t = if kimi_protocol::special::contains(t) {
                a.content_markers(t)
            } else {
                t.to_owned()
            };
            a.text.push((0, t));
        }
        a.finish_reason = finish_of(body);
        a.usage = usage_of(body);
        a
    }

    /// Chat content holding marker text (a server whose tool parser is off), read as the
    /// client's stream reader reads it, so that both answers are compared alike and the
    /// markers are on record. Returns the text outside the markers.
    fn content_markers(&mut self, content: &str) -> String {
        use kimi_protocol::Event;
        let mut text = String::new();
        let mut open: Option<CallRec> = None;
        for ev in kimi_protocol::parser::events_of([content]) {
            match ev {
                Event::Text { text: t } => text.push_str(&t),
                Event::Marker { marker, .. } => self.markers.push((0, marker)),
                Event::ToolCallBegin { id, name, .. } => {
                    open = Some(CallRec {
                        chunk: 0,
                        id: id.into_owned(),
                        name: name.into_owned(),
                        arguments: String::new(),
                    });
                }
                Event::ToolCallArgs { delta, .. } => {
                    if let Some(c) = &mut open {
                        c.arguments.push_str(&delta);
                    }
                }
                Event::ToolCallEnd { .. } => {
                    // A marker copy of a structured call is not a second call.
                    if let Some(c) = open.take()
                        && !self.calls.iter().any(|d| d.id == c.id)
                    {
                        self.calls.push(c);
                    }
                }
                _ => {}
            }
        }
        text
    }

    /// A non-streamed raw completion (`choices[0].text`), parsed by the client's parser from
    /// where the prompt leaves it (`in_reasoning`), as one chunk.
    pub fn from_completion(body: &Value, in_reasoning: bool) -> Answer {
        let text = body
            .pointer("/choices/0/text")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parsed = kimi_protocol::completion::parse_chunks_with(
            kimi_protocol::Parser::with_reasoning(in_reasoning),
            [text],
        );
        let mut a = Answer {
            chunks: vec![Chunk::default()],
            ..Answer::default()
        };
        if !parsed.content.is_empty() {
            a.text.push((0, parsed.content));
        }
        if !parsed.reasoning.is_empty() {
            a.reasoning.push((0, parsed.reasoning));
        }
        a.calls = parsed
            .tool_calls
            .into_iter()
            .map(|c| CallRec {
                chunk: 0,
                id: c.id,
                name: c.function.name,
                arguments: c.function.arguments,
            })
            .collect();
        a.finish_reason = finish_of(body);
        a.usage = usage_of(body);
        a
    }

    /// All answer text.
    pub fn content(&self) -> String {
        self.text.iter().map(|(_, t)| t.as_str()).collect()
    }

    /// When the first piece of the answer (text, reasoning or a call) arrived.
    pub fn first_token_us(&self) -> Option<u64> {
        let first = [
            self.text.first().map(|p| p.0),
            self.reasoning.first().map(|p| p.0),
            self.calls.iter().map(|c| c.chunk).min(),
        ]
        .into_iter()
        .flatten()
        .min()?;
        self.chunks.get(first).map(|c| c.at_us)
    }
}

fn finish_of(body: &Value) -> Option<String> {
    body.pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The `usage` of a non-streamed answer, when it has one that reads.
pub(crate) fn usage_of(body: &Value) -> Option<Usage> {
    body.get("usage")
        .filter(|u| u.is_object())
        .and_then(|u| serde_json::from_value(u.clone()).ok())
}
