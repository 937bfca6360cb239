use super::diff::compare;
use super::*;
use crate::answer::CallRec;
use kimi_protocol::Usage;

fn side(label: &str, text: &str, calls: &[(&str, &str)], finish: &str) -> Side {
    Side {
        label: label.into(),
        mode: Mode::Chat,
        streamed: true,
        answer: Answer {
            text: vec![(0, text.to_owned())],
            calls: calls
                .iter()
                .map(|(n, a)| CallRec {
                    name: (*n).into(),
                    arguments: (*a).into(),
                    ..CallRec::default()
                })
                .collect(),
            finish_reason: Some(finish.into()),
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15,
                ..Usage::default()
            }),
            ..Answer::default()
        },
        ..Side::default()
    }
}

#[test]
fn the_same_answer_agrees_even_with_arguments_written_differently() {
    let a = side("saved", "ok", &[("f", r#"{"a": 1, "b": 2}"#)], "tool_calls");
    let b = side(
        "non-stream",
        "ok",
        &[("f", r#"{"b":2,"a":1}"#)],
        "tool_calls",
    );
    let c = compare(&a, &b);
    assert!(c.agrees(), "{}", c.table());
    let call = c.rows.iter().find(|r| r.field == "call 1").expect("row");
    assert_eq!(
        call.note.as_deref(),
        Some("the same arguments as JSON, written differently")
    );
}

#[test]
fn each_difference_is_its_own_row() {
    let a = side(
        "saved",
        "hello there",
        &[("f", r#"{"a": 1}"#)],
        "tool_calls",
    );
    let b = side(
        "non-stream",
        "hello world",
        &[("f", r#"{"a": 2"#), ("g", "{}")],
        "stop",
    );
    let c = compare(&a, &b);
    let differing: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| !r.same)
        .map(|r| r.field.as_str())
        .collect();
    assert_eq!(
        differing,
        ["finish reason", "text", "calls", "call 1", "call 2"]
    );
    assert_eq!(c.differences(), 5);
    let text = c.rows.iter().find(|r| r.field == "text").expect("row");
    assert_eq!(
        text.note.as_deref(),
        Some("from byte 6: A «there», B «world»")
    );
    let call = c.rows.iter().find(|r| r.field == "call 1").expect("row");
    assert_eq!(call.note.as_deref(), Some("B's arguments are not JSON"));
    assert!(c.table().ends_with("5 differences\n"), "{}", c.table());
}

#[test]
fn prompts_are_compared_when_both_are_known() {
    let mut a = side("saved", "x", &[], "stop");
    let mut b = side("chat", "x", &[], "stop");
    a.prompt = Some("<|im_user|>user<|im_middle|>hi<|im_end|>".into());
    b.prompt = Some("<|im_user|>user<|im_middle|>hi \n<|im_end|>".into());
    let c = compare(&a, &b);
    assert!(c.prompt_differs && !c.agrees());
    assert!(
        c.prompt.starts_with("they part at byte 30 of"),
        "{}",
        c.prompt
    );
    b.prompt = None;
    b.prompt_note = Some("the server does not show its rendered prompt: 404\n\u{1b}[2J".into());
    let c = compare(&a, &b);
    assert!(!c.prompt_differs && c.agrees());
    assert_eq!(
        c.prompt,
        "the server does not show its rendered prompt: 404\\n\\x1b[2J"
    );
}

#[test]
fn server_text_is_shown_without_terminal_controls() {
    let a = side("saved", "red \u{1b}[31m\nnext", &[], "stop");
    let b = side("stream", "plain", &[], "stop");
    let table = compare(&a, &b).table();
    assert!(!table.contains('\u{1b}'), "{table}");
    assert!(table.contains("\\x1b[31m\\nnext"), "{table}");
}

#[test]
fn variants_that_cannot_be_sent_say_why() {
    let raw = Trace {
        mode: Mode::Raw,
        request: serde_json::json!({"prompt": "p"}),
        ..Trace::default()
    };
    assert!(
        check(&raw, Variant::Raw)
            .unwrap_err()
            .contains("already a raw one")
    );
    assert!(
        check(&raw, Variant::Chat)
            .unwrap_err()
            .contains("older kimi-tui")
    );
    assert!(check(&raw, Variant::NonStream).is_ok());
    let mut with_source = raw.clone();
    with_source.source = Some(serde_json::json!({
        "messages": [{"role": "user", "content": "hi"}], "tools": []
    }));
    assert!(check(&with_source, Variant::Chat).is_ok());
    let mut continued = with_source.clone();
    continued.prefix = Some("Checking.".into());
    assert!(
        check(&continued, Variant::Chat)
            .unwrap_err()
            .contains("edited answer")
    );
    assert!(check(&continued, Variant::NonStream).is_ok());
    for body in [
        serde_json::json!({"messages": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Chec", "partial": true}]}),
        serde_json::json!({"messages": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Chec"}], "continue_final_message": true}),
    ] {
        let chat = Trace {
            mode: Mode::Chat,
            request: body,
            ..Trace::default()
        };
        assert!(
            check(&chat, Variant::Raw)
                .unwrap_err()
                .contains("edited answer")
        );
    }
    let chat = Trace {
        mode: Mode::Chat,
        request: serde_json::json!({"model": "m", "messages": "nope"}),
        ..Trace::default()
    };
    assert!(
        check(&chat, Variant::Raw)
            .unwrap_err()
            .contains("cannot be read")
    );
    assert_eq!(Variant::parse("non-stream"), Some(Variant::NonStream));
    assert_eq!(Variant::other_mode(Mode::Chat), Variant::Raw);
}

#[test]
fn the_variant_keeps_the_saved_model_and_sampling() {
    let chat = Trace {
        mode: Mode::Chat,
        request: serde_json::json!({"model": "kimi-k2.6", "temperature": 0.25, "max_tokens": 77}),
        ..Trace::default()
    };
    let ep = Endpoint::new(Mode::Chat, "http://127.0.0.1:9/v1", "other");
    let raw = endpoint_for(&chat, Variant::Raw, &ep);
    assert_eq!(raw.mode, Mode::Raw);
    assert_eq!(raw.model, "kimi-k2.6");
    assert_eq!(raw.temperature, 0.25);
    assert_eq!(raw.max_tokens, 77);
}
