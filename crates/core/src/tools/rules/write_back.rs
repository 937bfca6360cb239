//! Adding a rule to the user's config file: appended as a `[[rules]]` table through
//! `toml_edit`, so the file's comments, order and layout stay as the user wrote them.

use std::path::Path;

use serde_json::Value;
use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table};

use super::rule::Rule;

/// Why a rule could not be written to the config.
#[derive(Debug, thiserror::Error)]
pub enum WriteBackError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a TOML document: {message}", path.display())]
    Parse {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("{}: `rules` is not a list of [[rules]] tables", path.display())]
    NotRules { path: std::path::PathBuf },
    #[error("a float that is not finite cannot be written to TOML")]
    NotFinite,
    #[error("TOML has no null: a rule with a null pattern or example can only be a session rule")]
    Null,
}

/// Append `rule` to the config at `path` (created when missing); the line its `[[rules]]`
/// header is on.
pub fn append_rule(path: &Path, rule: &Rule) -> Result<usize, WriteBackError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(WriteBackError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let out = with_rule(path, &text, rule)?;
    crate::private_fs::write(path, out.as_bytes()).map_err(|source| WriteBackError::Write {
        path: path.to_owned(),
        source,
    })?;
    // The new table is the last `[[rules]]` header of the file.
    let line = out
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[rules]]"))
        .last()
        .map_or(1, |(i, _)| i + 1);
    Ok(line)
}

/// `text` with `rule` appended as the last `[[rules]]` table.
fn with_rule(path: &Path, text: &str, rule: &Rule) -> Result<String, WriteBackError> {
    let mut doc: DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| WriteBackError::Parse {
                path: path.to_owned(),
                message: e.message().to_owned(),
            })?;
    let table = rule_table(rule)?;
    let rules = doc
        .entry("rules")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    let Some(list) = rules.as_array_of_tables_mut() else {
        return Err(WriteBackError::NotRules {
            path: path.to_owned(),
        });
    };
    list.push(table);
    let mut out = doc.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn rule_table(rule: &Rule) -> Result<Table, WriteBackError> {
    let mut t = Table::new();
    t.insert("tool", toml_edit::value(rule.tool.as_str()));
    if !rule.args.is_empty() {
        let mut args = InlineTable::new();
        for (k, v) in &rule.args {
            args.insert(k, scalar(v)?);
        }
        t.insert("args", toml_edit::value(args));
    }
    t.insert("decision", toml_edit::value(rule.decision.as_str()));
    if let Some(r) = &rule.reason {
        t.insert("reason", toml_edit::value(r.as_str()));
    }
    for (key, examples) in [("match", &rule.must_match), ("not_match", &rule.not_match)] {
        if examples.is_empty() {
            continue;
        }
        let mut list = Array::new();
        for example in examples {
            let mut e = InlineTable::new();
            for (k, v) in example {
                e.insert(k, scalar(v)?);
            }
            list.push(e);
        }
        t.insert(key, toml_edit::value(list));
    }
    Ok(t)
}

/// A JSON value as TOML; arrays and objects nest. TOML has no null, and writing one as a
/// string would be another rule: refused.
fn scalar(v: &Value) -> Result<toml_edit::Value, WriteBackError> {
    Ok(match v {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => {
                let f = n.as_f64().ok_or(WriteBackError::NotFinite)?;
                if !f.is_finite() {
                    return Err(WriteBackError::NotFinite);
                }
                f.into()
            }
        },
        Value::Array(a) => {
            let mut out = Array::new();
            for x in a {
                out.push(scalar(x)?);
            }
            out.into()
        }
        Value::Object(m) => {
            let mut out = InlineTable::new();
            for (k, x) in m {
                out.insert(k, scalar(x)?);
            }
            out.into()
        }
        Value::Null => return Err(WriteBackError::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::rules::Verdict;
    use serde_json::json;

    const CONFIG: &str = r#"# My kimi-tui config: keep this comment.
default_profile = "local"

[profiles.local]   # the vLLM box
base_url = "http://127.0.0.1:8000/v1"

# Read-only git is fine.
[[rules]]
tool = "run_command"
args = { command = "git status*" }
decision = "allow"

[[tools]]
name = "run_command"
command = ["sh", "-c", "$1"]
parameters = { type = "object", properties = { command = { type = "string" } } }
"#;

    #[test]
    fn appending_keeps_comments_and_layout_and_names_the_line() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, CONFIG).expect("write");
        let mut rule = Rule::new("run_command", Verdict::Allow);
        rule.args.insert("command".into(), json!("git log*"));
        rule.reason = Some("read-only git".into());
        let line = append_rule(&path, &rule).expect("append");
        let text = std::fs::read_to_string(&path).expect("read");
        // Every line the user wrote is still there, as written and in order; the new table
        // goes after the last `[[rules]]` one (before `[[tools]]`): the lines around it are
        // the user's, untouched.
        let mut written = text.lines();
        for l in CONFIG.lines() {
            assert!(written.any(|w| w == l), "lost or moved: {l:?}\n{text}");
        }
        assert_eq!(text.lines().count(), CONFIG.lines().count() + 6, "{text}");
        let added: Vec<&str> = text.lines().skip(line - 1).take(5).collect();
        assert_eq!(
            added,
            [
                "[[rules]]",
                "tool = \"run_command\"",
                "args = { command = \"git log*\" }",
                "decision = \"allow\"",
                "reason = \"read-only git\"",
            ]
        );
        // And it loads as a config whose second rule is the new one.
        let config = crate::config::Config::parse(&path, &text).expect("valid config");
        assert_eq!(config.rules.last(), Some(&rule));
    }

    #[test]
    fn a_missing_config_gets_a_rules_table_and_a_bad_one_is_refused() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("new.toml");
        let line = append_rule(&path, &Rule::new("*", Verdict::Ask)).expect("append");
        assert_eq!(line, 1);
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "[[rules]]\ntool = \"*\"\ndecision = \"ask\"\n"
        );
        std::fs::write(&path, "rules = 3\n").expect("write");
        let e = append_rule(&path, &Rule::new("*", Verdict::Ask)).expect_err("not a list");
        assert!(matches!(e, WriteBackError::NotRules { .. }), "{e}");
    }
}
