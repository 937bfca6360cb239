//! Token-level data of one answer: every token the server reported with its id, its
//! text, its log-probability and (with `logprobs = N > 0`) its top alternatives.
//!
//! The client turns each endpoint's shape into [`TokenLogprob`]s ([`StreamEvent::Tokens`]);
//! the trace keeps them in a [`TokenTrace`]: all token texts in one string, all alternative
//! texts in another, and fixed-size records of 16 and 12 bytes pointing into them, so a trace
//! of 100,000 tokens with five alternatives each costs a few MB, not one `String` per token.
//!
//! [`StreamEvent::Tokens`]: crate::StreamEvent::Tokens

use serde::{Deserialize, Serialize};

use crate::{Marker, Template};

/// One token as a stream reports it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TokenLogprob {
    /// The token id, when the server gives it (vLLM's `return_tokens_as_token_ids`).
    pub id: Option<u32>,
    /// The token's text as it appears in the answer.
    pub text: String,
    /// Natural log of its probability; `None` when the server sent null (vLLM does for a
    /// prompt's first token, some servers for special tokens).
    pub logprob: Option<f32>,
    /// The most likely tokens at this position, most likely first (the chosen one may be
    /// among them).
    pub top: Vec<TopLogprob>,
}

/// One alternative at a position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopLogprob {
    pub id: Option<u32>,
    pub text: String,
    pub logprob: f32,
}

/// Most bytes of token and alternative text kept per request, as for chunks
/// ([`crate::trace::DATA_CAP`]): past it tokens are counted, not kept.
pub const TOKEN_TEXT_CAP: usize = 2 << 20;

/// `id` stored without `Option` (4 bytes, not 8).
const NO_ID: u32 = u32::MAX;

/// The tokens of one trace, stored compactly. Serialized as it is stored (the saved-trace
/// format may include it as the trace's `tokens` field).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenTrace {
    /// Every token's text, concatenated.
    text: String,
    marks: Vec<TokenMark>,
    /// Every alternative's text, concatenated.
    alt_text: String,
    alts: Vec<AltMark>,
    /// Tokens that arrived after the texts reached [`TOKEN_TEXT_CAP`], not kept.
    #[serde(default)]
    pub dropped: u64,
}

/// One token: where its text ends in `TokenTrace::text`, where its alternatives end in
/// `TokenTrace::alts`, its id, logprob and the chunk it arrived with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct TokenMark {
    end: u32,
    alts_end: u32,
    id: u32,
    /// NaN for an unknown logprob (saved as null).
    #[serde(with = "nan_as_null")]
    logprob: f32,
    chunk: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct AltMark {
    end: u32,
    id: u32,
    logprob: f32,
}

/// One kept token, borrowed from the trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenRef<'a> {
    pub id: Option<u32>,
    pub text: &'a str,
    pub logprob: Option<f32>,
    /// Index of the chunk (in the trace's chunks) it arrived with.
    pub chunk: usize,
    /// Byte offset of its text in [`TokenTrace::text`].
    pub start: usize,
}

/// A marker's text found in the tokens, and how it was produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerTokens {
    pub marker: Marker,
    /// The tokens its text spans (first, last), inclusive.
    pub first: usize,
    pub last: usize,
    /// Byte range of the marker text in [`TokenTrace::text`].
    pub start: usize,
    pub end: usize,
    /// The id the server produced when it was one token.
    pub id: Option<u32>,
    /// Produced as several tokens, or as one token with another id than the special token's:
    /// the server did not recognise the special token.
    pub split: bool,
}

/// An unknown logprob is NaN in memory and `null` in a file (JSON has no NaN).
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_none()
        } else {
            s.serialize_f32(*v)
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        Ok(Option::<f32>::deserialize(d)?.unwrap_or(f32::NAN))
    }
}

fn id_of(raw: u32) -> Option<u32> {
    (raw != NO_ID).then_some(raw)
}

fn lp_of(raw: f32) -> Option<f32> {
    (!raw.is_nan()).then_some(raw)
}

impl TokenTrace {
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.marks.is_empty() && self.dropped == 0
    }

    /// Every token's text, concatenated (the answer as the tokens spell it).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Record `tokens`, which arrived with chunk `chunk`.
    pub fn push(&mut self, chunk: usize, tokens: &[TokenLogprob]) {
        for t in tokens {
            let alt_bytes: usize = t.top.iter().map(|a| a.text.len()).sum();
            if self.text.len() + t.text.len() + self.alt_text.len() + alt_bytes > TOKEN_TEXT_CAP
                || self.alts.len() + t.top.len() >= u32::MAX as usize
            {
                self.dropped += 1;
                continue;
            }
            for a in &t.top {
                self.alt_text.push_str(&a.text);
                self.alts.push(AltMark {
                    end: self.alt_text.len() as u32,
                    id: a.id.unwrap_or(NO_ID),
                    logprob: a.logprob,
                });
            }
            self.text.push_str(&t.text);
            self.marks.push(TokenMark {
                end: self.text.len() as u32,
                alts_end: self.alts.len() as u32,
                id: t.id.unwrap_or(NO_ID),
                logprob: t.logprob.unwrap_or(f32::NAN),
                chunk: u32::try_from(chunk).unwrap_or(u32::MAX),
            });
        }
    }

    fn start_of(&self, i: usize) -> usize {
        i.checked_sub(1)
            .and_then(|p| self.marks.get(p))
            .map_or(0, |m| m.end as usize)
    }

    /// Token `i`. Bounds from a damaged file give an empty text, never a panic.
    pub fn get(&self, i: usize) -> Option<TokenRef<'_>> {
        let m = self.marks.get(i)?;
        let start = self.start_of(i);
        Some(TokenRef {
            id: id_of(m.id),
            text: self.text.get(start..m.end as usize).unwrap_or(""),
            logprob: lp_of(m.logprob),
            chunk: m.chunk as usize,
            start,
        })
    }

    /// The alternatives of token `i`, most likely first.
    pub fn alternatives(&self, i: usize) -> Vec<TopLogprob> {
        let Some(m) = self.marks.get(i) else {
            return Vec::new();
        };
        let from = i
            .checked_sub(1)
            .and_then(|p| self.marks.get(p))
            .map_or(0, |p| p.alts_end as usize);
        let to = (m.alts_end as usize).min(self.alts.len());
        let mut text_start = from
            .checked_sub(1)
            .and_then(|p| self.alts.get(p))
            .map_or(0, |a| a.end as usize);
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        for a in self.alts.get(from..to).unwrap_or(&[]) {
            out.push(TopLogprob {
                id: id_of(a.id),
                text: self
                    .alt_text
                    .get(text_start..a.end as usize)
                    .unwrap_or("")
                    .to_owned(),
                logprob: a.logprob,
            });
            text_start = a.end as usize;
        }
        out
    }

    /// The token whose text holds byte `offset` of [`TokenTrace::text`].
    pub fn token_at(&self, offset: usize) -> Option<usize> {
        let i = self.marks.partition_point(|m| (m.end as usize) <= offset);
        (i < self.marks.len()).then_some(i)
    }

    /// The markers of `template`'s family whose text starts at or after byte `from` of the
    /// tokens' text, with the tokens that produced them. A marker whose text is not complete
    /// yet is not reported. The family decides: `<|im_end|>` in a K3 answer is ordinary text,
    /// and 163587 is the id `<|open|>` must come as there.
    pub fn markers_from(&self, from: usize, template: Template) -> Vec<MarkerTokens> {
        let b = self.text.as_bytes();
        let mut out = Vec::new();
        let mut i = from.min(b.len());
        while let Some(rel) = b.get(i..).and_then(|rest| memchr::memchr(b'<', rest)) {
            let at = i + rel;
            let Some(marker) = Marker::at_start_in(&b[at..], template) else {
                i = at + 1;
                continue;
            };
            let end = at + marker.text().len();
            let (Some(first), Some(last)) = (self.token_at(at), self.token_at(end - 1)) else {
                break;
            };
            let one = first == last
                && self.start_of(first) == at
                && self.marks[first].end as usize == end;
            let id = if one {
                id_of(self.marks[first].id)
            } else {
                None
            };
            let wrong_id = match (id, marker.token_id()) {
                (Some(got), Some(special)) => got != special,
                _ => false,
            };
            out.push(MarkerTokens {
                marker,
                first,
                last,
                start: at,
                end,
                id,
                split: !one || wrong_id,
            });
            i = end;
        }
        out
    }

    /// Where a later [`TokenTrace::markers_from`] must start so that no marker is missed or
    /// reported twice, after one that returned `found` from `from`: past the last marker
    /// found, but not past a suffix that may still become one.
    pub fn marker_resume(&self, from: usize, found: &[MarkerTokens]) -> usize {
        let tail = self.text.len().saturating_sub(Marker::MAX_LEN - 1);
        let after = found.last().map_or(from, |m| m.end);
        after.max(tail.max(from))
    }
}

/// A probability from a log-probability, clamped to 0..=1.
pub fn probability(logprob: f32) -> f32 {
    logprob.exp().clamp(0.0, 1.0)
}

/// `token_id:12345` (vLLM's `return_tokens_as_token_ids`) as its id.
pub fn parse_token_id(token: &str) -> Option<u32> {
    token.strip_prefix("token_id:")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(id: Option<u32>, text: &str, lp: f32, top: &[(&str, f32)]) -> TokenLogprob {
        TokenLogprob {
            id,
            text: text.into(),
            logprob: Some(lp),
            top: top
                .iter()
                .map(|(t, l)| TopLogprob {
                    id: None,
                    text: (*t).into(),
                    logprob: *l,
                })
                .collect(),
        }
    }

    #[test]
    fn tokens_and_alternatives_round_trip() {
        let mut t = TokenTrace::default();
        t.push(
            0,
            &[tok(Some(7), "Hel", -0.1, &[("Hel", -0.1), ("He", -2.5)])],
        );
        t.push(
            1,
            &[
                tok(None, "lo", -3.0, &[]),
                TokenLogprob {
                    logprob: None,
                    ..tok(Some(9), " 北京", 0.0, &[("x", -1.0)])
                },
            ],
        );
        assert_eq!(t.len(), 3);
        assert_eq!(t.text(), "Hello 北京");
        let a = t.get(0).expect("token 0");
        assert_eq!(
            (a.id, a.text, a.logprob, a.chunk),
            (Some(7), "Hel", Some(-0.1), 0)
        );
        let b = t.get(1).expect("token 1");
        assert_eq!((b.id, b.text, b.chunk, b.start), (None, "lo", 1, 3));
        assert_eq!(t.get(2).expect("2").logprob, None);
        assert_eq!(t.alternatives(0).len(), 2);
        assert_eq!(t.alternatives(0)[1].text, "He");
        assert!(t.alternatives(1).is_empty());
        assert_eq!(t.alternatives(2)[0].text, "x");
        assert_eq!(t.get(3), None);
        assert_eq!(t.token_at(4), Some(1));
        // Saved and loaded (NaN logprobs come back as unknown).
        let json = serde_json::to_string(&t).expect("json");
        let back: TokenTrace = serde_json::from_str(&json).expect("back");
        assert_eq!(back.get(1), t.get(1));
        assert_eq!(back.get(2).expect("2").logprob, None);
        assert_eq!(back.alternatives(0), t.alternatives(0));
    }

    #[test]
    fn a_marker_spread_over_ordinary_tokens_is_flagged() {
        let mut t = TokenTrace::default();
        t.push(0, &[tok(Some(1), "Hi", -0.1, &[])]);
        t.push(
            1,
            &[tok(
                Some(163595),
                "<|tool_calls_section_begin|>",
                -0.01,
                &[],
            )],
        );
        for (k, piece) in ["<|", "tool", "_call", "_begin", "|>"].iter().enumerate() {
            t.push(2 + k, &[tok(Some(100 + k as u32), piece, -0.2, &[])]);
        }
        // One token with an ordinary id for a marker's text is flagged too.
        t.push(7, &[tok(Some(42), "<|tool_call_end|>", -0.1, &[])]);
        let found = t.markers_from(0, Template::K2Instruct);
        assert_eq!(found.len(), 3);
        assert_eq!(
            (found[0].marker, found[0].id, found[0].split),
            (Marker::SectionBegin, Some(163595), false)
        );
        assert_eq!(
            (
                found[1].marker,
                found[1].first,
                found[1].last,
                found[1].split
            ),
            (Marker::CallBegin, 2, 6, true)
        );
        assert!(found[2].split && found[2].id == Some(42));
        assert_eq!(t.marker_resume(0, &found), t.text().len());
    }

    #[test]
    fn a_marker_is_found_once_even_when_it_completes_later() {
        let mut t = TokenTrace::default();
        t.push(0, &[tok(None, "ab<|tool", -0.1, &[])]);
        let found = t.markers_from(0, Template::K2Instruct);
        assert!(found.is_empty());
        let resume = t.marker_resume(0, &found);
        assert!(resume <= 2, "the partial marker is scanned again: {resume}");
        t.push(1, &[tok(None, "_call_end|>cd", -0.1, &[])]);
        let found = t.markers_from(resume, Template::K2Instruct);
        assert_eq!(found.len(), 1);
        assert!(found[0].split);
        let resume = t.marker_resume(resume, &found);
        assert!(t.markers_from(resume, Template::K2Instruct).is_empty());
    }

    #[test]
    fn k3_markers_are_found_for_k3_only_and_spelled_ones_are_flagged() {
        let mut t = TokenTrace::default();
        // `<|open|>` as its token, `think` as text, `<|sep|>` spelled from ordinary pieces, then
        // a K2 marker's text, which K3 reads as text.
        t.push(0, &[tok(Some(163587), "<|open|>", -0.01, &[])]);
        t.push(1, &[tok(Some(39964), "think", -0.1, &[])]);
        for (k, piece) in ["<|", "sep", "|>"].iter().enumerate() {
            t.push(2, &[tok(Some(200 + k as u32), piece, -0.2, &[])]);
        }
        t.push(3, &[tok(Some(163586), "<|im_end|>", -0.1, &[])]);
        // One token with the text of `<|close|>` but `<|open|>`'s id: wrong id, split.
        t.push(4, &[tok(Some(163587), "<|close|>", -0.1, &[])]);
        let found = t.markers_from(0, Template::K3);
        let got: Vec<_> = found
            .iter()
            .map(|m| (m.marker, m.first, m.last, m.id, m.split))
            .collect();
        assert_eq!(
            got,
            [
                (Marker::Open, 0, 0, Some(163587), false),
                (Marker::Sep, 2, 4, None, true),
                (Marker::Close, 6, 6, Some(163587), true),
            ]
        );
        // For K2 the same text holds only `<|im_end|>`, with its K2 id.
        let k2: Vec<_> = t
            .markers_from(0, Template::K25)
            .iter()
            .map(|m| (m.marker, m.split))
            .collect();
        assert_eq!(k2, [(Marker::ImEnd, false)]);
    }

    #[test]
    fn a_k3_marker_completed_later_is_found_once() {
        let mut t = TokenTrace::default();
        t.push(0, &[tok(None, "x<|clo", -0.1, &[])]);
        let found = t.markers_from(0, Template::K3);
        assert!(found.is_empty());
        let resume = t.marker_resume(0, &found);
        t.push(1, &[tok(None, "se|>", -0.1, &[])]);
        let found = t.markers_from(resume, Template::K3);
        assert_eq!(found.len(), 1);
        assert!(found[0].split && found[0].marker == Marker::Close);
        let resume = t.marker_resume(resume, &found);
        assert!(t.markers_from(resume, Template::K3).is_empty());
    }

    #[test]
    fn text_past_the_cap_is_counted() {
        let mut t = TokenTrace::default();
        let big = "x".repeat(TOKEN_TEXT_CAP - 1);
        t.push(0, &[tok(None, &big, -0.1, &[])]);
        t.push(0, &[tok(None, "yy", -0.1, &[])]);
        assert_eq!((t.len(), t.dropped), (1, 1));
    }

    #[test]
    fn token_ids_are_read_from_vllm_strings() {
        assert_eq!(parse_token_id("token_id:163595"), Some(163595));
        assert_eq!(parse_token_id("token_id:x"), None);
        assert_eq!(parse_token_id("hello"), None);
        assert!((probability(0.0) - 1.0).abs() < 1e-6);
        assert!((probability(-std::f32::consts::LN_10) - 0.1).abs() < 1e-4);
    }
}
