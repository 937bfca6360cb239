//! The trust prompt over the screen: whose rules, what trusting means, the two keys.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::style;
use crate::app::trust::TrustPrompt;
use kimi_protocol::sanitize;

pub(crate) fn render(frame: &mut Frame, screen: Rect, p: &TrustPrompt) {
    let w = screen
        .width
        .saturating_sub(4)
        .clamp(20, 76)
        .min(screen.width);
    let h = 9.min(screen.height);
    let rect = Rect {
        x: screen.x + screen.width.saturating_sub(w) / 2,
        y: screen.y + screen.height.saturating_sub(h) / 2,
        width: w,
        height: h,
    };
    let dir = sanitize::one_line(&p.dir.display().to_string(), 200);
    let mut lines = vec![
        Line::from(format!("{dir} has project rules (.kimi-tui/rules.toml).")),
        Line::from(Span::styled(
            "Trusted, its allow rules run calls without asking; until then only its deny and ask rules apply.",
            style::dim(),
        )),
        Line::default(),
        Line::from(vec![
            Span::styled(" t ", style::key()),
            Span::raw(" trust this directory  "),
            Span::styled(" n ", style::key()),
            Span::raw(" not now"),
        ]),
    ];
    if p.pending {
        lines.push(Line::from(Span::styled("trusting…", style::dim())));
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(style::warning())
                .title(" Trust this project's rules? "),
        ),
        rect,
    );
}
