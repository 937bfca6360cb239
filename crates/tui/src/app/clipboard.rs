//! OSC 52: putting text on the clipboard of the terminal the user sits at, even over SSH. The
//! bytes are built here (pure, tested) and written by the event loop, the terminal's owner.
//!
//! Inside tmux (`$TMUX` set) two copies go out, as Neovim's and helix's users are told to set
//! up one or the other: the plain sequence, which tmux takes when `set-clipboard` is `on` (it
//! keeps a paste buffer and forwards it to the outer terminal), and the same sequence in tmux's
//! DCS passthrough (`ESC P tmux; …`, each ESC doubled), which reaches the outer terminal when
//! `allow-passthrough` is `on`. tmux's defaults (`set-clipboard external`, passthrough off)
//! drop both: the app cannot tell, so the confirmation says what tmux needs.

use std::io::{self, Write};

use base64::Engine as _;

/// Most text one copy carries: its OSC 52 sequence is then about 100 KB, the size terminals
/// are known to accept (hterm/ChromeOS stops at 100 000 bytes; others are larger or unlimited).
/// A larger answer is refused rather than cut: half a code block on the clipboard is worse than
/// none.
pub(crate) const MAX_COPY_BYTES: usize = 74_000;

/// `ESC ] 52 ; c ; BASE64 BEL`: the clipboard selection (`c`) set to `text`.
pub(crate) fn osc52(text: &str) -> Vec<u8> {
    let mut out = b"\x1b]52;c;".to_vec();
    out.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(text)
            .as_bytes(),
    );
    out.push(0x07);
    out
}

/// `sequence` wrapped in tmux's passthrough: `ESC P tmux;` + the sequence with every ESC
/// doubled + `ESC \`.
pub(crate) fn tmux_passthrough(sequence: &[u8]) -> Vec<u8> {
    let mut out = b"\x1bPtmux;".to_vec();
    for &b in sequence {
        if b == 0x1b {
            out.push(0x1b);
        }
        out.push(b);
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// Everything written to copy `text`: inside tmux, the plain sequence and its passthrough form.
pub(crate) fn sequences(text: &str, in_tmux: bool) -> Vec<u8> {
    let plain = osc52(text);
    if !in_tmux {
        return plain;
    }
    let mut out = tmux_passthrough(&plain);
    out.extend_from_slice(&plain);
    out
}

/// Whether the app runs inside tmux.
pub(crate) fn in_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

/// Write the copy to the terminal (the event loop calls this: it owns the terminal).
pub(crate) fn write(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(&sequences(text, in_tmux()))?;
    out.flush()
}

/// `1,204`: counts in confirmations.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_is_the_base64_of_the_text_between_the_introducer_and_bel() {
        assert_eq!(osc52("hi\n"), b"\x1b]52;c;aGkK\x07".to_vec());
        // UTF-8 is encoded as bytes.
        assert_eq!(osc52("é"), b"\x1b]52;c;w6k=\x07".to_vec());
        assert_eq!(osc52(""), b"\x1b]52;c;\x07".to_vec());
    }

    #[test]
    fn tmux_passthrough_doubles_every_escape_and_ends_with_st() {
        assert_eq!(
            tmux_passthrough(b"\x1b]52;c;aGkK\x07"),
            b"\x1bPtmux;\x1b\x1b]52;c;aGkK\x07\x1b\\".to_vec()
        );
        assert_eq!(sequences("hi\n", false), osc52("hi\n"));
        let both = sequences("hi\n", true);
        assert!(both.starts_with(b"\x1bPtmux;\x1b\x1b]52;c;aGkK\x07\x1b\\"));
        assert!(both.ends_with(&osc52("hi\n")));
    }

    #[test]
    fn the_cap_keeps_the_sequence_within_100_kb() {
        let text = "x".repeat(MAX_COPY_BYTES);
        assert!(osc52(&text).len() <= 100_000, "{}", osc52(&text).len());
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1204), "1,204");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
