//! Command-line definitions (clap). The subcommands are a contract: tests outside the project
//! call them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::backend::Mode;
use crate::config::Overrides;

#[derive(Debug, Parser)]
#[command(
    name = "kimi-tui",
    version,
    about = "Terminal chat client for Kimi K2: byte-exact prompts, local tool-call parsing, hand-approved tools",
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render a chat request to the exact Kimi K2 prompt text (no trailing newline).
    ///
    /// Input: {"messages": [...], "tools": [...] | null, "add_generation_prompt": bool}; an OpenAI
    /// request body works (other fields are ignored; add_generation_prompt defaults to true).
    Render(RenderArgs),
    /// Parse a raw completion into {content, tool_calls, finish_reason, warnings}.
    Parse(ParseArgs),
    /// Run one prompt through the whole agent loop without a screen.
    ///
    /// The answer streams to stdout, tool activity to stderr. `auto` tools run, `ask` tools run
    /// only with --yes (otherwise the model is told the user declined), `deny` tools never.
    Exec(ExecArgs),
    /// Run the scripted mock Kimi server (OpenAI-compatible, both endpoints) on loopback.
    MockServer(MockArgs),
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Request JSON file; stdin when absent or "-".
    pub file: Option<PathBuf>,
    /// Sort tool schema keys recursively, as some tokenizer versions do.
    #[arg(long)]
    pub sort_tool_keys: bool,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Raw completion text file; stdin when absent or "-".
    pub file: Option<PathBuf>,
    /// The input is a JSON array of strings, fed to the parser one by one as a server streams them.
    #[arg(long)]
    pub chunks: bool,
    /// Print the parser's events as JSON lines (adjacent text deltas joined) instead.
    #[arg(long)]
    pub events: bool,
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
    pub mode: Option<Mode>,
    /// Server URL up to /v1, e.g. http://127.0.0.1:8000/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name sent to the server.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

impl ConnectArgs {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config: self.config.clone(),
            profile: self.profile.clone(),
            mode: self.mode,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// Approve every `ask` tool call with valid arguments.
    #[arg(long)]
    pub yes: bool,
    /// Print the whole conversation as a JSON array of OpenAI-shape messages at the end
    /// (instead of streaming the answer).
    #[arg(long)]
    pub json: bool,
    /// The user's message.
    pub prompt: String,
}
