//! Quitting from an empty input takes two presses: one Ctrl-C or Ctrl-D too many (meant for a
//! turn that had just ended, or a draft already cleared) must not throw the session's screen
//! away. The first press arms and says so; a second within [`QUIT_WINDOW`] quits.

use std::time::{Duration, Instant};

use super::event::Effect;
use super::state::App;

/// How long a first press waits for the second.
pub(crate) const QUIT_WINDOW: Duration = Duration::from_millis(1500);

/// Ctrl-C or Ctrl-D (`key` names it in the notice) on an empty, idle input at `app.now`.
pub(crate) fn press(app: &mut App, key: &str, fx: &mut Vec<Effect>) {
    let now = app.now;
    if armed_at(app.quit_armed, now) {
        app.quit_armed = None;
        fx.push(Effect::Quit);
        return;
    }
    app.quit_armed = Some(now);
    app.notice(format!("Press {key} again to quit."), false);
}

/// A first press at `armed` still counts at `now`.
fn armed_at(armed: Option<Instant>, now: Instant) -> bool {
    armed.is_some_and(|at| now.saturating_duration_since(at) <= QUIT_WINDOW)
}
