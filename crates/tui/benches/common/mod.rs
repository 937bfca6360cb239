//! Setup every TUI bench shares (each bench is its own crate and includes this module with
//! `mod common;`): an app as `kimi-tui` starts one, the 120x40 screen, one frame.

// Not every bench uses every helper.
#![allow(dead_code)]

use std::hint::black_box;

use kimi_core::tools::Toolbox;
use kimi_protocol::Mode;
use kimi_ui::app::state::{App, Connection};
use kimi_ui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

/// The screen every bench draws.
pub const AREA: Rect = Rect::new(0, 0, 120, 40);

/// An app with no tools and no system prompt, in raw mode.
pub fn new_app() -> App {
    let connection = Connection {
        profile: "bench".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "127.0.0.1:8000".into(),
    };
    App::new(connection, Toolbox::default(), None)
}

/// A terminal of [`AREA`]'s size.
pub fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(AREA.width, AREA.height)).expect("terminal")
}

/// One frame, as the event loop draws it: laid out, then drawn.
pub fn frame(term: &mut Terminal<TestBackend>, app: &mut App, theme: &ui::markdown::Theme) {
    ui::prepare(app, AREA, theme);
    term.draw(|f| ui::draw(f, black_box(app))).expect("draw");
}
