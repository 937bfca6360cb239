//! When the first rows of a streaming paragraph can be committed.
//!
//! A paragraph on one line grows only at its end, and prose is wrapped greedily, so a row is
//! final once the word after it is complete, unless what follows can still restyle the text
//! before it: an emphasis, strikethrough or code span closed later, a `[` that becomes a
//! link, a `<` that becomes a tag. [`commit_point`] finds the start `p` of one of the last
//! rows such that
//! - the text before `p` leaves nothing open that later text could close ([`inert`]),
//! - the word at `p` is complete and plain (its width cannot change, so the break before it
//!   cannot move), and it starts with a letter (alone, the rest still reads as a paragraph),
//! - laying out the text before `p` and after `p` separately gives exactly the rows of the
//!   whole (checked, not assumed).
//!
//! Then the rows before `p` never change again, and the rest is laid out as a paragraph of
//! its own. Anything else (a second line, `\r`) takes the whole-tail path.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use ratatui::text::Line;

use super::Theme;
use super::render::{options, render_block};

/// What the tail of a message looks like, when it is a paragraph on one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Where its line ends (the `\n`), if it has ended.
    pub(crate) line_end: Option<usize>,
    /// A blank line follows: the paragraph is over, whatever comes next.
    pub(crate) ended: bool,
}

/// `tail` (a block start) as a one-line paragraph, or `None` when it may be anything else.
pub(crate) fn shape(tail: &str) -> Option<Shape> {
    let b = tail.as_bytes();
    let lead = b.iter().take_while(|&&c| c == b'*' || c == b'_').count();
    // A letter, or up to two emphasis characters glued to a letter or digit: never a list
    // item, heading, quote, fence, rule, table, HTML or link definition.
    let first = tail[lead..].chars().next()?;
    if lead > 2 || !(first.is_alphabetic() || (lead > 0 && first.is_alphanumeric())) {
        return None;
    }
    let Some(le) = memchr::memchr(b'\n', b) else {
        return Some(Shape {
            line_end: None,
            ended: false,
        });
    };
    match b.get(le + 1) {
        None => Some(Shape {
            line_end: Some(le),
            ended: false,
        }),
        Some(b'\n') => Some(Shape {
            line_end: Some(le),
            ended: true,
        }),
        // A second line may make it a heading (setext) or a table: not this path.
        Some(_) => None,
    }
}

/// Where to commit in `text[from..end]` (a one-line paragraph, or the rest of one after a
/// commit) whose rows are `rows`: the text offset of a row start and the rows before it.
/// Costs a few layouts of the text when it finds a candidate; the caller backs off on `None`.
pub(crate) fn commit_point(
    text: &str,
    from: usize,
    end: usize,
    rows: &[Line<'static>],
    width: usize,
    theme: &Theme,
) -> Option<(usize, usize)> {
    if rows.len() < 3 {
        return None;
    }
    // The last rows first; a row that starts with markup (a styled word) has no plain word
    // to find, so a few more are tried (one try, after a large append, must not fail on it).
    for k in (rows.len().saturating_sub(16).max(1)..rows.len()).rev() {
        let Some(p) = row_start(text, from, end, rows, k) else {
            continue;
        };
        if !inert(&text[from..p]) {
            continue;
        }
        let mut before = Vec::with_capacity(k);
        render_block(&text[from..p], width, theme, &mut before);
        if before[..] != rows[..k] {
            continue;
        }
        let mut after = Vec::with_capacity(rows.len() - k);
        render_block(&text[p..end], width, theme, &mut after);
        if after[..] == rows[k..] {
            return Some((p, k));
        }
    }
    None
}

/// The text offset where row `k` starts, found from its first word near where the rows
/// after it say it should be; only a complete plain word that starts with a letter counts.
fn row_start(
    text: &str,
    from: usize,
    end: usize,
    rows: &[Line<'static>],
    k: usize,
) -> Option<usize> {
    let row = crate::ui::line_text(&rows[k]);
    let word = row.split(' ').next()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || ",.;:'\"?%+=-/()".contains(c);
    if !word.starts_with(|c: char| c.is_ascii_alphabetic()) || !word.chars().all(plain) {
        return None;
    }
    // Visible bytes from row k on, plus one dropped space per break.
    let shown: usize = rows[k..]
        .iter()
        .flat_map(|l| l.spans.iter())
        .map(|s| s.content.len())
        .sum::<usize>()
        + (rows.len() - k - 1);
    let est = end.checked_sub(shown)?;
    let b = text.as_bytes();
    let fits = |p: usize| {
        p >= from + 2
            && p + word.len() < end
            && b[p - 1] == b' '
            && b[p - 2] != b' '
            && b[p + word.len()] == b' '
            && text.get(p..p + word.len()) == Some(word)
    };
    // Markup hidden in the rows after k moves the start right of the estimate.
    (0..=256)
        .flat_map(|d| [est.checked_sub(d), est.checked_add(d)])
        .flatten()
        .find(|&p| fits(p))
}

/// Nothing in `s` (which ends with a space) is left open for later text to close: every
/// emphasis, code span and link in it is complete, and no literal character that could
/// still open one remains.
pub(crate) fn inert(s: &str) -> bool {
    let b = s.as_bytes();
    for (ev, range) in Parser::new_ext(s, options()).into_offset_iter() {
        match ev {
            Event::Start(
                Tag::Paragraph
                | Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Link { .. },
            )
            | Event::End(
                TagEnd::Paragraph
                | TagEnd::Emphasis
                | TagEnd::Strong
                | TagEnd::Strikethrough
                | TagEnd::Link,
            )
            | Event::Code(_) => {}
            Event::Text(_) => {
                if !range.into_iter().all(|i| inert_byte(b, i)) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// A literal byte of text that no later text can turn into markup.
fn inert_byte(b: &[u8], i: usize) -> bool {
    let space = |j: Option<usize>| {
        j.and_then(|j| b.get(j))
            .is_none_or(|c| c.is_ascii_whitespace())
    };
    let alnum = |j: Option<usize>| {
        j.and_then(|j| b.get(j))
            .is_some_and(|c| c.is_ascii_alphanumeric())
    };
    let (prev, next) = (i.checked_sub(1), Some(i + 1));
    match b[i] {
        // Neither left- nor right-flanking: can never open or close.
        b'*' | b'~' => space(prev) && space(next),
        // Inside a word `_` can neither open nor close.
        b'_' => (space(prev) && space(next)) || (alnum(prev) && alnum(next)),
        b'<' => {
            space(next)
                || b.get(i + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == b'=')
        }
        b'`' | b'[' | b'\\' => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(shape("Hello world").is_some());
        assert!(shape("**Bold** start").is_some());
        assert_eq!(shape("- item"), None);
        assert_eq!(shape("# head"), None);
        assert_eq!(shape("1. one"), None);
        assert_eq!(shape("***"), None);
        assert_eq!(shape("Title\n==="), None);
        assert_eq!(
            shape("Para\n\nNext"),
            Some(Shape {
                line_end: Some(4),
                ended: true
            })
        );
        assert_eq!(
            shape("Para\n"),
            Some(Shape {
                line_end: Some(4),
                ended: false
            })
        );
    }

    #[test]
    fn inertness() {
        assert!(inert("plain words and **bold** and `code` and [a](b) "));
        assert!(inert("3 * 4 is snake_case R&D a < b "));
        assert!(!inert("an *open emphasis "));
        assert!(!inert("an `open code span "));
        assert!(!inert("a [maybe link "));
        assert!(!inert("a <span class=\"x "));
        assert!(!inert("***a** b "));
    }
}
