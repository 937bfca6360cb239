//! The shape every widget of the screen has: it renders from `&self` into a buffer and says
//! how tall it wants to be at a width. Whatever a widget needs to do that cheaply (wrapped
//! rows, scroll state) it owns and refreshes before the frame, outside `render`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

pub(crate) trait Renderable {
    /// Draw into `area` of `buf`; reads only `self`.
    fn render(&self, area: Rect, buf: &mut Buffer);
    /// Rows it would fill at `width` (all of them, not only those that fit).
    fn desired_height(&self, width: u16) -> u16;
}

/// Rows already laid out for a width: drawn as they are, one per screen row.
impl Renderable for [Line<'static>] {
    fn render(&self, area: Rect, buf: &mut Buffer) {
        // The rows fit the width (the layout guarantees it): no wrapping here.
        for (y, line) in (area.y..area.bottom()).zip(self) {
            line.render(
                Rect {
                    y,
                    height: 1,
                    ..area
                },
                buf,
            );
        }
    }

    fn desired_height(&self, _width: u16) -> u16 {
        u16::try_from(self.len()).unwrap_or(u16::MAX)
    }
}
