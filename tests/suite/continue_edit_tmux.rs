//! Continuing from an edited answer, end to end: the real binary in tmux against the real
//! `kimi-tui mock-server --broken-marker`, whose answer stops on a call marker written without
//! its closing `>`. The call never reaches the approval dialog; the user opens the inspector,
//! edits the raw output (types the missing `>`), continues, and the call the model completes
//! after the repaired marker is asked about, runs, and the answer is tagged as edited.

use std::ffi::OsStr;
use std::time::Duration;

use super::mock_process::MockProcess;

#[test]
fn a_repaired_marker_opens_the_call_the_continuation_completes() {
    let dir = tempfile::tempdir().expect("tmp");
    let mock = MockProcess::start([OsStr::new("--broken-marker")]);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            r#"default_profile = "p"
[profiles.p]
mode = "raw"
base_url = "{url}"
model = "moonshotai/Kimi-K2-Instruct"

[[tools]]
name = "get_weather"
description = "The weather in a city"
command = ["{tool}"]
approval = "ask"
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
            url = mock.url,
            tool = kimi_test_support::tool_script("weather.sh"),
        ),
    )
    .expect("config");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let t = super::tui_with_config("continue-edit", &config, &home, (120, 40));
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t.send_line("What's the weather like in Paris?");
    t.wait_for(&["Let me check the weather in Paris."], "the broken answer");
    t.wait_until("the turn's end", Duration::from_secs(20), |s| {
        s.contains("│ idle │")
    });
    assert!(
        !t.capture().contains("Tool call needs approval"),
        "the broken call is never asked about"
    );
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector"], "the inspector");
    t.keys(&["e"]);
    let editing = t.wait_for(&["Ctrl-S to continue"], "the answer's editor");
    assert!(
        editing.contains("<|tool_call_argument_begin|"),
        "the raw output, markers included:\n{editing}"
    );
    // The cursor is at the end: the repair is the marker's missing `>`.
    t.literal(">");
    t.keys(&["C-s"]);
    let dialog = t.wait_for(&["Tool call needs approval"], "the repaired call");
    assert!(
        dialog.contains("get_weather") && dialog.contains("Paris"),
        "{dialog}"
    );
    t.keys(&["y"]);
    let done = t.wait_for(&["Sunny"], "the answer after the call ran");
    assert!(
        done.contains("◆ Kimi  edited"),
        "the continued answer is tagged:\n{done}"
    );
    t.quit();
}
