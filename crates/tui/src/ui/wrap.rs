//! Plain text wrapped by display width (CJK and emoji take two columns), for the parts of the
//! screen that are not markdown: user messages, notices, tool arguments and results.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// `text` in lines of at most `width` columns, each prefixed by `prefix` (counted in the
/// width). Breaks at spaces when it can, inside words when it must; tabs become spaces.
pub(crate) fn wrap(
    text: &str,
    width: u16,
    prefix: Span<'static>,
    style: Style,
) -> Vec<Line<'static>> {
    wrap_hanging(text, width, prefix.clone(), prefix, style)
}

/// [`wrap`] with `first` before the first line and `rest` before the others (a marker such as
/// `✗ ` once, then an indent). Both prefixes should have the same width.
pub(crate) fn wrap_hanging(
    text: &str,
    width: u16,
    first: Span<'static>,
    rest: Span<'static>,
    style: Style,
) -> Vec<Line<'static>> {
    let avail = (width as usize).saturating_sub(first.width()).max(1);
    let mut out = Vec::new();
    for raw in text.split('\n') {
        let line = raw.replace('\t', "    ");
        for piece in wrap_line(&line, avail) {
            let prefix = if out.is_empty() { &first } else { &rest };
            out.push(Line::from(vec![prefix.clone(), Span::styled(piece, style)]));
        }
    }
    out
}

/// One paragraph broken into pieces of at most `width` columns.
pub(crate) fn wrap_line(line: &str, width: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut cur = String::new();
    let mut cur_w = 0usize;
    // Byte index in `cur` just after the last space, and the width up to there.
    let mut last_space: Option<(usize, usize)> = None;
    // Cluster by cluster (the UI's one width measure): an emoji ZWJ sequence is one wide
    // cluster, never split.
    for (c, w) in super::width::clusters(line) {
        if cur_w + w > width && !cur.is_empty() {
            // A space that does not fit is the break itself.
            if c == " " {
                pieces.push(std::mem::take(&mut cur));
                cur_w = 0;
                last_space = None;
                continue;
            }
            match last_space {
                Some((at, at_w)) if at < cur.len() => {
                    let rest = cur.split_off(at);
                    pieces.push(cur.trim_end().to_owned());
                    cur = rest;
                    cur_w -= at_w;
                }
                _ => {
                    pieces.push(std::mem::take(&mut cur));
                    cur_w = 0;
                }
            }
            last_space = None;
        }
        cur.push_str(c);
        cur_w += w;
        if c == " " {
            last_space = Some((cur.len(), cur_w));
        }
    }
    pieces.push(cur);
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn wraps_words_and_wide_chars_within_width() {
        assert_eq!(wrap_line("hello big world", 9), vec!["hello big", "world"]);
        assert_eq!(wrap_line("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        let cjk = wrap_line("北京今天晴，气温二十五度。", 7);
        assert!(cjk.iter().all(|p| p.width() <= 7), "{cjk:?}");
        assert_eq!(cjk.concat(), "北京今天晴，气温二十五度。");
        assert_eq!(wrap_line("", 5), vec![""]);
        assert_eq!(wrap_line("x", 0), vec!["x"]);
    }

    #[test]
    fn prefix_counts_in_width() {
        let lines = wrap("a b c d e f", 5, Span::raw("│ "), Style::default());
        assert!(lines.iter().all(|l| l.width() <= 5), "{lines:?}");
        assert_eq!(lines.len(), 3);
    }
}
