//! Globs on argument strings and tool names: `*` matches any run of characters except `/`,
//! `**` any run including `/`, `?` one character except `/`; everything else is literal.
//!
//! Written here rather than taken from `globset` or `glob-match`: both treat `**` as a whole
//! path component (`a/**/b`) and so cannot say `git -C ** status` or `rm -rf build**`, which
//! rules on command lines need; `glob-match` also gives `{a,b}` and `[...]` a meaning that
//! would change what existing rules on plain strings match.

/// One piece of a compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(char),
    /// `?`
    One,
    /// `*`
    Segment,
    /// `**`
    Any,
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    pieces: Vec<Piece>,
}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        let mut pieces = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            pieces.push(match c {
                '*' if chars.peek() == Some(&'*') => {
                    // Any run of stars from two on is one `**`.
                    while chars.peek() == Some(&'*') {
                        chars.next();
                    }
                    Piece::Any
                }
                '*' => Piece::Segment,
                '?' => Piece::One,
                c => Piece::Literal(c),
            });
        }
        Glob { pieces }
    }

    /// Whether the pattern has any wildcard (a plain name matches only itself).
    pub fn is_literal(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// Whether `text` matches the whole pattern. Linear space, `O(pattern * text)` time: no
    /// backtracking blow-up on hostile patterns or arguments.
    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        // reach[j]: the pieces so far can match text[..j].
        let mut reach = vec![false; text.len() + 1];
        reach[0] = true;
        for piece in &self.pieces {
            let mut next = vec![false; text.len() + 1];
            match piece {
                Piece::Literal(c) => {
                    for j in 0..text.len() {
                        next[j + 1] = reach[j] && text[j] == *c;
                    }
                }
                Piece::One => {
                    for j in 0..text.len() {
                        next[j + 1] = reach[j] && text[j] != '/';
                    }
                }
                Piece::Segment => {
                    next[0] = reach[0];
                    for j in 0..text.len() {
                        next[j + 1] = reach[j + 1] || (next[j] && text[j] != '/');
                    }
                }
                Piece::Any => {
                    next[0] = reach[0];
                    for j in 0..text.len() {
                        next[j + 1] = reach[j + 1] || next[j];
                    }
                }
            }
            reach = next;
        }
        reach[text.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(p: &str, t: &str) -> bool {
        Glob::new(p).matches(t)
    }

    #[test]
    fn star_stays_within_a_segment_and_double_star_crosses() {
        assert!(m("git status*", "git status -s"));
        assert!(m("git status*", "git status"));
        assert!(!m("git status*", "git statu"));
        assert!(!m("git status*", "git status src/main.rs"));
        assert!(m("git status**", "git status src/main.rs"));
        assert!(m("src/*.rs", "src/main.rs"));
        assert!(!m("src/*.rs", "src/a/main.rs"));
        assert!(m("src/**.rs", "src/a/main.rs"));
        assert!(m("src/**/x", "src/a/b/x"));
        assert!(m("?.txt", "a.txt"));
        assert!(!m("?.txt", "/.txt"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("*", ""));
        assert!(m("mcp__github__*", "mcp__github__create_issue"));
        assert!(!m("mcp__github__*", "mcp__gitlab__create_issue"));
        assert!(m("a[1]{b}", "a[1]{b}"));
        assert!(Glob::new("run_command").is_literal());
        assert!(!Glob::new("run_*").is_literal());
    }

    #[test]
    fn hostile_patterns_finish_quickly() {
        let p = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
        let t = "a".repeat(5000);
        assert!(!m(p, &t));
    }

    proptest! {
        // A string without wildcards matches itself and only itself.
        #[test]
        fn a_literal_matches_exactly_itself(s in "[a-z/ .-]{0,12}", t in "[a-z/ .-]{0,12}") {
            prop_assert!(m(&s, &s));
            prop_assert_eq!(m(&s, &t), s == t);
        }

        // `**` matches anything; `*` anything without a slash.
        #[test]
        fn stars_match_what_they_promise(t in "[a-z/]{0,12}") {
            prop_assert!(m("**", &t));
            prop_assert_eq!(m("*", &t), !t.contains('/'));
        }

        // A prefix followed by `**` matches every extension of it.
        #[test]
        fn prefix_then_double_star(p in "[a-z ]{0,6}", rest in "[a-z/ ]{0,8}") {
            let text = format!("{p}{rest}");
            let pattern = format!("{p}**");
            prop_assert!(m(&pattern, &text));
        }
    }
}
