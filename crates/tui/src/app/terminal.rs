//! Owning the terminal: raw mode, alternate screen (the full screen; the inline screen only
//! while an overlay is open), bracketed paste and mouse capture on the way in; all of it
//! undone on every way out, panics included.
//!
//! Without mouse capture, alternate scroll mode (DECSET 1007) is switched off too: with it on
//! (GNOME Terminal, iTerm2, Alacritty) the wheel over the alternate screen is sent as Up/Down
//! keys, which would walk the input's history instead of scrolling. The wheel then scrolls
//! nothing; PgUp/PgDn scroll the transcript.

use std::fmt;
use std::io::{self, Stdout, Write};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
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
    pub(crate) terminal: Term,
    /// The terminal took the keyboard enhancement flags: Shift-Enter reaches the app.
    pub(crate) keyboard_enhanced: bool,
    /// `theme = "auto"`: the theme the terminal's background asks for (see `background`).
    pub(crate) detected_theme: Option<crate::ui::theme::Theme>,
}

/// How long startup waits for the terminal to answer the keyboard protocol query. Terminals
/// answer in a few milliseconds (their device-attributes reply ends the wait); one that never
/// answers costs this much, not crossterm's own 2 s.
const KEYBOARD_QUERY_WAIT: Duration = Duration::from_millis(300);

/// The flags were pushed: `restore` pops them (only then: a pop the terminal never had a push
/// for would undo whatever the shell set).
static KEYBOARD_PUSHED: AtomicBool = AtomicBool::new(false);

/// The alternate screen is on: leaving it is only written then (on the normal screen, the
/// sequence would move the cursor back to where it was saved, over the inline screen's
/// conversation).
static ALTERNATE: AtomicBool = AtomicBool::new(false);

/// Whether the terminal speaks the keyboard enhancement protocol (kitty's `CSI u`), asked on a
/// helper thread so that a silent terminal cannot stall startup past [`KEYBOARD_QUERY_WAIT`].
/// Keys typed meanwhile stay in crossterm's queue for the event loop.
fn supports_keyboard_enhancement() -> bool {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("keyboard-query".into())
        .spawn(move || {
            let _ = tx.send(crossterm::terminal::supports_keyboard_enhancement());
        });
    if spawned.is_err() {
        return false;
    }
    matches!(rx.recv_timeout(KEYBOARD_QUERY_WAIT), Ok(Ok(true)))
}

/// Turn the keyboard enhancement on where the terminal has it, so that Shift-Enter arrives as
/// itself; returns whether it is on.
fn enable_keyboard_enhancement() -> bool {
    if !supports_keyboard_enhancement() {
        return false;
    }
    // Only disambiguation: key releases and the other reports would change what `update`
    // receives for every key.
    let pushed = execute!(
        io::stdout(),
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )
    .is_ok();
    KEYBOARD_PUSHED.store(pushed, Ordering::SeqCst);
    pushed
}

/// Alternate scroll mode (DECSET 1007): on, a terminal turns the wheel over the alternate
/// screen into Up/Down keys. Crossterm has no command for it.
#[derive(Debug, Clone, Copy)]
struct AlternateScroll(bool);

impl crossterm::Command for AlternateScroll {
    fn write_ansi(&self, f: &mut impl fmt::Write) -> fmt::Result {
        f.write_str(if self.0 { "\x1b[?1007h" } else { "\x1b[?1007l" })
    }

    #[cfg(windows)]
    fn execute_winapi(&self) -> io::Result<()> {
        // The Windows console has no such mode: nothing to switch.
        Ok(())
    }
}

/// The sequences that take the screen: the alternate screen (when `alternate`), bracketed
/// paste, and the mouse as `mouse` asks.
pub(crate) fn write_enter(w: &mut impl Write, mouse: bool, alternate: bool) -> io::Result<()> {
    if alternate {
        enter_alternate(w)?;
    }
    execute!(w, EnableBracketedPaste)?;
    write_mouse(w, mouse)
}

/// Switch to the alternate screen (the normal one, and its cursor, are kept as they are).
pub(crate) fn enter_alternate(w: &mut impl Write) -> io::Result<()> {
    execute!(w, EnterAlternateScreen)?;
    ALTERNATE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Back to the normal screen, if the alternate one is on.
pub(crate) fn leave_alternate(w: &mut impl Write) -> io::Result<()> {
    if ALTERNATE.swap(false, Ordering::SeqCst) {
        execute!(w, LeaveAlternateScreen)?;
    }
    Ok(())
}

/// Mouse capture on (the wheel scrolls the app), or off with alternate scroll off too (the
/// terminal selects text, and the wheel sends no arrow keys into the input).
pub(crate) fn write_mouse(w: &mut impl Write, on: bool) -> io::Result<()> {
    if on {
        execute!(w, EnableMouseCapture)
    } else {
        execute!(w, DisableMouseCapture, AlternateScroll(false))
    }
}

/// The sequences that give the screen back as the shell had it. Alternate scroll goes back on:
/// it is the terminals' default where they have the mode (a terminal without it ignores it).
pub(crate) fn write_leave(w: &mut impl Write) -> io::Result<()> {
    execute!(
        w,
        DisableMouseCapture,
        AlternateScroll(true),
        DisableBracketedPaste
    )?;
    leave_alternate(w)?;
    execute!(w, crossterm::cursor::Show)
}

fn restore() {
    if KEYBOARD_PUSHED.swap(false, Ordering::SeqCst) {
        let _ = execute!(io::stdout(), PopKeyboardEnhancementFlags);
    }
    let _ = disable_raw_mode();
    let _ = write_leave(&mut io::stdout());
}

impl TerminalGuard {
    /// Take the terminal: mouse capture only when `mouse` (off, the terminal's own selection
    /// works); the alternate screen when `alternate` (the full screen); `detect_theme` asks
    /// the terminal for its background first.
    pub(crate) fn enter(
        mouse: bool,
        alternate: bool,
        detect_theme: bool,
    ) -> io::Result<TerminalGuard> {
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
        // Before anything reads the terminal: the replies must not reach crossterm as keys.
        let detected_theme = detect_theme.then(super::background::detect);
        let mut stdout = io::stdout();
        if let Err(e) = write_enter(&mut stdout, mouse, alternate) {
            restore();
            return Err(e);
        }
        let keyboard_enhanced = enable_keyboard_enhancement();
        match Terminal::new(CrosstermBackend::new(stdout)) {
            Ok(terminal) => Ok(TerminalGuard {
                terminal,
                keyboard_enhanced,
                detected_theme,
            }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

// `/mouse` and `Ctrl-G` (the editor gets the terminal).

/// Mouse capture on (the wheel scrolls the app) or off (the terminal selects text).
pub(crate) fn set_mouse(on: bool) -> io::Result<()> {
    write_mouse(&mut io::stdout(), on)
}

/// Hand the terminal to another program (the editor): the main screen, cooked mode, no mouse,
/// paste or keyboard flags. The caller has stopped the input reader.
pub(crate) fn suspend() -> io::Result<()> {
    if KEYBOARD_PUSHED.load(Ordering::SeqCst) {
        execute!(io::stdout(), PopKeyboardEnhancementFlags)?;
    }
    write_leave(&mut io::stdout())?;
    disable_raw_mode()
}

/// Take the terminal back as [`TerminalGuard::enter`] had it (the screen then draws its next
/// frame whole): after [`suspend`], or after the process was continued (the shell may have set
/// its own modes meanwhile). The keyboard flags are pushed again when `repush` (after
/// [`suspend`] popped them). Nothing is read from the terminal: the input reader may still
/// hold it.
pub(crate) fn resume(mouse: bool, alternate: bool, repush: bool) -> io::Result<()> {
    enable_raw_mode()?;
    write_enter(&mut io::stdout(), mouse, alternate)?;
    if repush && KEYBOARD_PUSHED.load(Ordering::SeqCst) {
        execute!(
            io::stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
    }
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}
