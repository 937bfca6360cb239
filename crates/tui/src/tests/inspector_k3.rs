//! The inspector on a Kimi K3 request: K3's marker names with K3's ids (never K2's for the
//! shared ids 163586-163589), each XTML element named once, what each chunk produced in K3's
//! words, and the token view flagging a marker spelled from ordinary tokens.

use super::update;
use crate::app::event::AppEvent;
use crate::app::state::{App, Connection};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::tools::Toolbox;
use kimi_protocol::k3::parser::K3Parser;
use kimi_protocol::{
    Event as ParserEvent, MarkerHit, Mode, RequestSent, StreamEvent as E, Template, TokenLogprob,
    Trace,
};
use serde_json::json;

use super::ui_snapshots::{screen, styled_screen};

const PROMPT: &str = "<|open|>message role=\"user\"<|sep|>Weather in Paris?<|close|>message<|sep|><|end_of_msg|><|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>";

/// The completion as a server streams it, a token or a few a chunk.
const CHUNKS: [&str; 12] = [
    "Paris, so",
    " get_weather.",
    "<|close|>",
    "think<|sep|>",
    "<|open|>response<|sep|>Checking",
    ".<|close|>response<|sep|>",
    "<|open|>tools<|sep|><|open|>",
    "call tool=\"get_weather\" index=\"1\"<|sep|>",
    "<|open|>argument key=\"city\" type=\"string\"<|sep|>Paris",
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|><|close|>tools<|sep|>",
    "<|close|>message<|sep|>",
];

fn app(template: Template) -> App {
    let connection = Connection {
        profile: "k3".into(),
        mode: Mode::Raw,
        model: "moonshotai/Kimi-K3".into(),
        host: "127.0.0.1:8000".into(),
    };
    let mut a = App::new(connection, Toolbox::new(Vec::new()).expect("tools"), None);
    a.template = template;
    a
}

/// What the client's stream hands the trace for a parser event (as `markers.rs` does).
fn stream_event(ev: ParserEvent<'_>) -> Option<E> {
    Some(match ev {
        ParserEvent::Text { text } => E::Text(text.into_owned()),
        ParserEvent::Reasoning { text } => E::Reasoning(text.into_owned()),
        ParserEvent::Marker { marker, offset } => E::Marker(MarkerHit {
            marker,
            offset,
            call: None,
        }),
        ParserEvent::ToolCallBegin { index, id, name } => E::ToolCallBegin {
            index,
            id: id.into_owned(),
            name: name.into_owned(),
        },
        ParserEvent::ToolCallArgs { index, delta } => E::ToolCallArgs {
            index,
            delta: delta.into_owned(),
        },
        ParserEvent::ToolCallEnd { index } => E::ToolCallEnd { index },
        ParserEvent::ToolCallIncomplete { index } => E::ToolCallIncomplete { index },
        ParserEvent::Warning { warning } => E::Warning(warning.to_string()),
        _ => return None,
    })
}

/// A raw K3 request recorded from its events, the completion parsed by the K3 parser chunk
/// by chunk, as the engine records one. `model` is the model the request named.
pub(super) fn k3_raw_trace(model: &str) -> Trace {
    let mut t = Trace::default();
    t.record(&E::Request(Box::new(RequestSent {
        mode: Mode::Raw,
        url: "http://127.0.0.1:8000/v1/completions".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: json!({"model": model, "prompt": PROMPT,
            "stop": ["<|end_of_msg|>", "[EOS]"]}),
        prompt: Some(PROMPT.into()),
        prompt_text_markers: Vec::new(),
        source: None,
        prefix: None,
        started_unix_ms: 1,
        reasoning_resent: None,
    })));
    t.record(&E::Response { status: 200 });
    let mut parser = K3Parser::new(true);
    for (k, chunk) in CHUNKS.iter().enumerate() {
        t.record(&E::Chunk {
            data: (*chunk).into(),
            at_us: 2_000 + 5_000 * k as u64,
        });
        let mut events = Vec::new();
        parser.feed(chunk, &mut |ev| events.extend(stream_event(ev)));
        for e in events {
            t.record(&e);
        }
    }
    let mut events = Vec::new();
    parser.finish(&mut |ev| events.extend(stream_event(ev)));
    for e in events {
        t.record(&e);
    }
    t.record(&E::Finished {
        total_us: 70_000,
        error: None,
    });
    t
}

#[test]
fn a_k3_raw_request_shows_k3_badges_elements_and_what_each_chunk_made() {
    let mut a = app(Template::K3);
    a.traces.push(k3_raw_trace("moonshotai/Kimi-K3").into());
    a.layers.inspector.open = true;
    let plain = screen(&mut a, 150, 52);
    for want in [
        // The prompt: K3's names with K3's ids, elements named.
        "<|open|> 163587 message role=\"user\"<|sep|> 163589 ⟨message role=\"user\"⟩",
        "<|end_of_msg|> 163586",
        "<|open|> 163587 response<|sep|> 163589 ⟨response⟩Checking│ → ⟨response⟩ content 8B",
        // A marker over two chunks: named where its `<|sep|>` ends, when the parser knows it.
        "#2    │<|close|> 163588 │ ",
        "#3    │think<|sep|> 163589 ⟨/think⟩│ → ⟨/think⟩",
        "│.<|close|> 163588 response<|sep|> 163589 ⟨/response⟩│ → content 1B ⟨/response⟩",
        "⟨call tool=\"get_weather\" index=\"1\"⟩",
        "⟨argument key=\"city\" type=\"string\"⟩",
        "get_weather (get_weather_0) args 0 +17B call 0 end ⟨/tools⟩",
        "→ reasoning",
    ] {
        assert!(plain.contains(want), "{want}\n{plain}");
    }
    // The parser holds a lone `<|close|>` back: chunk 2 produced nothing yet.
    let two = plain
        .lines()
        .find(|l| l.contains("#2    │"))
        .unwrap_or_default();
    assert!(!two.contains('→'), "{two}");
    for k2 in ["im_user", "im_end", "im_assistant", "alias"] {
        assert!(!plain.contains(k2), "{k2}\n{plain}");
    }
    insta::assert_snapshot!(styled_screen(&mut a, 150, 52));
}

#[test]
fn the_family_comes_from_the_model_the_prompt_or_the_profile() {
    // A model name that says nothing, with a K2 profile: the prompt's generation prompt says
    // K3.
    let mut a = app(Template::K2Instruct);
    a.traces.push(k3_raw_trace("local-model").into());
    a.layers.inspector.open = true;
    let plain = screen(&mut a, 150, 52);
    assert!(plain.contains("<|end_of_msg|> 163586"), "{plain}");
    // A K2 trace stays as it was: K2 names with K2 ids, K3 strings plain text.
    let mut k2 = Trace::default();
    k2.record(&E::Request(Box::new(RequestSent {
        mode: Mode::Raw,
        url: "http://h/v1/completions".into(),
        headers: Vec::new(),
        body: json!({"model": "moonshotai/Kimi-K2-Instruct"}),
        prompt: Some(
            "<|im_user|>user<|im_middle|>say <|open|><|im_end|><|im_assistant|>assistant<|im_middle|>"
                .into(),
        ),
        prompt_text_markers: Vec::new(),
        source: None,
        prefix: None,
        started_unix_ms: 2,
        reasoning_resent: None,
    })));
    let mut b = app(Template::K2Instruct);
    b.traces.push(k2.into());
    b.layers.inspector.open = true;
    let plain = screen(&mut b, 150, 30);
    assert!(
        plain.contains("<|im_user|> 163587 user<|im_middle|> 163601 say <|open|><|im_end|> 163586"),
        "{plain}"
    );
    assert!(
        !plain.contains("⟨/") && !plain.contains("⟨think"),
        "{plain}"
    );
}

fn tok(id: u32, text: &str, lp: f32) -> TokenLogprob {
    TokenLogprob {
        id: Some(id),
        text: text.into(),
        logprob: Some(lp),
        top: Vec::new(),
    }
}

#[test]
fn the_k3_token_view_flags_a_marker_spelled_from_ordinary_tokens() {
    let mut t = k3_raw_trace("moonshotai/Kimi-K3");
    // `<|close|>think<|sep|>` with `<|sep|>` spelled from three ordinary tokens, then a K2
    // marker's text, which is ordinary text in K3.
    t.tokens
        .push(0, &[tok(12345, "Paris", -0.1), tok(3, ",", -2.0)]);
    t.tokens.push(2, &[tok(163588, "<|close|>", -0.001)]);
    t.tokens.push(
        3,
        &[
            tok(39964, "think", -0.01),
            tok(1000, "<|", -0.3),
            tok(1001, "sep", -0.3),
            tok(1002, "|>", -0.3),
        ],
    );
    t.tokens.push(4, &[tok(4000, "<|im_end|>", -0.5)]);
    let mut a = app(Template::K3);
    a.traces.push(t.into());
    a.layers.inspector.open = true;
    update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Char('t'),
            KeyModifiers::NONE,
        ))),
    );
    // Select `<|close|>`: its id is named as K3 names it.
    for _ in 0..2 {
        update(
            &mut a,
            AppEvent::Terminal(Event::Key(KeyEvent::new(
                KeyCode::Right,
                KeyModifiers::NONE,
            ))),
        );
    }
    let plain = screen(&mut a, 100, 24);
    for want in [
        "<|close|> 163588 │",
        "<|│sep│|> ⚠ split │",
        "<|im_end|>│",
        "token #2 · id 163588 <|close|>",
        "1 marker(s) arrived as several ordinary tokens",
    ] {
        assert!(plain.contains(want), "{want}\n{plain}");
    }
    assert!(!plain.contains("im_assistant"), "{plain}");
    insta::assert_snapshot!(plain);
}
