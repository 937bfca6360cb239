//! kimi-tui: a terminal chat client for Kimi K2 models.
//!
//! `protocol` holds the wire format (template, parser) and does no I/O; `backend` streams from a
//! server in raw or chat mode; `mock` is the scripted server behind `--demo` and the tests;
//! `tools` runs the tools declared in the config; `commands` holds the non-interactive
//! subcommands.

pub mod app;
pub mod backend;
pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod invisible;
pub mod json_out;
pub mod logging;
pub mod mock;
pub mod private_fs;
pub mod protocol;
pub mod sanitize;
pub mod session;
pub mod tools;
pub mod ui;
