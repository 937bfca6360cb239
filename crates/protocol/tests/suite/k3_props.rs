//! Property tests of the K3 parser: chunking never changes the events or the result, no
//! structural token ever leaks into content or reasoning, well-formed completions parse to
//! what was written, and no input makes it panic.

use kimi_protocol::k3::K3Parser;
use kimi_protocol::{Event, Marker};
use proptest::prelude::*;
use serde_json::{Map, Value};

const NAMES: [&str; 7] = [
    "think", "response", "tools", "call", "argument", "json", "message",
];

/// Pieces of a hostile completion: every marker, with and without attributes and separators,
/// lone and partial tokens, values, unicode text.
fn piece() -> impl Strategy<Value = String> {
    let mut pieces: Vec<String> = Marker::K3.iter().map(|m| m.text().to_owned()).collect();
    for n in NAMES {
        pieces.push(format!("<|open|>{n}<|sep|>"));
        pieces.push(format!("<|close|>{n}<|sep|>"));
        pieces.push(format!("<|close|>{n}"));
    }
    pieces.extend(
        [
            r#"<|open|>call tool="get_weather" index="1"<|sep|>"#,
            r#"<|open|>call tool="a&amp;b&quot;"<|sep|>"#,
            r#"<|open|>argument key="city" type="string"<|sep|>"#,
            r#"<|open|>argument key="n" type="number"<|sep|>"#,
            r#"<|open|>argument key="o" type="object"<|sep|>"#,
            r#"<|open|>json type="object"<|sep|>"#,
            r#"<|open|>call tool="x<"#,
            "<",
            "<|",
            "<|op",
            "<|open|>thi",
            "<|close|>resp",
            "<|se",
            "<|end_of",
            "|>",
            "<|im_end|>",
            "<think>",
            "1e5",
            "2.50",
            "{\"b\": 2, \"a\": [1, \"x\"]}",
            "NaN",
            " ",
            "\n",
            "Paris",
            "北京",
            "😀",
            "é",
            "\"",
        ]
        .map(String::from),
    );
    prop_oneof![
        6 => proptest::sample::select(pieces),
        1 => "[a-z<|>_ =\"]{0,12}",
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

/// A well-formed completion and what it must parse to: (text, thinking_on, reasoning,
/// content, calls as (name, arguments)).
type Written = (String, bool, String, String, Vec<(String, String)>);

fn plain_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,<>|&\"\n é😀]{0,30}".prop_filter("no token start", |s| !s.contains("<|"))
}

/// A value for one argument: its type attribute, raw text and the JSON it must become.
fn argument() -> impl Strategy<Value = (String, String, Value)> {
    prop_oneof![
        // Raw strings may hold other markers: inside a value they are text.
        (
            plain_text(),
            proptest::sample::select(vec![
                "",
                "<|open|>think<|sep|>",
                "<|close|>call<|sep|>",
                "<|end_of_msg|>"
            ])
        )
            .prop_map(|(a, m)| {
                let raw = format!("{a}{m}");
                ("string".to_owned(), raw.clone(), Value::String(raw))
            }),
        any::<i32>().prop_map(|n| ("number".to_owned(), n.to_string(), Value::from(n))),
        any::<bool>().prop_map(|b| ("boolean".to_owned(), b.to_string(), Value::from(b))),
        Just(("null".to_owned(), "null".to_owned(), Value::Null)),
        proptest::collection::vec(any::<i16>(), 0..4).prop_map(|v| {
            let value = Value::from(v);
            ("array".to_owned(), value.to_string(), value)
        }),
    ]
}

fn a_call() -> impl Strategy<Value = (String, Vec<(String, String, Value)>)> {
    (
        "[a-z_]{1,8}(\\.[a-z]{1,4})?",
        proptest::collection::vec(argument(), 0..4),
    )
}

fn written() -> impl Strategy<Value = Written> {
    (
        any::<bool>(),
        plain_text(),
        plain_text(),
        proptest::collection::vec(a_call(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(thinking_on, reasoning, content, calls, end)| {
            let mut text = String::new();
            if thinking_on {
                text.push_str(&reasoning);
                text.push_str("<|close|>think<|sep|><|open|>response<|sep|>");
            }
            text.push_str(&content);
            text.push_str("<|close|>response<|sep|>");
            let mut want = Vec::new();
            if !calls.is_empty() {
                text.push_str("<|open|>tools<|sep|>");
                for (i, (name, args)) in calls.iter().enumerate() {
                    text.push_str(&format!(
                        "<|open|>call tool=\"{name}\" index=\"{}\"<|sep|>",
                        i + 1
                    ));
                    let mut object = Map::new();
                    for (k, (kind, raw, value)) in args.iter().enumerate() {
                        text.push_str(&format!(
                            "<|open|>argument key=\"k{k}\" type=\"{kind}\"<|sep|>{raw}<|close|>argument<|sep|>"
                        ));
                        object.insert(format!("k{k}"), value.clone());
                    }
                    text.push_str("<|close|>call<|sep|>");
                    want.push((name.clone(), python_json(&Value::Object(object))));
                }
                text.push_str("<|close|>tools<|sep|>");
            }
            text.push_str("<|close|>message<|sep|>");
            if end {
                text.push_str("<|end_of_msg|>");
            }
            let reasoning = if thinking_on { reasoning } else { String::new() };
            (text, thinking_on, reasoning, content, want)
        })
}

/// `json.dumps(value, ensure_ascii=False)` for the values generated here.
fn python_json(value: &Value) -> String {
    kimi_protocol::json::to_string(value, kimi_protocol::json::PYTHON_DEFAULT)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn k3_chunking_never_changes_the_events(
        s in completion(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..24),
        thinking_on in any::<bool>(),
    ) {
        let chunks = chunked(&s, &cuts);
        let whole = K3Parser::events(thinking_on, [s.as_str()]);
        prop_assert_eq!(&K3Parser::events(thinking_on, chunks.iter().map(String::as_str)), &whole);
        let chars: Vec<String> = s.chars().map(String::from).collect();
        prop_assert_eq!(&K3Parser::events(thinking_on, chars.iter().map(String::as_str)), &whole);
        prop_assert_eq!(
            K3Parser::parse(thinking_on, chunks.iter().map(String::as_str)),
            K3Parser::parse(thinking_on, [s.as_str()])
        );
    }

    #[test]
    fn k3_no_structural_token_leaks_into_text(
        s in completion(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..24),
        thinking_on in any::<bool>(),
    ) {
        // Values never reach text events, and every token outside one is a marker, a stray
        // (dropped) or the end: so no text run (runs are split by the marker events of strays)
        // holds a whole token.
        for e in K3Parser::events(thinking_on, chunked(&s, &cuts).iter().map(String::as_str)) {
            let text = match &e {
                Event::Text { text } | Event::Reasoning { text } => text,
                _ => continue,
            };
            for m in Marker::K3 {
                prop_assert!(!text.contains(m.text()), "{:?} leaked into {:?}", m, e);
            }
        }
    }

    #[test]
    fn k3_well_formed_completions_parse_to_what_was_written(
        w in written(),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..16),
    ) {
        let (text, thinking_on, reasoning, content, calls) = w;
        let p = K3Parser::parse(thinking_on, chunked(&text, &cuts).iter().map(String::as_str));
        prop_assert_eq!(&p.reasoning, &reasoning);
        prop_assert_eq!(&p.content, &content);
        let got: Vec<(String, String)> = p
            .tool_calls
            .iter()
            .map(|c| (c.function.name.clone(), c.function.arguments.clone()))
            .collect();
        prop_assert_eq!(got, calls.clone());
        for (i, c) in p.tool_calls.iter().enumerate() {
            prop_assert_eq!(&c.id, &format!("{}_{i}", c.function.name));
        }
        prop_assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        prop_assert_eq!(p.incomplete_calls, 0);
    }

    #[test]
    fn k3_arbitrary_input_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..512),
        cuts in proptest::collection::vec(0.0f64..1.0, 0..16),
        thinking_on in any::<bool>(),
    ) {
        let s = String::from_utf8_lossy(&bytes).into_owned();
        let _ = K3Parser::parse(thinking_on, chunked(&s, &cuts).iter().map(String::as_str));
    }
}
