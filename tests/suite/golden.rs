//! Golden vectors from `tests/fixtures/`: templates byte for byte, parser cases whole and chunked.

use std::fs;
use std::path::{Path, PathBuf};

use kimi_protocol::{RenderOptions, parse_chunks, render};
use kimi_tui::commands::render::RenderRequest;
use pretty_assertions::assert_eq;
use serde_json::Value;

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

#[test]
fn every_template_vector_renders_byte_for_byte() {
    for path in fixtures("template") {
        let req: RenderRequest =
            serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("valid");
        let want = fs::read(path.with_extension("txt")).expect("expected .txt beside .json");
        let got = render(
            &req.messages,
            &req.tools,
            RenderOptions {
                add_generation_prompt: req.add_generation_prompt.unwrap_or(true),
                sort_tool_keys: false,
                ..Default::default()
            },
        );
        assert_eq!(String::from_utf8_lossy(&want), got, "{}", path.display());
        assert_eq!(want, got.into_bytes(), "{} (bytes)", path.display());
    }
}

#[test]
fn every_parser_case_parses_whole_and_at_every_chunking() {
    for path in fixtures("parser") {
        let case: Value =
            serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("valid");
        let text = case["text"].as_str().expect("text");
        let expect = &case["expect"];
        let check = |chunks: Vec<&str>, how: &str| {
            let parsed = parse_chunks(chunks);
            assert_eq!(
                parsed.content,
                expect["content"].as_str().expect("content"),
                "{} {how}",
                path.display()
            );
            let calls: Vec<Value> = parsed
                .tool_calls
                .iter()
                .map(|c| {
                    serde_json::json!({"id": c.id, "name": c.function.name,
                        "arguments": c.function.arguments})
                })
                .collect();
            assert_eq!(
                Value::Array(calls),
                expect["tool_calls"],
                "{} {how}",
                path.display()
            );
        };
        check(vec![text], "whole");
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        check(
            bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect(),
            "in 1-char chunks",
        );
        for &cut in &bounds {
            check(vec![&text[..cut], &text[cut..]], &format!("split at {cut}"));
        }
        for size in [2, 3, 5, 7, 13] {
            let chunks: Vec<&str> = text
                .as_bytes()
                .chunks(size)
                .map(|c| std::str::from_utf8(c).expect("fixtures are ASCII"))
                .collect();
            check(chunks, &format!("in {size}-byte chunks"));
        }
    }
}

#[test]
fn floats_match_python_repr_on_golden_vectors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json/float_repr.json");
    let pairs: Vec<(String, String)> =
        serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("valid");
    assert!(pairs.len() > 5000);
    for (bits, want) in pairs {
        let f = f64::from_bits(u64::from_str_radix(&bits, 16).expect("hex bits"));
        let mut got = String::new();
        kimi_protocol::json::write_float(&mut got, f);
        assert_eq!(got, want, "bits {bits}");
    }
}
