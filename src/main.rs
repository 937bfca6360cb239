use std::process::ExitCode;

use clap::Parser;
use kimi_tui::cli::{Cli, Command};
use kimi_tui::commands;
use kimi_ui::app::Start;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Render(args)) => commands::render::run(args),
        Some(Command::Parse(args)) => commands::parse::run(args),
        Some(Command::Exec(args)) => commands::exec::run(args),
        Some(Command::MockServer(args)) => mock_server(args),
        Some(Command::Sessions(args)) => commands::sessions::list(args),
        Some(Command::Export(args)) => commands::sessions::export(args),
        Some(Command::Config(args)) => {
            commands::config_file::run(args, cli.connect.config.as_ref())
        }
        Some(Command::Doctor(args)) => commands::doctor::run(args, &cli.connect),
        None => chat(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` keeps the whole context chain on one line.
            let text = format!("{e:#}");
            eprintln!(
                "kimi-tui: error: {}",
                kimi_protocol::sanitize::for_terminal(&text)
            );
            ExitCode::FAILURE
        }
    }
}

/// The interactive chat, on the configured server or (`--demo`) on the built-in mock.
fn chat(cli: &Cli) -> anyhow::Result<()> {
    let start = Start {
        demo: cli.demo,
        resume: cli.resume,
        session: cli.session.clone(),
    };
    if cli.demo {
        return demo(
            start,
            cli.connect.mode.map(Into::into),
            cli.connect.model.clone(),
        );
    }
    let overrides = cli.connect.overrides();
    kimi_ui::app::run(start, async move {
        Ok((kimi_core::config::resolve(&overrides)?, ()))
    })
}

#[cfg(feature = "demo")]
fn demo(
    start: Start,
    mode: Option<kimi_protocol::Mode>,
    model: Option<String>,
) -> anyhow::Result<()> {
    // The server lives as long as the TUI: `run` drops it after restoring the terminal.
    kimi_ui::app::run(start, async move {
        let (server, resolved) = kimi_tui::demo::start(mode, model).await?;
        Ok((resolved, server))
    })
}

#[cfg(not(feature = "demo"))]
fn demo(_: Start, _: Option<kimi_protocol::Mode>, _: Option<String>) -> anyhow::Result<()> {
    anyhow::bail!("this build has no --demo (built without the `demo` feature)")
}

#[cfg(feature = "demo")]
fn mock_server(args: &kimi_tui::cli::MockArgs) -> anyhow::Result<()> {
    kimi_tui::mock_cli::run(args)
}

#[cfg(not(feature = "demo"))]
fn mock_server(_: &kimi_tui::cli::MockArgs) -> anyhow::Result<()> {
    anyhow::bail!("this build has no mock server (built without the `demo` feature)")
}
