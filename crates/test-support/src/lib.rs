//! Shared by the test suites of every crate (a dev-dependency only): where the workspace's test
//! files are, so that each suite finds them whatever its own `CARGO_MANIFEST_DIR` is; and the
//! tmux harness of the end-to-end tests ([`tmux::Tmux`]).

pub mod tmux;

use std::path::{Path, PathBuf};

/// The workspace root (the `kimi-tui` package).
pub fn workspace_root() -> &'static Path {
    // This crate is `crates/test-support`: two levels down from the root.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().and_then(Path::parent).unwrap_or(here)
}

/// `tests/fixtures` at the root: golden templates, parser cases, JSON float vectors.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("tests/fixtures")
}

/// The directory of the small shell tools the tests run (`weather.sh`, `slow.sh`, ...).
pub fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

/// The path of one test tool script, as a command-line word.
pub fn tool_script(name: &str) -> String {
    tools_dir().join(name).display().to_string()
}

/// The demo tools the binary embeds (`assets/tools`).
pub fn demo_tools_dir() -> PathBuf {
    workspace_root().join("assets/tools")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_exist() {
        assert!(workspace_root().join("Cargo.toml").is_file());
        assert!(fixtures_dir().join("template").is_dir());
        assert!(Path::new(&tool_script("weather.sh")).is_file());
        assert!(demo_tools_dir().join("weather.sh").is_file());
    }
}
