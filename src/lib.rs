//! kimi-tui: a terminal chat client for Kimi K2 models.
//!
//! `protocol` holds the wire format (template, parser) and does no I/O; `commands` holds the
//! command-line subcommands built on it.

pub mod cli;
pub mod commands;
pub mod protocol;
