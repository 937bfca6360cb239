//! In `update`: `/model` and `/profile` (switching without restarting) as the app sends them
//! and follows the core's answers, the context gauge, and the retry countdown. What the core
//! decides (which endpoint, refusals, keys) is tested against the mock in kimi-core's
//! `switching` suite.

use std::time::{Duration, Instant};

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, Entry};
use crossterm::event::KeyCode;
use kimi_core::backend::{BackendError, ModelInfo, ModelList};
use kimi_core::engine::{EngineEvent, Op, ProfileChoice, ProfileSummary, SharedTrace, TurnOutcome};
use kimi_protocol::{Message, Mode, StreamEvent, Template, Trace, Usage};

use super::app_update::{app, enter, key, notices, typed};

const BASE: &str = "http://127.0.0.1:1/v1";

fn summary(name: &str, mode: Mode, model: &str, host: &str) -> ProfileSummary {
    ProfileSummary {
        name: name.into(),
        mode,
        model: model.into(),
        host: host.into(),
    }
}

/// An app as `kimi-tui` starts it: the profile `test` (model `m`) of a file with two more.
fn switchable() -> App {
    let mut a = app();
    a.switch.profiles = vec![
        summary(
            "keyless",
            Mode::Chat,
            "moonshotai/Kimi-K2-Instruct",
            "api.example",
        ),
        summary("other", Mode::Chat, "moonshotai/Kimi-K2.5", "10.0.0.2:9000"),
        summary("test", Mode::Raw, "m", "127.0.0.1:1"),
    ];
    a.switch.config_path = Some("/home/u/.config/kimi-tui/config.toml".into());
    a.switch.can_list = true;
    a
}

fn command(app: &mut App, text: &str) -> Vec<Effect> {
    typed(app, text);
    enter(app)
}

fn last_notice(app: &App) -> (String, bool) {
    notices(app).pop().expect("a notice")
}

fn models() -> Vec<ModelInfo> {
    vec![
        ModelInfo {
            id: "m".into(),
            context_length: Some(131_072),
        },
        ModelInfo {
            id: "moonshotai/Kimi-K2.5".into(),
            context_length: Some(262_144),
        },
    ]
}

/// The core's answer to a listing (`shown`: `/model` asked to see it).
fn listed(app: &mut App, shown: bool, result: Result<Vec<ModelInfo>, String>) -> Vec<Effect> {
    let listing = result
        .map(|m| Box::new(ModelList::from(m)))
        .map_err(|e| Box::new(BackendError::Setup(e)));
    update(
        app,
        AppEvent::Engine(EngineEvent::Models { shown, listing }),
    )
}

fn chosen(app: &mut App, model: &str) -> Vec<Effect> {
    let model = model.into();
    update(app, AppEvent::Engine(EngineEvent::ModelChosen { model }))
}

fn other_profile() -> ProfileChoice {
    ProfileChoice {
        name: "other".into(),
        model: "moonshotai/Kimi-K2.5".into(),
        context_window: Some(262_144),
        system_prompt: None,
        neutralize_markers: false,
    }
}

/// The core's answer to `/profile NAME`, and the agent's report of a new system prompt.
fn profile_chosen(app: &mut App, choice: ProfileChoice) -> Vec<Effect> {
    let choice = Box::new(choice);
    let fx = update(app, AppEvent::Engine(EngineEvent::ProfileChosen { choice }));
    for f in &fx {
        if let Effect::Agent(Op::SetSystem { prompt }) = f {
            let change = kimi_core::engine::set_system(&mut app.conversation.clone(), prompt);
            let prompt = prompt.clone();
            update(
                app,
                AppEvent::Engine(EngineEvent::SystemSet { prompt, change }),
            );
        }
    }
    fx
}

/// What the agent reports when it applies an endpoint.
fn applied(app: &mut App, mode: Mode, model: &str, base_url: &str, template: Template) {
    update(
        app,
        AppEvent::Engine(EngineEvent::EndpointSet {
            mode,
            model: model.into(),
            base_url: base_url.into(),
            template,
            thinking: None,
        }),
    );
}

/// The status bar (last row) of a frame `w` wide.
fn status_bar(app: &mut App, w: u16) -> String {
    let backend = ratatui::backend::TestBackend::new(w, 12);
    let mut term = ratatui::Terminal::new(backend).expect("terminal");
    let area = ratatui::layout::Rect::new(0, 0, w, 12);
    crate::ui::prepare(app, area, &crate::ui::markdown::Theme::default());
    term.draw(|f| crate::ui::draw(f, app)).expect("draw");
    let buf = term.backend().buffer();
    let row: String = (0..w).map(|x| buf[(x, 11)].symbol().to_owned()).collect();
    row.trim_end().to_owned()
}

#[test]
fn slash_model_lists_the_servers_models_with_the_active_one_marked() {
    let mut a = switchable();
    let fx = command(&mut a, "/model");
    assert_eq!(fx, vec![Effect::Agent(Op::ListModels { show: true })]);
    listed(&mut a, true, Ok(models()));
    let (text, error) = last_notice(&a);
    assert!(!error);
    assert!(text.contains("* m (131k context)  (active)"), "{text}");
    assert!(
        text.contains("   moonshotai/Kimi-K2.5 (262k context)"),
        "{text}"
    );
    // The window of the active model is learnt from the list.
    assert_eq!(a.status.context.window, Some(131_072));
    listed(&mut a, true, Err("HTTP 404 Not Found from u".into()));
    let (text, error) = last_notice(&a);
    assert!(
        error && text.contains("Cannot list the models: HTTP 404"),
        "{text}"
    );
}

#[test]
fn a_server_listing_thousands_of_models_gets_a_notice_of_fifty() {
    let mut a = switchable();
    let many: Vec<ModelInfo> = (0..5000)
        .map(|i| ModelInfo {
            id: format!("model-{i}"),
            context_length: None,
        })
        .collect();
    listed(&mut a, true, Ok(many));
    let (text, _) = last_notice(&a);
    assert!(
        text.contains("model-49\n") && !text.contains("model-50\n"),
        "{text}"
    );
    assert!(text.contains("… and 4950 more"), "{text}");
    assert!(text.lines().count() < 60);
}

#[test]
fn slash_model_name_switches_and_the_status_bar_follows() {
    let mut a = switchable();
    let fx = command(&mut a, "/model moonshotai/Kimi-K2.5");
    assert_eq!(
        fx,
        vec![Effect::Agent(Op::SwitchModel {
            id: "moonshotai/Kimi-K2.5".into()
        })]
    );
    // The core lists (quietly), then accepts the switch.
    listed(&mut a, false, Ok(models()));
    assert!(
        !notices(&a).iter().any(|(t, _)| t.starts_with("Models at")),
        "a switch's listing is not shown"
    );
    chosen(&mut a, "moonshotai/Kimi-K2.5");
    assert_eq!(
        a.status.context.window,
        Some(262_144),
        "the new model's length"
    );
    // The status bar changes when the agent has switched, not before.
    assert!(status_bar(&mut a, 120).contains(" m @ 127.0.0.1:1"));
    applied(
        &mut a,
        Mode::Raw,
        "moonshotai/Kimi-K2.5",
        BASE,
        Template::K25,
    );
    assert_eq!(a.connection.model, "moonshotai/Kimi-K2.5");
    assert_eq!(a.template, Template::K25);
    let bar = status_bar(&mut a, 120);
    assert!(bar.contains("moonshotai/Kimi-K2.5 @ 127.0.0.1:1"), "{bar}");
    assert!(bar.contains("k2.5"), "{bar}");
    assert!(last_notice(&a).0.contains("Now using moonshotai/Kimi-K2.5"));
    // A host with credentials is shown without them.
    chosen(&mut a, "m");
    applied(
        &mut a,
        Mode::Raw,
        "m",
        "http://u:pw@10.0.0.9:8000/v1",
        Template::K2Instruct,
    );
    assert_eq!(a.connection.host, "10.0.0.9:8000");
    assert_eq!(a.status.context.window, Some(131_072), "back to m's length");
}

#[test]
fn slash_profile_lists_and_switches_profiles() {
    let mut a = switchable();
    command(&mut a, "/profile");
    let (text, _) = last_notice(&a);
    assert!(
        text.starts_with("Profiles in /home/u/.config/kimi-tui/config.toml:"),
        "{text}"
    );
    assert!(
        text.contains("* test: raw m @ 127.0.0.1:1  (active)"),
        "{text}"
    );
    assert!(
        text.contains("   other: chat moonshotai/Kimi-K2.5 @ 10.0.0.2:9000"),
        "{text}"
    );

    let fx = command(&mut a, "/profile other");
    assert_eq!(
        fx,
        vec![Effect::Agent(Op::SwitchProfile {
            name: "other".into()
        })]
    );
    let fx = profile_chosen(&mut a, other_profile());
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(
        a.status.context.window,
        Some(262_144),
        "the profile's context_window"
    );
    assert_eq!(
        a.connection.profile, "test",
        "not before the agent switched"
    );
    applied(
        &mut a,
        Mode::Chat,
        "moonshotai/Kimi-K2.5",
        "http://10.0.0.2:9000/v1",
        Template::K25,
    );
    assert_eq!(a.connection.profile, "other");
    assert_eq!(a.connection.host, "10.0.0.2:9000");
    assert_eq!(a.connection.mode, Mode::Chat);
    let bar = status_bar(&mut a, 120);
    assert!(bar.starts_with(" other  chat "), "{bar}");

    // A profile's own window beats the server's.
    listed(&mut a, false, Ok(models()));
    assert_eq!(a.status.context.window, Some(262_144));

    // Without a window of its own, the server's length for the profile's model.
    let mut test = other_profile();
    test.name = "test".into();
    test.model = "m".into();
    test.context_window = None;
    profile_chosen(&mut a, test);
    assert_eq!(a.status.context.window, None);
    listed(&mut a, false, Ok(models()));
    assert_eq!(a.status.context.window, Some(131_072));
}

#[test]
fn a_profiles_system_prompt_applies_to_an_empty_conversation_only() {
    let mut a = switchable();
    let mut choice = other_profile();
    choice.system_prompt = Some("Be terse.".into());
    let fx = profile_chosen(&mut a, choice.clone());
    assert!(fx.contains(&Effect::Agent(Op::SetSystem {
        prompt: "Be terse.".into()
    })));
    assert_eq!(a.system_prompt.as_deref(), Some("Be terse."));
    a.conversation.push(Message::user("hi"));
    choice.system_prompt = Some("Be verbose.".into());
    let fx = profile_chosen(&mut a, choice);
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::SetSystem { .. })))
    );
    assert!(last_notice(&a).0.contains("keeps its system prompt"));
}

fn usage(app: &mut App, prompt: u64, completion: u64) {
    update(
        app,
        AppEvent::Engine(EngineEvent::Stream(StreamEvent::Usage(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            ..Usage::default()
        }))),
    );
}

#[test]
fn the_gauge_shows_the_last_requests_usage_of_the_window_and_warns_once_at_80_percent() {
    let mut a = switchable();
    let bar = status_bar(&mut a, 120);
    assert!(!bar.contains("ctx"), "nothing known: hidden: {bar}");
    a.status.context.window = Some(128_000);
    usage(&mut a, 40_000, 12_500);
    let bar = status_bar(&mut a, 120);
    assert!(bar.contains("│ ctx 41% 53k/128k "), "{bar}");
    assert!(notices(&a).is_empty());
    // The last request counts, not the sum.
    usage(&mut a, 100_000, 3_000);
    let bar = status_bar(&mut a, 120);
    assert!(bar.contains("│ ⚠ ctx 80% 103k/128k "), "{bar}");
    let warned = notices(&a);
    assert_eq!(warned.len(), 1);
    assert!(warned[0].1 && warned[0].0.starts_with("The context window is 80% full"));
    usage(&mut a, 110_000, 4_000);
    assert_eq!(notices(&a).len(), 1, "once");
    // Cleared: back to nothing, and a new crossing warns again.
    update(&mut a, AppEvent::Engine(EngineEvent::Cleared));
    assert!(status_bar(&mut a, 120).contains("│ ctx 0% 0/128k "));
    usage(&mut a, 120_000, 0);
    assert_eq!(notices(&a).len(), 2);
    // Unknown window: just what is used.
    a.status.context.window = None;
    assert!(status_bar(&mut a, 120).contains("│ ctx 120k "));
}

#[test]
fn without_usage_the_gauge_estimates_and_says_so() {
    let mut a = switchable();
    a.status.context.window = Some(1_000);
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::MessageAppended {
            index: 0,
            message: Box::new(Message::user("x".repeat(1_600))),
        }),
    );
    // 1600 bytes / 4 + 4 = 404 tokens of 1000.
    let bar = status_bar(&mut a, 120);
    assert!(bar.contains("│ ctx ~40% ~404/1.0k "), "{bar}");
}

#[test]
fn the_status_bar_drops_hints_before_the_model_and_the_gauge_when_narrow() {
    let mut a = switchable();
    a.status.context.window = Some(128_000);
    usage(&mut a, 40_000, 12_500);
    let wide = status_bar(&mut a, 160);
    assert!(
        wide.contains("F1 help") && wide.contains("in 40000"),
        "{wide}"
    );
    let narrow = status_bar(&mut a, 60);
    assert!(
        !narrow.contains("F1 help") && !narrow.contains("in 40000"),
        "{narrow}"
    );
    assert!(
        narrow.contains(" test ") && narrow.contains(" m "),
        "{narrow}"
    );
    assert!(narrow.contains("ctx 41% 53k/128k"), "{narrow}");
    assert!(narrow.contains("│ idle"), "{narrow}");
}

pub(super) fn retry_scheduled(app: &mut App, wait: Duration) {
    update(
        app,
        AppEvent::Engine(EngineEvent::RetryScheduled {
            error: Box::new(BackendError::Http {
                status: 503,
                url: "http://127.0.0.1:1/v1/completions".into(),
                message: "busy".into(),
                retry_after_secs: None,
            }),
            attempt: 2,
            attempts: 4,
            wait,
        }),
    );
}

fn warnings(app: &App) -> Vec<String> {
    app.transcript
        .entries
        .iter()
        .rev()
        .find_map(|e| match e {
            Entry::Assistant(t) => Some(t.warnings.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn a_retry_counts_down_in_the_answer_and_the_status_bar_and_esc_cancels_it() {
    let mut a = switchable();
    command(&mut a, "hello");
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    let at = Instant::now();
    retry_scheduled(&mut a, Duration::from_secs(3));
    let w = warnings(&a);
    assert_eq!(
        w,
        [
            "HTTP 503 Service Unavailable from http://127.0.0.1:1/v1/completions: busy; retrying in 3 s (attempt 2/4) — Esc cancels"
        ]
    );
    let bar = status_bar(&mut a, 140);
    assert!(bar.contains("│ retry in 3 s (2/4) · Esc cancels"), "{bar}");
    // The timer moves it: a redraw only when the second changes.
    a.dirty = false;
    crate::app::retry::tick(&mut a, at + Duration::from_millis(100));
    assert!(!a.dirty, "same second: nothing to draw");
    crate::app::retry::tick(&mut a, at + Duration::from_millis(1500));
    assert!(a.dirty);
    assert!(
        warnings(&a)[0].contains("retrying in 2 s"),
        "{:?}",
        warnings(&a)
    );
    // Esc cancels the turn, which ends the wait.
    let fx = key(&mut a, KeyCode::Esc);
    assert!(fx.contains(&Effect::Agent(Op::Cancel)));
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundFinished {
            round: 1,
            finish: "stop".into(),
            error: Some(Box::new(BackendError::Http {
                status: 503,
                url: "u".into(),
                message: "busy".into(),
                retry_after_secs: None,
            })),
            cancelled: true,
        }),
    );
    assert!(a.status.retry_wait.is_none());
    assert!(warnings(&a)[0].ends_with("not retried: the turn ended before attempt 2/4"));
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::TurnDone {
            outcome: Box::default(),
        }),
    );
    assert!(!status_bar(&mut a, 140).contains("retry in"));
}

#[test]
fn the_next_attempt_ends_the_countdown_and_its_answer_fills_the_same_cell() {
    let mut a = switchable();
    command(&mut a, "hello");
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    retry_scheduled(&mut a, Duration::from_secs(1));
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::TraceStarted {
            index: 0,
            trace: SharedTrace::new(Trace::default()),
        }),
    );
    assert!(a.status.retry_wait.is_none());
    assert!(
        warnings(&a)[0].ends_with("busy; retried (attempt 2/4)"),
        "{:?}",
        warnings(&a)
    );
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::Stream(StreamEvent::Text("Hi!".into()))),
    );
    let answers: Vec<&str> = a
        .transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Assistant(t) => Some(t.text()),
            _ => None,
        })
        .collect();
    assert_eq!(answers, ["Hi!"], "one answer cell");
    let outcome = Box::new(TurnOutcome::default());
    update(&mut a, AppEvent::Engine(EngineEvent::TurnDone { outcome }));
    assert!(!a.busy);
}

/// A refused connection, as the client reports it.
fn refused() -> Box<BackendError> {
    Box::new(BackendError::Connect {
        url: "http://127.0.0.1:9/v1/completions".into(),
        cause: kimi_core::backend::ConnectCause::Refused,
        detail: "error sending request: tcp connect error: Connection refused (os error 111)"
            .into(),
    })
}

/// Attempts that fail alike: one line counting on, then folded into the failure.
#[test]
fn retries_of_one_failure_share_a_line_that_the_final_error_replaces() {
    let mut a = switchable();
    command(&mut a, "hello");
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    for attempt in 2..=3 {
        let retry = EngineEvent::RetryScheduled {
            error: refused(),
            attempt,
            attempts: 3,
            wait: Duration::from_secs(1),
        };
        update(&mut a, AppEvent::Engine(retry));
        let trace = SharedTrace::new(Trace::default());
        update(
            &mut a,
            AppEvent::Engine(EngineEvent::TraceStarted { index: 0, trace }),
        );
        assert_eq!(
            warnings(&a),
            [format!(
                "Cannot connect to 127.0.0.1:9 (connection refused); retried (attempt {attempt}/3)"
            )]
        );
    }
    let failed = EngineEvent::RoundFinished {
        round: 1,
        finish: String::new(),
        error: Some(refused()),
        cancelled: false,
    };
    update(&mut a, AppEvent::Engine(failed));
    assert!(warnings(&a).is_empty(), "{:?}", warnings(&a));
    let screen = format!("{:?}", super::drawn(&mut a, 120, 30));
    assert!(screen.contains("failed after 3 attempts"), "{screen}");
    assert!(!screen.contains("os error"), "{screen}");

    // A last attempt failing otherwise keeps the retries' line beside its own error.
    let outcome = Box::new(TurnOutcome::default());
    update(&mut a, AppEvent::Engine(EngineEvent::TurnDone { outcome }));
    command(&mut a, "again");
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::RoundStarted { round: 1 }),
    );
    let retry = EngineEvent::RetryScheduled {
        error: refused(),
        attempt: 2,
        attempts: 2,
        wait: Duration::from_secs(1),
    };
    update(&mut a, AppEvent::Engine(retry));
    let trace = SharedTrace::new(Trace::default());
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::TraceStarted { index: 1, trace }),
    );
    let failed = EngineEvent::RoundFinished {
        round: 1,
        finish: String::new(),
        error: Some(Box::new(BackendError::Setup("other".into()))),
        cancelled: false,
    };
    update(&mut a, AppEvent::Engine(failed));
    let cells = (a.transcript.entries.iter())
        .filter(|e| matches!(e, Entry::Assistant(_)))
        .count();
    assert_eq!(cells, 2, "the second turn has its own cell");
    assert_eq!(
        warnings(&a),
        ["Cannot connect to 127.0.0.1:9 (connection refused); retried (attempt 2/2)"]
    );
}

#[test]
fn an_unknown_window_is_asked_for_again_after_a_turn_until_a_listing_succeeds() {
    let mut a = switchable();
    let done = |a: &mut App| {
        let outcome = Box::new(TurnOutcome::default());
        update(a, AppEvent::Engine(EngineEvent::TurnDone { outcome }))
    };
    let quiet = Effect::Agent(Op::ListModels { show: false });
    assert!(done(&mut a).contains(&quiet));
    // A server that lists models without lengths: not asked again.
    let bare = vec![ModelInfo {
        id: "m".into(),
        context_length: None,
    }];
    listed(&mut a, false, Ok(bare));
    assert_eq!(a.status.context.window, None);
    assert!(!done(&mut a).contains(&quiet));
}
