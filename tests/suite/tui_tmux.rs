//! End to end through a real terminal: the real binary with `--demo` inside tmux, driven with
//! send-keys and read with capture-pane, as a person would use it.

use kimi_test_support::tmux::Tmux;

#[test]
fn demo_weather_call_is_approved_and_inspected() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        "e2e",
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("What's the weather like in Paris?");
    t.keys(&["Enter"]);
    let dialog = t.wait_for(
        &["Tool call needs approval", "Run get_weather?"],
        "the approval dialog",
    );
    assert!(dialog.contains("\"city\": \"Paris\""), "{dialog}");
    t.keys(&["y"]);
    let answer = t.wait_for(
        &["✓ done · exit 0", "returned", "│ idle │"],
        "the tool result and the whole final answer",
    );
    assert!(
        answer.contains("├─ result"),
        "tool result visible: {answer}"
    );
    assert!(
        answer.contains(r#"{"city": "Paris", "weather": "#),
        "tool result visible: {answer}"
    );
    // Select the call's pane and open the inspector on its markers.
    t.keys(&["Tab"]);
    t.keys(&["C-t"]);
    // Everything is waited for, not asserted on the first capture that shows the title: a
    // capture can land while the frame is still being written to the terminal.
    t.wait_for(
        &[
            "Inspector",
            "<|tool_call_begin|> 163597",
            "<|tool_call_argument_begin|> 163598",
            // A chunk's arrival time, then its gap since the one before.
            " ms ",
            " #10 ",
        ],
        "the inspector at the call's markers, with ids and chunk timings",
    );
    // Esc closes it; Ctrl-C quits and gives the terminal back.
    t.keys(&["Escape"]);
    t.wait_for(&["◆ Kimi"], "the transcript again");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
    drop(t);

    // The conversation was saved as it went: --resume brings it back, panes and results too.
    let t = Tmux::start(
        "e2e",
        &format!("{} --demo --resume", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    let resumed = t.wait_for(
        &["Resumed session", "What's the weather like in Paris?"],
        "the resumed transcript",
    );
    assert!(resumed.contains("get_weather"), "{resumed}");
    assert!(resumed.contains("returned"), "{resumed}");
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
