//! `Ctrl-R`: reverse incremental search through the prompt history, as in bash. The input shows
//! the match and its border says `(reverse-i-search)`query'`; typing narrows (from the current
//! match back), `Ctrl-R` again goes to the next older match, Backspace widens (from the newest
//! again), Enter keeps the match in the input to edit, Esc (or Ctrl-C) puts the draft back.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kimi_protocol::sanitize::one_line;
use ratatui_textarea::CursorMove;

use super::composer::new_input;
use super::keys::{Action, Context, lookup};
use super::state::App;

/// A search in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistorySearch {
    pub(crate) query: String,
    /// The input as it was: Esc restores it.
    pub(crate) draft: String,
    /// The match shown: an index into `App::history`.
    pub(crate) found: Option<usize>,
    /// The last step found nothing (bash's `failed reverse-i-search`).
    pub(crate) failed: bool,
}

/// The newest entry before `before` (exclusive) that contains `query`.
fn find(history: &[String], query: &str, before: usize) -> Option<usize> {
    (0..before.min(history.len()))
        .rev()
        .find(|&i| history[i].contains(query))
}

/// Ctrl-R in the input.
pub(super) fn start(app: &mut App) {
    let draft = app.composer.input.lines().join("\n");
    app.layers.history_search = Some(HistorySearch {
        query: String::new(),
        draft,
        found: None,
        failed: false,
    });
    show(app);
}

/// A key while searching.
pub(super) fn key(app: &mut App, k: &KeyEvent) {
    let Some(s) = app.layers.history_search.as_mut() else {
        return;
    };
    match lookup(Context::HistorySearch, k) {
        Some(Action::HistorySearchOlder) => {
            let before = s.found.unwrap_or(app.composer.history.len());
            match find(&app.composer.history, &s.query, before) {
                Some(i) => {
                    s.found = Some(i);
                    s.failed = false;
                }
                None => s.failed = true,
            }
        }
        Some(Action::DeleteHistorySearchChar) => {
            s.query.pop();
            s.found = None;
            s.failed = false;
            if !s.query.is_empty() {
                s.found = find(&app.composer.history, &s.query, app.composer.history.len());
                s.failed = s.found.is_none();
            }
        }
        Some(Action::AcceptHistorySearch) => return finish(app, true),
        Some(Action::CancelHistorySearch) => return finish(app, false),
        _ => match k.code {
            KeyCode::Char(c)
                if !k
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                s.query.push(c);
                // Narrowing: the current match is kept while it still matches.
                let before = s.found.map_or(app.composer.history.len(), |i| i + 1);
                match find(&app.composer.history, &s.query, before) {
                    Some(i) => {
                        s.found = Some(i);
                        s.failed = false;
                    }
                    None => s.failed = true,
                }
            }
            // Any other key (arrows, Tab...) keeps the match and ends the search, as in bash.
            _ => return finish(app, true),
        },
    }
    show(app);
}

/// Ctrl-C while searching: the draft comes back.
pub(super) fn cancel(app: &mut App) {
    finish(app, false);
}

/// End the search: with the match in the input (`accept`), or with the draft back.
fn finish(app: &mut App, accept: bool) {
    let Some(s) = app.layers.history_search.take() else {
        return;
    };
    let text = match s.found.and_then(|i| app.composer.history.get(i)) {
        Some(t) if accept => t.clone(),
        _ => s.draft,
    };
    app.composer.input = new_input();
    app.composer.input.insert_str(&text);
    app.composer.input.move_cursor(CursorMove::Bottom);
    app.composer.input.move_cursor(CursorMove::End);
    app.composer.history_pos = None;
}

/// The input shows the match (the draft before one is found) under a bash-like title.
fn show(app: &mut App) {
    let Some(s) = app.layers.history_search.as_ref() else {
        return;
    };
    let text = s
        .found
        .and_then(|i| app.composer.history.get(i))
        .cloned()
        .unwrap_or_else(|| s.draft.clone());
    let title = format!(
        "({}reverse-i-search)`{}': Enter keep · Esc back",
        if s.failed { "failed " } else { "" },
        one_line(&s.query, 60)
    );
    app.composer.input = new_input();
    app.composer.input.insert_str(&text);
    let block = ratatui::widgets::Block::default()
        .borders(ratatui::widgets::Borders::TOP | ratatui::widgets::Borders::BOTTOM)
        .border_style(crate::ui::style::dim())
        .title(title);
    app.composer.input.set_block(block);
}
