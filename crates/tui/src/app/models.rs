//! Switching without restarting: `/model` lists the server's models (GET `/models`)
//! and switches to one; `/profile` lists the config file's profiles and switches to one.
//!
//! The core owns the request settings: the app sends `Op::ListModels`, `Op::SwitchModel` or
//! `Op::SwitchProfile`; the supervisor lists, checks and resolves (the profiles, their keys
//! and the endpoint are its, never the app's) and answers with `EngineEvent::Models`,
//! `ModelChosen`/`ProfileChosen` and, once the agent applied the switch, `EndpointSet`, which
//! the status bar follows. What a switch keeps and what it changes is said in the core's
//! switchboard; here: the context window follows the model (the profile's, else the server's
//! length for it), and the profile's system prompt is used when the conversation is empty; an
//! existing conversation keeps its own (`/system` changes it).

use std::path::PathBuf;

use kimi_core::backend::{ModelInfo, ModelList, shown_host};
use kimi_core::engine::{Op, ProfileChoice, ProfileSummary};
use kimi_protocol::{Mode, Template, sanitize};

use super::event::Effect;
use super::models_context;
use super::state::App;

/// What the app knows for switching: names and hosts only.
#[derive(Debug, Default)]
pub(crate) struct Switch {
    /// Every profile of the config file, as the core lists them (no keys).
    pub(crate) profiles: Vec<ProfileSummary>,
    /// The config file, named in the listing.
    pub(crate) config_path: Option<PathBuf>,
    /// The model the agent was last told to use (it may not have switched yet); `None`: the
    /// one the status bar shows.
    pub(crate) model: Option<String>,
    /// The server's models at the last listing.
    pub(crate) models: Vec<ModelInfo>,
    /// A profile switch the agent has not confirmed yet.
    pending_profile: Option<String>,
    /// The session picked in `/sessions`, being resumed: the switch to what it was recorded
    /// with is offered in a picker (a resume at start only names the command).
    pub(crate) picked_session: Option<String>,
    /// The server can be asked for its models (false only in tests that build an `App` by
    /// hand with no core behind it).
    pub(crate) can_list: bool,
}

/// `/model [NAME]`.
pub(super) fn model_command(name: Option<String>, fx: &mut Vec<Effect>) {
    let op = match name {
        None => Op::ListModels { show: true },
        Some(id) => Op::SwitchModel { id },
    };
    fx.push(Effect::Agent(op));
}

/// A listing came back (`shown`: `/model` asked to see it). What `/model NAME` does with it
/// comes from the core right after.
pub(super) fn listed(app: &mut App, shown: bool, result: Result<&ModelList, String>) {
    app.dirty = true;
    if let Ok(list) = result {
        app.switch.models = list.models.clone();
        learn_window(app);
    }
    match (shown, result) {
        (false, Ok(_)) => {}
        (false, Err(e)) => {
            tracing::info!(error = %e, "the model list is unavailable: no context length from the server");
        }
        (true, Ok(list)) => {
            let text = listing(app, &list.models, list.total());
            app.notice(text, false);
        }
        (true, Err(e)) => app.notice(format!("Cannot list the models: {e}"), true),
    }
}

/// Most models a notice names: a server can list any number (up to the 16 MiB body cap).
const LISTED: usize = 50;

/// What a notice says of the models past the first [`LISTED`] of `total`.
fn more(total: usize) -> String {
    match total.saturating_sub(LISTED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    }
}

/// Model ids come from the server: one line, escaped.
fn shown(id: &str) -> String {
    sanitize::one_line(id, 120)
}

/// `/model`'s answer: each model, its context length, the active one marked; `total` counts
/// those the listing did not keep too.
fn listing(app: &App, models: &[ModelInfo], total: usize) -> String {
    if models.is_empty() {
        return "The server lists no models.".to_owned();
    }
    let mut s = format!("Models at {}:", shown(&app.connection.host));
    for m in models.iter().take(LISTED) {
        let active = m.id == app.connection.model;
        s.push_str(&format!(
            "\n  {} {}",
            if active { "*" } else { " " },
            shown(&m.id)
        ));
        if let Some(n) = m.context_length {
            s.push_str(&format!(" ({} context)", models_context::tokens(n)));
        }
        if active {
            s.push_str("  (active)");
        }
    }
    if total > LISTED {
        s.push_str(&format!("\n  …{}", more(total)));
    }
    s.push_str("\n/model NAME switches from the next request.");
    s
}

/// A turn ended: when the window is still unknown and no listing has succeeded yet (the one
/// at start failed or is late), ask the server again, quietly. Once a listing succeeded, even
/// without lengths, it is not asked again until `/model` or `/profile`.
pub(super) fn after_turn(app: &App, fx: &mut Vec<Effect>) {
    if app.status.context.window.is_none() && app.switch.models.is_empty() && app.switch.can_list {
        fx.push(Effect::Agent(Op::ListModels { show: false }));
    }
}

/// The window from the server for the active model, unless the profile sets one.
fn learn_window(app: &mut App) {
    if app.status.context.window_from_profile {
        return;
    }
    // The model the agent was last told to use (it may not have switched yet).
    let model = app.switch.model.as_ref().unwrap_or(&app.connection.model);
    let from_server = app
        .switch
        .models
        .iter()
        .find(|m| m.id == *model)
        .and_then(|m| m.context_length);
    if from_server.is_some() {
        app.status.context.window = from_server;
    }
    models_context::check(app);
}

/// The core accepted `/model NAME`: the window follows the model (the server's length for it,
/// unless the profile sets one).
pub(super) fn model_chosen(app: &mut App, model: String) {
    if !app.status.context.window_from_profile {
        app.status.context.window = (app.switch.models.iter())
            .find(|m| m.id == model)
            .and_then(|m| m.context_length);
    }
    app.switch.model = Some(model);
    app.dirty = true;
}

/// `/profile [NAME]`.
pub(super) fn profile_command(app: &mut App, name: Option<String>, fx: &mut Vec<Effect>) {
    match name {
        None => {
            let text = profiles_listing(app);
            app.notice(text, false);
        }
        Some(name) => fx.push(Effect::Agent(Op::SwitchProfile { name })),
    }
}

/// The core accepted `/profile NAME`: what the profile changes beside the endpoint. Without a
/// window of its own, the core asks the server for it.
pub(super) fn profile_chosen(app: &mut App, choice: ProfileChoice, fx: &mut Vec<Effect>) {
    let name = choice.name;
    if let Some(prompt) = choice.system_prompt
        && app.system_prompt.as_deref() != Some(prompt.as_str())
    {
        if app.conversation.is_empty() {
            fx.push(Effect::Agent(Op::SetSystem { prompt }));
        } else {
            app.notice(
                format!("This conversation keeps its system prompt; profile {name}'s is used after /clear, or set it with /system."),
                false,
            );
        }
    }
    app.neutralize_tool_markers = choice.neutralize_markers;
    app.status.context.window = choice.context_window;
    app.status.context.window_from_profile = choice.context_window.is_some();
    app.switch.models.clear();
    app.switch.model = Some(choice.model);
    app.switch.pending_profile = Some(name);
    models_context::check(app);
    app.dirty = true;
}

fn profiles_listing(app: &App) -> String {
    if app.switch.profiles.is_empty() {
        return format!(
            "Only the command line's profile ({}): there is no config file to switch in.",
            app.connection.profile
        );
    }
    let mut s = match &app.switch.config_path {
        Some(p) => format!("Profiles in {}:", p.display()),
        None => "Profiles:".to_owned(),
    };
    for p in &app.switch.profiles {
        let active = p.name == app.connection.profile;
        s.push_str(&format!(
            "\n  {} {}: {} {} @ {}{}",
            if active { "*" } else { " " },
            p.name,
            p.mode.as_str(),
            shown(&p.model),
            p.host,
            if active { "  (active)" } else { "" }
        ));
    }
    s.push_str("\n/profile NAME switches from the next request.");
    s
}

/// The agent now sends its requests here: the status bar follows.
pub(super) fn endpoint_set(
    app: &mut App,
    mode: Mode,
    model: String,
    base_url: &str,
    template: Template,
    thinking: Option<bool>,
) {
    if let Some(name) = app.switch.pending_profile.take() {
        app.connection.profile = name;
    }
    let model_changed = model != app.connection.model;
    if app.switch.model.as_ref() == Some(&model) {
        app.switch.model = None;
    }
    app.connection.mode = mode;
    app.connection.model = model;
    app.connection.host = shown_host(base_url);
    app.template = template;
    app.thinking = thinking;
    app.notice(
        format!(
            "Now using {} @ {} ({}, profile {}, template {}).",
            shown(&app.connection.model),
            shown(&app.connection.host),
            mode.as_str(),
            app.connection.profile,
            template.as_str()
        ),
        false,
    );
    if model_changed {
        learn_window(app);
    }
    app.dirty = true;
}
