//! The declared tools with their compiled schemas.

use serde_json::Value;

use tokio_util::sync::CancellationToken;

use super::mcp::McpHub;
use super::runner::{ToolOutcome, run};
use super::spec::{ToolSpec, compile_parameters};
use super::validate::{CallProblem, check_arguments};

/// Why the declared tools cannot be used: one problem per bad tool, each starting with
/// ``tool `name`: ``, shown one a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct ToolboxError {
    pub problems: Vec<String>,
}

/// The declared tools with their compiled schemas, in config order. Cheap to share: wrap it in an
/// `Arc` (it is `Send + Sync`).
#[derive(Debug, Clone, Default)]
pub struct Toolbox {
    specs: Vec<ToolSpec>,
    /// `validators[i]` checks the arguments of `specs[i]`.
    validators: Vec<jsonschema::Validator>,
    /// The MCP servers' tools, offered while their server is ready (shared by every clone).
    mcp: Option<McpHub>,
}

impl Toolbox {
    /// Check every spec ([`ToolSpec::check`]) and compile its schema. Duplicate names are
    /// rejected. The error is one line per bad tool, each starting with ``tool `name`: `` (or
    /// `tool #3:` for a tool without a name, counting from 1).
    pub fn new(specs: Vec<ToolSpec>) -> Result<Toolbox, ToolboxError> {
        let mut problems = Vec::new();
        let mut validators = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let label = if spec.name.is_empty() {
                format!("tool #{}", i + 1)
            } else {
                format!("tool `{}`", spec.name)
            };
            if let Err(e) = spec.check() {
                problems.push(format!("{label}: {e}"));
                continue;
            }
            if specs[..i].iter().any(|s| s.name == spec.name) {
                problems.push(format!(
                    "{label}: declared twice; tool names must be unique"
                ));
                continue;
            }
            match compile_parameters(&spec.parameters) {
                Ok(v) => validators.push(v),
                Err(e) => problems.push(format!("{label}: parameters: {e}")),
            }
        }
        if problems.is_empty() {
            Ok(Toolbox {
                specs,
                validators,
                mcp: None,
            })
        } else {
            Err(ToolboxError { problems })
        }
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The names, in config order, then the MCP tools offered now.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.specs.iter().map(|s| s.name.clone()).collect();
        names.extend(self.mcp_specs().into_iter().map(|s| s.name));
        names
    }

    /// Offer the tools of `hub`'s servers too (as they become ready).
    pub fn with_mcp(mut self, hub: McpHub) -> Toolbox {
        self.mcp = Some(hub);
        self
    }

    pub fn mcp(&self) -> Option<&McpHub> {
        self.mcp.as_ref()
    }

    fn mcp_specs(&self) -> Vec<ToolSpec> {
        self.mcp.as_ref().map(McpHub::specs).unwrap_or_default()
    }

    /// The tool `name`, local or offered now by an MCP server.
    pub fn find(&self, name: &str) -> Option<ToolSpec> {
        self.get(name).cloned().or_else(|| {
            self.mcp
                .as_ref()
                .and_then(|h| h.lookup(name))
                .map(|(spec, _)| spec)
        })
    }

    /// Run an approved call of `spec` (local: its process; MCP: a `tools/call` to its server,
    /// whose progress and log lines go to `notes`).
    /// The outcome, and the content of the `tool` message.
    pub async fn run_call(
        &self,
        spec: &ToolSpec,
        call_id: &str,
        arguments: &str,
        cancel: CancellationToken,
        notes: Option<tokio::sync::mpsc::UnboundedSender<super::mcp::ToolNote>>,
    ) -> (ToolOutcome, String) {
        match (&spec.mcp, &self.mcp) {
            (Some(_), Some(hub)) => {
                let out = hub.call(spec, arguments, cancel, notes).await;
                (out.outcome, out.content)
            }
            _ => {
                let outcome = run(spec, call_id, arguments, cancel).await;
                let content = outcome.to_model_content();
                (outcome, content)
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.specs.iter().find(|s| s.name == name)
    }

    /// The `tools` list of a request (and of the template's tool declaration), in config order.
    pub fn openai_tools(&self) -> Vec<Value> {
        let mut tools: Vec<Value> = self.specs.iter().map(ToolSpec::to_openai).collect();
        tools.extend(self.mcp_specs().iter().map(ToolSpec::to_openai));
        tools
    }

    /// Parse a call's arguments and validate them against the tool's schema. Ok is the arguments
    /// object. The problems exclude each other (an unknown tool has no schema, text that is not a
    /// JSON object cannot be checked against one), so one [`CallProblem`] is returned;
    /// [`CallProblem::Schema`] carries every schema error (up to
    /// [`MAX_SCHEMA_ERRORS`](super::validate::MAX_SCHEMA_ERRORS), then a count).
    ///
    /// This does not look at the approval policy: the caller decides from
    /// [`ToolSpec::approval`] whether to run, ask, or answer with
    /// [`CallProblem::denied_by_config`].
    pub fn check_call(&self, name: &str, arguments: &str) -> Result<Value, CallProblem> {
        let Some(i) = self.specs.iter().position(|s| s.name == name) else {
            if let Some((_, validator)) = self.mcp.as_ref().and_then(|h| h.lookup(name)) {
                return check_arguments(&validator, arguments);
            }
            return Err(CallProblem::UnknownTool {
                name: name.to_owned(),
                known: self.names(),
            });
        };
        check_arguments(&self.validators[i], arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::spec::Approval;
    use serde_json::json;

    fn weather() -> ToolSpec {
        ToolSpec {
            description: "Get weather information for a city".to_owned(),
            parameters: json!({
                "type": "object",
                "required": ["city"],
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                    "units": {"type": "object", "properties": {"temp": {"enum": ["c", "f"]}}}
                },
                "additionalProperties": false
            }),
            ..ToolSpec::new("get_weather", vec!["./weather.sh".to_owned()])
        }
    }

    fn toolbox() -> Toolbox {
        Toolbox::new(vec![
            weather(),
            ToolSpec::new("ns.time", vec!["date".to_owned()]),
        ])
        .expect("valid tools")
    }

    #[test]
    fn toolbox_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Toolbox>();
    }

    #[test]
    fn lookups_and_declarations() {
        let tb = toolbox();
        assert_eq!(tb.specs().len(), 2);
        assert_eq!(tb.names(), vec!["get_weather", "ns.time"]);
        assert_eq!(tb.get("ns.time").map(|s| s.approval), Some(Approval::Ask));
        assert!(tb.get("time").is_none());
        let tools = tb.openai_tools();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0]["function"]["name"], "get_weather");
        assert_eq!(
            tools[1]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
        let keys: Vec<&String> = tools[0]["function"]["parameters"]
            .as_object()
            .expect("object")
            .keys()
            .collect();
        assert_eq!(
            keys,
            vec!["type", "required", "properties", "additionalProperties"]
        );
    }

    #[test]
    fn new_rejects_duplicates_and_names_the_bad_tool() {
        let e = Toolbox::new(vec![weather(), weather()]).expect_err("duplicate");
        assert_eq!(
            e.to_string(),
            "tool `get_weather`: declared twice; tool names must be unique"
        );
        let bad = ToolSpec {
            timeout_secs: 0,
            ..ToolSpec::new("slow", vec!["x".to_owned()])
        };
        let unnamed = ToolSpec::new("", vec!["x".to_owned()]);
        let e = Toolbox::new(vec![weather(), bad, unnamed])
            .expect_err("two bad tools")
            .to_string();
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(
            lines,
            vec![
                "tool `slow`: timeout_secs: must be at least 1",
                "tool #3: name: must not be empty"
            ]
        );
        assert!(Toolbox::new(vec![]).expect("no tools is fine").is_empty());
    }

    #[test]
    fn valid_arguments_come_back_parsed() {
        let tb = toolbox();
        assert_eq!(
            tb.check_call("get_weather", r#"{"city": "Beijing", "days": 3}"#),
            Ok(json!({"city": "Beijing", "days": 3}))
        );
        assert_eq!(tb.check_call("ns.time", "{}"), Ok(json!({})));
        assert_eq!(
            tb.check_call("ns.time", " \n{ }\n"),
            Ok(json!({})),
            "whitespace around the object is fine"
        );
    }

    #[test]
    fn unknown_tool_lists_the_available_ones() {
        let p = toolbox()
            .check_call("get_wether", "{}")
            .expect_err("unknown");
        assert_eq!(
            p.to_string(),
            "tool `get_wether` does not exist; available tools: get_weather, ns.time"
        );
        assert!(!p.is_argument_problem());
        let p = Toolbox::default()
            .check_call("x", "{}")
            .expect_err("unknown");
        assert_eq!(
            p.to_string(),
            "tool `x` does not exist; no tools are available"
        );
    }

    #[test]
    fn invalid_json_double_encoded_and_non_objects() {
        let tb = toolbox();
        let p = tb
            .check_call("get_weather", r#"{"city": "Beij"#)
            .expect_err("invalid");
        assert!(
            matches!(&p, CallProblem::InvalidJson { error } if error.contains("EOF")),
            "{p:?}"
        );
        assert!(
            p.to_string()
                .starts_with("the arguments are not valid JSON: ")
        );
        assert!(p.is_argument_problem());
        assert!(matches!(
            tb.check_call("get_weather", ""),
            Err(CallProblem::InvalidJson { .. })
        ));
        assert_eq!(
            tb.check_call("get_weather", r#""{\"city\": \"Beijing\"}""#),
            Err(CallProblem::DoubleEncoded)
        );
        for not_object in ["[1, 2]", "42", "null", "\"Beijing\"", "true"] {
            assert_eq!(
                tb.check_call("get_weather", not_object),
                Err(CallProblem::NotAnObject),
                "{not_object}"
            );
        }
    }

    #[test]
    fn schema_errors_carry_paths_and_all_errors() {
        let tb = toolbox();
        let p = tb
            .check_call("get_weather", r#"{"city": 42}"#)
            .expect_err("wrong type");
        assert_eq!(
            p,
            CallProblem::Schema {
                errors: vec![r#"at /city: 42 is not of type "string""#.to_owned()]
            }
        );
        assert_eq!(
            p.to_string(),
            r#"the arguments do not match the tool's parameters: at /city: 42 is not of type "string""#
        );

        let p = tb
            .check_call(
                "get_weather",
                r#"{"days": 9, "units": {"temp": "k"}, "extra": true}"#,
            )
            .expect_err("several errors");
        let CallProblem::Schema { errors } = &p else {
            panic!("{p:?}")
        };
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("at /: ") && e.contains("\"city\" is a required property")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("at /days: ") && e.contains('7')),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.starts_with("at /units/temp: ")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("at /: ") && e.contains("extra")),
            "{errors:?}"
        );
        assert!(!p.to_string().contains('\n'));
    }

    #[test]
    fn many_schema_errors_are_capped_and_counted() {
        let mut props = serde_json::Map::new();
        let mut args = serde_json::Map::new();
        for i in 0..15 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
            args.insert(format!("p{i}"), json!(i));
        }
        let spec = ToolSpec {
            parameters: json!({"type": "object", "properties": props}),
            ..ToolSpec::new("many", vec!["x".to_owned()])
        };
        let tb = Toolbox::new(vec![spec]).expect("valid");
        let p = tb
            .check_call("many", &Value::Object(args).to_string())
            .expect_err("15 errors");
        let CallProblem::Schema { errors } = p else {
            panic!("schema problem expected")
        };
        assert_eq!(errors.len(), 11);
        assert_eq!(errors[10], "and 5 more");
    }

    #[test]
    fn denials_read_as_one_line() {
        assert_eq!(
            CallProblem::declined_by_user(None).to_string(),
            "the user declined to run this tool"
        );
        assert_eq!(
            CallProblem::declined_by_user(Some("  ".to_owned())),
            CallProblem::Denied { reason: None }
        );
        assert_eq!(
            CallProblem::declined_by_user(Some("not now\nplease".to_owned())).to_string(),
            "the user declined to run this tool: not now please"
        );
        assert_eq!(
            CallProblem::denied_by_config("rm").to_string(),
            "the user declined to run this tool: the configuration sets approval = \"deny\" for `rm`"
        );
    }
}
