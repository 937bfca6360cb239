//! Command-line definitions (clap). The subcommands are a contract: tests outside the project
//! call them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
