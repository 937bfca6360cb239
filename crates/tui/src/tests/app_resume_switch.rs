//! A session resumed from `/sessions` that was recorded with another profile or model than
//! the one in use: the app says so and offers to switch, the way `/profile` and `/model` do.

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::picker::PickTarget;
use crate::app::state::{App, Connection, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op, ProfileSummary};
use kimi_core::session::Session;
use kimi_core::tools::Toolbox;
use kimi_protocol::Mode;

const INSTRUCT: &str = "moonshotai/Kimi-K2-Instruct";
const THINKING: &str = "moonshotai/Kimi-K2-Thinking";

fn profile(name: &str, model: &str) -> ProfileSummary {
    ProfileSummary {
        name: name.into(),
        mode: Mode::Chat,
        model: model.into(),
        host: "127.0.0.1:8000".into(),
    }
}

/// An app on profile `local` (K2-Instruct), with `work` (K2-Thinking) in the config file.
fn app() -> App {
    let connection = Connection {
        profile: "local".into(),
        mode: Mode::Chat,
        model: INSTRUCT.into(),
        host: "127.0.0.1:8000".into(),
    };
    let mut a = App::new(connection, Toolbox::default(), None);
    a.switch.profiles = vec![profile("local", INSTRUCT), profile("work", THINKING)];
    a
}

/// The agent reports a session recorded with `profile` and `model` (no turns), picked in
/// `/sessions`.
fn resume(a: &mut App, profile: &str, model: &str) {
    let meta = Session::new(profile, Mode::Chat, model, "http://127.0.0.1:8000/v1");
    let mut fx = Vec::new();
    crate::app::picker_sessions::pick(a, meta.id.clone(), &mut fx);
    assert!(
        matches!(fx.as_slice(), [Effect::ResumeSession { id }] if *id == meta.id),
        "{fx:?}"
    );
    reported(a, meta);
}

/// The agent reports `meta` resumed.
fn reported(a: &mut App, meta: Session) {
    update(
        a,
        AppEvent::Engine(EngineEvent::Resuming {
            meta: Box::new(meta.clone()),
            notice: None,
        }),
    );
    update(
        a,
        AppEvent::Engine(EngineEvent::Resumed {
            meta: Box::new(meta),
            turns: 0,
        }),
    );
}

fn notices(a: &App) -> Vec<String> {
    (a.transcript.entries.iter())
        .filter_map(|e| match e {
            Entry::Notice { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn press(a: &mut App, code: KeyCode) -> Vec<Effect> {
    update(
        a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))),
    )
}

/// The switches asked of the core: profiles, then models.
fn switches(fx: &[Effect]) -> Vec<String> {
    (fx.iter())
        .filter_map(|f| match f {
            Effect::Agent(Op::SwitchProfile { name }) => Some(format!("profile {name}")),
            Effect::Agent(Op::SwitchModel { id }) => Some(format!("model {id}")),
            _ => None,
        })
        .collect()
}

#[test]
fn another_profile_is_named_and_enter_switches_to_it() {
    let mut a = app();
    resume(&mut a, "work", THINKING);
    let said = notices(&a).join("\n");
    assert!(
        said.contains(&format!(
            "recorded with profile work / model {THINKING}; now profile local / model {INSTRUCT}."
        )),
        "{said}"
    );
    let picker = a.layers.picker.as_ref().expect("the switch is offered");
    assert_eq!(picker.items.len(), 2);
    assert_eq!(picker.items[0].label, "Switch to profile work, as recorded");
    assert!(matches!(picker.items[1].target, PickTarget::Keep));
    let shown = super::ui_snapshots::screen(&mut a, 100, 20);
    assert!(
        shown.contains("Switch to profile work, as recorded"),
        "{shown}"
    );
    assert!(shown.contains("Esc: keep the current one"), "{shown}");
    // The model is the profile's own: only the profile is switched.
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(switches(&fx), ["profile work"]);
    assert!(a.layers.picker.is_none());
}

#[test]
fn a_model_other_than_the_profile_s_is_switched_to_as_well() {
    let mut a = app();
    resume(&mut a, "work", "moonshotai/Kimi-K2.5");
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(
        switches(&fx),
        ["profile work", "model moonshotai/Kimi-K2.5"]
    );
    // Same profile, another model (`/model` was used): the model alone.
    let mut a = app();
    resume(&mut a, "local", THINKING);
    let said = notices(&a).join("\n");
    assert!(
        said.contains(&format!("model {THINKING}; now profile local")),
        "{said}"
    );
    let fx = press(&mut a, KeyCode::Enter);
    assert_eq!(switches(&fx), [format!("model {THINKING}")]);
}

#[test]
fn esc_or_keep_leaves_the_profile_in_use() {
    let mut a = app();
    resume(&mut a, "work", THINKING);
    let fx = press(&mut a, KeyCode::Esc);
    assert!(switches(&fx).is_empty());
    assert!(a.layers.picker.is_none());
    let mut a = app();
    resume(&mut a, "work", THINKING);
    press(&mut a, KeyCode::Down);
    let fx = press(&mut a, KeyCode::Enter);
    assert!(switches(&fx).is_empty());
    assert!(a.layers.picker.is_none());
}

#[test]
fn a_profile_missing_from_the_config_is_said_without_an_offer() {
    let mut a = app();
    resume(&mut a, "gone", THINKING);
    let said = notices(&a).join("\n");
    assert!(said.contains("recorded with profile gone"), "{said}");
    assert!(said.contains("not in the config file"), "{said}");
    assert!(a.layers.picker.is_none());
}

#[test]
fn the_same_profile_and_model_say_nothing_more() {
    let mut a = app();
    resume(&mut a, "local", INSTRUCT);
    let said = notices(&a).join("\n");
    assert!(said.contains("Resumed session"), "{said}");
    assert!(!said.contains("recorded with"), "{said}");
    assert!(a.layers.picker.is_none());
}

#[test]
fn a_resume_not_picked_in_sessions_names_the_command_and_takes_no_keys() {
    // `--resume` at start: the user may be typing already.
    for (profile, command) in [
        ("work", "/profile work".to_owned()),
        ("local", format!("/model {THINKING}")),
    ] {
        let mut a = app();
        let meta = Session::new(profile, Mode::Chat, THINKING, "http://127.0.0.1:8000/v1");
        reported(&mut a, meta);
        let said = notices(&a).join("\n");
        assert!(
            said.contains(&format!("recorded with profile {profile}")),
            "{said}"
        );
        assert!(
            said.contains(&format!("{command} switches to it.")),
            "{said}"
        );
        assert!(a.layers.picker.is_none());
    }
}
