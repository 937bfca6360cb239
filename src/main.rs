use std::process::ExitCode;

use clap::Parser;
use kimi_tui::cli::{Cli, Command};
use kimi_tui::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Render(args)) => commands::render::run(args),
        Some(Command::Parse(args)) => commands::parse::run(args),
        Some(Command::Exec(args)) => commands::exec::run(args),
        Some(Command::MockServer(args)) => kimi_tui::mock::run_cli(args),
        Some(Command::Sessions(args)) => commands::sessions::list(args),
        Some(Command::Export(args)) => commands::sessions::export(args),
        Some(Command::Config(args)) => {
            commands::config_file::run(args, cli.connect.config.as_ref())
        }
        Some(Command::Doctor(args)) => commands::doctor::run(args, &cli.connect),
        None => kimi_tui::app::run(
            &cli.connect,
            kimi_tui::app::Start {
                demo: cli.demo,
                resume: cli.resume,
                session: cli.session.clone(),
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` keeps the whole context chain on one line.
            let text = format!("{e:#}");
            eprintln!(
                "kimi-tui: error: {}",
                kimi_tui::sanitize::for_terminal(&text)
            );
            ExitCode::FAILURE
        }
    }
}
