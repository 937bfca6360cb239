//! One `[[tools]]` entry of the config file, and how it is declared to the model.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::env::check_inherit_env;
use super::sandbox::{SandboxMode, SandboxPolicy};

/// Whether a call runs without asking the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Show the approval dialog for every call (the default).
    #[default]
    Ask,
    /// Run valid calls without asking.
    Auto,
    /// Never run; the model is told the call was declined.
    Deny,
}

/// Output kept from a tool's stdout when `max_output_bytes` is not set: 64 KiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Longest accepted tool name (the OpenAI API's limit for function names).
pub(crate) const MAX_NAME_LEN: usize = 64;

/// One `[[tools]]` entry of the TOML config.
///
/// ```toml
/// [[tools]]
/// name = "get_weather"
/// description = "Get weather information for a city"
/// command = ["./assets/tools/weather.sh"]   # argv, no shell; the JSON arguments arrive on stdin
/// approval = "ask"                          # ask | auto | deny
/// timeout_secs = 20
/// parameters = { type = "object", required = ["city"], properties = { city = { type = "string" } } }
/// sandbox = "read-only"                     # none | read-only | workspace-write (Landlock)
/// network = false                           # no TCP connect or bind
/// ```
///
/// Deserializing only checks the shapes; call [`ToolSpec::check`] (or build a
/// [`Toolbox`](super::Toolbox)) for everything else.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The function name the model calls: `[A-Za-z0-9_.-]`, at most 64 characters.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A JSON Schema for the arguments object, sent to the model as written (key order kept).
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// The program and its arguments, run without a shell. The call's arguments are never put in
    /// argv: they arrive on stdin. A relative `command[0]` containing a `/` (such as
    /// `./assets/tools/weather.sh`) is resolved against `cwd` if set, else against the current
    /// directory of this process; a bare name (`date`) is looked up in `PATH`.
    pub command: Vec<String>,
    #[serde(default)]
    pub approval: Approval,
    /// The process group is killed after this many seconds. Default 30.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// The child's working directory; a relative path is taken from this process's current
    /// directory. Default: the current directory of this process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// Extra environment variables; the child otherwise inherits this process's environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// When set, the only variables inherited from this process's environment (`env` and
    /// `KIMI_TOOL_*` are still added): a clean environment for a tool. API key variables are
    /// removed even when listed. See [`super::env::child_env`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherit_env: Option<Vec<String>>,
    /// Bytes of stdout kept for the model; the rest is counted and discarded. Default 64 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<usize>,
    /// Where the tool's process may write: `none` (the default: anywhere the user may),
    /// `read-only` (only a private `TMPDIR` of its own) or `workspace-write` (also under
    /// `cwd`). Enforced by the kernel (Landlock on Linux); a tool whose sandbox cannot be
    /// enforced here does not run. See [`super::sandbox`].
    #[serde(default, skip_serializing_if = "SandboxMode::is_none")]
    pub sandbox: SandboxMode,
    /// `false`: the tool's process may not open TCP connections nor listen. Default `true`.
    #[serde(
        default = "crate::tools::sandbox::default_network",
        skip_serializing_if = "crate::tools::sandbox::is_true"
    )]
    pub network: bool,
    /// Variables removed from the tool's environment: every profile's API key variable, so a
    /// tool (and through its output, the model) never sees a key. Set by the program, not
    /// the config file.
    #[serde(skip)]
    pub hidden_env: Vec<String>,
    /// Set for a tool offered by an MCP server (never from the `[[tools]]` table): which server
    /// and which of its tools a call goes to. `command` is empty then.
    #[serde(skip)]
    pub mcp: Option<super::mcp::McpOrigin>,
}

/// `{"type": "object", "properties": {}}`: a tool without parameters.
pub(crate) fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn default_timeout() -> u64 {
    30
}

impl ToolSpec {
    /// A spec with the defaults and the given name and argv; handy for tests and built-in tools.
    pub fn new(name: impl Into<String>, command: Vec<String>) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: empty_object_schema(),
            command,
            approval: Approval::default(),
            timeout_secs: default_timeout(),
            cwd: None,
            env: BTreeMap::new(),
            inherit_env: None,
            max_output_bytes: None,
            sandbox: SandboxMode::None,
            network: true,
            hidden_env: Vec::new(),
            mcp: None,
        }
    }

    /// What the tool's process is confined to: its `sandbox` and `network` settings.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        SandboxPolicy {
            mode: self.sandbox,
            network: self.network,
        }
    }

    /// The stdout cap: `max_output_bytes`, or 64 KiB.
    pub fn output_cap(&self) -> usize {
        self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
    }

    /// Problems a config author must fix, joined with `; ` into one line, each naming its field:
    /// an empty name or one with characters other than `[A-Za-z0-9_.-]` (or longer than 64),
    /// an empty `command` or `command[0]`, NUL bytes in argv or env, `timeout_secs = 0`,
    /// `max_output_bytes = 0`, and `parameters` that are not a JSON Schema object (a JSON object,
    /// `type` absent or `"object"`, accepted by the jsonschema compiler).
    pub fn check(&self) -> Result<(), ToolSpecError> {
        let mut problems = Vec::new();
        if self.name.is_empty() {
            problems.push("name: must not be empty".to_owned());
        } else if let Some(c) = self
            .name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            problems.push(format!(
                "name: {c:?} is not allowed; use only letters, digits, `_`, `.` and `-`"
            ));
        } else if self.name.len() > MAX_NAME_LEN {
            problems.push(format!(
                "name: {} characters is too long; at most {MAX_NAME_LEN}",
                self.name.len()
            ));
        }
        match self.command.first() {
            None => problems.push(
                "command: must not be empty (give the program and its arguments, e.g. [\"./tool.sh\"])"
                    .to_owned(),
            ),
            Some(program) if program.is_empty() => {
                problems.push("command: the program (first element) must not be empty".to_owned())
            }
            Some(_) => {}
        }
        if self.command.iter().any(|a| a.contains('\0')) {
            problems.push("command: must not contain NUL characters".to_owned());
        }
        if self.timeout_secs == 0 {
            problems.push("timeout_secs: must be at least 1".to_owned());
        } else if self.timeout_secs > crate::config::MAX_DURATION_SECS {
            problems.push(format!(
                "timeout_secs: must be from 1 to {} (a day), got {}",
                crate::config::MAX_DURATION_SECS,
                self.timeout_secs
            ));
        }
        if self.max_output_bytes == Some(0) {
            problems.push("max_output_bytes: must be at least 1".to_owned());
        }
        for (key, value) in &self.env {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                problems.push(format!(
                    "env: {key:?} is not a valid variable name (empty, or contains `=` or NUL)"
                ));
            } else if value.contains('\0') {
                problems.push(format!("env: the value of {key} must not contain NUL"));
            }
        }
        if let Some(problem) = self.inherit_env.as_deref().and_then(check_inherit_env) {
            problems.push(problem);
        }
        if let Err(e) = compile_parameters(&self.parameters) {
            problems.push(format!("parameters: {e}"));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolSpecError { problems })
        }
    }

    /// The OpenAI tool declaration:
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`, keys in that
    /// order, `parameters` exactly as written.
    /// What the model and the user were shown of the tool (name, description, schema), as
    /// one number: "always allow" holds for this fingerprint only, so a tool whose server
    /// changes its description or schema is asked about again.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.name.hash(&mut h);
        self.description.hash(&mut h);
        self.parameters.to_string().hash(&mut h);
        h.finish()
    }

    pub(crate) fn to_openai(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".to_owned(), Value::String(self.name.clone()));
        function.insert(
            "description".to_owned(),
            Value::String(self.description.clone()),
        );
        function.insert("parameters".to_owned(), self.parameters.clone());
        let mut tool = Map::new();
        tool.insert("type".to_owned(), Value::String("function".to_owned()));
        tool.insert("function".to_owned(), Value::Object(function));
        Value::Object(tool)
    }
}

/// What a tool spec's author must fix: each problem names its field, and they show on one
/// line joined with `; `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("; "))]
pub struct ToolSpecError {
    pub problems: Vec<String>,
}

/// Why a tool's `parameters` (or an MCP tool's `inputSchema`) is not a usable schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// `kind` is what was there instead ("an array").
    #[error(
        "must be a JSON Schema object such as {{ type = \"object\", properties = {{ ... }} }}, not {kind}"
    )]
    NotAnObject { kind: &'static str },
    /// `found` is the `type` value as JSON.
    #[error("`type` must be \"object\" (tool arguments are always an object), not {found}")]
    TypeNotObject { found: String },
    /// The compiler's message, already on one line.
    #[error("{0}")]
    Invalid(String),
}

/// Compile `parameters` into a validator, or say in one line why it is not a usable schema.
pub(crate) fn compile_parameters(parameters: &Value) -> Result<jsonschema::Validator, SchemaError> {
    let Value::Object(map) = parameters else {
        return Err(SchemaError::NotAnObject {
            kind: kind_of(parameters),
        });
    };
    match map.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(SchemaError::TypeNotObject {
                found: other.to_string(),
            });
        }
    }
    jsonschema::validator_for(parameters)
        .map_err(|e| SchemaError::Invalid(one_line(&format!("not a valid JSON Schema: {e}"))))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Newlines and other control characters become spaces, and the text is cut at 300 characters,
/// so a message stays on one line.
pub(crate) fn one_line(text: &str) -> String {
    const MAX: usize = 300;
    let mut out = String::with_capacity(text.len().min(MAX + 3));
    for (n, c) in text.chars().enumerate() {
        if n == MAX {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_from_toml(text: &str) -> ToolSpec {
        #[derive(Deserialize)]
        struct Config {
            tools: Vec<ToolSpec>,
        }
        let mut config: Config = toml::from_str(text).expect("valid TOML");
        config.tools.remove(0)
    }

    const WEATHER: &str = r#"
[[tools]]
name = "get_weather"
description = "Get weather information for a city"
command = ["./assets/tools/weather.sh"]
approval = "auto"
timeout_secs = 20
parameters = { type = "object", required = ["city"], properties = { city = { type = "string", description = "City name" } } }
"#;

    #[test]
    fn parses_the_design_example_and_declares_it_in_written_order() {
        let spec = spec_from_toml(WEATHER);
        assert_eq!(spec.approval, Approval::Auto);
        assert_eq!(spec.timeout_secs, 20);
        assert_eq!(spec.command, vec!["./assets/tools/weather.sh"]);
        spec.check().expect("valid spec");
        let openai = spec.to_openai();
        // serde_json with preserve_order: the written order is the serialized order.
        assert_eq!(
            serde_json::to_string(&openai).expect("serializable"),
            r#"{"type":"function","function":{"name":"get_weather","description":"Get weather information for a city","parameters":{"type":"object","required":["city"],"properties":{"city":{"type":"string","description":"City name"}}}}}"#
        );
    }

    #[test]
    fn defaults_apply() {
        let spec = spec_from_toml("[[tools]]\nname = \"t\"\ncommand = [\"date\"]\n");
        assert_eq!(spec, ToolSpec::new("t", vec!["date".to_owned()]));
        assert_eq!(spec.approval, Approval::Ask);
        assert_eq!(spec.timeout_secs, 30);
        assert_eq!(spec.parameters, json!({"type": "object", "properties": {}}));
        assert_eq!(spec.output_cap(), 65536);
        assert_eq!(spec.description, "");
        spec.check().expect("valid spec");
    }

    #[test]
    fn unknown_fields_and_bad_approval_are_rejected() {
        let e = toml::from_str::<ToolSpec>("name = \"t\"\ncommand = [\"x\"]\ntimeout = 3\n")
            .expect_err("unknown field");
        assert!(e.to_string().contains("timeout"), "{e}");
        let e = toml::from_str::<ToolSpec>("name = \"t\"\ncommand = [\"x\"]\napproval = \"yes\"\n")
            .expect_err("bad approval");
        assert!(e.to_string().contains("ask"), "{e}");
    }

    #[test]
    fn check_names_each_bad_field() {
        let base = ToolSpec::new("ok.name-1_x", vec!["./t.sh".to_owned()]);
        base.check().expect("valid");
        let cases: Vec<(ToolSpec, &str)> = vec![
            (
                ToolSpec {
                    name: String::new(),
                    ..base.clone()
                },
                "name: must not be empty",
            ),
            (
                ToolSpec {
                    name: "get weather".to_owned(),
                    ..base.clone()
                },
                "name: ' ' is not allowed",
            ),
            (
                ToolSpec {
                    name: "x".repeat(65),
                    ..base.clone()
                },
                "name: 65 characters",
            ),
            (
                ToolSpec {
                    command: vec![],
                    ..base.clone()
                },
                "command: must not be empty",
            ),
            (
                ToolSpec {
                    command: vec![String::new()],
                    ..base.clone()
                },
                "command: the program",
            ),
            (
                ToolSpec {
                    timeout_secs: 0,
                    ..base.clone()
                },
                "timeout_secs: must be at least 1",
            ),
            (
                ToolSpec {
                    max_output_bytes: Some(0),
                    ..base.clone()
                },
                "max_output_bytes: must be at least 1",
            ),
            (
                ToolSpec {
                    env: [("A=B".to_owned(), "x".to_owned())].into(),
                    ..base.clone()
                },
                "env: \"A=B\"",
            ),
            (
                ToolSpec {
                    parameters: json!("object"),
                    ..base.clone()
                },
                "parameters: must be a JSON Schema object",
            ),
            (
                ToolSpec {
                    parameters: json!({"type": "string"}),
                    ..base.clone()
                },
                "parameters: `type` must be \"object\"",
            ),
            (
                ToolSpec {
                    parameters: json!({"type": "object", "properties": {"city": {"type": "strin"}}}),
                    ..base.clone()
                },
                "parameters: not a valid JSON Schema",
            ),
            (
                ToolSpec {
                    parameters: json!({"type": "object", "required": "city"}),
                    ..base.clone()
                },
                "parameters: not a valid JSON Schema",
            ),
        ];
        for (spec, expected) in cases {
            let e = spec.check().expect_err(expected).to_string();
            assert!(e.contains(expected), "{e:?} should contain {expected:?}");
            assert!(!e.contains('\n'), "one line: {e:?}");
        }
    }

    #[test]
    fn check_reports_every_problem_on_one_line() {
        let spec = ToolSpec {
            timeout_secs: 0,
            ..ToolSpec::new("", vec![])
        };
        let e = spec.check().expect_err("three problems").to_string();
        assert_eq!(e.matches("; ").count(), 2, "{e}");
        assert!(e.starts_with("name:"), "{e}");
    }

    #[test]
    fn remote_refs_fail_to_compile_without_panicking() {
        let spec = ToolSpec {
            parameters: json!({"type": "object", "properties": {"x": {"$ref": "https://example.invalid/s.json"}}}),
            ..ToolSpec::new("t", vec!["x".to_owned()])
        };
        let e = spec.check().expect_err("no network resolution").to_string();
        assert!(e.starts_with("parameters: not a valid JSON Schema"), "{e}");
    }

    #[test]
    fn sandbox_settings_parse_and_default_to_unconfined() {
        let spec = spec_from_toml(
            "[[tools]]\nname = \"t\"\ncommand = [\"date\"]\nsandbox = \"workspace-write\"\nnetwork = false\n",
        );
        assert_eq!(
            spec.sandbox_policy(),
            SandboxPolicy {
                mode: SandboxMode::WorkspaceWrite,
                network: false
            }
        );
        let text = toml::to_string(&spec).expect("serializable");
        assert!(text.contains("sandbox = \"workspace-write\""), "{text}");
        assert_eq!(
            toml::from_str::<ToolSpec>(&text).expect("parses back"),
            spec
        );
        let plain = ToolSpec::new("t", vec!["date".to_owned()]);
        assert!(plain.sandbox_policy().is_unconfined());
        let text = toml::to_string(&plain).expect("serializable");
        assert!(
            !text.contains("sandbox") && !text.contains("network"),
            "{text}"
        );
    }

    #[test]
    fn round_trips_through_toml() {
        let spec = spec_from_toml(WEATHER);
        let text = toml::to_string(&spec).expect("serializable");
        let back: ToolSpec = toml::from_str(&text).expect("parses back");
        assert_eq!(back, spec);
    }
}
