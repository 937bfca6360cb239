//! The thinking demo through a real terminal: `--demo --model kimi-k2-thinking` in tmux, the
//! reasoning cell folding when the answer starts, F2 opening it, the status bar naming the
//! template.

use kimi_test_support::tmux::Tmux;

#[test]
fn thinking_demo_shows_folded_reasoning_that_f2_opens() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        "think",
        &format!(
            "{} --demo --mode chat --model kimi-k2-thinking",
            env!("CARGO_BIN_EXE_kimi-tui")
        ),
        home.path(),
    );
    t.wait_for(
        &["kimi-tui", "kimi-k2-thinking", "k2-thinking"],
        "the welcome screen",
    );
    t.literal("What's the weather like in Paris?");
    t.keys(&["Enter"]);
    let dialog = t.wait_for(&["Run get_weather?"], "the approval dialog");
    assert!(dialog.contains("\"city\": \"Paris\""), "{dialog}");
    t.keys(&["y"]);
    let done = t.wait_for(
        &["Thought for", "(F2 show)", "│ idle │"],
        "the answer with its reasoning folded",
    );
    assert!(
        !done.contains("I should call get_weather"),
        "folded: {done}"
    );
    assert!(
        done.contains(" chat  k2-thinking "),
        "the status bar names the template: {done}"
    );
    t.keys(&["F2"]);
    let open = t.wait_for(
        &["(F2 hide)", "I should call get_weather"],
        "the reasoning opened with F2",
    );
    assert!(!open.contains("<think>"), "{open}");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

/// The K3 demo in raw mode: the XTML prompt and answer, the call approved and run, its result
/// sent back, the reasoning folded, no marker on screen, the raw stream one key away.
#[test]
fn k3_demo_runs_the_whole_flow_in_raw_mode() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        "k3demo",
        &format!("{} --demo --model kimi-k3", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for(&["kimi-tui", " raw  k3  kimi-k3 "], "the welcome screen");
    t.literal("What's the weather like in Paris?");
    t.keys(&["Enter"]);
    let dialog = t.wait_for(
        &["Run get_weather?", "get_weather_0"],
        "the approval dialog",
    );
    assert!(dialog.contains("\"city\": \"Paris\""), "{dialog}");
    t.keys(&["y"]);
    let done = t.wait_for(
        &["The get_weather tool returned:", "│ idle │"],
        "the answer from the tool's result",
    );
    assert!(
        done.contains("Thought for"),
        "the reasoning is folded: {done}"
    );
    assert!(
        !done.contains("<|"),
        "no marker reaches the transcript: {done}"
    );
    t.keys(&["C-t"]);
    // The second request's prompt is the first one extended: the server's prefix cache hits.
    t.wait_for(
        &[
            "Inspector",
            "Request 2 of 2",
            "append +",
            "prefix cache can hit",
        ],
        "the raw stream and the prompt diff",
    );
    t.keys(&["Escape"]);
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
