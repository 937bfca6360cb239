//! What thinking costs, request by request, gathered from the traces: the usage the server
//! reported (with its prefix-cache hit and reasoning tokens), the earlier reasoning the prompt
//! re-sent and the tokens the server counted for it when it generated those answers, and
//! whether the prompt still extends the request before it. Read by the inspector and `/usage`.

use kimi_protocol::prompt_diff::{self, PromptDiff};
use kimi_protocol::reasoning_resent::{self, Measured, ReasoningResent};
use kimi_protocol::{Trace, Usage};

use super::state::App;

/// One request's figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestCost {
    /// The user turn it belongs to, from 1.
    pub(crate) turn: usize,
    pub(crate) usage: Option<Usage>,
    pub(crate) resent: Option<ReasoningResent>,
    /// The carried reasoning's tokens, as the server counted them for each answer carried;
    /// `None` unless it did for all of them.
    pub(crate) resent_tokens: Option<u64>,
}

/// A prompt that does not extend the one before: the prefix cache cannot hit past where they
/// differ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CacheBreak {
    /// The first differing byte of what was compared, and the old length; `None` when the
    /// chat messages still extend the ones before but this client's render of them does not.
    pub(crate) at: Option<(usize, usize)>,
    /// Earlier answers whose reasoning the previous prompt carried and this one does not;
    /// `None` when the reasoning of either prompt was not measured.
    pub(crate) dropped: Option<Vec<u32>>,
}

/// The message trace `i` produced (a trace still streaming: the next one).
fn message_of(app: &App, i: usize) -> usize {
    app.trace_messages
        .get(i)
        .copied()
        .unwrap_or(app.conversation.len())
}

/// The figures of request `i` (an index in `app.traces`).
pub(crate) fn request(app: &App, i: usize) -> RequestCost {
    let m = message_of(app, i).min(app.conversation.len());
    let turn = app.conversation[..m]
        .iter()
        .filter(|msg| msg.role == "user")
        .count()
        .max(1);
    let (usage, resent) = match app.traces.get(i) {
        Some(t) => {
            let t = t.read();
            (t.usage, t.reasoning_resent.clone())
        }
        None => (None, None),
    };
    let resent_tokens = resent.as_ref().and_then(|r| {
        reasoning_resent::tokens(&r.carried, |msg| {
            // The request whose answer message `msg` is.
            let by = app
                .trace_messages
                .iter()
                .rposition(|&tm| tm == msg as usize)?;
            app.traces.get(by)?.read().usage?.reasoning_tokens
        })
    });
    RequestCost {
        turn,
        usage,
        resent,
        resent_tokens,
    }
}

/// Why the prompt of `now` does not extend that of `before`, if it does not (`None` also for
/// two requests in different modes, which are not compared). Chat messages that extend the
/// ones before still break the server's cache when its template drops earlier reasoning: that
/// is judged on this client's render of them.
pub(crate) fn cache_break(before: &Trace, now: &Trace) -> Option<CacheBreak> {
    let dropped = dropped(before, now);
    match prompt_diff::between(before, now)? {
        PromptDiff::Changed(c) => Some(CacheBreak {
            at: Some((c.offset, c.old_len)),
            dropped,
        }),
        PromptDiff::Same | PromptDiff::Append { .. } => {
            let rendered = dropped.filter(|d| !d.is_empty() && rendered_by_client(now))?;
            Some(CacheBreak {
                at: None,
                dropped: Some(rendered),
            })
        }
    }
}

/// Whether `trace`'s reasoning was measured on this client's render (chat mode).
pub(crate) fn rendered_by_client(trace: &Trace) -> bool {
    trace
        .reasoning_resent
        .as_ref()
        .is_some_and(|r| r.measured == Measured::ClientRender)
}

/// The earlier answers whose reasoning `before`'s prompt carried and `now`'s does not; `None`
/// when either was not measured (an old trace, a replayed request).
pub(crate) fn dropped(before: &Trace, now: &Trace) -> Option<Vec<u32>> {
    match (&before.reasoning_resent, &now.reasoning_resent) {
        (Some(b), Some(n)) => Some(reasoning_resent::dropped(b, n)),
        _ => None,
    }
}

/// Every request's figures, and whether its prompt broke the cache against the one before.
pub(crate) fn all(app: &App) -> Vec<(RequestCost, Option<CacheBreak>)> {
    (0..app.traces.len())
        .map(|i| {
            let broke = i.checked_sub(1).and_then(|p| {
                let (before, now) = (app.traces[p].read(), app.traces[i].read());
                cache_break(&before, &now)
            });
            (request(app, i), broke)
        })
        .collect()
}

/// `part` as a whole percentage of `whole`; `None` of nothing. Saturating: a server's
/// figures are not trusted to be sane.
pub(crate) fn percent(part: u64, whole: u64) -> Option<u64> {
    (whole > 0).then(|| part.saturating_mul(100) / whole)
}

/// Why the cache cannot hit, in words: the reasoning dropped when that is what changed.
pub(crate) fn why(dropped: Option<&[u32]>) -> String {
    let Some(dropped) = dropped else {
        return "not known: the reasoning the prompts carry was not measured for both requests"
            .to_owned();
    };
    match dropped {
        [] => {
            "not the reasoning carried: the tools, the system prompt or an earlier message changed"
                .to_owned()
        }
        [m] => {
            format!("the reasoning of an earlier answer (message {m}) is no longer in the prompt")
        }
        many => format!(
            "the reasoning of earlier answers (messages {}) is no longer in the prompt",
            many.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
