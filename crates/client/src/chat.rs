//! Chat mode: POST `/chat/completions` with `tools` and assemble the streamed `tool_calls`
//! deltas. `content` and reasoning still go through the local marker parser
//! (`chat_reasoning`), so a server whose tool parser is off (markers in `content`, or inside
//! the reasoning) still yields tool calls instead of raw markers as text; a call delivered both
//! ways runs once.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::Value;

use super::chat_reasoning::{Channel, Channels, Sink};
use super::events::Events;
use super::exchange::{Decoder, Exchange};
use super::http::{self, Call, Progress, StreamChoice};
use super::logprobs::{self, ChatLogprobs};
use super::{BackendError, TurnResult};
use kimi_protocol::completion::check_arguments;
use kimi_protocol::completion::parse_arguments;
use kimi_protocol::reasoning_resent::ReasoningResent;
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
    /// Token-level data, when asked for (`logprobs`).
    #[serde(default)]
    logprobs: Option<ChatLogprobs>,
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
    /// Reasoning: Moonshot, SGLang, vLLM before its rename.
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    /// Reasoning: OpenRouter, recent vLLM (which renamed the field).
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
}

impl<'a> Delta<'a> {
    /// `reasoning_content` if it is a string, else `reasoning`: never both, as some servers
    /// mirror the same text into the two fields.
    fn take_reasoning(&mut self) -> Option<Cow<'a, str>> {
        match self.reasoning_content.take() {
            Some(r) => Some(r),
            None => self.reasoning.take(),
        }
        .filter(|r| !r.is_empty())
    }
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

/// Where a call came from: a `tool_calls` delta index, or a local marker parser's index in
/// one of the channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Delta(usize),
    Marker(Channel, usize),
}

#[derive(Debug)]
struct Slot {
    source: Source,
    id: String,
    name: String,
    arguments: String,
    begun: bool,
    complete: bool,
    /// A marker call's events held back until it ends, because structured calls exist and it
    /// may be a leaked copy of one of them (older vLLM versions stream both).
    held: Option<Vec<StreamEvent>>,
    /// A marker copy of a structured call: dropped, never run.
    duplicate: bool,
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
            held: None,
            duplicate: false,
        });
        self.slots.len() - 1
    }

    /// The structured call `slot` repeats: same id, or same name and same arguments.
    fn original_of(&self, slot: &Slot) -> Option<usize> {
        self.slots.iter().position(|s| {
            matches!(s.source, Source::Delta(_))
                && s.begun
                && ((!slot.id.is_empty() && s.id == slot.id)
                    || (s.name == slot.name && same_arguments(&s.arguments, &slot.arguments)))
        })
    }

    fn delta(&mut self, position: usize, d: CallDelta<'_>, out: &mut Events) {
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
            out.push(StreamEvent::ToolCallBegin {
                index: i,
                id: slot.id.clone(),
                name: slot.name.clone(),
            });
            if !slot.arguments.is_empty() {
                out.push(StreamEvent::ToolCallArgs {
                    index: i,
                    delta: slot.arguments.clone(),
                });
            }
        }
        if !fragment.is_empty() {
            slot.arguments.push_str(&fragment);
            if slot.begun {
                out.push(StreamEvent::ToolCallArgs {
                    index: i,
                    delta: fragment,
                });
            }
        }
    }

    /// A local-parser event of `channel`: renumber its call index into a slot. While
    /// structured calls exist, a marker call is held until it ends and dropped if it repeats one.
    fn marker_event(
        &mut self,
        channel: Channel,
        ev: StreamEvent,
        warnings: &mut Vec<String>,
        out: &mut Events,
    ) {
        let ev = match ev {
            StreamEvent::ToolCallBegin { index, id, name } => {
                let structured = self
                    .slots
                    .iter()
                    .any(|s| matches!(s.source, Source::Delta(_)));
                let i = self.slot(Source::Marker(channel, index));
                let slot = &mut self.slots[i];
                slot.begun = true;
                slot.id = id.clone();
                slot.name = name.clone();
                let ev = StreamEvent::ToolCallBegin { index: i, id, name };
                if structured {
                    slot.held = Some(vec![ev]);
                    return;
                }
                ev
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                let i = self.slot(Source::Marker(channel, index));
                self.slots[i].arguments.push_str(&delta);
                StreamEvent::ToolCallArgs { index: i, delta }
            }
            StreamEvent::ToolCallEnd { index } => {
                let i = self.slot(Source::Marker(channel, index));
                self.slots[i].complete = true;
                if self.slots[i].held.is_some()
                    && let Some(original) = self.original_of(&self.slots[i])
                {
                    self.slots[i].duplicate = true;
                    self.slots[i].held = None;
                    let w = duplicate_warning(&self.slots[i], channel, original);
                    out.push(StreamEvent::Warning(w.clone()));
                    warnings.push(w);
                    return;
                }
                StreamEvent::ToolCallEnd { index: i }
            }
            StreamEvent::ToolCallIncomplete { index } => StreamEvent::ToolCallIncomplete {
                index: self.slot(Source::Marker(channel, index)),
            },
            other => other,
        };
        let index = match &ev {
            StreamEvent::ToolCallArgs { index, .. }
            | StreamEvent::ToolCallEnd { index }
            | StreamEvent::ToolCallIncomplete { index } => Some(*index),
            _ => None,
        };
        if let Some(i) = index
            && let Some(held) = self.slots[i].held.as_mut()
        {
            if matches!(ev, StreamEvent::ToolCallArgs { .. }) {
                held.push(ev);
                return;
            }
            // It ends and is not a copy: show it as it came.
            out.extend(self.slots[i].held.take().into_iter().flatten());
        }
        out.push(ev);
    }
}

/// Arguments equal as JSON values when both parse, else as trimmed text.
fn same_arguments(a: &str, b: &str) -> bool {
    match (parse_arguments(a), parse_arguments(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim() == b.trim(),
    }
}

fn duplicate_warning(slot: &Slot, channel: Channel, original: usize) -> String {
    format!(
        "tool call {} ({}) arrived twice: as a tool_calls delta and as marker text in {}; \
         the copy was dropped and will not run",
        original,
        slot.name,
        channel.describe()
    )
}

pub(super) fn stream(
    call: Call<'_>,
    messages: &[Message],
    tools: &[Value],
    prefix: Option<&str>,
) -> Exchange {
    let ep = call.endpoint;
    let messages = if ep.neutralize_tool_markers {
        special::neutralize_tool_results(messages)
    } else {
        Cow::Borrowed(messages)
    };
    let mut said = Events::default();
    for note in super::chat_request::notes(ep) {
        said.push(StreamEvent::Warning(note));
    }
    let mut body = super::chat_request::body(ep, &messages, tools);
    logprobs::chat_fields(&mut body, ep.logprobs);
    // Measured on the conversation as sent, before a continued answer's start joins it.
    let resent = super::resent::chat(ep, &body, tools);
    let Some(prefix) = prefix else {
        return send(call, body, said, resent);
    };
    super::chat_request::continue_from(ep, &mut body, prefix);
    let decoder = ChatDecoder {
        asked: logprobs::requested(&body),
        prefix: prefix.to_owned(),
        ..ChatDecoder::for_template(ep.template(), &body)
    };
    let decoder = Decoder::Chat(Box::new(decoder));
    Exchange::open(&call, "chat/completions", body, None, decoder, said, resent)
}

/// POST `body` (a chat request, as built or as saved) and assemble the answer; `said` holds
/// what was said before the request, `resent` the reasoning its prompt carries (as this
/// client renders it).
pub(super) fn send(
    call: Call<'_>,
    body: Value,
    said: Events,
    resent: Option<ReasoningResent>,
) -> Exchange {
    let decoder = ChatDecoder {
        asked: logprobs::requested(&body),
        ..ChatDecoder::for_template(call.endpoint.template(), &body)
    };
    let decoder = Decoder::Chat(Box::new(decoder));
    Exchange::open(&call, "chat/completions", body, None, decoder, said, resent)
}

/// A chat answer's payloads in, events out: what `send` does with each SSE payload, and what
/// `reparse` does with each saved one.
#[derive(Default)]
pub(super) struct ChatDecoder {
    channels: Channels,
    /// What the channels parsed from the current payload, before the calls are numbered.
    parsed: Sink,
    calls: Assembler,
    dropped: Vec<String>,
    progress: Progress,
    bytes: u64,
    /// Alternatives per token the request asked for (`logprobs`; 0: none).
    asked: u8,
    got_tokens: bool,
    /// A continued answer (partial mode): the edited text the server's answer goes on from.
    prefix: String,
    /// The prefix was reported as the answer's first text: before the first payload, so an
    /// attempt refused outright shows none of it.
    prefix_shown: bool,
}

impl ChatDecoder {
    /// The decoder for a model of `template` answering `body` (K3 parses markers in content as
    /// XTML, numbering calls on from those the request's messages already hold).
    pub(crate) fn for_template(template: kimi_protocol::Template, body: &Value) -> Self {
        ChatDecoder {
            channels: if template == kimi_protocol::Template::K3 {
                Channels::k3(calls_in(body))
            } else {
                Channels::default()
            },
            ..ChatDecoder::default()
        }
    }

    pub(crate) fn payload(
        &mut self,
        data: &str,
        at_us: u64,
        out: &mut Events,
    ) -> Result<(), BackendError> {
        self.bytes += data.len() as u64;
        self.show_prefix(out);
        out.push(StreamEvent::Chunk {
            data: data.to_owned(),
            at_us,
        });
        let mut choice = self.progress.accept::<Choice>(data, out)?;
        if let Some(lp) = choice.as_mut().and_then(|c| c.logprobs.take()) {
            let tokens = lp.tokens(self.asked);
            if !tokens.is_empty() {
                self.got_tokens = true;
                out.push(StreamEvent::Tokens(tokens));
            }
        }
        if let Some(mut delta) = choice.and_then(|c| c.delta) {
            if let Some(text) = delta.take_reasoning() {
                self.channels.reasoning(&text, &mut self.parsed);
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.channels.content(&text, &mut self.parsed);
            }
            for (ch, ev) in self.parsed.drain(..) {
                self.calls.marker_event(ch, ev, &mut self.dropped, out);
            }
            for (position, d) in delta.tool_calls.into_iter().flatten().enumerate() {
                self.calls.delta(position, d, out);
            }
        }
        Ok(())
    }

    /// A continued answer's edited start, once, as its first text.
    fn show_prefix(&mut self, out: &mut Events) {
        if !self.prefix_shown && !self.prefix.is_empty() {
            self.prefix_shown = true;
            out.push(StreamEvent::Text(self.prefix.clone()));
        }
    }

    /// The stream ended (`end`): flush, report the end, and assemble the result.
    pub(crate) fn finish(
        mut self,
        end: Result<http::End, BackendError>,
        started: Instant,
        out: &mut Events,
    ) -> TurnResult {
        // How it ended is decided before the end goes out: a continuation that ended well with
        // nothing more is the edited text alone, one that failed before its answer began shows
        // none of it.
        let finished = self.progress.finish_reason.is_some();
        let mut ended = Events::default();
        let (error, cancelled) = http::outcome(end, finished, self.bytes, started, &mut ended);
        if self.bytes > 0 || error.is_none() {
            self.show_prefix(out);
        }
        let ChatDecoder {
            channels,
            mut parsed,
            mut calls,
            mut dropped,
            progress,
            bytes,
            asked,
            got_tokens,
            prefix,
            prefix_shown: _,
        } = self;
        let done = channels.finish(&mut parsed);
        for (ch, ev) in parsed {
            calls.marker_event(ch, ev, &mut dropped, out);
        }
        out.append(ended);
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
            logprobs: logprobs::outcome(asked, got_tokens),
            ..TurnResult::default()
        };
        // Structured calls are complete only if the stream finished.
        let finished = result.error.is_none() && !result.cancelled;
        result.incomplete_calls = done.incomplete;
        let mut from_content = done.content.tool_calls.into_iter();
        let mut from_reasoning = done.reasoning.tool_calls.into_iter();
        for i in 0..calls.slots.len() {
            let slot = &calls.slots[i];
            match slot.source {
                Source::Marker(channel, _) => {
                    let parsed = match channel {
                        Channel::Content => &mut from_content,
                        Channel::Reasoning => &mut from_reasoning,
                    };
                    if !slot.complete {
                        continue;
                    }
                    let Some(c) = parsed.next() else { continue };
                    if slot.duplicate {
                        continue;
                    }
                    // A structured copy that arrived after this one ended: still only one runs.
                    if let Some(original) = calls.original_of(slot) {
                        let w = duplicate_warning(slot, channel, original);
                        out.push(StreamEvent::Warning(w.clone()));
                        warnings.push(w);
                        continue;
                    }
                    let w = format!(
                        "tool call {i} ({}) was found as marker text in {} (the server's tool \
                         parser did not take it); it was recovered as a real call",
                        c.function.name,
                        channel.describe()
                    );
                    out.push(StreamEvent::Warning(w.clone()));
                    warnings.push(w);
                    result.tool_calls.push(c);
                }
                Source::Delta(_) if finished && slot.begun => {
                    let slot = &mut calls.slots[i];
                    slot.complete = true;
                    out.push(StreamEvent::ToolCallEnd { index: i });
                    let call = ToolCall::new(&slot.id, &slot.name, slot.arguments.trim());
                    if let Some(w) = check_arguments(i, &call) {
                        out.push(StreamEvent::Warning(w.to_string()));
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
                    out.push(StreamEvent::Warning(w.clone()));
                    warnings.push(w);
                    if slot.begun {
                        out.push(StreamEvent::ToolCallIncomplete { index: i });
                    }
                }
            }
        }
        // Spaced markers leave blanks around the calls: that is not an answer.
        let calls_found = !result.tool_calls.is_empty() || result.incomplete_calls > 0;
        result.content = if calls_found && done.content_text.trim().is_empty() {
            String::new()
        } else {
            done.content_text
        };
        result.reasoning = if calls_found && done.reasoning_text.trim().is_empty() {
            String::new()
        } else {
            done.reasoning_text
        };
        let parser_warnings = done.content.warnings.iter().chain(&done.reasoning.warnings);
        warnings.extend(parser_warnings.map(ToString::to_string));
        warnings.extend(done.notes);
        warnings.extend(dropped);
        result.warnings = warnings;
        // A continued answer is the edited text and what followed it; a request that failed
        // before any of its answer arrived has no answer at all.
        if !prefix.is_empty() && (bytes > 0 || result.error.is_none()) {
            result.content.insert_str(0, &prefix);
        }
        result
    }
}

/// The tool calls a chat request's messages hold.
fn calls_in(body: &Value) -> usize {
    body.get("messages")
        .and_then(Value::as_array)
        .map_or(0, |messages| {
            messages
                .iter()
                .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
                .map(Vec::len)
                .sum()
        })
}

#[cfg(test)]
mod k3_ids_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn k3_calls_in_content_are_numbered_on_from_the_conversations() {
        let body = json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [{"id": "get_weather_0"}, {"id": "f_1"}]},
            {"role": "tool", "content": "r"},
        ]});
        assert_eq!(calls_in(&body), 2);
        let mut d = ChatDecoder::for_template(kimi_protocol::Template::K3, &body);
        let xtml = "r<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool=\"g\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>";
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": xtml}}]}).to_string();
        let mut out = Events::default();
        d.payload(&chunk, 0, &mut out).expect("payload");
        let result = d.finish(Ok(super::http::End::Done), Instant::now(), &mut out);
        let ids: Vec<String> = out
            .into_vec()
            .into_iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallBegin { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["g_2"]);
        assert_eq!(result.tool_calls.len(), 1, "{result:?}");
        assert_eq!(result.tool_calls[0].id, "g_2");
    }
}
