//! The README's key and command reference, generated from the one key table and the command
//! table, so that the README lists exactly what works (a test compares the two).

use super::commands::help_rows;
use super::keys::{SECTIONS, TABLE};

/// Where the generated part of README.md starts and ends.
pub(crate) const BEGIN: &str = "<!-- keys:begin (generated from crates/tui/src/app/keys.rs; `KIMI_BLESS=1 cargo test readme_keys` rewrites it) -->";
pub(crate) const END: &str = "<!-- keys:end -->";

/// `text` in a Markdown table cell: pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The reference: one table per help section, then the slash commands.
pub(crate) fn markdown() -> String {
    let mut out = String::new();
    for (title, contexts) in SECTIONS {
        out.push_str(&format!("**{title}**\n\n| keys | |\n| --- | --- |\n"));
        for r in TABLE.iter().filter(|r| contexts.contains(&r.context)) {
            out.push_str(&format!("| `{}` | {} |\n", cell(r.keys), cell(r.help)));
        }
        out.push('\n');
    }
    out.push_str("**Slash commands**\n\n| command | |\n| --- | --- |\n");
    for (c, what) in help_rows() {
        out.push_str(&format!("| `{}` | {} |\n", cell(&c), cell(what)));
    }
    out
}

/// `readme` with its generated block replaced by [`markdown`]; `None` when it has no block.
pub(crate) fn refresh(readme: &str) -> Option<String> {
    let start = readme.find(BEGIN)? + BEGIN.len();
    let end = readme[start..].find(END)? + start;
    Some(format!(
        "{}\n\n{}\n{}",
        &readme[..start],
        markdown(),
        &readme[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_and_command_is_in_the_reference() {
        let md = markdown();
        for r in TABLE {
            assert!(md.contains(&cell(r.help)), "{r:?}");
        }
        for (c, _) in help_rows() {
            assert!(md.contains(&format!("`{}`", cell(&c))), "{c}");
        }
        let readme = format!("a\n{BEGIN}\nold\n{END}\nb\n");
        let fresh = refresh(&readme).expect("a block");
        assert!(fresh.starts_with(&format!("a\n{BEGIN}\n\n**Keys**")));
        assert!(fresh.ends_with(&format!("\n{END}\nb\n")));
        assert_eq!(refresh(&fresh).as_deref(), Some(fresh.as_str()));
    }

    /// README's key and command reference is the key table's: regenerated with `KIMI_BLESS=1`.
    #[test]
    fn readme_keys_match_the_key_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
        let readme = std::fs::read_to_string(&path).expect("README.md");
        let fresh = refresh(&readme).expect("README has the keys block");
        if std::env::var_os("KIMI_BLESS").is_some() {
            std::fs::write(&path, &fresh).expect("write README.md");
            return;
        }
        assert!(
            readme == fresh,
            "README's keys block is stale: run `KIMI_BLESS=1 cargo test readme_keys`"
        );
    }
}
