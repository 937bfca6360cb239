//! The reasoning cell: a plain function from the cell's state to lines. Live, it shows the
//! reasoning dimmed under a `Thinking… 2.1s · 40 tokens` header; once the answer starts it
//! folds to that one line, and the reasoning key (F2) opens and closes every folded cell.

use std::time::Instant;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::style;
use super::wrap::wrap;
use crate::app::reasoning::Reasoning;

/// The key that opens and closes folded cells, as the header names it.
pub(crate) const TOGGLE_KEY: &str = "F2";

/// The cell's lines at `width`; none when the answer had no reasoning.
#[cfg(test)]
pub(crate) fn lines(r: &Reasoning, open: bool, width: u16, now: Instant) -> Vec<Line<'static>> {
    let Some(head) = head(r, open, now) else {
        return Vec::new();
    };
    let mut out = vec![head];
    if shown(r, open) {
        out.extend(body(body_text(r.text()), width));
    }
    out
}

/// The body is shown: while live, whatever the toggle says, or when open.
pub(crate) fn shown(r: &Reasoning, open: bool) -> bool {
    r.live() || open
}

/// The part of the reasoning the body shows (blank lines around it left out).
pub(crate) fn body_text(text: &str) -> &str {
    text.trim_matches('\n')
}

/// The header line: `Thinking… 2.1s · 40 tokens` live, `Thought for …` after; none when the
/// answer had no reasoning.
pub(crate) fn head(r: &Reasoning, open: bool, now: Instant) -> Option<Line<'static>> {
    if r.is_empty() {
        return None;
    }
    let secs = r.elapsed(now).as_secs_f64();
    let count = match r.tokens {
        0 => String::new(),
        1 => " · 1 token".to_owned(),
        n => format!(" · {n} tokens"),
    };
    let live = r.live();
    let head = if live {
        format!("Thinking… {secs:.1}s{count}")
    } else if r.tokens == 0 {
        // A resumed answer: its timing was not saved.
        "Reasoning".to_owned()
    } else {
        format!("Thought for {secs:.1}s{count}")
    };
    let mark = if shown(r, open) { "▾ " } else { "▸ " };
    let mut spans = vec![
        Span::styled(mark, style::dim()),
        Span::styled(head, style::dim().add_modifier(Modifier::ITALIC)),
    ];
    if !live {
        let verb = if open { "hide" } else { "show" };
        spans.push(Span::styled(
            format!("  ({TOGGLE_KEY} {verb})"),
            style::dim(),
        ));
    }
    Some(Line::from(spans))
}

/// `head` without the toggle key's hint: for a header written where the key cannot reach it
/// (the inline screen's scrollback).
pub(crate) fn drop_toggle(head: &mut Line<'static>) {
    let hint = |verb: &str| format!("  ({TOGGLE_KEY} {verb})");
    if head
        .spans
        .last()
        .is_some_and(|s| s.content == hint("show") || s.content == hint("hide"))
    {
        head.spans.pop();
    }
}

/// Body rows of `text` (a run of whole lines of [`body_text`]) at `width`: wrapping is line by
/// line, so the rows of consecutive runs are the rows of the whole.
pub(crate) fn body(text: &str, width: u16) -> Vec<Line<'static>> {
    let body: Style = style::dim().add_modifier(Modifier::ITALIC);
    wrap(text, width, Span::styled("│ ", style::dim()), body)
}
