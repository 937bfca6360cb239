//! The sanitizer's machine: a `vte` parser (the state machine terminals use) fed the text as it
//! arrives, so an escape sequence split across tokens is still removed whole, and the text fed
//! in pieces comes out exactly as the same text fed at once.

use vte::{Params, Parser, Perform};

/// One per stream of model text (an assistant turn's answer): the parser remembers a sequence
/// left open at the end of a push and drops its tail from the next one.
pub struct StreamSanitizer {
    parser: Parser,
    /// The parser is surely in its ground state (not inside a sequence): text without any
    /// control can then be copied as is. False when unsure.
    ground: bool,
}

impl Default for StreamSanitizer {
    fn default() -> Self {
        StreamSanitizer {
            parser: Parser::new(),
            ground: true,
        }
    }
}

impl std::fmt::Debug for StreamSanitizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamSanitizer")
    }
}

impl StreamSanitizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// `text` as it may be shown, given everything pushed before it.
    pub fn push(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.push_into(text, &mut out);
        out
    }

    /// Appends the printable part of `text` to `out`.
    pub fn push_into(&mut self, text: &str, out: &mut String) {
        // Most tokens: in ground state, text without controls prints exactly as it is.
        if self.ground && !text.chars().any(super::is_unsafe) {
            out.push_str(text);
            return;
        }
        let mut sink = Sink {
            out,
            printed_last: false,
        };
        let bytes = text.as_bytes();
        let mut from = 0;
        // vte reads C1 controls (U+0080..U+009F) as single controls; a terminal may read
        // U+009B as CSI and U+009D as OSC, so each is fed as its 7-bit form (ESC + byte - 0x40)
        // and what follows it is removed with it.
        for at in memchr::memchr2_iter(0x1B, 0xC2, bytes) {
            if bytes[at] == 0x1B {
                self.parser.advance(&mut sink, &bytes[from..=at]);
                // ESC leaves the ground state without telling the sink.
                sink.printed_last = false;
                from = at + 1;
                continue;
            }
            let Some(&next) = bytes.get(at + 1) else {
                break;
            };
            if (0x80..=0x9F).contains(&next) {
                self.parser.advance(&mut sink, &bytes[from..at]);
                self.parser.advance(&mut sink, &[0x1B, next - 0x40]);
                sink.printed_last = false;
                from = at + 2;
            }
        }
        self.parser.advance(&mut sink, &bytes[from..]);
        // vte prints only in ground state: a print as the last event means it is there now.
        self.ground = sink.printed_last;
    }
}

/// Receives what the parser recognized: text is kept, everything else dropped.
struct Sink<'a> {
    out: &'a mut String,
    /// The last event was a print (so the parser is in ground state).
    printed_last: bool,
}

impl Perform for Sink<'_> {
    fn print(&mut self, c: char) {
        self.printed_last = true;
        // vte prints DEL and bidi controls like letters.
        if !super::is_unsafe(c) {
            self.out.push(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        // Also called inside a CSI: no proof of the ground state.
        self.printed_last = false;
        if matches!(byte, b'\n' | b'\t') {
            self.out.push(byte as char);
        }
    }

    // Sequences (CSI, OSC, DCS and its payload, ESC forms; SOS/PM/APC strings are swallowed
    // by the parser itself) are dropped whole.
    fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        self.printed_last = false;
    }
    fn osc_dispatch(&mut self, _: &[&[u8]], _: bool) {
        self.printed_last = false;
    }
    fn esc_dispatch(&mut self, _: &[u8], _: bool, _: u8) {
        self.printed_last = false;
    }
    fn hook(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        self.printed_last = false;
    }
    fn put(&mut self, _: u8) {
        self.printed_last = false;
    }
    fn unhook(&mut self) {
        self.printed_last = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split_all(text: &str, cuts: &[usize]) -> String {
        let mut s = StreamSanitizer::new();
        let mut out = String::new();
        let mut from = 0;
        for &c in cuts {
            s.push_into(&text[from..c], &mut out);
            from = c;
        }
        s.push_into(&text[from..], &mut out);
        out
    }

    #[test]
    fn a_sequence_split_across_pushes_is_removed_whole() {
        let mut s = StreamSanitizer::new();
        let shown: String = ["Hello \u{1b}", "[3", "1mred", " world"]
            .iter()
            .map(|t| s.push(t))
            .collect();
        assert_eq!(shown, "Hello red world");
        let mut s = StreamSanitizer::new();
        let shown: String = ["a\u{1b}]0;ti", "tle\u{1b}", "\\b"]
            .iter()
            .map(|t| s.push(t))
            .collect();
        assert_eq!(shown, "ab");
    }

    #[test]
    fn c1_sequences_are_removed_with_their_parameters() {
        let mut s = StreamSanitizer::new();
        assert_eq!(s.push("x\u{9b}3"), "x");
        assert_eq!(s.push("1my \u{9d}0;title\u{9c}z \u{90}q\u{9c}k"), "y z k");
        // ESC \ and BEL end an OSC opened by its C1 form too.
        assert_eq!(s.push("\u{9d}8;;u\u{7}l\u{85}"), "l");
    }

    #[test]
    fn one_at_every_boundary_equals_whole() {
        let text = "Hi \u{1b}[1;31mred\u{1b}[0m \u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{7} \
                    \u{9b}2J\u{202e}evil\u{2066} 北京\r\n\u{1b}P1;2q#\u{1b}\\\u{1b}_apc\u{9c}end\u{7f}";
        let whole = split_all(text, &[]);
        assert_eq!(whole, "Hi red link evil 北京\nend");
        for (i, _) in text.char_indices() {
            assert_eq!(split_all(text, &[i]), whole, "split at {i}");
        }
        let every: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).collect();
        assert_eq!(split_all(text, &every), whole);
    }

    fn hostile() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "\u{1b}", "[", "]", "P", "X", "^", "_", "\\", "\u{7}", "\u{9b}", "\u{9c}", "\u{9d}",
            "\u{90}", "\u{98}", "\u{9e}", "\u{9f}", "\u{85}", "0", "1", ";", ":", "?", "m", "H",
            "a", "é", "北", "\n", "\t", "\r", "\u{18}", "\u{1a}", "\u{7f}", "\u{202e}", " ",
        ]);
        prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn any_split_equals_whole(text in hostile(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8)) {
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut cuts: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
            cuts.sort_unstable();
            let whole = split_all(&text, &[]);
            prop_assert_eq!(split_all(&text, &cuts), whole.clone());
            prop_assert_eq!(crate::sanitize::for_terminal(&text).into_owned(), whole.clone());
            // Nothing that reaches the screen can start a sequence or reorder text.
            prop_assert!(!whole.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "control kept");
            prop_assert!(!whole.contains('\u{202e}'), "bidi override kept");
        }

        #[test]
        fn plain_text_passes_unchanged(text in "[a-zA-Z0-9 北京é\n\t.,;:\\[\\]]{0,80}") {
            prop_assert_eq!(split_all(&text, &[]), text);
        }
    }
}
