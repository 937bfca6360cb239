//! The project's rules: `.kimi-tui/rules.toml` in the working directory. Always read; its
//! `allow` rules apply only when the user trusts the directory, so that a repository can make
//! calls stricter but never allow one on its own.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::matcher::CompiledRule;
use super::rule::{Rule, RuleSource, Verdict};
use crate::config::ConfigError;
use crate::tools::ToolSpec;

/// Where the project's rules are, relative to the working directory.
pub const PROJECT_RULES: &str = ".kimi-tui/rules.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rules: Vec<Rule>,
}

/// The project's rules in force.
#[derive(Debug, Clone, Default)]
pub struct ProjectRules {
    pub rules: Vec<(CompiledRule, RuleSource)>,
    /// What to tell the user: the allow rules left out of an untrusted directory's file.
    pub notice: Option<String>,
    /// The file, when there is one.
    pub path: Option<PathBuf>,
}

/// Read `dir`'s project rules (none without the file); `trusted`: whether its allow rules
/// apply.
pub fn load(dir: &Path, tools: &[ToolSpec], trusted: bool) -> Result<ProjectRules, ConfigError> {
    let path = dir.join(PROJECT_RULES);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ProjectRules::default()),
        Err(e) => {
            return Err(ConfigError {
                path,
                line: None,
                column: None,
                key: None,
                message: format!("cannot read the project's rules: {e}"),
            });
        }
    };
    parse(&path, &text, tools, trusted)
}

/// [`load`] of `text`, read from `path`.
pub fn parse(
    path: &Path,
    text: &str,
    tools: &[ToolSpec],
    trusted: bool,
) -> Result<ProjectRules, ConfigError> {
    let file: RulesFile = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| crate::config::line_col(text, s.start))
            .unzip();
        ConfigError {
            path: path.to_owned(),
            line,
            column,
            key: None,
            message: e.message().trim().to_owned(),
        }
    })?;
    let checked = super::load::check_rules(path, text, &file.rules, tools)?;
    let mut rules = Vec::new();
    let mut ignored = Vec::new();
    for (compiled, line) in checked {
        if !trusted && compiled.rule.decision == Verdict::Allow {
            ignored.push(line.to_string());
            continue;
        }
        let source = RuleSource::Project {
            path: path.to_owned(),
            line,
        };
        rules.push((compiled, source));
    }
    let notice = (!ignored.is_empty()).then(|| {
        format!(
            "{}: the allow rules at line {} are ignored: this directory is not trusted (its deny and ask rules apply)",
            path.display(),
            ignored.join(", ")
        )
    });
    Ok(ProjectRules {
        rules,
        notice,
        path: Some(path.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[[rules]]
tool = "run_command"
args = { command = "rm *" }
decision = "deny"

[[rules]]
tool = "*"
decision = "allow"
"#;

    #[test]
    fn an_untrusted_project_cannot_allow() {
        let path = Path::new("/p/.kimi-tui/rules.toml");
        let p = parse(path, FILE, &[], false).expect("valid");
        let verdicts: Vec<Verdict> = p.rules.iter().map(|(c, _)| c.rule.decision).collect();
        assert_eq!(verdicts, vec![Verdict::Deny]);
        assert_eq!(
            p.notice.as_deref(),
            Some(
                "/p/.kimi-tui/rules.toml: the allow rules at line 7 are ignored: this directory is not trusted (its deny and ask rules apply)"
            )
        );
        assert_eq!(
            p.rules[0].1,
            RuleSource::Project {
                path: path.into(),
                line: 2
            }
        );
        let trusted = parse(path, FILE, &[], true).expect("valid");
        assert_eq!(trusted.rules.len(), 2);
        assert!(trusted.notice.is_none());
    }

    #[test]
    fn a_missing_file_is_no_rules_and_a_bad_one_names_its_line() {
        let tmp = tempfile::tempdir().expect("tmp");
        let none = load(tmp.path(), &[], true).expect("no file");
        assert!(none.rules.is_empty() && none.path.is_none());
        let bad = "[[rules]]\ntool = \"x\"\ndecision = \"allow\"\nnot_match = [{ a = 1 }]\n";
        let e = parse(Path::new("r.toml"), bad, &[], true).expect_err("matches");
        assert_eq!(e.line, Some(4), "{e}");
    }
}
