mod app_defects;
mod app_elicit;
mod app_go_back;
mod app_history;
mod app_mcp;
mod app_resume_replay;
mod app_sessions;
mod app_sessions_picker;
mod app_switch_limits;
mod app_text_out;
mod app_update;
mod inspector_k3;
mod reasoning_cell;
mod recorded;
mod sessions_listing;
mod token_view;
mod transcript_view;
mod ui_snapshots;

use std::time::{Duration, Instant};

use kimi_ui::app::event::{AppEvent, Effect};
use kimi_ui::app::state::App;

/// `update` at the instant of the event before: in these tests time stands still unless a
/// test makes it pass with [`update_after`].
fn update(app: &mut App, event: AppEvent) -> Vec<Effect> {
    let now = app.now;
    kimi_ui::app::update::update(app, event, now)
}

/// `update` with an event `later` after the one before.
fn update_after(app: &mut App, later: Duration, event: AppEvent) -> Vec<Effect> {
    let now: Instant = app.now + later;
    kimi_ui::app::update::update(app, event, now)
}

/// One frame of `app` at `w`x`h`, laid out and drawn as the event loop does: the screen.
fn drawn(app: &mut kimi_ui::app::state::App, w: u16, h: u16) -> ratatui::buffer::Buffer {
    use kimi_ui::ui;
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).expect("terminal");
    ui::prepare(
        app,
        ratatui::layout::Rect::new(0, 0, w, h),
        &ui::markdown::Theme::default(),
    );
    term.draw(|f| ui::draw(f, app)).expect("draw");
    term.backend().buffer().clone()
}
