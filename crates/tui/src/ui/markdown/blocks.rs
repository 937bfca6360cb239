//! Splitting markdown text into independently rendered blocks.
//!
//! A block starts at a line that follows a blank line, is outside a fenced code block, starts
//! in column 0 and is not a list item (a list item after a blank line may belong to the list
//! above: a loose list, or numbering that continues). Such a line cannot be the continuation
//! of anything above it in CommonMark (list items and indented code need indentation, lazy
//! continuation stops at a blank line), so rendering the blocks one by one gives the same
//! result as the whole text, except for reference links defined in another block.
//!
//! [`render`](super::render) itself renders block by block, which makes the streaming cache
//! exact by construction: the blocks before the last split point never change when text is
//! appended (the decision for a line depends only on the lines before it and on the line
//! itself, and the cache only trusts lines that are complete).

/// Line-by-line state of the block splitter.
///
/// A fenced code block opened in column 0 (outside an HTML block) is a block of its own: such a
/// fence cannot continue anything above it (it interrupts a paragraph and ends a list item or
/// a quote), and the line after its closing fence cannot continue it. This keeps a long code
/// block apart from the text around it, so the streaming cache renders it on its own.
#[derive(Debug, Default, Clone)]
pub(crate) struct Splitter {
    /// The open fence: its character, its length, and whether it was indented (an indented
    /// opener is most likely inside a list item, which ends at a column-0 line after a blank).
    fence: Option<(u8, usize, bool)>,
    /// The open fence is a block of its own (column 0, not inside an HTML block).
    fence_alone: bool,
    /// A line since the last blank one starts with `<`: maybe an HTML block, which a fence
    /// line does not end.
    html: bool,
    /// The last line closed a fence that was a block of its own: a block starts at the next.
    split_next: bool,
    prev_blank: bool,
    started: bool,
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Leading spaces of a line, or `None` if a tab comes first (a tab indents to column 4).
fn indent(line: &str) -> Option<usize> {
    for (i, b) in line.bytes().enumerate() {
        match b {
            b' ' => {}
            b'\t' => return None,
            _ => return Some(i),
        }
    }
    Some(line.len())
}

/// `(char, length, indented)` if `line` opens a fenced code block.
fn fence_open(line: &str) -> Option<(u8, usize, bool)> {
    let ind = indent(line)?;
    if ind > 3 {
        return None;
    }
    let rest = &line.as_bytes()[ind..];
    let c = *rest.first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.iter().take_while(|&&b| b == c).count();
    if n < 3 || (c == b'`' && rest[n..].contains(&b'`')) {
        return None;
    }
    Some((c, n, ind > 0))
}

fn fence_closes(line: &str, c: u8, len: usize) -> bool {
    let Some(ind) = indent(line) else {
        return false;
    };
    if ind > 3 {
        return false;
    }
    let rest = &line.as_bytes()[ind..];
    let n = rest.iter().take_while(|&&b| b == c).count();
    n >= len && rest[n..].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Whether `line` starts with a list item marker (`-`, `+`, `*`, `1.`, `1)`).
fn is_list_item(line: &str) -> bool {
    let b = line.as_bytes();
    let after = |i: usize| b.get(i).is_none_or(|c| matches!(c, b' ' | b'\t' | b'\r'));
    match b.first() {
        Some(b'-' | b'+' | b'*') => after(1),
        Some(c) if c.is_ascii_digit() => {
            let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
            n <= 9 && matches!(b.get(n), Some(b'.' | b')')) && after(n + 1)
        }
        _ => false,
    }
}

/// Whether a block may start at `line` (given a blank line before it, outside a fence).
fn can_start_block(line: &str) -> bool {
    match line.as_bytes().first() {
        None | Some(b' ' | b'\t' | b'\r') => false,
        Some(_) => !is_list_item(line),
    }
}

impl Splitter {
    /// Feed the next line (without its `\n`); true if a new block starts at it.
    pub(crate) fn feed(&mut self, line: &str) -> bool {
        let blank = is_blank(line);
        let mut split = false;
        if self.started && self.split_next {
            split = true;
        } else if self.started && self.prev_blank && can_start_block(line) {
            match self.fence {
                None => split = true,
                // A column-0 line after a blank ends a list item, and the fence inside it.
                Some((c, len, true)) if !fence_closes(line, c, len) => {
                    self.fence = None;
                    split = true;
                }
                Some(_) => {}
            }
        }
        self.split_next = false;
        match self.fence {
            None => {
                self.fence = fence_open(line);
                self.fence_alone = matches!(self.fence, Some((_, _, false))) && !self.html;
                if self.fence_alone && self.started {
                    split = true;
                }
                if self.fence.is_none() {
                    if blank {
                        self.html = false;
                    } else if indent(line).is_some_and(|i| i <= 3 && line[i..].starts_with('<')) {
                        self.html = true;
                    }
                }
            }
            Some((c, len, _)) => {
                if fence_closes(line, c, len) {
                    self.fence = None;
                    self.split_next = self.fence_alone;
                    self.fence_alone = false;
                }
            }
        }
        self.started = true;
        self.prev_blank = blank;
        split
    }

    /// The open fence, if it is a block of its own (it started at the last block start):
    /// its character and length.
    pub(crate) fn open_fence_alone(&self) -> Option<(u8, usize)> {
        match self.fence {
            Some((c, len, _)) if self.fence_alone => Some((c, len)),
            _ => None,
        }
    }

    /// The last line ended a block: the next one, whatever it holds, starts a new block.
    pub(crate) fn block_ended(&self) -> bool {
        self.split_next
    }
}

/// The blocks of `text`, in order; together they are the whole text. The last line counts as
/// complete.
pub(crate) fn split(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut splitter = Splitter::default();
    let mut block_start = 0;
    let mut pos = 0;
    while pos < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[pos..]).map_or(text.len(), |p| pos + p);
        if splitter.feed(&text[pos..end]) {
            out.push(&text[block_start..pos]);
            block_start = pos;
        }
        pos = end + 1;
    }
    if block_start < text.len() {
        out.push(&text[block_start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str) -> Vec<&str> {
        split(text)
    }

    #[test]
    fn splits_at_blank_lines_before_column_zero() {
        assert_eq!(blocks("a\nb\n\nc\n\n\nd"), ["a\nb\n\n", "c\n\n\n", "d"]);
        assert_eq!(blocks(""), Vec::<&str>::new());
        assert_eq!(blocks("\n\nx"), ["\n\n", "x"]);
    }

    #[test]
    fn keeps_lists_indented_text_and_fences_together() {
        assert_eq!(blocks("- a\n\n- b\n"), ["- a\n\n- b\n"]);
        assert_eq!(
            blocks("1. a\n\n   more\n\n2. b"),
            ["1. a\n\n   more\n\n2. b"]
        );
        assert_eq!(blocks("    code\n\n    code"), ["    code\n\n    code"]);
        let fenced = "```\nx\n\ny\n```\n\nz";
        // A column-0 fence is a block of its own, ended by its closing line.
        assert_eq!(blocks(fenced), ["```\nx\n\ny\n```\n", "\n", "z"]);
        let tilde = "~~~~\nx\n\n~~~\ny\n~~~~\n\nz";
        assert_eq!(blocks(tilde), ["~~~~\nx\n\n~~~\ny\n~~~~\n", "\n", "z"]);
        // `---` is a rule, not a list item.
        assert_eq!(blocks("a\n\n---\n"), ["a\n\n", "---\n"]);
    }

    #[test]
    fn a_column_zero_fence_is_a_block_of_its_own() {
        assert_eq!(
            blocks("para\n```rust\ncode\n\nmore\n```\nafter\n- x"),
            ["para\n", "```rust\ncode\n\nmore\n```\n", "after\n- x"]
        );
        // Not inside an HTML block (the fence line belongs to it), nor when indented.
        assert_eq!(blocks("<div>\n```\nx\n```\ny"), ["<div>\n```\nx\n```\ny"]);
        assert_eq!(
            blocks("- a\n  ```\n  x\n  ```\nb"),
            ["- a\n  ```\n  x\n  ```\nb"]
        );
        // An HTML block ends at a blank line.
        assert_eq!(blocks("<br>\n\n```\nx"), ["<br>\n\n", "```\nx"]);
        let mut s = Splitter::default();
        assert!(!s.feed("```rust"));
        assert_eq!(s.open_fence_alone(), Some((b'`', 3)));
        assert!(!s.feed("x"));
        assert!(!s.block_ended());
        assert!(!s.feed("```"));
        assert!(s.block_ended());
        assert_eq!(s.open_fence_alone(), None);
        assert!(s.feed("next"));
    }

    #[test]
    fn an_unclosed_indented_fence_ends_with_its_list_item() {
        let text = "- a\n  ```\n  code\n\nnext\n\nlast";
        assert_eq!(blocks(text), ["- a\n  ```\n  code\n\n", "next\n\n", "last"]);
    }

    #[test]
    fn splitting_is_consistent_with_the_splitter_on_prefixes() {
        let text = "# T\n\npara\n\n- a\n\n- b\n\n```\nx\n\ny\n```\n\nend\n";
        let all: Vec<usize> = blocks(text)
            .iter()
            .map(|b| b.as_ptr() as usize - text.as_ptr() as usize)
            .collect();
        // A list item never starts a block: `para` and the list stay together; the fence is
        // a block of its own, and so is the blank line after it.
        assert_eq!(all.len(), 5);
        let mut s = Splitter::default();
        let mut starts = vec![0];
        let mut pos = 0;
        for line in text.split_inclusive('\n') {
            if s.feed(line.trim_end_matches('\n')) {
                starts.push(pos);
            }
            pos += line.len();
        }
        assert_eq!(starts, all);
    }
}
