//! The inspector's token view on the app's side: its cursor, its keys, and the
//! `/logprobs N` command that asks the server for the data it shows.

use crossterm::event::KeyEvent;

use super::event::Effect;
use super::keys::{Action, Context, lookup};
use super::state::App;
use crate::ui::inspector_tokens_view::UNLIKELY;
use kimi_core::engine::Op;
use kimi_protocol::trace_tokens::probability;

/// Where the token view is.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct TokenCursor {
    /// The view shows tokens instead of chunks.
    pub(crate) open: bool,
    /// The selected token, by index in the trace's tokens.
    pub(crate) selected: usize,
    /// First visible line of tokens.
    pub(crate) scroll: usize,
}

/// `/logprobs [N]`: show the setting, or ask for N alternatives from the next request.
pub(crate) fn command(app: &mut App, n: Option<u8>, fx: &mut Vec<Effect>) {
    let Some(n) = n else {
        let text = match app.logprobs {
            0 => "Logprobs are off: /logprobs N asks for token ids, logprobs and N alternatives."
                .to_owned(),
            n => format!("Logprobs on: {n} alternatives per token (the inspector's t view)."),
        };
        app.notice(text, false);
        return;
    };
    app.logprobs = n;
    let text = match n {
        0 => "Logprobs off from the next request.".to_owned(),
        n => format!(
            "Logprobs on from the next request: token ids, logprobs and {n} alternatives (Ctrl-T, then t)."
        ),
    };
    app.notice(text, false);
    fx.push(Effect::Agent(Op::SetLogprobs(n)));
}

/// A key in the inspector: `true` when the token view took it.
pub(crate) fn key(app: &mut App, k: &KeyEvent) -> bool {
    if !app.layers.inspector.tokens.open {
        if lookup(Context::Inspector, k) == Some(Action::ToggleTokens) {
            app.layers.inspector.tokens = TokenCursor {
                open: true,
                ..TokenCursor::default()
            };
            return true;
        }
        return false;
    }
    let Some(action) = lookup(Context::Tokens, k) else {
        return false;
    };
    let count = app.inspected_trace().map_or(0, |(_, t)| t.tokens.len());
    let last = count.saturating_sub(1);
    let cur = app.layers.inspector.tokens.selected.min(last);
    let view = &app.layers.inspector.token_view;
    let vertical = |down: bool| {
        let p = view.pos(cur)?;
        let line = if down {
            p.line + 1
        } else {
            p.line.checked_sub(1)?
        };
        // Lines without tokens (after a newline token) are stepped over.
        (0..4)
            .filter_map(|skip| {
                let l = if down {
                    line + skip
                } else {
                    line.checked_sub(skip)?
                };
                view.token_near(l, p.col)
            })
            .next()
    };
    let next = match action {
        Action::ToggleTokens => {
            app.layers.inspector.tokens.open = false;
            return true;
        }
        Action::TokenPrev => cur.saturating_sub(1),
        Action::TokenNext => (cur + 1).min(last),
        Action::TokenUp => vertical(false).unwrap_or(cur),
        Action::TokenDown => vertical(true).unwrap_or(cur),
        Action::TokenFirst => 0,
        Action::TokenLast => last,
        Action::NextUnlikely | Action::PrevUnlikely => {
            let forward = action == Action::NextUnlikely;
            match notable(app, cur, forward) {
                Some(i) => i,
                None => {
                    app.layers.inspector.message =
                        Some("no more unlikely tokens or split markers".into());
                    cur
                }
            }
        }
        _ => return false,
    };
    app.layers.inspector.tokens.selected = next;
    true
}

/// The next token from `from` (not included) that is unlikely or part of a split marker.
fn notable(app: &App, from: usize, forward: bool) -> Option<usize> {
    let (_, trace) = app.inspected_trace()?;
    let tokens = &trace.tokens;
    let split = |i: usize| {
        app.layers
            .inspector
            .token_view
            .markers()
            .iter()
            .any(|m| m.split && m.first == i)
    };
    let hit = |i: &usize| {
        split(*i)
            || tokens
                .get(*i)
                .and_then(|t| t.logprob)
                .is_some_and(|lp| probability(lp) < UNLIKELY)
    };
    if forward {
        (from + 1..tokens.len()).find(hit)
    } else {
        (0..from).rev().find(hit)
    }
}
