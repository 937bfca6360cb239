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
