//! The rules in force for a session, and how they decide a call: every matching rule counts,
//! the strictest wins (deny, then ask, then allow); no rule matching leaves the tool's
//! `approval`; a tool whose `approval` is `deny` never runs whatever a rule says.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::matcher::{CompiledRule, RuleError};
use super::rule::{DecisionOrigin, Rule, RuleDecision, RuleEntry, RuleId, RuleSource, Verdict};
use crate::tools::{Approval, ToolSpec};

/// A rule in force.
#[derive(Debug, Clone)]
struct Entry {
    id: RuleId,
    compiled: CompiledRule,
    source: RuleSource,
    matches: u64,
}

/// The rules of a session: the config's, the project's and those added while it runs.
#[derive(Debug, Default)]
pub struct RuleBook {
    entries: Vec<Entry>,
    next_id: u64,
    /// Rules found to name an argument an MCP tool does not have, with the tool: ignored for
    /// that tool, and told once.
    reported: HashSet<(RuleId, String)>,
    /// The user's config file, where [`RuleScope::UserConfig`](super::RuleScope) rules go.
    config_path: Option<PathBuf>,
}

/// How one call was decided, and what to tell the user about rules found unusable on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub decision: RuleDecision,
    /// Rules that name an argument the (MCP) tool's schema does not have: ignored, and told
    /// once per rule and tool.
    pub notices: Vec<String>,
}

impl RuleBook {
    /// Add a checked rule; its id.
    pub fn push(&mut self, compiled: CompiledRule, source: RuleSource) -> RuleId {
        self.next_id += 1;
        let id = RuleId(self.next_id);
        self.entries.push(Entry {
            id,
            compiled,
            source,
            matches: 0,
        });
        id
    }

    /// Decide about a call of `spec` with `arguments` (parsed); `count`: this is a real call,
    /// each matching rule's count goes up.
    pub fn decide(&mut self, spec: &ToolSpec, arguments: &Value, count: bool) -> Decided {
        let mut notices = Vec::new();
        let mut best: Option<(Verdict, usize)> = None;
        for i in 0..self.entries.len() {
            let entry = &self.entries[i];
            if !entry.compiled.matches_tool(&spec.name) {
                continue;
            }
            // A rule about this one tool naming an argument it lacks never matches it: said
            // once, so a mistyped rule does not silently stop protecting anything.
            if entry.compiled.names_one_tool()
                && let Some(problem) = entry.compiled.unknown_argument(spec)
            {
                if self.reported.insert((entry.id, spec.name.clone())) {
                    notices.push(format!(
                        "the rule at {} is ignored: {problem}",
                        entry.source
                    ));
                }
                continue;
            }
            if !entry.compiled.matches_arguments(arguments) {
                continue;
            }
            let verdict = entry.compiled.rule.decision;
            if best.is_none_or(|(v, _)| verdict > v) {
                best = Some((verdict, i));
            }
            if count {
                self.entries[i].matches += 1;
            }
        }
        let by_tool = match spec.approval {
            Approval::Auto => Verdict::Allow,
            Approval::Ask => Verdict::Ask,
            Approval::Deny => Verdict::Deny,
        };
        let decision = match best {
            _ if spec.approval == Approval::Deny => RuleDecision::by_tool(Verdict::Deny),
            Some((verdict, i)) => {
                let e = &self.entries[i];
                RuleDecision {
                    verdict,
                    origin: DecisionOrigin::Rule {
                        id: e.id,
                        label: e.compiled.rule.label(),
                        source: e.source.clone(),
                    },
                }
            }
            None => RuleDecision::by_tool(by_tool),
        };
        Decided { decision, notices }
    }

    /// Remove a rule added in the session; `false` when there is none with `id` (rules from
    /// files are removed by editing the file).
    pub fn remove_session_rule(&mut self, id: RuleId) -> bool {
        let before = self.entries.len();
        self.entries
            .retain(|e| !(e.id == id && e.source == RuleSource::Session));
        self.entries.len() != before
    }

    /// Every rule in force, in the order they were added.
    pub fn entries(&self) -> Vec<RuleEntry> {
        self.entries
            .iter()
            .map(|e| RuleEntry {
                id: e.id,
                rule: e.compiled.rule.clone(),
                source: e.source.clone(),
                matches: e.matches,
            })
            .collect()
    }

    pub fn config_path(&self) -> Option<&PathBuf> {
        self.config_path.as_ref()
    }

    pub fn set_config_path(&mut self, path: Option<PathBuf>) {
        self.config_path = path;
    }
}

/// The session's rules, shared: the agent decides with them, the supervisor lists and edits
/// them (a restarted agent keeps them and their counts). Clones share one book.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    book: Arc<Mutex<RuleBook>>,
}

impl Rules {
    /// Rules already checked (see [`crate::config::Config::parse`] and the project file's
    /// loader), with where each was written; `config_path`: where rules the user adds to the
    /// config go.
    pub fn new(rules: Vec<(CompiledRule, RuleSource)>, config_path: Option<PathBuf>) -> Rules {
        let mut book = RuleBook::default();
        for (compiled, source) in rules {
            book.push(compiled, source);
        }
        book.set_config_path(config_path);
        Rules {
            book: Arc::new(Mutex::new(book)),
        }
    }

    /// The book; a panic while it was held left nothing half-done worth refusing over.
    pub fn lock(&self) -> MutexGuard<'_, RuleBook> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Decide about a real call (the matching rules' counts go up).
    pub fn decide(&self, spec: &ToolSpec, arguments: &Value) -> Decided {
        self.lock().decide(spec, arguments, true)
    }

    /// What the rules would decide, without counting (`rules check`).
    pub fn preview(&self, spec: &ToolSpec, arguments: &Value) -> Decided {
        self.lock().decide(spec, arguments, false)
    }

    /// Add a rule for the rest of the session (checked first); its id.
    pub fn add_session_rule(&self, rule: Rule) -> Result<RuleId, RuleError> {
        let compiled = CompiledRule::new(rule)?;
        Ok(self.lock().push(compiled, RuleSource::Session))
    }

    pub fn entries(&self) -> Vec<RuleEntry> {
        self.lock().entries()
    }

    /// Put `project` (the project's rules read again, see [`super::project::load`]) in force
    /// in place of the project rules there were: the user trusted the directory during the
    /// session, so its allow rules now apply. The other rules stay, with their counts.
    pub fn replace_project_rules(&self, project: Vec<(CompiledRule, RuleSource)>) {
        let mut book = self.lock();
        book.entries
            .retain(|e| !matches!(e.source, RuleSource::Project { .. }));
        for (compiled, source) in project {
            book.push(compiled, source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn spec(approval: Approval) -> ToolSpec {
        ToolSpec {
            approval,
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            ..ToolSpec::new("run_command", vec!["true".into()])
        }
    }

    fn rule(command: &str, decision: Verdict) -> CompiledRule {
        let mut r = Rule::new("run_command", decision);
        r.args.insert("command".into(), json!(command));
        CompiledRule::new(r).expect("valid")
    }

    fn line(n: usize) -> RuleSource {
        RuleSource::Config {
            path: "/c/config.toml".into(),
            line: n,
        }
    }

    #[test]
    fn the_strictest_matching_rule_decides_and_every_match_counts() {
        let rules = Rules::new(
            vec![
                (rule("git *", Verdict::Allow), line(1)),
                (rule("git push*", Verdict::Deny), line(5)),
                (rule("ls*", Verdict::Allow), line(9)),
            ],
            None,
        );
        let d = rules.decide(&spec(Approval::Ask), &json!({"command": "git push origin"}));
        assert_eq!(d.decision.verdict, Verdict::Deny);
        assert_eq!(
            d.decision.to_string(),
            "denied by rule `deny run_command {\"command\":\"git push*\"}`, config.toml:5"
        );
        let d = rules.decide(&spec(Approval::Ask), &json!({"command": "git status"}));
        assert_eq!(d.decision.verdict, Verdict::Allow);
        assert_eq!(d.decision.rule(), Some(RuleId(1)));
        let counts: Vec<u64> = rules.entries().iter().map(|e| e.matches).collect();
        assert_eq!(counts, vec![2, 1, 0]);
        // A preview does not count.
        rules.preview(&spec(Approval::Ask), &json!({"command": "ls"}));
        assert_eq!(rules.entries()[2].matches, 0);
    }

    #[test]
    fn no_rule_leaves_the_tool_approval_and_deny_tools_never_run() {
        let rules = Rules::new(vec![(rule("ls*", Verdict::Allow), line(1))], None);
        let other = json!({"command": "rm -rf /"});
        assert_eq!(
            rules.decide(&spec(Approval::Auto), &other).decision,
            RuleDecision::by_tool(Verdict::Allow)
        );
        assert_eq!(
            rules.decide(&spec(Approval::Ask), &other).decision,
            RuleDecision::by_tool(Verdict::Ask)
        );
        // An allow rule does not open a tool the config denies.
        let ls = json!({"command": "ls"});
        assert_eq!(
            rules.decide(&spec(Approval::Deny), &ls).decision,
            RuleDecision::by_tool(Verdict::Deny)
        );
        // An ask rule makes an `auto` tool ask.
        let ask = Rules::new(vec![(rule("*", Verdict::Ask), line(2))], None);
        assert_eq!(
            ask.decide(&spec(Approval::Auto), &ls).decision.verdict,
            Verdict::Ask
        );
    }

    #[test]
    fn a_rule_naming_an_argument_the_tool_lacks_is_ignored_and_told_once() {
        let mut r = Rule::new("run_command", Verdict::Allow);
        r.args.insert("cmd".into(), json!("*"));
        let rules = Rules::new(vec![(CompiledRule::new(r).expect("valid"), line(3))], None);
        let args = json!({"command": "ls"});
        let first = rules.decide(&spec(Approval::Ask), &args);
        assert_eq!(first.decision, RuleDecision::by_tool(Verdict::Ask));
        assert_eq!(
            first.notices,
            vec![
                "the rule at /c/config.toml:3 is ignored: args.cmd: the tool `run_command` has no argument `cmd`"
            ]
        );
        assert!(rules.decide(&spec(Approval::Ask), &args).notices.is_empty());
    }

    #[test]
    fn only_session_rules_are_removed() {
        let rules = Rules::new(vec![(rule("ls*", Verdict::Allow), line(1))], None);
        let id = rules
            .add_session_rule(Rule::new("run_command", Verdict::Deny))
            .expect("valid");
        assert!(!rules.lock().remove_session_rule(RuleId(1)));
        assert!(rules.lock().remove_session_rule(id));
        assert_eq!(rules.entries().len(), 1);
    }

    #[test]
    fn trusting_the_project_replaces_its_rules_and_keeps_the_others() {
        let project = |n| RuleSource::Project {
            path: "/p/.kimi-tui/rules.toml".into(),
            line: n,
        };
        let rules = Rules::new(
            vec![
                (rule("ls*", Verdict::Allow), line(1)),
                (rule("rm*", Verdict::Deny), project(2)),
            ],
            None,
        );
        rules.decide(&spec(Approval::Ask), &json!({"command": "ls"}));
        rules.replace_project_rules(vec![
            (rule("rm*", Verdict::Deny), project(2)),
            (rule("make*", Verdict::Allow), project(6)),
        ]);
        let listed = rules.entries();
        let sources: Vec<&RuleSource> = listed.iter().map(|e| &e.source).collect();
        assert_eq!(sources, vec![&line(1), &project(2), &project(6)]);
        assert_eq!(listed[0].matches, 1);
        let make = rules.decide(&spec(Approval::Ask), &json!({"command": "make test"}));
        assert_eq!(make.decision.verdict, Verdict::Allow);
    }

    fn verdict() -> impl Strategy<Value = Verdict> {
        prop_oneof![
            Just(Verdict::Allow),
            Just(Verdict::Ask),
            Just(Verdict::Deny)
        ]
    }

    proptest! {
        // Whatever the order and whatever else matches, a matching deny rule decides.
        #[test]
        fn a_deny_rule_always_beats_an_allow_rule(
            others in proptest::collection::vec(verdict(), 0..6),
            deny_at in 0usize..7,
            allow_at in 0usize..7,
            command in "[a-z ]{0,10}",
        ) {
            let mut list: Vec<(CompiledRule, RuleSource)> = others
                .iter()
                .enumerate()
                .map(|(i, v)| (rule("**", *v), line(i + 10)))
                .collect();
            list.insert(allow_at.min(list.len()), (rule("**", Verdict::Allow), line(1)));
            list.insert(deny_at.min(list.len()), (rule("**", Verdict::Deny), line(2)));
            let rules = Rules::new(list, None);
            let d = rules.decide(&spec(Approval::Auto), &json!({"command": command}));
            prop_assert_eq!(d.decision.verdict, Verdict::Deny);
        }
    }
}
