//! Property tests of the stream parser: chunking never changes the result, marker bytes never
//! leak into text, and no input makes it panic.

use kimi_protocol::event::Coalescer;
use kimi_protocol::parser::{events_of, events_with};
use kimi_protocol::{Event, Marker, Parser, parse_chunks, parse_chunks_with};
use proptest::prelude::*;

/// Pieces a completion is built from: every marker, partial markers, ids, JSON, unicode text.
fn piece() -> impl Strategy<Value = String> {
    let mut pieces: Vec<String> = Marker::ALL.iter().map(|m| m.text().to_owned()).collect();
    pieces.extend(
        [
            "<",
            "<|",
            "<|tool_ca",
            "<|im_",
            "|>",
            "<|tool_call_begin",
            "<|im_end",
            "<think",
            "</thi",
            "<t",
            "</",
            "<b>",
            "a<|b",
            "functions.get_weather:0",
            " functions.ns.tool:1 ",
            "\nfunctions.my-tool: 2\n",
            "{\"city\": \"Beijing\"}",
            "{\n  \"q\": [1, 2.5e-7, null]\n}",
            "\"{\\\"x\\\": 1}\"",
            " ",
            "\n",
            "北京",
            "😀",
            "é",
            "Hello, world. ",
            "\u{202e}",
            "\u{1b}[31m",
        ]
        .map(String::from),
    );
    prop_oneof![
        4 => proptest::sample::select(pieces),
        1 => "[a-z<|>_ ]{0,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

fn completion() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..40).prop_map(|v| v.concat())
}

/// Split `s` at the given fractions of its length, moved to char boundaries.
fn chunked(s: &str, cuts: &[f64]) -> Vec<String> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|f| {
            let mut i = (f * s.len() as f64) as usize;
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        })
        .collect();
    points.sort();
    let mut out = Vec::new();
    let mut last = 0;
    for p in points.into_iter().chain([s.len()]) {
        out.push(s[last..p].to_owned());
        last = p;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunking_never_changes_the_events(
        s in completion(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..24),
    ) {
        let chunks = chunked(&s, &cuts);
        let whole = events_of([s.as_str()]);
        let split = events_of(chunks.iter().map(String::as_str));
        prop_assert_eq!(&split, &whole);
        prop_assert_eq!(parse_chunks(chunks.iter().map(String::as_str)), parse_chunks([s.as_str()]));
    }

    #[test]
    fn chunking_never_changes_the_events_starting_in_reasoning(
        s in completion(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..24),
    ) {
        let chunks = chunked(&s, &cuts);
        let start = Parser::starting_in_reasoning;
        let whole = events_with(start(), [s.as_str()]);
        prop_assert_eq!(events_with(start(), chunks.iter().map(String::as_str)), whole);
        let chars: Vec<String> = s.chars().map(String::from).collect();
        prop_assert_eq!(
            parse_chunks_with(start(), chars.iter().map(String::as_str)),
            parse_chunks_with(start(), [s.as_str()])
        );
    }

    #[test]
    fn one_byte_at_a_time_matches_whole(s in completion()) {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        prop_assert_eq!(events_of(chars.iter().map(String::as_str)), events_of([s.as_str()]));
    }

    #[test]
    fn marker_text_never_leaks_into_content(
        s in completion(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..24),
    ) {
        // A recognised marker never comes out as text: no text run between two events that
        // are not text (markers included) contains one. (Text on both sides of a dropped stray
        // marker may spell a marker when glued together; those bytes were never a marker.)
        // `<think>` away from byte 0 and `</think>` outside the reasoning are text by rule,
        // so content may hold both and reasoning may hold `<think>`.
        for in_reasoning in [false, true] {
            let mut parser = Parser::with_reasoning(in_reasoning);
            let mut joined = Coalescer::default();
            let mut sink = |e: Event<'_>| joined.push(e);
            for c in chunked(&s, &cuts) {
                parser.feed(&c, &mut sink);
            }
            parser.finish(&mut sink);
            for e in joined.into_events() {
                let (text, allowed): (_, &[Marker]) = match &e {
                    Event::Text { text } => (text, &[Marker::ThinkBegin, Marker::ThinkEnd]),
                    Event::Reasoning { text } => (text, &[Marker::ThinkBegin]),
                    _ => continue,
                };
                for m in Marker::ALL.into_iter().filter(|m| !allowed.contains(m)) {
                    prop_assert!(!text.contains(m.text()), "{:?} leaked into {:?}", m, e);
                }
            }
        }
    }

    #[test]
    fn text_without_markers_is_content_verbatim(s in "[^<]{0,200}", cuts in proptest::collection::vec(0.0f64..1.0, 0..8)) {
        let chunks = chunked(&s, &cuts);
        let parsed = parse_chunks(chunks.iter().map(String::as_str));
        prop_assert_eq!(parsed.content, s);
        prop_assert!(parsed.tool_calls.is_empty());
    }

    #[test]
    fn arbitrary_input_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..512),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..16),
    ) {
        let s = String::from_utf8_lossy(&bytes).into_owned();
        let _ = parse_chunks(chunked(&s, &cuts).iter().map(String::as_str));
    }
}
