//! The conformance checks: a pure function from what the requests brought back
//! ([`Recorded`]) to one result per check, in the order of [`CHECKS`].

mod calls;
mod text;

use super::record::{Answer, Exchange, Recorded};

/// One check of the scorecard: its name (stable: JSON output and mock scenarios refer to it)
/// and what it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckDef {
    pub name: &'static str,
    pub what: &'static str,
}

pub const ANSWERED: &str = "answered";
pub const FINISH_REASON: &str = "finish_reason";
pub const SCHEMA: &str = "schema";
pub const LEAKED_MARKERS: &str = "leaked_markers";
pub const DUPLICATE_CALLS: &str = "duplicate_calls";
pub const CALL_IDS: &str = "call_ids";
pub const CALL_EXPECTATIONS: &str = "call_expectations";
pub const REASONING_FIELD: &str = "reasoning_field";
pub const USAGE: &str = "usage";
pub const USAGE_GROWTH: &str = "usage_growth";
pub const SPECIAL_TOKENS: &str = "special_tokens";
pub const STREAM_AGREEMENT: &str = "stream_agreement";
pub const THINK_CLOSE: &str = "think_close";
pub const EMPTY_ANSWER: &str = "empty_answer";

/// Every check, in the order of the scorecard.
pub const CHECKS: [CheckDef; 14] = [
    CheckDef {
        name: ANSWERED,
        what: "every request is answered without an error",
    },
    CheckDef {
        name: FINISH_REASON,
        what: "finish_reason is tool_calls exactly when calls arrive",
    },
    CheckDef {
        name: SCHEMA,
        what: "call arguments are JSON and match the tool's schema",
    },
    CheckDef {
        name: LEAKED_MARKERS,
        what: "no marker text in content or reasoning",
    },
    CheckDef {
        name: DUPLICATE_CALLS,
        what: "each call is delivered once",
    },
    CheckDef {
        name: CALL_IDS,
        what: "call ids have the family's format",
    },
    CheckDef {
        name: CALL_EXPECTATIONS,
        what: "no call where none may come; calls where asked",
    },
    CheckDef {
        name: EMPTY_ANSWER,
        what: "every answer holds text or a call",
    },
    CheckDef {
        name: THINK_CLOSE,
        what: "a thinking model's reasoning closes before its answer (raw mode)",
    },
    CheckDef {
        name: REASONING_FIELD,
        what: "reasoning arrives apart from the answer, in a known field",
    },
    CheckDef {
        name: USAGE,
        what: "usage is reported, streamed and not",
    },
    CheckDef {
        name: USAGE_GROWTH,
        what: "prompt_tokens grows with the rendered prompt (warning only)",
    },
    CheckDef {
        name: SPECIAL_TOKENS,
        what: "each marker arrives as one special token",
    },
    CheckDef {
        name: STREAM_AGREEMENT,
        what: "streamed and non-streamed answers agree",
    },
];

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// Worth a look, not a failure.
    Warn,
    /// Does not apply to this endpoint (mode or model).
    Skip,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Warn => "WARN",
            Status::Skip => "SKIP",
        }
    }
}

/// One check's result: what was seen, and the server setting most likely at fault.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckResult {
    pub name: &'static str,
    pub status: Status,
    pub evidence: String,
    pub hint: Option<String>,
}

/// How far the growth of `prompt_tokens` between the two rounds may stray from the growth of
/// the locally rendered prompt at about 4 bytes a token: a third of it to three times it.
pub const GROWTH_TOLERANCE: f64 = 3.0;
/// Bytes per token assumed for that estimate.
pub const BYTES_PER_TOKEN: f64 = 4.0;

const TOOL_PARSER: &str = "start the server with its Kimi tool parser: vLLM --enable-auto-tool-choice --tool-call-parser kimi_k2, SGLang --tool-call-parser kimi_k2";
const REASONING_PARSER: &str =
    "start the server with its Kimi reasoning parser: vLLM/SGLang --reasoning-parser kimi_k2";
const DUPLICATE: &str = "the server's tool parser sends a call twice (as a tool_calls delta and again as marker text in content, or in two deltas): update its kimi_k2 tool parser (--tool-call-parser kimi_k2) and report both chunks to its maintainers";
const SKIP_SPECIAL: &str = "the server must honour skip_special_tokens: false (and know Kimi's special tokens: serve the model's own tokenizer)";

/// Every check over `rec`, in the order of [`CHECKS`].
pub fn run_all(rec: &Recorded) -> Vec<CheckResult> {
    use calls::{call_expectations, call_ids, duplicate_calls, finish_reason, schema};
    use text::{
        answered, empty_answer, leaked_markers, reasoning_field, special_tokens, stream_agreement,
        think_close, usage, usage_growth,
    };
    CHECKS
        .iter()
        .map(|def| {
            let (status, evidence, hint) = match def.name {
                ANSWERED => answered(rec),
                FINISH_REASON => finish_reason(rec),
                SCHEMA => schema(rec),
                LEAKED_MARKERS => leaked_markers(rec),
                DUPLICATE_CALLS => duplicate_calls(rec),
                CALL_IDS => call_ids(rec),
                CALL_EXPECTATIONS => call_expectations(rec),
                EMPTY_ANSWER => empty_answer(rec),
                THINK_CLOSE => think_close(rec),
                REASONING_FIELD => reasoning_field(rec),
                USAGE => usage(rec),
                USAGE_GROWTH => usage_growth(rec),
                SPECIAL_TOKENS => special_tokens(rec),
                _ => stream_agreement(rec),
            };
            CheckResult {
                name: def.name,
                status,
                evidence,
                hint: hint.map(str::to_owned),
            }
        })
        .collect()
}

type Outcome = (Status, String, Option<&'static str>);

fn pass(evidence: impl Into<String>) -> Outcome {
    (Status::Pass, evidence.into(), None)
}

fn fail(evidence: impl Into<String>, hint: &'static str) -> Outcome {
    (Status::Fail, evidence.into(), Some(hint))
}

/// Each answer with where it came from: (exchange, "streamed" | "non-streamed", answer).
fn answers(rec: &Recorded) -> impl Iterator<Item = (&Exchange, &'static str, &Answer)> {
    rec.exchanges.iter().flat_map(|x| {
        std::iter::once((x, "streamed", &x.streamed))
            .chain(x.plain.as_ref().map(|p| (x, "non-streamed", p)))
    })
}

/// `request parallel (round 1, streamed, chunk 4)`.
fn at(x: &Exchange, how: &str, chunk: Option<usize>) -> String {
    match chunk {
        Some(c) => format!(
            "request {} (round {}, {how}, chunk {c})",
            x.request, x.round
        ),
        None => format!("request {} (round {}, {how})", x.request, x.round),
    }
}

/// Argument text cut for evidence, terminal-safe.
fn clip(text: &str) -> String {
    let clean = kimi_protocol::sanitize::for_terminal(text);
    match clean.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean.into_owned(),
    }
}
