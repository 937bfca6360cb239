//! `kimi-tui config path` and `kimi-tui config init`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use anyhow::{Context, Result};

use super::example_tools;
use crate::cli::{ConfigAction, ConfigArgs};
use kimi_core::config;

/// `config.example.toml`: every option, commented.
pub const EXAMPLE: &str = include_str!("../../config.example.toml");

/// `--config`, or the platform's default path.
fn config_path(given: Option<&PathBuf>) -> Result<PathBuf> {
    given
        .cloned()
        .or_else(config::default_path)
        .ok_or_else(|| anyhow::anyhow!("no config directory (HOME is not set); pass --config PATH"))
}

/// `outer` is a `--config` given before the subcommand (`kimi-tui --config x config path`);
/// the subcommand's own wins.
pub fn run(args: &ConfigArgs, outer: Option<&PathBuf>) -> Result<()> {
    match &args.action {
        ConfigAction::Path(a) => {
            let path = config_path(a.config.as_ref().or(outer))?;
            super::write_stdout(format!("{}\n", path.display()).as_bytes())
        }
        ConfigAction::Init(a) => {
            let path = config_path(a.config.as_ref().or(outer))?;
            // The example tools go beside the config and the config names them by absolute
            // path, so `doctor` passes and the tools run from any directory.
            let tools = example_tools::beside(&path)?;
            init(&path, &example_tools::point_at(EXAMPLE, &tools))?;
            example_tools::install(&tools)?;
            super::write_stdout(
                format!(
                    "wrote an example config to {}\nand its example tools to {}\nedit its profiles for your server, then run `kimi-tui doctor`\n",
                    path.display(),
                    tools.display()
                )
                .as_bytes(),
            )
        }
    }
}

/// Write `text` to `path`, creating its directory; never replaces an existing file.
fn init(path: &PathBuf, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        kimi_core::private_fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(kimi_core::private_fs::FILE_MODE)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => anyhow::bail!(
            "{} already exists; it was left untouched (edit it, or pass --config with a new path)",
            path.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
    };
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
