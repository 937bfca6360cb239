//! The inspector's token view, laid out and kept between frames: tokens flow into
//! lines of the view's width, each shaded by its probability, markers badged with the id the
//! server produced, markers spread over ordinary tokens flagged. Tokens are appended as they
//! arrive; only a marker completed by a new token lays out again the lines it touches, so a
//! frame costs the same at 2 MiB of trace as at 2 KiB.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::style;
use super::width::str_width;
use kimi_protocol::trace_tokens::{MarkerTokens, TokenTrace, probability};
use kimi_protocol::{Template, sanitize};

/// Below this probability a token is "unlikely": it stands out most.
pub(crate) const UNLIKELY: f32 = 0.25;
/// Below this, a token is shaded too, less.
pub(crate) const UNSURE: f32 = 0.5;

/// Where a token is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenPos {
    pub(crate) line: usize,
    /// Index of its text span in the line.
    pub(crate) span: usize,
    /// Its first column.
    pub(crate) col: usize,
}

/// What identifies the tokens the lines were built from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    index: usize,
    started_unix_ms: u64,
    width: usize,
    /// The trace's family: which marker strings are markers, and the ids they must come as.
    template: Template,
}

/// The token view's lines, brought up to date by [`TokenView::refresh`].
#[derive(Debug, Default)]
pub(crate) struct TokenView {
    source: Option<Source>,
    lines: Vec<Line<'static>>,
    pos: Vec<TokenPos>,
    /// The column where the next token goes on the last line.
    col: usize,
    /// Markers found in the tokens so far, in order, and where the next search starts.
    markers: Vec<MarkerTokens>,
    marker_scan: usize,
    /// Tokens below [`UNLIKELY`].
    unlikely: usize,
}

/// How a token is shaded by its probability. Colour sets the background; what reads without
/// colour (NO_COLOR turns a background into reverse video) is the modifier.
pub(crate) fn shade(logprob: Option<f32>) -> Style {
    match logprob.map(probability) {
        Some(p) if p < UNLIKELY => Style::default().fg(Color::White).bg(Color::Red),
        Some(p) if p < UNSURE => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::UNDERLINED),
        _ => Style::default(),
    }
}

/// A split marker's tokens: they look like a marker, but the server did not produce one.
pub(crate) fn split_style() -> Style {
    style::text_marker()
}

impl TokenView {
    /// Bring the lines up to date with `tokens` of trace `index` (started at `started`), laid
    /// out `width` columns wide, markers read as `template`'s family has them.
    pub(crate) fn refresh(
        &mut self,
        tokens: &TokenTrace,
        index: usize,
        started: u64,
        width: usize,
        template: Template,
    ) {
        let source = Source {
            index,
            started_unix_ms: started,
            width: width.max(8),
            template,
        };
        if self.source.as_ref() != Some(&source) || tokens.len() < self.pos.len() {
            *self = TokenView::default();
            self.source = Some(source);
        }
        let found = tokens.markers_from(self.marker_scan, template);
        self.marker_scan = tokens.marker_resume(self.marker_scan, &found);
        if let Some(first) = found.iter().map(|m| m.first).min()
            && first < self.pos.len()
        {
            // A marker completed by new tokens restyles tokens already laid out: from the
            // start of the line its first token is on.
            self.truncate_to_line_of(first, tokens);
        }
        self.markers.extend(found);
        for i in self.pos.len()..tokens.len() {
            self.push_token(tokens, i);
        }
    }

    fn truncate_to_line_of(&mut self, token: usize, tokens: &TokenTrace) {
        let line = self.pos[token].line;
        let first = self.pos.partition_point(|p| p.line < line);
        self.unlikely -= (first..self.pos.len())
            .filter(|&i| is_unlikely(tokens, i))
            .count();
        self.pos.truncate(first);
        self.lines.truncate(line);
        self.lines.push(Line::default());
        self.col = 0;
    }

    /// The marker token `i` is part of, if any.
    fn marker_of(&self, i: usize) -> Option<&MarkerTokens> {
        let k = self.markers.partition_point(|m| m.last < i);
        self.markers.get(k).filter(|m| m.first <= i)
    }

    fn push_token(&mut self, tokens: &TokenTrace, i: usize) {
        let width = self.source.as_ref().map_or(80, |s| s.width);
        let Some(t) = tokens.get(i) else { return };
        if is_unlikely(tokens, i) {
            self.unlikely += 1;
        }
        let marker = self.marker_of(i).copied();
        let text_style = match marker {
            Some(m) if m.split => split_style(),
            Some(_) => style::badge(),
            None => shade(t.logprob),
        };
        // The label after a marker's last token: the id it came as, or the split flag.
        let label = marker
            .filter(|m| m.last == i)
            .map(|m| match (m.split, m.id) {
                (true, _) => " ⚠ split ".to_owned(),
                (false, Some(id)) => format!(" {id} "),
                (false, None) => " ? ".to_owned(),
            });
        let shown = shown_text(t.text);
        let w = str_width(&shown) + label.as_deref().map_or(0, str_width) + 1;
        if self.lines.is_empty() || (self.col > 0 && self.col + w > width) {
            self.lines.push(Line::default());
            self.col = 0;
        }
        let line = self.lines.len() - 1;
        let Some(l) = self.lines.last_mut() else {
            return;
        };
        self.pos.push(TokenPos {
            line,
            span: l.spans.len(),
            col: self.col,
        });
        l.spans.push(Span::styled(shown, text_style));
        if let Some(label) = label {
            l.spans.push(Span::styled(label, style::key()));
        }
        // The boundary between two tokens.
        l.spans.push(Span::styled("│", style::dim()));
        self.col += w;
        if t.text.ends_with('\n') {
            self.lines.push(Line::default());
            self.col = 0;
        }
    }

    /// The family the markers were read for (K2 templates, or K3).
    pub(crate) fn template(&self) -> Template {
        self.source
            .as_ref()
            .map_or_else(Template::default, |s| s.template)
    }

    /// Forget everything (the view closed, or no trace to show).
    pub(crate) fn clear(&mut self) {
        *self = TokenView::default();
    }

    pub(crate) fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    pub(crate) fn len(&self) -> usize {
        self.pos.len()
    }

    pub(crate) fn pos(&self, i: usize) -> Option<TokenPos> {
        self.pos.get(i).copied()
    }

    /// The markers found, each with the tokens that made it.
    pub(crate) fn markers(&self) -> &[MarkerTokens] {
        &self.markers
    }

    pub(crate) fn split_markers(&self) -> usize {
        self.markers.iter().filter(|m| m.split).count()
    }

    pub(crate) fn unlikely(&self) -> usize {
        self.unlikely
    }

    /// The token on `line` nearest to column `col` (for ↑ ↓).
    pub(crate) fn token_near(&self, line: usize, col: usize) -> Option<usize> {
        let start = self.pos.partition_point(|p| p.line < line);
        let end = self.pos.partition_point(|p| p.line <= line);
        if start >= end {
            return None;
        }
        let k = self.pos[start..end].partition_point(|p| p.col <= col);
        Some(start + k.saturating_sub(1))
    }
}

fn is_unlikely(tokens: &TokenTrace, i: usize) -> bool {
    tokens
        .get(i)
        .and_then(|t| t.logprob)
        .is_some_and(|lp| probability(lp) < UNLIKELY)
}

/// A token's text as drawn: invisible characters made visible, a newline as `⏎`, an empty
/// token (a byte of a character still incomplete) as `∅`.
pub(crate) fn shown_text(text: &str) -> String {
    if text.is_empty() {
        return "∅".to_owned();
    }
    let one = sanitize::visible(text).into_owned();
    one.replace('\n', "⏎")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::TokenLogprob;

    const K2: Template = Template::K2Instruct;

    fn tok(id: u32, text: &str, lp: f32) -> TokenLogprob {
        TokenLogprob {
            id: Some(id),
            text: text.into(),
            logprob: Some(lp),
            top: Vec::new(),
        }
    }

    fn texts(v: &TokenView) -> Vec<String> {
        v.lines().iter().map(crate::ui::line_text).collect()
    }

    #[test]
    fn appending_gives_what_a_rebuild_gives_even_when_a_marker_completes_late() {
        let all = [
            tok(1, "Hello", -0.1),
            tok(2, " world", -3.0),
            tok(3, "\n", -0.1),
            tok(4, "<|", -0.2),
            tok(5, "tool_call_end", -0.2),
            tok(6, "|>", -0.2),
            tok(163596, "<|tool_calls_section_end|>", -0.01),
        ];
        let mut t = TokenTrace::default();
        let mut view = TokenView::default();
        for (k, token) in all.iter().enumerate() {
            t.push(k, std::slice::from_ref(token));
            view.refresh(&t, 0, 1, 30, K2);
            let mut fresh = TokenView::default();
            fresh.refresh(&t, 0, 1, 30, K2);
            assert_eq!(view.lines(), fresh.lines(), "after token {k}");
            assert_eq!(view.pos, fresh.pos, "after token {k}");
            assert_eq!(view.unlikely(), fresh.unlikely());
        }
        let text = texts(&view).join("\n");
        assert!(text.contains("<|│tool_call_end│|> ⚠ split │"), "{text}");
        assert!(
            text.contains("<|tool_calls_section_end|> 163596 │"),
            "{text}"
        );
        assert_eq!((view.split_markers(), view.unlikely()), (1, 1));
        // Another width: laid out again.
        view.refresh(&t, 0, 1, 12, K2);
        let mut fresh = TokenView::default();
        fresh.refresh(&t, 0, 1, 12, K2);
        assert_eq!(view.lines(), fresh.lines());
    }

    #[test]
    fn up_and_down_find_the_nearest_token() {
        let mut t = TokenTrace::default();
        for k in 0..20 {
            t.push(0, &[tok(k, "abcd", -0.1)]);
        }
        let mut v = TokenView::default();
        v.refresh(&t, 0, 1, 20, K2);
        // Four tokens of five columns per line.
        assert_eq!(v.pos(4).map(|p| (p.line, p.col)), Some((1, 0)));
        assert_eq!(v.token_near(1, 7), Some(5));
        assert_eq!(v.token_near(0, 99), Some(3));
        assert_eq!(v.token_near(9, 0), None);
    }
}
