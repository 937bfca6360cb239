//! Model text made safe for a terminal: no escape sequence, control character or bidi override
//! from the model can move the cursor, recolour, hide or fake text. `visible` shows such
//! characters as escapes instead, for the inspector.

use std::borrow::Cow;

/// Characters that reorder text visually (Trojan Source): embeddings, overrides, isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// `s` with escape sequences removed whole (CSI, OSC, and two-byte ESC forms), other control
/// characters and bidi controls dropped; newlines and tabs kept.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.peek() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    chars.next();
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' {
                            break;
                        }
                        if n == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
        } else if !is_unsafe(c) {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` with every control, bidi and escape character written as a visible escape (`\x1b`,
/// `\r`, `\u{202e}`); newlines stay newlines.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_removed_whole() {
        assert_eq!(for_terminal("a\u{1b}[31mred\u{1b}[0m b"), "ared b");
        assert_eq!(for_terminal("x\u{1b}]0;title\u{7}y"), "xy");
        assert_eq!(
            for_terminal("x\u{1b}]8;;http://e\u{1b}\\link\u{1b}]8;;\u{1b}\\y"),
            "xlinky"
        );
        assert_eq!(for_terminal("cr\rover"), "crover");
        assert_eq!(for_terminal("\u{202e}evil\u{2066}"), "evil");
        assert_eq!(for_terminal("c1\u{9b}31m"), "c131m");
        assert_eq!(
            for_terminal("keep\ttabs\nand lines 北京"),
            "keep\ttabs\nand lines 北京"
        );
        assert!(matches!(for_terminal("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn visible_shows_what_was_hidden() {
        assert_eq!(
            visible("a\u{1b}[31m\r\u{202e}b\n"),
            "a\\x1b[31m\\r\\u{202e}b\n"
        );
        assert_eq!(visible("\u{7}"), "\\x07");
    }
}
