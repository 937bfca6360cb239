//! Tokens turned into what one streamed event carries, for each endpoint: completion text (raw),
//! or content / tool-call header / argument fragments (chat). Applies `max_tokens` and, with
//! `chunk_bytes`, re-cuts the stream into fixed-size pieces regardless of token boundaries.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::tokens::{Kind, Token, Tokens, ceil_char_boundary};
use kimi_protocol::call_id;

/// How tokens map to events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `/v1/completions`: all tokens are text; special ones are dropped when `strip_special`.
    Raw { strip_special: bool },
    /// `/v1/chat/completions`: calls become `tool_calls` deltas, unless `markers_in_content`
    /// (a server with its tool parser off), where the marker text goes into `content`.
    Chat { markers_in_content: bool },
}

/// The payload of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delta {
    /// Completion text (raw) or `delta.content` (chat).
    Text(Cow<'static, str>),
    /// A call's header is complete: chat streams its id and name once.
    CallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of a call's arguments (chat).
    Args {
        index: usize,
        text: Cow<'static, str>,
    },
}

/// Iterator of deltas; after it ends, its counters describe the emission.
#[derive(Debug)]
pub(crate) struct Deltas {
    tokens: Tokens,
    mode: Mode,
    max_tokens: Option<u64>,
    chunk_bytes: Option<usize>,
    /// Tokens emitted so far (special ones included, stripped or not).
    pub emitted: u64,
    /// `max_tokens` stopped the emission before its end.
    pub cut: bool,
    /// Chat: calls whose header was sent, and calls closed by `<|tool_call_end|>`.
    pub(crate) calls_started: usize,
    pub(crate) calls_completed: usize,
    queue: VecDeque<Delta>,
    /// `chunk_bytes` mode: bytes not yet sent, all of one kind.
    buf: String,
    buf_kind: Option<BufKind>,
    exhausted: bool,
    /// Special tokens come out as several ordinary ones (the split-marker fault: a server whose
    /// tokenizer does not know them).
    split_markers: bool,
    /// Chat: each finished call comes a second time under a new index (a server bug).
    repeat_calls: bool,
    /// Finish reason `stop` whatever the calls (a server bug).
    stop_with_calls: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BufKind {
    Text,
    Args(usize),
}

impl Deltas {
    pub(crate) fn new(
        tokens: Tokens,
        mode: Mode,
        max_tokens: Option<u64>,
        chunk_bytes: Option<usize>,
    ) -> Self {
        Deltas {
            tokens,
            mode,
            max_tokens,
            chunk_bytes: chunk_bytes.filter(|&n| n > 0),
            emitted: 0,
            cut: false,
            calls_started: 0,
            calls_completed: 0,
            queue: VecDeque::new(),
            buf: String::new(),
            buf_kind: None,
            exhausted: false,
            split_markers: false,
            repeat_calls: false,
            stop_with_calls: false,
        }
    }

    /// Emit each special marker as several ordinary tokens (`<|`, `tool`, `_call`, ...), as a
    /// server whose tokenizer lacks the special tokens does.
    pub(crate) fn split_markers(mut self, on: bool) -> Self {
        self.split_markers = on;
        self
    }

    /// Chat: after the answer, each finished call again under index `calls + i`.
    pub(crate) fn repeat_calls(mut self, on: bool) -> Self {
        self.repeat_calls = on;
        self
    }

    /// Finish with `stop` even when calls were sent.
    pub(crate) fn stop_with_calls(mut self, on: bool) -> Self {
        self.stop_with_calls = on;
        self
    }

    /// `finish_reason` once the iterator is exhausted.
    pub(crate) fn finish_reason(&self) -> &'static str {
        if self.cut {
            "length"
        } else if self.calls_started > 0 && !self.stop_with_calls {
            "tool_calls"
        } else {
            "stop"
        }
    }

    fn next_token(&mut self) -> Option<Token> {
        let token = self.tokens.next()?;
        if self.max_tokens.is_some_and(|max| self.emitted >= max) {
            self.cut = true;
            return None;
        }
        self.emitted += 1;
        Some(token)
    }

    fn map(&mut self, token: Token) {
        let Token { text, kind } = token;
        match self.mode {
            Mode::Raw { strip_special } if strip_special && kind.is_special() => {}
            Mode::Raw { .. }
            | Mode::Chat {
                markers_in_content: true,
            } if self.split_markers
                && (kind.is_special() || super::k3::structural_at_start(&text).is_some()) =>
            {
                for piece in super::logprobs::split_marker(&text) {
                    self.push(Delta::Text(Cow::Owned(piece)));
                }
            }
            Mode::Raw { .. }
            | Mode::Chat {
                markers_in_content: true,
            } => self.push(Delta::Text(text)),
            Mode::Chat { .. } => match kind {
                Kind::Content => self.push(Delta::Text(text)),
                Kind::ArgumentBegin(index) => {
                    self.calls_started += 1;
                    let id = self.tokens.ids().get(index).cloned().unwrap_or_default();
                    // The call's own name: a given id need not contain it.
                    let name = self.tokens.reply().calls.get(index).map_or_else(
                        || call_id::function_name(&id).to_owned(),
                        |c| c.name.clone(),
                    );
                    self.push(Delta::CallStart { index, id, name });
                }
                Kind::Args(index) => self.push(Delta::Args { index, text }),
                Kind::CallEnd(_) => self.calls_completed += 1,
                Kind::SectionBegin | Kind::SectionEnd | Kind::CallBegin(_) | Kind::CallId(_) => {}
            },
        }
    }

    fn push(&mut self, delta: Delta) {
        let Some(n) = self.chunk_bytes else {
            self.queue.push_back(delta);
            return;
        };
        let (kind, text) = match delta {
            Delta::Text(t) => (BufKind::Text, t),
            Delta::Args { index, text } => (BufKind::Args(index), text),
            start @ Delta::CallStart { .. } => {
                self.flush();
                self.queue.push_back(start);
                return;
            }
        };
        if self.buf_kind != Some(kind) {
            self.flush();
            self.buf_kind = Some(kind);
        }
        self.buf.push_str(&text);
        while self.buf.len() >= n {
            let k = floor_or_ceil_boundary(&self.buf, n);
            let piece: String = self.buf.drain(..k).collect();
            self.queue_piece(kind, piece);
        }
    }

    fn flush(&mut self) {
        if let Some(kind) = self.buf_kind.take()
            && !self.buf.is_empty()
        {
            let piece = std::mem::take(&mut self.buf);
            self.queue_piece(kind, piece);
        }
    }

    fn queue_piece(&mut self, kind: BufKind, piece: String) {
        self.queue.push_back(match kind {
            BufKind::Text => Delta::Text(Cow::Owned(piece)),
            BufKind::Args(index) => Delta::Args {
                index,
                text: Cow::Owned(piece),
            },
        });
    }
}

impl Deltas {
    /// `repeat_calls`: the finished calls once more, each whole in two deltas.
    fn repeat(&mut self) {
        let structured = matches!(
            self.mode,
            Mode::Chat {
                markers_in_content: false
            }
        );
        if !self.repeat_calls || !structured || self.cut {
            return;
        }
        let done = self.calls_completed;
        for i in 0..done {
            let id = self.tokens.ids().get(i).cloned().unwrap_or_default();
            let Some(call) = self.tokens.reply().calls.get(i) else {
                continue;
            };
            let (name, args) = (call.name.clone(), call.arguments.clone());
            let index = done + i;
            self.queue.push_back(Delta::CallStart { index, id, name });
            self.queue.push_back(Delta::Args {
                index,
                text: Cow::Owned(args),
            });
        }
        self.calls_started += done;
        self.calls_completed += done;
    }
}

/// The largest char boundary of `s` at most `n`, or the next one when that would be 0.
fn floor_or_ceil_boundary(s: &str, n: usize) -> usize {
    let mut k = n.min(s.len());
    while k > 0 && !s.is_char_boundary(k) {
        k -= 1;
    }
    if k == 0 { ceil_char_boundary(s, n) } else { k }
}

impl Iterator for Deltas {
    type Item = Delta;

    fn next(&mut self) -> Option<Delta> {
        loop {
            if let Some(d) = self.queue.pop_front() {
                return Some(d);
            }
            if self.exhausted {
                return None;
            }
            match self.next_token() {
                Some(token) => self.map(token),
                None => {
                    self.exhausted = true;
                    self.flush();
                    self.repeat();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::script::{Call, Reply, Text};

    fn reply() -> Arc<Reply> {
        Arc::new(Reply {
            content: Text::Plain("Let me check. ".into()),
            calls: vec![
                Call {
                    name: "get_weather".into(),
                    arguments: "{\"city\": \"Beijing\"}".into(),
                },
                Call {
                    name: "get_weather".into(),
                    arguments: "{\"city\": \"Shanghai\"}".into(),
                },
            ],
        })
    }

    fn deltas(mode: Mode, max: Option<u64>, chunk: Option<usize>) -> (Vec<Delta>, Deltas) {
        let mut d = Deltas::new(Tokens::new(reply()), mode, max, chunk);
        let v: Vec<Delta> = d.by_ref().collect();
        (v, d)
    }

    fn text(ds: &[Delta]) -> String {
        ds.iter()
            .filter_map(|d| match d {
                Delta::Text(t) => Some(t.as_ref()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn raw_keeps_or_strips_markers() {
        let (kept, d) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            None,
            None,
        );
        assert!(text(&kept).contains("<|tool_call_begin|>functions.get_weather:1"));
        assert_eq!(d.finish_reason(), "stop");
        let (stripped, s) = deltas(
            Mode::Raw {
                strip_special: true,
            },
            None,
            None,
        );
        assert_eq!(
            text(&stripped),
            "Let me check. functions.get_weather:0{\"city\": \"Beijing\"}functions.get_weather:1{\"city\": \"Shanghai\"}"
        );
        assert_eq!(d.emitted, s.emitted, "stripped tokens still count");
    }

    #[test]
    fn chat_assembles_calls() {
        let (ds, d) = deltas(
            Mode::Chat {
                markers_in_content: false,
            },
            None,
            None,
        );
        assert_eq!(text(&ds), "Let me check. ");
        let starts: Vec<_> = ds
            .iter()
            .filter_map(|d| match d {
                Delta::CallStart { index, id, name } => Some((*index, id.as_str(), name.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            starts,
            vec![
                (0, "functions.get_weather:0", "get_weather"),
                (1, "functions.get_weather:1", "get_weather")
            ]
        );
        let args1: String = ds
            .iter()
            .filter_map(|d| match d {
                Delta::Args { index: 1, text } => Some(text.as_ref()),
                _ => None,
            })
            .collect();
        assert_eq!(args1, "{\"city\": \"Shanghai\"}");
        assert_eq!(d.finish_reason(), "tool_calls");
        assert_eq!(d.calls_completed, 2);
    }

    #[test]
    fn max_tokens_cuts() {
        let (ds, d) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            Some(5),
            None,
        );
        assert_eq!(ds.len(), 5);
        assert_eq!(d.emitted, 5);
        assert_eq!(d.finish_reason(), "length");
        let (_, all) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            None,
            None,
        );
        let (_, exact) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            Some(all.emitted),
            None,
        );
        assert_eq!(exact.finish_reason(), "stop", "nothing was cut");
    }

    #[test]
    fn chunk_bytes_cut_at_char_boundaries() {
        let (ds, _) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            None,
            Some(3),
        );
        let (whole, _) = deltas(
            Mode::Raw {
                strip_special: false,
            },
            None,
            None,
        );
        assert_eq!(text(&ds), text(&whole));
        assert!(
            ds.iter()
                .all(|d| matches!(d, Delta::Text(t) if t.len() <= 3))
        );
        let r = Arc::new(Reply {
            content: Text::Plain("你好".into()),
            calls: vec![],
        });
        let v: Vec<Delta> = Deltas::new(
            Tokens::new(r),
            Mode::Raw {
                strip_special: true,
            },
            None,
            Some(2),
        )
        .collect();
        assert_eq!(v, vec![Delta::Text("你".into()), Delta::Text("好".into())]);
    }

    #[test]
    fn chunk_bytes_in_chat_keeps_kinds_apart() {
        let (ds, _) = deltas(
            Mode::Chat {
                markers_in_content: false,
            },
            None,
            Some(4),
        );
        assert!(matches!(&ds[0], Delta::Text(t) if t == "Let "));
        assert!(
            ds.iter()
                .any(|d| matches!(d, Delta::Args { index: 0, text } if text == "{\"ci"))
        );
        let (m, _) = deltas(
            Mode::Chat {
                markers_in_content: true,
            },
            None,
            Some(4),
        );
        assert!(m.iter().all(|d| matches!(d, Delta::Text(_))));
        assert!(text(&m).contains("<|tool_calls_section_begin|>"));
    }
}
