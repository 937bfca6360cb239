//! The help overlay (F1, or `?` on an empty input).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::style;
use crate::app::commands::HELP;

const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the message"),
    ("Shift-Enter, Ctrl-J", "new line"),
    ("Up / Down", "earlier prompts (on the first / last line)"),
    (
        "Esc",
        "cancel the running answer (the partial answer stays)",
    ),
    ("Ctrl-C", "cancel if something runs, otherwise quit"),
    ("Ctrl-D", "quit on an empty input"),
    (
        "PgUp / PgDn, wheel",
        "scroll; Home / End on an empty input: top / bottom",
    ),
    (
        "Tab / Shift-Tab",
        "select a tool call; Ctrl-O expands its result",
    ),
    (
        "Ctrl-T",
        "inspector: raw stream, markers and token ids (of the selected call)",
    ),
    (
        "y n a e Esc",
        "approval: approve, deny with reason, always allow, edit JSON, deny",
    ),
    (
        "j k PgUp PgDn",
        "approval: scroll long arguments (y counts once all were shown)",
    ),
];

pub fn render(frame: &mut Frame, area: Rect) {
    let mut lines = vec![Line::from(Span::styled("Keys", style::accent()))];
    for (k, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("  {k:<22}"), style::user_header()),
            Span::raw(*what),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", style::accent())));
    for (c, what) in HELP {
        lines.push(Line::from(vec![
            Span::styled(format!("  {c:<22}"), style::user_header()),
            Span::raw(*what),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "  Esc, F1 or ? closes this help",
        style::dim(),
    )));
    let w = area.width.saturating_sub(4).min(96);
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + area.width.saturating_sub(w) / 2,
        y: area.y + area.height.saturating_sub(h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Help ")),
        rect,
    );
}
