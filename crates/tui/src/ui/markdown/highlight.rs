//! A small syntax highlighter for code blocks.
//!
//! Why not syntect: its default syntax set takes several MB of memory once loaded and tens of
//! milliseconds to load, and the whole app must stay under 30 MB resident; code in a chat
//! answer only needs keywords, strings, comments, numbers and types to be readable. This is a
//! single linear scan with per-language tables (rust, python, js/ts, sh/bash, json, toml, go,
//! c/c++, and diff), which costs nothing to load, no memory beyond the spans of one block, and
//! is correct on unclosed strings and comments (they run to the end of the code so far, which
//! is what a streaming block needs).

use ratatui::style::Style;
use ratatui::text::Span;

use super::Theme;

/// A language the highlighter knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    Js,
    Sh,
    Json,
    Toml,
    Go,
    C,
    Diff,
}

impl Lang {
    /// The language of a fence info word (`rust`, `py`, `tsx`, …), case-insensitive.
    pub(crate) fn from_info(word: &str) -> Option<Lang> {
        let w = word.to_ascii_lowercase();
        Some(match w.as_str() {
            "rust" | "rs" => Lang::Rust,
            "python" | "py" | "python3" | "py3" | "pyi" => Lang::Python,
            "js" | "javascript" | "jsx" | "mjs" | "cjs" | "ts" | "typescript" | "tsx" | "mts"
            | "cts" => Lang::Js,
            "sh" | "bash" | "zsh" | "shell" | "console" | "shellsession" | "ksh" | "fish" => {
                Lang::Sh
            }
            "json" | "jsonc" | "json5" | "jsonl" => Lang::Json,
            "toml" => Lang::Toml,
            "go" | "golang" => Lang::Go,
            "c" | "h" | "cpp" | "c++" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => Lang::C,
            "diff" | "patch" => Lang::Diff,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Plain,
    Keyword,
    Str,
    Comment,
    Number,
    Type,
}

struct Syntax {
    keywords: &'static [&'static str],
    types: &'static [&'static str],
    /// Literal constants (`true`, `None`, `nil`), shown like numbers.
    literals: &'static [&'static str],
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [u8],
    /// Quotes whose strings may span lines.
    multiline_quotes: &'static [u8],
    /// Quotes without backslash escapes.
    raw_quotes: &'static [u8],
    /// `"""` and `'''` strings.
    triple_quotes: bool,
    /// Identifiers starting with an upper-case letter are types.
    cap_types: bool,
    /// Rust: `'a'` is a char, `'a` a lifetime; `r#"…"#` raw strings.
    rust: bool,
    /// `#` starts a comment only at the start of a word (shell).
    hash_at_word_start: bool,
    /// Shell: `$name`, `${…}`.
    shell_vars: bool,
    /// C: `#include` and friends at the start of a line.
    preprocessor: bool,
    /// JSON: a string followed by `:` is a key, shown as a type.
    json_keys: bool,
    /// TOML: `[table]` headers, shown as types.
    toml_tables: bool,
}

const BASE: Syntax = Syntax {
    keywords: &[],
    types: &[],
    literals: &[],
    line_comments: &[],
    block_comment: None,
    quotes: b"\"'",
    multiline_quotes: b"",
    raw_quotes: b"",
    triple_quotes: false,
    cap_types: false,
    rust: false,
    hash_at_word_start: false,
    shell_vars: false,
    preprocessor: false,
    json_keys: false,
    toml_tables: false,
};

const RUST: Syntax = Syntax {
    keywords: &[
        "as",
        "async",
        "await",
        "break",
        "const",
        "continue",
        "crate",
        "dyn",
        "else",
        "enum",
        "extern",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "match",
        "mod",
        "move",
        "mut",
        "pub",
        "ref",
        "return",
        "self",
        "Self",
        "static",
        "struct",
        "super",
        "trait",
        "type",
        "unsafe",
        "use",
        "where",
        "while",
        "yield",
        "macro_rules",
    ],
    types: &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool", "char", "str",
    ],
    literals: &["true", "false"],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    cap_types: true,
    rust: true,
    multiline_quotes: b"\"",
    ..BASE
};

const PYTHON: Syntax = Syntax {
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield", "match", "case", "self",
    ],
    types: &[
        "int", "float", "str", "bool", "list", "dict", "set", "tuple", "bytes", "object", "type",
    ],
    literals: &["True", "False", "None"],
    line_comments: &["#"],
    triple_quotes: true,
    cap_types: true,
    ..BASE
};

const JS: Syntax = Syntax {
    keywords: &[
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "export",
        "extends",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "let",
        "new",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "async",
        "await",
        "of",
        "static",
        "get",
        "set",
        "type",
        "interface",
        "enum",
        "implements",
        "private",
        "protected",
        "public",
        "readonly",
        "declare",
        "namespace",
        "abstract",
        "as",
        "from",
        "keyof",
    ],
    types: &[
        "string", "number", "boolean", "any", "unknown", "never", "object", "bigint", "symbol",
    ],
    literals: &["true", "false", "null", "undefined", "NaN", "Infinity"],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'`",
    multiline_quotes: b"`",
    cap_types: true,
    ..BASE
};

const SH: Syntax = Syntax {
    keywords: &[
        "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done",
        "in", "function", "select", "return", "exit", "export", "local", "readonly", "declare",
        "set", "unset", "source", "alias", "sudo",
    ],
    line_comments: &["#"],
    hash_at_word_start: true,
    shell_vars: true,
    multiline_quotes: b"\"'",
    raw_quotes: b"'",
    ..BASE
};

const JSON: Syntax = Syntax {
    literals: &["true", "false", "null"],
    quotes: b"\"",
    json_keys: true,
    ..BASE
};

const TOML: Syntax = Syntax {
    literals: &["true", "false", "inf", "nan"],
    line_comments: &["#"],
    triple_quotes: true,
    raw_quotes: b"'",
    toml_tables: true,
    ..BASE
};

const GO: Syntax = Syntax {
    keywords: &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ],
    types: &[
        "bool",
        "byte",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "any",
    ],
    literals: &["true", "false", "nil", "iota"],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: b"\"'`",
    multiline_quotes: b"`",
    raw_quotes: b"`",
    ..BASE
};

const C: Syntax = Syntax {
    keywords: &[
        "auto",
        "break",
        "case",
        "const",
        "continue",
        "default",
        "do",
        "else",
        "enum",
        "extern",
        "for",
        "goto",
        "if",
        "inline",
        "register",
        "restrict",
        "return",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "volatile",
        "while",
        "class",
        "namespace",
        "template",
        "typename",
        "public",
        "private",
        "protected",
        "virtual",
        "override",
        "new",
        "delete",
        "this",
        "throw",
        "try",
        "catch",
        "using",
        "operator",
        "friend",
        "constexpr",
        "noexcept",
        "static_cast",
        "dynamic_cast",
        "reinterpret_cast",
        "const_cast",
        "explicit",
        "mutable",
        "decltype",
        "final",
    ],
    types: &[
        "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
        "size_t", "ssize_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
        "uint32_t", "uint64_t", "std", "string", "vector",
    ],
    literals: &["true", "false", "NULL", "nullptr"],
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    preprocessor: true,
    ..BASE
};

fn syntax(lang: Lang) -> &'static Syntax {
    match lang {
        Lang::Rust => &RUST,
        Lang::Python => &PYTHON,
        Lang::Js => &JS,
        Lang::Sh => &SH,
        Lang::Json => &JSON,
        Lang::Toml => &TOML,
        Lang::Go => &GO,
        Lang::C => &C,
        Lang::Diff => &BASE,
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Length in bytes of the UTF-8 sequence that starts with `b`.
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        _ => 1,
    }
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= hay.len() {
        return None;
    }
    memchr::memmem::find(&hay[from..], needle).map(|p| from + p)
}

fn line_end(b: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &b[from..]).map_or(b.len(), |p| from + p)
}

/// End of a quoted string that starts at `i` (the quote), or of the code if unclosed.
fn string_end(b: &[u8], i: usize, q: u8, multiline: bool, raw: bool) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if !raw => j += 2,
            c if c == q => return j + 1,
            b'\n' if !multiline => return j,
            _ => j += 1,
        }
    }
    b.len()
}

/// End of a number starting at `i`: digits, letters (hex, suffixes, exponents), `_`, a `.`
/// followed by a digit, and a sign after an exponent.
fn number_end(b: &[u8], i: usize) -> usize {
    let hex = b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
    let mut j = i + 1;
    while j < b.len() {
        let c = b[j];
        let fraction = c == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit);
        let exponent_sign = (c == b'+' || c == b'-') && !hex && matches!(b[j - 1], b'e' | b'E');
        if is_ident(c) || fraction || exponent_sign {
            j += 1;
        } else {
            break;
        }
    }
    j
}

/// Split `code` into classified tokens, calling `tok(start, end, class)` in order; the tokens
/// cover the whole code.
fn lex(code: &str, syn: &Syntax, mut tok: impl FnMut(usize, usize, Class)) {
    let b = code.as_bytes();
    let n = b.len();
    let mut i = 0;
    // Only whitespace since the start of the line.
    let mut line_start = true;
    while i < n {
        let c = b[i];
        let start = i;
        let class;
        if let Some((open, close)) = syn.block_comment
            && b[i..].starts_with(open.as_bytes())
        {
            i = find(b, i + open.len(), close.as_bytes()).map_or(n, |p| p + close.len());
            class = Class::Comment;
        } else if syn
            .line_comments
            .iter()
            .any(|p| b[i..].starts_with(p.as_bytes()))
            && (!syn.hash_at_word_start || i == 0 || b[i - 1].is_ascii_whitespace())
        {
            i = line_end(b, i);
            class = Class::Comment;
        } else if syn.preprocessor && c == b'#' && line_start {
            i += 1;
            while i < n && is_ident(b[i]) {
                i += 1;
            }
            class = Class::Keyword;
        } else if syn.toml_tables && c == b'[' && line_start {
            i = line_end(b, i);
            if let Some(p) = memchr::memrchr(b']', &b[start..i]) {
                i = start + p + 1;
            }
            class = Class::Type;
        } else if syn.triple_quotes && (c == b'"' || c == b'\'') && b[i..].starts_with(&[c, c, c]) {
            let close = [c, c, c];
            let mut j = i + 3;
            i = loop {
                match find(b, j, &close) {
                    // An escaped quote does not close the string.
                    Some(p) if c == b'"' && p > 0 && b[p - 1] == b'\\' => j = p + 1,
                    Some(p) => break p + 3,
                    None => break n,
                }
            };
            class = Class::Str;
        } else if syn.rust && c == b'r' && raw_string_end(b, i).is_some() {
            i = raw_string_end(b, i).unwrap_or(n);
            class = Class::Str;
        } else if syn.rust && c == b'\'' {
            match rust_char_end(b, i) {
                Some(end) => {
                    i = end;
                    class = Class::Str;
                }
                None => {
                    // A lifetime or a label.
                    i += 1;
                    while i < n && is_ident(b[i]) {
                        i += 1;
                    }
                    class = Class::Type;
                }
            }
        } else if syn.quotes.contains(&c) {
            let multiline = syn.multiline_quotes.contains(&c);
            let raw = syn.raw_quotes.contains(&c);
            i = string_end(b, i, c, multiline, raw);
            class = if syn.json_keys && is_key(b, i) {
                Class::Type
            } else {
                Class::Str
            };
        } else if syn.shell_vars && c == b'$' && i + 1 < n {
            i += 1;
            if b[i] == b'{' {
                let eol = line_end(b, i);
                i = memchr::memchr(b'}', &b[i..eol]).map_or(eol, |p| i + p + 1);
            } else if is_ident(b[i]) {
                while i < n && is_ident(b[i]) {
                    i += 1;
                }
            } else if matches!(b[i], b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') {
                i += 1;
            }
            class = if i - start > 1 {
                Class::Type
            } else {
                Class::Plain
            };
        } else if c.is_ascii_digit() && (i == 0 || !is_ident(b[i - 1])) {
            i = number_end(b, i);
            class = Class::Number;
        } else if is_ident_start(c) {
            while i < n && is_ident(b[i]) {
                i += 1;
            }
            let word = &code[start..i];
            class = if syn.keywords.contains(&word) {
                Class::Keyword
            } else if syn.literals.contains(&word) {
                Class::Number
            } else if syn.types.contains(&word) || (syn.cap_types && c.is_ascii_uppercase()) {
                Class::Type
            } else {
                Class::Plain
            };
        } else {
            i += utf8_len(c).min(n - i);
            while !code.is_char_boundary(i) {
                i += 1;
            }
            class = Class::Plain;
        }
        if c == b'\n' {
            line_start = true;
        } else if !c.is_ascii_whitespace() {
            line_start = false;
        }
        // Multi-line tokens end on a later line.
        if i > start + 1 && b[i - 1] == b'\n' {
            line_start = true;
        }
        tok(start, i, class);
    }
}

/// After a string ending at `end`: is the next non-space byte a `:`?
fn is_key(b: &[u8], end: usize) -> bool {
    b[end..]
        .iter()
        .find(|c| !matches!(c, b' ' | b'\t'))
        .is_some_and(|&c| c == b':')
}

/// Rust raw string `r"…"`, `r#"…"#` starting at `i` (the `r`): its end.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && is_ident(b[i - 1]) {
        return None;
    }
    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
    if b.get(i + 1 + hashes) != Some(&b'"') {
        return None;
    }
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    Some(find(b, i + 2 + hashes, &close).map_or(b.len(), |p| p + close.len()))
}

/// Rust char literal starting at `i` (the `'`): its end, or `None` for a lifetime.
fn rust_char_end(b: &[u8], i: usize) -> Option<usize> {
    let next = *b.get(i + 1)?;
    if next == b'\\' {
        // '\n', '\'', '\u{1F600}'
        let limit = (i + 12).min(b.len());
        return (i + 3..limit).find(|&j| b[j] == b'\'').map(|j| j + 1);
    }
    if next == b'\'' || next == b'\n' {
        return None;
    }
    let after = i + 1 + utf8_len(next);
    (b.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// Bytes the lexer may read past the start of a token to decide what it is (a Rust char
/// literal such as `'\u{1F600}'` is the longest look).
const LOOKAHEAD: usize = 16;

/// A line start in `code` (whole lines of a code block; the last may be incomplete) from which
/// highlighting can start over and give what highlighting all of `code` gives, for lines from
/// there on, however the code goes on; 0 if there is none yet. It is the start of a token, and
/// at least one complete line and `LOOKAHEAD` bytes follow it, so no decision of the lexer
/// before it depends on text that has not arrived (a token still open at the end, such as an
/// unclosed comment, leaves no line start inside it).
pub(crate) fn resume_point(code: &str, lang: Option<Lang>) -> usize {
    let b = code.as_bytes();
    // The start of the last complete line.
    let Some(last_nl) = memchr::memrchr(b'\n', b) else {
        return 0;
    };
    let last_line = memchr::memrchr(b'\n', &b[..last_nl]).map_or(0, |p| p + 1);
    let limit = last_line.min(b.len().saturating_sub(LOOKAHEAD));
    let line_start_before = |limit: usize| memchr::memrchr(b'\n', &b[..limit]).map_or(0, |p| p + 1);
    match lang {
        None | Some(Lang::Diff) => line_start_before(limit),
        Some(lang) => {
            let mut best = 0;
            lex(code, syntax(lang), |s, _, _| {
                if s > 0 && s <= limit && b[s - 1] == b'\n' {
                    best = s;
                }
            });
            best
        }
    }
}

/// Collects styled pieces into lines of spans borrowed from the code.
struct Sink<'c, F: FnMut(&[Span<'c>])> {
    code: &'c str,
    line: Vec<Span<'c>>,
    /// The run being extended: start, end, style.
    run: Option<(usize, usize, Style)>,
    emit: F,
}

impl<'c, F: FnMut(&[Span<'c>])> Sink<'c, F> {
    fn flush_run(&mut self) {
        if let Some((s, e, style)) = self.run.take()
            && e > s
        {
            self.line.push(Span::styled(&self.code[s..e], style));
        }
    }

    fn piece(&mut self, start: usize, end: usize, style: Style) {
        let mut s = start;
        while s < end {
            let nl = memchr::memchr(b'\n', &self.code.as_bytes()[s..end]).map(|p| s + p);
            let e = nl.unwrap_or(end);
            if e > s {
                match &mut self.run {
                    Some((_, re, rs)) if *re == s && *rs == style => *re = e,
                    _ => {
                        self.flush_run();
                        self.run = Some((s, e, style));
                    }
                }
            }
            match nl {
                Some(p) => {
                    self.flush_run();
                    (self.emit)(&self.line);
                    self.line.clear();
                    s = p + 1;
                }
                None => s = end,
            }
        }
    }

    fn finish(mut self, ends_with_newline: bool) {
        self.flush_run();
        if !ends_with_newline {
            (self.emit)(&self.line);
        }
    }
}

/// Highlight `code` (tabs already expanded) and call `emit` with the spans of each line, in
/// order; a final `\n` does not make an extra empty line. Spans borrow from `code`.
pub(crate) fn highlight<'c>(
    code: &'c str,
    lang: Option<Lang>,
    theme: &Theme,
    emit: impl FnMut(&[Span<'c>]),
) {
    if code.is_empty() {
        return;
    }
    let base = theme.code_block;
    let mut sink = Sink {
        code,
        line: Vec::new(),
        run: None,
        emit,
    };
    match lang {
        None => sink.piece(0, code.len(), base),
        Some(Lang::Diff) => {
            let mut pos = 0;
            for line in code.split_inclusive('\n') {
                let style = if line.starts_with("+++")
                    || line.starts_with("---")
                    || line.starts_with("@@")
                    || line.starts_with("diff ")
                {
                    base.patch(theme.keyword)
                } else if line.starts_with('+') {
                    base.patch(theme.diff_added)
                } else if line.starts_with('-') {
                    base.patch(theme.diff_removed)
                } else {
                    base
                };
                sink.piece(pos, pos + line.len(), style);
                pos += line.len();
            }
        }
        Some(lang) => {
            let styles = [
                base,
                base.patch(theme.keyword),
                base.patch(theme.string),
                base.patch(theme.comment),
                base.patch(theme.number),
                base.patch(theme.type_name),
            ];
            lex(code, syntax(lang), |s, e, class| {
                let style = match class {
                    Class::Plain => styles[0],
                    Class::Keyword => styles[1],
                    Class::Str => styles[2],
                    Class::Comment => styles[3],
                    Class::Number => styles[4],
                    Class::Type => styles[5],
                };
                sink.piece(s, e, style);
            });
        }
    }
    sink.finish(code.ends_with('\n'));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line as `(text, class name)` pieces, for readable assertions.
    fn classes(code: &str, lang: Lang) -> Vec<Vec<(String, &'static str)>> {
        let theme = Theme::default();
        let name = |style: Style| {
            if style == theme.code_block.patch(theme.keyword) {
                "kw"
            } else if style == theme.code_block.patch(theme.string) {
                "str"
            } else if style == theme.code_block.patch(theme.comment) {
                "com"
            } else if style == theme.code_block.patch(theme.number) {
                "num"
            } else if style == theme.code_block.patch(theme.type_name) {
                "ty"
            } else {
                ""
            }
        };
        let mut out = Vec::new();
        highlight(code, Some(lang), &theme, |spans| {
            out.push(
                spans
                    .iter()
                    .map(|s| (s.content.to_string(), name(s.style)))
                    .collect(),
            );
        });
        out
    }

    fn has(lines: &[Vec<(String, &'static str)>], text: &str, class: &str) -> bool {
        lines
            .iter()
            .flatten()
            .any(|(t, c)| t == text && *c == class)
    }

    #[test]
    fn languages_from_info_words() {
        assert_eq!(Lang::from_info("Rust"), Some(Lang::Rust));
        assert_eq!(Lang::from_info("tsx"), Some(Lang::Js));
        assert_eq!(Lang::from_info("c++"), Some(Lang::C));
        assert_eq!(Lang::from_info("brainfuck"), None);
    }

    #[test]
    fn rust_tokens() {
        let l = classes(
            "fn main() {\n    let x: u32 = 0x1F; // hi\n    let s = r#\"a\"b\"#;\n    let c = 'c'; let r: &'a str = \"q\\\"\";\n}\n",
            Lang::Rust,
        );
        assert_eq!(l.len(), 5);
        assert!(has(&l, "fn", "kw"));
        assert!(has(&l, "u32", "ty"));
        assert!(has(&l, "0x1F", "num"));
        assert!(has(&l, "// hi", "com"));
        assert!(has(&l, "r#\"a\"b\"#", "str"));
        assert!(has(&l, "'c'", "str"));
        assert!(has(&l, "'a", "ty"));
        assert!(has(&l, "\"q\\\"\"", "str"));
        // Every line's text is kept exactly.
        let joined: Vec<String> = l
            .iter()
            .map(|p| p.iter().map(|(t, _)| t.as_str()).collect())
            .collect();
        assert_eq!(joined[1], "    let x: u32 = 0x1F; // hi");
    }

    #[test]
    fn multi_line_comments_and_strings_span_lines() {
        let l = classes("/* a\nb */ x\n", Lang::C);
        assert_eq!(l[0], vec![("/* a".to_string(), "com")]);
        assert_eq!(l[1][0], ("b */".to_string(), "com"));
        let p = classes("s = \"\"\"one\ntwo\"\"\"\nTrue\n", Lang::Python);
        assert!(has(&p, "two\"\"\"", "str"));
        assert!(has(&p, "True", "num"));
        // Unclosed while streaming: runs to the end.
        let u = classes("x = \"abc", Lang::Js);
        assert!(has(&u, "\"abc", "str"));
    }

    #[test]
    fn shell_json_toml_go_diff() {
        let sh = classes(
            "echo \"$HOME\" # note\nfor f in *; do ls ${f}; done",
            Lang::Sh,
        );
        assert!(has(&sh, "# note", "com"));
        assert!(has(&sh, "for", "kw"));
        assert!(has(&sh, "${f}", "ty"));
        let json = classes("{\"a\": [1.5e-3, true, \"x\"]}", Lang::Json);
        assert!(has(&json, "\"a\"", "ty"));
        assert!(has(&json, "1.5e-3", "num"));
        assert!(has(&json, "\"x\"", "str"));
        let toml = classes("[package]\nname = 'x' # c\n", Lang::Toml);
        assert!(has(&toml, "[package]", "ty"));
        assert!(has(&toml, "'x'", "str"));
        let go = classes("func f() error { return nil }", Lang::Go);
        assert!(has(&go, "func", "kw"));
        assert!(has(&go, "error", "ty"));
        assert!(has(&go, "nil", "num"));
        let theme = Theme::default();
        let mut styles = Vec::new();
        highlight("+a\n-b\n c\n", Some(Lang::Diff), &theme, |s| {
            styles.push(s.first().map(|s| s.style))
        });
        assert_eq!(
            styles,
            vec![
                Some(theme.code_block.patch(theme.diff_added)),
                Some(theme.code_block.patch(theme.diff_removed)),
                Some(theme.code_block)
            ]
        );
    }

    #[test]
    fn lines_and_text_are_preserved_for_any_input() {
        let theme = Theme::default();
        let inputs = [
            "a\n\nb\n",
            "'\n'",
            "\"\\",
            "r#",
            "#",
            "$",
            "0x",
            "1e",
            "/*",
            "'é' '\\u{1F600}' 中文",
            "[unclosed",
        ];
        for lang in [
            Lang::Rust,
            Lang::Python,
            Lang::Js,
            Lang::Sh,
            Lang::Json,
            Lang::Toml,
            Lang::Go,
            Lang::C,
            Lang::Diff,
        ] {
            for code in inputs {
                let mut lines = Vec::new();
                highlight(code, Some(lang), &theme, |spans| {
                    lines.push(spans.iter().map(|s| s.content.as_ref()).collect::<String>())
                });
                let expected: Vec<&str> = code.lines().collect();
                assert_eq!(lines, expected, "{lang:?} {code:?}");
            }
        }
    }
}
