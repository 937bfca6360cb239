//! Argument paths: `repo`, `options.force`, `files[0]`, `files[*]` name values in a call's
//! arguments object.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
    /// `[*]`: every element of an array.
    Every,
}

/// Why a path cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad argument path `{path}`: {why}")]
pub struct PathError {
    pub path: String,
    pub why: &'static str,
}

/// A parsed argument path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgPath {
    pub steps: Vec<Step>,
}

impl ArgPath {
    pub fn parse(path: &str) -> Result<ArgPath, PathError> {
        let err = |why| PathError {
            path: path.to_owned(),
            why,
        };
        let mut steps = Vec::new();
        let mut rest = path;
        let mut expect_key = true;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let (inside, tail) = after.split_once(']').ok_or_else(|| err("unclosed `[`"))?;
                steps.push(match inside {
                    "*" => Step::Every,
                    n => Step::Index(n.parse().map_err(|_| err("an index is a number or `*`"))?),
                });
                rest = tail;
                expect_key = false;
                continue;
            }
            if !expect_key {
                rest = rest
                    .strip_prefix('.')
                    .ok_or_else(|| err("expected `.` or `[` after a key or index"))?;
            }
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return Err(err("empty key"));
            }
            steps.push(Step::Key(rest[..end].to_owned()));
            rest = &rest[end..];
            expect_key = false;
        }
        match steps.first() {
            Some(Step::Key(_)) => Ok(ArgPath { steps }),
            _ => Err(err("a path starts with an argument name")),
        }
    }

    /// The top-level argument the path starts at.
    pub fn argument(&self) -> &str {
        match self.steps.first() {
            Some(Step::Key(k)) => k,
            _ => "",
        }
    }

    /// The values the path names in `arguments` (several through `[*]`; none when missing).
    pub fn values<'a>(&self, arguments: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![arguments];
        for step in &self.steps {
            current = current
                .into_iter()
                .flat_map(|v| -> Vec<&'a Value> {
                    match (step, v) {
                        (Step::Key(k), Value::Object(m)) => m.get(k).into_iter().collect(),
                        (Step::Index(i), Value::Array(a)) => a.get(*i).into_iter().collect(),
                        (Step::Every, Value::Array(a)) => a.iter().collect(),
                        _ => Vec::new(),
                    }
                })
                .collect();
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_name_nested_values_and_every_element() {
        let args = json!({"repo": "a", "options": {"force": true}, "files": ["x", "y"]});
        let get = |p: &str| ArgPath::parse(p).expect(p).values(&args);
        assert_eq!(get("repo"), vec![&json!("a")]);
        assert_eq!(get("options.force"), vec![&json!(true)]);
        assert_eq!(get("files[1]"), vec![&json!("y")]);
        assert_eq!(get("files[*]"), vec![&json!("x"), &json!("y")]);
        assert!(get("files[2]").is_empty());
        assert!(get("missing.deep").is_empty());
        assert_eq!(
            ArgPath::parse("options.force").expect("ok").argument(),
            "options"
        );
    }

    #[test]
    fn malformed_paths_are_refused() {
        for p in ["", "[0]", "a[", "a[x]", "a..b", "a.", "a]b"] {
            let r = ArgPath::parse(p);
            if p == "a]b" {
                // A `]` outside brackets is part of the key name.
                assert!(r.is_ok(), "{p}");
            } else {
                assert!(r.is_err(), "{p}");
            }
        }
    }
}
