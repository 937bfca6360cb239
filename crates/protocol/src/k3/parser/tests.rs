//! Every parsing rule and every failure shape seen in the field, each checked whole and at
//! every split (one char per chunk, every two-chunk split).

use super::*;
use pretty_assertions::assert_eq;

/// The events of `s`, the same at every chunking (checked here).
fn events(thinking_on: bool, s: &str) -> Vec<Event<'static>> {
    let whole = K3Parser::events(thinking_on, [s]);
    let bounds: Vec<usize> = (0..=s.len()).filter(|i| s.is_char_boundary(*i)).collect();
    let chars: Vec<&str> = bounds.windows(2).map(|w| &s[w[0]..w[1]]).collect();
    assert_eq!(K3Parser::events(thinking_on, chars), whole, "1-char chunks");
    for &cut in &bounds {
        assert_eq!(
            K3Parser::events(thinking_on, [&s[..cut], &s[cut..]]),
            whole,
            "split at byte {cut}"
        );
    }
    whole
}

/// The events without markers.
fn semantic(thinking_on: bool, s: &str) -> Vec<Event<'static>> {
    events(thinking_on, s)
        .into_iter()
        .filter(|e| !matches!(e, Event::Marker { .. }))
        .collect()
}

/// The collected result, checked chunk-invariant through [`events`].
struct Parsed {
    reasoning: String,
    content: String,
    calls: Vec<(String, String, String)>,
    incomplete: usize,
    notes: Vec<String>,
}

fn parse(thinking_on: bool, s: &str) -> Parsed {
    let evs = events(thinking_on, s);
    let mut c = Collector::default();
    evs.iter().for_each(|e| c.push(e));
    let p = c.finish();
    Parsed {
        reasoning: p.reasoning,
        content: p.content,
        calls: p
            .tool_calls
            .into_iter()
            .map(|c| (c.id, c.function.name, c.function.arguments))
            .collect(),
        incomplete: p.incomplete_calls,
        notes: p.warnings.iter().map(ToString::to_string).collect(),
    }
}

fn text(s: &str) -> Event<'static> {
    Event::Text {
        text: Cow::Owned(s.into()),
    }
}

fn reasoning(s: &str) -> Event<'static> {
    Event::Reasoning {
        text: Cow::Owned(s.into()),
    }
}

const CALL: &str = r#"<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|>"#;

fn call(id: &str, args: &str) -> (String, String, String) {
    let name = id.rsplit_once('_').map_or(id, |(n, _)| n);
    (id.into(), name.into(), args.into())
}

fn has(notes: &[String], needle: &str) -> bool {
    notes.iter().any(|n| n.contains(needle))
}

#[test]
fn trained_shape() {
    let s = "Hmm.<|close|>think<|sep|><|open|>response<|sep|>Hi!<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>";
    assert_eq!(
        semantic(true, s),
        vec![reasoning("Hmm."), text("Hi!"), Event::TurnEnd]
    );
    let p = parse(true, s);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn markers_are_matched_exactly_and_offsets_are_stream_positions() {
    let s = "a<|im_end|><think><|kimi_image_placeholder|>b<|close|>think<|sep|>c";
    let evs = events(true, s);
    assert_eq!(
        evs,
        vec![
            reasoning("a<|im_end|><think><|kimi_image_placeholder|>b"),
            Event::Marker {
                marker: Marker::Close,
                offset: 45
            },
            Event::Marker {
                marker: Marker::Sep,
                offset: 59
            },
            text("c"),
        ]
    );
    // A token that begins no marker is stray: dropped, the text around it kept.
    let p = parse(false, "x<|open|>thinking<|sep|>y<|sep|>z");
    assert_eq!(p.content, "xthinkingyz");
    assert!(has(&p.notes, "stray marker dropped: <|open|> at byte 1"));
    assert_eq!(p.notes.len(), 1, "once per kind: {:?}", p.notes);
    // Attributes hold no `<|`.
    let p = parse(false, r#"x<|open|>call tool="a<|b"<|sep|>y"#);
    assert_eq!(p.content, r#"xcall tool="a<|b"y"#);
}

#[test]
fn close_without_separator() {
    for next in [
        "<|open|>response<|sep|>",
        "<|close|>message<|sep|>",
        "<|end_of_msg|>",
        "",
    ] {
        let s = format!("r<|close|>think{next}");
        let p = parse(true, &s);
        assert_eq!(p.reasoning, "r", "{s}");
        assert!(has(&p.notes, "<|close|>think read as closing think"), "{s}");
    }
    // Followed by anything else it is no marker.
    let p = parse(true, "r<|close|>think about it");
    assert_eq!(p.reasoning, "rthink about it");
    assert!(has(&p.notes, "stray"));
    // The field shape: think close without `<|sep|>`, then the response.
    let p = parse(
        true,
        "reasoning<|close|>think<|open|>response<|sep|>answer<|close|>response<|sep|><|close|>message<|sep|>",
    );
    assert_eq!(
        (p.reasoning.as_str(), p.content.as_str()),
        ("reasoning", "answer")
    );
}

#[test]
fn think_state() {
    // A leading think open is consumed; later it is stray.
    let p = parse(
        true,
        "<|open|>think<|sep|>r<|open|>think<|sep|>s<|close|>think<|sep|>a",
    );
    assert_eq!((p.reasoning.as_str(), p.content.as_str()), ("rs", "a"));
    assert_eq!(p.notes.len(), 1);
    assert!(has(
        &p.notes,
        "stray marker dropped: <|open|>think<|sep|> at byte 21"
    ));
    // Response open ends the reasoning implicitly.
    let p = parse(
        true,
        "r<|open|>response<|sep|>answer<|close|>response<|sep|>",
    );
    assert_eq!((p.reasoning.as_str(), p.content.as_str()), ("r", "answer"));
    assert_eq!(p.notes, vec!["think channel not closed: response opened"]);
    // Markers not listed for the state are stray.
    let p = parse(
        true,
        "a<|close|>tools<|sep|>b<|open|>call tool=\"f\"<|sep|>c",
    );
    assert_eq!(p.reasoning, "abc");
    assert!(p.calls.is_empty());
}

#[test]
fn after_think_response_and_tools() {
    // Text between the think close and the response is content, not noted.
    let p = parse(
        true,
        "r<|close|>think<|sep|>\n<|open|>response<|sep|>a<|close|>response<|sep|>",
    );
    assert_eq!(p.content, "\na");
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    // After the response: content, noted; another response channel is content too.
    let p = parse(
        false,
        "a<|close|>response<|sep|>b<|open|>response<|sep|>c<|close|>response<|sep|><|close|>message<|sep|>",
    );
    assert_eq!(p.content, "abc");
    assert_eq!(p.notes, vec!["text outside a channel kept as content"]);
    // Tools opened in the response: the response close was skipped.
    let s = format!("a<|open|>tools<|sep|>{CALL}<|close|>tools<|sep|>after");
    let p = parse(false, &s);
    assert_eq!(p.content, "aafter");
    assert_eq!(p.calls, vec![call("get_weather_0", r#"{"city": "Paris"}"#)]);
    assert!(has(&p.notes, "response channel not closed: tools opened"));
    assert!(has(&p.notes, "text outside a channel"));
    // The plain answer without its response close.
    let p = parse(false, "Hi<|close|>message<|sep|>");
    assert_eq!(p.content, "Hi");
    assert_eq!(p.notes, vec!["response channel not closed: message closed"]);
}

#[test]
fn tools_and_call_states() {
    // Text in the tools channel and in a call is ignored; stray markers there are dropped.
    let s = format!(
        "<|open|>tools<|sep|>junk\n{}<|close|>think<|sep|><|close|>tools<|sep|><|close|>message<|sep|>",
        CALL.replace("<|open|>argument", "noise<|open|>argument")
    );
    let p = parse(false, &s);
    assert_eq!(p.content, "");
    assert_eq!(p.calls, vec![call("get_weather_0", r#"{"city": "Paris"}"#)]);
    assert!(has(&p.notes, "stray marker dropped: <|close|>think<|sep|>"));
    // A call opened inside a call leaves the first incomplete; the second completes.
    let s = format!(
        r#"<|open|>tools<|sep|><|open|>call tool="a"<|sep|><|open|>argument key="x"<|sep|>1<|close|>argument<|sep|>{CALL}<|close|>tools<|sep|>"#
    );
    let p = parse(false, &s);
    assert_eq!(p.calls, vec![call("get_weather_0", r#"{"city": "Paris"}"#)]);
    assert_eq!(p.incomplete, 1);
    // Tools close and message close in a call leave it incomplete.
    for end in ["<|close|>tools<|sep|>", "<|close|>message<|sep|>"] {
        let s = format!(r#"<|open|>tools<|sep|><|open|>call tool="a"<|sep|>{end}"#);
        let p = parse(false, &s);
        assert_eq!((p.calls.len(), p.incomplete), (0, 1), "{end}");
    }
    // Tools close skipped before the message close.
    let s = format!("<|open|>tools<|sep|>{CALL}<|close|>message<|sep|><|end_of_msg|>");
    let p = parse(true, &s);
    assert_eq!(p.calls.len(), 1);
    assert!(has(&p.notes, "think channel not closed: tools opened"));
    assert!(has(&p.notes, "tools channel not closed: message closed"));
}

#[test]
fn closed_and_end_of_msg() {
    let s = "a<|close|>response<|sep|><|close|>message<|sep|>junk<|open|>response<|sep|>x<|end_of_msg|>more<|close|>message<|sep|>";
    let evs = semantic(false, s);
    assert_eq!(evs.last(), Some(&Event::TurnEnd));
    let p = parse(false, s);
    assert_eq!(p.content, "a");
    assert_eq!(p.notes, vec!["output after the message close ignored"]);
    // The end token ends the turn in any state, cutting an open call.
    let p = parse(true, r#"r<|end_of_msg|>later"#);
    assert_eq!((p.reasoning.as_str(), p.content.as_str()), ("r", ""));
    let p = parse(
        false,
        r#"<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|end_of_msg|>"#,
    );
    assert_eq!(p.incomplete, 1);
    // After it nothing is parsed, markers included.
    let evs = events(false, "a<|end_of_msg|><|open|>tools<|sep|>");
    assert_eq!(evs.len(), 3, "{evs:?}");
}

#[test]
fn text_is_exact_and_a_stream_ending_in_think_is_reasoning() {
    let p = parse(true, "  spaced \n\t");
    assert_eq!(
        (p.reasoning.as_str(), p.content.as_str()),
        ("  spaced \n\t", "")
    );
    assert!(p.notes.is_empty());
    let p = parse(false, " answer ");
    assert_eq!(p.content, " answer ");
}

#[test]
fn values_are_raw_up_to_their_closer() {
    let raw = "a<|close|>call<|sep|><|end_of_msg|><|open|>think<|sep|><|close|>json<|sep|>b";
    let s = format!(
        r#"<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>argument key="v"<|sep|>{raw}<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"#
    );
    let p = parse(false, &s);
    let want = format!("{{\"v\": {}}}", serde_json::to_string(raw).unwrap());
    assert_eq!(p.calls, vec![call("f_0", &want)]);
    assert_eq!(p.notes, vec!["response channel not closed: tools opened"]);
    // No marker events inside a value.
    let n = events(false, &s)
        .iter()
        .filter(|e| matches!(e, Event::Marker { .. }))
        .count();
    assert_eq!(n, 2 * 6);
    // Json values end only at their own closer.
    let s = r#"<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>json type="object"<|sep|>{"a": "<|close|>argument<|sep|>"}<|close|>json<|sep|><|close|>call<|sep|>"#;
    assert_eq!(
        parse(false, s).calls,
        vec![call("f_0", r#"{"a": "<|close|>argument<|sep|>"}"#)]
    );
}

#[test]
fn whole_answer_in_the_think_channel() {
    for (close, state_after) in [
        (
            "<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>",
            "closed",
        ),
        ("<|close|>message<|sep|>", "closed"),
        ("<|close|>response<|sep|>tail", "after-response"),
    ] {
        let s = format!("The answer.{close}");
        let evs = semantic(true, &s);
        assert!(evs.contains(&Event::ReasoningWasText), "{s}");
        let p = parse(true, &s);
        assert_eq!(p.reasoning, "", "{s}");
        let want = if state_after == "closed" {
            "The answer."
        } else {
            "The answer.tail"
        };
        assert_eq!(p.content, want, "{s}");
        assert!(has(
            &p.notes,
            "think channel skipped: its text was the answer"
        ));
    }
    // Prose, an orphan response close, then tools: the prose is content.
    let s = format!(
        "reasoning and prose<|close|>response<|sep|><|open|>tools<|sep|>{CALL}<|close|>tools<|sep|><|close|>message<|sep|>"
    );
    let p = parse(true, &s);
    assert_eq!(
        (p.reasoning.as_str(), p.content.as_str()),
        ("", "reasoning and prose")
    );
    assert_eq!(p.calls.len(), 1);
}

#[test]
fn thinking_off_yet_thinking() {
    let s = "I think.<|close|>think<|sep|><|open|>response<|sep|>Answer.<|close|>response<|sep|>";
    assert!(semantic(false, s).contains(&Event::TextWasReasoning));
    let p = parse(false, s);
    assert_eq!(
        (p.reasoning.as_str(), p.content.as_str()),
        ("I think.", "Answer.")
    );
    assert!(has(&p.notes, "thinking off, yet the model thought"));
    // Only before any other marker; later it is stray.
    let p = parse(false, "a<|sep|>b<|close|>think<|sep|>c");
    assert_eq!((p.reasoning.as_str(), p.content.as_str()), ("", "abc"));
    // With thinking on the same close is just the think close.
    let p = parse(true, s);
    assert!(!has(&p.notes, "thinking off"));
}

#[test]
fn end_of_the_stream() {
    // Part of a token's text is text.
    for tail in ["<", "<|", "<|clo", "<|end_of_ms", "<|sep|"] {
        let p = parse(false, &format!("x{tail}"));
        assert_eq!(p.content, format!("x{tail}"));
    }
    // A cut marker is dropped.
    for tail in [
        "<|open|>",
        "<|open|>response",
        "<|close|>",
        "<|close|>respo",
        "<|open|>call tool=\"f\"",
    ] {
        let p = parse(false, &format!("answer{tail}"));
        assert_eq!(p.content, "answer", "{tail}");
    }
    // `<|close|>NAME` closes NAME.
    let p = parse(true, "answer<|close|>response");
    assert_eq!((p.reasoning.as_str(), p.content.as_str()), ("", "answer"));
    let p = parse(true, "r<|close|>think");
    assert_eq!(p.reasoning, "r");
    assert!(has(&p.notes, "read as closing think"));
}

#[test]
fn stray_markers_are_dropped_and_noted_once() {
    let s = "r<|close|>think<|sep|><|open|>think<|sep|>a<|open|>response<|sep|>b<|close|>argument<|sep|>c";
    let p = parse(true, s);
    assert_eq!(p.content, "abc");
    assert_eq!(
        p.notes,
        vec!["stray marker dropped: <|open|>think<|sep|> at byte 22"]
    );
    // Tool markup as text in the response (no tools channel): dropped, the text kept.
    let p = parse(false, &format!("Sure.{CALL}"));
    assert_eq!(p.content, "Sure.Paris");
    assert!(p.calls.is_empty());
}

#[test]
fn calls_numbered_by_completion_names_and_arguments() {
    let s = r#"<|open|>tools<|sep|><|open|>call tool="a&amp;b" index="7"<|sep|><|open|>argument key="q&quot;" type="number"<|sep|>1e5<|close|>argument<|sep|><|close|>call<|sep|><|open|>call index="2"<|sep|><|close|>call<|sep|><|open|>call tool="c"<|sep|><|open|>argument key="n" type="number"<|sep|>NaN<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"#;
    let evs = semantic(false, s);
    assert!(evs.contains(&Event::ToolCallArgs {
        index: 0,
        delta: r#"{"q\"": 100000.0}"#.into()
    }));
    let p = parse(false, s);
    assert_eq!(
        p.calls,
        vec![
            ("a&b_0".into(), "a&b".into(), r#"{"q\"": 100000.0}"#.into()),
            call("c_1", r#"{"n": "NaN"}"#),
        ]
    );
    assert!(has(&p.notes, "tool call without a name dropped"));
    assert!(has(
        &p.notes,
        r#"argument "n" of type "number" is not JSON"#
    ));
    assert_eq!(
        p.incomplete, 0,
        "a nameless call is dropped, not incomplete"
    );
}

#[test]
fn json_element_that_is_not_an_object_is_the_raw_arguments() {
    let s = r#"<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>json type="object"<|sep|>{"a": 1,<|close|>json<|sep|><|close|>call<|sep|>"#;
    let evs = events(false, s);
    let mut c = Collector::default();
    evs.iter().for_each(|e| c.push(e));
    let parsed = c.finish();
    assert_eq!(parsed.tool_calls[0].function.arguments, r#"{"a": 1,"#);
    let notes: Vec<String> = parsed.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        has(&notes, "json arguments are not a JSON object"),
        "{notes:?}"
    );
    assert!(
        has(&notes, "not valid JSON"),
        "the collector flags it too: {notes:?}"
    );
}

#[test]
fn incomplete_calls_are_counted_never_run() {
    let s = format!(
        r#"<|open|>tools<|sep|>{CALL}<|open|>call tool="b"<|sep|><|open|>argument key="x"<|sep|>part"#
    );
    let evs = semantic(false, &s);
    assert!(evs.contains(&Event::ToolCallIncomplete { index: 1 }));
    let p = parse(false, &s);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.incomplete, 1);
    assert!(has(&p.notes, "tool call incomplete"));
    let mut c = Collector::default();
    evs.iter().for_each(|e| c.push(e));
    assert_eq!(c.finish().finish_reason, crate::FinishReason::Length);
    // A value cut inside its closer.
    let p = parse(
        false,
        r#"<|open|>tools<|sep|><|open|>call tool="b"<|sep|><|open|>argument key="x"<|sep|>v<|close|>argu"#,
    );
    assert_eq!((p.calls.len(), p.incomplete), (0, 1));
}

#[test]
fn each_kind_is_noted_once() {
    let s =
        "a<|sep|>b<|sep|>c<|close|>think<|sep|><|close|>response<|sep|>x<|close|>response<|sep|>y";
    let p = parse(false, s);
    assert_eq!(
        p.notes,
        vec![
            "stray marker dropped: <|sep|> at byte 1",
            "text outside a channel kept as content",
        ]
    );
}

#[test]
fn attribute_text_is_held_back_and_never_rescanned() {
    // 200 KB of attribute-like text without `<|` after an open marker: capped, so it is text.
    let big = "x".repeat(200_000);
    let s = format!("a<|open|>call {big}");
    let mut p = K3Parser::new(false);
    let mut n = 0usize;
    for chunk in s.as_bytes().chunks(7) {
        p.feed(std::str::from_utf8(chunk).unwrap(), &mut |e| {
            if let Event::Text { text } = e {
                n += text.len();
            }
        });
    }
    assert!(n > 150_000, "released once past the cap ({n})");
    assert!(p.tail.is_empty());
}

#[test]
fn partial_marker_is_held_not_retracted() {
    let mut p = K3Parser::new(false);
    let mut got = Vec::new();
    p.feed("abc<|clo", &mut |e| got.push(e.into_owned()));
    assert_eq!(got, vec![text("abc")]);
    got.clear();
    p.feed("ud", &mut |e| got.push(e.into_owned()));
    assert_eq!(got, vec![text("<|cloud")]);
}
