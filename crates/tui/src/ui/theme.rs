//! Themes: the colours every widget uses are the dark theme; the light theme is the
//! same frame with each colour drawn on the terminal's own background made dark enough to read
//! on white. Done on the finished buffer (like `no_color::strip`), so every widget, the
//! markdown theme and the syntax highlight follow without a palette threaded through them.
//!
//! Named colours are remapped to fixed xterm-256 colours: a terminal's own palette for
//! "yellow" or "white" is picked for a dark background and unreadable on white, while the 256
//! cube (16..=231) and grey ramp are the same in every terminal. Cells with a background of
//! their own (status bar, badges, keys) keep their pair: it was chosen for contrast between
//! its two colours, whatever the terminal's background.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// The theme the frame is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Theme {
    #[default]
    Dark,
    Light,
}

impl Theme {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Theme::Dark => "dark",
            Theme::Light => "light",
        }
    }

    /// `dark` or `light`.
    pub(crate) fn parse(s: &str) -> Option<Theme> {
        match s {
            "dark" => Some(Theme::Dark),
            "light" => Some(Theme::Light),
            _ => None,
        }
    }
}

/// Redraw `buf` for `theme` (nothing to do for the dark theme).
pub(crate) fn apply(buf: &mut Buffer, theme: Theme) {
    if theme == Theme::Dark {
        return;
    }
    for cell in buf.content.iter_mut() {
        if cell.bg == Color::Reset {
            cell.fg = on_white(cell.fg);
        }
    }
}

/// The colour to draw text `c` with on a white background: readable (WCAG contrast at least
/// [`MIN_CONTRAST`] against white), and as close to the dark theme's hue as that allows.
pub(crate) fn on_white(c: Color) -> Color {
    use Color::*;
    match c {
        Reset | Black => c,
        Red => Indexed(124),
        LightRed => Indexed(160),
        Green | LightGreen => Indexed(28),
        Yellow | LightYellow => Indexed(130),
        Blue | LightBlue => Indexed(25),
        Magenta | LightMagenta => Indexed(127),
        Cyan | LightCyan => Indexed(23),
        Gray => Indexed(240),
        DarkGray => Indexed(242),
        White => Black,
        Indexed(n) => match rgb_of_indexed(n) {
            Some(rgb) if contrast_with_white(rgb) >= MIN_CONTRAST => c,
            Some(rgb) => darken(rgb),
            // 0..=15 are the terminal's own palette: the named colours.
            None => on_white(named(n)),
        },
        Rgb(r, g, b) if contrast_with_white((r, g, b)) >= MIN_CONTRAST => c,
        Rgb(r, g, b) => darken((r, g, b)),
    }
}

/// WCAG AA for normal text.
pub(crate) const MIN_CONTRAST: f64 = 4.5;

/// `rgb` scaled toward black until it reads on white.
fn darken((r, g, b): (u8, u8, u8)) -> Color {
    let mut k = 1.0_f64;
    loop {
        k *= 0.9;
        let scaled = |v: u8| (f64::from(v) * k).round() as u8;
        let rgb = (scaled(r), scaled(g), scaled(b));
        if contrast_with_white(rgb) >= MIN_CONTRAST || k < 0.05 {
            return Color::Rgb(rgb.0, rgb.1, rgb.2);
        }
    }
}

fn named(n: u8) -> Color {
    use Color::*;
    [
        Black,
        Red,
        Green,
        Yellow,
        Blue,
        Magenta,
        Cyan,
        Gray,
        DarkGray,
        LightRed,
        LightGreen,
        LightYellow,
        LightBlue,
        LightMagenta,
        LightCyan,
        White,
    ][usize::from(n & 15)]
}

/// The RGB value of an xterm-256 colour from the cube or the grey ramp (`None` for 0..=15).
pub(crate) fn rgb_of_indexed(n: u8) -> Option<(u8, u8, u8)> {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match n {
        0..=15 => None,
        16..=231 => {
            let i = n - 16;
            Some((
                LEVELS[usize::from(i / 36)],
                LEVELS[usize::from(i / 6 % 6)],
                LEVELS[usize::from(i % 6)],
            ))
        }
        _ => {
            let v = 8 + 10 * (n - 232);
            Some((v, v, v))
        }
    }
}

/// Relative luminance (sRGB, WCAG 2), 0 (black) to 1 (white).
pub(crate) fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let lin = |v: u8| {
        let c = f64::from(v) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG contrast ratio of `rgb` against white (1 to 21).
pub(crate) fn contrast_with_white(rgb: (u8, u8, u8)) -> f64 {
    1.05 / (luminance(rgb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rgb(c: Color) -> (u8, u8, u8) {
        match c {
            Color::Black => (0, 0, 0),
            Color::Rgb(r, g, b) => (r, g, b),
            Color::Indexed(n) => rgb_of_indexed(n).unwrap_or_else(|| panic!("{n} is named")),
            other => panic!("{other:?} is left to the terminal's palette"),
        }
    }

    #[test]
    fn every_named_colour_reads_on_white() {
        for n in 1..16 {
            let c = on_white(named(n));
            let ratio = contrast_with_white(rgb(c));
            assert!(ratio >= MIN_CONTRAST, "{:?} -> {c:?}: {ratio:.2}", named(n));
        }
    }

    #[test]
    fn light_rgb_and_indexed_colours_are_darkened_and_dark_ones_kept() {
        // Yellow-ish as a syntax theme might use: 1.1:1 on white.
        let out = on_white(Color::Rgb(250, 240, 100));
        assert!(contrast_with_white(rgb(out)) >= MIN_CONTRAST, "{out:?}");
        assert_ne!(out, Color::Rgb(250, 240, 100));
        assert_eq!(on_white(Color::Rgb(20, 20, 120)), Color::Rgb(20, 20, 120));
        // 226 is pure yellow in the cube; 17 a dark blue.
        assert!(contrast_with_white(rgb(on_white(Color::Indexed(226)))) >= MIN_CONTRAST);
        assert_eq!(on_white(Color::Indexed(17)), Color::Indexed(17));
        assert_eq!(on_white(Color::Indexed(11)), on_white(Color::LightYellow));
    }

    #[test]
    fn the_cube_and_ramp_match_xterm() {
        assert_eq!(rgb_of_indexed(16), Some((0, 0, 0)));
        assert_eq!(rgb_of_indexed(130), Some((175, 95, 0)));
        assert_eq!(rgb_of_indexed(231), Some((255, 255, 255)));
        assert_eq!(rgb_of_indexed(232), Some((8, 8, 8)));
        assert_eq!(rgb_of_indexed(255), Some((238, 238, 238)));
        assert!((luminance((255, 255, 255)) - 1.0).abs() < 1e-9);
        assert!((contrast_with_white((0, 0, 0)) - 21.0).abs() < 1e-9);
    }

    #[test]
    fn only_cells_on_the_terminal_background_change() {
        use ratatui::layout::Rect;
        use ratatui::style::Style;
        let mut buf = Buffer::empty(Rect::new(0, 0, 3, 1));
        buf.set_string(0, 0, "a", Style::new().fg(Color::Yellow));
        buf.set_string(1, 0, "b", Style::new().fg(Color::Black).bg(Color::Yellow));
        buf.set_string(2, 0, "c", Style::new());
        let before = buf.clone();
        apply(&mut buf, Theme::Dark);
        assert_eq!(buf, before);
        apply(&mut buf, Theme::Light);
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(130));
        assert_eq!(
            (buf[(1, 0)].fg, buf[(1, 0)].bg),
            (Color::Black, Color::Yellow)
        );
        assert_eq!(buf[(2, 0)].fg, Color::Reset);
    }
}
