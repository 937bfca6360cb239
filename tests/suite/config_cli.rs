//! `kimi-tui config path` and `kimi-tui config init` through the real binary, with the config
//! directory pointed at a temp dir.

use std::path::Path;
use std::process::{Command, Output};

const EXAMPLE: &str = include_str!("../../config.example.toml");

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(args)
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", cwd.join("xdg"))
        .output()
        .expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn config_path_prints_the_path_in_use() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = run(dir.path(), &["config", "path"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        format!(
            "{}\n",
            dir.path().join("xdg/kimi-tui/config.toml").display()
        )
    );
    let o = run(dir.path(), &["config", "path", "--config", "other/c.toml"]);
    assert_eq!(text(&o.stdout), "other/c.toml\n");
    // Given before the subcommand, too.
    let o = run(dir.path(), &["--config", "top.toml", "config", "path"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "top.toml\n");
}

#[test]
fn config_init_writes_the_example_and_never_overwrites() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = run(dir.path(), &["config", "init"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let path = dir.path().join("xdg/kimi-tui/config.toml");
    let tools = dir.path().join("xdg/kimi-tui/tools");
    assert_eq!(
        std::fs::read_to_string(&path).expect("written"),
        kimi_tui::commands::example_tools::point_at(EXAMPLE, &tools)
    );
    assert!(text(&o.stdout).contains(&path.display().to_string()));
    assert!(text(&o.stdout).contains("kimi-tui doctor"));
    // The written file is a working config.
    kimi_core::config::Config::load(&path).expect("loads");

    std::fs::write(&path, "# mine\n").expect("edit");
    let o = run(dir.path(), &["config", "init"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "{} already exists; it was left untouched",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "# mine\n");
}

#[test]
fn config_init_creates_directories_for_an_explicit_path() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = run(dir.path(), &["config", "init", "--config", "a/b/kimi.toml"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The tools beside it, named by absolute path (the --config path was relative).
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a/b/kimi.toml")).expect("written"),
        kimi_tui::commands::example_tools::point_at(EXAMPLE, &dir.path().join("a/b/tools"))
    );
    assert!(dir.path().join("a/b/tools/weather.sh").is_file());
    assert!(
        !dir.path().join("xdg").exists(),
        "the default path is untouched"
    );
}
