//! The screen the app draws on: all of the alternate screen, or the inline viewport at the
//! bottom of the normal screen (with the inspector, help, pickers and the history search on
//! the alternate screen while they are open). The event loop owns it with the terminal.

use std::io;

use ratatui::layout::{Rect, Size};

use super::frame;
use super::inline_screen::{InlineScreen, Paint};
use super::input::Input;
use super::state::App;
use super::terminal::{self, Term};
use crate::ui;

pub(crate) enum Screen {
    Full,
    Inline(InlineScreen<io::Stdout>),
}

impl Screen {
    pub(crate) fn new(inline: bool, size: Size) -> Screen {
        if inline {
            Screen::Inline(InlineScreen::new(io::stdout(), size))
        } else {
            Screen::Full
        }
    }

    pub(crate) fn is_inline(&self) -> bool {
        matches!(self, Screen::Inline(_))
    }

    /// Another program is to have the terminal (the editor, the shell after a stop): the
    /// inline viewport is cleared, so that what it writes goes where the viewport was.
    pub(crate) fn hand_over(&mut self) -> io::Result<()> {
        let Screen::Inline(s) = self else {
            return Ok(());
        };
        back_from_overlay(s)?;
        s.vacate()
    }

    /// Another program had the terminal (the editor, a stop): the next frame draws all.
    pub(crate) fn taken_back(&mut self, terminal: &mut Term) -> io::Result<()> {
        match self {
            Screen::Full => redraw_all(terminal),
            Screen::Inline(s) => {
                s.lost = true;
                s.alt = false;
                Ok(())
            }
        }
    }

    /// Draw one frame of `app` (its size already told to `update`).
    pub(crate) fn draw(
        &mut self,
        terminal: &mut Term,
        app: &mut App,
        theme: &ui::markdown::Theme,
        input: &mut Input,
    ) -> io::Result<()> {
        let size = terminal.size()?;
        let area = Rect::new(0, 0, size.width, size.height);
        let s = match self {
            Screen::Full => {
                ui::prepare(app, area, theme);
                return frame::draw(terminal, app);
            }
            Screen::Inline(s) => s,
        };
        if ui::inline::needs_full_screen(app) {
            if !s.alt {
                terminal::enter_alternate(&mut io::stdout())?;
                s.alt = true;
                redraw_all(terminal)?;
            }
            ui::prepare(app, area, theme);
            return frame::draw(terminal, app);
        }
        back_from_overlay(s)?;
        if s.lost || size != s.size() {
            input.stop();
            s.found(crossterm::cursor::position().ok(), size)?;
        }
        let rows = ui::inline::prepare(app, size.width, size.height, theme, false);
        let height = ui::inline::viewport_height(app, size.width, size.height);
        let paint = paint(app);
        let unchanged =
            || crossterm::terminal::size().is_ok_and(|(w, h)| (w, h) == (size.width, size.height));
        s.frame(
            size,
            &rows,
            paint,
            height,
            |f, a| ui::inline::draw(f, a, app),
            unchanged,
        )
    }

    /// The app is leaving: in the inline screen, what it still showed goes into the
    /// scrollback and the viewport is cleared, so the conversation stays on the screen.
    pub(crate) fn close(
        &mut self,
        terminal: &mut Term,
        app: &mut App,
        theme: &ui::markdown::Theme,
    ) -> io::Result<()> {
        let Screen::Inline(s) = self else {
            return Ok(());
        };
        back_from_overlay(s)?;
        let size = terminal.size()?;
        if s.lost || size != s.size() {
            // The input reader has stopped with the event loop.
            s.found(crossterm::cursor::position().ok(), size)?;
        }
        let rows = ui::inline::prepare(app, size.width, size.height, theme, true);
        s.close(size, &rows, paint(app))
    }
}

/// Leave an overlay's alternate screen: the normal one comes back as it was, the cursor
/// where it was parked.
fn back_from_overlay(s: &mut InlineScreen<io::Stdout>) -> io::Result<()> {
    if s.alt {
        terminal::leave_alternate(&mut io::stdout())?;
        s.alt = false;
    }
    Ok(())
}

/// Clear the (alternate) screen and have the next frame drawn whole. Not `Terminal::clear`:
/// it asks the terminal where the cursor is, which the input reader would answer.
fn redraw_all(terminal: &mut Term) -> io::Result<()> {
    let size = terminal.size()?;
    terminal.resize(Rect::new(0, 0, size.width, size.height))
}

fn paint(app: &App) -> Paint {
    Paint {
        theme: app.theme,
        no_color: app.no_color,
    }
}
