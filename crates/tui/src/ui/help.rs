//! The help overlay (F1, or `?` on an empty input): every row of the key table, by section,
//! then the slash commands. It scrolls when the screen is shorter than the help.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::style;
use crate::app::commands::HELP;
use crate::app::keys::{SECTIONS, TABLE};

fn row(keys: &str, what: &'static str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("  {keys:<22}"), style::user_header()),
        Span::raw(what),
    ])
}

/// The help's lines, drawn from the key table and the command list.
pub fn lines() -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (title, contexts) in SECTIONS {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(*title, style::accent())));
        for r in TABLE.iter().filter(|r| contexts.contains(&r.context)) {
            lines.push(row(r.keys, r.help));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", style::accent())));
    for (c, what) in HELP {
        lines.push(row(c, what));
    }
    lines
}

/// How many lines the help has (what `update` scrolls through).
pub fn line_count() -> usize {
    lines().len()
}

pub fn render(frame: &mut Frame, area: Rect, scroll: usize) {
    let lines = lines();
    let total = lines.len();
    let w = area.width.saturating_sub(4).min(96);
    let h = (total as u16 + 2).min(area.height);
    let shown = usize::from(h.saturating_sub(2));
    let scroll = scroll.min(total.saturating_sub(shown));
    let title = if shown < total {
        format!(
            " Help · lines {}-{} of {total} · ↑↓ PgUp PgDn ",
            scroll + 1,
            (scroll + shown).min(total)
        )
    } else {
        " Help ".to_owned()
    };
    let rect = Rect {
        x: area.x + area.width.saturating_sub(w) / 2,
        y: area.y + area.height.saturating_sub(h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(Block::default().borders(Borders::ALL).title(title)),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> Vec<String> {
        lines()
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn every_row_of_the_key_table_is_in_the_help_and_every_hint_too() {
        let text = text();
        for r in TABLE {
            assert!(
                text.iter()
                    .any(|l| l.contains(r.keys) && l.contains(r.help)),
                "{r:?} missing from the help"
            );
        }
        for (key, _) in crate::app::keys::hints() {
            assert!(
                text.iter().any(|l| l.trim_start().starts_with(key)),
                "hint {key} is not a key in the help"
            );
        }
        assert_eq!(line_count(), text.len());
    }
}
