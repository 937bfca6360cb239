//! The public K3 parser cases (`tests/fixtures/family/parser/k3_*.json`, copied from the
//! shared fixtures) whole and at every chunking: one char per chunk, fixed sizes, random
//! splits, every split into two and many into three (so inside every marker), and the
//! case's own `chunks_to_test`.

use std::fs;
use std::path::Path;

use kimi_protocol::k3::K3Parser;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn cases() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/family/parser");
    let mut out: Vec<(String, Value)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("k3_") && n.ends_with(".json"))
        })
        .map(|p| {
            let case = serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap();
            (p.display().to_string(), case)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// What the expectation compares: every field of `expect`, and the notes.
fn result(case: &Value, chunks: &[&str]) -> Value {
    let thinking_on = case["starts_in"] == "think";
    let p = K3Parser::parse(thinking_on, chunks.iter().copied());
    let calls: Vec<Value> = p
        .tool_calls
        .iter()
        .enumerate()
        .map(|(index, c)| {
            json!({"id": c.id, "name": c.function.name, "arguments": c.function.arguments,
                "index": index})
        })
        .collect();
    let notes: Vec<String> = p.warnings.iter().map(ToString::to_string).collect();
    json!({
        "expect": {
            "reasoning": p.reasoning,
            "content": p.content,
            "tool_calls": calls,
            "incomplete_calls": p.incomplete_calls,
        },
        "notes": notes,
    })
}

fn chunkings(text: &str, seed: u64) -> Vec<(String, Vec<&str>)> {
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    let mut out = vec![
        ("whole".to_owned(), vec![text]),
        (
            "1-char chunks".to_owned(),
            bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect(),
        ),
    ];
    let split_at = |cuts: &[usize]| -> Vec<&str> {
        let mut parts = Vec::new();
        let mut last = 0;
        for &c in cuts.iter().chain([text.len()].iter()) {
            parts.push(&text[last..c]);
            last = c;
        }
        parts
    };
    for size in [2, 3, 4, 5, 7, 8, 13, 16, 64] {
        let cuts: Vec<usize> = bounds
            .iter()
            .copied()
            .filter(|b| *b > 0 && b % size == 0)
            .collect();
        out.push((format!("{size}-byte chunks"), split_at(&cuts)));
    }
    for &a in &bounds {
        out.push((format!("split at {a}"), split_at(&[a])));
        for &b in bounds.iter().filter(|b| **b > a).step_by(11) {
            out.push((format!("split at {a}, {b}"), split_at(&[a, b])));
        }
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    for round in 0..50 {
        let mut cuts: Vec<usize> = (0..rng.usize(1..24))
            .map(|_| bounds[rng.usize(..bounds.len())])
            .collect();
        cuts.sort();
        out.push((format!("random split {round} {cuts:?}"), split_at(&cuts)));
    }
    out
}

#[test]
fn k3_public_cases_whole_and_at_every_chunking() {
    let cases = cases();
    assert_eq!(cases.len(), 6);
    for (i, (path, case)) in cases.iter().enumerate() {
        let text = case["text"].as_str().unwrap();
        let mut want = json!({"expect": case["expect"], "notes": case["notes"]});
        if want["expect"]["incomplete_calls"].is_null() {
            want["expect"]["incomplete_calls"] = json!(0);
        }
        let mut runs = chunkings(text, i as u64);
        for chunks in case["chunks_to_test"].as_array().into_iter().flatten() {
            let chunks: Vec<&str> = chunks
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            runs.push(("chunks_to_test".to_owned(), chunks));
        }
        for (how, chunks) in runs {
            assert_eq!(chunks.concat(), text);
            assert_eq!(result(case, &chunks), want, "{path} {how}");
        }
    }
}
