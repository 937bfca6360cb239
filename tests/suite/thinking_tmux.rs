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

/// What thinking costs in a real terminal: the thinking demo in raw mode, a tool round and a
/// second turn; `/usage` lists both turns with the mock's cache hits and the reasoning the tool
/// round re-sent, and warns that the second turn's prompt dropped it; the inspector says the
/// same of the last request.
#[test]
fn usage_and_the_inspector_show_what_thinking_costs() {
    // Lines wrap where the screen ends: compared with the blanks between words collapsed.
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_sized(
        "usage",
        &format!(
            "{} --demo --mode raw --model kimi-k2-thinking",
            env!("CARGO_BIN_EXE_kimi-tui")
        ),
        home.path(),
        (160, 50),
    );
    t.wait_for(&["kimi-tui", " raw  k2-thinking "], "the welcome screen");
    t.literal("What's the weather like in Paris?");
    t.keys(&["Enter"]);
    t.wait_for(&["Run get_weather?"], "the approval dialog");
    t.keys(&["y"]);
    t.wait_for(&["Thought for", "│ idle │"], "the first answer");
    t.literal("Thanks!");
    t.keys(&["Enter"]);
    // The mock's answer to a thank-you, then the end of the turn.
    t.wait_for(&["thanks for testing", "│ idle │"], "the second answer");
    t.literal("/usage");
    t.keys(&["Enter"]);
    let usage = flat(&t.wait_for(
        &[
            "What thinking costs, per user turn",
            "re-sent: earlier reasoning",
        ],
        "the /usage report",
    ));
    for want in [
        "! request 3 no longer extends request 2's prompt from byte",
        "the reasoning of an earlier answer (message 1) is no longer in the prompt",
    ] {
        assert!(usage.contains(want), "{want}\n{usage}");
    }
    t.keys(&["C-t"]);
    let inspector = t.wait_for(
        &["Request 3 of 3", " NOT AN APPEND "],
        "the inspector on the last request",
    );
    assert!(
        flat(&inspector).contains("why: the reasoning of an earlier answer (message 1)"),
        "{inspector}"
    );
    t.keys(&["End"]);
    let foot = t.wait_for(&["── what thinking costs"], "the cost lines");
    assert!(foot.contains("prompt cache: "), "{foot}");
    assert!(
        foot.contains("reasoning tokens of this answer: - (not reported)"),
        "raw completions report no reasoning tokens: {foot}"
    );
    t.keys(&["Escape"]);
    t.wait_until(
        "the inspector closed",
        std::time::Duration::from_secs(10),
        |s| !s.contains("┌ Inspector"),
    );
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
