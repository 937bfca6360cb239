//! Rules read from a TOML file (the user's config, the project's rules file): each compiled and
//! checked, with the line it is written at; a bad one is a [`ConfigError`] naming the file, the
//! line (of the failing example, pattern or key) and what is wrong.

use std::path::Path;

use toml::de::DeTable;

use super::matcher::{CompiledRule, RuleError};
use super::rule::Rule;
use crate::config::{ConfigError, Key, line_col, span_of};
use crate::tools::ToolSpec;

/// Check `rules`, the `[[rules]]` of `text` (read from `path`), against themselves and the
/// local `tools`; each with its 1-based line.
pub(crate) fn check_rules(
    path: &Path,
    text: &str,
    rules: &[Rule],
    tools: &[ToolSpec],
) -> Result<Vec<(CompiledRule, usize)>, ConfigError> {
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let doc = DeTable::parse(text).ok();
    let line_at = |keys: &[Key<'_>]| {
        doc.as_ref()
            .and_then(|d| span_of(d.get_ref(), keys))
            .map(|s| line_col(text, s.start))
    };
    let mut out = Vec::with_capacity(rules.len());
    for (i, rule) in rules.iter().enumerate() {
        let whole = [Key::Name("rules"), Key::Index(i)];
        let checked =
            CompiledRule::new(rule.clone()).and_then(|c| c.check_tools(tools).map(|()| c));
        match checked {
            Ok(c) => out.push((c, line_at(&whole).map_or(1, |(l, _)| l))),
            Err(e) => {
                let (keys, key): (Vec<Key<'_>>, String) = match &e {
                    RuleError::Example { key, index, .. } => (
                        vec![Key::Name(key), Key::Index(*index)],
                        format!("rules[{i}].{key}[{index}]"),
                    ),
                    RuleError::Path(p) => (
                        vec![Key::Name("args"), Key::Name(&p.path)],
                        format!("rules[{i}].args"),
                    ),
                    RuleError::Pattern { path, .. } | RuleError::UnknownArgument { path, .. } => (
                        vec![Key::Name("args"), Key::Name(path)],
                        format!("rules[{i}].args"),
                    ),
                    RuleError::EmptyTool => (vec![Key::Name("tool")], format!("rules[{i}].tool")),
                };
                let full: Vec<Key<'_>> = [Key::Name("rules"), Key::Index(i)]
                    .into_iter()
                    .chain(keys)
                    .collect();
                let (line, column) = line_at(&full).or_else(|| line_at(&whole)).unzip();
                return Err(ConfigError {
                    path: path.to_owned(),
                    line,
                    column,
                    key: Some(key),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    fn parse(text: &str) -> Result<Config, crate::config::ConfigError> {
        Config::parse(Path::new("/c/config.toml"), text)
    }

    const TOOL: &str = r#"
[[tools]]
name = "run_command"
command = ["sh", "-c", "$1"]
parameters = { type = "object", properties = { command = { type = "string" } } }
"#;

    #[test]
    fn rules_load_with_the_line_of_their_header() {
        let text = format!(
            "{TOOL}\n[[rules]]\ntool = \"run_command\"\nargs = {{ command = \"git status*\" }}\ndecision = \"allow\"\nreason = \"read-only git\"\nmatch = [{{ command = \"git status -s\" }}]\nnot_match = [{{ command = \"git push\" }}]\n\n[[rules]]\ntool = \"mcp__github__*\"\ndecision = \"deny\"\n"
        );
        let c = parse(&text).expect("valid");
        let lines: Vec<usize> = c.checked_rules.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, vec![7, 15]);
        let sources = c.rules_in_force(Path::new("/c/config.toml"));
        assert_eq!(sources[1].1.short(), "config.toml:15");
    }

    #[test]
    fn a_not_match_example_that_matches_names_its_line() {
        let text = "[[rules]]\ntool = \"run_command\"\nargs = { command = \"git *\" }\ndecision = \"allow\"\nnot_match = [\n  { command = \"ls\" },\n  { command = \"git push\" },\n]\n";
        let e = parse(text).expect_err("second example matches");
        assert_eq!(e.line, Some(7), "{e}");
        assert_eq!(
            e.to_string(),
            "/c/config.toml:7:3: rules[0].not_match[1]: the rule matches its `not_match` example {\"command\":\"git push\"}"
        );
        let text = "[[rules]]\ntool = \"t\"\nargs = { command = \"git *\" }\ndecision = \"deny\"\nmatch = [{ command = \"ls\" }]\n";
        let e = parse(text).expect_err("match example does not match");
        assert_eq!(e.line, Some(5), "{e}");
        assert!(
            e.to_string().contains("does not match its `match` example"),
            "{e}"
        );
    }

    #[test]
    fn an_argument_the_local_tool_lacks_and_bad_patterns_are_errors_with_lines() {
        let text = format!(
            "{TOOL}\n[[rules]]\ntool = \"run_command\"\nargs = {{ cmd = \"ls\" }}\ndecision = \"allow\"\n"
        );
        let e = parse(&text).expect_err("unknown argument");
        assert_eq!(e.line, Some(9), "{e}");
        assert!(
            e.to_string()
                .ends_with("rules[0].args: args.cmd: the tool `run_command` has no argument `cmd`"),
            "{e}"
        );
        for (body, line) in [
            ("args = { \"files[\" = \"x\" }\ndecision = \"allow\"", 3),
            ("args = { files = [\"x\"] }\ndecision = \"allow\"", 3),
            ("decision = \"maybe\"", 3),
        ] {
            let text = format!("[[rules]]\ntool = \"t\"\n{body}\n");
            let e = parse(&text).expect_err(body);
            assert_eq!(e.line, Some(line), "{body}: {e}");
        }
        let e = parse("[[rules]]\ntool = \"\"\ndecision = \"ask\"\n").expect_err("empty tool");
        assert_eq!(e.line, Some(2), "{e}");
    }
}
