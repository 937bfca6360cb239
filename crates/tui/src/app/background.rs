//! `theme = "auto"`: is the terminal's background light? Asked with OSC 11 (`ESC ] 11 ; ? BEL`,
//! answered `ESC ] 11 ; rgb:RRRR/GGGG/BBBB` + BEL or ST), followed by a device-attributes query
//! (`ESC [ c`) that every terminal answers: its reply ends the wait at once where OSC 11 is not
//! supported, the way crossterm's keyboard-protocol probe does. The wait is capped at
//! [`QUERY_WAIT`]; without an answer `COLORFGBG` decides, then dark.
//!
//! Read straight from the terminal with `poll`, before crossterm's reader starts, so the replies
//! never reach the app as keys. A terminal slower than the cap (a long SSH hop) gets the
//! fallback; keys typed in those 100 ms at startup are not kept.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::ui::theme::{Theme, luminance};

/// The longest startup waits for the terminal's answer.
pub(crate) const QUERY_WAIT: Duration = Duration::from_millis(100);

/// The colour in an OSC 11 reply (anywhere in `bytes`): `rgb:` with 1 to 4 hex digits per
/// channel, scaled to 8 bits.
pub(crate) fn parse_osc11(bytes: &[u8]) -> Option<(u8, u8, u8)> {
    const HEAD: &[u8] = b"\x1b]11;";
    let start = bytes.windows(HEAD.len()).position(|w| w == HEAD)? + HEAD.len();
    let rest = &bytes[start..];
    let end = rest.iter().position(|&b| b == 0x07 || b == 0x1b)?;
    let body = std::str::from_utf8(&rest[..end]).ok()?;
    let spec = body
        .strip_prefix("rgb:")
        .or_else(|| body.strip_prefix("rgba:"))?;
    let mut channels = spec.split('/').map(|h| {
        if h.is_empty() || h.len() > 4 {
            return None;
        }
        let v = u32::from_str_radix(h, 16).ok()?;
        let max = (1u32 << (4 * h.len())) - 1;
        Some(((v * 255 + max / 2) / max) as u8)
    });
    Some((channels.next()??, channels.next()??, channels.next()??))
}

/// Whether a background of this colour is light: black text reads better on it than white
/// (relative luminance above the point where both contrasts are equal).
pub(crate) fn is_light(rgb: (u8, u8, u8)) -> bool {
    luminance(rgb) > 0.179
}

/// `COLORFGBG` (rxvt, Konsole, some others): `FG;BG` or `FG;X;BG` with palette indices; a
/// background of 7 (light grey) or 9 to 15 is light.
pub(crate) fn from_colorfgbg(value: &str) -> Option<Theme> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    Some(match bg {
        7 | 9..=15 => Theme::Light,
        _ => Theme::Dark,
    })
}

/// The theme for `auto`: the terminal's answer, else `COLORFGBG`, else dark.
pub(crate) fn detect() -> Theme {
    if let Some(rgb) = query() {
        let theme = if is_light(rgb) {
            Theme::Light
        } else {
            Theme::Dark
        };
        tracing::info!(
            ?rgb,
            theme = theme.name(),
            "terminal background from OSC 11"
        );
        return theme;
    }
    let fallback = std::env::var("COLORFGBG")
        .ok()
        .and_then(|v| from_colorfgbg(&v))
        .unwrap_or(Theme::Dark);
    tracing::info!(
        theme = fallback.name(),
        "no OSC 11 answer: COLORFGBG or dark"
    );
    fallback
}

/// Whether `bytes` holds the end of a primary device attributes reply (`ESC [ ? … c`).
fn has_da1(bytes: &[u8]) -> bool {
    let Some(at) = bytes.windows(3).position(|w| w == b"\x1b[?") else {
        return false;
    };
    bytes[at + 3..]
        .iter()
        .find(|b| !(b.is_ascii_digit() || **b == b';'))
        .is_some_and(|&b| b == b'c')
}

/// Ask the terminal (in raw mode, stdin a terminal) for its background colour.
fn query() -> Option<(u8, u8, u8)> {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
        return None;
    }
    let mut out = io::stdout();
    out.write_all(b"\x1b]11;?\x07\x1b[c").ok()?;
    out.flush().ok()?;
    let deadline = Instant::now() + QUERY_WAIT;
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !has_da1(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut fds = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, its count, a timeout in ms.
        let ready = unsafe { libc::poll(&mut fds, 1, left.as_millis().max(1) as libc::c_int) };
        if ready < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if ready <= 0 {
            break;
        }
        // SAFETY: reads at most buf.len() bytes into buf, which outlives the call.
        let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        got.extend_from_slice(&buf[..n as usize]);
    }
    parse_osc11(&got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc11_replies_parse_with_bel_or_st_and_any_digit_count() {
        assert_eq!(
            parse_osc11(b"\x1b]11;rgb:ffff/ffff/ffff\x07"),
            Some((255, 255, 255))
        );
        assert_eq!(
            parse_osc11(b"\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\\x1b[?62;22c"),
            Some((30, 30, 46))
        );
        assert_eq!(parse_osc11(b"\x1b]11;rgb:f/8/0\x07"), Some((255, 136, 0)));
        assert_eq!(
            parse_osc11(b"\x1b]11;rgb:fd/f6/e3\x07"),
            Some((253, 246, 227))
        );
        assert_eq!(
            parse_osc11(b"\x1b]11;rgba:0000/0000/0000/ffff\x07"),
            Some((0, 0, 0))
        );
        // Only the device attributes came back: no OSC 11 support.
        assert_eq!(parse_osc11(b"\x1b[?1;2c"), None);
        assert_eq!(parse_osc11(b"\x1b]11;rgb:zz/00/00\x07"), None);
        assert_eq!(parse_osc11(b"\x1b]11;rgb:ffff/ffff"), None);
        assert_eq!(parse_osc11(b"\x1b]11;#ffffff\x07"), None);
    }

    #[test]
    fn light_and_dark_backgrounds() {
        assert!(is_light((255, 255, 255)));
        assert!(is_light((253, 246, 227))); // Solarized light
        assert!(!is_light((0, 43, 54))); // Solarized dark
        assert!(!is_light((30, 30, 46)));
        assert!(!is_light((0, 0, 0)));
    }

    #[test]
    fn colorfgbg_names_the_background_last() {
        assert_eq!(from_colorfgbg("0;15"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("15;0"), Some(Theme::Dark));
        assert_eq!(from_colorfgbg("0;default;7"), Some(Theme::Light));
        assert_eq!(from_colorfgbg("12;8"), Some(Theme::Dark));
        assert_eq!(from_colorfgbg("default;default"), None);
        assert_eq!(from_colorfgbg(""), None);
    }

    #[test]
    fn the_wait_ends_at_the_device_attributes_reply() {
        assert!(has_da1(b"\x1b]11;rgb:0/0/0\x07\x1b[?62;22c"));
        assert!(has_da1(b"\x1b[?1;2c"));
        assert!(!has_da1(b"\x1b[?62;22"));
        assert!(!has_da1(b"\x1b]11;rgb:0/0/0\x07"));
    }
}
