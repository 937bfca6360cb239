//! The inspector on a Kimi K3 request through a real terminal: `--demo --model kimi-k3` (raw
//! mode, logprobs on) with the phrase that makes the mock spell its markers from ordinary
//! tokens. The chunks show K3's names with K3's ids and the XTML elements named; the token view
//! flags the spelled markers. No K2 name is shown for the shared ids.

use kimi_test_support::tmux::Tmux;

#[test]
fn k3_demo_inspector_shows_k3_ids_elements_and_split_markers() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_sized(
        "k3insp",
        &format!("{} --demo --model kimi-k3", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
        (140, 50),
    );
    t.wait_for(&["kimi-tui", "│ idle │"], "the welcome screen");
    t.literal("What's the weather in Paris? split markers");
    t.keys(&["Enter"]);
    t.wait_for(&["Run get_weather?"], "the approval dialog");
    t.keys(&["Escape"]);
    t.wait_for(&["│ idle │"], "the end of the turn");
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector"], "the inspector");
    // The first request: its prompt ends with K3's generation prompt.
    t.keys(&["Home", "["]);
    let chunks = t.wait_for(
        &["Request 1 of", "<|open|> 163587", "<|sep|> 163589", "⟨"],
        "K3 badges with K3 ids",
    );
    for k2 in ["im_user", "im_assistant", "im_end"] {
        assert!(!chunks.contains(k2), "{k2}: {chunks}");
    }
    // Down to the completion: the elements the answer opened, named once.
    t.literal("/");
    t.literal("completion as received");
    t.keys(&["Enter"]);
    t.wait_until(
        "the completion's elements",
        std::time::Duration::from_secs(10),
        |s| s.contains("⟨/think⟩") || s.contains("⟨call tool="),
    );
    t.keys(&["t"]);
    let view = t.wait_for(
        &["Inspector · tokens", "token #0 · id ", "⚠ split"],
        "the token view",
    );
    assert!(
        view.contains("marker(s) arrived as several ordinary tokens"),
        "{view}"
    );
    assert!(
        !view.contains("im_user") && !view.contains("im_end"),
        "{view}"
    );
    t.keys(&["Escape"]);
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}
