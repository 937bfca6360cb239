//! The Kimi K2 family through the real binary: `render --template NAME [--template-only]` over
//! every public family vector (template-alone and live), and `parse --template NAME` over every
//! family parser case, as other programs call them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use kimi_protocol::request::RenderRequest;
use kimi_protocol::{Template, render};
use serde_json::{Value, json};

use super::cli::run;

fn fixtures(rel: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/family")
        .join(rel);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// `render` prints the golden bytes for every request in `rel`, with `args` before the file.
fn renders_every_vector(rel: &str, args: &[&str]) -> usize {
    let files = fixtures(rel);
    for path in &files {
        let file = path.to_str().expect("utf-8 path");
        let o = run(&[&["render"], args, &[file]].concat(), None);
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let want = fs::read(path.with_extension("txt")).expect("golden");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&want),
            "{file} {args:?}"
        );
        assert_eq!(o.stdout, want, "{file} (bytes)");
    }
    files.len()
}

#[test]
fn render_template_only_gives_every_template_vector() {
    let only = ["--template-only"];
    assert_eq!(
        renders_every_vector(
            "k2-thinking",
            &["--template", "k2-thinking", "--template-only"]
        ),
        6
    );
    assert_eq!(
        renders_every_vector("k2.5", &["--template", "k2.5", "--template-only"]),
        6
    );
    // The request's own "template" key picks the template when the flag is absent.
    assert_eq!(renders_every_vector("k2-thinking", &only), 6);
    assert_eq!(renders_every_vector("k2.5", &only), 6);
}

#[test]
fn render_without_template_only_gives_every_live_vector() {
    assert_eq!(
        renders_every_vector("live/k2-thinking", &["--template", "k2-thinking"]),
        1
    );
    assert_eq!(
        renders_every_vector("live/k2.5", &["--template", "k2.5"]),
        2
    );
}

#[test]
fn the_flag_wins_over_the_request_key() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/family/k2.5/reasoning_tool_loop_open.json");
    let text = fs::read_to_string(&path).expect("fixture");
    let req: RenderRequest = serde_json::from_str(&text).expect("valid");
    assert_eq!(req.template, Some(Template::K25));
    let o = run(
        &[
            "render",
            "--template",
            "k2-thinking",
            "--template-only",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success());
    let want = render(
        &req.messages,
        &req.tools,
        req.options(Template::K2Thinking, false),
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
    assert!(want.starts_with("<|im_system|>tool_declare") && !want.ends_with("<think>"));
}

#[test]
fn bad_templates_and_rejected_requests_are_one_clear_line() {
    let check = |o: Output, needle: &str| {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
        assert!(!err.contains("panicked") && o.stdout.is_empty(), "{err}");
    };
    check(
        run(&["render", "--template", "k9"], Some("{}")),
        "unknown template \"k9\"",
    );
    check(
        run(
            &["render"],
            Some(r#"{"template": "Kimi-K9", "messages": []}"#),
        ),
        "template: unknown template \"Kimi-K9\"",
    );
    let no_args = json!({"messages": [{"role": "assistant", "tool_calls": [
        {"id": "functions.f:0", "function": {"name": "f"}}]}]});
    check(
        run(
            &["render", "--template", "k2.5"],
            Some(&no_args.to_string()),
        ),
        "<stdin>: messages[0].tool_calls[0].function: a function without \"arguments\"",
    );
    check(
        run(&["parse", "--template", "k4"], Some("x")),
        "unknown template",
    );
}

#[test]
fn parse_prints_reasoning_for_every_family_case() {
    let files = fixtures("parser");
    let mut n = 0;
    for path in &files {
        let case: Value =
            serde_json::from_str(&fs::read_to_string(path).expect("readable")).expect("valid");
        let template = Template::parse(case["template"].as_str().unwrap()).unwrap();
        // K3 cases: `parse_k3_prints_every_public_case`.
        if template == Template::K3 {
            continue;
        }
        n += 1;
        let text = case["text"].as_str().unwrap();
        let mut args = vec!["parse", "--template", template.as_str()];
        if case["starts_in_reasoning"] == json!(true) {
            args.push("--starts-in-reasoning");
        }
        // Whole, and one char per chunk as a server may stream it.
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let chunked = serde_json::to_string(&chars).unwrap();
        for (extra, input) in [(None, text), (Some("--chunks"), chunked.as_str())] {
            let mut args = args.clone();
            args.extend(extra);
            let o = run(&args, Some(input));
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let got: Value = serde_json::from_slice(&o.stdout).expect("json out");
            let expect = &case["expect"];
            let what = format!("{} {args:?}", path.display());
            assert_eq!(got["content"], expect["content"], "{what}");
            assert_eq!(got["reasoning"], expect["reasoning"], "{what}");
            let calls: Vec<Value> = got["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    json!({"id": c["id"], "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"]})
                })
                .collect();
            assert_eq!(Value::Array(calls), expect["tool_calls"], "{what}");
        }
    }
    assert_eq!(n, 5);
}

#[test]
fn parse_k3_prints_every_public_case() {
    let mut n = 0;
    for path in fixtures("parser") {
        let case: Value =
            serde_json::from_str(&fs::read_to_string(&path).expect("readable")).expect("valid");
        if case["template"] != "Kimi-K3" {
            continue;
        }
        n += 1;
        let text = case["text"].as_str().unwrap();
        let mut args = vec!["parse", "--template", "k3"];
        if case["starts_in"] == "response" {
            args.push("--thinking-off");
        }
        // Whole from a file, and one char per chunk as a server may stream it.
        let file = path.to_str().unwrap().replace(".json", ".txt");
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(Path::new(&file).file_name().unwrap());
        fs::write(&file, text).expect("write");
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let chunked = serde_json::to_string(&chars).unwrap();
        let file_arg = file.to_str().unwrap();
        for (extra, input) in [(file_arg, None), ("--chunks", Some(chunked.as_str()))] {
            let mut args = args.clone();
            args.push(extra);
            let o = run(&args, input);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let got: Value = serde_json::from_slice(&o.stdout).expect("json out");
            let expect = &case["expect"];
            let what = format!("{} {args:?}", path.display());
            assert_eq!(got["content"], expect["content"], "{what}");
            let reasoning = got["reasoning"].as_str().unwrap_or("");
            assert_eq!(reasoning, expect["reasoning"], "{what}");
            let calls: Vec<Value> = got["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(index, c)| {
                    json!({"id": c["id"], "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"], "index": index})
                })
                .collect();
            assert_eq!(Value::Array(calls), expect["tool_calls"], "{what}");
            let warnings: Vec<Value> = got["warnings"].as_array().unwrap().clone();
            assert_eq!(Value::Array(warnings), case["notes"], "{what}");
        }
    }
    assert_eq!(n, 6);
    // `--events`: K3 markers carry K3 ids; an answer written in the think channel is turned
    // into content once (`reasoning_was_text`).
    let o = run(
        &["parse", "--events", "--template", "k3"],
        Some("Paris.<|close|>response<|sep|>"),
    );
    let lines: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({"type": "reasoning", "text": "Paris."}),
            json!({"type": "marker", "marker": "close", "token": "<|close|>", "token_id": 163588, "offset": 6}),
            json!({"type": "marker", "marker": "sep", "token": "<|sep|>", "token_id": 163589, "offset": 23}),
            json!({"type": "warning", "message": "think channel skipped: its text was the answer"}),
            json!({"type": "reasoning_was_text"}),
        ]
    );
}

#[test]
fn parse_events_show_reasoning_and_think_ids_where_known() {
    let events = |args: &[&str], input: &str| -> Vec<Value> {
        let o = run(args, Some(input));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    };
    // K2.5 starts in the reasoning by default.
    let got = events(
        &["parse", "--events", "--template", "k2.5"],
        "Hmm.</think>Hi",
    );
    assert_eq!(
        got,
        vec![
            json!({"type": "reasoning", "text": "Hmm."}),
            json!({"type": "marker", "marker": "think_end", "token": "</think>", "token_id": 163607, "offset": 4}),
            json!({"type": "text", "text": "Hi"}),
        ]
    );
    // K2-Thinking writes its own <think>; its ids are not confirmed, so none is shown.
    let got = events(
        &["parse", "--events", "--template", "k2-thinking"],
        "<think>a</think>b",
    );
    assert_eq!(got[0]["marker"], "think_begin");
    assert_eq!(got[0]["token_id"], Value::Null);
    assert_eq!(got[1], json!({"type": "reasoning", "text": "a"}));
    // Thinking off: content from the start.
    let got = events(
        &["parse", "--events", "--template", "k2.5", "--thinking-off"],
        "a</think>",
    );
    assert_eq!(got, vec![json!({"type": "text", "text": "a</think>"})]);
}

#[test]
fn minus_zero_in_a_schema_renders_as_python_does() {
    let req = r#"{"messages": [], "add_generation_prompt": false, "tools": [{"type": "function",
        "function": {"name": "f", "parameters": {"type": "object", "properties":
        {"x": {"type": "number", "default": -0, "minimum": -0}}}}}]}"#;
    let o = run(&["render"], Some(req));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        r#"<|im_system|>tool_declare<|im_middle|>[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number","default":0,"minimum":0}}}}}]<|im_end|>"#
    );
    // The TypeScript form prints Python's `repr` of the same integer.
    let o = run(&["render", "--template", "k2.5"], Some(req));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "<|im_system|>tool_declare<|im_middle|># Tools\n\n## functions\nnamespace functions {\ntype f = (_: {\n  // minimum: 0\n  // Default: 0\n  x?: number\n}) => any;\n}\n<|im_end|>"
    );
}

#[test]
fn k3_render_gives_every_vector_in_both_layers() {
    // The public K3 template vectors render alike in Moonshot's encoder and the Jinja port.
    assert_eq!(renders_every_vector("k3", &["--template", "k3"]), 8);
    assert_eq!(
        renders_every_vector("k3", &["--template", "k3", "--template-only"]),
        8
    );
    // The request's "template": "Kimi-K3" picks K3 without the flag.
    assert_eq!(renders_every_vector("k3", &[]), 8);
    assert_eq!(renders_every_vector("live/k3", &["--template", "k3"]), 2);
    // The Jinja port alone prints something else for the live vectors.
    for path in fixtures("live/k3") {
        let o = run(&["render", "--template-only", path.to_str().unwrap()], None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_ne!(o.stdout, fs::read(path.with_extension("txt")).unwrap());
    }
}

#[test]
fn k3_refusals_name_the_message_and_the_rule() {
    let refused = |args: &[&str], req: Value, needle: &str| {
        let o = run(&[&["render"], args].concat(), Some(&req.to_string()));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
        assert!(!err.contains("panicked") && o.stdout.is_empty(), "{err}");
    };
    let no_name = json!({"template": "Kimi-K3", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}]});
    refused(
        &[],
        no_name,
        "<stdin>: messages[1]: tool_calls[0]: a tool call needs a name (R9)",
    );
    // Medium effort: the encoder refuses it, the Jinja port renders it.
    let medium =
        json!({"messages": [{"role": "user", "content": "q"}], "thinking_effort": "medium"});
    refused(
        &["--template", "k3"],
        medium.clone(),
        "thinking_effort=medium",
    );
    let o = run(
        &["render", "--template", "k3", "--template-only"],
        Some(&medium.to_string()),
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("`thinking_effort=medium`."));
    // Shapes the K2 reader would reject are K3's to judge: a non-object message is skipped.
    let o = run(
        &["render", "--template", "k3"],
        Some(
            r#"{"messages": ["x", {"role": "user", "content": "hi"}], "thinking_effort": null, "add_generation_prompt": false}"#,
        ),
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "<|open|>message role=\"user\"<|sep|>hi<|close|>message<|sep|><|end_of_msg|>"
    );
    // Wide integers in arguments keep every digit.
    let o = run(
        &["render", "--template", "k3"],
        Some(
            r#"{"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"n": 123456789012345678901234567890}}}]}], "thinking": false, "add_generation_prompt": false}"#,
        ),
    );
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("type=\"number\"<|sep|>123456789012345678901234567890<|close|>argument")
    );
}
