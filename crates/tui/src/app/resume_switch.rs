//! A resumed session recorded with another profile or model than the one in use: the user is
//! told so and, when it was picked in `/sessions`, offered the switch (a picker over the
//! transcript: Enter switches, Esc keeps the current one; a resume at start, while the user
//! may be typing already, only names the command). The switch is the one `/profile` and
//! `/model` make (`Op::SwitchProfile`, `Op::SwitchModel`): the core checks and applies it, and
//! the status bar follows.

use kimi_core::engine::Op;
use kimi_core::session::Session;
use kimi_protocol::sanitize::one_line;

use super::event::Effect;
use super::picker::{PickItem, PickTarget, Picker};
use super::state::App;

/// What the picker offers: the profile (and the model, when the session's is not the
/// profile's own) to switch to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Switch {
    pub(crate) profile: Option<String>,
    pub(crate) model: Option<String>,
}

/// `profile / model`, as the notice names them.
fn named(profile: &str, model: &str) -> String {
    format!(
        "profile {} / model {}",
        one_line(profile, 40),
        one_line(model, 80)
    )
}

/// `meta` was just resumed: say what it was recorded with when that is not what is in use,
/// and offer to switch to it.
pub(super) fn offer(app: &mut App, meta: &Session) {
    let picked = app
        .switch
        .picked_session
        .take()
        .is_some_and(|id| id == meta.id);
    let now = &app.connection;
    let profile_differs = !meta.profile.is_empty() && meta.profile != now.profile;
    let model_differs = !meta.model.is_empty() && meta.model != now.model;
    if !profile_differs && !model_differs {
        return;
    }
    let current = named(&now.profile, &now.model);
    let mut text = format!(
        "This session was recorded with {}; now {current}.",
        named(&meta.profile, &meta.model)
    );
    let known = (app.switch.profiles.iter()).find(|p| p.name == meta.profile);
    let switch = match (profile_differs, known) {
        (true, Some(p)) => Switch {
            profile: Some(p.name.clone()),
            model: (model_differs && p.model != meta.model).then(|| meta.model.clone()),
        },
        (true, None) => {
            text.push_str(" Its profile is not in the config file: /profile lists those there.");
            return app.notice(text, false);
        }
        (false, _) => Switch {
            profile: None,
            model: Some(meta.model.clone()),
        },
    };
    if !picked {
        let command = match (&switch.profile, &switch.model) {
            (Some(p), Some(m)) => format!("/profile {p} then /model {m}"),
            (Some(p), None) => format!("/profile {p}"),
            (None, Some(m)) => format!("/model {m}"),
            (None, None) => return app.notice(text, false),
        };
        text.push_str(&format!(" {} switches to it.", one_line(&command, 160)));
        return app.notice(text, false);
    }
    app.notice(text, false);
    let to = match (&switch.profile, &switch.model) {
        (Some(p), Some(m)) => named(p, m),
        (Some(p), None) => format!("profile {}", one_line(p, 40)),
        (None, Some(m)) => format!("model {}", one_line(m, 80)),
        (None, None) => return,
    };
    let items = vec![
        PickItem {
            label: format!("Switch to {to}, as recorded"),
            target: PickTarget::Switch(switch),
        },
        PickItem {
            label: format!("Keep {current}"),
            target: PickTarget::Keep,
        },
    ];
    app.layers.picker = Some(Picker::new(
        "Recorded with another profile or model",
        items,
        "Enter: choose · Esc: keep the current one",
    ));
}

/// The switch was chosen: asked of the core as `/profile` and `/model` ask it.
pub(super) fn pick(switch: Switch, fx: &mut Vec<Effect>) {
    if let Some(name) = switch.profile {
        fx.push(Effect::Agent(Op::SwitchProfile { name }));
    }
    if let Some(id) = switch.model {
        fx.push(Effect::Agent(Op::SwitchModel { id }));
    }
}
