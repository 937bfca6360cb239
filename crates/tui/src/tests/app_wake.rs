//! The deadlines the app asks the event loop for: none while nothing on screen moves with the
//! clock, one at the rate of what does (a running call's spinner, a retry's countdown, a
//! thinking model's timer, the streaming rate) while it is shown.

use std::time::Duration;

use super::app_switch_limits::retry_scheduled;
use super::app_update::{app, ask, ctrl, key};
use super::{round_finished, update, update_after};
use crate::app::event::AppEvent;
use crate::app::state::{App, Entry, PaneState};
use crossterm::event::KeyCode;
use kimi_core::engine::EngineEvent;
use kimi_core::tools::{ToolResult, ToolStatus};
use kimi_protocol::{StreamEvent, ToolCall};

const MS: Duration = Duration::from_millis(1);

fn engine(app: &mut App, e: EngineEvent) {
    update(app, AppEvent::Engine(e));
}

fn turn_rev(app: &App) -> u64 {
    match app.transcript.entries.last() {
        Some(Entry::Assistant(t)) => t.rev,
        other => panic!("no turn: {other:?}"),
    }
}

#[test]
fn an_idle_app_asks_for_no_wake_up_after_a_turn_or_with_the_inspector_open() {
    let mut a = app();
    assert_eq!(a.next_wake(a.now), None, "a fresh app");
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    engine(&mut a, EngineEvent::Stream(StreamEvent::Text("Hi.".into())));
    assert!(a.next_wake(a.now).is_some(), "streaming: the rate moves");
    round_finished(&mut a);
    engine(
        &mut a,
        EngineEvent::TurnDone {
            outcome: Box::default(),
        },
    );
    assert_eq!(a.next_wake(a.now), None, "the turn is over");
    assert_eq!(a.next_wake(a.now + Duration::from_secs(60)), None);
    ctrl(&mut a, 't');
    assert!(a.layers.inspector.open);
    assert_eq!(a.next_wake(a.now), None, "the inspector has no clock");
    // Ctrl-C on an empty input arms quitting: the second press is checked against the time
    // it comes, nothing has to wake for it.
    key(&mut a, KeyCode::Esc);
    ctrl(&mut a, 'c');
    assert!(a.quit_armed.is_some());
    assert_eq!(a.next_wake(a.now), None);
}

#[test]
fn a_call_waiting_for_approval_asks_for_no_wake_up_and_a_running_one_for_its_spinner() {
    let mut a = app();
    let _answer = ask(&mut a, r#"{"city": "Paris"}"#);
    round_finished(&mut a);
    assert_eq!(a.next_wake(a.now), None, "the dialog waits for a key");
    key(&mut a, KeyCode::Char('y'));
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Paris"}"#,
    );
    engine(
        &mut a,
        EngineEvent::ToolStarted {
            index: 0,
            call: call.clone(),
            arguments: call.function.arguments.clone(),
        },
    );
    let started = a.now;
    let step = crate::ui::tool_pane::SPINNER_STEP;
    assert_eq!(a.next_wake(started), Some(started + step));
    assert_eq!(a.next_wake(started + 250 * MS), Some(started + 3 * step));
    // The deadline comes: the pane is laid out again and a frame asked for.
    let rev = turn_rev(&a);
    a.dirty = false;
    update_after(&mut a, step, AppEvent::Tick);
    assert!(a.dirty);
    assert!(turn_rev(&a) > rev);
    engine(
        &mut a,
        EngineEvent::ToolFinished {
            index: 0,
            call,
            outcome: Box::new(ToolResult::without_output(
                ToolStatus::Ok,
                "sunny".into(),
                Duration::from_millis(120),
            )),
        },
    );
    assert!(matches!(
        a.transcript.turn().map(|t| &t.panes[0].state),
        Some(PaneState::Done { .. })
    ));
    assert_eq!(a.next_wake(a.now), None, "the spinner stopped");
    // A tick that comes anyway (a deadline computed before the call ended) draws nothing.
    a.dirty = false;
    update_after(&mut a, step, AppEvent::Tick);
    assert!(!a.dirty);
}

#[test]
fn a_retry_countdown_wakes_when_its_shown_second_changes_and_not_after() {
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    round_finished(&mut a);
    let at = a.now;
    retry_scheduled(&mut a, Duration::from_secs(3));
    let secs = Duration::from_secs;
    // `3 s` is shown until 2 s are left, and so on; `0 s` never changes.
    assert_eq!(a.next_wake(at), Some(at + secs(1)));
    assert_eq!(a.next_wake(at + 1500 * MS), Some(at + secs(2)));
    assert_eq!(a.next_wake(at + 2999 * MS), Some(at + secs(3)));
    assert_eq!(a.next_wake(at + secs(3)), None);
    a.dirty = false;
    update_after(&mut a, secs(1), AppEvent::Tick);
    assert!(a.dirty);
    let bar = a.status.retry_wait.as_ref().map(|w| w.status_text(a.now));
    assert_eq!(bar.as_deref(), Some("retry in 2 s (2/4) · Esc cancels"));
}

#[test]
fn a_thinking_timer_wakes_each_second_and_the_streaming_rate_too() {
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    let t0 = a.now;
    update_after(
        &mut a,
        400 * MS,
        AppEvent::Engine(EngineEvent::Stream(StreamEvent::Reasoning("hm".into()))),
    );
    let thinking_from = a.now;
    // The rate (from t0) and the timer (from the first reasoning) both count whole seconds.
    assert_eq!(
        a.next_wake(thinking_from),
        Some(t0 + Duration::from_secs(1))
    );
    assert_eq!(
        a.next_wake(t0 + Duration::from_secs(1)),
        Some(thinking_from + Duration::from_secs(1))
    );
    // The answer began: the timer stopped, the rate still moves while the round streams.
    engine(&mut a, EngineEvent::Stream(StreamEvent::Text("Hi.".into())));
    assert_eq!(
        a.next_wake(t0 + Duration::from_secs(1)),
        Some(t0 + Duration::from_secs(2))
    );
    round_finished(&mut a);
    assert_eq!(a.next_wake(a.now), None);
}
