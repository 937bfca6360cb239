//! An MCP server's question, drawn over everything: who asks, its message, one row per field
//! (title, required mark, what it takes, description, the typed value) and the keys in the
//! border. Every text of the server is sanitized; the form scrolls to keep the focused field
//! in view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::style;
use super::wrap::{wrap, wrap_hanging};
use crate::app::elicit::{ElicitDialog, type_hint};
use kimi_protocol::sanitize;

/// Names, titles and hints are cut after this many characters; messages after `MESSAGE_CHARS`.
const NAME_CHARS: usize = 64;
const HINT_CHARS: usize = 300;
const MESSAGE_CHARS: usize = 2000;

/// The keys, in the bottom border.
pub(crate) const KEYS: &str = " Enter send · Tab/↑↓ field · Ctrl-D decline · Esc cancel ";

/// The dialog's lines at `width`, and the first line of the focused field.
pub(crate) fn lines(d: &ElicitDialog, width: u16) -> (Vec<Line<'static>>, usize) {
    let mut out = Vec::new();
    // The message may hold lines of its own; each is shown with hidden characters escaped.
    for l in sanitize::display_lines(&truncate(&d.ask.message, MESSAGE_CHARS)) {
        out.extend(wrap(&l, width, Span::raw(""), Style::default()));
    }
    if d.ask.fields.is_empty() {
        out.push(Line::default());
        out.push(Line::from(Span::styled(
            "(no fields: Enter accepts)",
            style::dim(),
        )));
    }
    let mut focus_line = 0;
    for (i, (f, text)) in d.ask.fields.iter().zip(&d.inputs).enumerate() {
        out.push(Line::default());
        let focused = i == d.focus;
        if focused {
            focus_line = out.len();
        }
        let mut title = vec![
            Span::styled(if focused { "▸ " } else { "  " }, style::accent()),
            Span::styled(
                sanitize::one_line(f.label(), NAME_CHARS),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ];
        if f.required {
            title.push(Span::styled(" *", style::error()));
        }
        if f.title.is_some() {
            title.push(Span::styled(
                format!(" ({})", sanitize::one_line(&f.name, NAME_CHARS)),
                style::dim(),
            ));
        }
        out.push(Line::from(title));
        out.extend(wrap_hanging(
            &sanitize::one_line(&type_hint(f), HINT_CHARS),
            width,
            Span::raw("    "),
            Span::raw("    "),
            style::dim(),
        ));
        if let Some(desc) = &f.description {
            out.extend(wrap(
                &sanitize::one_line(desc, HINT_CHARS),
                width,
                Span::raw("    "),
                style::dim(),
            ));
        }
        let value = sanitize::one_line(text, MESSAGE_CHARS);
        let mut row = wrap_hanging(
            &value,
            width.saturating_sub(1),
            Span::styled("  > ", style::accent()),
            Span::raw("    "),
            Style::default(),
        );
        if focused && let Some(last) = row.last_mut() {
            last.spans.push(Span::styled(
                " ",
                Style::default().add_modifier(Modifier::REVERSED),
            ));
        }
        out.extend(row);
    }
    if !d.problems.is_empty() {
        out.push(Line::default());
        for p in &d.problems {
            out.extend(wrap(
                &format!("✗ {}", sanitize::one_line(p, HINT_CHARS)),
                width,
                Span::raw(""),
                style::error(),
            ));
        }
    }
    (out, focus_line)
}

fn truncate(s: &str, chars: usize) -> String {
    match s.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…(+{} bytes)", &s[..i], s.len() - i),
        None => s.to_owned(),
    }
}

/// The dialog's rectangle on `screen` for `rows` lines of text.
fn rect(screen: Rect, rows: usize) -> Rect {
    let w = screen
        .width
        .saturating_sub(4)
        .clamp(20, 90)
        .min(screen.width);
    let h = (rows as u16)
        .saturating_add(2)
        .clamp(5, screen.height.max(1));
    Rect {
        x: screen.x + screen.width.saturating_sub(w) / 2,
        y: screen.y + screen.height.saturating_sub(h) / 2,
        width: w,
        height: h.min(screen.height),
    }
}

pub(crate) fn render(frame: &mut Frame, screen: Rect, d: &ElicitDialog) {
    let width = screen
        .width
        .saturating_sub(4)
        .clamp(20, 90)
        .min(screen.width);
    let (lines, focus) = lines(d, width.saturating_sub(2));
    let area = rect(screen, lines.len());
    let inner_h = area.height.saturating_sub(2) as usize;
    // Keep the focused field (its title to its value, about four rows) and the problems in
    // view: the problems are at the end, so an Enter that found some scrolls to them.
    let top = if !d.problems.is_empty() {
        lines.len().saturating_sub(inner_h)
    } else {
        (focus + 4).saturating_sub(inner_h).min(focus)
    };
    let shown: Vec<Line<'static>> = lines.into_iter().skip(top).take(inner_h).collect();
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style::warning())
        .title(format!(
            " MCP server `{}` asks ",
            sanitize::one_line(&d.ask.server, NAME_CHARS)
        ))
        .title_bottom(Line::from(KEYS).style(style::dim()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(shown), inner);
}
