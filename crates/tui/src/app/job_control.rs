//! Job control: `kill -TSTP` (or a shell's suspend key while the terminal is cooked) stops the
//! app with the terminal given back to the shell, and `fg` (SIGCONT) takes it again and draws
//! everything anew. `Ctrl-Z` typed in the app is not this: raw mode sends it as a key (undo).

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::screen::Screen;
use super::state::App;
use super::terminal::{self, Term};

/// A job-control signal, as the event loop receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobSignal {
    /// SIGTSTP: asked to stop.
    Stop,
    /// SIGCONT: continued (after a stop of ours, or a SIGSTOP from outside).
    Continue,
}

/// SIGTSTP and SIGCONT as one stream. Catching SIGTSTP replaces its default action (stopping
/// with the terminal left raw, on the alternate screen): the loop stops the process itself.
pub(crate) fn signals() -> std::io::Result<mpsc::Receiver<JobSignal>> {
    let (tx, rx) = mpsc::channel(4);
    for (kind, what) in [
        (SignalKind::from_raw(libc::SIGTSTP), JobSignal::Stop),
        (SignalKind::from_raw(libc::SIGCONT), JobSignal::Continue),
    ] {
        let mut sig = signal(kind)?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while sig.recv().await.is_some() {
                let _ = tx.try_send(what);
            }
        });
    }
    Ok(rx)
}

/// Act on `sig`: for a stop, give the terminal back (the inline viewport cleared for the
/// shell's lines, main screen, cooked mode, keyboard flags popped, mouse off), stop until
/// continued, then take it back; for a continue, take the terminal again whatever the shell
/// did with it meanwhile. Either way the next frame is drawn whole.
pub(crate) fn handle(sig: JobSignal, term: &mut Term, screen: &mut Screen, app: &mut App) {
    let repush = match sig {
        JobSignal::Stop => {
            let given = screen.hand_over().and_then(|()| terminal::suspend());
            if let Err(e) = given {
                tracing::error!(error = %e, "cannot give the terminal back before stopping");
            }
            tracing::info!("stopped by SIGTSTP");
            // SAFETY: raise has no preconditions. SIGSTOP cannot be caught: the whole process
            // stops here, and this returns once a SIGCONT continued it.
            unsafe { libc::raise(libc::SIGSTOP) };
            true
        }
        JobSignal::Continue => false,
    };
    let taken = terminal::resume(app.mouse, !screen.is_inline(), repush)
        .and_then(|()| screen.taken_back(term));
    if let Err(e) = taken {
        tracing::error!(error = %e, repush, "cannot take the terminal back after a stop");
    }
    app.dirty = true;
}
