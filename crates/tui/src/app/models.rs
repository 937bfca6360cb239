//! Switching without restarting: `/model` lists the server's models (GET `/models`)
//! and switches to one; `/profile` lists the config file's profiles and switches to one.
//!
//! The agent owns the request settings: a switch is an `Op::SetEndpoint` it applies before its
//! next request (between rounds when a turn runs), and the status bar follows its
//! `EngineEvent::EndpointSet`. What a switch keeps and what it changes:
//! - `/model NAME`: the server, key, mode and profile stay; the model changes, and with it what
//!   the profile would pick for that model: the template (from the name, unless the profile
//!   names one for its own model), `thinking` as the profile sets it (a `/thinking` switch is
//!   dropped), and the default temperature and max_tokens of a thinking or non-thinking model.
//!   A name the server does not list is refused; a server that cannot list is trusted.
//! - `/profile NAME`: everything the profile says about requests (server, key, mode, model,
//!   template, thinking, sampling, timeouts, retries, max_rounds, context_window, neutralizing
//!   markers) as written in the file (the command line's `--mode`/`--model`/`--base-url` were
//!   for the starting profile only). The conversation, the tools (they are the file's, not a
//!   profile's) and "always allow" stay. The profile's system prompt is used when the
//!   conversation is empty; an existing conversation keeps its own (`/system` changes it).

use std::collections::BTreeMap;
use std::path::PathBuf;

use kimi_client::{Backend, Endpoint, ModelInfo, ModelList};
use kimi_core::config::Profile;
use kimi_core::engine::Op;
use kimi_protocol::{Mode, Template, sanitize};
use tokio::sync::mpsc;

use super::event::{AppEvent, Effect};
use super::models_context;
use super::state::App;

/// What the app knows for switching.
#[derive(Debug, Default)]
pub struct Switch {
    /// Every profile of the config file, as written.
    pub profiles: BTreeMap<String, Profile>,
    /// The active profile as written (plus the command line's overrides for the first one):
    /// the defaults a model switch goes back to.
    pub profile: Option<Profile>,
    /// Where requests go, as the app last told the agent (with the key: listing models uses
    /// it). `None` only in tests that build an `App` by hand.
    pub endpoint: Option<Endpoint>,
    /// The config file, named in errors.
    pub config_path: Option<PathBuf>,
    /// The server's models at the last listing.
    pub models: Vec<ModelInfo>,
    /// A profile switch the agent has not confirmed yet.
    pending_profile: Option<String>,
    /// The profiles' key variables as the environment held them at start (it does not change
    /// under a running process): `/profile` reads them here, keeping `update` pure.
    pub keys: EnvKeys,
}

/// Environment variables and their values; `Debug` shows the names only (they hold keys).
#[derive(Default)]
pub struct EnvKeys(pub BTreeMap<String, Result<String, std::env::VarError>>);

impl EnvKeys {
    /// Each of `vars` as the environment holds it now.
    pub fn read<'a>(vars: impl IntoIterator<Item = &'a str>) -> Self {
        EnvKeys(
            vars.into_iter()
                .map(|v| (v.to_owned(), std::env::var(v)))
                .collect(),
        )
    }

    fn get(&self, var: &str) -> Result<String, std::env::VarError> {
        self.0
            .get(var)
            .cloned()
            .unwrap_or(Err(std::env::VarError::NotPresent))
    }
}

impl std::fmt::Debug for EnvKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// What a model listing is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelsThen {
    /// `/model`: show the list.
    Show,
    /// `/model NAME`: switch if the server lists it.
    Switch(String),
    /// At start or after `/profile`: learn the context length, say nothing.
    Quiet,
}

/// `/model [NAME]`.
pub(super) fn model_command(name: Option<String>, fx: &mut Vec<Effect>) {
    let then = match name {
        None => ModelsThen::Show,
        Some(n) => ModelsThen::Switch(n),
    };
    fx.push(Effect::ListModels(then));
}

/// The listing came back.
pub(super) fn listed(
    app: &mut App,
    then: ModelsThen,
    result: Result<ModelList, String>,
    fx: &mut Vec<Effect>,
) {
    app.dirty = true;
    let total = result.as_ref().map_or(0, ModelList::total);
    let result = result.map(|list| list.models);
    if let Ok(models) = &result {
        app.switch.models = models.clone();
        learn_window(app);
    }
    match (then, result) {
        (ModelsThen::Quiet, Ok(_)) => {}
        (ModelsThen::Quiet, Err(e)) => {
            tracing::info!(error = %e, "the model list is unavailable: no context length from the server");
        }
        (ModelsThen::Show, Ok(models)) => {
            let text = listing(app, &models, total);
            app.notice(text, false);
        }
        (ModelsThen::Show, Err(e)) => app.notice(format!("Cannot list the models: {e}"), true),
        (ModelsThen::Switch(name), Ok(models)) if models.is_empty() => {
            app.notice(
                format!(
                    "The server lists no models; switching to {} anyway.",
                    shown(&name)
                ),
                false,
            );
            switch_model(app, name, fx);
        }
        (ModelsThen::Switch(name), Ok(models)) => {
            if models.iter().any(|m| m.id == name) {
                switch_model(app, name, fx);
            } else {
                let ids: Vec<String> = models.iter().take(LISTED).map(|m| shown(&m.id)).collect();
                app.notice(
                    format!(
                        "Unknown model {}: the server lists {}{}.",
                        shown(&name),
                        ids.join(", "),
                        more(total)
                    ),
                    true,
                );
            }
        }
        (ModelsThen::Switch(name), Err(e)) => {
            app.notice(
                format!(
                    "Cannot check {} against the server's models ({e}); switching anyway.",
                    shown(&name)
                ),
                true,
            );
            switch_model(app, name, fx);
        }
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
    if app.status.context.window.is_none()
        && app.switch.models.is_empty()
        && app.switch.endpoint.is_some()
    {
        fx.push(Effect::ListModels(ModelsThen::Quiet));
    }
}

/// The window from the server for the active model, unless the profile sets one.
fn learn_window(app: &mut App) {
    if app.status.context.window_from_profile {
        return;
    }
    // The model the agent was last told to use (it may not have switched yet).
    let model = app
        .switch
        .endpoint
        .as_ref()
        .map_or(&app.connection.model, |e| &e.model);
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

/// Ask the agent to use `name` from its next request, with the defaults the profile would
/// pick for it.
fn switch_model(app: &mut App, name: String, fx: &mut Vec<Effect>) {
    let Some(mut ep) = app.switch.endpoint.clone() else {
        return app.notice("No endpoint to switch the model of.", true);
    };
    let profile = app
        .switch
        .profile
        .clone()
        .unwrap_or_else(|| Profile::new(app.connection.mode, &ep.base_url));
    let mut p = profile.clone();
    // The profile's template was chosen for its own model.
    if name != profile.model {
        p.template = None;
    }
    p.model = name.clone();
    ep.model = name.clone();
    ep.mode = app.connection.mode;
    ep.template = p.template;
    ep.thinking = p.thinking;
    ep.temperature = p.temperature();
    ep.max_tokens = p.max_tokens();
    if ep.mode == Mode::Raw
        && let Some(why) = ep.raw_mode_refusal()
    {
        return app.notice(format!("Not switched: {why}."), true);
    }
    if app.busy {
        app.notice(
            format!("Model {} applies from the next request.", shown(&name)),
            false,
        );
    }
    // The server's length for the new model, unless the profile sets one.
    if !app.status.context.window_from_profile {
        app.status.context.window = app
            .switch
            .models
            .iter()
            .find(|m| m.id == name)
            .and_then(|m| m.context_length);
    }
    fx.push(Effect::Agent(Op::SetEndpoint {
        endpoint: Box::new(ep.clone()),
        max_rounds: p.max_rounds,
    }));
    app.switch.endpoint = Some(ep);
}

/// `/profile [NAME]`.
pub(super) fn profile_command(app: &mut App, name: Option<String>, fx: &mut Vec<Effect>) {
    let Some(name) = name else {
        let text = profiles_listing(app);
        return app.notice(text, false);
    };
    let Some(p) = app.switch.profiles.get(&name).cloned() else {
        let names: Vec<&str> = app.switch.profiles.keys().map(String::as_str).collect();
        let defined = if names.is_empty() {
            "none (no config file)".to_owned()
        } else {
            names.join(", ")
        };
        return app.notice(
            format!("No profile named `{}`; defined: {defined}.", shown(&name)),
            true,
        );
    };
    let origin = match &app.switch.config_path {
        Some(path) => format!("profile `{name}` in {}", path.display()),
        None => format!("profile `{name}`"),
    };
    // The key as the environment held it at start (`Switch::keys`).
    let ep = match p.endpoint_with(&|var| app.switch.keys.get(var)) {
        Ok(ep) => ep,
        Err(e) => return app.notice(format!("Not switched: {origin}: {e}."), true),
    };
    if ep.mode == Mode::Raw
        && let Some(why) = ep.raw_mode_refusal()
    {
        return app.notice(format!("Not switched: {origin}: {why}."), true);
    }
    if app.busy {
        app.notice(
            format!("Profile {name} applies from the next request."),
            false,
        );
    }
    fx.push(Effect::Agent(Op::SetEndpoint {
        endpoint: Box::new(ep.clone()),
        max_rounds: p.max_rounds,
    }));
    if let Some(prompt) = p.system_prompt.clone()
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
    app.neutralize_tool_markers = p.neutralize_markers_in_tool_results;
    app.status.context.window = p.context_window;
    app.status.context.window_from_profile = p.context_window.is_some();
    app.switch.models.clear();
    app.switch.pending_profile = Some(name);
    app.switch.profile = Some(p);
    app.switch.endpoint = Some(ep);
    models_context::check(app);
    if !app.status.context.window_from_profile {
        fx.push(Effect::ListModels(ModelsThen::Quiet));
    }
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
    for (name, p) in &app.switch.profiles {
        let active = *name == app.connection.profile;
        let host = kimi_client::host_and_port(&p.base_url).unwrap_or_else(|| p.base_url.clone());
        s.push_str(&format!(
            "\n  {} {name}: {} {} @ {}{}",
            if active { "*" } else { " " },
            p.mode.as_str(),
            shown(&p.model),
            kimi_client::redact_url(&host),
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
    app.connection.mode = mode;
    app.connection.model = model;
    app.connection.host =
        kimi_client::host_and_port(base_url).unwrap_or_else(|| base_url.to_owned());
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

/// Run [`Effect::ListModels`]: GET `/models` off the event loop; the answer comes back as
/// [`AppEvent::ModelsListed`].
pub(crate) fn spawn_listing(app: &App, then: ModelsThen, events: &mpsc::UnboundedSender<AppEvent>) {
    let events = events.clone();
    let endpoint = app.switch.endpoint.clone();
    tokio::spawn(async move {
        let result = match endpoint.map(Backend::new) {
            None => Err("no endpoint is configured".to_owned()),
            Some(Err(e)) => Err(e.to_string()),
            Some(Ok(b)) => {
                // The model to switch to is kept wherever the server lists it.
                let wanted: Vec<&str> = match &then {
                    ModelsThen::Switch(name) => vec![name.as_str()],
                    _ => Vec::new(),
                };
                b.list_models(&wanted).await.map_err(|e| e.to_string())
            }
        };
        let _ = events.send(AppEvent::ModelsListed { then, result });
    });
}
