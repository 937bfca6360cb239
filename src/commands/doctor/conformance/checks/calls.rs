//! The checks on calls: finish reason, arguments against the schema, duplicates, ids, and
//! whether calls came where they should.

use serde_json::Value;

use kimi_protocol::{Mode, Model};

use super::{DUPLICATE, Outcome, Status, TOOL_PARSER, answers, at, clip, fail, pass};
use crate::commands::doctor::conformance::record::{Expect, Recorded};

pub(super) fn finish_reason(rec: &Recorded) -> Outcome {
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

pub(super) fn schema(rec: &Recorded) -> Outcome {
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

pub(super) fn duplicate_calls(rec: &Recorded) -> Outcome {
    for (x, how, a) in answers(rec) {
        for (i, c) in a.calls.iter().enumerate() {
            if let Some(d) = a.calls[..i]
                .iter()
                .find(|d| d.id == c.id || (d.name == c.name && d.same_arguments(c)))
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

/// Whether `id` is `functions.NAME:IDX` for the call's `name`.
fn k2_id(id: &str, name: &str) -> bool {
    id.strip_prefix("functions.")
        .and_then(|rest| rest.rsplit_once(':'))
        .is_some_and(|(n, idx)| {
            n == name && !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit())
        })
}

pub(super) fn call_ids(rec: &Recorded) -> Outcome {
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

pub(super) fn call_expectations(rec: &Recorded) -> Outcome {
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
