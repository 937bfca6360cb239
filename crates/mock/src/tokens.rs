//! A reply cut into the tokens the model would emit one by one: word-ish text tokens, one token
//! per special marker, small pieces of argument JSON. Generated lazily, so a 100,000-token answer
//! costs nothing up front.

use std::borrow::Cow;
use std::sync::Arc;

use super::script::{LOREM, Reply, Text};
use kimi_protocol::call_id;
use kimi_protocol::tokens::*;

/// What a token is part of. Call indexes count the calls of the turn from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Content,
    SectionBegin,
    CallBegin(usize),
    CallId(usize),
    ArgumentBegin(usize),
    Args(usize),
    CallEnd(usize),
    SectionEnd,
}

impl Kind {
    /// Special tokens, which servers strip unless `skip_special_tokens` is false.
    pub(crate) fn is_special(self) -> bool {
        matches!(
            self,
            Kind::SectionBegin
                | Kind::CallBegin(_)
                | Kind::ArgumentBegin(_)
                | Kind::CallEnd(_)
                | Kind::SectionEnd
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: Cow<'static, str>,
    pub kind: Kind,
}

/// Iterator over the tokens of a reply, in emission order: content, then the tool-call section.
/// `<|im_end|>` is not emitted (servers leave the EOS token out of the text).
#[derive(Debug, Clone)]
pub struct Tokens {
    reply: Arc<Reply>,
    ids: Arc<[String]>,
    stage: Stage,
}

#[derive(Debug, Clone, Copy)]
enum Stage {
    Content(usize),
    Lorem(u64),
    Shaped(u64),
    SectionBegin,
    CallBegin(usize),
    Id(usize, usize),
    ArgumentBegin(usize),
    /// Call, byte position, piece counter.
    Args(usize, usize, usize),
    CallEnd(usize),
    SectionEnd,
    Done,
}

/// Sizes of successive argument pieces, like a BPE tokenizer cutting JSON.
const ARG_PIECES: [usize; 8] = [2, 1, 5, 3, 8, 4, 6, 7];

/// The longest word token, so a huge unbroken string still streams in many events.
const MAX_WORD: usize = 24;

impl Tokens {
    pub fn new(reply: Arc<Reply>) -> Self {
        Self::with_ids(reply, &[])
    }

    /// Like [`Tokens::new`], with the ids of the first calls given (verbatim, whatever they
    /// hold); the others get `functions.NAME:IDX`.
    pub(crate) fn with_ids(reply: Arc<Reply>, given: &[Option<String>]) -> Self {
        let ids: Arc<[String]> = reply
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| match given.get(i) {
                Some(Some(id)) => id.clone(),
                _ => call_id::canonical(&c.name, i),
            })
            .collect();
        let stage = match reply.content {
            Text::Plain(_) => Stage::Content(0),
            Text::Lorem { .. } => Stage::Lorem(0),
            Text::Shaped { .. } => Stage::Shaped(0),
            // Close call 0 of the prompt's section; with no calls of its own, the section ends next.
            Text::CloseCall => Stage::CallEnd(0),
        };
        Tokens { reply, ids, stage }
    }

    /// The reply's call ids, `functions.NAME:IDX`.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    pub fn reply(&self) -> &Reply {
        &self.reply
    }

    fn after_content(&self) -> Stage {
        if self.reply.calls.is_empty() {
            Stage::Done
        } else {
            Stage::SectionBegin
        }
    }

    fn after_call(&self, i: usize) -> Stage {
        if i + 1 < self.reply.calls.len() {
            Stage::CallBegin(i + 1)
        } else {
            Stage::SectionEnd
        }
    }
}

fn owned(s: &str) -> Cow<'static, str> {
    Cow::Owned(s.to_owned())
}

impl Iterator for Tokens {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        loop {
            let (next, token) = match self.stage {
                Stage::Done => return None,
                Stage::Content(pos) => {
                    let text = match &self.reply.content {
                        Text::Plain(t) => t.as_str(),
                        Text::Lorem { .. } | Text::Shaped { .. } | Text::CloseCall => "",
                    };
                    let rest = &text[pos..];
                    if rest.is_empty() {
                        (self.after_content(), None)
                    } else {
                        let n = text_token_len(rest);
                        (
                            Stage::Content(pos + n),
                            Some((owned(&rest[..n]), Kind::Content)),
                        )
                    }
                }
                Stage::Lorem(done) => {
                    let total = match self.reply.content {
                        Text::Lorem { tokens } => tokens,
                        Text::Plain(_) | Text::Shaped { .. } | Text::CloseCall => 0,
                    };
                    if done >= total {
                        (self.after_content(), None)
                    } else {
                        let word = LOREM[(done % LOREM.len() as u64) as usize];
                        (
                            Stage::Lorem(done + 1),
                            Some((Cow::Borrowed(word), Kind::Content)),
                        )
                    }
                }
                Stage::Shaped(done) => match self.reply.content {
                    Text::Shaped { tokens, shape } if done < tokens => (
                        Stage::Shaped(done + 1),
                        Some((
                            super::script::shaped_token(shape, done, tokens),
                            Kind::Content,
                        )),
                    ),
                    _ => (self.after_content(), None),
                },
                Stage::SectionBegin => (
                    Stage::CallBegin(0),
                    Some((Cow::Borrowed(TOOL_CALLS_SECTION_BEGIN), Kind::SectionBegin)),
                ),
                Stage::CallBegin(i) => (
                    Stage::Id(i, 0),
                    Some((Cow::Borrowed(TOOL_CALL_BEGIN), Kind::CallBegin(i))),
                ),
                Stage::Id(i, pos) => {
                    let rest = &self.ids[i][pos..];
                    if rest.is_empty() {
                        (Stage::ArgumentBegin(i), None)
                    } else {
                        let n = text_token_len(rest);
                        (
                            Stage::Id(i, pos + n),
                            Some((owned(&rest[..n]), Kind::CallId(i))),
                        )
                    }
                }
                Stage::ArgumentBegin(i) => (
                    Stage::Args(i, 0, 0),
                    Some((
                        Cow::Borrowed(TOOL_CALL_ARGUMENT_BEGIN),
                        Kind::ArgumentBegin(i),
                    )),
                ),
                Stage::Args(i, pos, k) => {
                    let rest = &self.reply.calls[i].arguments[pos..];
                    if rest.is_empty() {
                        (Stage::CallEnd(i), None)
                    } else {
                        let n = ceil_char_boundary(rest, ARG_PIECES[k % ARG_PIECES.len()]);
                        (
                            Stage::Args(i, pos + n, k + 1),
                            Some((owned(&rest[..n]), Kind::Args(i))),
                        )
                    }
                }
                Stage::CallEnd(i) => (
                    self.after_call(i),
                    Some((Cow::Borrowed(TOOL_CALL_END), Kind::CallEnd(i))),
                ),
                Stage::SectionEnd => (
                    Stage::Done,
                    Some((Cow::Borrowed(TOOL_CALLS_SECTION_END), Kind::SectionEnd)),
                ),
            };
            self.stage = next;
            if let Some((text, kind)) = token {
                return Some(Token { text, kind });
            }
        }
    }
}

/// Length of the next word-ish token of non-empty `s`: a run of newlines; or optional spaces
/// followed by a word (letters, digits, `_`), a single CJK character or a single other character.
pub(crate) fn text_token_len(s: &str) -> usize {
    // Kimi K3's structural tokens are one token each, wherever they stand.
    if let Some(t) = super::k3::structural_at_start(s) {
        return t.len();
    }
    // So are K2.5's and K2.6's think tags (special tokens there; to K2-Thinking's tokenizer
    // they are ordinary text, and the token's id says so).
    if let Some(tag) = ["<think>", "</think>"]
        .into_iter()
        .find(|t| s.starts_with(t))
    {
        return tag.len();
    }
    let b = s.as_bytes();
    if b.first() == Some(&b'\n') {
        return b.iter().take_while(|&&c| c == b'\n').count();
    }
    let spaces = b.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    let rest = &s[spaces..];
    // Spaces before a structural token are a token of their own: the structural token is
    // never spelled from ` <` and ordinary pieces.
    if spaces > 0 && super::k3::structural_at_start(rest).is_some() {
        return spaces;
    }
    let Some(first) = rest.chars().next() else {
        return spaces;
    };
    if first == '\n' {
        return spaces;
    }
    if !is_word_char(first) {
        return spaces + first.len_utf8();
    }
    let mut len = 0;
    for c in rest.chars() {
        if !is_word_char(c) || len + c.len_utf8() > MAX_WORD {
            break;
        }
        len += c.len_utf8();
    }
    spaces + len.max(first.len_utf8())
}

fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

/// Wide scripts get one token per character, as real tokenizers mostly do.
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'
        | '\u{2E80}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{FF00}'..='\u{FFEF}'
        | '\u{20000}'..)
}

/// `n` (at least 1) moved forward to a char boundary of `s`, at most `s.len()`.
pub(crate) fn ceil_char_boundary(s: &str, n: usize) -> usize {
    let mut n = n.max(1);
    if n >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(n) {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Call;

    fn split(s: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let n = text_token_len(rest);
            out.push(&rest[..n]);
            rest = &rest[n..];
        }
        out
    }

    #[test]
    fn a_k3_structural_token_is_one_token_even_after_a_space() {
        assert_eq!(
            split("Beijing. <|close|>response<|sep|>"),
            vec!["Beijing", ".", " ", "<|close|>", "response", "<|sep|>"]
        );
    }

    #[test]
    fn words_keep_their_leading_space() {
        assert_eq!(
            split("Hello, world!\n\n- a `b`  你好。"),
            vec![
                "Hello", ",", " world", "!", "\n\n", "-", " a", " `", "b", "`", "  你", "好", "。"
            ]
        );
        assert_eq!(split("x  \ny"), vec!["x", "  ", "\n", "y"]);
        let long = "a".repeat(60);
        assert_eq!(split(&long).len(), 3);
    }

    #[test]
    fn reply_tokens_in_order() {
        let reply = Reply {
            content: Text::Plain("Checking é. ".into()),
            calls: vec![
                Call {
                    name: "get_weather".into(),
                    arguments: "{\"city\": \"Zürich\"}".into(),
                },
                Call {
                    name: "f".into(),
                    arguments: String::new(),
                },
            ],
        };
        let toks: Vec<Token> = Tokens::new(Arc::new(reply)).collect();
        let text: String = toks.iter().map(|t| t.text.as_ref()).collect();
        assert_eq!(
            text,
            "Checking é. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Zürich\"}<|tool_call_end|><|tool_call_begin|>functions.f:1<|tool_call_argument_begin|><|tool_call_end|><|tool_calls_section_end|>"
        );
        assert!(toks.iter().all(|t| !t.text.is_empty()));
        let specials = toks.iter().filter(|t| t.kind.is_special()).count();
        assert_eq!(specials, 2 + 3 * 2);
        assert!(
            toks.iter()
                .filter(|t| matches!(t.kind, Kind::Args(_)))
                .all(|t| t.text.len() <= 8)
        );
    }

    #[test]
    fn close_call_closes_the_call_and_the_section() {
        let toks: Vec<Token> = Tokens::new(Arc::new(Reply::close_open_call())).collect();
        let text: String = toks.iter().map(|t| t.text.as_ref()).collect();
        assert_eq!(text, "<|tool_call_end|><|tool_calls_section_end|>");
        assert!(toks.iter().all(|t| t.kind.is_special()));
    }

    #[test]
    fn lorem_is_exactly_n_tokens() {
        let reply = Reply {
            content: Text::Lorem { tokens: 1000 },
            calls: vec![],
        };
        let toks = Tokens::new(Arc::new(reply));
        assert_eq!(toks.count(), 1000);
    }
}
