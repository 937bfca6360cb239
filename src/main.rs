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
        None => Ok(()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}` keeps the whole context chain on one line.
            eprintln!("kimi-tui: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
