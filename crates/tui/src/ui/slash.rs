//! The slash-command popup: the commands matching the `/name` being typed, one per row with
//! its help, the selected row in reverse video and kept in view. Drawn from the popup's state
//! into whatever area the caller gives it ([`area`] places it on the rows above the input);
//! rows are cut with `…`, never wrapped, so any width keeps the border whole.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

use super::markdown::wrap::{Kind, wrap_into};
use super::renderable::Renderable;
use super::style;
use super::width::str_width;
use crate::app::slash::SlashPopup;

/// Rows of commands shown at most: a longer list scrolls.
pub(crate) const MAX_ROWS: u16 = 8;
/// Rows the border takes.
const CHROME: u16 = 2;

/// Where the popup goes: on the rows just above `input`, as wide as it, within `screen`
/// (as tall as it wants where there is room, else as tall as the rows above the input).
pub(crate) fn area(popup: &SlashPopup, input: Rect, screen: Rect) -> Rect {
    let above = input.y.saturating_sub(screen.y);
    let height = popup.desired_height(input.width).min(above);
    Rect {
        x: input.x,
        y: input.y - height,
        width: input.width,
        height,
    }
}

impl SlashPopup {
    /// The first row on screen when `rows` show: the selected one stays in view.
    fn top(&self, rows: usize) -> usize {
        (self.selected + 1).saturating_sub(rows.max(1))
    }

    /// The border's title: what the rows are, and where they are in a longer list.
    fn title(&self, rows: usize) -> String {
        let n = self.choices.len();
        if self.guessed {
            " did you mean ".to_owned()
        } else if n > rows && rows > 0 {
            let top = self.top(rows);
            format!(" commands {}-{} of {n} ", top + 1, (top + rows).min(n))
        } else {
            " commands ".to_owned()
        }
    }

    /// One row: the command, padded to `column`, then its help; cut to `width`.
    fn row(&self, n: usize, column: usize, width: usize) -> Line<'static> {
        let c = &self.choices[n];
        let selected = n == self.selected;
        let mark = if selected { "› " } else { "  " };
        let pad = column.saturating_sub(str_width(&c.name));
        let spans = [
            Span::raw(mark),
            Span::styled(c.name.clone(), style::accent()),
            Span::raw(" ".repeat(pad + 2)),
            Span::styled(c.help.clone(), style::dim()),
        ];
        let mut out = Vec::new();
        wrap_into(&[], &[], &spans, Kind::Clip, width, &mut out);
        let line = out.pop().unwrap_or_default();
        if selected {
            line.style(Style::default().add_modifier(Modifier::REVERSED))
        } else {
            line
        }
    }
}

impl Renderable for SlashPopup {
    fn render(&self, area: Rect, buf: &mut Buffer) {
        if !self.is_open() || area.is_empty() {
            return;
        }
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(style::dim());
        let inner = block.inner(area);
        let rows = usize::from(inner.height);
        let block = block
            .title(Span::styled(self.title(rows), style::accent()))
            .title_bottom(Line::from(Span::styled(
                " Tab complete · ↑↓ select · Esc close ",
                style::dim(),
            )));
        block.render(area, buf);
        let width = usize::from(inner.width);
        if self.choices.is_empty() {
            let query = self.query().unwrap_or_default();
            let text = format!("no command starts with /{query}; // starts a message with /");
            let mut out = Vec::new();
            wrap_into(&[], &[], &[Span::raw(text)], Kind::Clip, width, &mut out);
            if let Some(line) = out.pop() {
                line.style(style::dim()).render(inner, buf);
            }
            return;
        }
        // The names' column: as wide as the longest name, up to half the row.
        let column = (self.choices.iter().map(|c| str_width(&c.name)).max())
            .unwrap_or(0)
            .min(width / 2);
        let top = self.top(rows);
        for (y, n) in (inner.y..inner.bottom()).zip(top..self.choices.len()) {
            self.row(n, column, width)
                .render(Rect::new(inner.x, y, inner.width, 1), buf);
        }
    }

    fn desired_height(&self, _width: u16) -> u16 {
        if !self.is_open() {
            return 0;
        }
        let rows = u16::try_from(self.choices.len()).unwrap_or(u16::MAX);
        rows.clamp(1, MAX_ROWS) + CHROME
    }
}
