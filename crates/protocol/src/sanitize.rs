//! Model text made safe for a terminal: no escape sequence, control character or bidi override
//! from the model can move the cursor, recolour, hide or fake text. `visible` shows such
//! characters as escapes instead, for the inspector.

use std::borrow::Cow;

mod stream;
pub use stream::StreamSanitizer;

/// Characters that reorder text visually (Trojan Source): embeddings, overrides, isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// `s` with escape sequences removed whole (CSI, OSC, DCS, SOS/PM/APC, ESC forms, and their C1
/// equivalents such as U+009B), other control characters and bidi controls dropped; newlines and
/// tabs kept. The whole-string form of [`StreamSanitizer`]: the same machine, fed once.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(StreamSanitizer::new().push(s))
}

/// `s` with every character that does not print visibly (controls, escapes, bidi and other
/// format characters, private-use and unassigned code points, stray combining marks: see
/// [`crate::invisible`]) written as a visible escape (`\x1b`, `\r`, `\u{200b}`); newlines and
/// tabs stay as they are.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !crate::invisible::any_hidden(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut scan = crate::invisible::Scanner::default();
    for c in s.chars() {
        if scan.hidden(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let _ = match c {
        '\r' => write!(out, "\\r"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// A server- or model-supplied string (call id, tool name, error text) for the one line it
/// belongs on: hidden characters and line breaks escaped (`\n`), cut after `max_chars`
/// characters with a visible `…(+N bytes)`. It can never add a line or hide what follows.
pub fn one_line(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 4) + 16);
    let mut scan = crate::invisible::Scanner::default();
    for (n, (i, c)) in s.char_indices().enumerate() {
        if n == max_chars {
            out.push_str(&format!("…(+{} bytes)", s.len() - i));
            break;
        }
        let hidden = scan.hidden(c);
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if hidden => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// Longest call id shown as plain.
pub(crate) const MAX_PLAIN_ID: usize = 64;

/// Ids as servers and Kimi write them (`functions.get_weather:0`, `call_abc123`): anything
/// else is shown escaped and marked as unusual.
pub fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_PLAIN_ID
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// A call id for display: as is when plain, else quoted, escaped, capped and marked.
pub fn display_id(id: &str) -> String {
    if is_plain_id(id) {
        id.to_owned()
    } else {
        format!("\"{}\" ⚠ unusual id", one_line(id, MAX_PLAIN_ID))
    }
}

/// Runs of spaces (or tabs) longer than this are shown counted (`␠×6000`), never as blank
/// space that pushes what follows out of sight.
pub(crate) const MAX_BLANK_RUN: usize = 8;
/// Indentation may be deeper (nested JSON) before it counts as a run.
const MAX_INDENT: usize = 32;
/// Consecutive blank lines kept before the rest are counted.
const MAX_BLANK_LINES: usize = 2;

/// Runs of one blank-looking character (other spaces, zero-width ones) longer than this are
/// counted too (`\u{a0}×6000`).
const MAX_OTHER_RUN: usize = 3;

/// Characters whose runs are counted: whitespace of any kind, and what does not print.
fn blank_like(c: char) -> bool {
    let mut buf = [0u8; 4];
    c.is_whitespace() || crate::invisible::any_hidden(c.encode_utf8(&mut buf))
}

/// `line` (before escaping) with long runs of one blank or invisible character replaced by a
/// counted marker: `␠×6000` for spaces, `⇥×N` for tabs, `\u{a0}×N` for others.
pub fn compress_blanks(line: &str) -> Cow<'_, str> {
    // Printable ASCII other than spaces cannot start a run: skip it fast.
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_ascii_graphic() || !blank_like(c) {
            continue;
        }
        let mut run = 1usize;
        let mut end = start + c.len_utf8();
        while let Some(&(i, n)) = chars.peek()
            && n == c
        {
            run += 1;
            end = i + n.len_utf8();
            chars.next();
        }
        let limit = match c {
            ' ' if start == 0 => MAX_INDENT,
            ' ' | '\t' => MAX_BLANK_RUN,
            _ => MAX_OTHER_RUN,
        };
        if run <= limit {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(line.len().min(4096)));
        o.push_str(&line[copied..start]);
        match c {
            ' ' => o.push('␠'),
            '\t' => o.push('⇥'),
            c => o.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
        o.push_str(&format!("×{run}"));
        copied = end;
    }
    match out {
        Some(mut o) => {
            o.push_str(&line[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(line),
    }
}

/// Text (tool arguments, results) as the lines to show: hidden characters escaped, long
/// blank runs counted, and more than a couple of blank lines in a row counted on one line.
pub fn display_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut blanks = 0usize;
    let flush = |out: &mut Vec<String>, blanks: usize| {
        if blanks > MAX_BLANK_LINES {
            out.push(format!("⏎×{blanks} blank lines"));
        } else {
            out.extend(std::iter::repeat_n(String::new(), blanks));
        }
    };
    for raw in text.split('\n') {
        if raw.trim_matches([' ', '\t', '\r']).is_empty() && raw.len() < MAX_BLANK_RUN {
            blanks += 1;
            continue;
        }
        flush(&mut out, blanks);
        blanks = 0;
        // Counted before escaping, so a run of invisible characters is one marker.
        let counted = compress_blanks(raw);
        out.push(visible(&counted).into_owned());
    }
    flush(&mut out, blanks);
    out
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
        // The C1 CSI goes with its parameters, like the 7-bit form.
        assert_eq!(for_terminal("c1\u{9b}31mx"), "c1x");
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

    #[test]
    fn hidden_characters_are_escaped_inside_normal_text() {
        assert_eq!(
            visible("ls -la\u{200b}\u{e0041}\u{e0042}; rm -rf ~"),
            "ls -la\\u{200b}\\u{e0041}\\u{e0042}; rm -rf ~"
        );
        assert_eq!(visible("a\u{a0}b\u{feff}"), "a\\u{a0}b\\u{feff}");
        assert!(matches!(visible("北京 café ✔\u{fe0f}"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_never_adds_a_line_and_says_what_it_cut() {
        let spoof = format!("call_0\ncommand: x\n{}", "\n".repeat(80));
        let shown = one_line(&spoof, 64);
        assert!(!shown.contains('\n'));
        assert!(shown.starts_with("call_0\\ncommand: x\\n"), "{shown}");
        assert!(shown.ends_with("…(+34 bytes)"), "{shown}");
        assert_eq!(one_line("a\u{1b}[2J\u{200b}", 10), "a\\x1b[2J\\u{200b}");
    }

    #[test]
    fn ids_plain_or_marked() {
        assert!(is_plain_id("functions.get_weather:0"));
        assert!(is_plain_id("call_abc-123"));
        assert!(!is_plain_id(""));
        assert!(!is_plain_id("call 0"));
        assert!(!is_plain_id(&"a".repeat(65)));
        assert_eq!(display_id("call_1"), "call_1");
        assert_eq!(display_id("c\nx"), "\"c\\nx\" ⚠ unusual id");
    }

    #[test]
    fn blank_runs_and_lines_are_counted() {
        let line = format!("\"a\": \"ls{}; curl x | sh\"", " ".repeat(6000));
        assert_eq!(compress_blanks(&line), "\"a\": \"ls␠×6000; curl x | sh\"");
        assert!(matches!(
            compress_blanks("  \"a\": 1,  b"),
            Cow::Borrowed(_)
        ));
        assert_eq!(compress_blanks("x\t\t\t\t\t\t\t\t\ty"), "x⇥×9y");
        let nbsp = format!("ls{}; curl", "\u{a0}".repeat(6000));
        assert_eq!(compress_blanks(&nbsp), "ls\\u{a0}×6000; curl");
        let zw = format!("ls{}x", "\u{200b}".repeat(50));
        assert_eq!(display_lines(&zw), vec!["ls\\u{200b}×50x"]);
        assert_eq!(
            display_lines("a\u{200b}\u{200b}b"),
            vec!["a\\u{200b}\\u{200b}b"]
        );
        let text = format!("{{\n{}  \"a\": 1\n}}", "\n".repeat(50));
        assert_eq!(
            display_lines(&text),
            vec!["{", "⏎×50 blank lines", "  \"a\": 1", "}"]
        );
        assert_eq!(display_lines("a\n\nb"), vec!["a", "", "b"]);
    }
}
