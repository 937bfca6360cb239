//! Comments and docs speak to a reader who has only the repository: no issue numbers and no
//! commit hashes in the sources (`crates/`, `src/`, `tests/`, `benches/`, every `*.rs`) or in
//! `README.md`. The history of a figure belongs in `benches/NOTES.md`, which is not scanned.
//!
//! Flagged: the word `issue` followed by a number (with or without `#`, any case), a number
//! after `#` in parentheses, a bare `#` and number in a comment or in the README (not inside
//! backticks: code such as a numbered label), `commit` followed by a hex word, and any hex word
//! of 7 to 40 characters that is a prefix of a commit of this repository (`git rev-list
//! --all`). Not flagged: hex constants (`0x…` is one word with an `x`), colours (`#` before the
//! word), words of digits only (token ids, sizes), and words with letters past `f`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's commits, sorted, for prefix lookups; empty when git cannot say (a
/// source tarball), and then only the phrases are looked for.
fn commits(root: &Path) -> Vec<String> {
    let out = Command::new("git")
        .args(["rev-list", "--all"])
        .current_dir(root)
        .output();
    let mut all: Vec<String> = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    all.sort();
    all
}

fn is_commit_prefix(word: &str, commits: &[String]) -> bool {
    let i = commits.partition_point(|c| c.as_str() < word);
    commits.get(i).is_some_and(|c| c.starts_with(word))
}

/// A word that reads as an abbreviated or full hash: 7 to 40 of `0-9a-f`, with a digit and a
/// letter.
fn hashlike(word: &str) -> bool {
    (7..=40).contains(&word.len())
        && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// `(start, word)` of each run of `[0-9A-Za-z_]` in `line`.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        let w = c.is_ascii_alphanumeric() || c == '_';
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// What in `line` cites the project's history; `prose`: the whole line is text (the README),
/// otherwise only what follows `//` counts for a bare `#12`.
fn findings(line: &str, prose: bool, commits: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let ws = words(line);
    let comment_from = if prose { Some(0) } else { line.find("//") };
    for (k, &(at, word)) in ws.iter().enumerate() {
        let before = &line[..at];
        let after = &line[at + word.len()..];
        let numeric = word.bytes().all(|b| b.is_ascii_digit());
        if numeric && before.ends_with('#') {
            let hash = at - 1;
            let prev = line[..hash].chars().next_back();
            let next = after.chars().next();
            let cited_in_parens = prev == Some('(') && next == Some(')');
            let in_code = comment_from
                .is_some_and(|c| hash >= c && line[c..hash].matches('`').count() % 2 == 1);
            let bare = comment_from.is_some_and(|c| hash >= c)
                && !in_code
                && prev.is_none_or(|p| p.is_whitespace() || p == '(' || p == '[')
                && next.is_none_or(|n| !n.is_ascii_alphanumeric() && n != '_' && n != '-');
            if cited_in_parens || bare {
                found.push(format!("issue reference #{word}"));
                continue;
            }
        }
        let prev_word = k.checked_sub(1).map(|j| ws[j].1.to_ascii_lowercase());
        let between = k.checked_sub(1).map(|j| &line[ws[j].0 + ws[j].1.len()..at]);
        let adjacent = between.is_some_and(|b| b.trim_end_matches('#').trim().is_empty());
        if numeric && adjacent && matches!(prev_word.as_deref(), Some("issue" | "issues")) {
            found.push(format!("issue reference {word}"));
            continue;
        }
        if hashlike(word) && !before.ends_with('#') {
            let phrase = adjacent && matches!(prev_word.as_deref(), Some("commit" | "commits"));
            if phrase || is_commit_prefix(word, commits) {
                found.push(format!("commit hash {word}"));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "target" || n == ".git") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn sources_and_the_readme_cite_no_issue_numbers_or_commit_hashes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let commits = commits(root);
    let mut files = Vec::new();
    for dir in ["crates", "src", "tests", "benches"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    files.push(root.join("README.md"));
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let prose = f.extension().is_some_and(|x| x == "md");
        for (n, line) in text.lines().enumerate() {
            for what in findings(line, prose, &commits) {
                let shown = f.strip_prefix(root).unwrap_or(f).display();
                problems.push(format!("{shown}:{}: {what}", n + 1));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "history belongs in benches/NOTES.md, not in the sources:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scanner_flags_citations_and_spares_constants_colours_and_ids() {
    // The citations are assembled at run time, so this file holds none of them.
    let hash = format!("{}{}", "abc1234", "def5678");
    let commits = vec![format!("{hash}{}", "0".repeat(26))];
    let flagged = |line: String, prose: bool| !findings(&line, prose, &commits).is_empty();
    let n = 12;
    assert!(flagged(format!("// see issue {n}"), false));
    assert!(flagged(format!("x(); // fixed (Issue #{n})"), false));
    assert!(flagged(format!("let a = 1; // as in #{n}."), false));
    assert!(flagged(format!("\"a fix (#{n})\""), false));
    assert!(flagged(format!("Fixed in #{n}"), true));
    assert!(flagged(format!("// since {}", &hash[..7]), false));
    assert!(flagged(format!("// since {hash}"), false));
    assert!(flagged(format!("// {} {}", "commit", "beef123"), false));
    // Spared: not in the history, a constant, a colour, an id, a count, a heading, code.
    assert!(!flagged("// the digest 12345ab9".to_owned(), false));
    assert!(!flagged(format!("const M: u64 = 0x{hash};"), false));
    assert!(!flagged(format!("color: #{}", &hash[..8]), true));
    assert!(!flagged("token 1234567890 and 163842".to_owned(), false));
    assert!(!flagged(format!("let s = \"attempt #{n}\";"), false));
    assert!(!flagged(format!("## {n} steps"), true));
    assert!(!flagged(format!("r#\"{{\"a\": {n}}}\"#"), false));
    assert!(!flagged("// one issue: 3 calls".to_owned(), false));
    assert!(!flagged(format!("/// as `tool #{n}:` for a tool"), false));
}
