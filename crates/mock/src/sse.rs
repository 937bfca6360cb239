//! Response shapes, byte for byte as vLLM's OpenAI server writes them: the SSE events of both
//! endpoints and the non-streaming objects.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde_json::{Value, json};

use super::deltas::{Delta, Deltas, Mode};
use super::logprobs::{Asked, Writer};

/// `[DONE]`, the last event of a clean stream.
pub(crate) const DONE: &str = "data: [DONE]\n\n";

/// Token counts of one request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Usage {
    pub prompt: u64,
    pub completion: u64,
    pub counts: Counts,
}

/// What a request's usage says besides the tokens the deltas count: the prompt, its tokens the
/// prefix cache served, and the reasoning tokens (which the deltas do not carry in chat mode).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Counts {
    pub prompt: u64,
    pub cached: Option<u64>,
    pub reasoning: Option<u64>,
}

impl Usage {
    fn new(counts: Counts, emitted: u64) -> Self {
        Usage {
            prompt: counts.prompt,
            completion: emitted + counts.reasoning.unwrap_or(0),
            counts,
        }
    }

    pub(crate) fn to_json(self) -> Value {
        let mut v = json!({
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        });
        // As vLLM and OpenAI nest them.
        if let Some(cached) = self.counts.cached {
            v["prompt_tokens_details"] = json!({ "cached_tokens": cached });
        }
        if let Some(reasoning) = self.counts.reasoning {
            v["completion_tokens_details"] = json!({ "reasoning_tokens": reasoning });
        }
        v
    }
}

/// The fields every chunk of one response shares.
#[derive(Debug, Clone)]
pub struct Header {
    pub id: String,
    pub object: &'static str,
    pub created: u64,
    pub model: String,
}

impl Header {
    pub fn new(mode: Mode, model: &str, streaming: bool) -> Self {
        let (prefix, object) = match (mode, streaming) {
            (Mode::Raw { .. }, _) => ("cmpl-", "text_completion"),
            (Mode::Chat { .. }, true) => ("chatcmpl-", "chat.completion.chunk"),
            (Mode::Chat { .. }, false) => ("chatcmpl-", "chat.completion"),
        };
        Header {
            id: new_id(prefix),
            object,
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            model: model.to_owned(),
        }
    }

    /// An object starting with id, object, created, model, then `rest`.
    fn object(&self, rest: Value) -> Value {
        let mut obj = json!({
            "id": self.id,
            "object": self.object,
            "created": self.created,
            "model": self.model,
        });
        if let (Some(map), Value::Object(more)) = (obj.as_object_mut(), rest) {
            map.extend(more);
        }
        obj
    }

    /// One chat chunk event carrying `delta` (the thinking model's extra events).
    pub(crate) fn chat_delta(&self, delta: Value) -> Bytes {
        event(&self.object(json!({
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]
        })))
    }

    /// The serialized object up to the start of the first choice's varying part, for the hot path.
    fn prefix(&self) -> String {
        let head = self.object(json!({}));
        let mut s = head.to_string();
        s.pop(); // the closing brace
        format!("data: {s},\"choices\":[{{\"index\":0,")
    }
}

/// A fresh id like vLLM's (`cmpl-` + 32 hex digits); unique per process, unpredictable enough.
fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let state = RandomState::new();
    let mut a = state.build_hasher();
    a.write_u64(n);
    let mut b = state.build_hasher();
    b.write_u64(!n);
    format!("{prefix}{:016x}{:016x}", a.finish(), b.finish())
}

fn event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// The SSE events of one streamed response, produced lazily.
#[derive(Debug)]
pub(crate) struct Events {
    header: Header,
    mode: Mode,
    deltas: Deltas,
    include_usage: bool,
    counts: Counts,
    phase: Phase,
    /// `data: {...,"choices":[{"index":0,` shared by text and content events.
    prefix: String,
    /// Token-level data, when the request asked for it.
    logprobs: Option<Writer>,
    /// The usage also rides in the finishing choice, as Moonshot's API sends it for K3.
    usage_in_choice: bool,
    /// Every `tool_calls` delta goes out as `"tool_calls": []` (a server bug).
    empty_call_deltas: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Role,
    Body,
    Final,
    Usage,
    Done,
    End,
}

impl Events {
    pub(crate) fn new(
        header: Header,
        mode: Mode,
        deltas: Deltas,
        include_usage: bool,
        counts: Counts,
    ) -> Self {
        let prefix = header.prefix();
        let phase = match mode {
            Mode::Raw { .. } => Phase::Body,
            Mode::Chat { .. } => Phase::Role,
        };
        Events {
            header,
            mode,
            deltas,
            include_usage,
            counts,
            phase,
            prefix,
            logprobs: None,
            usage_in_choice: false,
            empty_call_deltas: false,
        }
    }

    /// Put the usage in the finishing choice too (it still comes in its own event after).
    pub(crate) fn with_usage_in_choice(mut self, on: bool) -> Self {
        self.usage_in_choice = on;
        self
    }

    /// Send every `tool_calls` delta empty.
    pub(crate) fn with_empty_call_deltas(mut self, on: bool) -> Self {
        self.empty_call_deltas = on;
        self
    }

    /// Report token-level data in each event carrying a token, as `asked`.
    pub(crate) fn with_logprobs(mut self, asked: Option<Asked>) -> Self {
        self.logprobs = asked.map(Writer::new);
        self
    }

    fn delta_event(&mut self, delta: Delta) -> Bytes {
        if self.empty_call_deltas && !matches!(delta, Delta::Text(_)) {
            return self.chat_chunk(json!({"tool_calls": []}));
        }
        if let Some(w) = self.logprobs.as_mut() {
            // The slow path: these events carry a JSON object more.
            return match (self.mode, delta) {
                (Mode::Raw { .. }, Delta::Text(text)) => event(&self.header.object(json!({
                    "choices": [{"index": 0, "text": text, "logprobs": w.completion(&text),
                        "finish_reason": null, "stop_reason": null}],
                    "usage": null,
                }))),
                (Mode::Chat { .. }, Delta::Text(text)) => {
                    let lp = w.chat(&text);
                    event(&self.header.object(json!({
                        "choices": [{"index": 0, "delta": {"content": text}, "logprobs": lp,
                            "finish_reason": null}]
                    })))
                }
                (Mode::Chat { .. }, Delta::Args { index, text }) => {
                    let lp = w.chat(&text);
                    event(&self.header.object(json!({
                        "choices": [{"index": 0, "delta": {"tool_calls": [
                            {"index": index, "function": {"arguments": text}}]},
                            "logprobs": lp, "finish_reason": null}]
                    })))
                }
                (_, d) => self.plain_delta_event(d),
            };
        }
        self.plain_delta_event(delta)
    }

    fn plain_delta_event(&self, delta: Delta) -> Bytes {
        match (self.mode, delta) {
            (Mode::Raw { .. }, Delta::Text(text)) => self.fast(
                "\"text\":",
                &text,
                ",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}],\"usage\":null}\n\n",
            ),
            (Mode::Chat { .. }, Delta::Text(text)) => self.fast(
                "\"delta\":{\"content\":",
                &text,
                "},\"logprobs\":null,\"finish_reason\":null}]}\n\n",
            ),
            (_, Delta::CallStart { index, id, name }) => self.chat_chunk(json!({
                "tool_calls": [{
                    "index": index,
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]
            })),
            (_, Delta::Args { index, text }) => self.chat_chunk(json!({
                "tool_calls": [{"index": index, "function": {"arguments": text}}]
            })),
        }
    }

    /// One text-carrying event without building a JSON tree: these are nearly all events.
    fn fast(&self, key: &str, text: &str, suffix: &str) -> Bytes {
        let mut s = String::with_capacity(self.prefix.len() + key.len() + text.len() + 96);
        s.push_str(&self.prefix);
        s.push_str(key);
        s.push_str(&Value::from(text).to_string());
        s.push_str(suffix);
        Bytes::from(s)
    }

    fn chat_chunk(&self, delta: Value) -> Bytes {
        event(&self.header.object(json!({
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]
        })))
    }

    fn final_event(&self) -> Bytes {
        let reason = self.deltas.finish_reason();
        let choice = match self.mode {
            Mode::Raw { .. } => json!({
                "index": 0, "text": "", "logprobs": null,
                "finish_reason": reason, "stop_reason": null,
            }),
            Mode::Chat { .. } => json!({
                "index": 0, "delta": {}, "logprobs": null,
                "finish_reason": reason, "stop_reason": null,
            }),
        };
        let mut choice = choice;
        if self.usage_in_choice && self.include_usage {
            choice["usage"] = self.usage().to_json();
        }
        let mut rest = json!({ "choices": [choice] });
        if let Mode::Raw { .. } = self.mode {
            rest["usage"] = Value::Null;
        }
        event(&self.header.object(rest))
    }

    pub(crate) fn usage(&self) -> Usage {
        Usage::new(self.counts, self.deltas.emitted)
    }
}

impl Iterator for Events {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        loop {
            match self.phase {
                Phase::Role => {
                    self.phase = Phase::Body;
                    return Some(self.chat_chunk(json!({"role": "assistant", "content": ""})));
                }
                Phase::Body => match self.deltas.next() {
                    Some(d) => return Some(self.delta_event(d)),
                    None => self.phase = Phase::Final,
                },
                Phase::Final => {
                    self.phase = Phase::Usage;
                    return Some(self.final_event());
                }
                Phase::Usage => {
                    self.phase = Phase::Done;
                    if self.include_usage {
                        return Some(event(&self.header.object(json!({
                            "choices": [],
                            "usage": self.usage().to_json(),
                        }))));
                    }
                }
                Phase::Done => {
                    self.phase = Phase::End;
                    return Some(Bytes::from_static(DONE.as_bytes()));
                }
                Phase::End => return None,
            }
        }
    }
}

/// A whole non-streaming response, from the same deltas.
pub(crate) fn complete(header: &Header, mode: Mode, mut deltas: Deltas, counts: Counts) -> Value {
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for d in deltas.by_ref() {
        match d {
            Delta::Text(t) => text.push_str(&t),
            Delta::CallStart { id, name, .. } => calls.push((id, name, String::new())),
            Delta::Args { text, .. } => {
                if let Some(c) = calls.last_mut() {
                    c.2.push_str(&text);
                }
            }
        }
    }
    // Like vLLM, a call cut off by max_tokens is not reported.
    calls.truncate(deltas.calls_completed);
    let usage = Usage::new(counts, deltas.emitted).to_json();
    let reason = deltas.finish_reason();
    match mode {
        Mode::Raw { .. } => header.object(json!({
            "choices": [{
                "index": 0, "text": text, "logprobs": null,
                "finish_reason": reason, "stop_reason": null, "prompt_logprobs": null,
            }],
            "usage": usage,
        })),
        Mode::Chat { .. } => {
            let tool_calls: Vec<Value> = calls
                .into_iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function",
                        "function": {"name": name, "arguments": args}})
                })
                .collect();
            let content = if text.is_empty() && !tool_calls.is_empty() {
                Value::Null
            } else {
                Value::String(text)
            };
            header.object(json!({
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "tool_calls": tool_calls},
                    "logprobs": null, "finish_reason": reason, "stop_reason": null,
                }],
                "usage": usage,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::script::{Call, Reply, Text};
    use crate::tokens::Tokens;

    fn counts(prompt: u64) -> Counts {
        Counts {
            prompt,
            ..Counts::default()
        }
    }

    fn events(mode: Mode, usage: bool) -> Vec<Value> {
        let reply = Arc::new(Reply {
            content: Text::Plain("Hi \"there\"\n".into()),
            calls: vec![Call {
                name: "f".into(),
                arguments: "{}".into(),
            }],
        });
        let deltas = Deltas::new(Tokens::new(reply), mode, None, None);
        let header = Header::new(mode, "m\"odel", true);
        let raw: Vec<Bytes> = Events::new(header, mode, deltas, usage, counts(7)).collect();
        let text: String = raw
            .iter()
            .map(|b| std::str::from_utf8(b).expect("utf-8"))
            .collect();
        assert!(text.ends_with("\n\ndata: [DONE]\n\n"));
        text.split("\n\n")
            .filter(|e| !e.is_empty() && *e != "data: [DONE]")
            .map(|e| {
                let json = e.strip_prefix("data: ").expect("data line");
                serde_json::from_str(json).expect("valid JSON event")
            })
            .collect()
    }

    #[test]
    fn raw_events_have_vllm_shape() {
        let evs = events(
            Mode::Raw {
                strip_special: false,
            },
            true,
        );
        assert_eq!(evs[0]["object"], "text_completion");
        assert_eq!(evs[0]["model"], "m\"odel");
        assert!(
            evs[0]["id"]
                .as_str()
                .is_some_and(|s| s.starts_with("cmpl-") && s.len() == 37)
        );
        assert_eq!(evs[0]["choices"][0]["text"], "Hi");
        assert_eq!(evs[0]["usage"], Value::Null);
        assert_eq!(evs[0]["choices"][0]["stop_reason"], Value::Null);
        let n = evs.len();
        assert_eq!(evs[n - 2]["choices"][0]["finish_reason"], "stop");
        assert_eq!(evs[n - 2]["choices"][0]["text"], "");
        assert_eq!(evs[n - 1]["choices"], json!([]));
        assert_eq!(evs[n - 1]["usage"]["prompt_tokens"], 7);
        let text: String = evs[..n - 2]
            .iter()
            .map(|e| e["choices"][0]["text"].as_str().expect("text"))
            .collect();
        assert!(text.starts_with("Hi \"there\"\n<|tool_calls_section_begin|>"));
        let keys: Vec<&String> = evs[0].as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            ["id", "object", "created", "model", "choices", "usage"]
        );
    }

    #[test]
    fn chat_events_have_vllm_shape() {
        let evs = events(
            Mode::Chat {
                markers_in_content: false,
            },
            false,
        );
        assert_eq!(evs[0]["object"], "chat.completion.chunk");
        assert_eq!(
            evs[0]["choices"][0]["delta"],
            json!({"role": "assistant", "content": ""})
        );
        assert_eq!(evs[1]["choices"][0]["delta"], json!({"content": "Hi"}));
        let call = evs
            .iter()
            .find(|e| e["choices"][0]["delta"]["tool_calls"][0]["id"].is_string())
            .expect("call header");
        assert_eq!(
            call["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "id": "functions.f:0", "type": "function",
                "function": {"name": "f", "arguments": ""}})
        );
        let last = evs.last().expect("events");
        assert_eq!(last["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(last["choices"][0]["delta"], json!({}));
        assert!(last.get("usage").is_none());
    }

    #[test]
    fn the_usage_reports_the_cache_hit_and_the_reasoning_as_vllm_nests_them() {
        let reported = Counts {
            prompt: 100,
            cached: Some(80),
            reasoning: Some(12),
        };
        let u = Usage::new(reported, 5).to_json();
        assert_eq!(
            u["completion_tokens"], 17,
            "reasoning is part of the completion"
        );
        assert_eq!(u["total_tokens"], 117);
        assert_eq!(u["prompt_tokens_details"]["cached_tokens"], 80);
        assert_eq!(u["completion_tokens_details"]["reasoning_tokens"], 12);
        // Nothing to report: no details at all, not zeros.
        let bare = Usage::new(counts(100), 5).to_json();
        assert!(bare.get("prompt_tokens_details").is_none());
        assert!(bare.get("completion_tokens_details").is_none());
    }
}
