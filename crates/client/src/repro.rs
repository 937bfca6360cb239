//! Reproducers: one recorded stream written as a minimal, self-contained test case to attach
//! to a server bug report (`kimi-tui repro TRACE`, the inspector's `x`): the chunks as they
//! arrived (with token ids where the server sent them), the request's tools, and what this
//! client parsed from them.
//!
//! Formats: [`to_jsonl`] (read back by [`read_jsonl`]) and [`to_python`], a pytest file in
//! the shape of vLLM's or SGLang's tool-parser unit tests.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event_json::{Lines, is_parsed, result_json};
use kimi_protocol::trace_file::endpoint_of;
use kimi_protocol::{Mode, Trace};

/// The `format` field of a reproducer's header line.
pub const FORMAT: &str = "kimi-tui-repro";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// Whose tool-parser tests [`to_python`] imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Vllm,
    Sglang,
}

/// One line of the JSONL form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Header(Header),
    Chunk(Chunk),
    Parsed(Parsed),
}

/// What the stream answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub model: String,
    pub mode: Mode,
    /// The path under the server's base URL the request went to.
    pub endpoint: String,
    /// The request's tools (raw mode: read back from the rendered prompt when it declares them
    /// as JSON).
    pub tools: Vec<Value>,
    /// Raw mode: the prompt the completion continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The finish reason the server sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

/// One chunk as it arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub index: usize,
    /// Raw mode: the completion text; chat mode: the SSE `data:` payload.
    pub data: String,
    /// Chat mode: the model text the payload carries (`delta.content`), when it carries any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The ids of the tokens that came with the chunk, where the server sent them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_ids: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<String>,
}

impl Chunk {
    /// The model text of the chunk, as a tool parser is fed it.
    pub fn model_text(&self, mode: Mode) -> &str {
        match mode {
            Mode::Raw => &self.data,
            Mode::Chat => self.text.as_deref().unwrap_or(""),
        }
    }
}

/// What this client parsed from the chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parsed {
    /// The parser's events, as `parse --trace` prints them (each names its chunk).
    pub events: Vec<Value>,
    /// The result: content, reasoning, tool calls, finish reason, warnings.
    pub result: Value,
}

/// A reproducer.
#[derive(Debug, Clone, PartialEq)]
pub struct Repro {
    pub header: Header,
    pub chunks: Vec<Chunk>,
    pub parsed: Parsed,
}

/// Why a text is not a reproducer this build reads.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    #[error("line {line}: {source}")]
    Json {
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("line {0}: expected {1}")]
    Shape(usize, &'static str),
    #[error("not a kimi-tui reproducer (format {0:?}, version {1})")]
    Format(String, u32),
}

/// The reproducer of `trace`: its chunks, its tools, and its chunks parsed again by this
/// build's decoder (exactly what `parse --trace` reports).
pub fn from_trace(trace: &Trace) -> Repro {
    let model = trace
        .request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let tools = match trace.request.get("tools") {
        Some(Value::Array(t)) => t.clone(),
        _ => trace
            .prompt
            .as_deref()
            .map(tools_in_prompt)
            .unwrap_or_default(),
    };
    let mut chunks: Vec<Chunk> = trace
        .chunks()
        .enumerate()
        .map(|(index, (data, _))| Chunk {
            index,
            data: data.to_owned(),
            text: (trace.mode == Mode::Chat)
                .then(|| chat_text(data))
                .flatten(),
            token_ids: Vec::new(),
            tokens: Vec::new(),
        })
        .collect();
    for t in (0..trace.tokens.len()).filter_map(|i| trace.tokens.get(i)) {
        if let Some(c) = chunks.get_mut(t.chunk) {
            c.tokens.push(t.text.to_owned());
            // A token without an id keeps the lists aligned only when all have one.
            c.token_ids.extend(t.id);
        }
    }
    for c in &mut chunks {
        if c.token_ids.len() != c.tokens.len() {
            c.token_ids.clear();
        }
    }
    let (events, result) = crate::replay::reparse(trace).events_and_result();
    let mut lines = Lines::default();
    let events = events
        .iter()
        .filter_map(|e| lines.line(e))
        .filter(|l| is_parsed(l) && l["type"] != "chunk")
        .collect();
    Repro {
        header: Header {
            format: FORMAT.to_owned(),
            version: VERSION,
            model,
            mode: trace.mode,
            endpoint: endpoint_of(trace.mode).to_owned(),
            tools,
            prompt: trace.prompt.clone(),
            finish_reason: trace.finish_reason.clone(),
        },
        chunks,
        parsed: Parsed {
            events,
            result: result_json(&result),
        },
    }
}

/// `delta.content` of a chat payload, when it holds text.
fn chat_text(payload: &str) -> Option<String> {
    let v: Value = serde_json::from_str(payload).ok()?;
    v.pointer("/choices/0/delta/content")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The tools a K2 prompt declares as JSON (`tool_declare`); none when they are declared
/// otherwise (K2.5's TypeScript form, K3).
fn tools_in_prompt(prompt: &str) -> Vec<Value> {
    const HEAD: &str = "tool_declare<|im_middle|>";
    let Some(at) = prompt.find(HEAD).map(|i| i + HEAD.len()) else {
        return Vec::new();
    };
    let body = &prompt[at..];
    let end = body.find("<|im_end|>").unwrap_or(body.len());
    match serde_json::from_str(&body[..end]) {
        Ok(Value::Array(tools)) => tools,
        _ => Vec::new(),
    }
}

/// One JSON object per line: the header, each chunk, then what was parsed.
pub fn to_jsonl(r: &Repro) -> String {
    let lines = std::iter::once(Line::Header(r.header.clone()))
        .chain(r.chunks.iter().cloned().map(Line::Chunk))
        .chain(std::iter::once(Line::Parsed(r.parsed.clone())));
    let mut out = String::new();
    for line in lines {
        // Serializing these plain values cannot fail.
        out.push_str(&serde_json::to_string(&line).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Read the JSONL form back.
pub fn read_jsonl(text: &str) -> Result<Repro, ReproError> {
    let mut header = None;
    let mut chunks = Vec::new();
    let mut parsed = None;
    for (n, raw) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Line = serde_json::from_str(raw).map_err(|source| ReproError::Json {
            line: n + 1,
            source,
        })?;
        match (line, &header, &parsed) {
            (Line::Header(h), None, None) => {
                if h.format != FORMAT || h.version > VERSION {
                    return Err(ReproError::Format(h.format, h.version));
                }
                header = Some(h);
            }
            (Line::Chunk(c), Some(_), None) => chunks.push(c),
            (Line::Parsed(p), Some(_), None) => parsed = Some(p),
            (_, None, _) => return Err(ReproError::Shape(n + 1, "the header first")),
            (_, Some(_), _) => {
                return Err(ReproError::Shape(n + 1, "nothing after the parsed line"));
            }
        }
    }
    match (header, parsed) {
        (Some(header), Some(parsed)) => Ok(Repro {
            header,
            chunks,
            parsed,
        }),
        _ => Err(ReproError::Shape(
            text.lines().count(),
            "a header and a parsed line",
        )),
    }
}

/// A Python string literal of `s`: a JSON string is one (serde_json writes characters
/// outside the BMP as they are, never as surrogate escapes, which Python would read apart).
fn py_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// `v` as a Python literal on one line.
fn py_value(v: &Value) -> String {
    match v {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(py_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_value(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// A list as a Python literal, one item a line.
fn py_list(items: &[Value]) -> String {
    if items.is_empty() {
        return "[]".to_owned();
    }
    let lines: String = items
        .iter()
        .map(|v| format!("    {},\n", py_value(v)))
        .collect();
    format!("[\n{lines}]")
}

/// The expected calls as `{"name", "arguments"}`, arguments as the text parsed.
fn expected_calls(r: &Repro) -> Vec<Value> {
    r.parsed.result["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            serde_json::json!({
                "name": c["function"]["name"],
                "arguments": c["function"]["arguments"],
            })
        })
        .collect()
}

/// A pytest file in the shape of `flavor`'s tool-parser tests.
pub fn to_python(r: &Repro, flavor: Flavor) -> String {
    let deltas: Vec<Value> = r
        .chunks
        .iter()
        .map(|c| Value::from(c.model_text(r.header.mode)))
        .collect();
    let ids: Vec<Value> = r
        .chunks
        .iter()
        .map(|c| Value::from(c.token_ids.clone()))
        .collect();
    let common = format!(
        r#"import json

import pytest

# The stream as it arrived at kimi-tui, one entry per chunk: {what}.
MODEL = {model}
MODE = {mode}
TOOLS = {tools}
DELTAS = {deltas}
# The token ids of each chunk where the server sent them (empty where it did not).
DELTA_TOKEN_IDS = {ids}
# The finish reason the server sent.
SERVER_FINISH_REASON = {finish}
# What kimi-tui parsed from these chunks.
EXPECTED_CONTENT = {content}
EXPECTED_REASONING = {reasoning}
EXPECTED_TOOL_CALLS = {calls}


def same_arguments(got, want):
    """Arguments compare as JSON when both parse, else as text."""
    try:
        return json.loads(got) == json.loads(want)
    except ValueError:
        return got == want


def assert_calls(got):
    assert [c["name"] for c in got] == [c["name"] for c in EXPECTED_TOOL_CALLS]
    for g, w in zip(got, EXPECTED_TOOL_CALLS):
        assert same_arguments(g["arguments"], w["arguments"]), (g, w)
"#,
        what = match r.header.mode {
            Mode::Raw => "the completion text",
            Mode::Chat => "the delta.content text (the server's own tool parser ran already)",
        },
        model = py_str(&r.header.model),
        mode = py_str(r.header.mode.as_str()),
        tools = py_list(&r.header.tools),
        deltas = py_list(&deltas),
        ids = py_list(&ids),
        finish = py_value(
            &r.header
                .finish_reason
                .clone()
                .map_or(Value::Null, Value::from)
        ),
        content = py_value(&r.parsed.result["content"]),
        reasoning = py_value(&r.parsed.result["reasoning"]),
        calls = py_list(&expected_calls(r)),
    );
    let (doc, body) = match flavor {
        Flavor::Sglang => (SGLANG_DOC, SGLANG_TESTS),
        Flavor::Vllm => (VLLM_DOC, VLLM_TESTS),
    };
    format!("{doc}\n{common}\n\n{body}")
}

const VLLM_DOC: &str = r#""""A Kimi tool-call stream recorded by kimi-tui, as a vLLM tool-parser unit test.

Assumptions: vLLM's KimiK2ToolParser (vllm.tool_parsers, or
vllm.entrypoints.openai.tool_parsers in older versions) and the model's tokenizer from the Hub
(trust_remote_code). Chunks without token ids are tokenized here. The reasoning, if any, is
fed to the tool parser as it arrived (no reasoning parser runs first). A failure shows where
the parser and kimi-tui disagree on the same stream.
"""
"#;

const VLLM_TESTS: &str = r#"try:
    from vllm.tool_parsers.kimi_k2_tool_parser import KimiK2ToolParser
except ImportError:
    from vllm.entrypoints.openai.tool_parsers import KimiK2ToolParser
try:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
except ImportError:
    from vllm.entrypoints.openai.protocol import ChatCompletionRequest
from vllm.transformers_utils.tokenizer import get_tokenizer


@pytest.fixture(scope="module")
def kimi_k2_tokenizer():
    return get_tokenizer(tokenizer_name=MODEL, trust_remote_code=True)


@pytest.fixture
def kimi_k2_tool_parser(kimi_k2_tokenizer):
    return KimiK2ToolParser(kimi_k2_tokenizer)


def request():
    return ChatCompletionRequest(model=MODEL, messages=[], tools=TOOLS or None)


def test_non_streamed_matches_kimi_tui(kimi_k2_tool_parser):
    info = kimi_k2_tool_parser.extract_tool_calls("".join(DELTAS), request=request())
    got = [
        {"name": c.function.name, "arguments": c.function.arguments}
        for c in info.tool_calls
    ]
    assert info.tools_called == bool(EXPECTED_TOOL_CALLS)
    assert_calls(got)


def test_streamed_matches_kimi_tui(kimi_k2_tool_parser, kimi_k2_tokenizer):
    previous_text, previous_ids = "", []
    calls = {}
    for delta_text, delta_ids in zip(DELTAS, DELTA_TOKEN_IDS):
        if not delta_ids and delta_text:
            delta_ids = kimi_k2_tokenizer.encode(delta_text, add_special_tokens=False)
        current_text = previous_text + delta_text
        current_ids = previous_ids + list(delta_ids)
        message = kimi_k2_tool_parser.extract_tool_calls_streaming(
            previous_text=previous_text,
            current_text=current_text,
            delta_text=delta_text,
            previous_token_ids=previous_ids,
            current_token_ids=current_ids,
            delta_token_ids=list(delta_ids),
            request=request(),
        )
        for tc in (message.tool_calls if message else None) or []:
            call = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function and tc.function.name:
                call["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                call["arguments"] += tc.function.arguments
        previous_text, previous_ids = current_text, current_ids
    assert_calls([calls[i] for i in sorted(calls)])
"#;

const SGLANG_DOC: &str = r#""""A Kimi tool-call stream recorded by kimi-tui, as an SGLang function-call unit test.

Assumptions: SGLang's KimiK2Detector (sglang.srt.function_call.kimik2_detector) and the
OpenAI protocol classes Tool and Function (sglang.srt.entrypoints.openai.protocol). The
detector reads text, so the token ids are not used. The reasoning, if any, is fed to the
detector as it arrived (no reasoning parser runs first). A failure shows where the detector
and kimi-tui disagree on the same stream.
"""
"#;

const SGLANG_TESTS: &str = r#"from sglang.srt.entrypoints.openai.protocol import Function, Tool
from sglang.srt.function_call.kimik2_detector import KimiK2Detector


def tools():
    return [Tool(type="function", function=Function(**t["function"])) for t in TOOLS]


def test_non_streamed_matches_kimi_tui():
    result = KimiK2Detector().detect_and_parse("".join(DELTAS), tools())
    assert_calls([{"name": c.name, "arguments": c.parameters} for c in result.calls])


def test_streamed_matches_kimi_tui():
    detector = KimiK2Detector()
    calls = {}
    for delta in DELTAS:
        result = detector.parse_streaming_increment(delta, tools())
        for item in result.calls:
            call = calls.setdefault(item.tool_index, {"name": "", "arguments": ""})
            if item.name:
                call["name"] = item.name
            call["arguments"] += item.parameters or ""
    assert_calls([calls[i] for i in sorted(calls)])
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn trace() -> Trace {
        let mut t = Trace {
            mode: Mode::Raw,
            request: serde_json::json!({"model": "moonshotai/Kimi-K2-Instruct"}),
            prompt: Some(
                "<|im_system|>tool_declare<|im_middle|>[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]<|im_end|><|im_assistant|>assistant<|im_middle|>"
                    .into(),
            ),
            finish_reason: Some("stop".into()),
            done: true,
            ..Trace::default()
        };
        for (k, piece) in [
            "Hi \"you\".",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0",
            "<|tool_call_argument_begin|>{\"a\": 1}<|tool_call_end|><|tool_calls_section_end|>",
        ]
        .into_iter()
        .enumerate()
        {
            t.push_chunk(piece, k as u64 * 10);
        }
        t
    }

    #[test]
    fn a_raw_trace_gives_its_chunks_tools_and_parse() {
        let r = from_trace(&trace());
        assert_eq!(r.header.tools[0]["function"]["name"], "f");
        assert_eq!(r.chunks.len(), 3);
        assert_eq!(r.chunks[0].model_text(Mode::Raw), "Hi \"you\".");
        assert_eq!(r.parsed.result["content"], "Hi \"you\".");
        assert_eq!(r.parsed.result["tool_calls"][0]["function"]["name"], "f");
        assert!(
            r.parsed
                .events
                .iter()
                .any(|e| e["type"] == "marker" && e["marker"] == "call_begin" && e["chunk"] == 1),
            "{:?}",
            r.parsed.events
        );
        let back = read_jsonl(&to_jsonl(&r)).expect("reads back");
        assert_eq!(back, r);
    }

    #[test]
    fn json_values_become_python_literals() {
        let v = serde_json::json!({"a": [true, false, null, 1.5, "x\"\n😀"]});
        assert_eq!(
            py_value(&v),
            r#"{"a": [True, False, None, 1.5, "x\"\n😀"]}"#
        );
        assert_eq!(py_list(&[]), "[]");
        assert_eq!(
            py_list(&[Value::from(1), Value::from("b")]),
            "[\n    1,\n    \"b\",\n]"
        );
    }

    #[test]
    fn other_texts_are_refused_with_the_line() {
        let r = from_trace(&trace());
        let text = to_jsonl(&r);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.swap(0, 1);
        let err = read_jsonl(&lines.join("\n")).expect_err("header not first");
        assert!(err.to_string().contains("line 1"), "{err}");
        assert!(read_jsonl("{\"type\":\"header\"}").is_err());
        let foreign = text.replacen(FORMAT, "other", 1);
        assert!(matches!(read_jsonl(&foreign), Err(ReproError::Format(..))));
        let no_end: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        assert!(read_jsonl(&no_end).is_err());
    }

    #[test]
    fn the_python_forms_hold_the_stream_and_the_expectations() {
        let r = from_trace(&trace());
        for flavor in [Flavor::Vllm, Flavor::Sglang] {
            let py = to_python(&r, flavor);
            assert!(py.contains("def test_streamed_matches_kimi_tui"), "{py}");
            assert!(py.contains("    \"Hi \\\"you\\\".\",\n"), "{py}");
            assert!(
                py.contains(r#"{"name": "f", "arguments": "{\"a\": 1}"}"#),
                "{py}"
            );
            assert!(py.contains("SERVER_FINISH_REASON = \"stop\""), "{py}");
        }
        assert!(to_python(&r, Flavor::Vllm).contains("KimiK2ToolParser"));
        assert!(to_python(&r, Flavor::Sglang).contains("KimiK2Detector"));
    }
}
