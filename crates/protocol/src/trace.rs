//! What the inspector shows for one request: the exact request (key redacted), every chunk with
//! its arrival time, the markers found, and how it ended.
//!
//! A trace is built in one place, [`Trace::record`], from the events of its stream: whoever
//! owns the stream (the engine) builds it, and nobody keeps a second copy.
//!
//! Chunks are stored as one string plus boundaries, not one `String` each: 100,000 streamed
//! tokens then cost about 1 MB here rather than several; the boundaries take 8 bytes a chunk
//! ([`ChunkMarks`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Marker;
use crate::Mode;
use crate::reasoning_resent::ReasoningResent;
use crate::stream::{RequestSent, StreamEvent, StreamMeta, Usage};
use crate::trace_tokens::TokenTrace;

pub use crate::chunk_marks::{ChunkMark, ChunkMarks};
pub use crate::produced_log::ProducedLog;

/// The trace of one HTTP request/response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub mode: Mode,
    pub url: String,
    /// Request headers as sent, with `Authorization` redacted.
    pub headers: Vec<(String, String)>,
    /// The JSON body sent (it never holds the API key).
    pub request: Value,
    /// Raw mode: the rendered prompt (also inside `request`, kept apart for display).
    pub prompt: Option<String>,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// HTTP status of the response, once known.
    pub status: Option<u16>,
    /// Raw mode: completion text chunks; chat mode: the SSE `data:` payloads. Concatenated.
    pub data: String,
    /// Where each chunk ends in `data`, and when it arrived.
    pub chunks: ChunkMarks,
    /// Raw mode (and chat content holding markers): each marker at its offset in the completion.
    pub markers: Vec<MarkerHit>,
    /// Microseconds from the request to the first chunk, and to the end.
    pub first_chunk_us: Option<u64>,
    pub total_us: Option<u64>,
    /// How it ended, when it did not end well.
    pub error: Option<String>,
    /// Chunks that arrived after `data` reached [`DATA_CAP`], not kept.
    #[serde(default)]
    pub dropped_chunks: u64,
    #[serde(default)]
    pub dropped_bytes: u64,
    /// Raw mode: byte ranges (start, end) in `prompt` of special-token strings that came from
    /// user messages or tool results, not from the template.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_text_markers: Vec<(usize, usize)>,
    /// Raw mode: the messages and tools the prompt was rendered from (see
    /// [`RequestSent::source`]); absent in traces saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// Raw mode: the edited start of the answer the completion continues (see
    /// [`RequestSent::prefix`]); parsing the stream again begins with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Token-level data, when the request asked for `logprobs` and the server sent them.
    #[serde(default, skip_serializing_if = "TokenTrace::is_empty")]
    pub tokens: TokenTrace,
    // What the server said besides the chunks, and what the client made of each chunk (the
    // inspector shows the raw beside the parsed).
    /// Response headers as received, secrets masked ([`redact_headers`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_headers: Vec<(String, String)>,
    /// The last `finish_reason` the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The last usage the server reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The earlier reasoning the prompt carries (see [`crate::reasoning_resent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_resent: Option<ReasoningResent>,
    /// Whether `data: [DONE]` arrived.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
    /// Whether the user cancelled the answer while it streamed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// What the client made of each kept chunk, in order: kinds and sizes, not the text.
    #[serde(default, skip_serializing_if = "ProducedLog::is_empty")]
    pub produced: ProducedLog,
    /// The calls the client saw begin, in order (`Made::CallBegin` points here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_heads: Vec<CallHead>,
    /// Warnings about the stream, in order (`Made::Warning` points here); at most
    /// [`WARNINGS_CAP`] kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Most warnings a trace keeps (a server sending a malformed event per token would otherwise
/// copy its stream here).
pub const WARNINGS_CAP: usize = 1000;

/// One thing the client made of chunk `.0` (an index in `Trace::chunks`). A tuple: it is
/// saved as `[chunk, {"kind": n}]`, about 16 bytes, once per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Produced(pub u32, pub Made);

/// What a chunk produced, by kind, with sizes and indexes instead of copies of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Made {
    /// Answer text, this many bytes.
    Text(u32),
    /// Reasoning text, this many bytes.
    Reasoning(u32),
    /// A marker: its index in `Trace::markers`.
    Marker(u32),
    /// A call began: its index in `Trace::call_heads`.
    CallBegin(u32),
    /// Argument bytes of call `call`.
    Args { call: u32, bytes: u32 },
    /// Call `.0` is complete.
    CallEnd(u32),
    /// Call `.0` was cut off (it will not run).
    CallIncomplete(u32),
    /// A warning: its index in `Trace::warnings` (past the cap: `u32::MAX`).
    Warning(u32),
}

/// A call's header as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallHead {
    pub index: usize,
    pub id: String,
    pub name: String,
}

/// Header names whose values are secrets or session state: never kept.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
];

/// The value kept for a masked header.
pub const MASKED: &str = "[redacted]";

/// `headers` as a trace keeps them: cookies and auth-ish headers (by name: `authorization`,
/// `cookie`, anything with `token`, `secret`, `key` or `auth` in it) masked, and any header
/// whose value holds `api_key` masked too (a gateway echoing it back).
pub fn redact_headers(
    headers: impl IntoIterator<Item = (String, String)>,
    api_key: Option<&str>,
) -> Vec<(String, String)> {
    let key = api_key.filter(|k| !k.is_empty());
    headers
        .into_iter()
        .map(|(name, value)| {
            let lower = name.to_ascii_lowercase();
            let secret = SECRET_HEADERS.contains(&lower.as_str())
                || ["token", "secret", "key", "auth", "session"]
                    .iter()
                    .any(|w| lower.contains(w))
                || key.is_some_and(|k| value.contains(k));
            let value = if secret { MASKED.to_owned() } else { value };
            (name, value)
        })
        .collect()
}

/// Most chunk bytes kept per request. A raw-mode answer of 100,000 tokens is about 0.7 MB; the
/// SSE events of a chat-mode one about 20 MB, of which the start is what anyone inspects.
pub const DATA_CAP: usize = 2 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkerHit {
    pub marker: Marker,
    /// Byte offset in the completion text (raw mode) or in the content (chat mode).
    pub offset: u64,
    /// Which call it belongs to, for markers inside a tool call.
    pub call: Option<usize>,
}

impl Trace {
    /// A trace of `request`, before any answer.
    pub fn started(request: RequestSent) -> Trace {
        Trace {
            mode: request.mode,
            url: request.url,
            headers: request.headers,
            request: request.body,
            prompt: request.prompt,
            prompt_text_markers: request.prompt_text_markers,
            source: request.source,
            prefix: request.prefix,
            started_unix_ms: request.started_unix_ms,
            reasoning_resent: request.reasoning_resent,
            ..Trace::default()
        }
    }

    /// Record one event of the stream: the request starts the trace afresh; the status, the
    /// chunks, the markers and the end fill it in; the other events (text, calls, usage) are
    /// worked out from the chunks, not recorded twice.
    pub fn record(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Request(r) => *self = Trace::started(RequestSent::clone(r)),
            StreamEvent::Response { status } => self.status = Some(*status),
            StreamEvent::Chunk { data, at_us } => self.push_chunk(data, *at_us),
            StreamEvent::Marker(hit) => self.markers.push(*hit),
            // Tokens belong to the chunk reported just before them.
            StreamEvent::Tokens(tokens) => self
                .tokens
                .push(self.chunks.len().saturating_sub(1), tokens),
            StreamEvent::Finished { total_us, error } => {
                self.total_us = Some(*total_us);
                self.error.clone_from(error);
            }
            StreamEvent::Usage(u) => self.usage = Some(*u),
            StreamEvent::Meta(StreamMeta::Headers(h)) => self.response_headers.clone_from(h),
            StreamEvent::Meta(StreamMeta::FinishReason(r)) => self.finish_reason = Some(r.clone()),
            StreamEvent::Meta(StreamMeta::Done) => self.done = true,
            StreamEvent::Meta(StreamMeta::Cancelled) => self.cancelled = true,
            StreamEvent::Text(t) => self.made(Made::Text(len32(t))),
            StreamEvent::Reasoning(t) => self.made(Made::Reasoning(len32(t))),
            // The warning the parser gives with it says so in the chunk's column.
            StreamEvent::ReasoningWasText => {}
            StreamEvent::ToolCallBegin { index, id, name } => {
                let head = len32(&self.call_heads);
                if self.keeps_produced() {
                    self.call_heads.push(CallHead {
                        index: *index,
                        id: id.clone(),
                        name: name.clone(),
                    });
                    self.made(Made::CallBegin(head));
                }
            }
            StreamEvent::ToolCallArgs { index, delta } => self.made(Made::Args {
                call: u32::try_from(*index).unwrap_or(u32::MAX),
                bytes: len32(delta),
            }),
            StreamEvent::ToolCallEnd { index } => {
                self.made(Made::CallEnd(u32::try_from(*index).unwrap_or(u32::MAX)));
            }
            StreamEvent::ToolCallIncomplete { index } => {
                self.made(Made::CallIncomplete(
                    u32::try_from(*index).unwrap_or(u32::MAX),
                ));
            }
            StreamEvent::Warning(w) => {
                let at = if self.warnings.len() < WARNINGS_CAP {
                    self.warnings.push(w.clone());
                    len32(&self.warnings) - 1
                } else {
                    u32::MAX
                };
                self.made(Made::Warning(at));
            }
        }
        // A marker is reported before the event it causes: it belongs to the same chunk.
        if let StreamEvent::Marker(_) = event {
            self.made(Made::Marker(len32(&self.markers).saturating_sub(1)));
        }
    }

    /// Whether what chunks produce is still recorded: not past the data cap (the chunks are
    /// not kept there either), nor for events before the first chunk.
    fn keeps_produced(&self) -> bool {
        self.dropped_chunks == 0 && !self.chunks.is_empty()
    }

    /// Record that the latest chunk produced `made` (events after the last chunk, such as
    /// the parser's flush at the end, belong to the last chunk).
    fn made(&mut self, made: Made) {
        if self.keeps_produced() {
            self.produced.push(Produced(
                u32::try_from(self.chunks.len() - 1).unwrap_or(u32::MAX),
                made,
            ));
        }
    }

    /// What chunk `n` produced, in order (a binary search, not a scan).
    pub fn produced_by(&self, n: usize) -> impl Iterator<Item = Made> + '_ {
        self.produced.by_chunk(n)
    }

    pub fn push_chunk(&mut self, data: &str, at_us: u64) {
        if self.first_chunk_us.is_none() {
            self.first_chunk_us = Some(at_us);
        }
        if self.data.len() + data.len() > DATA_CAP {
            self.dropped_chunks += 1;
            self.dropped_bytes += data.len() as u64;
            return;
        }
        self.data.push_str(data);
        self.chunks.push(ChunkMark {
            end: self.data.len(),
            at_us,
        });
    }

    /// Each chunk's text and arrival time, in order. A chunk whose bounds do not fit `data`
    /// (a damaged file) comes out empty rather than panicking.
    pub fn chunks(&self) -> impl Iterator<Item = (&str, u64)> {
        let mut start = 0;
        self.chunks.iter().map(move |c: ChunkMark| {
            let s = self.data.get(start..c.end).unwrap_or("");
            start = c.end;
            (s, c.at_us)
        })
    }
}

/// `len()` as the `u32` a [`Produced`] stores (saturating: 4 GiB is far past any cap).
fn len32<T: AsRef<[U]> + ?Sized, U>(v: &T) -> u32 {
    u32::try_from(v.as_ref().len()).unwrap_or(u32::MAX)
}

/// The value shown in place of a secret.
pub const REDACTED: &str = "Bearer [redacted]";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_through_offsets() {
        let mut t = Trace::default();
        t.push_chunk("Hel", 10);
        t.push_chunk("", 12);
        t.push_chunk("lo 北京", 30);
        let got: Vec<(&str, u64)> = t.chunks().collect();
        assert_eq!(got, vec![("Hel", 10), ("", 12), ("lo 北京", 30)]);
        assert_eq!(t.first_chunk_us, Some(10));
    }

    #[test]
    fn a_trace_is_recorded_from_its_events() {
        let request = RequestSent {
            mode: Mode::Chat,
            url: "http://h/v1/chat/completions".into(),
            headers: vec![("Authorization".into(), REDACTED.into())],
            body: serde_json::json!({"model": "m"}),
            prompt: None,
            prompt_text_markers: vec![(1, 3)],
            source: None,
            prefix: None,
            started_unix_ms: 42,
            reasoning_resent: None,
        };
        let hit = MarkerHit {
            marker: Marker::CallBegin,
            offset: 2,
            call: Some(0),
        };
        let mut t = Trace::default();
        t.push_chunk("left over", 1);
        for e in [
            StreamEvent::Request(Box::new(request)),
            StreamEvent::Response { status: 200 },
            StreamEvent::Chunk {
                data: "ab".into(),
                at_us: 5,
            },
            StreamEvent::Text("ab".into()),
            StreamEvent::Marker(hit),
            StreamEvent::Chunk {
                data: "c".into(),
                at_us: 9,
            },
            StreamEvent::Finished {
                total_us: 12,
                error: Some("dropped".into()),
            },
        ] {
            t.record(&e);
        }
        assert_eq!(t.url, "http://h/v1/chat/completions");
        assert_eq!((t.mode, t.started_unix_ms), (Mode::Chat, 42));
        assert_eq!(t.headers[0].1, REDACTED);
        assert_eq!(t.request["model"], "m");
        assert_eq!(t.prompt_text_markers, vec![(1, 3)]);
        assert_eq!(t.status, Some(200));
        assert_eq!(t.chunks().collect::<Vec<_>>(), vec![("ab", 5), ("c", 9)]);
        assert_eq!(t.markers, vec![hit]);
        assert_eq!((t.first_chunk_us, t.total_us), (Some(5), Some(12)));
        assert_eq!(t.error.as_deref(), Some("dropped"));
    }

    #[test]
    fn chunks_past_the_cap_are_counted_not_kept() {
        let mut t = Trace::default();
        let big = "x".repeat(DATA_CAP - 1);
        t.push_chunk(&big, 1);
        t.push_chunk("ab", 2);
        t.push_chunk("c", 3);
        assert_eq!(t.data.len(), DATA_CAP);
        assert_eq!((t.dropped_chunks, t.dropped_bytes), (1, 2));
        assert_eq!(t.chunks.len(), 2);
    }
}
