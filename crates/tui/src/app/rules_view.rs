//! The argument rules as the app shows them: what decided each call (in its pane and the
//! dialog), `/rules` (every rule in force, where it comes from, how often it matched), removing
//! a session rule, and the core's answer to a rule added from the dialog. The core holds the
//! rules and decides; the app keeps only the numbering of the last listing.

use super::event::Effect;
use super::state::{App, DialogStage};
use kimi_core::engine::{ApprovalRequest, Decision, Op};
use kimi_core::tools::rules::{RuleDecision, RuleEntry, RuleId, RuleSource, Verdict};
use kimi_protocol::sanitize;

/// Rule texts in the listing are shown up to this many characters.
const RULE_CHARS: usize = 200;

/// What the app keeps of the rules: the ids of the last `/rules` listing, numbered from 1 as
/// shown, so that `/rules remove N` removes the rule the user saw as N.
#[derive(Debug, Default)]
pub(crate) struct RulesView {
    pub(crate) listed: Vec<(RuleId, bool)>,
}

/// Why the dialog asks, as the core reported it with the request.
pub(crate) fn request_decision(r: &ApprovalRequest) -> Option<&RuleDecision> {
    Some(&r.rule)
}

/// `/rules`: the core lists them (`EngineEvent::Rules`).
pub(crate) fn command(fx: &mut Vec<Effect>) {
    fx.push(Effect::Agent(Op::ListRules));
}

/// `/rules remove N`: N as the last listing numbered it; only session rules go.
pub(crate) fn remove(app: &mut App, n: usize, fx: &mut Vec<Effect>) {
    match app.rules.listed.get(n.wrapping_sub(1)) {
        None if app.rules.listed.is_empty() => {
            app.notice("No rules listed yet: /rules lists them, numbered.", true)
        }
        None => app.notice(
            format!(
                "There is no rule {n}: /rules lists {}.",
                app.rules.listed.len()
            ),
            true,
        ),
        Some((_, false)) => app.notice(
            format!("Rule {n} is written in a file: edit that file to remove it."),
            true,
        ),
        Some((id, true)) => fx.push(Effect::Agent(Op::RemoveRule { id: *id })),
    }
}

/// The listing of `/rules`, numbered from 1.
pub(crate) fn listing(rules: &[RuleEntry]) -> String {
    if rules.is_empty() {
        return "No argument rules are in force: each tool's approval applies.".to_owned();
    }
    let mut s = String::from(
        "Rules in force (every matching rule counts; deny, then ask, then allow wins):",
    );
    for (i, e) in rules.iter().enumerate() {
        let r = &e.rule;
        let args = if r.args.is_empty() {
            String::new()
        } else {
            format!(" {}", serde_json::Value::Object(r.args.clone()))
        };
        let reason = r
            .reason
            .as_deref()
            .map(|t| format!(" · `{t}`"))
            .unwrap_or_default();
        let line = format!(
            "{n}. {decision} {tool}{args}{reason} · {source} · matched {m}×",
            n = i + 1,
            decision = r.decision,
            tool = r.tool,
            source = e.source,
            m = e.matches,
        );
        s.push_str("\n  ");
        s.push_str(&sanitize::one_line(&line, RULE_CHARS));
    }
    if rules.iter().any(|e| e.source == RuleSource::Session) {
        s.push_str("\n/rules remove N removes session rule N.");
    }
    s
}

/// The core's rules, after `/rules`, an added rule or a removed one. A rule added from the
/// dialog's form (`added`) approves the call the form was opened for.
pub(crate) fn rules(
    app: &mut App,
    rules: Vec<RuleEntry>,
    added: Option<RuleId>,
    fx: &mut Vec<Effect>,
) {
    app.rules.listed = (rules.iter())
        .map(|e| (e.id, e.source == RuleSource::Session))
        .collect();
    let waiting = app
        .layers
        .dialog
        .as_ref()
        .is_some_and(|d| matches!(&d.stage, DialogStage::Rule(f) if f.pending));
    match added {
        Some(id) if waiting => {
            let entry = rules.iter().find(|e| e.id == id);
            let (label, source) = entry
                .map(|e| (e.rule.label(), e.source.to_string()))
                .unwrap_or_default();
            app.notice(
                format!(
                    "Rule `{}` added ({}): calls like this run without asking.",
                    sanitize::one_line(&label, RULE_CHARS),
                    sanitize::one_line(&source, RULE_CHARS)
                ),
                false,
            );
            if let Some(d) = app.layers.dialog.as_ref() {
                let arguments = d.request.arguments.clone();
                super::update::decide(app, Decision::Approve { arguments }, false, fx);
            }
        }
        Some(_) => {}
        None => app.notice(listing(&rules), false),
    }
}

/// A notice from the core while the form waits for its rule: the rule was not added (its
/// examples contradict it, it names an argument the tool lacks, the config cannot be
/// written). Shown in the form, which stays open. False when nothing waits for it.
pub(crate) fn refused(app: &mut App, text: &str) -> bool {
    let Some(d) = app.layers.dialog.as_mut() else {
        return false;
    };
    let DialogStage::Rule(form) = &mut d.stage else {
        return false;
    };
    // The core's refusals of a rule say so; other notices are not about the form.
    if !form.pending || !text.starts_with("the rule was not added") {
        return false;
    }
    form.pending = false;
    form.problems = vec![text.to_owned()];
    true
}

/// The core decided about a call (again, for arguments edited in the dialog, once approved):
/// its pane shows what decided it.
pub(crate) fn call_decided(app: &mut App, call_id: &str, decision: RuleDecision) {
    if let Some(p) = app.pane_for_call(call_id) {
        p.decided = Some(decision);
    }
}

/// Why the rules refuse `arguments` (edited in the dialog, valid) for the dialog's call: the
/// core's rule book says so without counting a match, as it will when the edit is approved.
pub(crate) fn edit_refused(app: &App, arguments: &serde_json::Value) -> Option<String> {
    let d = app.layers.dialog.as_ref()?;
    let decided = app.toolbox.rules().preview(&d.request.spec, arguments);
    (decided.decision.verdict == Verdict::Deny).then(|| {
        let (text, _) = crate::ui::rule_line::decision_line(&decided.decision);
        format!("the rules refuse your edit: {text}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_core::tools::rules::Rule;

    fn entry(id: u64, rule: Rule, source: RuleSource, matches: u64) -> RuleEntry {
        RuleEntry {
            id: RuleId(id),
            rule,
            source,
            matches,
        }
    }

    #[test]
    fn the_listing_numbers_rules_with_their_source_and_matches() {
        let mut git = Rule::new("run_command", Verdict::Allow);
        git.args.insert("command".into(), "git status*".into());
        git.reason = Some("read-only git".into());
        let text = listing(&[
            entry(
                7,
                git,
                RuleSource::Config {
                    path: "/c/config.toml".into(),
                    line: 42,
                },
                3,
            ),
            entry(
                9,
                Rule::new("mcp__*", Verdict::Deny),
                RuleSource::Session,
                0,
            ),
        ]);
        assert_eq!(
            text,
            "Rules in force (every matching rule counts; deny, then ask, then allow wins):\n  \
             1. allow run_command {\"command\":\"git status*\"} · `read-only git` · /c/config.toml:42 · matched 3×\n  \
             2. deny mcp__* · this session · matched 0×\n\
             /rules remove N removes session rule N."
        );
        assert!(listing(&[]).starts_with("No argument rules"));
    }
}
