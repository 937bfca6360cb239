//! Drawing one frame as the event loop does: the whole frame between the begin and end of a
//! synchronized update (DEC mode 2026), so a terminal that knows the mode shows it at once
//! rather than half drawn (over SSH, in tmux); terminals that do not know the mode ignore it.

use std::io::{self, Write};

use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::state::App;
use crate::ui;

/// Draw `app` (prepared by `ui::prepare`) as one synchronized update.
pub(crate) fn draw<W: Write>(
    terminal: &mut Terminal<CrosstermBackend<W>>,
    app: &App,
) -> io::Result<()> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    let drawn = terminal.draw(|f| ui::draw(f, app)).map(drop);
    // Ended even when the draw failed: a terminal left inside the update would show nothing
    // more until its own timeout.
    let ended = execute!(terminal.backend_mut(), EndSynchronizedUpdate);
    drawn.and(ended)
}
