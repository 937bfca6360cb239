//! Where the agent's requests go, and what `/model` and `/profile` switch between. The
//! switchboard holds the config file's profiles, the API keys their variables held at start
//! (the environment does not change under a running process), and the endpoint the agent was
//! last told to use; a screen sees none of it but names, hosts without credentials and the
//! strings to scrub from what it saves.
//!
//! What a switch keeps and what it changes:
//! - `/model NAME`: the server, key, mode and profile stay; the model changes, and with it what
//!   the profile would pick for that model: the template (from the name, unless the profile
//!   names one for its own model), `thinking` as the profile sets it (a `/thinking` switch is
//!   dropped), and the default temperature and max_tokens of a thinking or non-thinking model.
//! - `/profile NAME`: everything the profile says about requests (server, key, mode, model,
//!   template, thinking, sampling, timeouts, retries, max_rounds) as written in the file (the
//!   command line's `--mode`/`--model`/`--base-url` were for the starting profile only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kimi_client::{Backend, BackendError, Endpoint};
use kimi_protocol::{Mode, Template};

use super::event::Op;
use crate::backend::{redact_url, shown_host};
use crate::config::{ApiKeyError, Profile, Resolved};
use crate::session::Session;

/// Why the starting profile cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The profile's key is missing or unusable; `origin` names the profile and its file.
    #[error("{origin}: {error}")]
    Profile { origin: String, error: ApiKeyError },
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Why a switch was not made; `Display` is the notice the user reads.
#[derive(Debug, thiserror::Error)]
pub enum SwitchRefused {
    /// The client cannot be built for the new endpoint.
    #[error("cannot switch: {0}")]
    Client(Box<BackendError>),
    #[error("No profile named `{name}`; defined: {defined}.")]
    UnknownProfile { name: String, defined: String },
    #[error("Not switched: {origin}: {error}.")]
    Key { origin: String, error: ApiKeyError },
    /// Raw mode cannot serve this model; `place` is empty or names the profile (`origin: `).
    #[error("Not switched: {place}{why}.")]
    RawMode { place: String, why: String },
}

/// A profile as `/profile` lists it: no key, the host without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSummary {
    pub name: String,
    pub mode: Mode,
    pub model: String,
    pub host: String,
}

/// What a screen shows of where requests go at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionView {
    pub profile: String,
    pub mode: Mode,
    pub model: String,
    /// `host:port`, never with credentials.
    pub host: String,
    pub template: Template,
    pub thinking: Option<bool>,
    pub logprobs: u8,
    /// Set by the profile; otherwise learnt from the server's model list.
    pub context_window: Option<u64>,
}

/// What a profile switch changes beside the endpoint, for the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileChoice {
    pub name: String,
    pub model: String,
    /// The profile's own; `None`: learnt from the server (a quiet listing follows).
    pub context_window: Option<u64>,
    /// Used when the conversation is empty.
    pub system_prompt: Option<String>,
    pub neutralize_markers: bool,
}

/// Environment variables and their values as read at start; `Debug` shows the names only.
#[derive(Default)]
struct EnvKeys(BTreeMap<String, Result<String, std::env::VarError>>);

impl EnvKeys {
    fn read<'a>(vars: impl IntoIterator<Item = &'a str>) -> Self {
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

/// The profiles, their keys and the endpoint in use.
#[derive(Debug)]
pub struct Switchboard {
    profile_name: String,
    /// The active profile as written (plus the command line's overrides for the first one):
    /// the defaults a model switch goes back to.
    profile: Profile,
    profiles: BTreeMap<String, Profile>,
    config_path: Option<PathBuf>,
    keys: EnvKeys,
    /// The last endpoint the agent was told to use (its mode and thinking switches included).
    endpoint: Endpoint,
    max_rounds: u32,
}

impl Switchboard {
    /// The starting profile's endpoint, with its key read from the environment now; the other
    /// profiles' keys are read now too, for later switches.
    pub fn new(
        profile_name: String,
        profile: Profile,
        profiles: BTreeMap<String, Profile>,
        config_path: Option<PathBuf>,
    ) -> Result<Self, StartError> {
        let keys = EnvKeys::read(
            (profiles.values())
                .chain([&profile])
                .filter_map(|p| p.api_key_env.as_deref()),
        );
        let endpoint = profile
            .endpoint_with(&|var| keys.get(var))
            .map_err(|error| StartError::Profile {
                origin: origin(&profile_name, config_path.as_deref(), true),
                error,
            })?;
        // A profile the client cannot serve stops here, before anything is drawn.
        Backend::new(endpoint.clone())?;
        Ok(Switchboard {
            max_rounds: profile.max_rounds,
            profile_name,
            profile,
            profiles,
            config_path,
            keys,
            endpoint,
        })
    }

    /// [`Switchboard::new`] with what the config resolved to.
    pub fn from_resolved(r: &Resolved) -> Result<Self, StartError> {
        Switchboard::new(
            r.profile_name.clone(),
            r.profile.clone(),
            r.profiles.clone(),
            r.config_path.clone(),
        )
    }

    /// A client for the endpoint in use (what an agent is started with).
    pub fn backend(&self) -> Result<Backend, BackendError> {
        Backend::new(self.endpoint.clone())
    }

    pub(crate) fn max_rounds(&self) -> u32 {
        self.max_rounds
    }

    /// A new saved session for where requests go now.
    pub fn session(&self) -> Session {
        Session::for_endpoint(&self.profile_name, &self.endpoint)
    }

    /// Where requests go at start, as shown.
    pub fn view(&self) -> ConnectionView {
        let ep = &self.endpoint;
        ConnectionView {
            profile: self.profile_name.clone(),
            mode: ep.mode,
            model: ep.model.clone(),
            host: shown_host(&ep.base_url),
            template: ep.template(),
            thinking: ep.thinking,
            logprobs: ep.logprobs,
            context_window: self.profile.context_window,
        }
    }

    /// What must never be written or shown as it is (saved traces, the prompt history): the
    /// key in use first, then every other profile's.
    pub fn redactions(&self) -> crate::redactor::Redactor {
        let mut keys: Vec<String> = self.endpoint.api_key.iter().cloned().collect();
        for p in self.profiles.values() {
            if let Ok(Some(k)) = p
                .endpoint_with(&|var| self.keys.get(var))
                .map(|e| e.api_key)
                && !keys.contains(&k)
            {
                keys.push(k);
            }
        }
        crate::redactor::Redactor::new(keys)
    }

    /// Every profile of the config file, for `/profile`.
    pub fn profiles(&self) -> Vec<ProfileSummary> {
        (self.profiles.iter())
            .map(|(name, p)| ProfileSummary {
                name: name.clone(),
                mode: p.mode,
                model: p.model.clone(),
                host: redact_url(&shown_host(&p.base_url)),
            })
            .collect()
    }

    /// The config file, named in `/profile`'s listing.
    pub fn config_path(&self) -> Option<&Path> {
        self.config_path.as_deref()
    }

    /// The agent now talks in `mode`.
    pub(crate) fn mode_set(&mut self, mode: Mode) {
        self.endpoint.mode = mode;
    }

    /// `/thinking on|off` was sent: a later model switch starts from the profile again, a
    /// restart keeps it.
    pub(crate) fn thinking_set(&mut self, on: bool) {
        self.endpoint.thinking = Some(on);
    }

    /// An endpoint given as it is ([`Op::SetEndpoint`]).
    pub(crate) fn endpoint_set(&mut self, endpoint: Endpoint, max_rounds: u32) {
        self.endpoint = endpoint;
        self.max_rounds = max_rounds;
    }

    /// The endpoint a listing asks.
    pub(crate) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `/model NAME`: the operation that makes the agent use `name`, with the defaults the
    /// profile would pick for it.
    pub(crate) fn switch_model(&mut self, name: &str) -> Result<Op, SwitchRefused> {
        let mut p = self.profile.clone();
        // The profile's template was chosen for its own model.
        if name != self.profile.model {
            p.template = None;
        }
        p.model = name.to_owned();
        let mut ep = self.endpoint.clone();
        ep.model = name.to_owned();
        ep.template = p.template;
        ep.thinking = p.thinking;
        ep.temperature = p.temperature();
        ep.max_tokens = p.max_tokens();
        if ep.mode == Mode::Raw
            && let Some(why) = ep.raw_mode_refusal()
        {
            return Err(SwitchRefused::RawMode {
                place: String::new(),
                why,
            });
        }
        Backend::new(ep.clone()).map_err(|e| SwitchRefused::Client(Box::new(e)))?;
        self.endpoint_set(ep.clone(), p.max_rounds);
        Ok(Op::SetEndpoint {
            endpoint: Box::new(ep),
            max_rounds: p.max_rounds,
        })
    }

    /// `/profile NAME`: the operation that makes the agent use the profile, and what else the
    /// profile changes.
    pub(crate) fn switch_profile(
        &mut self,
        name: &str,
    ) -> Result<(Op, ProfileChoice), SwitchRefused> {
        let Some(p) = self.profiles.get(name).cloned() else {
            let names: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            let defined = if names.is_empty() {
                "none (no config file)".to_owned()
            } else {
                names.join(", ")
            };
            return Err(SwitchRefused::UnknownProfile {
                name: kimi_protocol::sanitize::one_line(name, 120),
                defined,
            });
        };
        let origin = origin(name, self.config_path.as_deref(), false);
        let ep =
            (p.endpoint_with(&|var| self.keys.get(var))).map_err(|error| SwitchRefused::Key {
                origin: origin.clone(),
                error,
            })?;
        if ep.mode == Mode::Raw
            && let Some(why) = ep.raw_mode_refusal()
        {
            let place = format!("{origin}: ");
            return Err(SwitchRefused::RawMode { place, why });
        }
        Backend::new(ep.clone()).map_err(|e| SwitchRefused::Client(Box::new(e)))?;
        let choice = ProfileChoice {
            name: name.to_owned(),
            model: p.model.clone(),
            context_window: p.context_window,
            system_prompt: p.system_prompt.clone(),
            neutralize_markers: p.neutralize_markers_in_tool_results,
        };
        self.endpoint_set(ep.clone(), p.max_rounds);
        self.profile_name = name.to_owned();
        self.profile = p;
        let op = Op::SetEndpoint {
            endpoint: Box::new(ep),
            max_rounds: self.max_rounds,
        };
        Ok((op, choice))
    }
}

/// `profile `x` in /path/config.toml`, for error texts: the user knows which file to fix.
fn origin(name: &str, config: Option<&Path>, say_none: bool) -> String {
    match config {
        Some(path) => format!("profile `{name}` in {}", path.display()),
        None if say_none => format!("profile `{name}` (no config file)"),
        None => format!("profile `{name}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> Switchboard {
        let mut test = Profile::new(Mode::Raw, "http://127.0.0.1:1/v1");
        test.model = "m".into();
        let mut other = Profile::new(Mode::Chat, "http://u:pw@10.0.0.2:9000/v1");
        other.model = "moonshotai/Kimi-K2.5".into();
        other.context_window = Some(262_144);
        other.max_rounds = 3;
        let mut keyless = Profile::new(Mode::Chat, "https://api.example/v1");
        keyless.api_key_env = Some("KIMI_TUI_TEST_SURELY_UNSET_KEY".into());
        let profiles = [
            ("test".to_owned(), test.clone()),
            ("other".to_owned(), other),
            ("keyless".to_owned(), keyless),
        ]
        .into();
        Switchboard::new("test".into(), test, profiles, Some("/c/config.toml".into()))
            .expect("no key needed")
    }

    #[test]
    fn profiles_are_listed_without_credentials() {
        let hosts: Vec<String> = board().profiles().into_iter().map(|p| p.host).collect();
        assert_eq!(hosts, ["api.example", "10.0.0.2:9000", "127.0.0.1:1"]);
    }

    #[test]
    fn a_profile_switch_takes_the_profiles_endpoint_and_rounds() {
        let mut b = board();
        let (op, choice) = b.switch_profile("other").expect("switches");
        let Op::SetEndpoint {
            endpoint,
            max_rounds,
        } = op
        else {
            panic!("{op:?}")
        };
        assert_eq!(
            (endpoint.mode, endpoint.model.as_str()),
            (Mode::Chat, "moonshotai/Kimi-K2.5")
        );
        assert_eq!(max_rounds, 3);
        assert_eq!(choice.context_window, Some(262_144));
        assert_eq!(b.view().profile, "other");
        assert_eq!(b.view().host, "10.0.0.2:9000");
    }

    #[test]
    fn refused_switches_say_why_and_change_nothing() {
        let mut b = board();
        let e = b.switch_profile("nope").expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "No profile named `nope`; defined: keyless, other, test."
        );
        let e = b.switch_profile("keyless").expect_err("no key");
        assert!(
            e.to_string().starts_with(
                "Not switched: profile `keyless` in /c/config.toml: the environment variable KIMI_TUI_TEST_SURELY_UNSET_KEY"
            ),
            "{e}"
        );
        assert_eq!(b.view().profile, "test");
        assert_eq!(b.endpoint().model, "m");
    }

    #[test]
    fn a_profiles_key_comes_from_the_environment_as_read_at_start_and_is_never_shown() {
        let mut b = board();
        // The key as it was read at start; the process environment itself does not hold it.
        b.keys.0.insert(
            "KIMI_TUI_TEST_SURELY_UNSET_KEY".into(),
            Ok("sk-from-start-123".into()),
        );
        assert!(
            b.redactions().found_in("sk-from-start-123"),
            "to be scrubbed"
        );
        let Ok((Op::SetEndpoint { endpoint, .. }, _)) = b.switch_profile("keyless") else {
            panic!("switches")
        };
        assert_eq!(endpoint.api_key.as_deref(), Some("sk-from-start-123"));
        assert!(!format!("{:?}", b.keys).contains("sk-from-start"));
    }

    #[test]
    fn a_model_switch_keeps_the_mode_the_agent_was_switched_to() {
        let mut b = board();
        b.mode_set(Mode::Chat);
        b.thinking_set(true);
        let Ok(Op::SetEndpoint { endpoint, .. }) = b.switch_model("moonshotai/Kimi-K2.5") else {
            panic!("switches")
        };
        assert_eq!(endpoint.mode, Mode::Chat);
        // The profile's thinking setting, not the earlier `/thinking` switch.
        assert_eq!(endpoint.thinking, None);
        assert_eq!(b.endpoint().model, "moonshotai/Kimi-K2.5");
    }
}
