//! Which characters do not print visibly, by class rather than by list: controls, format
//! characters (zero-width, bidi, Unicode tags), private-use, unassigned and surrogate code points,
//! line/paragraph separators, spaces other than U+0020, default-ignorable fillers and variation
//! selectors, and combining marks with no base to sit on (or stacked past a few). A text shown
//! with every such character escaped cannot hide part of itself.

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_width::UnicodeWidthChar;

/// Combining marks allowed on one base before the rest are escaped: enough for real scripts
/// (Vietnamese, Devanagari clusters), too few to smear text over its neighbours.
const MAX_MARKS: u8 = 4;

/// Default-ignorable or blank-looking code points that are not Cc/Cf/Co/Cn/Z* and so need
/// naming: Hangul fillers, the combining grapheme joiner, Khmer inherent vowels, Mongolian
/// variation selectors, the braille blank.
fn blank_or_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'
            ..='\u{180F}' | '\u{2800}' | '\u{3164}' | '\u{FFA0}'
    )
}

fn variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

/// Reads a text character by character and says which ones would not print visibly; marks
/// depend on what came before them, hence the state.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scanner {
    /// The previous character is a visible base a combining mark can sit on.
    base: bool,
    /// Marks already on that base.
    marks: u8,
}

impl Scanner {
    /// Whether `c`, after the characters already fed, would not print visibly. `\n` and `\t`
    /// count as visible (callers decide how to show them).
    pub(crate) fn hidden(&mut self, c: char) -> bool {
        if c.is_ascii() {
            let printable = (' '..='~').contains(&c);
            self.base = printable && c != ' ';
            self.marks = 0;
            return !printable && c != '\n' && c != '\t';
        }
        use GeneralCategory::*;
        match get_general_category(c) {
            Control | Format | PrivateUse | Unassigned | Surrogate | LineSeparator
            | ParagraphSeparator | SpaceSeparator => self.invisible(),
            _ if blank_or_ignorable(c) => self.invisible(),
            NonspacingMark | EnclosingMark => self.mark(c),
            // Zero-width letters (Hangul medial vowels) combine like marks.
            _ if c.width() == Some(0) => self.mark(c),
            _ => {
                self.base = true;
                self.marks = 0;
                false
            }
        }
    }

    fn invisible(&mut self) -> bool {
        self.base = false;
        self.marks = 0;
        true
    }

    fn mark(&mut self, c: char) -> bool {
        if variation_selector(c) {
            // Text/emoji presentation (VS15/VS16) once right after a base is how emoji are
            // written; any other selector is a hidden channel (one byte per selector).
            let ok = self.base && self.marks == 0 && matches!(c, '\u{FE0E}' | '\u{FE0F}');
            if ok {
                self.marks = 1;
            }
            return !ok;
        }
        if self.base && self.marks < MAX_MARKS {
            self.marks += 1;
            false
        } else {
            true
        }
    }
}

/// Whether any character of `s` would not print visibly.
pub fn any_hidden(s: &str) -> bool {
    if s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t')
    {
        return false;
    }
    let mut scan = Scanner::default();
    s.chars().any(|c| scan.hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden_chars(s: &str) -> Vec<char> {
        let mut scan = Scanner::default();
        s.chars().filter(|&c| scan.hidden(c)).collect()
    }

    #[test]
    fn classes_not_lists() {
        // Zero-width (Cf), tags (Cf and Cn), private use, unassigned, separators, odd spaces.
        for c in [
            '\u{200B}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{E0000}',
            '\u{E0002}',
            '\u{E000}',
            '\u{F8FF}',
            '\u{F0000}',
            '\u{10FFFD}',
            '\u{0378}',
            '\u{2065}',
            '\u{FFF0}',
            '\u{2028}',
            '\u{2029}',
            '\u{00A0}',
            '\u{3000}',
            '\u{202E}',
            '\u{061C}',
            '\u{00AD}',
            '\u{3164}',
            '\u{115F}',
            '\u{034F}',
            '\u{2800}',
            '\u{0085}',
        ] {
            assert_eq!(hidden_chars(&format!("a{c}b")), vec![c], "{:04x}", c as u32);
        }
    }

    #[test]
    fn marks_need_a_base_and_stop_stacking() {
        assert!(hidden_chars("e\u{0301}").is_empty(), "é as e + acute");
        assert!(hidden_chars("Tiếng Việt").is_empty());
        assert!(hidden_chars("नमस्ते").is_empty());
        assert!(hidden_chars("한국어").is_empty());
        assert_eq!(hidden_chars("\u{0301}x"), vec!['\u{0301}']);
        assert_eq!(hidden_chars(" \u{0301}"), vec!['\u{0301}']);
        let zalgo = format!("a{}", "\u{0301}".repeat(7));
        assert_eq!(hidden_chars(&zalgo).len(), 3);
        // Emoji presentation once after a base; other selectors always.
        assert!(hidden_chars("✔\u{FE0F}").is_empty());
        assert_eq!(hidden_chars("a\u{FE01}"), vec!['\u{FE01}']);
        assert_eq!(hidden_chars("a\u{E0100}"), vec!['\u{E0100}']);
        assert_eq!(hidden_chars("✔\u{FE0F}\u{FE0F}"), vec!['\u{FE0F}']);
    }

    #[test]
    fn plain_text_is_visible() {
        assert!(!any_hidden("ls -la\n\t{\"a\": 1}"));
        assert!(!any_hidden("北京 café 😀 Ελληνικά עברית"));
        assert!(any_hidden("ls -la\u{200B}; rm -rf ~"));
    }
}
