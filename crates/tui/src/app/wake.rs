//! What time alone changes on screen, and when. The event loop has no ticker: it sleeps until
//! input, an agent event, a background answer or the deadline [`App::next_wake`] gives, and
//! an app with nothing animated asks for none (an idle program does not wake at all). When
//! the deadline comes the loop sends `AppEvent::Tick`, and [`tick`] brings up to date what
//! moved.

use std::time::{Duration, Instant};

use super::state::{App, PaneState};
use super::status_line::Activity;
use crate::ui::tool_pane::SPINNER_STEP;

/// While an answer streams, the status bar's rate (tokens a second) is refreshed this often
/// when no token comes to redraw it.
pub(crate) const RATE_STEP: Duration = Duration::from_secs(1);

impl App {
    /// The next instant at which time alone changes what is shown: a running call's spinner,
    /// a thinking model's timer, a retry's countdown, the streaming rate. None when nothing
    /// on screen moves with the clock.
    pub(crate) fn next_wake(&self, now: Instant) -> Option<Instant> {
        let turn = self.transcript.turn();
        let spinner = turn
            .into_iter()
            .flat_map(|t| &t.panes)
            .filter_map(|p| match p.state {
                PaneState::Running { since } => Some(next_step(since, now, SPINNER_STEP)),
                _ => None,
            })
            .min();
        let thinking = turn.and_then(|t| t.reasoning.next_tick(now));
        let retry = self
            .status
            .retry_wait
            .as_ref()
            .and_then(|w| w.next_change(now));
        let rate = match self.status.activity {
            Activity::Streaming { since, .. } => Some(next_step(since, now, RATE_STEP)),
            _ => None,
        };
        [spinner, thinking, retry, rate].into_iter().flatten().min()
    }
}

/// The first instant after `now` that is a whole number of `step`s after `since`.
pub(crate) fn next_step(since: Instant, now: Instant, step: Duration) -> Instant {
    let elapsed = now.saturating_duration_since(since).as_nanos();
    let step_ns = step.as_nanos().max(1);
    let into = u64::try_from(elapsed % step_ns).unwrap_or(0);
    now.max(since) + (step - Duration::from_nanos(into))
}

/// The deadline came (`app.now` is its time): what moves with the clock is brought up to
/// date, and a frame asked for only when something shown changed.
pub(crate) fn tick(app: &mut App) {
    let now = app.now;
    // Also done when the MCP hub reports a change; kept here for any other wake.
    super::elicit::drop_abandoned(app);
    super::reasoning_update::tick(app, now);
    super::retry::tick(app, now);
    if let Some(t) = app.current_turn()
        && t.panes
            .iter()
            .any(|p| matches!(p.state, PaneState::Running { .. }))
    {
        t.rev += 1;
        app.dirty = true;
    }
    if matches!(app.status.activity, Activity::Streaming { .. }) {
        app.dirty = true;
    }
}
