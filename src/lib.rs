//! kimi-tui, the binary: the command line (`cli`), the non-interactive subcommands
//! (`commands`), and the wiring of `--demo` and `mock-server`. The work happens in the crates
//! under `crates/`: `kimi-protocol` (wire format, shared types; pure), `kimi-client` (HTTP +
//! SSE), `kimi-core` (agent, tools, config, sessions), `kimi-mock` (the scripted server) and
//! `kimi-ui` (the terminal UI).

pub mod cli;
pub mod commands;
#[cfg(feature = "demo")]
pub mod demo;
#[cfg(feature = "demo")]
pub mod mock_cli;
#[cfg(feature = "demo")]
pub mod mock_mcp;
