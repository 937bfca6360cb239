mod app_defects;
mod app_elicit;
mod app_go_back;
mod app_history;
mod app_mcp;
mod app_sessions;
mod app_sessions_picker;
mod app_switch_limits;
mod app_text_out;
mod app_update;
mod inspector_k3;
mod reasoning_cell;
mod token_view;
mod transcript_view;
mod ui_snapshots;

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
