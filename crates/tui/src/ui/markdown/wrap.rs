//! Width-aware layout of one logical line of styled spans into screen rows.
//!
//! Widths are display columns from `unicode-width`, measured per *cluster*: a base character
//! together with the zero-width characters after it (combining marks, variation selectors),
//! emoji skin-tone modifiers, a character joined by U+200D ZWJ and the second regional
//! indicator of a flag. A cluster is never split across rows, so a wide character or an
//! accented letter stays whole. The width of a cluster is `UnicodeWidthStr::width` of the
//! cluster, which is what ratatui sums for a line, and the width of a string is never more
//! than the sum of the widths of its clusters, so a row never measures wider than planned.
//!
//! Every row (prefix included) fits in the width; a cluster wider than the whole available
//! width (a wide character at width 1) is replaced by `…`.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How a logical line is laid out at a width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Word-wrapped at spaces; words longer than the width are broken; spaces at a break are
    /// dropped.
    Prose,
    /// Hard-wrapped at the width with spacing kept as it is (code is never re-flowed).
    Code,
    /// One row, cut at the width with `…` when too wide (table rows, the code label).
    Clip,
    /// A horizontal rule: `─` over the whole available width, in the style of the first span.
    Rule,
}

const ZWJ: char = '\u{200D}';

fn is_regional_indicator(c: char) -> bool {
    ('\u{1F1E6}'..='\u{1F1FF}').contains(&c)
}

fn is_skin_tone(c: char) -> bool {
    ('\u{1F3FB}'..='\u{1F3FF}').contains(&c)
}

/// The cluster that starts at byte `i` of `s`: its end (byte index) and display width.
pub(crate) fn cluster(s: &str, i: usize) -> (usize, usize) {
    let bytes = s.as_bytes();
    let b = bytes[i];
    if b < 0x80 && bytes.get(i + 1).is_none_or(|&n| n < 0x80) {
        // ASCII not followed by a combining mark: the common case.
        let w = if (0x20..0x7f).contains(&b) {
            1
        } else {
            s[i..i + 1].width()
        };
        return (i + 1, w);
    }
    let mut chars = s[i..].chars();
    let Some(first) = chars.next() else {
        // Only at the end of `s` (`bytes[i]` above rules that out): nothing left to measure.
        return (s.len(), 0);
    };
    let mut end = i + first.len_utf8();
    let mut prev = first;
    let mut flag_open = is_regional_indicator(first);
    for c in chars {
        let absorb = if prev == ZWJ || c == ZWJ {
            true
        } else if flag_open && is_regional_indicator(c) {
            flag_open = false;
            true
        } else if is_skin_tone(c) {
            !prev.is_ascii()
        } else {
            c.width() == Some(0)
        };
        if !absorb {
            break;
        }
        end += c.len_utf8();
        prev = c;
    }
    let w = if end == i + first.len_utf8() {
        match first.width() {
            Some(w) => w,
            None => s[i..end].width(),
        }
    } else {
        s[i..end].width()
    };
    (end, w)
}

/// Display width of `s` as the sum of its cluster widths (an upper bound of `s.width()`).
pub(crate) fn str_width(s: &str) -> usize {
    if s.is_ascii() && s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    let mut i = 0;
    let mut w = 0;
    while i < s.len() {
        let (end, cw) = cluster(s, i);
        w += cw;
        i = end;
    }
    w
}

/// Display width of spans, summed over clusters.
pub(crate) fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// At most `max` columns of `spans`, cut between clusters.
fn clip_spans(spans: &[Span<'static>], max: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let s: &str = &span.content;
        let mut i = 0;
        while i < s.len() {
            let (end, w) = cluster(s, i);
            if used + w > max {
                break;
            }
            used += w;
            i = end;
        }
        if i > 0 {
            out.push(Span::styled(s[..i].to_owned(), span.style));
        }
        if i < s.len() {
            break;
        }
    }
    out
}

/// `prefix` without its trailing spaces (for rows with no content).
fn trim_prefix(prefix: &[Span<'static>]) -> Vec<Span<'static>> {
    let mut out: Vec<Span<'static>> = prefix.to_vec();
    while let Some(last) = out.last_mut() {
        let trimmed = last.content.trim_end_matches(' ');
        if trimmed.is_empty() {
            out.pop();
        } else {
            if trimmed.len() != last.content.len() {
                let t = trimmed.to_owned();
                last.content = Cow::Owned(t);
            }
            break;
        }
    }
    out
}

/// A part of a row: bytes `start..end` of span `span`, or a literal.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Src {
        span: usize,
        start: usize,
        end: usize,
    },
    Lit(&'static str, Style),
}

/// One cluster of the content: where it is and how wide.
#[derive(Debug, Clone, Copy)]
struct Cl {
    span: usize,
    start: usize,
    end: usize,
    w: usize,
}

/// Builds the rows of one logical line.
struct Rows<'s, 'a, 'o> {
    out: &'o mut Vec<Line<'static>>,
    spans: &'s [Span<'a>],
    first: Cow<'s, [Span<'static>]>,
    cont: Cow<'s, [Span<'static>]>,
    first_avail: usize,
    cont_avail: usize,
    rows: usize,
    pieces: Vec<Piece>,
    used: usize,
}

/// `prefix` made to leave at least one column of `width` for content, and the columns left.
fn fit_prefix<'p>(prefix: &'p [Span<'static>], width: usize) -> (Cow<'p, [Span<'static>]>, usize) {
    let pw = spans_width(prefix);
    if pw < width {
        (Cow::Borrowed(prefix), width - pw)
    } else {
        let clipped = clip_spans(prefix, width - 1);
        let cw = spans_width(&clipped);
        (Cow::Owned(clipped), width - cw)
    }
}

impl<'s, 'a, 'o> Rows<'s, 'a, 'o> {
    fn avail(&self) -> usize {
        if self.rows == 0 {
            self.first_avail
        } else {
            self.cont_avail
        }
    }

    fn push(&mut self, c: Cl) {
        self.used += c.w;
        if let Some(Piece::Src { span, end, .. }) = self.pieces.last_mut()
            && *span == c.span
            && *end == c.start
        {
            *end = c.end;
            return;
        }
        self.pieces.push(Piece::Src {
            span: c.span,
            start: c.start,
            end: c.end,
        });
    }

    fn push_lit(&mut self, s: &'static str, style: Style, w: usize) {
        self.used += w;
        self.pieces.push(Piece::Lit(s, style));
    }

    /// Place a cluster that may be wider than a whole row.
    fn push_fitting(&mut self, c: Cl) {
        if c.w > self.avail() {
            let style = self.spans[c.span].style;
            self.push_lit("…", style, 1);
        } else {
            self.push(c);
        }
    }

    fn piece_style(&self, p: &Piece) -> Style {
        match *p {
            Piece::Src { span, .. } => self.spans[span].style,
            Piece::Lit(_, style) => style,
        }
    }

    fn piece_str(&self, p: &Piece) -> &str {
        match *p {
            Piece::Src { span, start, end } => &self.spans[span].content[start..end],
            Piece::Lit(s, _) => s,
        }
    }

    /// End the current row.
    fn flush(&mut self) {
        let prefix = if self.rows == 0 {
            &self.first
        } else {
            &self.cont
        };
        let empty = self.pieces.iter().all(|p| self.piece_str(p).is_empty());
        let mut spans: Vec<Span<'static>> = if empty {
            trim_prefix(prefix)
        } else {
            let groups = 1 + self
                .pieces
                .windows(2)
                .filter(|w| self.piece_style(&w[0]) != self.piece_style(&w[1]))
                .count();
            let mut v = Vec::with_capacity(prefix.len() + groups);
            v.extend(prefix.iter().cloned());
            v
        };
        let mut k = 0;
        while k < self.pieces.len() {
            let style = self.piece_style(&self.pieces[k]);
            let mut j = k;
            let mut len = 0;
            while j < self.pieces.len() && self.piece_style(&self.pieces[j]) == style {
                len += self.piece_str(&self.pieces[j]).len();
                j += 1;
            }
            if len > 0 {
                let mut s = String::with_capacity(len);
                for p in &self.pieces[k..j] {
                    s.push_str(self.piece_str(p));
                }
                spans.push(Span::styled(s, style));
            }
            k = j;
        }
        self.out.push(Line::from(spans));
        self.pieces.clear();
        self.used = 0;
        self.rows += 1;
    }

    fn finish(&mut self) {
        if self.rows == 0 || !self.pieces.is_empty() {
            self.flush();
        }
    }
}

/// Iterate the clusters of `spans`.
fn for_each_cluster(spans: &[Span<'_>], mut f: impl FnMut(Cl, bool)) {
    for (si, span) in spans.iter().enumerate() {
        let s: &str = &span.content;
        let mut i = 0;
        while i < s.len() {
            let (end, w) = cluster(s, i);
            let space = end == i + 1 && s.as_bytes()[i] == b' ';
            f(
                Cl {
                    span: si,
                    start: i,
                    end,
                    w,
                },
                space,
            );
            i = end;
        }
    }
}

/// Lay out one logical line: `spans` after `first` on the first row and after `cont` on the
/// following rows, in rows of at most `width` columns appended to `out`. Width 0 adds nothing.
pub(crate) fn wrap_into(
    first: &[Span<'static>],
    cont: &[Span<'static>],
    spans: &[Span<'_>],
    kind: Kind,
    width: usize,
    out: &mut Vec<Line<'static>>,
) {
    if width == 0 {
        return;
    }
    let (first, first_avail) = fit_prefix(first, width);
    let (cont, cont_avail) = fit_prefix(cont, width);
    let mut rows = Rows {
        out,
        spans,
        first,
        cont,
        first_avail,
        cont_avail,
        rows: 0,
        pieces: Vec::new(),
        used: 0,
    };
    match kind {
        Kind::Prose => prose(&mut rows),
        Kind::Code => {
            for_each_cluster(spans, |c, _| {
                if rows.used + c.w > rows.avail() && rows.used > 0 {
                    rows.flush();
                }
                rows.push_fitting(c);
            });
        }
        Kind::Clip => {
            let total: usize = spans_width(spans);
            let avail = rows.avail();
            if total <= avail {
                for_each_cluster(spans, |c, _| rows.push(c));
            } else {
                let limit = avail - 1;
                let mut done = false;
                for_each_cluster(spans, |c, _| {
                    if done {
                        return;
                    }
                    if rows.used + c.w > limit {
                        done = true;
                        let style = spans[c.span].style;
                        rows.push_lit("…", style, 1);
                    } else {
                        rows.push(c);
                    }
                });
            }
        }
        Kind::Rule => {
            let style = spans.first().map(|s| s.style).unwrap_or_default();
            let mut line_spans = rows.first.to_vec();
            line_spans.push(Span::styled("─".repeat(rows.avail()), style));
            rows.out.push(Line::from(line_spans));
            return;
        }
    }
    rows.finish();
}

/// Greedy word wrap: words are runs of non-space clusters (across spans), separated by runs
/// of spaces that are kept inside a row and dropped at a break; a wide cluster is a word by
/// itself, so CJK text breaks between any two characters.
fn prose(rows: &mut Rows<'_, '_, '_>) {
    let spans = rows.spans;
    let mut word = Word::default();
    for_each_cluster(spans, |c, space| {
        if space {
            if !word.word.is_empty() {
                word.place(rows);
            }
            word.gap.push(c);
            word.gap_w += c.w;
        } else if c.w >= 2 {
            // Wide characters (CJK, emoji) can break before and after: each is a word.
            if !word.word.is_empty() {
                word.place(rows);
            }
            word.word.push(c);
            word.word_w = c.w;
            word.place(rows);
        } else {
            word.word.push(c);
            word.word_w += c.w;
        }
    });
    if !word.word.is_empty() {
        word.place(rows);
    }
}

/// The word being read and the spaces before it.
#[derive(Default)]
struct Word {
    word: Vec<Cl>,
    word_w: usize,
    gap: Vec<Cl>,
    gap_w: usize,
}

impl Word {
    fn place(&mut self, rows: &mut Rows<'_, '_, '_>) {
        if rows.used > 0 {
            if rows.used + self.gap_w + self.word_w <= rows.avail() {
                for c in &self.gap {
                    rows.push(*c);
                }
            } else {
                rows.flush();
            }
        }
        if rows.used + self.word_w <= rows.avail() {
            for c in &self.word {
                rows.push(*c);
            }
        } else {
            // Longer than a row: break between clusters.
            for c in &self.word {
                if rows.used + c.w > rows.avail() && rows.used > 0 {
                    rows.flush();
                }
                rows.push_fitting(*c);
            }
        }
        self.word.clear();
        self.gap.clear();
        self.word_w = 0;
        self.gap_w = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(crate::ui::line_text).collect()
    }

    fn wrap(spans: &[Span<'_>], kind: Kind, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        wrap_into(&[], &[], spans, kind, width, &mut out);
        out
    }

    #[test]
    fn clusters_keep_marks_and_emoji_sequences_whole() {
        // e + combining acute.
        assert_eq!(cluster("e\u{301}x", 0), (3, 1));
        // Family: man ZWJ woman ZWJ girl.
        let fam = "👨\u{200D}👩\u{200D}👧!";
        assert_eq!(cluster(fam, 0), (fam.len() - 1, 2));
        // Thumbs up with a skin tone.
        assert_eq!(cluster("👍🏽", 0), ("👍🏽".len(), 2));
        // A flag is two regional indicators; the third starts a new cluster.
        let flags = "🇫🇷🇩";
        assert_eq!(cluster(flags, 0).0, 8);
        assert_eq!(cluster("中a", 0), (3, 2));
        assert_eq!(str_width("中文 ok"), 7);
    }

    #[test]
    fn prose_breaks_at_spaces_and_drops_them() {
        let spans = [Span::raw("hello big wide world")];
        assert_eq!(
            text(&wrap(&spans, Kind::Prose, 9)),
            ["hello big", "wide", "world"]
        );
        assert_eq!(
            text(&wrap(&spans, Kind::Prose, 100)),
            ["hello big wide world"]
        );
    }

    #[test]
    fn long_words_are_broken_and_styles_carry_over() {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let spans = [Span::raw("ab "), Span::styled("cdefghij", bold)];
        let lines = wrap(&spans, Kind::Prose, 4);
        assert_eq!(text(&lines), ["ab", "cdef", "ghij"]);
        assert_eq!(lines[1].spans[0].style, bold);
        assert_eq!(lines[2].spans[0].style, bold);
    }

    #[test]
    fn cjk_breaks_between_characters_after_latin_words() {
        let spans = [Span::raw("Hello 北京今天晴 ok")];
        let lines = wrap(&spans, Kind::Prose, 10);
        assert_eq!(text(&lines), ["Hello 北京", "今天晴 ok"]);
    }

    #[test]
    fn code_keeps_spaces_and_hard_wraps() {
        let spans = [Span::raw("  a  b  c")];
        assert_eq!(text(&wrap(&spans, Kind::Code, 4)), ["  a ", " b  ", "c"]);
    }

    #[test]
    fn wide_chars_are_never_split_and_never_overflow() {
        let spans = [Span::raw("中文中文中")];
        let lines = wrap(&spans, Kind::Code, 3);
        assert_eq!(text(&lines), ["中", "文", "中", "文", "中"]);
        // At width 1 a wide char cannot fit at all: it becomes an ellipsis.
        let lines = wrap(&spans, Kind::Prose, 1);
        assert!(lines.iter().all(|l| l.width() <= 1));
        assert_eq!(text(&lines)[0], "…");
    }

    #[test]
    fn clip_adds_an_ellipsis() {
        let spans = [Span::raw("abcdef")];
        assert_eq!(text(&wrap(&spans, Kind::Clip, 4)), ["abc…"]);
        assert_eq!(text(&wrap(&spans, Kind::Clip, 6)), ["abcdef"]);
    }

    #[test]
    fn prefixes_count_and_are_clipped_when_too_wide() {
        let first = [Span::raw("• ")];
        let cont = [Span::raw("  ")];
        let mut out = Vec::new();
        let spans = [Span::raw("one two three")];
        wrap_into(&first, &cont, &spans, Kind::Prose, 7, &mut out);
        assert_eq!(text(&out), ["• one", "  two", "  three"]);
        out.clear();
        wrap_into(&first, &cont, &spans, Kind::Prose, 1, &mut out);
        assert!(out.iter().all(|l| l.width() <= 1));
        assert_eq!(text(&out).concat(), "onetwothree");
    }

    #[test]
    fn empty_rows_lose_trailing_prefix_spaces() {
        let first = [Span::styled("│ ", Style::new().fg(Color::Green))];
        let mut out = Vec::new();
        wrap_into(&first, &first, &[], Kind::Prose, 10, &mut out);
        assert_eq!(text(&out), ["│"]);
        assert_eq!(out[0].spans[0].style.fg, Some(Color::Green));
    }

    #[test]
    fn rule_fills_the_width() {
        let lines = wrap(&[Span::raw("")], Kind::Rule, 5);
        assert_eq!(text(&lines), ["─────"]);
        assert!(wrap(&[Span::raw("")], Kind::Rule, 0).is_empty());
    }
}
