//! A saved request sent again (`kimi-tui replay`), and a saved stream parsed again exactly as
//! it arrived (`kimi-tui parse --trace`), through the same decoders as a live turn.

use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::chat::{self, ChatDecoder};
use super::completions::{self, RawDecoder};
use super::events::Events;
use super::http::{End, Prompt};
use super::markers::ParseStart;
use super::turn_stream::{TurnItem, TurnStream};
use super::{Backend, BackendError, TurnResult};
use kimi_protocol::{Mode, StreamEvent, Trace};

impl Backend {
    /// POST the body of `saved` exactly as it was to the endpoint of the backend's mode, and
    /// stream the answer as a turn does (the events say everything a trace holds). Raw mode:
    /// its prompt (shown by the inspector) and the edited start of the answer it continued,
    /// if any, decide where parsing starts.
    pub fn replay<'a>(&'a self, saved: &Trace, cancel: &'a CancellationToken) -> TurnStream<'a> {
        let call = self.call(&self.endpoint, cancel);
        let body = saved.request.clone();
        let exchange = match self.endpoint.mode {
            Mode::Raw => {
                let decoder = raw_decoder(saved);
                let prompt = saved.prompt.clone().map(|text| Prompt {
                    text,
                    text_markers: saved.prompt_text_markers.clone(),
                    source: saved.source.clone(),
                    prefix: saved.prefix.clone(),
                });
                completions::open(
                    call,
                    body,
                    prompt,
                    decoder,
                    Events::default(),
                    saved.reasoning_resent.clone(),
                )
            }
            Mode::Chat => chat::send(
                call,
                body,
                Events::default(),
                saved.reasoning_resent.clone(),
            ),
        };
        TurnStream::single(exchange)
    }
}

/// The decoder of a raw trace: started where its prompt leaves the model, and past the
/// edited start of the answer when it continued one.
fn raw_decoder(trace: &Trace) -> RawDecoder {
    let prompt = trace.prompt.as_deref();
    let before = match (prompt, trace.prefix.as_deref()) {
        (Some(p), Some(prefix)) => p.strip_suffix(prefix),
        _ => prompt,
    };
    let mut d = RawDecoder::new(ParseStart::for_prompt(before));
    if let Some(prefix) = &trace.prefix {
        d.prefix(prefix);
    }
    d
}

/// The decoder of a saved trace's mode.
enum Saved {
    Raw(Box<RawDecoder>),
    Chat(Box<ChatDecoder>),
}

/// `trace`'s chunks, as they arrived, through the decoder its mode uses: the events a live
/// turn reported (each `Chunk`, then what was made of it), then [`TurnItem::Done`]. Raw mode
/// feeds the completion text the trace kept (its payloads' other fields are not saved: the
/// finish reason is taken from the trace); chat mode feeds the SSE payloads. One chunk is
/// decoded at a time, as the items are taken.
pub struct Reparse<'a> {
    trace: &'a Trace,
    chunks: Box<dyn Iterator<Item = (&'a str, u64)> + 'a>,
    decoder: Option<Saved>,
    out: Events,
    /// The end decided early (an error event in a chat payload).
    ended: Option<Result<End, BackendError>>,
    result: Option<TurnResult>,
    started: Instant,
}

/// Parse `trace` again: see [`Reparse`].
pub fn reparse(trace: &Trace) -> Reparse<'_> {
    let decoder = match trace.mode {
        Mode::Raw => {
            let mut d = raw_decoder(trace);
            d.set_finish_reason(trace.finish_reason.clone());
            Saved::Raw(Box::new(d))
        }
        Mode::Chat => {
            let model = trace
                .request
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("");
            Saved::Chat(Box::new(ChatDecoder::for_template(
                kimi_protocol::Template::for_model(model),
                &trace.request,
            )))
        }
    };
    Reparse {
        trace,
        chunks: Box::new(trace.chunks()),
        decoder: Some(decoder),
        out: Events::default(),
        ended: None,
        result: None,
        started: Instant::now(),
    }
}

impl Reparse<'_> {
    /// Read it all: every event in order, and the result.
    pub fn events_and_result(self) -> (Vec<StreamEvent>, TurnResult) {
        let mut events = Vec::new();
        for item in self {
            match item {
                TurnItem::Event(e) => events.push(e),
                TurnItem::Done(result) => return (events, result),
            }
        }
        // Never expected: the last item is the result.
        (events, TurnResult::default())
    }

    /// How the saved stream ended.
    fn end(&self) -> Result<End, BackendError> {
        match &self.trace.error {
            Some(e) => Err(BackendError::Dropped {
                bytes: self.trace.data.len() as u64,
                detail: e.clone(),
            }),
            None if self.trace.done => Ok(End::Done),
            None => Ok(End::Eof),
        }
    }

    /// Decode the next chunk, or finish: `false` when nothing is left to do.
    fn advance(&mut self) -> bool {
        let Some(decoder) = self.decoder.as_mut() else {
            return false;
        };
        let next = if self.ended.is_some() {
            None
        } else {
            self.chunks.next()
        };
        match (next, decoder) {
            (Some((chunk, at_us)), Saved::Raw(d)) => d.text(chunk, at_us, &mut self.out),
            (Some((chunk, at_us)), Saved::Chat(d)) => {
                // An error event ended the live stream here too; the rest was never read.
                if let Err(e) = d.payload(chunk, at_us, &mut self.out) {
                    self.ended = Some(Err(e));
                }
            }
            (None, _) => {
                let end = self.ended.take().unwrap_or_else(|| self.end());
                let result = match self.decoder.take() {
                    Some(Saved::Raw(d)) => d.finish(end, self.started, &mut self.out),
                    Some(Saved::Chat(d)) => d.finish(end, self.started, &mut self.out),
                    None => TurnResult::default(),
                };
                self.result = Some(result);
            }
        }
        true
    }
}

impl Iterator for Reparse<'_> {
    type Item = TurnItem;

    fn next(&mut self) -> Option<TurnItem> {
        loop {
            if let Some(e) = self.out.pop() {
                return Some(TurnItem::Event(e));
            }
            if let Some(result) = self.result.take() {
                return Some(TurnItem::Done(result));
            }
            if !self.advance() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::RequestSent;

    /// A saved answer continued from an edit parses again as it did live: the edited start
    /// first, so the call it opened is completed by the saved completion.
    #[test]
    fn a_continued_answer_parses_again_from_its_edited_start() {
        let prefix = "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>";
        let prompt = format!(
            "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_assistant|>assistant<|im_middle|>{prefix}"
        );
        let mut trace = Trace::started(RequestSent {
            mode: Mode::Raw,
            prompt: Some(prompt),
            prefix: Some(prefix.into()),
            ..RequestSent::default()
        });
        trace.push_chunk(r#"{"city": "Paris"}<|tool_call_end|>"#, 1);
        trace.push_chunk("<|tool_calls_section_end|>", 2);
        trace.done = true;
        let (_, result) = reparse(&trace).events_and_result();
        assert!(result.error.is_none(), "{:?}", result.error);
        assert_eq!(result.content, "Checking.");
        assert_eq!(result.tool_calls.len(), 1, "{result:?}");
        assert_eq!(
            result.tool_calls[0].function.arguments,
            r#"{"city": "Paris"}"#
        );
        // Without the edited start the same chunks hold no whole call.
        trace.prefix = None;
        let (_, result) = reparse(&trace).events_and_result();
        assert!(result.tool_calls.is_empty(), "{result:?}");
    }
}
