//! Command-line definitions (clap). The subcommands are a contract: tests outside the project
//! call them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use kimi_core::config::Overrides;
use kimi_protocol::Mode;

#[derive(Debug, Parser)]
#[command(
    name = "kimi-tui",
    version,
    about = "Terminal chat client for Kimi K2: byte-exact prompts, local tool-call parsing, hand-approved tools",
    after_help = "Without a subcommand, starts the interactive chat. Try `kimi-tui --demo` first."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Chat with the built-in mock Kimi server and demo tools: no config, no model server.
    #[arg(long)]
    pub demo: bool,
    /// Continue the most recent saved conversation.
    #[arg(long, conflicts_with = "session")]
    pub resume: bool,
    /// Continue the saved conversation with this id (see `kimi-tui sessions`), or a session file.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Draw in a few rows at the bottom of the terminal: the conversation goes into the
    /// terminal's own scrollback (its search, selection and copy mode work on it). Overrides
    /// `ui.screen` in the config.
    #[arg(long, conflicts_with = "fullscreen")]
    pub inline: bool,
    /// Draw on the whole (alternate) screen, the default. Overrides `ui.screen`.
    #[arg(long)]
    pub fullscreen: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

// Parsed once per run: the mock server's many flags make its variant large, and that costs
// nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render a chat request to the exact Kimi K2 or K3 prompt text (no trailing newline).
    ///
    /// Input: {"messages": [...], "tools": [...] | null, "add_generation_prompt": bool, ...}; an
    /// OpenAI request body works (add_generation_prompt defaults to true). A "template" key
    /// (Kimi-K2-Thinking, Kimi-K2.5, Kimi-K3, k2.5, ...) picks the template unless --template
    /// is given; every other key is a template keyword argument ("thinking": false; K2.6
    /// "preserve_thinking"; K2.5 "tools_ts_str"; K3 "thinking_effort", "tool_choice",
    /// "response_format", "response_schema"); unknown ones (model, stream) are ignored. A K3
    /// request the encoder would reject fails, naming the message and the rule.
    /// Without --template-only the output is exactly what raw mode sends: for K2-Thinking,
    /// K2.5 and K2.6 the tools are key-sorted and K2.5/K2.6 declare them in TypeScript, as
    /// Moonshot's tokenizer does.
    Render(RenderArgs),
    /// Parse a raw completion into {content, reasoning, tool_calls, finish_reason, warnings}.
    Parse(ParseArgs),
    /// Run one prompt through the whole agent loop without a screen.
    ///
    /// The answer streams to stdout, tool activity to stderr. `auto` tools run, `ask` tools run
    /// only with --yes (otherwise the model is told the user declined), `deny` tools never.
    Exec(ExecArgs),
    /// Run the scripted mock Kimi server (OpenAI-compatible, both endpoints) on loopback.
    MockServer(MockArgs),
    /// Run the demo's MCP server on stdin/stdout (what `--demo` and the tests start).
    #[command(hide = true)]
    MockMcpServer,
    /// List the saved sessions, newest first.
    Sessions(SessionsArgs),
    /// Export a saved session as Markdown or as an OpenAI-shape JSON array of messages.
    Export(ExportArgs),
    /// Show where the config file is (`config path`), or write the example there (`config init`).
    Config(ConfigArgs),
    /// Send a saved trace's request again, exactly, and compare the answer with the saved one.
    ///
    /// The body goes to the trace's endpoint on the profile's server (or --base-url), with the
    /// profile's API key. Prints the result, the timings, and where the new stream differs
    /// from the saved one; --print also lists every chunk with its gap and what it produced.
    Replay(ReplayArgs),
    /// Write a saved trace as a minimal test case for a server bug report.
    ///
    /// The chunks as they arrived (token ids where the server sent them), the request's tools,
    /// and what kimi-tui parsed from them: as JSON lines (a header, one line per chunk, the
    /// parsed events and result), or as a pytest file in the shape of vLLM's or SGLang's
    /// tool-parser tests. Printed on stdout.
    Repro(ReproArgs),
    /// Check the configured endpoint and tools, and say exactly what to fix.
    ///
    /// One line per check (✓ passed, ✗ failed, ! warning): the config and profile, the API key
    /// variable, GET /models, the model name, special tokens surviving (raw mode) or tool calls
    /// parsed by the server (chat mode), and each tool's program. Exits non-zero on a failure.
    Doctor(DoctorArgs),
    /// Rules on tool calls: `rules check TOOL ARGS_JSON` says what the rules in force decide.
    Rules(RulesArgs),
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Request JSON file; stdin when absent or "-". At most 64 MiB.
    pub file: Option<PathBuf>,
    /// Sort tool schema keys recursively, as some tokenizer versions do.
    #[arg(long)]
    pub sort_tool_keys: bool,
    /// The chat template: k2-instruct (the default), k2-thinking, k2.5, k2.6 (K2.6's rules
    /// are secondhand: K2.5's plus preserve_thinking, not checked against the official text),
    /// or k3 (Kimi K3's XTML prompt: Moonshot's encoder; with --template-only the llama.cpp
    /// Jinja port alone). Wins over the request's "template" key.
    #[arg(long, value_name = "NAME", value_parser = parse_template)]
    pub template: Option<kimi_protocol::Template>,
    /// Render the template alone, without the tokenizer's preprocessing (no key sort, no
    /// TypeScript tool declaration; for k3, the Jinja port instead of Moonshot's encoder): the
    /// form of the template golden vectors.
    #[arg(long)]
    pub template_only: bool,
}

/// A `--template` value, with the accepted names in the error.
fn parse_template(name: &str) -> Result<kimi_protocol::Template, String> {
    kimi_protocol::Template::parse(name).ok_or_else(|| {
        let names: Vec<&str> = kimi_protocol::Template::ALL
            .iter()
            .map(|t| t.as_str())
            .collect();
        format!(
            "unknown template {name:?}; expected one of {}",
            names.join(", ")
        )
    })
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Raw completion text file; stdin when absent or "-". At most 64 MiB.
    #[arg(conflicts_with = "trace")]
    pub file: Option<PathBuf>,
    /// Parse a saved trace (`s` in the inspector) again, chunk by chunk as it arrived, with the
    /// decoder of its mode; prints one JSON line per chunk and per event, then the result.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["chunks", "events", "template"])]
    pub trace: Option<PathBuf>,
    /// The input is a JSON array of strings, fed to the parser one by one as a server streams them.
    #[arg(long)]
    pub chunks: bool,
    /// Print the parser's events as JSON lines (adjacent text deltas joined) instead.
    #[arg(long)]
    pub events: bool,
    /// The template whose prompt the completion continues: k2-instruct (the default),
    /// k2-thinking, k2.5, k2.6, k3. K2.5/K2.6 completions start inside the reasoning (their
    /// prompt ends with `<think>`) unless --thinking-off; K2-Thinking's <think> ids are shown
    /// as null (not confirmed for its tokenizer). K3 completions are parsed as XTML channels,
    /// starting in the think channel unless --thinking-off.
    #[arg(long, value_name = "NAME", value_parser = parse_template)]
    pub template: Option<kimi_protocol::Template>,
    /// The completion starts inside the reasoning (the prompt ended with an open `<think>`),
    /// whatever the K2 template (K3 starts in its think channel anyway).
    #[arg(long)]
    pub starts_in_reasoning: bool,
    /// Thinking off: for K2.5/K2.6 the prompt ended with `<think></think>`, for K3 with
    /// `<|open|>response<|sep|>`, so the completion starts in content.
    #[arg(long, conflicts_with = "starts_in_reasoning")]
    pub thinking_off: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct MockArgs {
    /// Port on 127.0.0.1; 0 picks a free one (printed on stdout).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Model id served by /v1/models and echoed in responses.
    #[arg(long, default_value = "moonshotai/Kimi-K2-Instruct")]
    pub model: String,
    /// Stream in pieces of N bytes (splitting markers) instead of one token per event.
    #[arg(long, value_name = "N")]
    pub chunk_bytes: Option<usize>,
    /// Wait N milliseconds between streamed events.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub delay_ms: u64,
    /// Cut the connection after N bytes of response body.
    #[arg(long, value_name = "N")]
    pub drop_after_bytes: Option<usize>,
    /// Answer every generation request with this HTTP status and an OpenAI-style error body.
    #[arg(long, value_name = "CODE")]
    pub fail_status: Option<u16>,
    /// Send a malformed SSE event in the middle of the stream.
    #[arg(long)]
    pub malformed_sse: bool,
    /// Send an `{"error": ...}` SSE event in the middle of the stream.
    #[arg(long)]
    pub error_event: bool,
    /// Chat endpoint: put raw Kimi markers in `content` instead of `tool_calls`.
    #[arg(long)]
    pub markers_in_content: bool,
    /// Require `Authorization: Bearer KEY` (401 otherwise).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Completions endpoint: strip special tokens even when asked not to (a server that ignores
    /// `skip_special_tokens: false`).
    #[arg(long)]
    pub strip_special_tokens: bool,
    /// Start every event stream with a UTF-8 byte order mark.
    #[arg(long)]
    pub bom: bool,
    /// Stream every answer, even to requests with `"stream": false` (like some gateways).
    #[arg(long)]
    pub always_stream: bool,
    /// Content-Type of streamed answers; a `text/html` one sends a login page instead of events,
    /// an empty one sends no Content-Type at all.
    #[arg(long, value_name = "TYPE")]
    pub content_type: Option<String>,
    /// With --fail-status: an error body of N bytes (the JSON error, then padding).
    #[arg(long, value_name = "N")]
    pub error_body_bytes: Option<usize>,
    /// Send every response body (models, answers, errors) at N bytes per second.
    #[arg(long, value_name = "N")]
    pub slow_body_bps: Option<u64>,
    /// Start every event stream with one event whose `data:` line is N bytes long (the
    /// answer's first text, sent whole).
    #[arg(long, value_name = "N")]
    pub long_line_bytes: Option<usize>,
    /// Answer every /v1 request with a redirect to this base URL (another server's `.../v1`),
    /// the rest of the path kept.
    #[arg(long, value_name = "URL")]
    pub redirect_to: Option<String>,
    /// The status of --redirect-to: 301, 302, 303, 307 or 308.
    #[arg(long, value_name = "CODE", default_value_t = 307)]
    pub redirect_status: u16,
    /// Answer every user message with the tool call(s) in this JSON file, verbatim:
    /// {"id": ..., "name": ..., "arguments": "..."} or an array of them ("id" optional).
    #[arg(long, value_name = "PATH")]
    pub tool_call_file: Option<PathBuf>,
    /// Answer every user message with a call to this tool (with --tool-call-args/-id).
    #[arg(long, value_name = "NAME")]
    pub tool_call_name: Option<String>,
    /// The id of the --tool-call-name call, sent as is (default functions.NAME:0).
    #[arg(long, value_name = "ID")]
    pub tool_call_id: Option<String>,
    /// The argument text of the --tool-call-name call, sent as is (default {}).
    #[arg(long, value_name = "TEXT")]
    pub tool_call_args: Option<String>,
    // The thinking model (a --model naming Kimi-K2-Thinking, K2.5 or K2.6).
    /// Chat: stream reasoning in this delta field: reasoning_content (Moonshot, SGLang) or
    /// reasoning (recent vLLM, OpenRouter).
    #[arg(long, value_name = "FIELD", default_value = "reasoning_content",
          value_parser = ["reasoning_content", "reasoning"])]
    pub reasoning_key: String,
    /// Chat: no reasoning parser: reasoning arrives in `content` with `</think>`.
    #[arg(long)]
    pub reasoning_in_content: bool,
    /// Calls inside the reasoning: as marker text in reasoning (chat), or a tool section opened
    /// before `</think>` (raw).
    #[arg(long)]
    pub call_in_reasoning: bool,
    /// Chat: each call as `tool_calls` deltas and, leaked, as markers in `content` too.
    #[arg(long)]
    pub duplicate_calls: bool,
    /// Chat: render chat requests with an older chat template (no default system message), as
    /// a server started with a stale `--chat-template` does: `prompt_tokens` and `/tokenize`
    /// differ from the raw render (`replay --compare chat` shows it).
    #[arg(long)]
    pub stale_chat_template: bool,
    /// Chat: answer 400 as Moonshot does when an assistant tool-call message in the history
    /// has no reasoning_content.
    #[arg(long)]
    pub require_reasoning: bool,
    // Continuing an edited answer.
    /// An answer with calls stops on its first <|tool_call_argument_begin|>, written without its
    /// closing `>` (a broken marker to repair in the inspector).
    #[arg(long)]
    pub broken_marker: bool,
    /// Answer 400 to partial mode ("partial": true on the last message, or
    /// continue_final_message), as a server without it does.
    #[arg(long)]
    pub refuse_partial: bool,
    // Retries and model switching.
    /// With --fail-status: only the first N generation requests fail, later ones are answered.
    #[arg(long, value_name = "N")]
    pub fail_times: Option<u32>,
    /// With --fail-status: the Retry-After header to send (seconds or an HTTP-date; default:
    /// 2 on a 429, none otherwise).
    #[arg(long, value_name = "VALUE")]
    pub retry_after: Option<String>,
    /// More model ids /v1/models lists after --model (comma-separated).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub extra_models: Vec<String>,
    /// The max_model_len /v1/models reports for every model (0: none reported).
    #[arg(long, value_name = "N")]
    pub max_model_len: Option<u64>,
    // Token level.
    /// Emit every special marker as several ordinary tokens, as a server whose tokenizer does
    /// not know Kimi's special tokens (chat: the markers then land in `content`).
    #[arg(long)]
    pub split_markers: bool,
    /// Answer 400 to a request with `logprobs`, `top_logprobs` or
    /// `return_tokens_as_token_ids`, as a strict OpenAI-compatible server does.
    #[arg(long)]
    pub refuse_logprobs: bool,
    /// A Kimi K3 model (`--model kimi-k3`) answers in a broken shape seen in the field:
    /// think-close-skipped-tools, think-close-skipped-response, think-close-no-sep,
    /// answer-in-think, orphan-response-close, no-response-close, cut-by-max-tokens, rethink.
    /// With --split-markers its structural tokens are spelled from ordinary tokens instead.
    #[arg(long, value_name = "NAME", value_parser = parse_k3_shape)]
    pub k3_shape: Option<String>,
    /// Imitate a known server bug by name (on top of the other options); `list` prints each
    /// with the upstream report it imitates and the conformance checks it breaks.
    #[arg(long, value_name = "NAME", value_parser = parse_server_bug)]
    pub server_bug: Option<String>,
}

/// A `--server-bug` value (`list` or a scenario), with the known names in the error.
fn parse_server_bug(name: &str) -> Result<String, String> {
    if name == "list" || kimi_mock::server_bugs::find(name).is_some() {
        return Ok(name.to_owned());
    }
    let names: Vec<&str> = kimi_mock::server_bugs::SERVER_BUGS
        .iter()
        .map(|b| b.name)
        .collect();
    Err(format!(
        "unknown server bug {name:?}; expected list or one of {}",
        names.join(", ")
    ))
}

/// A `--k3-shape` value, with the known names in the error.
fn parse_k3_shape(name: &str) -> Result<String, String> {
    if kimi_mock::k3::is_shape(name) {
        return Ok(name.to_owned());
    }
    let names: Vec<&str> = kimi_mock::k3::SHAPES.iter().map(|(n, _)| *n).collect();
    Err(format!(
        "unknown K3 shape {name:?}; expected one of {}",
        names.join(", ")
    ))
}

/// Where to connect: the config file, a profile in it, and overrides of its settings.
#[derive(Debug, Clone, Default, Args)]
pub struct ConnectArgs {
    /// Config file (default: the platform config dir, see `kimi-tui config path`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Profile to use instead of `default_profile`.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// raw: render the template and parse markers locally; chat: the server's tool parser.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Server URL up to /v1, e.g. http://127.0.0.1:8000/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name sent to the server.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

/// `--mode`: clap's view of [`Mode`], which lives in the protocol crate and knows nothing of clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// `/v1/completions`: the client renders the template and parses markers itself.
    Raw,
    /// `/v1/chat/completions` with `tools`: the server parses tool calls.
    Chat,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Raw => Mode::Raw,
            ModeArg::Chat => Mode::Chat,
        }
    }
}

impl ConnectArgs {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config: self.config.clone(),
            profile: self.profile.clone(),
            mode: self.mode.map(Mode::from),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Approve every `ask` tool call with valid arguments (a call a rule denies never runs).
    #[arg(long)]
    pub yes: bool,
    /// Apply the allow rules of the working directory's .kimi-tui/rules.toml for this run even
    /// if the directory is not trusted (without it, only its deny and ask rules apply).
    #[arg(long)]
    pub trust_project: bool,
    /// Print the whole conversation as a JSON array of OpenAI-shape messages at the end
    /// (instead of streaming the answer).
    #[arg(long)]
    pub json: bool,
    /// Print the run as it happens, one JSON object per line (text and reasoning deltas, tool
    /// calls, approvals, tool results, retries, errors, the turn's end), instead of the answer.
    #[arg(long, conflicts_with = "json")]
    pub json_stream: bool,
    /// Print the model's reasoning (thinking models) to stderr as it streams.
    #[arg(long)]
    pub reasoning: bool,
    /// The user's message; `-` reads it from stdin.
    pub prompt: String,
}

#[derive(Debug, Clone, Default, Args)]
pub struct SessionsArgs {
    /// Session directory (default: the platform data dir, e.g. ~/.local/share/kimi-tui/sessions).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Markdown: one section per message, tool calls as JSON blocks.
    #[value(alias = "markdown")]
    Md,
    /// A JSON array of OpenAI-shape messages.
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A session id (see `kimi-tui sessions`), `latest`, or the path of a session file.
    #[arg(value_name = "ID")]
    pub session: String,
    /// Output format (default: json when --output ends in .json, else md).
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,
    /// Write to this file instead of stdout.
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Session directory (default: the platform data dir).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub action: RulesAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum RulesAction {
    /// What the config's rules (and the working directory's .kimi-tui/rules.toml) decide about
    /// a call: prints the decision, the rule and its file and line. A config error exits
    /// non-zero with the message.
    Check(RulesCheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RulesCheckArgs {
    /// Config file (default: the platform config dir, see `kimi-tui config path`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Count the project's allow rules even if the directory is not trusted.
    #[arg(long)]
    pub trust_project: bool,
    /// The tool's name as the model calls it (`run_command`, `mcp__github__create_issue`).
    pub tool: String,
    /// The call's arguments: a JSON object.
    pub args_json: String,
}

#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ConfigAction {
    /// Print the config file path in use.
    Path(ConfigFileArgs),
    /// Write the commented example config there; never overwrites an existing file.
    Init(ConfigFileArgs),
}

#[derive(Debug, Clone, Default, Args)]
pub struct ConfigFileArgs {
    /// Config file (default: the platform config dir, e.g. ~/.config/kimi-tui/config.toml).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A saved trace file (`s` in the inspector).
    pub file: PathBuf,
    /// Print every chunk as it arrives: its time, the gap before it, and what it produced.
    #[arg(long, conflicts_with = "compare")]
    pub print: bool,
    /// A/B: send the request again another way and set the answer beside the saved one, field
    /// by field (finish reason, text, reasoning, calls and arguments, usage) and the prompts:
    /// `stream` (the same body again), `non-stream` (`"stream": false`), `raw` (a chat request
    /// through this client's template and parser), `chat` (a raw one through the server's).
    /// Exits 1 when the two differ.
    #[arg(long, value_name = "HOW", value_parser = parse_variant)]
    pub compare: Option<kimi_client::ab::Variant>,
    /// With --compare: print the comparison as one JSON object.
    #[arg(long, requires = "compare")]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// A `--compare` value, with the accepted ones in the error.
fn parse_variant(name: &str) -> Result<kimi_client::ab::Variant, String> {
    kimi_client::ab::Variant::parse(name).ok_or_else(|| {
        let names: Vec<&str> = kimi_client::ab::Variant::ALL
            .iter()
            .map(|v| v.as_str())
            .collect();
        format!(
            "unknown comparison {name:?}; expected one of {}",
            names.join(", ")
        )
    })
}

#[derive(Debug, Clone, Args)]
pub struct ReproArgs {
    /// A saved trace file (`s` in the inspector).
    pub file: PathBuf,
    /// jsonl: one JSON object per line; vllm, sglang: a pytest file for their Kimi tool parser.
    #[arg(long, value_enum, default_value_t = ReproFormat::Jsonl)]
    pub format: ReproFormat,
}

/// The output formats of `repro`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReproFormat {
    Jsonl,
    Vllm,
    Sglang,
}

#[derive(Debug, Clone, Default, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Check how the profile's endpoint serves Kimi, in its mode: a built-in set of requests
    /// (nested tool schemas, parallel calls, a tool-result round, reasoning history, one that
    /// must not call), each sent streamed and not, scored PASS/FAIL/WARN/SKIP with evidence and
    /// the server setting to fix, plus TTFT, tokens/s and inter-token gaps. Exits 1 when any
    /// check fails.
    #[arg(long)]
    pub conformance: bool,
    /// With --conformance: send the set this many times.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "conformance",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// With --conformance: print one JSON object (checks with name, status, evidence and hint;
    /// timings) instead of the table.
    #[arg(long, requires = "conformance")]
    pub json: bool,
}
