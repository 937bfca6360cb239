//! The example tool scripts (`assets/tools`), embedded so that the binary can install them
//! wherever it runs: beside the config that `config init` writes, and for `--demo`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Each script's file name and text.
pub const SCRIPTS: [(&str, &str); 3] = [
    ("weather.sh", include_str!("../../assets/tools/weather.sh")),
    ("time.sh", include_str!("../../assets/tools/time.sh")),
    (
        "list_dir.sh",
        include_str!("../../assets/tools/list_dir.sh"),
    ),
];

/// Where the example config names the scripts: relative to the source tree.
const SOURCE_DIR: &str = "./assets/tools/";

/// Write the scripts into `dir` (created), executable by the user only, like everything else
/// kimi-tui writes. An existing script is replaced: it is ours.
pub fn install(dir: &Path) -> Result<()> {
    kimi_core::private_fs::create_dir_all(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in SCRIPTS {
        let path = dir.join(name);
        kimi_core::private_fs::write(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} executable", path.display()))?;
    }
    Ok(())
}

/// `example` with each `command = ["./assets/tools/NAME"]` pointing at `dir/NAME` instead
/// (an absolute path, quoted as TOML), so that its tools work from any directory.
pub fn point_at(example: &str, dir: &Path) -> String {
    let mut out = String::with_capacity(example.len() + 256);
    for line in example.split_inclusive('\n') {
        let script = line
            .strip_prefix("command = [\"")
            .and_then(|rest| rest.strip_prefix(SOURCE_DIR))
            .and_then(|rest| rest.split_once("\"]"))
            .map(|(name, _)| name);
        match script {
            Some(name) => {
                let path = toml::Value::String(dir.join(name).display().to_string());
                out.push_str(&format!("command = [{path}]\n"));
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The directory `config init` installs the scripts in: `tools/` beside the config file, made
/// absolute.
pub fn beside(config: &Path) -> Result<PathBuf> {
    let parent = config.parent().unwrap_or(Path::new("."));
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    Ok(std::path::absolute(parent)
        .with_context(|| format!("cannot resolve {}", parent.display()))?
        .join("tools"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_point_at_the_installed_scripts_and_nothing_else_changes() {
        let example = "a = 1\ncommand = [\"./assets/tools/weather.sh\"]\n# command = [\"./x\"]\n";
        for dir in ["/home/u/.config/kimi-tui/tools", "/tmp/o'dd \"dir\"\\x"] {
            let out = point_at(example, Path::new(dir));
            let v: toml::Table = toml::from_str(&out).expect("still TOML");
            assert_eq!(
                v["command"][0].as_str(),
                Some(format!("{dir}/weather.sh").as_str())
            );
            assert!(out.starts_with("a = 1\n") && out.ends_with("# command = [\"./x\"]\n"));
        }
    }
}
