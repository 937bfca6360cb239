//! The trust prompt: the working directory has project rules (`.kimi-tui/rules.toml`) and the
//! user has not trusted it. Asked once at start; until trusted only the file's `deny` and `ask`
//! rules apply, so a repository can never allow a call on its own. Trusting is written by the
//! core (an effect the event loop runs off `update`), which then reloads the project's rules.

use std::path::{Path, PathBuf};

use crossterm::event::KeyEvent;
use kimi_core::config::ConfigError;
use kimi_core::tools::Toolbox;
use kimi_core::tools::rules::{self, CompiledRule, RuleSource, Rules, project};
use kimi_core::trust::TrustError;

use super::event::Effect;
use super::keys::{Action, Context, lookup};
use super::state::App;
use kimi_protocol::sanitize;

/// The prompt on screen: the directory whose rules are asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrustPrompt {
    pub(crate) dir: PathBuf,
    /// The trust is being written: keys wait for the answer.
    pub(crate) pending: bool,
}

/// What the user is told when the prompt is declined.
pub(crate) const NOT_TRUSTED: &str = "This directory's .kimi-tui/rules.toml is not trusted: its allow rules are ignored (its deny and ask rules apply). Start kimi-tui here again to be asked again.";

/// Open the prompt for `dir` (at start, when the core says its rules are untrusted).
pub(crate) fn ask(app: &mut App, dir: PathBuf) {
    app.layers.trust = Some(TrustPrompt {
        dir,
        pending: false,
    });
    app.dirty = true;
}

/// A key while the prompt is on top.
pub(crate) fn key(app: &mut App, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let Some(prompt) = app.layers.trust.as_mut() else {
        return;
    };
    if prompt.pending {
        return;
    }
    match lookup(Context::Trust, k) {
        Some(Action::TrustProject) => {
            prompt.pending = true;
            fx.push(Effect::TrustProject {
                dir: prompt.dir.clone(),
            });
        }
        Some(Action::DistrustProject) => {
            app.layers.trust = None;
            app.notice(NOT_TRUSTED, true);
        }
        _ => {}
    }
}

/// Why trusting a directory did not take effect.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrustFailed {
    #[error(transparent)]
    Trust(#[from] TrustError),
    #[error("{0}")]
    Rules(#[from] ConfigError),
}

/// The rules a session starts with: the config's (`config`, checked by the core) and those of
/// the project in `dir` (its allow rules only if the user trusts `dir`); `config_path`: where
/// rules added for the user config go. Also the directory to ask about: one with project rules
/// the user has not trusted.
pub(crate) fn start_rules(
    config: Vec<(CompiledRule, RuleSource)>,
    config_path: Option<PathBuf>,
    dir: Option<&Path>,
    tools: &[kimi_core::tools::ToolSpec],
) -> Result<(Rules, Option<PathBuf>), ConfigError> {
    let Some(dir) = dir else {
        return Ok((Rules::new(config, config_path), None));
    };
    let trusted = kimi_core::trust::is_trusted(dir);
    let started = rules::session_rules(config, config_path, dir, tools, trusted)?;
    let ask = (!trusted && dir.join(rules::PROJECT_RULES).is_file()).then(|| dir.to_owned());
    Ok((started.rules, ask))
}

/// Trust `dir` (remembered in the user's state) and read its project rules again, allow rules
/// included, in place of those in force in `toolbox`'s rules. File I/O: run by the event loop
/// off `update`.
pub(crate) fn trust_and_reload(dir: &Path, toolbox: &Toolbox) -> Result<PathBuf, TrustFailed> {
    let file = kimi_core::trust::default_path().ok_or(TrustError::NoStateDir)?;
    trust_in_and_reload(&file, dir, toolbox)
}

/// [`trust_and_reload`] with the trusted directories kept in `file`.
fn trust_in_and_reload(file: &Path, dir: &Path, toolbox: &Toolbox) -> Result<PathBuf, TrustFailed> {
    kimi_core::trust::trust_in(file, dir)?;
    let loaded = project::load(dir, toolbox.specs(), true)?;
    toolbox.rules().replace_project_rules(loaded.rules);
    Ok(dir.to_owned())
}

/// The answer to [`Effect::TrustProject`]: trusted (the core reloaded the project's rules), or
/// why not.
pub(crate) fn answered(app: &mut App, result: Result<PathBuf, TrustFailed>) {
    app.layers.trust = None;
    match result {
        Ok(dir) => app.notice(
            format!(
                "Trusted {}: its project rules apply, allow rules included (/rules lists them).",
                sanitize::one_line(&dir.display().to_string(), 200)
            ),
            false,
        ),
        Err(e) => app.notice(
            format!(
                "Could not trust this directory: {}. {NOT_TRUSTED}",
                sanitize::one_line(&e.to_string(), 300)
            ),
            true,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_core::tools::rules::{DecisionOrigin, RuleSource, Verdict};
    use serde_json::json;

    /// A real project directory with an allow and a deny rule: untrusted, only the deny applies
    /// and the prompt is asked for; trusted (written to a real trust file), the allow applies too.
    #[test]
    fn trusting_a_project_puts_its_allow_rules_in_force() {
        let tmp = tempfile::tempdir().expect("tmp");
        let project = tmp.path().join("repo");
        std::fs::create_dir_all(project.join(".kimi-tui")).expect("dir");
        std::fs::write(
            project.join(rules::PROJECT_RULES),
            "[[rules]]\ntool = \"run\"\nargs = { command = \"ls*\" }\ndecision = \"allow\"\n\n\
             [[rules]]\ntool = \"run\"\nargs = { command = \"rm *\" }\ndecision = \"deny\"\n",
        )
        .expect("rules");
        let spec = kimi_core::tools::ToolSpec {
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            ..kimi_core::tools::ToolSpec::new("run", vec!["/bin/true".into()])
        };
        let (rules, ask) = start_rules(
            Vec::new(),
            None,
            Some(&project),
            std::slice::from_ref(&spec),
        )
        .expect("valid rules");
        assert_eq!(ask.as_deref(), Some(project.as_path()));
        let toolbox = Toolbox::new(vec![spec.clone()])
            .expect("tools")
            .with_rules(rules);
        let verdict = |args| toolbox.rules().preview(&spec, &args).decision;
        assert_eq!(verdict(json!({"command": "ls -l"})).verdict, Verdict::Ask);
        assert_eq!(verdict(json!({"command": "rm x"})).verdict, Verdict::Deny);

        let file = tmp.path().join("state/trusted-dirs.toml");
        let trusted = trust_in_and_reload(&file, &project, &toolbox).expect("trusted");
        assert_eq!(trusted, project);
        assert!(kimi_core::trust::is_trusted_in(&file, &project));
        let allowed = verdict(json!({"command": "ls -l"}));
        assert_eq!(allowed.verdict, Verdict::Allow);
        assert!(
            matches!(
                allowed.origin,
                DecisionOrigin::Rule {
                    source: RuleSource::Project { line: 1, .. },
                    ..
                }
            ),
            "{allowed:?}"
        );
        assert_eq!(verdict(json!({"command": "rm x"})).verdict, Verdict::Deny);
        // Nothing was doubled: the deny rule is there once.
        assert_eq!(toolbox.rules().entries().len(), 2);
    }

    #[test]
    fn a_directory_without_project_rules_is_not_asked_about() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (rules, ask) = start_rules(Vec::new(), None, Some(tmp.path()), &[]).expect("none");
        assert!(ask.is_none());
        assert!(rules.entries().is_empty());
    }
}
