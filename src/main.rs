use std::process::ExitCode;

use clap::Parser;
use kimi_tui::cli::{Cli, Command};
use kimi_tui::commands;
use kimi_ui::Start;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Render(args)) => commands::render::run(args),
        Some(Command::Parse(args)) => commands::parse::run(args),
        Some(Command::Exec(args)) => commands::exec::run(args),
        Some(Command::MockServer(args)) => mock_server(args),
        Some(Command::MockMcpServer) => mock_mcp_server(),
        Some(Command::Sessions(args)) => commands::sessions::list(args),
        Some(Command::Export(args)) => commands::sessions::export(args),
        Some(Command::Config(args)) => {
            commands::config_file::run(args, cli.connect.config.as_ref())
        }
        Some(Command::Replay(args)) => commands::replay::run(args),
        Some(Command::Repro(args)) => commands::repro::run(args),
        Some(Command::Doctor(args)) => commands::doctor::run(args, &cli.connect),
        Some(Command::Rules(args)) => commands::rules::run(args, cli.connect.config.as_ref()),
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
        screen: if cli.inline {
            Some(kimi_core::config::ScreenChoice::Inline)
        } else if cli.fullscreen {
            Some(kimi_core::config::ScreenChoice::Fullscreen)
        } else {
            None
        },
    };
    if cli.demo || resumes_demo(cli) {
        return demo(
            start,
            cli.connect.mode.map(Into::into),
            cli.connect.model.clone(),
        );
    }
    let overrides = cli.connect.overrides();
    let setup = async move { kimi_core::config::resolve(&overrides).map(|r| (r, ())) };
    Ok(kimi_ui::run(start, setup)?)
}

/// The profile name `--demo` runs and saves its sessions under.
#[cfg(feature = "demo")]
const DEMO_PROFILE: &str = kimi_tui::demo::PROFILE;
#[cfg(not(feature = "demo"))]
const DEMO_PROFILE: &str = "demo";

/// `--resume` (or `--session ID`) of a session made with `--demo` continues in the demo: its
/// server was the built-in mock, which no config file names. A profile, config or server given
/// on the command line wins.
fn resumes_demo(cli: &Cli) -> bool {
    let c = &cli.connect;
    if !(cli.resume || cli.session.is_some())
        || c.config.is_some()
        || c.profile.is_some()
        || c.base_url.is_some()
    {
        return false;
    }
    let Ok(store) = kimi_core::session::SessionStore::open_default() else {
        return false;
    };
    let list = store.list();
    let summary = match &cli.session {
        None => list.sessions.first(),
        Some(id) => list.sessions.iter().find(|s| s.id == *id),
    };
    summary.is_some_and(|s| s.profile == DEMO_PROFILE)
}

#[cfg(feature = "demo")]
fn demo(
    start: Start,
    mode: Option<kimi_protocol::Mode>,
    model: Option<String>,
) -> anyhow::Result<()> {
    // The server lives as long as the TUI: `run` drops it after restoring the terminal.
    let setup = async move {
        let (server, resolved) = kimi_tui::demo::start(mode, model).await?;
        Ok::<_, anyhow::Error>((resolved, server))
    };
    Ok(kimi_ui::run(start, setup)?)
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

#[cfg(feature = "demo")]
fn mock_mcp_server() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(kimi_tui::mock_mcp::serve_stdio())
}

#[cfg(not(feature = "demo"))]
fn mock_mcp_server() -> anyhow::Result<()> {
    anyhow::bail!("this build has no mock MCP server (built without the `demo` feature)")
}
