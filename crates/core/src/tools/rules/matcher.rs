//! A rule compiled for matching: its tool glob and, per argument path, a pattern.

use serde_json::Value;

use super::arg_path::{ArgPath, PathError, Step};
use super::glob::Glob;
use super::rule::Rule;
use crate::tools::ToolSpec;

/// Why a rule cannot be used. `Display` is one line, shown after the file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    #[error(transparent)]
    Path(#[from] PathError),
    /// Arrays and objects are not patterns.
    #[error(
        "args.{path}: a pattern is a string (a glob), a number, a boolean or null, got {value}"
    )]
    Pattern { path: String, value: String },
    /// An example the rule should match does not (or the reverse).
    #[error("the rule {} its `{key}` example {example}", if *key == "match" { "does not match" } else { "matches" })]
    Example {
        /// `match` or `not_match`.
        key: &'static str,
        /// Which one (from 0).
        index: usize,
        example: String,
    },
    /// The rule names an argument the tool's schema does not have.
    #[error("args.{path}: the tool `{tool}` has no argument `{argument}`")]
    UnknownArgument {
        path: String,
        tool: String,
        argument: String,
    },
    #[error("tool: a rule names a tool (or a glob on tool names), got an empty string")]
    EmptyTool,
}

/// A value pattern.
#[derive(Debug, Clone, PartialEq)]
enum Pattern {
    Glob(Glob),
    /// A number, boolean or null: equality (`1` and `1.0` are equal).
    Exact(Value),
}

impl Pattern {
    fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Pattern::Glob(g), Value::String(s)) => g.matches(s),
            (Pattern::Exact(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (Pattern::Exact(a), b) => a == b,
            _ => false,
        }
    }
}

/// A rule ready to match calls.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRule {
    pub rule: Rule,
    tool: Glob,
    args: Vec<(String, ArgPath, Pattern)>,
}

impl CompiledRule {
    /// Compile `rule` and check its own examples (not yet against any tool: see
    /// [`CompiledRule::check_tools`]).
    pub fn new(rule: Rule) -> Result<CompiledRule, RuleError> {
        if rule.tool.is_empty() {
            return Err(RuleError::EmptyTool);
        }
        let mut args = Vec::new();
        for (path, value) in &rule.args {
            let parsed = ArgPath::parse(path)?;
            let pattern = match value {
                Value::String(s) => Pattern::Glob(Glob::new(s)),
                Value::Array(_) | Value::Object(_) => {
                    return Err(RuleError::Pattern {
                        path: path.clone(),
                        value: value.to_string(),
                    });
                }
                v => Pattern::Exact(v.clone()),
            };
            args.push((path.clone(), parsed, pattern));
        }
        let compiled = CompiledRule {
            tool: Glob::new(&rule.tool),
            args,
            rule,
        };
        compiled.check_examples()?;
        Ok(compiled)
    }

    fn check_examples(&self) -> Result<(), RuleError> {
        let cases = [
            ("match", &self.rule.must_match, true),
            ("not_match", &self.rule.not_match, false),
        ];
        for (key, examples, want) in cases {
            for (index, example) in examples.iter().enumerate() {
                let example = Value::Object(example.clone());
                if self.matches_arguments(&example) != want {
                    return Err(RuleError::Example {
                        key,
                        index,
                        example: example.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether the rule is about the tool `name`.
    pub fn matches_tool(&self, name: &str) -> bool {
        self.tool.matches(name)
    }

    /// Whether the rule names exactly one tool (no glob).
    pub fn names_one_tool(&self) -> bool {
        self.tool.is_literal()
    }

    /// Whether every argument pattern matches `arguments`. A path through `[*]` matches when
    /// it names at least one value and every one matches; a missing value never matches.
    pub fn matches_arguments(&self, arguments: &Value) -> bool {
        self.args.iter().all(|(_, path, pattern)| {
            let values = path.values(arguments);
            let every = path.steps.contains(&Step::Every);
            if every {
                !values.is_empty() && values.iter().all(|v| pattern.matches(v))
            } else {
                values.iter().any(|v| pattern.matches(v))
            }
        })
    }

    pub fn matches(&self, tool: &str, arguments: &Value) -> bool {
        self.matches_tool(tool) && self.matches_arguments(arguments)
    }

    /// The first argument the rule names that `spec`'s schema does not declare (a schema
    /// without `properties` declares nothing to check against).
    pub fn unknown_argument(&self, spec: &ToolSpec) -> Option<RuleError> {
        let properties = spec.parameters.get("properties")?.as_object()?;
        self.args
            .iter()
            .find(|(_, path, _)| !properties.contains_key(path.argument()))
            .map(|(path, p, _)| RuleError::UnknownArgument {
                path: path.clone(),
                tool: spec.name.clone(),
                argument: p.argument().to_owned(),
            })
    }

    /// A rule that names one local tool must only name its arguments; a rule naming a tool
    /// that is not local may be about an MCP tool, checked when its server lists it.
    pub fn check_tools(&self, local: &[ToolSpec]) -> Result<(), RuleError> {
        if !self.names_one_tool() {
            return Ok(());
        }
        match local.iter().find(|s| s.name == self.rule.tool) {
            Some(spec) => self.unknown_argument(spec).map_or(Ok(()), Err),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::rules::Verdict;
    use serde_json::{Map, json};

    fn rule(tool: &str, args: Value) -> Rule {
        let args: Map<String, Value> = serde_json::from_value(args).expect("object");
        Rule {
            args,
            ..Rule::new(tool, Verdict::Allow)
        }
    }

    #[test]
    fn strings_glob_scalars_compare_and_missing_never_matches() {
        let r = CompiledRule::new(rule(
            "run_*",
            json!({"command": "git status*", "n": 3, "force": false, "x": null}),
        ))
        .expect("valid");
        let ok = json!({"command": "git status -s", "n": 3.0, "force": false, "x": null});
        assert!(r.matches("run_command", &ok));
        assert!(!r.matches("other", &ok));
        for bad in [
            json!({"command": "git push", "n": 3, "force": false, "x": null}),
            json!({"command": "git status", "n": 4, "force": false, "x": null}),
            json!({"command": "git status", "n": 3, "force": true, "x": null}),
            json!({"command": "git status", "n": 3, "force": false}),
            json!({"command": 5, "n": 3, "force": false, "x": null}),
        ] {
            assert!(!r.matches("run_command", &bad), "{bad}");
        }
    }

    #[test]
    fn every_element_must_match_and_an_empty_list_does_not() {
        let r = CompiledRule::new(rule("read", json!({"files[*]": "src/**"}))).expect("valid");
        assert!(r.matches("read", &json!({"files": ["src/a.rs", "src/b/c.rs"]})));
        assert!(!r.matches("read", &json!({"files": ["src/a.rs", "/etc/passwd"]})));
        assert!(!r.matches("read", &json!({"files": []})));
        let first = CompiledRule::new(rule("read", json!({"files[0]": "src/*"}))).expect("valid");
        assert!(first.matches("read", &json!({"files": ["src/a", "/etc/x"]})));
    }

    #[test]
    fn examples_are_checked_and_the_failing_one_named() {
        let mut r = rule("run_command", json!({"command": "git status*"}));
        r.must_match =
            vec![serde_json::from_value(json!({"command": "git status -s"})).expect("o")];
        r.not_match = vec![
            serde_json::from_value(json!({"command": "git push"})).expect("o"),
            serde_json::from_value(json!({"command": "git status --porcelain"})).expect("o"),
        ];
        let e = CompiledRule::new(r).expect_err("second not_match matches");
        assert_eq!(
            e,
            RuleError::Example {
                key: "not_match",
                index: 1,
                example: r#"{"command":"git status --porcelain"}"#.into()
            }
        );
        assert!(
            e.to_string().contains("matches its `not_match` example"),
            "{e}"
        );
    }

    #[test]
    fn containers_are_not_patterns_and_unknown_arguments_are_named() {
        let e = CompiledRule::new(rule("t", json!({"a": [1]}))).expect_err("array");
        assert!(matches!(e, RuleError::Pattern { .. }), "{e}");
        let spec = ToolSpec {
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            ..ToolSpec::new("run_command", vec!["true".into()])
        };
        let r = CompiledRule::new(rule("run_command", json!({"cmd": "ls"}))).expect("valid");
        let e = r
            .check_tools(std::slice::from_ref(&spec))
            .expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "args.cmd: the tool `run_command` has no argument `cmd`"
        );
        // A glob is not checked against one tool's schema.
        let g = CompiledRule::new(rule("run_*", json!({"cmd": "ls"}))).expect("valid");
        assert!(g.check_tools(&[spec]).is_ok());
    }
}
