//! Rules on the arguments of any tool call, local or MCP, checked before the approval dialog:
//! what a rule is and where it came from ([`rule`]), argument paths and globs, the compiled
//! matcher, and the session's book of rules that decides a call ([`Rules`]); reading them
//! from files (the config's `[[rules]]`, the project's [`PROJECT_RULES`]) and writing one back
//! into the user's config ([`append_rule`]).

mod arg_path;
mod book;
mod glob;
mod in_force;
mod load;
mod matcher;
pub mod project;
mod rule;
mod write_back;

pub use arg_path::{ArgPath, PathError};
pub use book::{Decided, RuleBook, Rules};
pub use glob::Glob;
pub use in_force::{SessionRules, session_rules};
pub(crate) use load::check_rules;
pub use matcher::{CompiledRule, RuleError};
pub use project::{PROJECT_RULES, ProjectRules};
pub use rule::{
    DecisionOrigin, Rule, RuleDecision, RuleEntry, RuleId, RuleScope, RuleSource, Verdict,
};
pub use write_back::{WriteBackError, append_rule};
