//! The rule operations ([`Op::AddRule`], [`Op::RemoveRule`], [`Op::ListRules`]): answered from
//! the toolbox's shared rules, by the supervisor at once (even while a turn waits for a
//! dialog) or by an agent that runs without one.

use super::event::{EngineEvent, Op};
use crate::tools::Toolbox;
use crate::tools::rules::{CompiledRule, Rule, RuleId, RuleScope, RuleSource, Rules};

/// The answer to a rule operation; `None` for any other operation.
pub(crate) fn answer(toolbox: &Toolbox, op: &Op) -> Option<EngineEvent> {
    let rules = toolbox.rules();
    Some(match op {
        Op::ListRules => listing(rules, None),
        Op::AddRule { rule, scope } => match add(toolbox, rule, *scope) {
            Ok(id) => listing(rules, Some(id)),
            Err(text) => EngineEvent::Notice { text, error: true },
        },
        Op::RemoveRule { id } => {
            if rules.lock().remove_session_rule(*id) {
                listing(rules, None)
            } else {
                let text = format!(
                    "no session rule {id} to remove (a rule from a file is removed by editing the file)"
                );
                EngineEvent::Notice { text, error: true }
            }
        }
        _ => return None,
    })
}

fn listing(rules: &Rules, added: Option<RuleId>) -> EngineEvent {
    EngineEvent::Rules {
        rules: rules.entries(),
        added,
    }
}

/// Check `rule` as a config rule would be, write it where `scope` says, and put it in force.
/// The error is a notice's text.
fn add(toolbox: &Toolbox, rule: &Rule, scope: RuleScope) -> Result<RuleId, String> {
    let compiled = CompiledRule::new(rule.clone())
        .and_then(|c| c.check_tools(toolbox.specs()).map(|()| c))
        .map_err(|e| format!("the rule was not added: {e}"))?;
    let mut book = toolbox.rules().lock();
    let source = match scope {
        RuleScope::Session => RuleSource::Session,
        RuleScope::UserConfig => {
            let path = book
                .config_path()
                .cloned()
                .ok_or("the rule was not added: there is no config file to write it to")?;
            let line = crate::tools::rules::append_rule(&path, rule)
                .map_err(|e| format!("the rule was not added: {e}"))?;
            RuleSource::Config { path, line }
        }
    };
    Ok(book.push(compiled, source))
}
