//! Token-level data (`logprobs`): what a request asks for, how each endpoint's stream
//! reports it, and whether the server honoured it.
//!
//! - `/v1/completions` (vLLM `serving_completion.py`): `choices[0].logprobs` =
//!   `{tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}`; with
//!   `return_tokens_as_token_ids` every token (and every key of `top_logprobs`) is
//!   `"token_id:12345"`, so the text comes from the chunk and `text_offset` (characters
//!   since the completion's start). SGLang sends the same shape without the token-id form.
//! - `/v1/chat/completions` (OpenAI, vLLM `serving_chat.py`, SGLang): `choices[0].logprobs` =
//!   `{content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::BackendError;
use kimi_protocol::trace_tokens::parse_token_id;
use kimi_protocol::{TokenLogprob, TopLogprob};

/// vLLM's default `--max-logprobs`: more alternatives than this are refused there.
pub const MAX_LOGPROBS: u8 = 20;

/// What became of a request's `logprobs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogprobsOutcome {
    /// Not asked for (`logprobs = 0`).
    #[default]
    NotAsked,
    /// Asked for, and token data arrived.
    Received,
    /// Asked for; the answer streamed without any (a server that ignores the fields).
    Missing,
    /// The server answered 400 to a request with them; it was sent again without.
    Refused,
}

/// The outcome of a request that asked for `n` alternatives, as far as the stream tells.
pub(crate) fn outcome(n: u8, got_tokens: bool) -> LogprobsOutcome {
    match (n, got_tokens) {
        (0, _) => LogprobsOutcome::NotAsked,
        (_, true) => LogprobsOutcome::Received,
        (_, false) => LogprobsOutcome::Missing,
    }
}

/// How many alternatives per token a request body (raw or chat, as built or as saved) asks
/// for: 0 when it asks for no token data.
pub(crate) fn requested(body: &Value) -> u8 {
    let n = match (body.get("top_logprobs"), body.get("logprobs")) {
        (Some(Value::Number(n)), Some(Value::Bool(true))) => n.as_u64().unwrap_or(1).max(1),
        (_, Some(Value::Bool(true))) => 1,
        (_, Some(Value::Number(n))) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// Add the token-level fields to a raw (`completions`) body: the number of alternatives, and
/// vLLM's switch that reports tokens by id.
pub(crate) fn raw_fields(body: &mut Value, n: u8) {
    if n == 0 {
        return;
    }
    body["logprobs"] = json!(n.min(MAX_LOGPROBS));
    body["return_tokens_as_token_ids"] = json!(true);
}

/// Add the token-level fields to a chat body (OpenAI's names: a strict server knows them).
pub(crate) fn chat_fields(body: &mut Value, n: u8) {
    if n == 0 {
        return;
    }
    body["logprobs"] = json!(true);
    body["top_logprobs"] = json!(n.min(MAX_LOGPROBS));
}

/// Whether a failed request with logprobs on was refused for them: a 400 whose message names
/// one of the fields, or any 400 while no request with them has succeeded yet on this
/// connection (servers word unknown-field errors in many ways, some not at all).
pub(crate) fn refused(error: Option<&BackendError>, confirmed: bool) -> Option<String> {
    let Some(BackendError::Http {
        status: 400,
        message,
        ..
    }) = error
    else {
        return None;
    };
    let lower = message.to_ascii_lowercase();
    let names_it = ["logprob", "token_ids", "top_logprobs"]
        .iter()
        .any(|f| lower.contains(f));
    (names_it || !confirmed).then(|| message.clone())
}

/// `choices[0].logprobs` of a completions chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct CompletionLogprobs {
    #[serde(default)]
    tokens: Vec<String>,
    #[serde(default)]
    token_logprobs: Vec<Option<f32>>,
    #[serde(default)]
    top_logprobs: Option<Vec<Option<BestMap>>>,
    #[serde(default)]
    text_offset: Vec<usize>,
}

impl CompletionLogprobs {
    /// The tokens of a chunk whose text is `text`. Each token's text is cut from the chunk by
    /// `text_offset`; where the offsets do not add up (another server's convention), from the
    /// token strings, or the whole chunk goes to the first token. Each keeps the `keep` most
    /// likely alternatives (what the request asked for).
    pub(crate) fn tokens(self, text: &str, keep: u8) -> Vec<TokenLogprob> {
        let n = self.tokens.len();
        let texts = cut_by_offsets(text, &self.text_offset, n)
            .or_else(|| spelled(text, &self.tokens))
            .unwrap_or_else(|| {
                let mut v = vec![String::new(); n];
                if let Some(first) = v.first_mut() {
                    *first = text.to_owned();
                }
                v
            });
        let mut top = self.top_logprobs.unwrap_or_default().into_iter();
        self.tokens
            .iter()
            .zip(texts)
            .enumerate()
            .map(|(i, (token, text))| TokenLogprob {
                id: parse_token_id(token),
                text,
                logprob: self.token_logprobs.get(i).copied().flatten(),
                top: top
                    .next()
                    .flatten()
                    .map(|b| b.0.into_kept(keep))
                    .unwrap_or_default(),
            })
            .collect()
    }
}

/// The most likely alternatives of one token, at most [`MAX_LOGPROBS`], most likely first,
/// kept as they are read: alternatives are token ids (no text cap counts them) and a server
/// sending 100,000 per token where 5 were asked must not have them all held.
#[derive(Debug, Default)]
struct Best(Vec<TopLogprob>);

impl Best {
    fn offer(&mut self, alt: TopLogprob) {
        let max = usize::from(MAX_LOGPROBS);
        let at = self
            .0
            .partition_point(|a| a.logprob.total_cmp(&alt.logprob).is_ge());
        if at < max {
            self.0.insert(at, alt);
            self.0.truncate(max);
        }
    }

    /// The `keep` most likely.
    fn into_kept(mut self, keep: u8) -> Vec<TopLogprob> {
        self.0.truncate(usize::from(keep));
        self.0
    }
}

/// `{token: logprob}` (completions) read into [`Best`]; a value that is not a number is skipped.
#[derive(Debug, Default)]
struct BestMap(Best);

impl<'de> Deserialize<'de> for BestMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BestMap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of token: logprob")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<BestMap, A::Error> {
                let mut best = Best::default();
                while let Some((token, lp)) = map.next_entry::<String, Value>()? {
                    let Some(logprob) = lp.as_f64() else { continue };
                    let id = parse_token_id(&token);
                    let text = if id.is_some() { String::new() } else { token };
                    best.offer(TopLogprob {
                        id,
                        text,
                        logprob: logprob as f32,
                    });
                }
                Ok(BestMap(best))
            }
        }
        d.deserialize_map(V)
    }
}

/// `text` cut into `n` pieces by character offsets (relative to the first), the last piece
/// running to the end; `None` when the offsets do not fit the text.
fn cut_by_offsets(text: &str, offsets: &[usize], n: usize) -> Option<Vec<String>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if n == 1 {
        return Some(vec![text.to_owned()]);
    }
    if offsets.len() != n || offsets.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let base = offsets[0];
    let chars = text.chars().count();
    if offsets[n - 1] - base > chars {
        return None;
    }
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(text.len()))
        .collect();
    let at = |c: usize| bounds[c.min(chars)];
    Some(
        (0..n)
            .map(|k| {
                let s = at(offsets[k] - base);
                let e = if k + 1 < n {
                    at(offsets[k + 1] - base)
                } else {
                    text.len()
                };
                text[s..e].to_owned()
            })
            .collect(),
    )
}

/// The token strings themselves, when they spell the chunk's text exactly.
fn spelled(text: &str, tokens: &[String]) -> Option<Vec<String>> {
    (tokens.concat() == text).then(|| tokens.to_vec())
}

/// `choices[0].logprobs` of a chat chunk.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ChatLogprobs {
    #[serde(default)]
    content: Option<Vec<ChatToken>>,
}

#[derive(Debug, Deserialize)]
struct ChatToken {
    #[serde(default)]
    token: String,
    #[serde(default)]
    logprob: Option<f32>,
    #[serde(default)]
    bytes: Option<Vec<u8>>,
    #[serde(default)]
    top_logprobs: BestList,
}

#[derive(Debug, Deserialize)]
struct ChatAlternative {
    #[serde(default)]
    token: String,
    #[serde(default)]
    logprob: Option<f32>,
    #[serde(default)]
    bytes: Option<Vec<u8>>,
}

/// A chat token's id and text: `token_id:N` names the id, and the text is then in `bytes`.
fn chat_text(token: String, bytes: Option<Vec<u8>>) -> (Option<u32>, String) {
    match parse_token_id(&token) {
        Some(id) => (
            Some(id),
            bytes
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default(),
        ),
        None => (None, token),
    }
}

/// A chat token's `top_logprobs` read into [`Best`].
#[derive(Debug, Default)]
struct BestList(Best);

impl<'de> Deserialize<'de> for BestList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = BestList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of alternatives")
            }
            fn visit_unit<E>(self) -> Result<BestList, E> {
                Ok(BestList::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<BestList, A::Error> {
                let mut best = Best::default();
                while let Some(a) = seq.next_element::<ChatAlternative>()? {
                    let (id, text) = chat_text(a.token, a.bytes);
                    best.offer(TopLogprob {
                        id,
                        text,
                        logprob: a.logprob.unwrap_or(f32::NEG_INFINITY),
                    });
                }
                Ok(BestList(best))
            }
        }
        d.deserialize_any(V)
    }
}

impl ChatLogprobs {
    /// The tokens, each with the `keep` most likely alternatives (what the request asked for).
    pub(crate) fn tokens(self, keep: u8) -> Vec<TokenLogprob> {
        self.content
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                let (id, text) = chat_text(t.token, t.bytes);
                TokenLogprob {
                    id,
                    text,
                    logprob: t.logprob,
                    top: t.top_logprobs.0.into_kept(keep),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_tokens_are_cut_by_offsets_and_read_by_id() {
        let lp: CompletionLogprobs = serde_json::from_value(json!({
            "tokens": ["token_id:1", "token_id:2", "token_id:163595"],
            "token_logprobs": [-0.5, null, -0.01],
            "top_logprobs": [{"token_id:1": -0.5, "token_id:9": -1.5}, null, {"token_id:163595": -0.01}],
            "text_offset": [10, 12, 15],
        }))
        .expect("shape");
        let toks = lp.tokens("北京 x<|tool_calls_section_begin|>", 5);
        let texts: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["北京", " x<", "|tool_calls_section_begin|>"]);
        assert_eq!(toks[0].id, Some(1));
        assert_eq!(toks[1].logprob, None);
        assert_eq!(toks[0].top.len(), 2);
        assert_eq!(toks[0].top[1].id, Some(9));
        assert!(toks[1].top.is_empty());
    }

    #[test]
    fn offsets_that_do_not_fit_fall_back_to_the_token_strings() {
        let lp: CompletionLogprobs = serde_json::from_value(json!({
            "tokens": ["He", "llo"],
            "token_logprobs": [-0.1, -0.2],
            "text_offset": [0, 99],
        }))
        .expect("shape");
        let toks = lp.tokens("Hello", 5);
        assert_eq!(
            (toks[0].text.as_str(), toks[1].text.as_str()),
            ("He", "llo")
        );
        assert_eq!(toks[0].id, None);
    }

    #[test]
    fn chat_tokens_keep_their_text_and_alternatives_in_order() {
        let lp: ChatLogprobs = serde_json::from_value(json!({"content": [
            {"token": "Hi", "logprob": -0.3, "bytes": [72, 105],
             "top_logprobs": [{"token": "Hello", "logprob": -1.0, "bytes": null},
                              {"token": "Hi", "logprob": -0.3, "bytes": [72, 105]}]},
            {"token": "token_id:7", "logprob": -2.0, "bytes": [33], "top_logprobs": []},
        ]}))
        .expect("shape");
        let toks = lp.tokens(5);
        assert_eq!(toks[0].text, "Hi");
        assert_eq!(toks[0].top[0].text, "Hi", "most likely first");
        assert_eq!((toks[1].id, toks[1].text.as_str()), (Some(7), "!"));
    }

    #[test]
    fn a_flood_of_alternatives_keeps_only_what_was_asked() {
        const FLOOD: usize = 100_000;
        // Token ids (no text), the most likely ones in the middle of the flood.
        let mut alts = serde_json::Map::new();
        for i in 0..FLOOD {
            let lp = if (50_000..50_007).contains(&i) {
                -(i as f64 - 50_000.0) / 100.0
            } else {
                -10.0 - (i % 977) as f64
            };
            alts.insert(format!("token_id:{i}"), json!(lp));
        }
        let body = json!({
            "tokens": ["token_id:1"],
            "token_logprobs": [-0.5],
            "top_logprobs": [alts],
            "text_offset": [0],
        })
        .to_string();
        let lp: CompletionLogprobs = serde_json::from_str(&body).expect("shape");
        let toks = lp.tokens("x", 5);
        let ids: Vec<Option<u32>> = toks[0].top.iter().map(|a| a.id).collect();
        assert_eq!(
            ids,
            [
                Some(50_000),
                Some(50_001),
                Some(50_002),
                Some(50_003),
                Some(50_004)
            ]
        );

        let chat_alts: Vec<Value> = (0..FLOOD)
            .map(|i| json!({"token": format!("token_id:{i}"), "logprob": -(i as f64), "bytes": [65]}))
            .collect();
        let body = json!({"content": [{"token": "A", "logprob": -0.1, "top_logprobs": chat_alts}]})
            .to_string();
        let lp: ChatLogprobs = serde_json::from_str(&body).expect("shape");
        let toks = lp.tokens(3);
        let ids: Vec<Option<u32>> = toks[0].top.iter().map(|a| a.id).collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2)]);
        // Never more than the most a request can ask for, whatever `keep` says.
        let lp: ChatLogprobs = serde_json::from_str(&body).expect("shape");
        assert_eq!(lp.tokens(u8::MAX)[0].top.len(), usize::from(MAX_LOGPROBS));
    }

    #[test]
    fn a_400_is_a_refusal_when_it_names_the_field_or_nothing_worked_yet() {
        let e = |m: &str| BackendError::Http {
            status: 400,
            url: "u".into(),
            message: m.into(),
            retry_after_secs: None,
        };
        let named = e("Unrecognized request argument supplied: return_tokens_as_token_ids");
        assert!(refused(Some(&named), true).is_some());
        assert!(refused(Some(&e("max_tokens too large")), false).is_some());
        assert!(refused(Some(&e("max_tokens too large")), true).is_none());
        let other = BackendError::Setup("x".into());
        assert!(refused(Some(&other), false).is_none());
        assert!(refused(None, false).is_none());
        let mut body = json!({});
        raw_fields(&mut body, 50);
        assert_eq!(
            body,
            json!({"logprobs": 20, "return_tokens_as_token_ids": true})
        );
        let mut body = json!({});
        chat_fields(&mut body, 0);
        assert_eq!(body, json!({}));
        chat_fields(&mut body, 5);
        assert_eq!(body, json!({"logprobs": true, "top_logprobs": 5}));
        // What a body (built or replayed from a saved trace) asks for.
        assert_eq!(requested(&body), 5);
        let mut raw = json!({"prompt": "p"});
        assert_eq!(requested(&raw), 0);
        raw_fields(&mut raw, 7);
        assert_eq!(requested(&raw), 7);
        assert_eq!(requested(&json!({"logprobs": true})), 1);
        assert_eq!(requested(&json!({"logprobs": false, "top_logprobs": 3})), 0);
    }
}
