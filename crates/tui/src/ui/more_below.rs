//! The "more below" marker: while the transcript is scrolled up from its end (text may be
//! streaming in below, out of sight), its last row says so and names the key back down.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::style;
use crate::app::state::App;

/// The key back to the end, as the input's key table binds it: `End` on an empty input,
/// `Ctrl-End` whatever the input holds (End alone moves the cursor there).
fn jump_key(input_empty: bool) -> &'static str {
    if input_empty { "End" } else { "Ctrl-End" }
}

/// The marker's row for the transcript `area`, when there is text below the view.
pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if app.transcript.scroll_from_bottom == 0 || area.height == 0 {
        return;
    }
    let row = Rect {
        y: area.bottom() - 1,
        height: 1,
        ..area
    };
    Clear.render(row, buf);
    Line::from(vec![
        Span::styled("↓ more below · ", style::accent()),
        Span::styled(jump_key(app.composer.input.is_empty()), style::key()),
        Span::styled(" to jump back", style::accent()),
    ])
    .render(row, buf);
}

#[cfg(test)]
mod tests {
    use super::jump_key;
    use crate::app::keys::{Action, Context, lookup};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    /// The key the marker names is the one the input's table binds to the end.
    #[test]
    fn the_named_key_jumps_to_the_bottom() {
        let end = KeyEvent::new(KeyCode::End, KeyModifiers::NONE);
        let ctrl_end = KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL);
        assert_eq!(jump_key(true), "End");
        assert_eq!(lookup(Context::Input, &end), Some(Action::Bottom));
        assert_eq!(jump_key(false), "Ctrl-End");
        assert_eq!(lookup(Context::Input, &ctrl_end), Some(Action::Bottom));
    }
}
