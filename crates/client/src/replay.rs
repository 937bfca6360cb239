//! A saved request sent again (`kimi-tui replay`), and a saved stream parsed again exactly as
//! it arrived (`kimi-tui parse --trace`), through the same decoders as a live turn.

use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::chat::{self, ChatDecoder};
use super::completions::{self, RawDecoder};
use super::http::{End, Prompt};
use super::markers::ParseStart;
use super::{Backend, BackendError, TurnResult};
use kimi_protocol::{Mode, StreamEvent, Trace};

impl Backend {
    /// POST `body` exactly as given to the endpoint of the backend's mode, and stream the
    /// answer as a turn does (the events say everything a trace holds). Raw mode: `prompt` is
    /// the prompt inside `body`, shown by the inspector and deciding where parsing starts.
    pub async fn replay(
        &self,
        body: Value,
        prompt: Option<(String, Vec<(usize, usize)>)>,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> TurnResult {
        let call = self.call(&self.endpoint, cancel);
        match self.endpoint.mode {
            Mode::Raw => {
                let start = ParseStart::for_prompt(prompt.as_ref().map(|p| p.0.as_str()));
                let prompt = prompt.map(|(text, text_markers)| Prompt { text, text_markers });
                completions::send(call, body, prompt, start, on_event).await
            }
            Mode::Chat => chat::send(call, body, on_event).await,
        }
    }
}

/// Feed `trace`'s chunks, as they arrived, to the decoder its mode uses, and report the events
/// as a live turn did: each `Chunk`, then what was made of it, then the end. Raw mode feeds
/// the completion text the trace kept (its payloads' other fields are not saved: the finish
/// reason is taken from the trace); chat mode feeds the SSE payloads.
pub fn reparse(trace: &Trace, on_event: &mut dyn FnMut(StreamEvent)) -> TurnResult {
    let started = Instant::now();
    let end = match &trace.error {
        Some(e) => Err(BackendError::Dropped {
            bytes: trace.data.len() as u64,
            detail: e.clone(),
        }),
        None if trace.done => Ok(End::Done),
        None => Ok(End::Eof),
    };
    match trace.mode {
        Mode::Raw => {
            let mut d = RawDecoder::new(ParseStart::for_prompt(trace.prompt.as_deref()));
            for (chunk, at_us) in trace.chunks() {
                d.text(chunk, at_us, on_event);
            }
            d.set_finish_reason(trace.finish_reason.clone());
            d.finish(end, started, on_event)
        }
        Mode::Chat => {
            let model = trace
                .request
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut d = ChatDecoder::for_template(
                kimi_protocol::Template::for_model(model),
                &trace.request,
            );
            for (chunk, at_us) in trace.chunks() {
                // An error event ended the live stream here too; the rest was never read.
                if let Err(e) = d.payload(chunk, at_us, on_event) {
                    return d.finish(Err(e), started, on_event);
                }
            }
            d.finish(end, started, on_event)
        }
    }
}
