//! The rules a session starts with: the user config's, then the project's (its allow rules
//! only when the directory is trusted), in one [`Rules`] book.

use std::path::{Path, PathBuf};

use super::book::Rules;
use super::matcher::CompiledRule;
use super::rule::RuleSource;
use crate::config::ConfigError;
use crate::tools::ToolSpec;

/// The rules in force at the start, and what to tell the user about them.
#[derive(Debug, Clone)]
pub struct SessionRules {
    pub rules: Rules,
    /// The project's allow rules that were left out (an untrusted directory).
    pub notices: Vec<String>,
}

/// Put the config's rules (`config_rules`, from [`crate::config::Resolved::rules`]) and those of
/// `cwd`'s `.kimi-tui/rules.toml` in force; `trusted`: whether the project may allow calls.
/// Rules the user adds to the config later go to `config_path`.
pub fn session_rules(
    config_rules: Vec<(CompiledRule, RuleSource)>,
    config_path: Option<PathBuf>,
    cwd: &Path,
    tools: &[ToolSpec],
    trusted: bool,
) -> Result<SessionRules, ConfigError> {
    let project = super::project::load(cwd, tools, trusted)?;
    let all = config_rules.into_iter().chain(project.rules).collect();
    Ok(SessionRules {
        rules: Rules::new(all, config_path),
        notices: project.notice.into_iter().collect(),
    })
}
