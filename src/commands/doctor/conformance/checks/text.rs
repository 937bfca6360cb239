//! The checks on the rest of an answer: errors, marker text, reasoning, usage, special tokens,
//! and streamed against non-streamed.

use kimi_protocol::{Mode, Template};

use super::{
    BYTES_PER_TOKEN, GROWTH_TOLERANCE, Outcome, REASONING_PARSER, SKIP_SPECIAL, Status,
    TOOL_PARSER, answers, at, clip, fail, pass,
};
use crate::commands::doctor::conformance::record::{Answer, Expect, Recorded};
use crate::commands::doctor::conformance::requests;
use kimi_protocol::tokens::Marker;

pub(super) fn answered(rec: &Recorded) -> Outcome {
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

pub(super) fn leaked_markers(rec: &Recorded) -> Outcome {
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

/// Raw mode: the reasoning never closed, so what should have been the answer stayed in it
/// (K2: no `</think>` after reasoning; K3: the parser recovered a think channel that was not
/// closed or was skipped). Chat mode cannot tell (the server's reasoning parser decides): an
/// answer left in the reasoning there shows as `empty_answer`.
fn unclosed(rec: &Recorded, a: &Answer) -> Option<usize> {
    if rec.mode != Mode::Raw || a.error.is_some() {
        return None;
    }
    if let Some((chunk, _)) = a.warnings.iter().find(|(_, w)| w.contains("think channel")) {
        return Some(*chunk);
    }
    let closed = a.markers.iter().any(|(_, m)| *m == Marker::ThinkEnd);
    let k2 = Template::for_model(&rec.model) != Template::K3;
    match a.reasoning.first() {
        Some((chunk, _)) if k2 && !closed => Some(*chunk),
        _ => None,
    }
}

pub(super) fn think_close(rec: &Recorded) -> Outcome {
    if !rec.thinks {
        return (Status::Skip, "the model does not think".into(), None);
    }
    if rec.mode == Mode::Chat {
        return (
            Status::Skip,
            "chat mode: the server's reasoning parser closes the reasoning (an answer left in \
             it shows as empty_answer)"
                .into(),
            None,
        );
    }
    // Streamed answers: their markers are recorded as they came (stream_agreement compares
    // the non-streamed ones).
    for x in &rec.exchanges {
        let (how, a) = ("streamed", &x.streamed);
        if let Some(chunk) = unclosed(rec, a) {
            return fail(
                format!("{}: the reasoning never closed", at(x, how, Some(chunk))),
                THINK_CLOSE_HINT,
            );
        }
    }
    pass("every reasoning closed before the answer")
}

/// A streamed answer without text or a call (the model stopped after its reasoning, or the
/// server lost the answer). One whose reasoning never closed is `think_close`'s; a
/// non-streamed answer that differs is `stream_agreement`'s.
pub(super) fn empty_answer(rec: &Recorded) -> Outcome {
    let mut n = 0;
    for x in &rec.exchanges {
        let (how, a) = ("streamed", &x.streamed);
        if a.error.is_some() || unclosed(rec, a).is_some() {
            continue;
        }
        n += 1;
        let text = a.text.iter().any(|(_, t)| !t.trim().is_empty());
        if !text && a.calls.is_empty() {
            let after = a.reasoning.last().map(|(c, _)| *c);
            return fail(
                format!(
                    "{}: neither text nor a call{}",
                    at(x, how, after),
                    if after.is_some() {
                        " after the reasoning"
                    } else {
                        ""
                    }
                ),
                EMPTY_HINT,
            );
        }
    }
    pass(format!("{n} answers hold text or a call"))
}

const THINK_CLOSE_HINT: &str = "the completion never closed the reasoning: check the chat template the server renders (the model's own, current one) and that it keeps Kimi's special tokens (skip_special_tokens: false)";
const EMPTY_HINT: &str = "the model ended right after its reasoning (K2.6 after a tool result: an <|im_end|> after </think>); serve the model's current chat template and generation config, and with a reasoning parser check it hands the answer on";

pub(super) fn reasoning_field(rec: &Recorded) -> Outcome {
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

pub(super) fn usage(rec: &Recorded) -> Outcome {
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

pub(super) fn usage_growth(rec: &Recorded) -> Outcome {
    let pair = rec
        .exchanges
        .iter()
        .zip(rec.exchanges.iter().skip(1))
        .find(|(a, b)| a.request == requests::WEATHER && b.request == requests::TOOL_RESULT);
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

pub(super) fn special_tokens(rec: &Recorded) -> Outcome {
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

pub(super) fn stream_agreement(rec: &Recorded) -> Outcome {
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
                (a.name != b.name || !a.same_arguments(b)).then(|| {
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
