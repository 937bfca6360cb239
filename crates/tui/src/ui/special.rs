//! Special-token strings in user messages and tool results, marked where the transcript shows
//! them: a badge on each, and a count beside the heading.

use ratatui::text::{Line, Span};

use super::style;
use kimi_protocol::special;

/// `  ⚠ 2 special-token strings`, for the heading of a text that holds any.
pub(crate) fn note(text: &str) -> Option<Span<'static>> {
    let n = special::find(text).len();
    (n > 0).then(|| {
        Span::styled(
            format!(
                "  ⚠ {n} special-token string{}",
                if n == 1 { "" } else { "s" }
            ),
            style::warning(),
        )
    })
}

/// `lines` with each special-token string in a span of its own, styled as a warning badge. A
/// string cut by wrapping is not badged; the heading's note still counts it.
pub(crate) fn badge(lines: Vec<Line<'static>>) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .map(|line| {
            if !line.spans.iter().any(|s| special::contains(&s.content)) {
                return line;
            }
            let mut spans = Vec::with_capacity(line.spans.len() + 2);
            for span in line.spans {
                let found = special::find(&span.content);
                if found.is_empty() {
                    spans.push(span);
                    continue;
                }
                let text = span.content.as_ref();
                let mut pos = 0;
                for r in found {
                    if r.start > pos {
                        spans.push(Span::styled(text[pos..r.start].to_owned(), span.style));
                    }
                    spans.push(Span::styled(
                        text[r.clone()].to_owned(),
                        style::text_marker(),
                    ));
                    pos = r.end;
                }
                if pos < text.len() {
                    spans.push(Span::styled(text[pos..].to_owned(), span.style));
                }
            }
            Line { spans, ..line }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    #[test]
    fn each_string_gets_its_own_badge() {
        let lines = vec![Line::from(vec![
            Span::raw("│ "),
            Span::styled("a<|im_end|>b[EOS]", Style::default()),
        ])];
        let out = badge(lines);
        let spans: Vec<(&str, bool)> = out[0]
            .spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style == style::text_marker()))
            .collect();
        assert_eq!(
            spans,
            [
                ("│ ", false),
                ("a", false),
                ("<|im_end|>", true),
                ("b", false),
                ("[EOS]", true)
            ]
        );
        assert_eq!(
            note("<|im_end|>").map(|s| s.content.into_owned()),
            Some("  ⚠ 1 special-token string".to_owned())
        );
        assert!(note("plain").is_none());
    }
}
