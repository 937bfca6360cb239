//! Pasted text: line endings made `\n`, escape sequences dropped, and a cap on how large a draft
//! a paste may make.

use kimi_protocol::sanitize;

/// Largest draft (input box or argument editor) a paste may produce: 1 MiB. Far more than a
/// Kimi K2 context holds (128K tokens is about 0.5 MB of text), and small enough that the input
/// box stays responsive: it re-wraps the whole draft on every edit.
pub const MAX_DRAFT_BYTES: usize = 1024 * 1024;

/// `text` as it goes into a text box: `\r\n` and lone `\r` become `\n` (terminals send Enter
/// as `\r`), then whatever else could drive the terminal is removed.
pub(crate) fn clean(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    sanitize::for_terminal(&text).into_owned()
}

/// `Err` when a paste of `pasted` bytes into a draft of `draft` bytes would pass
/// [`MAX_DRAFT_BYTES`]; its text says both sizes and the cap. Checked before any work on the
/// text, so a huge paste costs only its length.
pub(crate) fn check_size(pasted: usize, draft: usize) -> Result<(), TooLarge> {
    if pasted.saturating_add(draft) <= MAX_DRAFT_BYTES {
        return Ok(());
    }
    Err(TooLarge { pasted, draft })
}

/// A paste that would make the draft larger than [`MAX_DRAFT_BYTES`]; the notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "Paste not inserted: {}{} is over the {} limit for a draft. Nothing was changed; put large text in a file and let a tool read it.",
    size(*pasted),
    draft_note(*draft),
    size(MAX_DRAFT_BYTES)
)]
pub(crate) struct TooLarge {
    pub(crate) pasted: usize,
    pub(crate) draft: usize,
}

fn draft_note(draft: usize) -> String {
    if draft > 0 {
        format!(" (the draft already holds {})", size(draft))
    } else {
        String::new()
    }
}

/// `10.0 MB`, `1 MiB`, `512 bytes`: sizes as people read them.
fn size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    match bytes {
        b if b == MIB => "1 MiB".to_owned(),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= 1024 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_become_newlines() {
        assert_eq!(clean("a\r\nb\rc\nd\r"), "a\nb\nc\nd\n");
        assert_eq!(clean("x\u{1b}[31my\r\n"), "xy\n");
    }

    #[test]
    fn the_cap_counts_the_draft_too() {
        assert_eq!(check_size(MAX_DRAFT_BYTES, 0), Ok(()));
        assert_eq!(check_size(MAX_DRAFT_BYTES - 10, 10), Ok(()));
        let e = check_size(10_000_000, 0).expect_err("10 MB").to_string();
        assert!(
            e.starts_with("Paste not inserted: 9.5 MiB is over the 1 MiB limit"),
            "{e}"
        );
        let e = check_size(2048, MAX_DRAFT_BYTES - 1024)
            .expect_err("draft + paste")
            .to_string();
        assert!(
            e.contains("2.0 KiB (the draft already holds 1023.0 KiB)"),
            "{e}"
        );
    }
}
