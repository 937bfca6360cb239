//! What decided a call, in one line for its pane and the dialog: "allowed by rule `read-only
//! git`, config.toml:42", "asked: no rule matched · tool approval: ask".

use ratatui::style::Style;

use super::style;
use kimi_core::tools::rules::{DecisionOrigin, RuleDecision, Verdict};
use kimi_protocol::sanitize;

/// Labels (a rule's reason, or its patterns) are shown up to this many characters.
const LABEL_CHARS: usize = 120;

/// The decision as a line of text and its style.
pub(crate) fn decision_line(d: &RuleDecision) -> (String, Style) {
    let (what, st) = match d.verdict {
        Verdict::Allow => ("allowed", style::ok()),
        Verdict::Ask => ("asked", style::dim()),
        Verdict::Deny => ("denied", style::error()),
    };
    let text = match &d.origin {
        // The label and the file name come from config files and the model's arguments:
        // one line, escaped.
        DecisionOrigin::Rule { label, source, .. } => format!(
            "{what} by rule `{}`, {}",
            sanitize::one_line(label, LABEL_CHARS),
            sanitize::one_line(&source.short(), LABEL_CHARS)
        ),
        DecisionOrigin::ToolApproval => {
            format!("{what}: no rule matched · tool approval: {}", d.verdict)
        }
    };
    (text, st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_core::tools::rules::{RuleId, RuleSource};

    #[test]
    fn each_origin_reads_as_the_user_wrote_it() {
        let by_rule = RuleDecision {
            verdict: Verdict::Allow,
            origin: DecisionOrigin::Rule {
                id: RuleId(1),
                label: "read-only git".into(),
                source: RuleSource::Config {
                    path: "/home/u/.config/kimi-tui/config.toml".into(),
                    line: 42,
                },
            },
        };
        assert_eq!(
            decision_line(&by_rule).0,
            "allowed by rule `read-only git`, config.toml:42"
        );
        let denied = RuleDecision {
            verdict: Verdict::Deny,
            origin: DecisionOrigin::Rule {
                id: RuleId(2),
                label: "no\npush".into(),
                source: RuleSource::Session,
            },
        };
        assert_eq!(
            decision_line(&denied).0,
            "denied by rule `no\\npush`, session"
        );
        assert_eq!(
            decision_line(&RuleDecision::by_tool(Verdict::Ask)).0,
            "asked: no rule matched · tool approval: ask"
        );
    }
}
