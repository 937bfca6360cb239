//! The conformance checks: a pure function from what the requests brought back
//! ([`Recorded`]) to one result per check, in the order of [`CHECKS`].

use serde_json::Value;

use kimi_protocol::{Mode, Model, Template};

use super::record::{Answer, CallRec, Exchange, Expect, Recorded};

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

/// Every check, in the order of the scorecard.
pub const CHECKS: [CheckDef; 12] = [
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

fn answered(rec: &Recorded) -> Outcome {
    let total = answers(rec).count();
    for (x, how, a) in answers(rec) {
        if let Some(e) = &a.error {
            return fail(
                format!("{}: {}", at(x, how, a.chunks.len().checked_sub(1)), e),
                "look at the server's log; run `kimi-tui doctor` for the connection checks",
            );
        }
    }
    pass(format!("{total} answers"))
}

fn finish_reason(rec: &Recorded) -> Outcome {
    let mut seen = 0;
    for (x, how, a) in answers(rec).filter(|(_, _, a)| a.error.is_none()) {
        seen += 1;
        let finish = a.finish_reason.as_deref();
        let calls = a.calls.len();
        let first = a.calls.first().map(|c| c.chunk);
        if rec.mode == Mode::Raw {
            // The server knows nothing of calls in raw mode: the completion ends at `<|im_end|>`
            // or a stop string, never at max_tokens inside a call.
            if finish == Some("length") {
                return fail(
                    format!("{}: finish_reason \"length\"", at(x, how, None)),
                    "raise max_tokens, or the server's max_model_len",
                );
            }
            continue;
        }
        let wrong = match (calls, finish) {
            (0, Some("tool_calls")) => Some(format!(
                "{}: finish_reason \"tool_calls\" but no call arrived",
                at(x, how, a.chunks.len().checked_sub(1))
            )),
            (n, f) if n > 0 && f != Some("tool_calls") => Some(format!(
                "{}: {n} call(s) arrived under finish_reason {}",
                at(x, how, first),
                f.map_or("(none)".to_owned(), |f| format!("{f:?}"))
            )),
            (0, None) => Some(format!("{}: no finish_reason", at(x, how, None))),
            _ => None,
        };
        if let Some(evidence) = wrong {
            return fail(evidence, TOOL_PARSER);
        }
    }
    match rec.mode {
        Mode::Raw => pass(format!(
            "{seen} answers ended without a cut (raw mode: calls are parsed here)"
        )),
        Mode::Chat => pass(format!("{seen} answers consistent")),
    }
}

/// The `parameters` schema of the tool named `name` among `tools`.
fn schema_of<'t>(tools: &'t [Value], name: &str) -> Option<&'t Value> {
    tools.iter().find_map(|t| {
        let f = t.get("function").unwrap_or(t);
        (f.get("name").and_then(Value::as_str) == Some(name))
            .then(|| f.get("parameters"))
            .flatten()
    })
}

fn schema(rec: &Recorded) -> Outcome {
    let mut total = 0usize;
    let mut first_bad: Option<String> = None;
    let mut bad = 0usize;
    for (x, how, a) in answers(rec) {
        for c in &a.calls {
            total += 1;
            let problem = match schema_of(&x.tools, &c.name) {
                None => Some(format!("no tool is named {:?}", c.name)),
                Some(schema) => kimi_core::tools::check_against_schema(schema, &c.arguments)
                    .err()
                    .map(|e| e.to_string()),
            };
            if let Some(p) = problem {
                bad += 1;
                first_bad.get_or_insert_with(|| {
                    format!(
                        "{}: call {} {}: {p}",
                        at(x, how, Some(c.chunk)),
                        c.name,
                        clip(&c.arguments)
                    )
                });
            }
        }
    }
    let rate = if total == 0 {
        100.0
    } else {
        100.0 * (total - bad) as f64 / total as f64
    };
    match first_bad {
        None if total == 0 => (
            Status::Warn,
            "no call arrived to check".into(),
            Some(TOOL_PARSER),
        ),
        None => pass(format!("{total}/{total} calls valid (100%)")),
        Some(first) => fail(
            format!(
                "{}/{total} calls valid ({rate:.1}%); first: {first}",
                total - bad
            ),
            "the server's tool parser mangles arguments: use its kimi_k2 tool parser (--tool-call-parser kimi_k2) at a current version",
        ),
    }
}

fn leaked_markers(rec: &Recorded) -> Outcome {
    for (x, how, a) in answers(rec) {
        for (field, pieces) in [("content", &a.text), ("reasoning", &a.reasoning)] {
            for (chunk, text) in pieces {
                let leaked = kimi_protocol::special::find(text)
                    .first()
                    .map(|r| text[r.clone()].to_owned())
                    .or_else(|| {
                        ["<think>", "</think>"]
                            .into_iter()
                            .find(|t| text.contains(t))
                            .map(str::to_owned)
                    });
                if let Some(m) = leaked {
                    return fail(
                        format!("{}: {m} in {field}", at(x, how, Some(*chunk))),
                        hint_for_marker(&m, rec.mode),
                    );
                }
            }
        }
        // Chat mode: the server parses markers; any the client found came as text.
        if rec.mode == Mode::Chat
            && let Some((chunk, m)) = a.markers.first()
        {
            return fail(
                format!(
                    "{}: {} arrived as text (the client parsed it itself)",
                    at(x, how, Some(*chunk)),
                    m.text()
                ),
                hint_for_marker(m.text(), rec.mode),
            );
        }
    }
    pass(format!("{} answers clean", answers(rec).count()))
}

fn hint_for_marker(marker: &str, mode: Mode) -> &'static str {
    if marker.contains("think") {
        REASONING_PARSER
    } else if mode == Mode::Chat && marker.contains("tool_call") {
        TOOL_PARSER
    } else {
        SKIP_SPECIAL
    }
}

fn duplicate_calls(rec: &Recorded) -> Outcome {
    for (x, how, a) in answers(rec) {
        for (i, c) in a.calls.iter().enumerate() {
            if let Some(d) = a.calls[..i]
                .iter()
                .find(|d| d.id == c.id || (d.name == c.name && same_args(d, c)))
            {
                return fail(
                    format!(
                        "{}: call {} {} repeats the one from chunk {}",
                        at(x, how, Some(c.chunk)),
                        c.id,
                        c.name,
                        d.chunk
                    ),
                    DUPLICATE,
                );
            }
        }
        for (i, (chunk, id)) in a.structured.iter().enumerate() {
            if let Some((first, _)) = a.structured[..i].iter().find(|(_, d)| d == id) {
                return fail(
                    format!(
                        "{}: tool_calls delta opens {id} again (first at chunk {first})",
                        at(x, how, Some(*chunk))
                    ),
                    DUPLICATE,
                );
            }
        }
        // A call sent as a `tool_calls` delta and again as marker text.
        let marker_call = a
            .markers
            .iter()
            .find(|(_, m)| *m == kimi_protocol::Marker::CallBegin);
        if !a.structured.is_empty()
            && let Some((chunk, _)) = marker_call
        {
            return fail(
                format!(
                    "{}: a call came as a tool_calls delta (chunk {}) and again as marker text",
                    at(x, how, Some(*chunk)),
                    a.structured[0].0
                ),
                DUPLICATE,
            );
        }
    }
    pass("no call delivered twice")
}

fn same_args(a: &CallRec, b: &CallRec) -> bool {
    match (
        serde_json::from_str::<Value>(&a.arguments),
        serde_json::from_str::<Value>(&b.arguments),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.arguments == b.arguments,
    }
}

/// Whether `id` is `functions.NAME:IDX` for the call's `name`.
fn k2_id(id: &str, name: &str) -> bool {
    id.strip_prefix("functions.")
        .and_then(|rest| rest.rsplit_once(':'))
        .is_some_and(|(n, idx)| {
            n == name && !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit())
        })
}

fn call_ids(rec: &Recorded) -> Outcome {
    if Model::classify(&rec.model) == Model::K3 {
        return (
            Status::Skip,
            "Kimi K3 calls carry no id in the model's text".into(),
            None,
        );
    }
    let mut n = 0;
    for (x, how, a) in answers(rec) {
        for c in &a.calls {
            n += 1;
            if !k2_id(&c.id, &c.name) {
                return fail(
                    format!(
                        "{}: id {:?} for {}; Kimi K2 writes functions.{}:IDX",
                        at(x, how, Some(c.chunk)),
                        c.id,
                        c.name,
                        c.name
                    ),
                    "keep the model's own call ids (the kimi_k2 tool parser does): the K2 template renders them back into the history, and other ids confuse the model",
                );
            }
        }
    }
    if n == 0 {
        return (Status::Warn, "no call arrived to check".into(), None);
    }
    pass(format!("{n} ids of the form functions.NAME:IDX"))
}

fn call_expectations(rec: &Recorded) -> Outcome {
    let mut missing = None;
    for (x, how, a) in answers(rec).filter(|(_, _, a)| a.error.is_none()) {
        match x.expect {
            Expect::NoCall if !a.calls.is_empty() => {
                return fail(
                    format!(
                        "{}: {} called where the request needs no tool",
                        at(x, how, Some(a.calls[0].chunk)),
                        a.calls[0].name
                    ),
                    "a server forcing calls (tool_choice rewritten to \"required\", or a grammar that always opens a call): serve tool_choice \"auto\" as sent",
                );
            }
            Expect::Parallel if a.calls.len() < 2 => {
                missing.get_or_insert_with(|| {
                    format!(
                        "{}: {} call(s) where two were asked for",
                        at(x, how, None),
                        a.calls.len()
                    )
                });
            }
            Expect::Calls if a.calls.is_empty() => {
                missing.get_or_insert_with(|| format!("{}: no call", at(x, how, None)));
            }
            _ => {}
        }
    }
    match missing {
        // The model may choose otherwise: a warning.
        Some(m) => (Status::Warn, m, Some(TOOL_PARSER)),
        None => pass("calls where asked, none where not"),
    }
}

fn reasoning_field(rec: &Recorded) -> Outcome {
    let with: Vec<_> = answers(rec)
        .filter(|(_, _, a)| !a.reasoning.is_empty())
        .collect();
    if !rec.thinks {
        return match with.first() {
            None => (
                Status::Skip,
                "the model does not think; no reasoning arrived".into(),
                None,
            ),
            Some((x, how, a)) => (
                Status::Warn,
                format!(
                    "{}: reasoning from a model that does not think",
                    at(x, how, Some(a.reasoning[0].0))
                ),
                None,
            ),
        };
    }
    let answered: Vec<_> = answers(rec).filter(|(_, _, a)| a.error.is_none()).collect();
    if let Some((x, how, _)) = answered.iter().find(|(_, _, a)| a.reasoning.is_empty()) {
        return fail(
            format!("{}: no reasoning arrived", at(x, how, None)),
            REASONING_PARSER,
        );
    }
    if rec.mode == Mode::Raw {
        return pass(format!(
            "{} answers; reasoning parsed here between <think> and </think>",
            answered.len()
        ));
    }
    let mut fields: Vec<&str> = Vec::new();
    for (_, _, a) in &answered {
        for f in &a.reasoning_fields {
            if !fields.contains(&f.as_str()) {
                fields.push(f);
            }
        }
    }
    match fields.as_slice() {
        [one] => pass(format!("{} answers; field {one}", answered.len())),
        [] => fail(
            "reasoning arrived in no known field".to_owned(),
            REASONING_PARSER,
        ),
        many => (
            Status::Warn,
            format!("reasoning in more than one field: {}", many.join(", ")),
            None,
        ),
    }
}

fn usage(rec: &Recorded) -> Outcome {
    let mut n = 0;
    for (x, how, a) in answers(rec).filter(|(_, _, a)| a.error.is_none()) {
        n += 1;
        if a.usage.is_none() {
            return fail(
                format!("{}: no usage", at(x, how, None)),
                "the server must send usage (streamed: honour stream_options.include_usage)",
            );
        }
    }
    pass(format!("{n} answers report usage"))
}

fn usage_growth(rec: &Recorded) -> Outcome {
    let pair = rec
        .exchanges
        .iter()
        .zip(rec.exchanges.iter().skip(1))
        .find(|(a, b)| {
            a.request == super::requests::WEATHER && b.request == super::requests::TOOL_RESULT
        });
    let Some((one, two)) = pair else {
        return (
            Status::Skip,
            "no two-round request was answered".into(),
            None,
        );
    };
    let (Some(u1), Some(u2)) = (one.streamed.usage, two.streamed.usage) else {
        return (Status::Warn, "no usage to compare".into(), None);
    };
    let bytes = two.rendered_bytes.saturating_sub(one.rendered_bytes) as f64;
    let expected = bytes / BYTES_PER_TOKEN;
    let grew = u2.prompt_tokens as f64 - u1.prompt_tokens as f64;
    let evidence = format!(
        "prompt_tokens {} -> {} (+{grew}); the local render grew {bytes} bytes (about {expected:.0} tokens)",
        u1.prompt_tokens, u2.prompt_tokens
    );
    if grew > 0.0 && grew >= expected / GROWTH_TOLERANCE && grew <= expected * GROWTH_TOLERANCE {
        pass(evidence)
    } else {
        (
            Status::Warn,
            format!("{evidence}: outside a factor of {GROWTH_TOLERANCE}"),
            Some(
                "the server renders a different prompt than this client (chat template, tool declaration or reasoning history): compare with `kimi-tui render`",
            ),
        )
    }
}

fn special_tokens(rec: &Recorded) -> Outcome {
    if rec.mode == Mode::Chat {
        return (
            Status::Skip,
            "chat mode: markers are the server's to parse".into(),
            None,
        );
    }
    let template = Template::for_model(&rec.model);
    let with_calls: Vec<_> = rec
        .exchanges
        .iter()
        .filter(|x| {
            matches!(x.expect, Expect::Calls | Expect::Parallel) && x.streamed.error.is_none()
        })
        .collect();
    if let Some(x) = with_calls.iter().find(|x| x.streamed.markers.is_empty()) {
        return fail(
            format!(
                "{}: no marker arrived where a call was asked for",
                at(x, "streamed", None)
            ),
            SKIP_SPECIAL,
        );
    }
    if !rec.asked_token_ids {
        return (
            Status::Warn,
            "markers arrived as text; token ids not asked for".into(),
            None,
        );
    }
    let mut checked = 0;
    for x in &rec.exchanges {
        let a = &x.streamed;
        if a.tokens.is_empty() {
            continue;
        }
        for (i, (chunk, marker)) in a.markers.iter().enumerate() {
            // K2-Thinking's `<think>` is ordinary text in its tokenizer.
            if marker.token_id_in(template).is_none() {
                continue;
            }
            checked += 1;
            let hits = a.markers[..=i].iter().filter(|(_, m)| m == marker).count();
            let singles = a
                .tokens
                .iter()
                .filter(|(_, t)| {
                    t.text == marker.text()
                        && t.id
                            .is_none_or(|got| Some(got) == marker.token_id_in(template))
                })
                .count();
            if singles < hits {
                return fail(
                    format!(
                        "{}: {} is not one special token (spelled as ordinary tokens, or with another id)",
                        at(x, "streamed", Some(*chunk)),
                        marker.text()
                    ),
                    SKIP_SPECIAL,
                );
            }
        }
    }
    if checked == 0 {
        return (
            Status::Warn,
            "the server sent no token data (logprobs) to check".into(),
            None,
        );
    }
    pass(format!("{checked} markers, each one token"))
}

fn stream_agreement(rec: &Recorded) -> Outcome {
    let mut n = 0;
    for x in &rec.exchanges {
        let Some(p) = &x.plain else { continue };
        let s = &x.streamed;
        if s.error.is_some() || p.error.is_some() {
            continue;
        }
        n += 1;
        let differs = if s.content().trim().is_empty() != p.content().trim().is_empty() {
            Some(format!(
                "text present streamed: {}, non-streamed: {}",
                !s.content().trim().is_empty(),
                !p.content().trim().is_empty()
            ))
        } else if s.calls.len() != p.calls.len() {
            Some(format!(
                "{} call(s) streamed, {} non-streamed",
                s.calls.len(),
                p.calls.len()
            ))
        } else {
            s.calls.iter().zip(&p.calls).find_map(|(a, b)| {
                (a.name != b.name || !same_args(a, b)).then(|| {
                    format!(
                        "streamed {} {} (chunk {}), non-streamed {} {}",
                        a.name,
                        clip(&a.arguments),
                        a.chunk,
                        b.name,
                        clip(&b.arguments)
                    )
                })
            })
        };
        if let Some(d) = differs {
            let empty = s
                .empty_call_deltas
                .first()
                .map(|c| format!("; empty tool_calls delta at chunk {c}"))
                .unwrap_or_default();
            return fail(
                format!("{}: {d}{empty}", at(x, "both", None)),
                "the server's streaming path differs from its non-streaming one (the tool parser's streaming code): upgrade it, or report both answers to its maintainers",
            );
        }
    }
    if n == 0 {
        return (Status::Skip, "no request was sent both ways".into(), None);
    }
    pass(format!(
        "{n} requests agree (text, calls, names, arguments)"
    ))
}

/// Argument text cut for evidence, terminal-safe.
fn clip(text: &str) -> String {
    let clean = kimi_protocol::sanitize::for_terminal(text);
    match clean.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &clean[..i]),
        None => clean.into_owned(),
    }
}
