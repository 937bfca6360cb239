//! The retry countdown: the agent waits before sending a request again after a
//! transient failure ([`EngineEvent::RetryScheduled`](kimi_core::engine::EngineEvent)); the
//! app shows it as a line of the answer's cell and in the status bar, the event loop woken
//! when the shown second changes (and a redraw only then). `Esc` cancels the turn as
//! always, which ends the wait: the turn stops with the error shown.

use std::time::{Duration, Instant};

use kimi_core::backend::BackendError;
use kimi_protocol::sanitize;

use super::state::App;

/// A wait in progress.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RetryWait {
    /// The failure, one line, escaped.
    pub(crate) error: String,
    /// The attempt that goes out when the wait ends, and how many there may be.
    pub(crate) attempt: u32,
    pub(crate) attempts: u32,
    pub(crate) until: Instant,
    /// Which of the answer cell's warnings shows it.
    warning: Option<usize>,
    /// The seconds the cell shows now.
    shown: u64,
}

impl RetryWait {
    /// Whole seconds left, rounded up (a wait of 0.3 s shows `1 s`; over: 0).
    pub(crate) fn seconds_left(&self, now: Instant) -> u64 {
        let left = self.until.saturating_duration_since(now);
        left.as_secs() + u64::from(left.subsec_nanos() > 0)
    }

    /// When the whole seconds left next change (they are rounded up: `k` s is shown while
    /// between `k - 1` and `k` s are left); none once the wait is over.
    pub(crate) fn next_change(&self, now: Instant) -> Option<Instant> {
        let left = self.seconds_left(now);
        let shown_until = Duration::from_secs(left.checked_sub(1)?);
        self.until.checked_sub(shown_until)
    }

    /// The line of the answer's cell while it counts down.
    pub(crate) fn countdown_text(&self, now: Instant) -> String {
        format!(
            "{}; retrying in {} s (attempt {}/{}) — Esc cancels",
            self.error,
            self.seconds_left(now),
            self.attempt,
            self.attempts
        )
    }

    /// The status bar's short form.
    pub(crate) fn status_text(&self, now: Instant) -> String {
        format!(
            "retry in {} s ({}/{}) · Esc cancels",
            self.seconds_left(now),
            self.attempt,
            self.attempts
        )
    }
}

/// A retry's line once its attempt went out: the same failure again reuses it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RetryLine {
    warning: usize,
    error: String,
    attempt: u32,
}

/// Error texts are shown up to this many characters.
const ERROR_CHARS: usize = 300;

/// What failed, without advice: the line says what happens next instead.
fn failure_text(error: &BackendError) -> String {
    sanitize::one_line(&error.what_failed(), ERROR_CHARS)
}

/// The agent will try again after `wait`.
pub(super) fn scheduled(
    app: &mut App,
    error: &BackendError,
    attempt: u32,
    attempts: u32,
    wait: Duration,
    now: Instant,
) {
    let error = failure_text(error);
    // The same failure as the last attempt's: its line counts on, not one line per attempt.
    let same_line = (app.status.retried.take())
        .filter(|r| r.error == error)
        .map(|r| r.warning);
    let mut w = RetryWait {
        error,
        attempt,
        attempts,
        until: now + wait,
        warning: None,
        shown: 0,
    };
    w.shown = w.seconds_left(now);
    let text = w.countdown_text(now);
    if let Some(t) = app.current_turn() {
        match same_line.filter(|k| *k < t.warnings.len()) {
            Some(k) => {
                t.warnings[k] = text;
                w.warning = Some(k);
            }
            None => {
                t.warnings.push(text);
                w.warning = Some(t.warnings.len() - 1);
            }
        }
        t.rev += 1;
    }
    app.status.retry_wait = Some(w);
    app.dirty = true;
}

/// Time passed: the countdown moves when its second changes.
pub(crate) fn tick(app: &mut App, now: Instant) {
    let Some(w) = app.status.retry_wait.as_mut() else {
        return;
    };
    let left = w.seconds_left(now);
    if left == w.shown {
        return;
    }
    w.shown = left;
    let (text, k) = (w.countdown_text(now), w.warning);
    set_line(app, k, text);
    app.dirty = true;
}

/// The wait is over: the next attempt went out (`retried`), or the turn ended during it.
pub(super) fn ended(app: &mut App, retried: bool) {
    let Some(w) = app.status.retry_wait.take() else {
        return;
    };
    if retried && let Some(warning) = w.warning {
        app.status.retried = Some(RetryLine {
            warning,
            error: w.error.clone(),
            attempt: w.attempt,
        });
    }
    let text = if retried {
        format!(
            "{}; retried (attempt {}/{})",
            w.error, w.attempt, w.attempts
        )
    } else {
        format!(
            "{}; not retried: the turn ended before attempt {}/{}",
            w.error, w.attempt, w.attempts
        )
    };
    set_line(app, w.warning, text);
    app.dirty = true;
}

/// The round failed for good with `error`: a retry line telling the same failure is dropped,
/// the error's line says it, and the cell's header how many attempts were made.
pub(super) fn failed(app: &mut App, error: &BackendError) {
    let Some(r) = app.status.retried.take() else {
        return;
    };
    if r.error != failure_text(error) {
        return;
    }
    if let Some(t) = app.current_turn() {
        if r.warning < t.warnings.len() {
            t.warnings.remove(r.warning);
        }
        t.attempts = r.attempt;
        t.rev += 1;
    }
}

fn set_line(app: &mut App, k: Option<usize>, text: String) {
    if let Some(t) = app.current_turn()
        && let Some(line) = k.and_then(|k| t.warnings.get_mut(k))
    {
        *line = text;
        t.rev += 1;
    }
}
