//! `/mouse` (and its key) and `/theme`: how the app meets the terminal.

use super::event::Effect;
use super::state::App;
use crate::ui::theme::Theme;

/// Wheel scrolling on, off, or (`None`) the other way round. The event loop switches the
/// terminal's mouse capture.
pub(crate) fn mouse(app: &mut App, on: Option<bool>, fx: &mut Vec<Effect>) {
    let on = on.unwrap_or(!app.mouse);
    app.dirty = true;
    if on == app.mouse {
        let state = if on { "already on" } else { "already off" };
        return app.notice(format!("Wheel scrolling is {state}."), false);
    }
    app.mouse = on;
    fx.push(Effect::Mouse(on));
    app.notice(
        if on {
            "Wheel scrolling on: the wheel scrolls the transcript; hold Shift to select text (F3 or /mouse off to stop)."
        } else {
            "Wheel scrolling off: the terminal selects and copies text as usual (F3 or /mouse on for the wheel)."
        },
        false,
    );
}

/// `/theme dark|light`, or (`None`) say which one is in use.
pub(crate) fn theme(app: &mut App, theme: Option<Theme>) {
    app.dirty = true;
    match theme {
        None => app.notice(
            format!(
                "Theme: {} (/theme dark|light; `theme` in the config file sets the default, auto by default).",
                app.theme.name()
            ),
            false,
        ),
        Some(t) => {
            app.theme = t;
            app.notice(format!("Theme: {}.", t.name()), false);
        }
    }
}
