//! Recognising K3 markers at a `<` of completion text: a pure function of the bytes from there
//! on, so the parser gets the same answer whatever the chunking, and can hold back exactly the
//! bytes that may still become a marker.

use std::ops::Range;

use crate::tokens::{K3_CLOSE, K3_END_OF_MSG, K3_OPEN, K3_SEP, Marker};

/// Attribute text longer than this (without `<|`) does not make a marker: it bounds how much
/// text an unfinished `<|open|>NAME ...` can hold back. Real attributes (a tool name and an
/// index, a key and a type) are far shorter.
pub(super) const MAX_ATTRS: usize = 16 * 1024;

/// The element names of the format; every other name makes no marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Name {
    Think,
    Response,
    Tools,
    Call,
    Argument,
    Json,
    Message,
}

impl Name {
    const ALL: [Name; 7] = [
        Name::Think,
        Name::Response,
        Name::Tools,
        Name::Call,
        Name::Argument,
        Name::Json,
        Name::Message,
    ];

    pub(super) const fn as_str(self) -> &'static str {
        match self {
            Name::Think => "think",
            Name::Response => "response",
            Name::Tools => "tools",
            Name::Call => "call",
            Name::Argument => "argument",
            Name::Json => "json",
            Name::Message => "message",
        }
    }

    /// The name that is exactly `bytes`.
    pub(super) fn exactly(bytes: &[u8]) -> Option<Name> {
        Name::ALL
            .into_iter()
            .find(|n| n.as_str().as_bytes() == bytes)
    }
}

/// What starts at a `<`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Found {
    /// The `<` is ordinary text.
    Text,
    /// The data ends inside something that may still become a marker. `resume` is where the
    /// search for the end of an open marker's attributes may continue once more data arrives
    /// (everything before it is known to hold no `<|`).
    Partial { resume: usize },
    /// A lone `<|open|>`, `<|close|>` or `<|sep|>` that begins no marker (stray).
    Token(Marker),
    /// `<|end_of_msg|>`.
    End,
    /// `<|open|>NAME<|sep|>` or `<|open|>NAME ATTRS<|sep|>`: `attrs` is where ATTRS is.
    Open {
        name: Name,
        attrs: Range<usize>,
        len: usize,
    },
    /// `<|close|>NAME<|sep|>`, or `<|close|>NAME` right before another structural token
    /// (`elided`: the `<|sep|>` is missing and `len` stops before that token).
    Close {
        name: Name,
        len: usize,
        elided: bool,
    },
}

/// How `bytes` relate to `pattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prefix {
    /// `bytes` starts with the whole pattern.
    Whole,
    /// `bytes` is a proper prefix of the pattern (more data could complete it).
    Part,
    No,
}

pub(super) fn prefix(bytes: &[u8], pattern: &str) -> Prefix {
    let p = pattern.as_bytes();
    if bytes.len() >= p.len() {
        if bytes.starts_with(p) {
            Prefix::Whole
        } else {
            Prefix::No
        }
    } else if p.starts_with(bytes) {
        Prefix::Part
    } else {
        Prefix::No
    }
}

const PARTIAL: Found = Found::Partial { resume: 0 };

/// What the text starting at `rest[0] == b'<'` is. `resume` (from an earlier `Partial` on a
/// prefix of the same bytes) lets the attribute search skip what it already read.
pub(super) fn recognize(rest: &[u8], resume: usize) -> Found {
    if rest.len() < 2 {
        return PARTIAL;
    }
    if rest[1] != b'|' {
        return Found::Text;
    }
    let tokens = [
        (K3_OPEN, Marker::Open),
        (K3_CLOSE, Marker::Close),
        (K3_SEP, Marker::Sep),
        (K3_END_OF_MSG, Marker::EndOfMsg),
    ];
    for (text, marker) in tokens {
        match prefix(rest, text) {
            Prefix::No => continue,
            Prefix::Part => return PARTIAL,
            Prefix::Whole => {
                return match marker {
                    Marker::Open => open(rest, resume),
                    Marker::Close => close(rest),
                    Marker::Sep => Found::Token(Marker::Sep),
                    _ => Found::End,
                };
            }
        }
    }
    Found::Text
}

/// The element name right after a structural token of `skip` bytes: `Ok((name, end))`, or
/// `Err(found)` when there is none (yet).
fn name_after(rest: &[u8], skip: usize, token: Marker) -> Result<(Name, usize), Found> {
    let after = &rest[skip..];
    let mut partial = false;
    for name in Name::ALL {
        match prefix(after, name.as_str()) {
            Prefix::Whole => return Ok((name, skip + name.as_str().len())),
            Prefix::Part => partial = true,
            Prefix::No => {}
        }
    }
    Err(if partial {
        PARTIAL
    } else {
        Found::Token(token)
    })
}

fn open(rest: &[u8], resume: usize) -> Found {
    let (name, k) = match name_after(rest, K3_OPEN.len(), Marker::Open) {
        Ok(v) => v,
        Err(found) => return found,
    };
    let next = &rest[k..];
    match prefix(next, K3_SEP) {
        Prefix::Whole => {
            return Found::Open {
                name,
                attrs: k..k,
                len: k + K3_SEP.len(),
            };
        }
        Prefix::Part => return PARTIAL,
        Prefix::No if next[0] != b' ' => return Found::Token(Marker::Open),
        Prefix::No => {}
    }
    // Attribute text runs to the first `<|`, which must begin the `<|sep|>`.
    let start = k + 1;
    let too_long = |at: usize| at - start > MAX_ATTRS;
    let mut search = resume.max(start);
    while let Some(rel) = memchr::memchr(b'<', &rest[search..]) {
        let lt = search + rel;
        if too_long(lt) {
            return Found::Token(Marker::Open);
        }
        match rest.get(lt + 1) {
            None => return Found::Partial { resume: lt },
            Some(b'|') => {}
            Some(_) => {
                search = lt + 1;
                continue;
            }
        }
        return match prefix(&rest[lt..], K3_SEP) {
            Prefix::Whole => Found::Open {
                name,
                attrs: start..lt,
                len: lt + K3_SEP.len(),
            },
            Prefix::Part => Found::Partial { resume: lt },
            Prefix::No => Found::Token(Marker::Open),
        };
    }
    if too_long(rest.len()) {
        Found::Token(Marker::Open)
    } else {
        Found::Partial { resume: rest.len() }
    }
}

fn close(rest: &[u8]) -> Found {
    let (name, k) = match name_after(rest, K3_CLOSE.len(), Marker::Close) {
        Ok(v) => v,
        Err(found) => return found,
    };
    let next = &rest[k..];
    if next.is_empty() {
        return PARTIAL;
    }
    let mut partial = false;
    for (i, token) in [K3_SEP, K3_OPEN, K3_CLOSE, K3_END_OF_MSG]
        .into_iter()
        .enumerate()
    {
        match prefix(next, token) {
            Prefix::Whole if i == 0 => {
                return Found::Close {
                    name,
                    len: k + K3_SEP.len(),
                    elided: false,
                };
            }
            Prefix::Whole => {
                return Found::Close {
                    name,
                    len: k,
                    elided: true,
                };
            }
            Prefix::Part => partial = true,
            Prefix::No => {}
        }
    }
    if partial {
        PARTIAL
    } else {
        Found::Token(Marker::Close)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(s: &str) -> Found {
        recognize(s.as_bytes(), 0)
    }

    #[test]
    fn tokens_and_markers() {
        assert_eq!(rec("<b>"), Found::Text);
        assert_eq!(rec("<|im_end|>"), Found::Text);
        assert_eq!(rec("<|sep|>x"), Found::Token(Marker::Sep));
        assert_eq!(rec("<|end_of_msg|>"), Found::End);
        assert_eq!(
            rec("<|open|>think<|sep|>x"),
            Found::Open {
                name: Name::Think,
                attrs: 13..13,
                len: 20
            }
        );
        let s = r#"<|open|>call tool="f" index="1"<|sep|>"#;
        assert_eq!(
            rec(s),
            Found::Open {
                name: Name::Call,
                attrs: 13..31,
                len: s.len()
            }
        );
        assert_eq!(
            rec("<|close|>think<|sep|>"),
            Found::Close {
                name: Name::Think,
                len: 21,
                elided: false
            }
        );
        assert_eq!(
            rec("<|close|>think<|open|>"),
            Found::Close {
                name: Name::Think,
                len: 14,
                elided: true
            }
        );
    }

    #[test]
    fn non_markers_are_lone_tokens() {
        assert_eq!(rec("<|open|>thinking<|sep|>"), Found::Token(Marker::Open));
        assert_eq!(rec("<|open|>foo<|sep|>"), Found::Token(Marker::Open));
        assert_eq!(rec("<|open|>call a<|b"), Found::Token(Marker::Open));
        assert_eq!(rec("<|open|>call\t<|sep|>"), Found::Token(Marker::Open));
        assert_eq!(rec("<|close|>think x"), Found::Token(Marker::Close));
        assert_eq!(rec("<|close|>think<|im_end|>"), Found::Token(Marker::Close));
        let long = format!("<|open|>call {}<|sep|>", "a".repeat(MAX_ATTRS + 1));
        assert_eq!(rec(&long), Found::Token(Marker::Open));
        let ok = format!("<|open|>call {}<|sep|>", "a".repeat(MAX_ATTRS));
        assert!(matches!(rec(&ok), Found::Open { .. }));
    }

    #[test]
    fn prefixes_wait_for_more() {
        for s in [
            "<",
            "<|",
            "<|clo",
            "<|open|>",
            "<|open|>respo",
            "<|open|>response",
            "<|open|>response<|se",
            "<|close|>think",
            "<|close|>think<|e",
            "<|end_of",
        ] {
            assert_eq!(rec(s), PARTIAL, "{s}");
        }
        assert_eq!(
            rec(r#"<|open|>call tool="x"#),
            Found::Partial { resume: 20 }
        );
        assert_eq!(
            rec(r#"<|open|>call tool="x"<"#),
            Found::Partial { resume: 21 }
        );
        // A resumed search finds the same end.
        let s = r#"<|open|>call tool="x"<|sep|>"#;
        assert_eq!(recognize(s.as_bytes(), 21), rec(s));
    }
}
