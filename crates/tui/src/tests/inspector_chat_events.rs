//! The inspector's compact view of chat-mode SSE events, on the events the mock server sends
//! as vLLM does (asked by the core's agent over loopback): a call's deltas, reasoning, the
//! finish and the usage, each as one line of only what it carries; `r` shows the raw JSON.

use super::token_view::agent_trace;
use crate::app::event::AppEvent;
use crate::ui::inspector_chat::{Shown, fields, line};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::config::Profile;
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Mode, Trace};

/// A chat request to the mock serving `model`, as the agent makes it.
async fn chat_trace(model: &str, prompt: &str) -> Trace {
    let opts = MockOptions {
        model: model.into(),
        ..MockOptions::default()
    };
    let server = MockServer::start(opts, 0).await.expect("mock");
    let mut profile = Profile::new(Mode::Chat, &server.base_url());
    profile.model = model.into();
    agent_trace(profile, prompt).await
}

/// Each event's payload, in order.
fn payloads(t: &Trace) -> Vec<&str> {
    let mut start = 0;
    (0..t.chunks.len())
        .map(|k| {
            let end = t.chunks.end(k).expect("a chunk");
            let p = &t.data[start..end];
            start = end;
            p
        })
        .collect()
}

/// The text of every `key "…"` field named `key`, decoded.
fn texts(lines: &[Vec<crate::ui::inspector_chat::Field>], key: &str) -> String {
    (lines.iter().flatten())
        .filter(|f| f.key == key)
        .map(|f| match &f.value {
            Shown::Text(q) => serde_json::from_str::<String>(q).expect("a JSON string"),
            Shown::Plain(p) => panic!("{key} is text, not {p}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_s_deltas_finish_and_usage_are_one_line_each() {
    let t = chat_trace(
        "moonshotai/Kimi-K2-Instruct",
        "What's the weather like in Paris?",
    )
    .await;
    let events: Vec<_> = (payloads(&t).into_iter()).filter_map(fields).collect();
    assert!(events.len() >= 5, "{events:?}");
    let shown: Vec<String> = events.iter().map(|f| line(f)).collect();
    // The first event names the role; its empty content says nothing.
    assert_eq!(shown[0], "role assistant");
    let begin = (shown.iter())
        .find(|l| l.contains("tool_calls[0].id"))
        .expect("the call begins");
    assert_eq!(
        begin,
        r#"tool_calls[0].id "functions.get_weather:0"  tool_calls[0].function.name "get_weather""#
    );
    // The arguments come in pieces, each quoted; together they are the call's arguments.
    let pieces = (shown.iter())
        .filter(|l| l.starts_with("tool_calls[0].function.arguments \""))
        .count();
    assert!(pieces >= 2, "{shown:?}");
    let args = texts(&events, "tool_calls[0].function.arguments");
    let v: serde_json::Value = serde_json::from_str(&args).expect("whole arguments");
    assert_eq!(v["city"], "Paris");
    assert!(
        shown.contains(&"finish_reason tool_calls".to_owned()),
        "{shown:?}"
    );
    let usage = (shown.iter())
        .find(|l| l.starts_with("usage "))
        .expect("the usage event");
    let u = t.usage.expect("usage recorded");
    assert_eq!(
        usage,
        &format!(
            "usage prompt {} · completion {} · total {} · cached {}",
            u.prompt_tokens,
            u.completion_tokens,
            u.total_tokens,
            u.cached_tokens.expect("the mock reports its cache")
        )
    );
    // Nothing an event repeats (its id, model, created) is shown.
    assert!(
        !shown
            .iter()
            .any(|l| l.contains("chatcmpl-") || l.contains("created"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_and_text_are_quoted_so_their_spaces_show() {
    let t = chat_trace("moonshotai/Kimi-K2-Thinking", "Tell me a story.").await;
    let events: Vec<_> = (payloads(&t).into_iter()).filter_map(fields).collect();
    let shown: Vec<String> = events.iter().map(|f| line(f)).collect();
    let reasoning = texts(&events, "reasoning_content");
    let content = texts(&events, "content");
    assert!(!reasoning.is_empty() && !content.is_empty(), "{shown:?}");
    // A token that starts with a space shows it inside the quotes.
    assert!(
        shown.iter().any(|l| l.starts_with("content \" ")),
        "{shown:?}"
    );
    assert!(shown.iter().any(|l| l.starts_with("reasoning_content \"")));
    assert!(
        shown.contains(&"finish_reason stop".to_owned()),
        "{shown:?}"
    );
}

#[test]
fn the_formatter_names_other_choices_and_escapes_what_it_quotes() {
    let two = r#"{"id":"x","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b\"\n"},"finish_reason":"length"}]}"#;
    let f = fields(two).expect("an object");
    assert_eq!(
        line(&f),
        r#"choices[0].content "a"  choices[1].content "b\"\n"  choices[1].finish_reason length"#
    );
    let empty = r#"{"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":null}]}"#;
    assert_eq!(line(&fields(empty).expect("an object")), "(nothing new)");
    let error = r#"{"error":{"message":"boom","code":500}}"#;
    assert_eq!(
        line(&fields(error).expect("an object")),
        r#"error {"message":"boom","code":500}"#
    );
    assert_eq!(fields("not json"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_in_chat_mode_is_compact_and_r_shows_the_raw_json() {
    let mut t = chat_trace(
        "moonshotai/Kimi-K2-Instruct",
        "What's the weather like in Paris?",
    )
    .await;
    // What varies from run to run (the port, the timings, the server's headers), fixed.
    t.url = "http://127.0.0.1:8000/v1/chat/completions".into();
    t.first_chunk_us = Some(1_000);
    t.total_us = Some(40_000);
    t.response_headers.clear();
    let mut a = super::ui_snapshots::app(Mode::Chat);
    a.traces.push(t.into());
    a.layers.inspector.open = true;
    super::update(&mut a, AppEvent::Terminal(Event::Resize(110, 32)));
    let end = AppEvent::Terminal(Event::Key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE)));
    super::update(&mut a, end);
    let compact = super::ui_snapshots::screen(&mut a, 110, 32);
    assert!(compact.contains("r JSON"), "{compact}");
    assert!(compact.contains(r#"│content " weather"│"#), "{compact}");
    assert!(
        compact.contains(r#"tool_calls[0].function.arguments " \"P"│"#),
        "{compact}"
    );
    assert!(!compact.contains(r#""delta":"#), "{compact}");
    let key = || {
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Char('r'),
            KeyModifiers::NONE,
        )))
    };
    super::update(&mut a, key());
    let raw = super::ui_snapshots::screen(&mut a, 110, 32);
    assert!(raw.contains(r#""delta":"#), "{raw}");
    assert!(!raw.contains("tool_calls[0].function.arguments"), "{raw}");
    super::update(&mut a, key());
    // Back to compact, as the foot says.
    let back = super::ui_snapshots::screen(&mut a, 110, 32);
    assert!(
        back.contains("chat events compact (r: raw JSON) · line"),
        "{back}"
    );
    // The rows but the foot's are the same.
    let body = |s: &str| {
        (s.lines())
            .filter(|l| !l.contains(" line ") && !l.starts_with("│line "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&back), body(&compact));
    insta::assert_snapshot!(compact);
}
