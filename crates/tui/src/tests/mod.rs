mod app_answer_edit;
mod app_defects;
mod app_elicit;
mod app_go_back;
mod app_history;
mod app_mcp;
mod app_newcomer;
mod app_resume_replay;
mod app_resume_switch;
mod app_rules;
mod app_sessions;
mod app_sessions_picker;
mod app_slash;
mod app_switch_limits;
mod app_text_out;
mod app_update;
mod app_wake;
mod inline_rows;
mod inspector_chat_events;
mod inspector_k3;
mod narrow_screens;
mod reasoning_cell;
mod recorded;
mod screen_bytes;
mod session_journal;
mod sessions_listing;
mod terminal_bytes;
mod thinking_cost;
mod thinking_cost_loopback;
mod token_view;
mod transcript_view;
mod ui_snapshots;

use std::time::{Duration, Instant};

use crate::app::event::{AppEvent, Effect};
use crate::app::state::App;

/// `update` at the instant of the event before: in these tests time stands still unless a
/// test makes it pass with [`update_after`].
fn update(app: &mut App, event: AppEvent) -> Vec<Effect> {
    let now = app.now;
    with_core(app, event, now)
}

/// The agent's round ends: stopped, no error, not cancelled.
fn round_finished(app: &mut App) {
    use kimi_core::engine::EngineEvent;
    update(
        app,
        AppEvent::Engine(EngineEvent::RoundFinished {
            round: 1,
            finish: "stop".into(),
            error: None,
            cancelled: false,
        }),
    );
}

/// `update` with an event `later` after the one before.
fn update_after(app: &mut App, later: Duration, event: AppEvent) -> Vec<Effect> {
    let now: Instant = app.now + later;
    with_core(app, event, now)
}

/// `update`, with what the core's supervisor answers from the toolbox alone fed back at once,
/// as it does (from the same toolbox the app was built with): the check of a streamed call's
/// arguments after its `ToolCallEnd`, and the answers to `CheckArguments` and `ToolsReport`.
/// The effects returned are every round's.
fn with_core(app: &mut App, event: AppEvent, now: Instant) -> Vec<Effect> {
    use kimi_core::engine::{EngineEvent, toolbox_answer};
    use kimi_protocol::StreamEvent;
    let ended = match &event {
        AppEvent::Engine(EngineEvent::Stream(StreamEvent::ToolCallEnd { index })) => Some(*index),
        _ => None,
    };
    let mut fx = crate::app::update::update(app, event, now);
    if let Some(index) = ended {
        let call = (app.current_turn())
            .and_then(|t| t.panes.iter().find(|p| p.index == index))
            .map(|p| (p.name.clone(), p.arguments.clone()));
        if let Some((name, arguments)) = call {
            let problem = app.toolbox.check_call(&name, &arguments).err();
            let checked = EngineEvent::CallChecked { index, problem };
            fx.extend(with_core(app, AppEvent::Engine(checked), now));
        }
    }
    let answers: Vec<EngineEvent> = (fx.iter())
        .filter_map(|f| match f {
            Effect::Agent(op) => toolbox_answer(&app.toolbox, op.clone()),
            _ => None,
        })
        .collect();
    for answer in answers {
        fx.extend(with_core(app, AppEvent::Engine(answer), now));
    }
    fx
}

/// One frame of `app` at `w`x`h`, laid out and drawn as the event loop does: the screen.
fn drawn(app: &mut crate::app::state::App, w: u16, h: u16) -> ratatui::buffer::Buffer {
    use crate::ui;
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
