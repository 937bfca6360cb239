//! The TOML config file: profiles (where the model is and how to talk to it) and tools.
//! Every error names the file, the line and the key, and what was expected; nothing starts
//! half-configured.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::de::{DeTable, DeValue};

use kimi_protocol::Mode;
use kimi_protocol::family::Template;

use crate::tools::mcp::McpServerConfig;
use crate::tools::rules::{CompiledRule, Rule, RuleSource};
use crate::tools::{ToolSpec, Toolbox, ToolboxError};
use kimi_client::{Endpoint, ReasoningField};

/// One way to reach a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default)]
    pub mode: Mode,
    /// Up to `/v1`, e.g. `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    #[serde(default = "default_model")]
    pub model: String,
    /// The environment variable holding the API key; the key itself is never in the file.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Unset: 0.6, or for a thinking model 1.0 (0.6 with `thinking = false`); see
    /// [`Profile::temperature`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Unset: 4096, or for a thinking model [`THINKING_MAX_TOKENS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Raw mode: sort tool schema keys recursively (some tokenizer versions do).
    #[serde(default)]
    pub sort_tool_keys: bool,
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_secs: u64,
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_secs: u64,
    /// Most model requests in one turn (each round: answer, run tools, send results).
    #[serde(default = "default_max_rounds")]
    pub max_rounds: u32,
    /// Break special-token strings in tool results before they are sent (`<|im_end|>` ->
    /// `< |im_end|>`), so a tool's output cannot forge a turn boundary.
    #[serde(default)]
    pub neutralize_markers_in_tool_results: bool,
    // The thinking members of the K2 family.
    /// The chat template raw mode renders; unset: chosen from the model name
    /// (`Template::for_model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Template>,
    /// The `thinking` template keyword argument (K2.5/K2.6); unset: the model's default (on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    /// Raw mode: the tokenizer's preprocessing (sorted tools, K2.5 TypeScript declarations).
    #[serde(default = "default_true")]
    pub preprocess_tools: bool,
    /// Chat mode: the name under which reasoning is sent back on assistant messages.
    #[serde(default)]
    pub reasoning_field: ReasoningField,
    // Limits.
    /// The model's context length in tokens, for the status bar's gauge; unset: the server's
    /// `max_model_len` from `/models`, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Attempts after the first when a request fails with HTTP 429 or 5xx or a refused
    /// connection, before any of the answer arrived; 0: never retried.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// The longest wait before a retry: a `Retry-After` above it is not waited.
    #[serde(default = "default_retry_max_wait")]
    pub retry_max_wait_secs: u64,
    // The inspector as a server debugger.
    /// The inspector marks a gap of this many milliseconds or more between two chunks as a
    /// stall.
    #[serde(default = "default_inspector_stall_ms")]
    pub inspector_stall_ms: u64,
    // Token level.
    /// Ask for token-level data (ids, logprobs, this many alternatives per token; 0 = off,
    /// at most [`kimi_client::logprobs::MAX_LOGPROBS`], vLLM's default cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub logprobs: u8,
    /// Kimi K3's thinking effort: `low`, `high` or `max` (the encoder's default). Raw mode
    /// renders it into the prompt; chat mode sends it as `reasoning_effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_effort: Option<String>,
    /// `tool_choice` when tools are offered: `auto` (the default), `none` or `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// `response_format` of every request: `{ type = "json_object" }` or
    /// `{ type = "json_schema", json_schema = { name = "...", schema = { ... } } }` (chat mode
    /// sends it; K3's raw prompt renders it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
}

/// The longest duration any key of the file accepts (timeouts, waits): a day. Longer is no
/// limit in practice, and values near `u64::MAX` overflow when added to the clock.
pub const MAX_DURATION_SECS: u64 = 86_400;

fn default_retries() -> u32 {
    3
}
fn default_retry_max_wait() -> u64 {
    60
}

fn default_inspector_stall_ms() -> u64 {
    1000
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// `max_tokens` of a thinking profile that does not set it: reasoning is long, and Moonshot's
/// thinking-model guide uses 32k.
pub const THINKING_MAX_TOKENS: u32 = 32768;

fn default_true() -> bool {
    true
}

pub(crate) const DEFAULT_MODEL: &str = "moonshotai/Kimi-K2-Instruct";

fn default_model() -> String {
    DEFAULT_MODEL.to_owned()
}
const DEFAULT_TEMPERATURE: f64 = 0.6;
const DEFAULT_MAX_TOKENS: u32 = 4096;
fn default_connect_timeout() -> u64 {
    10
}
fn default_idle_timeout() -> u64 {
    120
}
fn default_max_rounds() -> u32 {
    10
}

impl Profile {
    pub fn new(mode: Mode, base_url: &str) -> Self {
        Profile {
            mode,
            base_url: base_url.to_owned(),
            model: default_model(),
            api_key_env: None,
            temperature: None,
            max_tokens: None,
            system_prompt: None,
            sort_tool_keys: false,
            connect_timeout_secs: default_connect_timeout(),
            idle_timeout_secs: default_idle_timeout(),
            max_rounds: default_max_rounds(),
            neutralize_markers_in_tool_results: false,
            template: None,
            thinking: None,
            preprocess_tools: true,
            reasoning_field: ReasoningField::default(),
            context_window: None,
            retries: default_retries(),
            retry_max_wait_secs: default_retry_max_wait(),
            inspector_stall_ms: default_inspector_stall_ms(),
            logprobs: 0,
            thinking_effort: None,
            tool_choice: None,
            response_format: None,
        }
    }

    /// The template in use: the configured one, else the model name's.
    pub fn template(&self) -> Template {
        self.template
            .unwrap_or_else(|| Template::for_model(&self.model))
    }

    /// Whether the model thinks with this profile (K2-Thinking always does).
    pub fn thinks(&self) -> bool {
        match self.template() {
            Template::K2Instruct => false,
            Template::K2Thinking => true,
            Template::K25 | Template::K26 | Template::K3 => self.thinking != Some(false),
        }
    }

    /// The temperature sent: as set, else 1.0 for a thinking model (Moonshot's advice), 0.6
    /// otherwise (and for K2.5/K2.6 with thinking off).
    pub fn temperature(&self) -> f64 {
        self.temperature.unwrap_or(if self.thinks() {
            1.0
        } else {
            DEFAULT_TEMPERATURE
        })
    }

    /// `max_tokens` sent: as set, else [`THINKING_MAX_TOKENS`] for a thinking template, 4096.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens.unwrap_or(if self.template().thinks() {
            THINKING_MAX_TOKENS
        } else {
            DEFAULT_MAX_TOKENS
        })
    }

    /// The endpoint, with the API key read from the environment now.
    pub fn endpoint(&self) -> Result<Endpoint, ApiKeyError> {
        self.endpoint_with(&|var| std::env::var(var))
    }

    /// The endpoint, with the API key's variable looked up by `env` (as `std::env::var`).
    pub fn endpoint_with(
        &self,
        env: &dyn Fn(&str) -> Result<String, std::env::VarError>,
    ) -> Result<Endpoint, ApiKeyError> {
        let api_key = match &self.api_key_env {
            None => None,
            Some(var) => match env(var) {
                Ok(v) if !v.trim().is_empty() => {
                    let key = v.trim();
                    check_api_key(var, key)?;
                    Some(key.to_owned())
                }
                Err(std::env::VarError::NotUnicode(_)) => {
                    return Err(ApiKeyError::NotUnicode { var: var.clone() });
                }
                _ => return Err(ApiKeyError::NotSet { var: var.clone() }),
            },
        };
        let mut ep = Endpoint::new(self.mode, &self.base_url, &self.model);
        ep.api_key = api_key;
        ep.temperature = self.temperature();
        ep.max_tokens = self.max_tokens();
        ep.template = self.template;
        ep.thinking = self.thinking;
        ep.preprocess_tools = self.preprocess_tools;
        ep.reasoning_field = self.reasoning_field;
        ep.logprobs = self.logprobs;
        ep.thinking_effort = self.thinking_effort.clone();
        ep.tool_choice = self.tool_choice.clone();
        ep.response_format = self.response_format.clone();
        ep.temperature_set = self.temperature.is_some();
        ep.sort_tool_keys = self.sort_tool_keys;
        ep.neutralize_tool_markers = self.neutralize_markers_in_tool_results;
        ep.connect_timeout = Duration::from_secs(self.connect_timeout_secs);
        ep.idle_timeout = Duration::from_secs(self.idle_timeout_secs);
        ep.retry = kimi_client::RetryPolicy::new(self.retries, self.retry_max_wait_secs);
        Ok(ep)
    }
}

/// An API key goes into an HTTP header: anything but visible ASCII there is a copy-paste
/// mistake, said with the variable's name and where, never the value.
fn check_api_key(var: &str, key: &str) -> Result<(), ApiKeyError> {
    let Some((at, c)) = key.char_indices().find(|(_, c)| !c.is_ascii_graphic()) else {
        return Ok(());
    };
    let what = match c {
        '\n' => "a newline".to_owned(),
        '\r' => "a carriage return".to_owned(),
        ' ' => "a space".to_owned(),
        '\t' => "a tab".to_owned(),
        c if c.is_ascii_control() => format!("a control character (0x{:02x})", c as u32),
        c => format!("a non-ASCII character (U+{:04X})", c as u32),
    };
    Err(ApiKeyError::BadChar {
        var: var.to_owned(),
        what,
        at,
    })
}

/// Why a profile's API key cannot be used. Names the variable, never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiKeyError {
    #[error(
        "the environment variable {var} (api_key_env) is not valid UTF-8; an API key is visible ASCII only: export it again"
    )]
    NotUnicode { var: String },
    #[error("the environment variable {var} (api_key_env) is not set; export it with your API key")]
    NotSet { var: String },
    /// `what` names the character ("a newline"); `at` is its byte offset in the key.
    #[error(
        "{var} contains {what} (at byte {at}); an API key is visible ASCII only: export it again without it"
    )]
    BadChar {
        var: String,
        what: String,
        at: usize,
    },
}

/// Why no profile of the file could be picked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("the config defines no profile; add a [profiles.NAME] table")]
    NoneDefined,
    /// `defined` lists the profile names, comma-separated.
    #[error("several profiles and no default_profile; pick one with --profile ({defined})")]
    NoDefault { defined: String },
    #[error("no profile named `{name}`; defined: {defined}")]
    Unknown { name: String, defined: String },
}

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub default_profile: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// `[[mcp_servers]]`.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[[rules]]`: rules on the arguments of calls (see [`crate::tools::rules`]).
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// `rules` checked and compiled, each with the line it is written at (filled in by
    /// [`Config::parse`]).
    #[serde(skip)]
    pub checked_rules: Vec<(CompiledRule, usize)>,
    /// `history = false`: prompts are not kept across runs.
    #[serde(default)]
    pub history: Option<bool>,
    // How the TUI meets the terminal.
    /// `theme = "dark" | "light" | "auto"` (auto: asked of the terminal).
    #[serde(default)]
    pub theme: ThemeChoice,
    /// `mouse = true`: wheel scrolling (mouse capture) from the start.
    #[serde(default)]
    pub mouse: bool,
    /// `[ui]` (or `ui.screen = ...`): the screen the TUI draws on.
    #[serde(default)]
    pub ui: UiSection,
}

/// The `[ui]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSection {
    /// `screen = "fullscreen" | "inline"`.
    #[serde(default)]
    pub screen: ScreenChoice,
}

/// The `ui.screen` option: where the conversation is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScreenChoice {
    /// The alternate screen, all of it the app's: the transcript scrolls inside the app.
    #[default]
    Fullscreen,
    /// A few rows at the bottom of the normal screen; what is final goes into the terminal's
    /// own scrollback.
    Inline,
}

/// The `theme` option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeChoice {
    Dark,
    Light,
    /// The terminal's background colour decides (OSC 11, then `COLORFGBG`, then dark).
    #[default]
    Auto,
}

/// The TUI's own options from the config file: not part of a profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UiOptions {
    pub theme: ThemeChoice,
    pub mouse: bool,
    pub screen: ScreenChoice,
}

/// A config problem: where it is and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Where the config lives unless `--config` says otherwise.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "kimi-tui").map(|d| d.config_dir().join("config.toml"))
}

/// Largest config file read: 1 MiB, far above any real one, so `--config /dev/zero` stops.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let error = |message: String| ConfigError {
            path: path.to_owned(),
            line: None,
            column: None,
            key: None,
            message,
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| {
                use std::io::Read;
                f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)
            })
            .map_err(|e| error(format!("cannot read the config file: {e}")))?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(error(
                "cannot read the config file: it is larger than 1 MiB".into(),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            error(format!(
                "cannot read the config file: not UTF-8 text ({})",
                e.utf8_error()
            ))
        })?;
        Self::parse(path, &text)
    }

    /// Parse and validate `text` (read from `path`, which errors name).
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let at = |span: Option<std::ops::Range<usize>>, key: Option<String>, message: String| {
            let (line, column) = span.map(|s| line_col(text, s.start)).unzip();
            ConfigError {
                path: path.to_owned(),
                line,
                column,
                key,
                message,
            }
        };
        let config: Config = toml::from_str(text).map_err(|e| {
            let key = e.span().and_then(|s| key_at(text, s.start));
            at(e.span(), key, e.message().trim().to_owned())
        })?;
        // Semantic checks, located with the spanned document.
        let doc = DeTable::parse(text).map_err(|e| at(e.span(), None, e.message().to_owned()))?;
        let locate = |keys: &[Key<'_>]| span_of(doc.get_ref(), keys);
        if let Some(name) = &config.default_profile
            && !config.profiles.contains_key(name)
        {
            return Err(at(
                locate(&[Key::Name("default_profile")]),
                Some("default_profile".into()),
                format!(
                    "no profile named `{name}`; defined: {}",
                    names(config.profiles.keys())
                ),
            ));
        }
        for (name, p) in &config.profiles {
            let key = |k: &str| Some(format!("profiles.{name}.{k}"));
            let loc = |k: &'static str| {
                locate(&[Key::Name("profiles"), Key::Name(name), Key::Name(k)])
                    .or_else(|| locate(&[Key::Name("profiles"), Key::Name(name)]))
            };
            if let Err(why) = check_base_url(&p.base_url) {
                return Err(at(loc("base_url"), key("base_url"), why));
            }
            if let Some(t) = p.temperature
                && !(0.0..=2.0).contains(&t)
            {
                return Err(at(
                    loc("temperature"),
                    key("temperature"),
                    format!("expected a number from 0 to 2, got {t}"),
                ));
            }
            if p.logprobs > kimi_client::logprobs::MAX_LOGPROBS {
                return Err(at(
                    loc("logprobs"),
                    key("logprobs"),
                    format!(
                        "expected 0 (off) to {} alternatives per token (vLLM's default --max-logprobs), got {}",
                        kimi_client::logprobs::MAX_LOGPROBS,
                        p.logprobs
                    ),
                ));
            }
            for (k, v) in [
                ("max_tokens", u64::from(p.max_tokens())),
                ("idle_timeout_secs", p.idle_timeout_secs),
                ("connect_timeout_secs", p.connect_timeout_secs),
                ("max_rounds", u64::from(p.max_rounds)),
            ] {
                if v == 0 {
                    return Err(at(loc(k), key(k), "expected a number above 0".into()));
                }
            }
            for (k, v, least) in [
                ("idle_timeout_secs", p.idle_timeout_secs, 1),
                ("connect_timeout_secs", p.connect_timeout_secs, 1),
                ("retry_max_wait_secs", p.retry_max_wait_secs, 0),
            ] {
                if v > MAX_DURATION_SECS {
                    return Err(at(
                        loc(k),
                        key(k),
                        format!("expected {least} to {MAX_DURATION_SECS} seconds (a day), got {v}"),
                    ));
                }
            }
            if let Some(e) = &p.thinking_effort
                && !kimi_client::THINKING_EFFORTS.contains(&e.as_str())
            {
                return Err(at(
                    loc("thinking_effort"),
                    key("thinking_effort"),
                    format!(
                        "expected one of {} (Kimi K3's encoder refuses anything else, `medium` included), got {e:?}",
                        kimi_client::THINKING_EFFORTS.join(", ")
                    ),
                ));
            }
            if let Some(c) = &p.tool_choice
                && !kimi_client::TOOL_CHOICES.contains(&c.as_str())
            {
                return Err(at(
                    loc("tool_choice"),
                    key("tool_choice"),
                    format!(
                        "expected one of {} (a named function is not supported by Kimi's API), got {c:?}",
                        kimi_client::TOOL_CHOICES.join(", ")
                    ),
                ));
            }
            if let Some(f) = &p.response_format
                && let Err(why) = kimi_client::check_response_format(f)
            {
                return Err(at(
                    loc("response_format"),
                    key("response_format"),
                    why.to_string(),
                ));
            }
            if p.inspector_stall_ms > MAX_DURATION_SECS * 1000 {
                return Err(at(
                    loc("inspector_stall_ms"),
                    key("inspector_stall_ms"),
                    format!(
                        "expected 0 to {} milliseconds (a day), got {}",
                        MAX_DURATION_SECS * 1000,
                        p.inspector_stall_ms
                    ),
                ));
            }
        }
        for (i, tool) in config.tools.iter().enumerate() {
            if let Err(e) = tool.check() {
                return Err(at(
                    locate(&[Key::Name("tools"), Key::Index(i)]),
                    Some(format!("tools[{i}] ({})", tool.name)),
                    e.to_string(),
                ));
            }
            if config.tools[..i].iter().any(|t| t.name == tool.name) {
                return Err(at(
                    locate(&[Key::Name("tools"), Key::Index(i), Key::Name("name")]),
                    Some(format!("tools[{i}].name")),
                    format!("a tool named `{}` is already defined", tool.name),
                ));
            }
        }
        // Rules: their own examples, and the arguments of the local tools they name.
        let checked = crate::tools::rules::check_rules(path, text, &config.rules, &config.tools)?;
        let mut config = config;
        config.checked_rules = checked;
        // MCP servers: each entry valid, names unique, no local tool in a server's namespace.
        for (i, server) in config.mcp_servers.iter().enumerate() {
            let loc = |k: &str| {
                locate(&[Key::Name("mcp_servers"), Key::Index(i), Key::Name(k)])
                    .or_else(|| locate(&[Key::Name("mcp_servers"), Key::Index(i)]))
            };
            let key = Some(format!("mcp_servers[{i}] ({})", server.name));
            if let Err(e) = server.check() {
                // Each problem starts with its key (`url: ...`): point at the first one's line.
                let first = e
                    .problems
                    .first()
                    .and_then(|p| p.split(':').next())
                    .unwrap_or("name");
                return Err(at(loc(first), key, e.to_string()));
            }
            if config.mcp_servers[..i]
                .iter()
                .any(|s| s.name == server.name)
            {
                return Err(at(
                    loc("name"),
                    Some(format!("mcp_servers[{i}].name")),
                    format!("an MCP server named `{}` is already defined", server.name),
                ));
            }
            let prefix = format!("{}{}__", crate::tools::mcp::naming::PREFIX, server.name);
            if let Some((t, tool)) = config
                .tools
                .iter()
                .enumerate()
                .find(|(_, t)| t.name.starts_with(&prefix))
            {
                return Err(at(
                    locate(&[Key::Name("tools"), Key::Index(t), Key::Name("name")]),
                    Some(format!("tools[{t}].name")),
                    format!(
                        "`{}` collides with the tools of the MCP server `{}` (offered as {prefix}TOOL); rename the tool",
                        tool.name, server.name
                    ),
                ));
            }
        }
        Ok(config)
    }

    /// The named profile, or the default one, or the only one.
    pub fn profile(&self, name: Option<&str>) -> Result<(String, Profile), ProfileError> {
        let name = match name.or(self.default_profile.as_deref()) {
            Some(n) => n.to_owned(),
            None if self.profiles.len() == 1 => {
                self.profiles.keys().next().cloned().unwrap_or_default()
            }
            None if self.profiles.is_empty() => {
                return Err(ProfileError::NoneDefined);
            }
            None => {
                return Err(ProfileError::NoDefault {
                    defined: names(self.profiles.keys()),
                });
            }
        };
        match self.profiles.get(&name) {
            Some(p) => Ok((name, p.clone())),
            None => Err(ProfileError::Unknown {
                defined: names(self.profiles.keys()),
                name,
            }),
        }
    }

    /// Every profile's `api_key_env`, once each.
    pub(crate) fn api_key_vars(&self) -> BTreeSet<String> {
        self.profiles
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .collect()
    }

    /// The checked `[[rules]]`, each with where it is written (this file, `path`).
    pub fn rules_in_force(&self, path: &Path) -> Vec<(CompiledRule, RuleSource)> {
        self.checked_rules
            .iter()
            .map(|(rule, line)| {
                let source = RuleSource::Config {
                    path: path.to_owned(),
                    line: *line,
                };
                (rule.clone(), source)
            })
            .collect()
    }

    pub fn toolbox(&self) -> Result<Toolbox, ToolboxError> {
        Toolbox::new(self.tools.clone())
    }
}

fn names<'a>(it: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = it.map(String::as_str).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

pub(crate) enum Key<'a> {
    Name(&'a str),
    Index(usize),
}

/// The span of the value at `keys` in the parsed document.
pub(crate) fn span_of(table: &DeTable<'_>, keys: &[Key<'_>]) -> Option<std::ops::Range<usize>> {
    let (first, rest) = keys.split_first()?;
    let Key::Name(name) = first else {
        return None;
    };
    let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *name)?;
    let mut span = k.span();
    let mut value = v;
    for key in rest {
        let next = match (key, value.get_ref()) {
            (Key::Name(n), DeValue::Table(t)) => t
                .iter()
                .find(|(k, _)| k.get_ref().as_ref() == *n)
                .map(|(k, v)| (k.span(), v)),
            (Key::Index(i), DeValue::Array(a)) => a.get(*i).map(|v| (v.span(), v)),
            _ => None,
        };
        let (s, v) = next?;
        span = s;
        value = v;
    }
    Some(span)
}

/// 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The key written on the line holding `offset`, when that line is `key = value`.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('[') && !key.starts_with('#')).then(|| key.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("cfg.toml"), text)
    }

    const GOOD: &str = r#"
default_profile = "local"

[profiles.local]
mode = "raw"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "KIMI_TEST_KEY_UNSET_123"

[profiles.hosted]
mode = "chat"
base_url = "https://api.example.com/v1"
model = "kimi-k2"
temperature = 0.3

[[tools]]
name = "get_weather"
description = "Weather for a city"
command = ["./weather.sh"]
parameters = { type = "object", required = ["city"], properties = { city = { type = "string" } } }
"#;

    #[test]
    fn a_good_config_parses_with_defaults() {
        let c = parse(GOOD).expect("valid");
        let (name, p) = c.profile(None).expect("default profile");
        assert_eq!(name, "local");
        assert_eq!(p.mode, Mode::Raw);
        assert_eq!(p.model, DEFAULT_MODEL);
        assert_eq!(p.temperature(), 0.6);
        assert_eq!(p.max_tokens(), 4096);
        let (_, h) = c.profile(Some("hosted")).expect("named");
        assert_eq!(h.mode, Mode::Chat);
        assert_eq!(c.tools.len(), 1);
        // Schema key order is the file's order.
        let schema = serde_json::to_string(&c.tools[0].parameters).expect("json");
        assert!(
            schema.starts_with(r#"{"type":"object","required""#),
            "{schema}"
        );
    }

    #[test]
    fn a_malformed_api_key_is_named_with_where_never_shown() {
        let e = check_api_key("MOONSHOT_API_KEY", "sk-secret12\nmore").expect_err("newline");
        assert_eq!(
            e.to_string(),
            "MOONSHOT_API_KEY contains a newline (at byte 11); an API key is visible ASCII only: export it again without it"
        );
        let e = check_api_key("K", "sk-\u{1b}[31m")
            .expect_err("escape")
            .to_string();
        assert!(e.contains("a control character (0x1b) (at byte 3)"), "{e}");
        assert!(!e.contains("sk-"));
        let e = check_api_key("K", "sk-ключ")
            .expect_err("non-ASCII")
            .to_string();
        assert!(
            e.contains("a non-ASCII character (U+043A) (at byte 3)"),
            "{e}"
        );
        assert!(check_api_key("K", "sk-AZaz09._-~+/=").is_ok());
    }

    #[test]
    fn missing_api_key_variable_is_named() {
        let c = parse(GOOD).expect("valid");
        let (_, p) = c.profile(None).expect("profile");
        let err = p.endpoint().expect_err("unset variable").to_string();
        assert!(err.contains("KIMI_TEST_KEY_UNSET_123"), "{err}");
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = "[profiles.local]\nbase_url = \"http://x/v1\"\ntemprature = 0.5\n";
        let e = parse(text).expect_err("unknown key");
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("cfg.toml:3:"), "{e}");
        assert!(e.message.contains("temprature"), "{e}");
    }

    #[test]
    fn thinking_keys_parse_and_pick_defaults() {
        let text = "[profiles.t]\nbase_url = \"http://x/v1\"\nmodel = \"moonshotai/Kimi-K2-Thinking\"\n\
                    [profiles.k25]\nbase_url = \"http://x/v1\"\nmodel = \"m\"\ntemplate = \"k2.5\"\n\
                    thinking = false\npreprocess_tools = false\nreasoning_field = \"both\"\n\
                    [profiles.set]\nbase_url = \"http://x/v1\"\nmodel = \"kimi-k2.6\"\n\
                    temperature = 0.2\nmax_tokens = 100\n";
        let c = parse(text).expect("valid");
        let t = &c.profiles["t"];
        assert_eq!(t.template(), Template::K2Thinking);
        assert!(t.thinks() && t.preprocess_tools);
        assert_eq!(
            (t.temperature(), t.max_tokens()),
            (1.0, THINKING_MAX_TOKENS)
        );
        let k = &c.profiles["k25"];
        assert_eq!(k.template(), Template::K25);
        assert!(!k.thinks() && !k.preprocess_tools);
        assert_eq!(k.temperature(), 0.6, "thinking off: 0.6");
        assert_eq!(k.reasoning_field, ReasoningField::Both);
        let ep = k.endpoint().expect("endpoint");
        assert_eq!(
            (ep.template(), ep.thinking, ep.reasoning_field),
            (Template::K25, Some(false), ReasoningField::Both)
        );
        let s = &c.profiles["set"];
        assert_eq!((s.temperature(), s.max_tokens()), (0.2, 100));
    }

    #[test]
    fn bad_thinking_keys_name_file_line_and_key() {
        for (line, want) in [
            ("template = \"k4\"", "template"),
            ("thinking = \"yes\"", "thinking"),
            ("reasoning_field = \"thoughts\"", "reasoning_field"),
        ] {
            let text = format!("[profiles.local]\nbase_url = \"http://x/v1\"\n{line}\n");
            let e = parse(&text).expect_err(line);
            assert_eq!(e.line, Some(3), "{e}");
            assert_eq!(e.key.as_deref(), Some(want), "{e}");
        }
    }

    #[test]
    fn logprobs_reach_the_endpoint_and_are_bounded() {
        let text = "[profiles.local]\nbase_url = \"http://x/v1\"\nlogprobs = 5\n";
        let c = parse(text).expect("valid");
        let ep = c.profiles["local"].endpoint().expect("endpoint");
        assert_eq!(ep.logprobs, 5);
        let text = "[profiles.local]\nbase_url = \"http://x/v1\"\nlogprobs = 21\n";
        let e = parse(text).expect_err("above vLLM's cap");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(3), Some("profiles.local.logprobs")),
            "{e}"
        );
        let text = "[profiles.local]\nbase_url = \"http://x/v1\"\nlogprobs = -1\n";
        let e = parse(text).expect_err("negative");
        assert!(e.to_string().contains("logprobs"), "{e}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let text = "[profiles.local]\nbase_url = \"http://x/v1\"\ntemperature = \"hot\"\n";
        let e = parse(text).expect_err("wrong type");
        assert_eq!(e.line, Some(3));
        assert_eq!(e.key.as_deref(), Some("temperature"));
    }

    #[test]
    fn missing_default_profile_is_located() {
        let text = "default_profile = \"nope\"\n[profiles.local]\nbase_url = \"http://x/v1\"\n";
        let e = parse(text).expect_err("no such profile");
        assert_eq!(e.line, Some(1));
        assert!(
            e.message.contains("nope") && e.message.contains("local"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_are_located() {
        let text = "[profiles.a]\nbase_url = \"localhost:8000\"\n";
        let e = parse(text).expect_err("bad url");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(2), Some("profiles.a.base_url"))
        );
        assert!(
            e.to_string().contains("write \"http://localhost:8000\""),
            "{e}"
        );
        let e = parse("[profiles.a]\nbase_url = \"ftp://h/v1\"\n").expect_err("ftp");
        assert!(e.to_string().contains("http:// and https:// only"), "{e}");
        let text = "[profiles.a]\nbase_url = \"http://x/v1\"\n\ntemperature = 7.0\n";
        let e = parse(text).expect_err("bad temperature");
        assert_eq!(e.line, Some(4));
    }

    #[test]
    fn thinking_effort_and_tool_choice_are_checked_with_file_and_line() {
        for (k, v, expected) in [
            (
                "thinking_effort",
                "medium",
                "expected one of low, high, max",
            ),
            (
                "tool_choice",
                "get_weather",
                "expected one of auto, none, required",
            ),
        ] {
            let text = format!("[profiles.a]\nbase_url = \"http://x/v1\"\n{k} = \"{v}\"\n");
            let e = parse(&text).expect_err(k);
            assert_eq!(e.line, Some(3), "{e}");
            let shown = e.to_string();
            assert!(
                shown.contains("cfg.toml:3") && shown.contains(expected),
                "{shown}"
            );
        }
        let text = "[profiles.a]\nbase_url = \"http://x/v1\"\nresponse_format = { type = \"json_schema\", json_schema = { name = \"n\" } }\n";
        let e = parse(text).expect_err("a schema without its schema");
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().contains("json_schema.schema"), "{e}");
        let text = "[profiles.a]\nbase_url = \"http://x/v1\"\nmodel = \"kimi-k3\"\nthinking_effort = \"low\"\ntool_choice = \"required\"\nresponse_format = { type = \"json_schema\", json_schema = { name = \"n\", schema = { type = \"object\" } } }\n";
        let c = parse(text).expect("valid");
        let ep = c.profiles["a"]
            .endpoint_with(&|_| Err(std::env::VarError::NotPresent))
            .expect("endpoint");
        assert_eq!(ep.thinking_effort.as_deref(), Some("low"));
        assert_eq!(ep.tool_choice.as_deref(), Some("required"));
        assert_eq!(
            ep.template(),
            Template::K3,
            "a K3 model name selects the K3 template"
        );
    }

    #[test]
    fn durations_beyond_a_day_are_refused_with_file_line_and_range() {
        // The largest integer TOML holds (u64::MAX is not one).
        let max = i64::MAX;
        for (k, v) in [
            ("idle_timeout_secs", max.to_string()),
            ("connect_timeout_secs", max.to_string()),
            ("retry_max_wait_secs", (MAX_DURATION_SECS + 1).to_string()),
            ("inspector_stall_ms", max.to_string()),
        ] {
            let text = format!("[profiles.a]\nbase_url = \"http://x/v1\"\n\n{k} = {v}\n");
            let e = parse(&text).expect_err(k);
            assert_eq!(e.line, Some(4), "{e}");
            assert_eq!(e.key.as_deref(), Some(format!("profiles.a.{k}").as_str()));
            let shown = e.to_string();
            assert!(shown.contains("cfg.toml:4"), "{shown}");
            assert!(shown.contains(&format!("got {v}")), "{shown}");
            assert!(shown.contains("(a day)"), "{shown}");
        }
        let text = "[profiles.a]\nbase_url = \"http://x/v1\"\nidle_timeout_secs = 86400\n";
        parse(text).expect("a day is allowed");
        for (table, k) in [
            (
                "[[tools]]\nname = \"t\"\ncommand = [\"x\"]\n",
                "timeout_secs",
            ),
            (
                "[[mcp_servers]]\nname = \"m\"\ncommand = [\"x\"]\n",
                "tool_timeout_secs",
            ),
            (
                "[[mcp_servers]]\nname = \"m\"\ncommand = [\"x\"]\n",
                "startup_timeout_secs",
            ),
        ] {
            let text = format!("[profiles.a]\nbase_url = \"http://x/v1\"\n{table}{k} = {max}\n");
            let e = parse(&text).expect_err(k);
            assert!(e.line.is_some(), "{e}");
            assert!(
                e.to_string()
                    .contains(&format!("{k}: must be from 1 to 86400")),
                "{e}"
            );
        }
    }

    #[test]
    fn tool_without_command_is_an_error_with_a_line() {
        let text = "[profiles.a]\nbase_url = \"http://x/v1\"\n\n[[tools]]\nname = \"t\"\n";
        let e = parse(text).expect_err("no command");
        assert!(e.line.is_some(), "{e}");
        assert!(e.to_string().contains("command"), "{e}");
        let text =
            "[profiles.a]\nbase_url = \"http://x/v1\"\n\n[[tools]]\nname = \"t\"\ncommand = []\n";
        let e = parse(text).expect_err("empty command");
        assert!(e.line.is_some(), "{e}");
        assert!(e.to_string().contains("command"), "{e}");
    }

    #[test]
    fn tools_never_inherit_the_api_key_variable() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, GOOD).expect("write");
        let r = resolve(&Overrides {
            config: Some(path),
            ..Overrides::default()
        })
        .expect("resolves");
        assert_eq!(r.tools[0].hidden_env, ["KIMI_TEST_KEY_UNSET_123"]);
        // Another profile's key is hidden too, whichever profile is active.
        let two = GOOD.replace(
            "temperature = 0.3",
            "temperature = 0.3\napi_key_env = \"HOSTED_KEY\"",
        );
        std::fs::write(dir.path().join("c.toml"), two).expect("write");
        let r = resolve(&Overrides {
            config: Some(dir.path().join("c.toml")),
            ..Overrides::default()
        })
        .expect("resolves");
        assert_eq!(
            r.tools[0].hidden_env,
            ["HOSTED_KEY", "KIMI_TEST_KEY_UNSET_123"]
        );
    }

    #[test]
    fn an_endless_or_binary_config_file_is_refused() {
        let e = Config::load(Path::new("/dev/zero")).expect_err("endless");
        assert_eq!(
            e.to_string(),
            "/dev/zero: cannot read the config file: it is larger than 1 MiB"
        );
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, b"a = \"\xff\"\n").expect("write");
        let e = Config::load(&path).expect_err("binary");
        assert!(e.message.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn a_bad_inherit_env_names_file_line_and_key() {
        let base = "[profiles.a]\nbase_url = \"http://x/v1\"\n\n[[tools]]\nname = \"t\"\ncommand = [\"x\"]\n";
        let e = parse(&format!("{base}inherit_env = \"PATH\"\n")).expect_err("a string");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(7), Some("inherit_env")),
            "{e}"
        );
        assert!(e.message.contains("sequence"), "{e}");
        let e = parse(&format!("{base}inherit_env = [\"PATH\", 3]\n")).expect_err("a number");
        assert_eq!(e.line, Some(7), "{e}");
        let e = parse(&format!("{base}inherit_env = [\"A=B\"]\n")).expect_err("bad name");
        assert_eq!(e.line, Some(4), "{e}");
        assert!(
            e.message.contains("inherit_env") && e.message.contains("A=B"),
            "{e}"
        );
        let c = parse(&format!("{base}inherit_env = [\"PATH\", \"HOME\"]\n")).expect("valid");
        assert_eq!(
            c.tools[0].inherit_env,
            Some(vec!["PATH".into(), "HOME".into()])
        );
    }

    #[test]
    fn profile_selection_errors_are_clear() {
        let c = parse(GOOD).expect("valid");
        let e = c.profile(Some("x")).expect_err("unknown").to_string();
        assert!(e.contains("hosted") && e.contains("local"), "{e}");
        let none = Config::default();
        assert!(
            none.profile(None)
                .expect_err("empty")
                .to_string()
                .contains("no profile")
        );
    }
}

/// Command-line choices that override the config file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub profile: Option<String>,
    pub mode: Option<Mode>,
    pub base_url: Option<String>,
    pub model: Option<String>,
}

/// The profile and tools a session runs with.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub profile_name: String,
    pub profile: Profile,
    pub tools: Vec<ToolSpec>,
    /// The file it came from, if any.
    pub config_path: Option<PathBuf>,
    /// `[[mcp_servers]]`, not started yet.
    pub mcp_servers: Vec<McpServerConfig>,
    /// The config's `[[rules]]`, checked, with the line of each (the project's are read
    /// separately: see [`crate::tools::rules::project`]).
    pub rules: Vec<(CompiledRule, RuleSource)>,
    /// `theme` and `mouse`.
    pub ui: UiOptions,
    /// Keep the prompt history across runs (`history`, default on).
    pub history: bool,
    /// Every profile of the file, as written (without the command line's overrides): what
    /// `/profile NAME` switches to. Empty without a config file.
    pub profiles: BTreeMap<String, Profile>,
}

// Errors say where a value came from: with several profiles and overrides, a bare value does
// not tell the user which file or flag to fix.
impl Resolved {
    /// `profile `local` in /home/u/.config/kimi-tui/config.toml`, or `(no config file)`: for
    /// error texts, so the user knows which file to correct.
    pub fn origin(&self) -> String {
        match &self.config_path {
            Some(p) => format!("profile `{}` in {}", self.profile_name, p.display()),
            None => format!("profile `{}` (no config file)", self.profile_name),
        }
    }
}

/// Why no profile could be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The file has no such profile (or none at all).
    #[error("{}: {error}", path.display())]
    Profile { path: PathBuf, error: ProfileError },
    /// `--base-url` is not an http(s) URL.
    #[error("--base-url: {0}")]
    BaseUrl(String),
    #[error(
        "no config file at {}; run `kimi-tui config init` to write an example there, pass --base-url, or try `kimi-tui --demo`",
        path.as_deref().map_or_else(|| "(no config directory)".to_owned(), |p| p.display().to_string())
    )]
    NoConfig { path: Option<PathBuf> },
}

/// A `base_url` requests can go to: `http://` or `https://` in front. Without a scheme
/// (`localhost:8000/v1`) the message says what to write instead.
pub fn check_base_url(url: &str) -> Result<(), String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(());
    }
    let shown = kimi_client::redact_url(url);
    let hint = if url.contains("://") {
        "kimi-tui speaks http:// and https:// only".to_owned()
    } else {
        format!("it has no scheme: write \"http://{shown}\" (or https:// for a TLS server)")
    };
    Err(format!(
        "expected an http:// or https:// URL ending in /v1, got {shown:?}; {hint}"
    ))
}

/// Load the config (from `--config` or the default path) and apply the overrides. With no
/// config file, `--base-url` alone is enough (no tools then).
pub fn resolve(o: &Overrides) -> Result<Resolved, ResolveError> {
    if let Some(u) = &o.base_url {
        check_base_url(u).map_err(ResolveError::BaseUrl)?;
    }
    let path = o.config.clone().or_else(default_path);
    let config = match &path {
        Some(p) if o.config.is_some() || p.exists() => Some(Config::load(p)?),
        _ => None,
    };
    let (profile_name, mut profile, tools) = match &config {
        Some(c) => {
            let (name, p) =
                c.profile(o.profile.as_deref())
                    .map_err(|error| ResolveError::Profile {
                        path: path.clone().unwrap_or_else(|| PathBuf::from("?")),
                        error,
                    })?;
            (name, p, c.tools.clone())
        }
        None => match &o.base_url {
            Some(url) => (
                "command-line".to_owned(),
                Profile::new(Mode::Raw, url),
                Vec::new(),
            ),
            None => return Err(ResolveError::NoConfig { path }),
        },
    };
    if let Some(m) = o.mode {
        profile.mode = m;
    }
    if let Some(u) = &o.base_url {
        profile.base_url = u.clone();
    }
    if let Some(m) = &o.model {
        profile.model = m.clone();
    }
    // Tools run with the user's environment, but never with an API key in it: not the active
    // profile's, nor that of any other profile (the user may have exported them all).
    // An MCP server's bearer token is a credential too: no child process gets any of them.
    let hidden: BTreeSet<String> = config
        .iter()
        .flat_map(Config::api_key_vars)
        .chain(profile.api_key_env.clone())
        .chain(
            config
                .iter()
                .flat_map(|c| c.mcp_servers.iter())
                .filter_map(|s| s.bearer_token_env.clone()),
        )
        .collect();
    let mut tools = tools;
    for t in &mut tools {
        t.hidden_env.extend(hidden.iter().cloned());
    }
    // MCP servers are child processes too: the same rule.
    let mut mcp_servers = config
        .as_ref()
        .map(|c| c.mcp_servers.clone())
        .unwrap_or_default();
    for s in &mut mcp_servers {
        s.hidden_env.extend(hidden.iter().cloned());
    }
    let ui = config
        .as_ref()
        .map_or_else(UiOptions::default, |c| UiOptions {
            theme: c.theme,
            mouse: c.mouse,
            screen: c.ui.screen,
        });
    let profiles = config
        .as_ref()
        .map(|c| c.profiles.clone())
        .unwrap_or_default();
    let rules = match (&config, &path) {
        (Some(c), Some(p)) => c.rules_in_force(p),
        _ => Vec::new(),
    };
    Ok(Resolved {
        rules,
        profile_name,
        profile,
        tools,
        history: config.as_ref().and_then(|c| c.history).unwrap_or(true),
        config_path: config.and(path),
        mcp_servers,
        ui,
        profiles,
    })
}

/// `[[mcp_servers]]` in the config file.
#[cfg(test)]
mod mcp_tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("cfg.toml"), text)
    }

    const HEAD: &str = "[profiles.a]\nbase_url = \"http://x/v1\"\n";

    #[test]
    fn servers_parse_and_resolve_without_api_keys() {
        let text = format!(
            "{HEAD}api_key_env = \"MY_KEY\"\n\n[[mcp_servers]]\nname = \"files\"\ncommand = [\"npx\", \"-y\", \"pkg\"]\n\n[[mcp_servers]]\nname = \"web\"\nurl = \"https://h/mcp\"\nbearer_token_env = \"WEB_TOKEN\"\n"
        );
        let c = parse(&text).expect("valid");
        assert_eq!(c.mcp_servers.len(), 2);
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, &text).expect("write");
        let r = resolve(&Overrides {
            config: Some(path),
            ..Overrides::default()
        })
        .expect("resolves");
        assert_eq!(r.mcp_servers.len(), 2);
        // The HTTP server's token is hidden from the stdio server (and tools, by the same list).
        assert_eq!(r.mcp_servers[0].hidden_env, ["MY_KEY", "WEB_TOKEN"]);
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = parse(&format!(
            "{HEAD}\n[[mcp_servers]]\nname = \"files\"\nurl = \"ftp://x\"\n"
        ))
        .expect_err("bad url");
        assert_eq!(e.line, Some(6), "{e}");
        assert_eq!(e.key.as_deref(), Some("mcp_servers[0] (files)"));
        assert!(e.message.contains("url: expected an http://"), "{e}");

        let e = parse(&format!(
            "{HEAD}\n[[mcp_servers]]\nname = \"f\"\ncommand = [\"x\"]\ntimeout = 3\n"
        ))
        .expect_err("unknown key");
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("timeout"), "{e}");

        let e = parse(&format!(
            "{HEAD}\n[[mcp_servers]]\nname = \"f\"\ncommand = [\"x\"]\n\n[[mcp_servers]]\nname = \"f\"\nurl = \"http://h/mcp\"\n"
        ))
        .expect_err("duplicate");
        assert_eq!(e.line, Some(9), "{e}");
        assert!(e.message.contains("already defined"), "{e}");
    }

    #[test]
    fn a_local_tool_in_a_server_namespace_is_a_config_error() {
        let e = parse(&format!(
            "{HEAD}\n[[tools]]\nname = \"mcp__files__read\"\ncommand = [\"x\"]\n\n[[mcp_servers]]\nname = \"files\"\ncommand = [\"y\"]\n"
        ))
        .expect_err("collision");
        assert_eq!(e.line, Some(5), "{e}");
        assert_eq!(e.key.as_deref(), Some("tools[0].name"));
        assert!(
            e.message
                .contains("collides with the tools of the MCP server `files`"),
            "{e}"
        );
        // Another server's namespace is fine.
        parse(&format!(
            "{HEAD}\n[[tools]]\nname = \"mcp__other__read\"\ncommand = [\"x\"]\n\n[[mcp_servers]]\nname = \"files\"\ncommand = [\"y\"]\n"
        ))
        .expect("no collision");
    }
}

/// `theme` and `mouse`.
#[cfg(test)]
mod ui_option_tests {
    use super::*;

    const HEAD: &str = "[profiles.a]\nbase_url = \"http://x/v1\"\n";

    #[test]
    fn theme_and_mouse_parse_with_defaults_auto_and_off() {
        let c = Config::parse(Path::new("c.toml"), HEAD).expect("valid");
        assert_eq!((c.theme, c.mouse), (ThemeChoice::Auto, false));
        let c = Config::parse(
            Path::new("c.toml"),
            &format!("theme = \"light\"\nmouse = true\n{HEAD}"),
        )
        .expect("valid");
        assert_eq!((c.theme, c.mouse), (ThemeChoice::Light, true));
        let e = Config::parse(Path::new("c.toml"), &format!("theme = \"blue\"\n{HEAD}"))
            .expect_err("blue is no theme");
        assert_eq!(e.line, Some(1), "{e}");
        assert!(
            e.message.contains("dark") && e.message.contains("auto"),
            "{e}"
        );
    }

    #[test]
    fn resolve_carries_the_ui_options() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, format!("theme = \"dark\"\nmouse = true\n{HEAD}")).expect("write");
        let r = resolve(&Overrides {
            config: Some(path),
            ..Default::default()
        })
        .expect("resolves");
        assert_eq!(
            r.ui,
            UiOptions {
                theme: ThemeChoice::Dark,
                mouse: true,
                screen: ScreenChoice::Fullscreen,
            }
        );
    }

    #[test]
    fn the_screen_is_full_unless_the_ui_table_says_inline() {
        let c = Config::parse(Path::new("c.toml"), HEAD).expect("valid");
        assert_eq!(c.ui.screen, ScreenChoice::Fullscreen);
        for text in ["[ui]\nscreen = \"inline\"\n", "ui.screen = \"inline\"\n"] {
            let c = Config::parse(Path::new("c.toml"), &format!("{text}{HEAD}")).expect(text);
            assert_eq!(c.ui.screen, ScreenChoice::Inline, "{text}");
        }
        let e = Config::parse(
            Path::new("c.toml"),
            &format!("ui.screen = \"tiny\"\n{HEAD}"),
        )
        .expect_err("no such screen");
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("inline"), "{e}");
        let e = Config::parse(
            Path::new("c.toml"),
            &format!("ui.scren = \"inline\"\n{HEAD}"),
        )
        .expect_err("misspelled key");
        assert_eq!(e.line, Some(1), "{e}");
    }
}

/// `history`.
#[cfg(test)]
mod history_tests {
    use super::*;

    #[test]
    fn history_is_on_unless_the_file_turns_it_off() {
        let off = Config::parse(
            Path::new("c.toml"),
            "history = false
",
        )
        .expect("parses");
        assert_eq!(off.history, Some(false));
        let unset = Config::parse(Path::new("c.toml"), "").expect("parses");
        assert_eq!(unset.history, None);
        let bad = Config::parse(Path::new("c.toml"), "history = \"no\"\n").expect_err("a bool");
        assert!(bad.to_string().contains("history"), "{bad}");
    }
}
