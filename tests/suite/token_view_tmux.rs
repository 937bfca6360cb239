//! The inspector's token view through a real terminal: `--demo` asks its mock server
//! for logprobs, Ctrl-T opens the inspector, `t` the token view with ids, the selected token's
//! alternatives, and a marker the server spread over ordinary tokens flagged.

use kimi_test_support::tmux::Tmux;

#[test]
fn demo_token_view_shows_ids_alternatives_and_split_markers() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_sized(
        "tokens",
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
        (110, 40),
    );
    t.wait_for(&["kimi-tui", "│ idle │"], "the welcome screen");
    // The mock's phrase emits this answer's markers as ordinary tokens.
    t.literal("What's the weather in Paris? split markers");
    t.keys(&["Enter"]);
    t.wait_for(&["Run get_weather?"], "the approval dialog");
    t.keys(&["Escape"]);
    t.wait_for(&["│ idle │"], "the end of the turn");
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector"], "the inspector");
    // The first request is the one with the split markers.
    t.keys(&["Home", "["]);
    t.keys(&["t"]);
    let view = t.wait_for(
        &["Inspector · tokens", "token #0 · id ", "◀ chosen"],
        "the token view",
    );
    assert!(view.contains("Request 1 of"), "{view}");
    assert!(view.contains("⚠ split"), "{view}");
    assert!(
        view.contains("marker(s) arrived as several ordinary tokens"),
        "{view}"
    );
    // Select further tokens: the pane follows.
    t.keys(&["Right", "Right"]);
    t.wait_for(&["token #2 · id "], "the third token selected");
    t.keys(&["u"]);
    t.wait_until(
        "an unlikely token or a split marker",
        std::time::Duration::from_secs(10),
        |s| !s.contains("token #2 · id ") && s.contains("token #"),
    );
    // Back to the chunks, then out.
    t.keys(&["t"]);
    t.wait_for(&["Inspector · [ ] request"], "the chunks again");
    t.keys(&["Escape"]);
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
