//! `/system`, `/mode` and `/clear` typed while an answer streams, end to end: the real binary
//! inside tmux (a tmux server of its own), talking to the real `kimi-tui mock-server` streaming
//! slowly. The commands are taken at once, noted on screen, and applied by the agent when the
//! conversation is consistent; the session file shows what was sent.

use std::path::Path;

use super::mock_process::MockProcess;
use serde_json::Value;

/// The newest saved session that `done` accepts, waiting up to 10 s for the writer thread
/// (the last one read when none does, for the assertion's message).
fn saved_within(home: &Path, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..100 {
        if let Some(s) = sessions(home).into_iter().rev().find(|s| done(s)) {
            return s;
        }
        last = sessions(home).pop().unwrap_or(Value::Null);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    last
}

/// The saved sessions, newest last by modification time.
fn sessions(home: &Path) -> Vec<Value> {
    // Read through the session store: journals (`ID.jsonl`) replayed into whole sessions.
    let store = kimi_core::session::SessionStore::new(home.join("data/kimi-tui/sessions"));
    let mut list = store.list().sessions;
    list.sort_by_key(|s| s.updated_unix_ms);
    list.iter()
        .filter_map(|s| store.load(&s.id).ok())
        .filter_map(|s| serde_json::to_value(s).ok())
        .collect()
}

#[test]
fn system_mode_and_clear_typed_mid_answer_are_applied_not_refused() {
    let mock = MockProcess::start(["--delay-ms", "40"]);
    let dir = tempfile::tempdir().expect("tmp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "default_profile = \"p\"\n[profiles.p]\nmode = \"raw\"\nbase_url = \"{}\"\nmodel = \"moonshotai/Kimi-K2-Instruct\"\nsystem_prompt = \"You are Kimi.\"\n",
            mock.url
        ),
    )
    .expect("config");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let t = super::tui_with_config("midturn", &config, &home, (120, 50));
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t.send_line("Tell me about Rust.");
    t.wait_for(&["◆ Kimi"], "the answer streaming");
    t.send_line("/system Be terse.");
    t.send_line("/mode chat");
    let noted = t.wait_for(
        &[
            "The new system prompt applies from the next request.",
            "Mode chat applies from the next request.",
        ],
        "the notes while the answer streams",
    );
    assert!(!noted.contains("Cannot"), "{noted}");
    let done = t.wait_for(
        &["System prompt set.", "Mode: chat", "│ idle │"],
        "both applied once the answer ended",
    );
    assert!(done.contains("```") || done.contains("Rust"), "{done}");
    // The session writer is a thread of its own: its file catches up with the screen shortly.
    let s = saved_within(&home, |s| s["messages"][0]["content"] == "Be terse.");
    assert_eq!(s["messages"][0]["content"], "Be terse.", "{s}");
    assert_eq!(s["messages"][1]["content"], "Tell me about Rust.");
    assert_eq!(s["messages"][2]["role"], "assistant");
    assert!(
        s["traces"][0]["trace"]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/completions") && !u.contains("chat")),
        "the first answer came in raw mode: {s}"
    );

    // The next message goes in chat mode, with the new prompt; /clear while it streams waits
    // for its end.
    t.send_line("hello");
    t.wait_for(&["◆ Kimi", "hello"], "the second answer streaming");
    t.send_line("/clear");
    t.wait_for(
        &["The conversation will be cleared when this answer ends."],
        "the clear note",
    );
    let cleared = t.wait_for(&["Conversation cleared.", "│ idle │"], "the clear");
    assert!(!cleared.contains("Tell me about Rust."), "{cleared}");
    let s = saved_within(&home, |s| {
        s["messages"].as_array().is_some_and(|m| m.len() == 5)
    });
    assert_eq!(s["messages"][0]["content"], "Be terse.");
    assert_eq!(s["messages"][3]["content"], "hello");
    assert!(
        s["traces"][1]["trace"]["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/chat/completions")),
        "the second answer came in chat mode: {s}"
    );
    drop(t);
}
