//! `NO_COLOR` (https://no-color.org): the frame without colours. What colour alone set apart
//! (a marker badge, a token id, the status bar, a key) is shown in reverse video instead, so a
//! badge never reads like the prompt text around it.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// Whether the environment asks for no colour: `NO_COLOR` set to anything but the empty string.
pub(crate) fn requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Drop every colour of `buf`; a cell that had a background becomes reverse video.
pub(crate) fn strip(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        if cell.bg != Color::Reset {
            cell.modifier.insert(Modifier::REVERSED);
        }
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        cell.underline_color = Color::Reset;
    }
}
