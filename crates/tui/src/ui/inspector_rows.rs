//! The inspector's lines as screen rows: scrolling and `End` count the rows the wrapped lines
//! take (as ratatui draws them), and search matches are highlighted.

use super::width::str_width;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// How a search match is drawn: reverse video reads without colour too.
fn hit_style() -> Style {
    Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
}

/// Rows `line` takes at `width` columns (at least one), counted by the same wrapping that
/// draws it.
pub(crate) fn rows(line: &Line<'static>, width: usize) -> usize {
    let w: usize = line.spans.iter().map(|s| str_width(&s.content)).sum();
    if w <= width {
        return 1;
    }
    paragraph(vec![line.clone()])
        .line_count(u16::try_from(width).unwrap_or(u16::MAX))
        .max(1)
}

/// The inspector's lines as drawn: word-wrapped, spacing kept (indentation is data here).
pub(crate) fn paragraph(lines: Vec<Line<'static>>) -> Paragraph<'static> {
    Paragraph::new(lines).wrap(Wrap { trim: false })
}

/// The first line that can be on top with the last line still on screen, `height` rows of
/// `width` columns: where `End` goes, and the furthest any scroll goes.
pub(crate) fn last_top<'a>(
    len: usize,
    line: impl Fn(usize) -> Option<&'a Line<'static>>,
    width: usize,
    height: usize,
) -> usize {
    // Only the lines of the last screen are measured: the cost does not grow with the trace.
    let mut top = len;
    let mut used = 0;
    while top > 0 {
        used += line(top - 1).map_or(1, |l| rows(l, width));
        if used > height.max(1) {
            break;
        }
        top -= 1;
    }
    // A last line taller than the view is still shown from its start.
    top.min(len.saturating_sub(1))
}

/// How many whole lines from `top` fit in `height` rows (at least one): a page.
pub(crate) fn fitting<'a>(
    lines: impl Iterator<Item = &'a Line<'static>>,
    width: usize,
    height: usize,
) -> usize {
    let mut used = 0;
    let mut n = 0;
    for l in lines {
        used += rows(l, width);
        if used > height {
            break;
        }
        n += 1;
    }
    n.max(1)
}

/// `line` with every case-insensitive occurrence of `query` in reverse video.
pub(crate) fn highlight(line: &Line<'static>, query: &str) -> Line<'static> {
    if query.is_empty() {
        return line.clone();
    }
    let text = super::line_text(line);
    let hits = matches(&text, query);
    if hits.is_empty() {
        return line.clone();
    }
    let mut out = Line::default();
    let mut at = 0;
    for span in &line.spans {
        let end = at + span.content.len();
        let mut cut = at;
        // Boundaries inside this span: the starts and ends of hits.
        let mut marks: Vec<usize> = hits
            .iter()
            .flat_map(|&(s, e)| [s, e])
            .filter(|&b| b > at && b < end)
            .collect();
        marks.push(end);
        for b in marks {
            if b <= cut {
                continue;
            }
            let inside = hits.iter().any(|&(s, e)| cut >= s && cut < e);
            let piece = span.content.get(cut - at..b - at).unwrap_or_default();
            let style = if inside {
                span.style.patch(hit_style())
            } else {
                span.style
            };
            out.spans.push(Span::styled(piece.to_owned(), style));
            cut = b;
        }
        at = end;
    }
    out
}

/// Byte ranges of `query` in `text`, ignoring ASCII case (what `find` matches, on the same
/// offsets: lowercasing beyond ASCII could change lengths).
fn matches(text: &str, query: &str) -> Vec<(usize, usize)> {
    let hay = text.to_ascii_lowercase();
    let needle = query.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = hay.get(from..).and_then(|h| h.find(&needle)) {
        let s = from + i;
        let e = s + needle.len();
        if text.is_char_boundary(s) && text.is_char_boundary(e) {
            out.push((s, e));
        }
        from = e.max(s + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ui::line_text as text;

    #[test]
    fn rows_are_counted_as_drawn() {
        let l = Line::from(vec![Span::raw("abcd "), Span::raw("北京ef")]);
        assert_eq!(rows(&l, 5), 3);
        assert_eq!(rows(&l, 11), 1);
        assert_eq!(rows(&Line::default(), 5), 1);
    }

    #[test]
    fn the_last_top_leaves_the_last_line_on_screen() {
        let lines: Vec<Line<'static>> = (0..10).map(|_| Line::from("x".repeat(30))).collect();
        // Each line is 3 rows at width 10: 9 rows hold the last three lines.
        let at = |n: usize| lines.get(n);
        assert_eq!(last_top(10, at, 10, 9), 7);
        assert_eq!(last_top(10, at, 10, 10), 7);
        assert_eq!(fitting(lines.iter(), 10, 9), 3);
        assert_eq!(last_top(10, at, 100, 20), 0);
        // One line taller than the view: shown from its start.
        let tall = [Line::from("y".repeat(100))];
        assert_eq!(last_top(1, |n| tall.get(n), 10, 3), 0);
    }

    #[test]
    fn matches_are_reversed_across_spans() {
        let l = Line::from(vec![Span::raw("foo Ba"), Span::raw("r baz")]);
        let h = highlight(&l, "bar");
        assert_eq!(text(&h), "foo Bar baz");
        let hit: String = h
            .spans
            .iter()
            .filter(|s| s.style.add_modifier.contains(Modifier::REVERSED))
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(hit, "Bar");
    }
}
