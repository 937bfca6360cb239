//! Owning the terminal: raw mode, alternate screen, bracketed paste and mouse capture on the
//! way in; all of it undone on every way out, panics included.

use std::io::{self, Stdout};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal when dropped.
pub(crate) struct TerminalGuard {
    pub terminal: Term,
}

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

impl TerminalGuard {
    pub fn enter() -> io::Result<TerminalGuard> {
        // A panic on this thread ends the app: it must leave a usable shell behind, so restore
        // first, then report. A panic on another thread (a task's: the turn's is caught and
        // reported as a failed turn) leaves the app running: the screen stays as it is, and
        // the panic goes to the log rather than over the drawing.
        let owner = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == owner {
                restore();
                // Also in the log: the screen's copy is gone once the shell scrolls.
                tracing::error!(panic = %info, "panic: the app stops");
                previous(info);
            } else {
                kimi_core::logging::task_panicked(&info.to_string());
            }
        }));
        enable_raw_mode()?;
        let mut stdout = io::stdout();
        if let Err(e) = execute!(
            stdout,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableMouseCapture
        ) {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}
