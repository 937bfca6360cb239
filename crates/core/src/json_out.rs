//! JSON that is safe to `cat` to a terminal: besides what serde_json escapes (C0, `"`, `\`),
//! DEL, C1 controls (U+0080-U+009F, which some terminals obey as CSI/OSC), U+2028/U+2029 and
//! every format character (Unicode category Cf: bidi controls, zero-width characters, tags) are
//! written as `\uXXXX` (surrogate pairs above the BMP). The output parses to the same strings.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter, Serializer};

/// Unicode general category Cf (format characters), as of Unicode 16.
const FORMAT_CHARS: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// Whether `c` is written as `\uXXXX` (on top of what serde_json escapes).
pub(crate) fn needs_escape(c: char) -> bool {
    let u = c as u32;
    if u < 0x7F {
        return u < 0x20;
    }
    u <= 0x9F
        || c == '\u{2028}'
        || c == '\u{2029}'
        || FORMAT_CHARS.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

/// `value` as pretty JSON with the escapes above.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, Escaping(PrettyFormatter::new()));
    value.serialize(&mut ser)?;
    utf8(out)
}

/// `value` as compact JSON with the escapes above.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer(&mut out, value)?;
    utf8(out)
}

/// serde_json writes UTF-8; should that ever break, the caller gets an error, not a panic.
fn utf8(out: Vec<u8>) -> serde_json::Result<String> {
    String::from_utf8(out)
        .map_err(|e| serde_json::Error::io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Compact JSON with the escapes above, to a writer.
pub(crate) fn to_writer<W: io::Write, T: Serialize + ?Sized>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = Serializer::with_formatter(w, Escaping(CompactFormatter));
    value.serialize(&mut ser)
}

/// Wraps a formatter: layout from the inner one, string fragments escaped here.
struct Escaping<F>(F);

fn write_escaped<W: ?Sized + io::Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    // serde_json hands over runs without `"`, `\` or C0; all ASCII in them is safe but DEL.
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        if (c as u32) < 0x7F || !needs_escape(c) {
            continue;
        }
        w.write_all(&fragment.as_bytes()[start..i])?;
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            write!(w, "\\u{u:04x}")?;
        }
        start = i + c.len_utf8();
    }
    w.write_all(&fragment.as_bytes()[start..])
}

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if fragment.bytes().all(|b| b < 0x7F) {
            return w.write_all(fragment.as_bytes());
        }
        write_escaped(w, fragment)
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn invisible_and_control_characters_are_escaped_and_round_trip() {
        let hostile = "a\u{1b}]52;c;eA==\u{7}b\u{7f}\u{9b}31m\u{85}\u{202e}evil\u{2066}\u{200b}\
                       \u{2028}\u{2029}\u{feff}\u{ad}\u{e0041}ok é 北京 🙂";
        let v = json!({"content": hostile, "k\u{202e}": [hostile]});
        for text in [
            to_string_pretty(&v).expect("json"),
            to_string(&v).expect("json"),
        ] {
            assert!(
                text.chars()
                    .all(|c| c == '\n' || !(c.is_control() || needs_escape(c))),
                "{text:?}"
            );
            for esc in [
                "\\u001b",
                "\\u007f",
                "\\u009b",
                "\\u0085",
                "\\u202e",
                "\\u2066",
                "\\u200b",
                "\\u2028",
                "\\u2029",
                "\\ufeff",
                "\\u00ad",
                "\\udb40\\udc41",
            ] {
                assert!(text.contains(esc), "{esc} in {text}");
            }
            assert!(text.contains("ok é 北京 🙂"), "{text}");
            let back: Value = serde_json::from_str(&text).expect("parses");
            assert_eq!(back, v);
        }
        // Layout is the inner formatter's.
        assert_eq!(
            to_string_pretty(&json!({"a": [1]})).expect("json"),
            serde_json::to_string_pretty(&json!({"a": [1]})).expect("json")
        );
    }
}
