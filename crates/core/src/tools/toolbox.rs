//! The tools a session offers: the local tools first, then the MCP servers', each kind a
//! [`ToolSource`]; listed, found, checked and run the same way whatever their source.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::local::LocalTools;
use super::mcp::{McpHub, ToolNote};
use super::result::ToolResult;
use super::rules::Rules;
use super::source::ToolSource;
use super::spec::ToolSpec;
use super::validate::{CallProblem, check_arguments};

/// Why the declared tools cannot be used: one problem per bad tool, each starting with
/// ``tool `name`: ``, shown one a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("\n"))]
pub struct ToolboxError {
    pub problems: Vec<String>,
}

/// The tools of a session, source by source. Cheap to share: wrap it in an `Arc` (it is
/// `Send + Sync`); clones share the sources.
#[derive(Debug, Clone)]
pub struct Toolbox {
    /// The config's tools (also the first of `sources`).
    local: Arc<LocalTools>,
    /// The MCP servers (also in `sources`, after the local tools), for what only they offer:
    /// resources, prompts, reports.
    mcp: Option<McpHub>,
    /// In the order tools are offered and looked up: a name a source offers hides the same
    /// name in the sources after it, so the local tools win.
    sources: Vec<Arc<dyn ToolSource>>,
    /// The rules on calls, shared by every clone (the supervisor's and its agent's).
    rules: Rules,
}

impl Default for Toolbox {
    fn default() -> Toolbox {
        Toolbox::from_local(LocalTools::default())
    }
}

impl Toolbox {
    /// The config's tools: see [`LocalTools::new`] for the checks and the error.
    pub fn new(specs: Vec<ToolSpec>) -> Result<Toolbox, ToolboxError> {
        LocalTools::new(specs).map(Toolbox::from_local)
    }

    fn from_local(local: LocalTools) -> Toolbox {
        let local = Arc::new(local);
        Toolbox {
            sources: vec![local.clone() as Arc<dyn ToolSource>],
            local,
            mcp: None,
            rules: Rules::default(),
        }
    }

    /// The config's tools.
    pub fn specs(&self) -> &[ToolSpec] {
        self.local.declared()
    }

    /// No tools in the config (MCP servers aside).
    pub fn is_empty(&self) -> bool {
        self.local.declared().is_empty()
    }

    /// Offer the tools of `hub`'s servers too (as they become ready), after the local ones.
    pub fn with_mcp(mut self, hub: McpHub) -> Toolbox {
        self.sources.push(Arc::new(hub.clone()));
        self.mcp = Some(hub);
        self
    }

    /// Offer the tools of `source` too, after those of the sources already there.
    pub fn with_source(mut self, source: Arc<dyn ToolSource>) -> Toolbox {
        self.sources.push(source);
        self
    }

    /// Decide calls with `rules` (none by default: each tool's `approval` decides).
    pub fn with_rules(mut self, rules: Rules) -> Toolbox {
        self.rules = rules;
        self
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    pub fn mcp(&self) -> Option<&McpHub> {
        self.mcp.as_ref()
    }

    /// The tools offered now, source by source; a name an earlier source offers is not
    /// offered again (calls of it go to the earlier source, see [`Toolbox::find`]).
    fn offered(&self) -> Vec<ToolSpec> {
        let mut seen = std::collections::HashSet::new();
        self.sources
            .iter()
            .flat_map(|s| s.specs())
            .filter(|s| seen.insert(s.name.clone()))
            .collect()
    }

    /// The names of the tools offered now: the config's, in config order, then each further
    /// source's.
    pub fn names(&self) -> Vec<String> {
        self.offered().into_iter().map(|s| s.name).collect()
    }

    /// The tool `name`, from the first source offering it now.
    pub fn find(&self, name: &str) -> Option<ToolSpec> {
        self.sources
            .iter()
            .find_map(|s| s.lookup(name))
            .map(|t| t.spec)
    }

    /// Run an approved call of `spec` by the source whose tool it is (local: its process; MCP:
    /// a `tools/call` to its server, whose progress and log lines go to `notes`).
    pub async fn run_call(
        &self,
        spec: &ToolSpec,
        call_id: &str,
        arguments: &str,
        cancel: CancellationToken,
        notes: Option<UnboundedSender<ToolNote>>,
    ) -> ToolResult {
        match self.sources.iter().find(|s| s.runs(spec)) {
            Some(source) => source.call(spec, call_id, arguments, cancel, notes).await,
            None => ToolResult::could_not_start(
                format!("no source of tools runs `{}`", spec.name),
                std::time::Duration::ZERO,
            ),
        }
    }

    /// The config's tool `name`.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.local.declared().iter().find(|s| s.name == name)
    }

    /// The `tools` list of a request (and of the template's tool declaration), in the order of
    /// [`Toolbox::names`].
    pub fn openai_tools(&self) -> Vec<Value> {
        self.offered().iter().map(ToolSpec::to_openai).collect()
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
        match self.sources.iter().find_map(|s| s.lookup(name)) {
            Some(tool) => check_arguments(&tool.validator, arguments),
            None => Err(CallProblem::UnknownTool {
                name: name.to_owned(),
                known: self.names(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::mcp::McpOrigin;
    use crate::tools::result::{Failure, ToolStatus};
    use crate::tools::source::{CallFuture, OfferedTool};
    use crate::tools::spec::{Approval, compile_parameters};
    use serde_json::json;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A source of tools that are not processes: it answers every call itself and keeps the
    /// call ids it was given.
    #[derive(Debug)]
    struct Answering {
        specs: Vec<ToolSpec>,
        calls: Mutex<Vec<String>>,
    }

    impl Answering {
        fn new(names: &[&str]) -> Arc<Answering> {
            let specs = names
                .iter()
                .map(|n| ToolSpec {
                    description: format!("{n} from elsewhere"),
                    parameters: json!({"type": "object", "required": ["q"]}),
                    mcp: Some(McpOrigin {
                        server: "elsewhere".to_owned(),
                        tool: (*n).to_owned(),
                    }),
                    ..ToolSpec::new(*n, vec![])
                })
                .collect();
            Arc::new(Answering {
                specs,
                calls: Mutex::new(Vec::new()),
            })
        }
    }

    impl ToolSource for Answering {
        fn specs(&self) -> Vec<ToolSpec> {
            self.specs.clone()
        }

        fn lookup(&self, name: &str) -> Option<OfferedTool> {
            let spec = self.specs.iter().find(|s| s.name == name)?.clone();
            let validator = Arc::new(compile_parameters(&spec.parameters).expect("schema"));
            Some(OfferedTool { spec, validator })
        }

        fn runs(&self, spec: &ToolSpec) -> bool {
            spec.mcp.is_some()
        }

        fn call<'a>(
            &'a self,
            spec: &'a ToolSpec,
            call_id: &'a str,
            arguments: &'a str,
            _cancel: CancellationToken,
            _notes: Option<UnboundedSender<ToolNote>>,
        ) -> CallFuture<'a> {
            self.calls.lock().expect("calls").push(call_id.to_owned());
            Box::pin(async move {
                ToolResult::without_output(
                    ToolStatus::Failed(Failure::ErrorResult),
                    format!("{} answered {arguments}", spec.name),
                    Duration::ZERO,
                )
            })
        }
    }

    fn printing(name: &str, text: &str) -> ToolSpec {
        ToolSpec {
            approval: Approval::Auto,
            ..ToolSpec::new(
                name,
                vec!["sh".to_owned(), "-c".to_owned(), format!("printf {text}")],
            )
        }
    }

    #[tokio::test]
    async fn a_call_goes_to_the_source_whose_tool_it_is() {
        let other = Answering::new(&["remote"]);
        let tb = Toolbox::new(vec![printing("here", "local-ran")])
            .expect("valid")
            .with_source(other.clone());
        let run = |name: &'static str| {
            let tb = tb.clone();
            async move {
                let spec = tb.find(name).expect("offered");
                tb.run_call(&spec, "call-1", "{}", CancellationToken::new(), None)
                    .await
            }
        };
        let remote = run("remote").await;
        assert_eq!(remote.content, "remote answered {}");
        assert_eq!(remote.status, ToolStatus::Failed(Failure::ErrorResult));
        assert_eq!(*other.calls.lock().expect("calls"), vec!["call-1"]);
        let local = run("here").await;
        assert_eq!(local.content, "local-ran");
        assert_eq!(local.status, ToolStatus::Ok);
        assert_eq!(local.output, "local-ran");
        assert_eq!(
            other.calls.lock().expect("calls").len(),
            1,
            "the local call never reached the other source"
        );
    }

    #[tokio::test]
    async fn a_tool_no_source_runs_is_not_run() {
        let spec = Answering::new(&["remote"]).specs[0].clone();
        let r = Toolbox::default()
            .run_call(&spec, "c", "{}", CancellationToken::new(), None)
            .await;
        assert_eq!(r.content, "[no source of tools runs `remote`]");
        assert!(matches!(r.status, ToolStatus::CouldNotStart(_)), "{r:?}");
    }

    #[test]
    fn unknown_tools_are_unknown_in_every_source() {
        let tb = toolbox().with_source(Answering::new(&["remote"]));
        assert!(tb.find("nope").is_none());
        assert_eq!(
            tb.check_call("nope", "{}")
                .expect_err("unknown")
                .to_string(),
            "tool `nope` does not exist; available tools: get_weather, ns.time, remote"
        );
        // The other source's schema checks its tool's arguments.
        assert_eq!(tb.check_call("remote", r#"{"q": 1}"#), Ok(json!({"q": 1})));
        assert!(matches!(
            tb.check_call("remote", "{}"),
            Err(CallProblem::Schema { .. })
        ));
    }

    #[test]
    fn sources_are_offered_in_order_and_the_local_tools_win() {
        let tb = toolbox()
            .with_source(Answering::new(&["b", "get_weather"]))
            .with_source(Answering::new(&["a", "b"]));
        assert_eq!(tb.names(), vec!["get_weather", "ns.time", "b", "a"]);
        let declared: Vec<Value> = tb
            .openai_tools()
            .iter()
            .map(|t| t["function"]["name"].clone())
            .collect();
        assert_eq!(declared, vec!["get_weather", "ns.time", "b", "a"]);
        assert_eq!(
            tb.openai_tools()[2]["function"]["description"],
            "b from elsewhere"
        );
        let found = tb.find("get_weather").expect("found");
        assert!(
            found.mcp.is_none(),
            "the local tool, not the other source's"
        );
        // The local schema checks it: `city` is required there, `q` is not known.
        assert!(tb.check_call("get_weather", r#"{"q": 1}"#).is_err());
        assert!(tb.check_call("get_weather", r#"{"city": "Oslo"}"#).is_ok());
    }

    #[tokio::test]
    async fn local_and_mcp_failures_come_back_in_the_same_form() {
        let missing = ToolSpec::new("gone", vec!["/nonexistent/kimi-tool".to_owned()]);
        let hub = McpHub::new(vec![], Vec::<String>::new()).with_media_dir(None);
        let tb = Toolbox::new(vec![missing.clone()])
            .expect("valid")
            .with_mcp(hub);
        let remote = ToolSpec {
            mcp: Some(McpOrigin {
                server: "away".to_owned(),
                tool: "t".to_owned(),
            }),
            ..ToolSpec::new("mcp__away__t", vec![])
        };
        let mut results = Vec::new();
        for spec in [&missing, &remote] {
            results.push(
                tb.run_call(spec, "c", "{}", CancellationToken::new(), None)
                    .await,
            );
        }
        for r in &results {
            let ToolStatus::CouldNotStart(why) = &r.status else {
                panic!("{r:?}")
            };
            assert_eq!(r.content, format!("[{why}]"));
            assert_eq!(r.status.label(), format!("could not start: {why}"));
            assert!(!r.success() && r.output.is_empty() && !r.truncated);
        }
        assert!(
            results[0].content.contains("/nonexistent/kimi-tool"),
            "{results:?}"
        );
        assert!(results[1].content.contains("away"), "{results:?}");
    }

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
