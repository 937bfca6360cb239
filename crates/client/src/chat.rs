//! Chat mode: POST `/chat/completions` with `tools` and assemble the streamed `tool_calls`
//! deltas. `content` still goes through the local marker parser, so a server whose tool parser
//! is off (markers in `content`) still yields tool calls instead of raw markers as text.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};

use super::TurnResult;
use super::http::{self, Call, Progress, StreamChoice};
use super::markers::LocalParse;
use kimi_protocol::completion::check_arguments;
use kimi_protocol::{Message, ToolCall, call_id, special};
use kimi_protocol::{StreamEvent, Usage};

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

impl StreamChoice for Choice<'_> {
    fn take_finish_reason(&mut self) -> Option<String> {
        self.finish_reason.take()
    }
    fn usage(&self) -> Option<Usage> {
        self.usage
    }
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<CallDelta<'a>>>,
}

#[derive(Deserialize)]
struct CallDelta<'a> {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    /// Normally a string fragment; some servers send the whole object.
    #[serde(default)]
    arguments: Option<Value>,
}

/// Where a call came from: a `tool_calls` delta index, or the local marker parser's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Delta(usize),
    Marker(usize),
}

#[derive(Debug)]
struct Slot {
    source: Source,
    id: String,
    name: String,
    arguments: String,
    begun: bool,
    complete: bool,
}

/// Turns deltas from both sources into one numbering of calls, in order of first appearance.
#[derive(Debug, Default)]
struct Assembler {
    slots: Vec<Slot>,
}

impl Assembler {
    fn slot(&mut self, source: Source) -> usize {
        if let Some(i) = self.slots.iter().position(|s| s.source == source) {
            return i;
        }
        self.slots.push(Slot {
            source,
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
            begun: false,
            complete: false,
        });
        self.slots.len() - 1
    }

    fn delta(&mut self, position: usize, d: CallDelta<'_>, on_event: &mut dyn FnMut(StreamEvent)) {
        let i = self.slot(Source::Delta(d.index.unwrap_or(position)));
        let slot = &mut self.slots[i];
        if let Some(id) = d.id.filter(|id| !id.is_empty()) {
            // Sent once or repeated; the first one stands.
            if slot.id.is_empty() {
                slot.id = id.into_owned();
            }
        }
        let (name, args) = match d.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        if let Some(name) = name.filter(|n| !n.is_empty())
            && slot.name.is_empty()
        {
            slot.name = name.into_owned();
        }
        let fragment = match args {
            Some(Value::String(s)) => s,
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        if !slot.begun && !slot.name.is_empty() {
            slot.begun = true;
            if slot.id.is_empty() {
                slot.id = call_id::canonical(&slot.name, i);
            }
            on_event(StreamEvent::ToolCallBegin {
                index: i,
                id: slot.id.clone(),
                name: slot.name.clone(),
            });
            if !slot.arguments.is_empty() {
                on_event(StreamEvent::ToolCallArgs {
                    index: i,
                    delta: slot.arguments.clone(),
                });
            }
        }
        if !fragment.is_empty() {
            slot.arguments.push_str(&fragment);
            if slot.begun {
                on_event(StreamEvent::ToolCallArgs {
                    index: i,
                    delta: fragment,
                });
            }
        }
    }

    /// A local-parser event: renumber its call index into a slot.
    fn marker_event(&mut self, ev: StreamEvent, on_event: &mut dyn FnMut(StreamEvent)) {
        let ev = match ev {
            StreamEvent::ToolCallBegin { index, id, name } => {
                let i = self.slot(Source::Marker(index));
                let slot = &mut self.slots[i];
                slot.begun = true;
                slot.id = id.clone();
                slot.name = name.clone();
                StreamEvent::ToolCallBegin { index: i, id, name }
            }
            StreamEvent::ToolCallArgs { index, delta } => StreamEvent::ToolCallArgs {
                index: self.slot(Source::Marker(index)),
                delta,
            },
            StreamEvent::ToolCallEnd { index } => {
                let i = self.slot(Source::Marker(index));
                self.slots[i].complete = true;
                StreamEvent::ToolCallEnd { index: i }
            }
            StreamEvent::ToolCallIncomplete { index } => StreamEvent::ToolCallIncomplete {
                index: self.slot(Source::Marker(index)),
            },
            other => other,
        };
        on_event(ev);
    }
}

pub(super) async fn stream(
    call: Call<'_>,
    messages: &[Message],
    tools: &[Value],
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> TurnResult {
    let ep = call.endpoint;
    let messages = if ep.neutralize_tool_markers {
        special::neutralize_tool_results(messages)
    } else {
        Cow::Borrowed(messages)
    };
    let mut body = json!({
        "model": ep.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": ep.max_tokens,
        "temperature": ep.temperature,
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools.to_vec());
        body["tool_choice"] = json!("auto");
    }
    let mut local = LocalParse::default();
    let mut calls = Assembler::default();
    let mut progress = Progress::default();
    let mut bytes = 0u64;
    let started = Instant::now();

    let end = http::stream_sse(
        &call,
        "chat/completions",
        body,
        None,
        on_event,
        |data, at_us, on_event| {
            bytes += data.len() as u64;
            on_event(StreamEvent::Chunk {
                data: data.to_owned(),
                at_us,
            });
            let choice = progress.accept::<Choice>(data, on_event)?;
            if let Some(delta) = choice.and_then(|c| c.delta) {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    local.feed(&text, &mut |ev| calls.marker_event(ev, on_event));
                }
                for (position, d) in delta.tool_calls.into_iter().flatten().enumerate() {
                    calls.delta(position, d, on_event);
                }
            }
            Ok(())
        },
    )
    .await;

    local.finish(&mut |ev| calls.marker_event(ev, on_event));
    let finished = progress.finish_reason.is_some();
    let (error, cancelled) = http::outcome(end, finished, bytes, started, on_event);
    let Progress {
        finish_reason,
        usage,
        mut warnings,
    } = progress;
    let mut result = TurnResult {
        finish_reason,
        usage,
        error,
        cancelled,
        ..TurnResult::default()
    };
    // Structured calls are complete only if the stream finished.
    let finished = result.error.is_none() && !result.cancelled;
    result.incomplete_calls = local.incomplete();
    let parsed = local.into_parsed();
    let mut from_markers = parsed.tool_calls.into_iter();
    for (i, slot) in calls.slots.iter_mut().enumerate() {
        match slot.source {
            Source::Marker(_) => {
                if slot.complete
                    && let Some(c) = from_markers.next()
                {
                    result.tool_calls.push(c);
                }
            }
            Source::Delta(_) if finished && slot.begun => {
                slot.complete = true;
                on_event(StreamEvent::ToolCallEnd { index: i });
                let call = ToolCall::new(&slot.id, &slot.name, slot.arguments.trim());
                if let Some(w) = check_arguments(i, &call) {
                    on_event(StreamEvent::Warning(w.to_string()));
                    warnings.push(w.to_string());
                }
                result.tool_calls.push(call);
            }
            Source::Delta(_) => {
                result.incomplete_calls += 1;
                let why = if slot.begun {
                    "the stream did not finish"
                } else {
                    "the server never sent its function name"
                };
                let w = format!("tool call {i} is incomplete: {why}; it will not run");
                on_event(StreamEvent::Warning(w.clone()));
                warnings.push(w);
                if slot.begun {
                    on_event(StreamEvent::ToolCallIncomplete { index: i });
                }
            }
        }
    }
    result.content = parsed.content;
    warnings.extend(parsed.warnings.iter().map(ToString::to_string));
    result.warnings = warnings;
    result
}
