//! The Kimi K2 family's public golden vectors (`tests/fixtures/family/`, copied from the
//! shared fixtures): templates byte for byte, live prompts (template + tokenizer
//! preprocessing), the K2.5 TypeScript declarations, and the reasoning parser cases whole and
//! at every chunking. Also the K2-Instruct template vectors through the same request reader.

use std::fs;
use std::path::{Path, PathBuf};

use kimi_protocol::request::RenderRequest;
use kimi_protocol::{Parser, Template, parse_chunks_with, tools_ts};
use pretty_assertions::assert_eq;
use serde_json::Value;

fn dir(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

fn files(rel: &str, ext: &str) -> Vec<PathBuf> {
    let d = dir(rel);
    let mut files: Vec<PathBuf> = fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", d.display());
    files
}

/// Render every request in `rel` and compare bytes; returns how many passed.
fn render_dir(rel: &str, template_only: bool, fallback: Template) -> usize {
    let mut n = 0;
    for path in files(rel, "json") {
        let req: RenderRequest = serde_json::from_str(&fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let template = req.template.unwrap_or(fallback);
        let got = req.render(req.options(template, !template_only));
        let want = fs::read(path.with_extension("txt")).unwrap();
        assert_eq!(String::from_utf8_lossy(&want), got, "{}", path.display());
        assert_eq!(want, got.into_bytes(), "{} (bytes)", path.display());
        n += 1;
    }
    n
}

#[test]
fn template_vectors_render_byte_for_byte() {
    assert_eq!(
        render_dir("family/k2-thinking", true, Template::K2Thinking),
        6
    );
    assert_eq!(render_dir("family/k2.5", true, Template::K25), 6);
    // K2-Instruct's own vectors: preprocessing never touches them.
    assert_eq!(render_dir("template", true, Template::K2Instruct), 8);
    assert_eq!(render_dir("template", false, Template::K2Instruct), 8);
}

#[test]
fn live_vectors_are_template_plus_preprocessing() {
    assert_eq!(
        render_dir("family/live/k2-thinking", false, Template::K2Thinking),
        1
    );
    assert_eq!(render_dir("family/live/k2.5", false, Template::K25), 2);
}

#[test]
fn typescript_declarations_match_the_official_encoder() {
    let mut n = 0;
    for path in files("family/tools_ts/schemas", "json") {
        let tools: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let want = fs::read_to_string(
            dir("family/tools_ts/expected").join(path.with_extension("txt").file_name().unwrap()),
        )
        .unwrap();
        // The tokenizer sorts the keys first; the goldens do not change with it.
        let sorted = kimi_protocol::json::sorted_keys(&tools);
        for input in [&tools, &sorted] {
            let got = tools_ts::encode(input.as_array().unwrap())
                .unwrap_or_else(|_| panic!("{} failed to encode", path.display()));
            assert_eq!(got, want, "{}", path.display());
        }
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn family_parser_cases_whole_and_at_every_chunking() {
    let mut n = 0;
    for path in files("family/parser", "json") {
        let case: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        // K3 cases are another format (`k3_parser.rs`).
        if case["template"] == "Kimi-K3" {
            continue;
        }
        let text = case["text"].as_str().unwrap();
        let in_reasoning = case["starts_in_reasoning"].as_bool().unwrap();
        let expect = &case["expect"];
        let check = |chunks: Vec<&str>, how: &str| {
            let parsed = parse_chunks_with(Parser::with_reasoning(in_reasoning), chunks);
            let what = format!("{} {how}", path.display());
            assert_eq!(
                parsed.content,
                expect["content"].as_str().unwrap(),
                "{what}"
            );
            assert_eq!(
                parsed.reasoning,
                expect["reasoning"].as_str().unwrap(),
                "{what}"
            );
            let calls: Vec<Value> = parsed
                .tool_calls
                .iter()
                .map(|c| {
                    serde_json::json!({"id": c.id, "name": c.function.name,
                        "arguments": c.function.arguments})
                })
                .collect();
            assert_eq!(Value::Array(calls), expect["tool_calls"], "{what}");
            assert!(parsed.warnings.is_empty(), "{what}: {:?}", parsed.warnings);
        };
        check(vec![text], "whole");
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        check(
            bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect(),
            "in 1-char chunks",
        );
        for &a in &bounds {
            check(vec![&text[..a], &text[a..]], &format!("split at {a}"));
            // Every pair of cuts: three chunks.
            for &b in bounds.iter().filter(|b| **b > a).step_by(7) {
                check(
                    vec![&text[..a], &text[a..b], &text[b..]],
                    &format!("split at {a}, {b}"),
                );
            }
        }
        n += 1;
    }
    assert_eq!(n, 5);
}
