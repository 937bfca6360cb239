//! The `render` and `parse` commands as other programs call them: the real binary, real files,
//! stdin, exit codes and one-line errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub(super) fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut pipe = child.stdin.take().expect("stdin");
    if let Some(s) = stdin {
        pipe.write_all(s.as_bytes()).expect("write stdin");
    }
    drop(pipe);
    child.wait_with_output().expect("binary exits")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// A failed run: non-zero exit, one line on stderr that contains `needle`, nothing on stdout,
/// no panic.
fn assert_clean_error(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "expected failure, stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
    assert!(err.contains(needle), "{needle:?} not in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn render_file_and_stdin_give_the_golden_bytes() {
    let json = fixture("template/seed_stage2.json");
    let want = std::fs::read(fixture("template/seed_stage2.txt")).expect("golden");
    let from_file = run(&["render", json.to_str().expect("utf-8 path")], None);
    assert!(from_file.status.success());
    assert_eq!(from_file.stdout, want, "no trailing newline, exact bytes");
    let text = std::fs::read_to_string(&json).expect("fixture");
    let from_stdin = run(&["render"], Some(&text));
    assert_eq!(from_stdin.stdout, want);
    let dash = run(&["render", "-"], Some(&text));
    assert_eq!(dash.stdout, want);
}

#[test]
fn render_accepts_an_openai_request_and_sorts_on_request() {
    let req = r#"{"model": "m", "stream": true,
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]}"#;
    let o = run(&["render"], Some(req));
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        r#"<|im_system|>tool_declare<|im_middle|>[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]<|im_end|><|im_system|>system<|im_middle|>s<|im_end|><|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>"#
    );
    let sorted = run(&["render", "--sort-tool-keys"], Some(req));
    assert!(
        stdout(&sorted).starts_with(
            r#"<|im_system|>tool_declare<|im_middle|>[{"function":{"name":"f","parameters":{"properties":{},"type":"object"}},"type":"function"}]"#
        ),
        "{}",
        stdout(&sorted)
    );
}

#[test]
fn parse_prints_the_openai_shape() {
    let text = "Let me check. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>";
    let o = run(&["parse"], Some(text));
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    assert_eq!(
        v,
        serde_json::json!({
            "content": "Let me check. ",
            "tool_calls": [{"id": "functions.get_weather:0", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Beijing\"}"}}],
            "finish_reason": "tool_calls",
            "warnings": []
        })
    );
}

#[test]
fn parse_chunks_gives_the_same_answer_and_reports_warnings() {
    let chunks = r#"["Hi <|tool_calls_sec", "tion_begin|><|tool_call_begin|>functions.a:0<|tool_call_arg", "ument_begin|>{\"x\": ", "1"]"#;
    let o = run(&["parse", "--chunks"], Some(chunks));
    assert!(o.status.success());
    let v: Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["content"], "Hi ");
    assert_eq!(v["tool_calls"], serde_json::json!([]));
    assert_eq!(v["finish_reason"], "length");
    let warnings = v["warnings"].as_array().expect("warnings array");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().expect("string").contains("incomplete")),
        "{warnings:?}"
    );
}

#[test]
fn parse_events_prints_json_lines_with_types() {
    let chunks = r#"["Hel", "lo<|im_", "end|>"]"#;
    let o = run(&["parse", "--chunks", "--events"], Some(chunks));
    assert!(o.status.success());
    let events: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert_eq!(
        events,
        vec![
            serde_json::json!({"type": "text", "text": "Hello"}),
            serde_json::json!({"type": "marker", "marker": "im_end", "token": "<|im_end|>", "token_id": 163586, "offset": 5}),
            serde_json::json!({"type": "turn_end"}),
        ]
    );
}

#[test]
fn bad_input_gets_a_one_line_error() {
    assert_clean_error(
        &run(&["render", "/nonexistent/req.json"], None),
        "/nonexistent/req.json",
    );
    assert_clean_error(
        &run(&["render"], Some("{\"messages\": [\n  {\"role\": }")),
        "line 2 column",
    );
    assert_clean_error(
        &run(
            &["render"],
            Some(
                r#"{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": 5}]}"#,
            ),
        ),
        "messages[1].content",
    );
    assert_clean_error(&run(&["render"], Some(r#"{"tools": []}"#)), "messages");
    assert_clean_error(
        &run(&["render"], Some(r#"{"messages": [], "tools": [1]}"#)),
        "tools[0]",
    );
    assert_clean_error(&run(&["render"], Some("[]")), "expected a request object");
    assert_clean_error(&run(&["parse", "--chunks"], Some(r#"["a", 2]"#)), "[1]");
    assert_clean_error(
        &run(&["parse", "--chunks"], Some("plain text")),
        "invalid JSON",
    );
}

#[test]
fn binary_input_is_refused_not_mangled() {
    let dir = std::env::temp_dir().join(format!("kimi-tui-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let file = dir.join("bin.txt");
    std::fs::write(&file, [0x66, 0xff, 0xfe]).expect("write");
    assert_clean_error(
        &run(&["parse", file.to_str().expect("utf-8")], None),
        "not UTF-8",
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs the binary with `stdin`, killing it after `limit`; `None` when it had to be killed.
fn run_within(args: &[&str], stdin: Stdio, limit: std::time::Duration) -> Option<Output> {
    let mut child = bin()
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().ok();
    child.wait().ok();
    None
}

#[test]
fn endless_input_stops_at_the_documented_cap() {
    let limit = std::time::Duration::from_secs(20);
    for cmd in ["render", "parse"] {
        let o = run_within(&[cmd, "/dev/zero"], Stdio::null(), limit)
            .unwrap_or_else(|| panic!("`{cmd} /dev/zero` still running after {limit:?}"));
        assert_clean_error(&o, "/dev/zero: input is larger than 64 MiB");
        let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
        let o = run_within(&[cmd], Stdio::from(zero), limit)
            .unwrap_or_else(|| panic!("`{cmd} < /dev/zero` still running after {limit:?}"));
        assert_clean_error(&o, "<stdin>: input is larger than 64 MiB");
    }
    let help = bin().args(["parse", "--help"]).output().expect("help");
    assert!(String::from_utf8_lossy(&help.stdout).contains("At most 64 MiB"));
}
