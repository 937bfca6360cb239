//! The inspector's A/B through a real terminal, in both modes: `--demo` answers a call, the
//! inspector goes back to that request, `a` sends it again non-streamed and `A` to the other
//! endpoint, and each time the two answers stand side by side, field by field, agreeing (the
//! demo's mock is a correct server), with the prompts compared.

use kimi_test_support::tmux::Tmux;

fn compare_in(mode: &str, other: &str) {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start_sized(
        &format!("ab-{mode}"),
        &format!("{} --demo --mode {mode}", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
        (120, 40),
    );
    t.wait_for(&["kimi-tui", "│ idle │"], "the welcome screen");
    t.literal("What's the weather in Paris?");
    t.keys(&["Enter"]);
    t.wait_for(&["Run get_weather?"], "the approval dialog");
    t.keys(&["Escape"]);
    t.wait_for(&["│ idle │"], "the end of the turn");
    t.keys(&["C-t"]);
    t.wait_for(&["Inspector"], "the inspector");
    // The first request is the one that called.
    t.keys(&["Home", "["]);
    t.wait_for(&["Request 1 of 2"], "the first request");
    t.keys(&["a"]);
    let view = t.wait_for(
        &[
            &format!("A/B: saved ({mode}, streamed) vs non-stream ({mode}, non-streamed)"),
            "the two answers agree",
        ],
        "the non-streamed A/B",
    );
    assert!(
        view.contains("= call 1") && view.contains("get_weather {\"city\": \"Paris\"}"),
        "{view}"
    );
    assert!(
        view.contains("A/B of request 1 (non-stream): the two answers agree"),
        "{view}"
    );
    t.keys(&["A"]);
    let view = t.wait_for(
        &[
            &format!("A/B: saved ({mode}, streamed) vs {other} ({other}, streamed)"),
            "the two answers agree",
            "prompt: the same ",
        ],
        "the other mode's A/B",
    );
    assert!(view.contains("= calls "), "{view}");
    // Another request in view: the comparison stays with its own.
    t.keys(&["]"]);
    let view = t.wait_for(&["Request 2 of 2"], "the second request");
    assert!(!view.contains("A/B: saved"), "{view}");
    t.keys(&["Escape"]);
    t.keys(&["C-c", "C-c"]);
    t.wait_gone();
}

#[test]
fn raw_mode_requests_are_compared_non_streamed_and_through_the_chat_endpoint() {
    compare_in("raw", "chat");
}

#[test]
fn chat_mode_requests_are_compared_non_streamed_and_through_the_raw_endpoint() {
    compare_in("chat", "raw");
}
