//! The picker overlay (`Esc Esc`'s earlier messages, `/sessions`): a bordered list over the
//! transcript, the selected row in reverse video, kept in view; drawn from the picker's state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::renderable::Renderable;
use super::style;
use crate::app::picker::Picker;

/// Rows the border and the footer take.
const CHROME: u16 = 3;

/// Where the picker goes in `area` (the transcript's): as wide as it allows up to 110
/// columns, as tall as its items need.
pub(crate) fn area(picker: &Picker, area: Rect) -> Rect {
    let width = area.width.saturating_sub(4).clamp(area.width.min(20), 110);
    let height = picker.desired_height(width).min(
        area.height
            .saturating_sub(2)
            .max(area.height.min(CHROME + 1)),
    );
    Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    }
}

impl Renderable for Picker {
    fn render(&self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(style::accent())
            .title(Span::styled(format!(" {} ", self.title), style::accent()))
            .title_bottom(Line::from(Span::styled(
                format!(" {} ", self.footer),
                style::dim(),
            )));
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        let top = self.top(rows);
        for (n, item) in self.items.iter().enumerate().skip(top).take(rows) {
            let y = inner.y + (n - top) as u16;
            let selected = n == self.selected;
            let (mark, style) = if selected {
                ("› ", Style::default().add_modifier(Modifier::REVERSED))
            } else {
                ("  ", Style::default())
            };
            // The label was made one line and sanitized when the picker was built.
            Line::from(vec![Span::raw(mark), Span::raw(item.label.as_str())])
                .style(style)
                .render(Rect::new(inner.x, y, inner.width, 1), buf);
        }
    }

    fn desired_height(&self, _width: u16) -> u16 {
        u16::try_from(self.items.len())
            .unwrap_or(u16::MAX)
            .saturating_add(CHROME - 1)
    }
}
