//! What thinking costs in the prompt: the bytes of earlier answers' reasoning a request's prompt
//! carries, and which answers they came from. Templates disagree on it (K2-Thinking and K2.5
//! drop the reasoning of answers up to the last plain one, K2.6 with `preserve_thinking` and K3
//! keep it all), so it is measured, not assumed: the same messages are rendered with and
//! without their reasoning and the difference is what the prompt carries. Pure: the caller
//! passes the renderer.

use serde::{Deserialize, Serialize};

use crate::message::Message;

/// Which prompt the measure was taken on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    /// The prompt sent (raw mode): exact.
    #[default]
    Sent,
    /// This client's render of the messages sent (chat mode): the server renders its own.
    ClientRender,
}

/// The reasoning one request's prompt re-sends.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReasoningResent {
    /// Bytes of earlier reasoning in the prompt.
    pub bytes: u64,
    /// The assistant messages (indexes in the request's messages) whose reasoning it carries.
    pub carried: Vec<u32>,
    /// Messages in the request: a later request compares only the ones both have.
    pub messages: u32,
    pub measured: Measured,
}

/// Stands in for one message's reasoning to find where the template put it: private-use
/// characters no template writes.
fn stand_in(i: usize) -> String {
    format!("{STAND_IN}{i}\u{F8FF}")
}

const STAND_IN: &str = "\u{F8FF}kimi-reasoning-";

/// The messages whose stand-ins `prompt` holds, in one pass over it (a search per message
/// would cost the prompt's length for each answer).
fn stand_ins(prompt: &str) -> std::collections::HashSet<usize> {
    prompt
        .match_indices(STAND_IN)
        .filter_map(|(at, _)| {
            let rest = &prompt[at + STAND_IN.len()..];
            let (digits, _) = rest.split_once('\u{F8FF}')?;
            digits.parse().ok()
        })
        .collect()
}

/// Measure what `render` puts in the prompt of the reasoning of `messages`. `sent` is the
/// prompt already rendered from them (raw mode), else it is rendered here. `None` when the
/// renderer refuses the messages.
pub fn measure(
    messages: &[Message],
    sent: Option<&str>,
    measured: Measured,
    render: impl Fn(&[Message]) -> Option<String>,
) -> Option<ReasoningResent> {
    let count = u32::try_from(messages.len()).unwrap_or(u32::MAX);
    let thought: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.role == "assistant" && m.reasoning_content.as_ref().is_some_and(|r| !r.is_empty())
        })
        .map(|(i, _)| i)
        .collect();
    let none = ReasoningResent {
        bytes: 0,
        carried: Vec::new(),
        messages: count,
        measured,
    };
    if thought.is_empty() {
        return Some(none);
    }
    let with = match sent {
        Some(p) => p.len(),
        None => render(messages)?.len(),
    };
    let without = render(&replaced(messages, &thought, |_| None))?.len();
    let bytes = with.saturating_sub(without);
    if bytes == 0 {
        return Some(none);
    }
    // Where each reasoning went: one render with a stand-in for each.
    let marked = stand_ins(&render(&replaced(messages, &thought, |i| {
        Some(stand_in(i))
    }))?);
    let mut carried: Vec<usize> = thought
        .iter()
        .copied()
        .filter(|i| marked.contains(i))
        .collect();
    let sum: usize = carried.iter().map(|&i| reasoning_len(&messages[i])).sum();
    if sum != bytes {
        // A template that writes a stand-in but not the real text (K3 skips blank reasoning):
        // ask for each blank one (only those can be left out so; a render each).
        carried.retain(|&i| {
            let blank = messages[i]
                .reasoning_content
                .as_deref()
                .is_none_or(|r| r.trim().is_empty());
            !blank || render(&replaced(messages, &[i], |_| None)).is_some_and(|p| p.len() < with)
        });
    }
    Some(ReasoningResent {
        bytes: bytes as u64,
        carried: carried
            .into_iter()
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect(),
        messages: count,
        measured,
    })
}

fn reasoning_len(m: &Message) -> usize {
    m.reasoning_content.as_ref().map_or(0, String::len)
}

/// `messages` with the reasoning of those at `which` replaced by `with(index)`.
fn replaced(
    messages: &[Message],
    which: &[usize],
    with: impl Fn(usize) -> Option<String>,
) -> Vec<Message> {
    let mut out = messages.to_vec();
    for &i in which {
        out[i].reasoning_content = with(i);
    }
    out
}

/// The reasoning of earlier answers `prev` carried that `cur` no longer does (among the
/// messages both requests have): why a prompt stopped extending the one before.
pub fn dropped(prev: &ReasoningResent, cur: &ReasoningResent) -> Vec<u32> {
    prev.carried
        .iter()
        .copied()
        .filter(|i| *i < cur.messages && !cur.carried.contains(i))
        .collect()
}

/// The tokens of the carried reasoning, as the server counted them when it generated each
/// answer (`reported(message)`): `None` unless it reported every one of them.
pub fn tokens(carried: &[u32], reported: impl Fn(u32) -> Option<u64>) -> Option<u64> {
    // Saturating: a server's counts are not trusted to be sane.
    carried
        .iter()
        .try_fold(0u64, |sum, &m| Some(sum.saturating_add(reported(m)?)))
}

#[cfg(test)]
mod tests;
