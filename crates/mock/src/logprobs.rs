//! Token-level data, in vLLM's shapes: what a request asks for, a token id and a
//! deterministic log-probability for every token, and the `logprobs` object of each endpoint's
//! streamed chunk.
//!
//! - completions (`serving_completion.py`): `{"text_offset": [..], "token_logprobs": [..],
//!   "tokens": [..], "top_logprobs": [{token: logprob}]}`, tokens as `"token_id:N"` with
//!   `return_tokens_as_token_ids`; offsets count characters from the completion's start; the
//!   dict holds the top N and the sampled token.
//! - chat (`serving_chat.py`): `{"content": [{"token", "logprob", "bytes", "top_logprobs":
//!   [{"token", "logprob", "bytes"}]}]}` with the top N.
//!
//! Special tokens get the real Kimi K2 ids; other text a stable id below them (a hash). About
//! one token in nine is unlikely (p below 25%), so the inspector's shading has something to
//! show. The `split marker` fault emits a marker's text as several ordinary tokens, as a server
//! that does not know the special tokens does.

use serde_json::{Map, Value, json};

use kimi_protocol::Marker;
use kimi_protocol::family::Template;
use kimi_protocol::message::Message;

/// What a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asked {
    /// Alternatives per token.
    pub top: u8,
    /// Completions: tokens reported as `token_id:N`.
    pub as_ids: bool,
    /// The served model's family: which markers are special tokens with an id (`</think>` is
    /// one for K2.5 and K2.6, not for K2-Thinking).
    pub template: Template,
}

/// The request's token-level fields: completions `logprobs: N` (+ vLLM's
/// `return_tokens_as_token_ids`), chat `logprobs: true` + `top_logprobs: N`.
pub(crate) fn asked(body: &Value, chat: bool, template: Template) -> Option<Asked> {
    let as_ids = body
        .get("return_tokens_as_token_ids")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let n = |v: Option<&Value>| v.and_then(Value::as_u64).map(|n| n.min(20) as u8);
    if chat {
        (body.get("logprobs").and_then(Value::as_bool) == Some(true)).then(|| Asked {
            top: n(body.get("top_logprobs")).unwrap_or(0),
            as_ids,
            template,
        })
    } else {
        n(body.get("logprobs")).map(|top| Asked {
            top,
            as_ids,
            template,
        })
    }
}

/// Whether a request has any token-level field (what a server that refuses them looks at).
pub(crate) fn mentioned(body: &Value) -> bool {
    ["logprobs", "top_logprobs", "return_tokens_as_token_ids"]
        .iter()
        .any(|k| {
            body.get(*k)
                .is_some_and(|v| !v.is_null() && *v != json!(false))
        })
}

/// The phrase in the last user message that turns on the split-marker fault for one answer
/// (so `--demo` can show it).
pub const SPLIT_PHRASE: &str = "split markers";

pub(crate) fn split_requested(messages: &[Message]) -> bool {
    messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .is_some_and(|m| m.text().to_lowercase().contains(SPLIT_PHRASE))
}

/// A marker's text cut where a tokenizer without the special token would cut it:
/// `<|`, `tool`, `_call`, `_begin`, `|>`.
pub(crate) fn split_marker(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let inner = text.strip_prefix("<|").and_then(|t| t.strip_suffix("|>"));
    let Some(inner) = inner else {
        return vec![text.to_owned()];
    };
    out.push("<|".to_owned());
    let mut cur = String::new();
    for c in inner.chars() {
        if c == '_' && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.push("|>".to_owned());
    out
}

/// FNV-1a: stable across runs and platforms (std's hasher is seeded).
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The id of a token: the special token's own for a whole marker with one in `template`'s
/// family, else a stable id in the ordinary vocabulary (below 163584, where K2's special
/// tokens start).
pub fn token_id(text: &str, template: Template) -> u32 {
    if let Some(id) = super::k3::structural_id(text) {
        return id;
    }
    if let Some(m) = Marker::at_start(text.as_bytes())
        && m.text().len() == text.len()
        && let Some(id) = m.token_id_in(template)
    {
        return id;
    }
    1000 + (fnv(text.as_bytes()) % 160_000) as u32
}

/// The logprob of the token `text` at position `index`: special tokens are near certain, most
/// text likely, and one in nine tokens unlikely.
pub fn logprob(text: &str, index: u64) -> f32 {
    if super::k3::structural_id(text).is_some() {
        return -0.0003;
    }
    if Marker::at_start(text.as_bytes()).is_some_and(|m| m.text().len() == text.len()) {
        return -0.0003;
    }
    let h = fnv(text.as_bytes()) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let h = fnv(&h.to_le_bytes());
    if h.is_multiple_of(9) {
        // p from about 1.5% to 22%.
        -(1.5 + (h >> 8) as f32 % 270.0 / 100.0)
    } else {
        -((h >> 8) as f32 % 300.0 / 1000.0)
    }
}

const ALTERNATIVES: [&str; 8] = [" the", " a", ",", " and", ".", " to", " of", "\n"];

/// The top `n` tokens at a position where `text` was sampled with `lp`, most likely first,
/// their probabilities adding up to at most 1; the sampled one is always among them (vLLM's
/// completions dict holds it even when it is not in the top `n`).
fn top(text: &str, lp: f32, n: u8, index: u64) -> Vec<(String, f32)> {
    if n == 0 {
        return Vec::new();
    }
    let p = lp.exp();
    let mut fillers = ALTERNATIVES
        .iter()
        .cycle()
        .skip((index % ALTERNATIVES.len() as u64) as usize)
        .filter(|a| **a != text);
    let mut out = vec![(text.to_owned(), p)];
    let mut rest = 1.0 - p;
    if p < 0.5 {
        // What the model would rather have said.
        let lead = (1.0 - p - 0.05).max(0.3).min(rest * 0.9);
        out.push((fillers.next().copied().unwrap_or(" the").to_owned(), lead));
        rest -= lead;
    }
    while out.len() < n as usize {
        let Some(f) = fillers.next() else { break };
        rest *= 0.5;
        out.push(((*f).to_owned(), rest));
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out.truncate(n as usize);
    if !out.iter().any(|(t, _)| t == text) {
        out.push((text.to_owned(), p));
    }
    out.into_iter()
        .map(|(t, p)| (t, p.max(1e-9).ln()))
        .collect()
}

/// Writes the `logprobs` objects of one response, counting tokens and characters.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    asked: Asked,
    tokens: u64,
    chars: u64,
}

impl Writer {
    pub(crate) fn new(asked: Asked) -> Self {
        Writer {
            asked,
            tokens: 0,
            chars: 0,
        }
    }

    fn name(&self, text: &str) -> String {
        if self.asked.as_ids {
            format!("token_id:{}", token_id(text, self.asked.template))
        } else {
            text.to_owned()
        }
    }

    /// Completions: the `logprobs` of one event carrying the token `text`.
    pub(crate) fn completion(&mut self, text: &str) -> Value {
        let lp = logprob(text, self.tokens);
        let mut dict = Map::new();
        for (t, l) in top(text, lp, self.asked.top, self.tokens) {
            dict.insert(self.name(&t), json!(l));
        }
        let out = json!({
            "text_offset": [self.chars],
            "token_logprobs": [lp],
            "tokens": [self.name(text)],
            "top_logprobs": [dict],
        });
        self.tokens += 1;
        self.chars += text.chars().count() as u64;
        out
    }

    /// Chat: the `logprobs` of one event carrying the token `text`.
    pub(crate) fn chat(&mut self, text: &str) -> Value {
        let lp = logprob(text, self.tokens);
        let entry = |t: &str, l: f32| json!({"token": t, "logprob": l, "bytes": t.as_bytes()});
        let alternatives: Vec<Value> = top(text, lp, self.asked.top, self.tokens)
            .iter()
            .map(|(t, l)| entry(t, *l))
            .collect();
        let mut one = entry(text, lp);
        one["top_logprobs"] = Value::Array(alternatives);
        self.tokens += 1;
        json!({ "content": [one] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_get_their_ids_and_text_a_stable_ordinary_one() {
        let k2 = Template::K2Instruct;
        assert_eq!(token_id("<|tool_call_begin|>", k2), 163597);
        // `</think>` is a special token of K2.5 and K2.6, ordinary text to K2-Thinking's.
        assert_eq!(token_id("</think>", Template::K26), 163607);
        assert!(token_id("</think>", Template::K2Thinking) < 163584);
        let id = token_id(" hello", k2);
        assert_eq!(id, token_id(" hello", k2));
        assert!((1000..163584).contains(&id));
        assert_eq!(
            split_marker("<|tool_call_begin|>"),
            ["<|", "tool", "_call", "_begin", "|>"]
        );
        assert!(
            split_marker("<|tool_call_begin|>")
                .iter()
                .all(|p| token_id(p, k2) < 163584)
        );
    }

    #[test]
    fn logprobs_are_deterministic_with_some_unlikely_tokens() {
        let lps: Vec<f32> = (0..200).map(|i| logprob(" word", i)).collect();
        assert_eq!(
            lps,
            (0..200).map(|i| logprob(" word", i)).collect::<Vec<_>>()
        );
        let low = lps.iter().filter(|l| l.exp() < 0.25).count();
        assert!((5..60).contains(&low), "{low} unlikely of 200");
        assert!(lps.iter().all(|l| *l <= 0.0));
    }

    #[test]
    fn alternatives_are_sorted_and_hold_the_sampled_token() {
        for i in 0..50 {
            let lp = logprob(" x", i);
            let t = top(" x", lp, 5, i);
            assert_eq!(t.len(), 5);
            assert!(t.windows(2).all(|w| w[0].1 >= w[1].1), "{t:?}");
            assert!(t.iter().any(|(s, _)| s == " x"));
            let mass: f32 = t.iter().map(|(_, l)| l.exp()).sum();
            assert!(mass <= 1.0001, "{mass} {t:?}");
        }
    }

    #[test]
    fn requests_are_read_for_both_endpoints() {
        let raw = json!({"logprobs": 5, "return_tokens_as_token_ids": true});
        assert_eq!(
            asked(&raw, false, Template::K2Instruct),
            Some(Asked {
                top: 5,
                as_ids: true,
                template: Template::K2Instruct
            })
        );
        let chat = json!({"logprobs": true, "top_logprobs": 3});
        assert_eq!(
            asked(&chat, true, Template::K2Instruct),
            Some(Asked {
                top: 3,
                as_ids: false,
                template: Template::K2Instruct
            })
        );
        assert_eq!(
            asked(&json!({"logprobs": false}), true, Template::K2Instruct),
            None
        );
        assert_eq!(asked(&json!({}), false, Template::K2Instruct), None);
        assert!(mentioned(&raw) && !mentioned(&json!({"logprobs": null})));
    }
}
