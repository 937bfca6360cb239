//! How full the context window is, for the status bar's gauge.
//!
//! Used: the last request's `prompt_tokens + completion_tokens` from the server's `usage`.
//! When the server sent none since the conversation last changed shape (a resumed session,
//! `/retry`, a server without usage), an estimate: the conversation's text in bytes / 4, plus
//! 4 tokens per message for the template's markers — about right for English, low for CJK
//! (about one token per character); the gauge marks it `~`.
//! The window: the profile's `context_window`, else the `max_model_len` (or `context_length`)
//! the server lists for the model in `/models`; unknown: the gauge shows only what is used.

use kimi_protocol::message::Content;
use kimi_protocol::{Message, Usage};

use super::state::App;

/// At this share of the window the gauge turns to the warning style and a notice is shown
/// once (again only after it went back below, e.g. after `/clear`).
pub(crate) const WARN_PERCENT: u64 = 80;

/// What the gauge knows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ContextGauge {
    /// The model's context length in tokens, if known.
    pub(crate) window: Option<u64>,
    /// Where `window` came from, for `/model`'s listing: the profile's `context_window` wins.
    pub(crate) window_from_profile: bool,
    /// Prompt + completion tokens of the last request, from its `usage`.
    pub(crate) measured: Option<u64>,
    /// The warning notice was shown for this crossing of [`WARN_PERCENT`].
    pub(crate) warned: bool,
}

/// Tokens in the window now, and whether that is an estimate. `None` before anything was
/// sent or measured.
pub(crate) fn used(app: &App) -> Option<(u64, bool)> {
    if let Some(m) = app.status.context.measured {
        return Some((m, false));
    }
    let estimate = estimate(&app.conversation);
    (estimate > 0).then_some((estimate, true))
}

/// The conversation's size in tokens, roughly (see the module's doc).
pub(crate) fn estimate(conversation: &[Message]) -> u64 {
    conversation
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.function.name.len() + c.function.arguments.len())
                .sum();
            let text = content_len(m) + m.reasoning_content.as_ref().map_or(0, String::len);
            ((text + calls) as u64).div_ceil(4) + 4
        })
        .sum()
}

/// The bytes of a message's text, without copying it (this runs for every frame).
fn content_len(m: &Message) -> usize {
    match &m.content {
        None => 0,
        Some(Content::Text(s)) => s.len(),
        Some(Content::Parts(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(serde_json::Value::as_str))
            .map(str::len)
            .sum(),
    }
}

/// Share of the window used, in percent (may exceed 100).
pub(crate) fn percent(used: u64, window: u64) -> u64 {
    if window == 0 {
        return 0;
    }
    used.saturating_mul(100) / window
}

/// `532`, `5.3k`, `53k`, `1.2M`: token counts as the gauge shows them.
pub(crate) fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..1_000_000 => format!("{}k", (n + 500) / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// The gauge's text (`ctx 41% 53k/128k`, `ctx ~12% ~15k/128k` for an estimate, `ctx 53k`
/// when the window is unknown) and whether it warns; `None` when there is nothing to show.
pub(crate) fn label(app: &App) -> Option<(String, bool)> {
    let (used, estimated) = used(app).unwrap_or((0, false));
    let approx = if estimated { "~" } else { "" };
    match app.status.context.window {
        Some(w) => {
            let pct = percent(used, w);
            Some((
                format!("ctx {approx}{pct}% {approx}{}/{}", tokens(used), tokens(w)),
                pct >= WARN_PERCENT,
            ))
        }
        None if used > 0 => Some((format!("ctx {approx}{}", tokens(used)), false)),
        None => None,
    }
}

/// A request's usage arrived: it is what the window holds now.
pub(super) fn usage(app: &mut App, u: &Usage) {
    app.status.context.measured = Some(u.prompt_tokens + u.completion_tokens);
    check(app);
}

/// The conversation changed shape (cleared, truncated, another model): the last measure no
/// longer describes it.
pub(super) fn forget_measure(app: &mut App) {
    app.status.context.measured = None;
    check(app);
}

/// Show the warning once per crossing of [`WARN_PERCENT`].
pub(super) fn check(app: &mut App) {
    let (Some(window), Some((used, _))) = (app.status.context.window, used(app)) else {
        app.status.context.warned = false;
        return;
    };
    let pct = percent(used, window);
    if pct < WARN_PERCENT {
        app.status.context.warned = false;
        return;
    }
    if app.status.context.warned {
        return;
    }
    app.status.context.warned = true;
    app.notice(
        format!(
            "The context window is {pct}% full ({} of {} tokens): older messages may soon not fit; /clear starts a new conversation.",
            tokens(used),
            tokens(window)
        ),
        true,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_short() {
        assert_eq!(tokens(0), "0");
        assert_eq!(tokens(999), "999");
        assert_eq!(tokens(5_300), "5.3k");
        assert_eq!(tokens(53_400), "53k");
        assert_eq!(tokens(131_072), "131k");
        assert_eq!(tokens(1_048_576), "1.0M");
        assert_eq!(percent(41, 100), 41);
        assert_eq!(percent(5, 0), 0);
    }

    #[test]
    fn the_estimate_counts_text_calls_and_a_few_tokens_per_message() {
        let m = vec![Message::user("x".repeat(400)), Message::assistant("")];
        assert_eq!(estimate(&m), 100 + 4 + 4);
    }
}
