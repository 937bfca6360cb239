//! Argument rules in the app: what decided each call (its pane, the dialog), "always allow
//! calls like this" adding a rule from the dialog, `/rules` and removing a session rule, an edit
//! the rules refuse, and the trust prompt for a project's rules.

use std::path::PathBuf;

use super::app_update::{app, ctrl, key, typed};
use super::ui_snapshots::screen;
use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, DialogStage, Entry, PaneState};
use crossterm::event::KeyCode;
use kimi_core::engine::{ApprovalRequest, Decision, EngineEvent, Op};
use kimi_core::tools::rules::{
    CompiledRule, DecisionOrigin, Rule, RuleDecision, RuleId, RuleScope, RuleSource, Rules, Verdict,
};
use kimi_core::tools::{Approval, ToolSpec};
use kimi_protocol::{StreamEvent, ToolCall};
use serde_json::json;

const CALL_ID: &str = "functions.get_weather:0";

fn weather() -> ToolSpec {
    ToolSpec {
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}}}),
        approval: Approval::Ask,
        ..ToolSpec::new("get_weather", vec!["/bin/true".into()])
    }
}

/// The test app with `rules` in force in its toolbox (shared with the core the harness answers
/// for, as the real app's is).
fn app_with_rules(rules: Vec<(Rule, RuleSource)>) -> App {
    let mut a = app();
    let compiled = (rules.into_iter())
        .map(|(r, s)| (CompiledRule::new(r).expect("a valid rule"), s))
        .collect();
    a.toolbox = a.toolbox.clone().with_rules(Rules::new(compiled, None));
    a
}

fn by_rule(verdict: Verdict, label: &str, source: RuleSource) -> RuleDecision {
    RuleDecision {
        verdict,
        origin: DecisionOrigin::Rule {
            id: RuleId(7),
            label: label.into(),
            source,
        },
    }
}

fn config_line(line: usize) -> RuleSource {
    RuleSource::Config {
        path: "/home/u/.config/kimi-tui/config.toml".into(),
        line,
    }
}

/// A turn streaming one weather call with `arguments`.
fn stream_call(app: &mut App, arguments: &str) {
    for e in [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::Stream(StreamEvent::Text("Checking.".into())),
        EngineEvent::Stream(StreamEvent::ToolCallBegin {
            index: 0,
            id: CALL_ID.into(),
            name: "get_weather".into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallArgs {
            index: 0,
            delta: arguments.into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallEnd { index: 0 }),
    ] {
        update(app, AppEvent::Engine(e));
    }
}

fn decided(arguments: &str, decision: RuleDecision) -> AppEvent {
    AppEvent::Engine(EngineEvent::CallDecided {
        index: 0,
        call_id: CALL_ID.into(),
        arguments: arguments.into(),
        decision,
    })
}

/// The call streamed, decided `ask` by `rule`, and the dialog open on it (id 41).
fn asking(app: &mut App, arguments: &str, rule: RuleDecision) {
    stream_call(app, arguments);
    update(app, decided(arguments, rule.clone()));
    let request = ApprovalRequest {
        index: 0,
        call: ToolCall::new(CALL_ID, "get_weather", arguments),
        spec: weather(),
        arguments: arguments.into(),
        problems: Vec::new(),
        rule,
    };
    update(
        app,
        AppEvent::Engine(EngineEvent::ApprovalRequested {
            id: 41,
            request: Box::new(request),
        }),
    );
    app.frame_drawn();
}

fn approvals(fx: &[Effect]) -> Vec<(u64, Decision)> {
    fx.iter()
        .filter_map(|f| match f {
            Effect::Agent(Op::Approve { id, decision, .. }) => Some((*id, decision.clone())),
            _ => None,
        })
        .collect()
}

fn form_text(app: &App) -> String {
    match app.layers.dialog.as_ref().map(|d| &d.stage) {
        Some(DialogStage::Rule(form)) => form.editor.lines().join("\n"),
        other => panic!("not in the rule form: {other:?}"),
    }
}

fn form_problems(app: &App) -> Vec<String> {
    match app.layers.dialog.as_ref().map(|d| &d.stage) {
        Some(DialogStage::Rule(form)) => form.problems.clone(),
        other => panic!("not in the rule form: {other:?}"),
    }
}

fn last_notice(app: &App) -> (String, bool) {
    app.transcript
        .entries
        .iter()
        .rev()
        .find_map(|e| match e {
            Entry::Notice { text, error, .. } => Some((text.clone(), *error)),
            _ => None,
        })
        .expect("a notice")
}

#[test]
fn the_pane_of_a_call_says_which_rule_allowed_it() {
    let mut a = app();
    let args = r#"{"city": "Paris"}"#;
    stream_call(&mut a, args);
    update(
        &mut a,
        decided(
            args,
            by_rule(Verdict::Allow, "read-only weather", config_line(42)),
        ),
    );
    update(
        &mut a,
        AppEvent::Engine(EngineEvent::ToolStarted {
            index: 0,
            call: ToolCall::new(CALL_ID, "get_weather", args),
            arguments: args.into(),
        }),
    );
    let shown = screen(&mut a, 80, 16);
    assert!(
        shown.contains("│ allowed by rule `read-only weather`, config.toml:42"),
        "{shown}"
    );
    insta::assert_snapshot!(shown);
}

#[test]
fn the_pane_says_no_rule_matched_and_a_denial_names_its_rule() {
    let mut a = app();
    let args = r#"{"city": "Paris"}"#;
    stream_call(&mut a, args);
    update(&mut a, decided(args, RuleDecision::by_tool(Verdict::Ask)));
    assert!(
        screen(&mut a, 80, 16).contains("│ asked: no rule matched · tool approval: ask"),
        "{}",
        screen(&mut a, 80, 16)
    );
    update(
        &mut a,
        decided(
            args,
            by_rule(Verdict::Deny, "no weather", RuleSource::Session),
        ),
    );
    assert!(screen(&mut a, 80, 16).contains("│ denied by rule `no weather`, session"));
}

#[test]
fn the_dialog_says_why_it_asks() {
    let mut a = app();
    asking(
        &mut a,
        r#"{"city": "Paris"}"#,
        by_rule(Verdict::Ask, "cities need a look", config_line(9)),
    );
    let shown = screen(&mut a, 90, 24);
    assert!(
        shown.contains("why: asked by rule `cities need a look`, config.toml:9"),
        "{shown}"
    );
    assert!(
        shown.contains(" r  always allow calls like this"),
        "{shown}"
    );
}

#[test]
fn always_allow_calls_like_this_adds_the_edited_rule_then_approves() {
    let mut a = app();
    let args = r#"{"city": "Paris"}"#;
    asking(&mut a, args, RuleDecision::by_tool(Verdict::Ask));
    key(&mut a, KeyCode::Char('r'));
    assert_eq!(
        form_text(&a),
        "[[rules]]\ntool = \"get_weather\"\nargs = { city = \"Paris\" }\ndecision = \"allow\"\nreason = \"allowed from the dialog\""
    );
    insta::assert_snapshot!("rule_form_prefilled", screen(&mut a, 90, 28));
    // Widen the pattern: "Paris" -> "Par*".
    for _ in 0..2 {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::End);
    for _ in 0..3 {
        key(&mut a, KeyCode::Left);
    }
    for _ in 0..2 {
        key(&mut a, KeyCode::Backspace);
    }
    typed(&mut a, "*");
    assert!(
        form_text(&a).contains("args = { city = \"Par*\" }"),
        "{}",
        form_text(&a)
    );
    // Tab: the user config, Tab again: this session. Saving sends the rule first; once the
    // core says it is in force (the harness answers as the supervisor does, from the same
    // rules), the call is approved with its arguments.
    key(&mut a, KeyCode::Tab);
    assert!(screen(&mut a, 90, 28).contains("save to: this session · [user config]"));
    key(&mut a, KeyCode::Tab);
    let fx = ctrl(&mut a, 's');
    let mut want = Rule::new("get_weather", Verdict::Allow);
    want.args.insert("city".into(), json!("Par*"));
    want.reason = Some("allowed from the dialog".into());
    let added = fx.iter().position(|f| {
        matches!(f, Effect::Agent(Op::AddRule { rule, scope })
            if **rule == want && *scope == RuleScope::Session)
    });
    let approved = fx
        .iter()
        .position(|f| matches!(f, Effect::Agent(Op::Approve { .. })));
    assert!(
        matches!((added, approved), (Some(r), Some(y)) if r < y),
        "the rule, then the approval: {fx:?}"
    );
    assert_eq!(
        approvals(&fx),
        vec![(
            41,
            Decision::Approve {
                arguments: args.into()
            }
        )]
    );
    assert!(a.layers.dialog.is_none());
    let (text, error) = last_notice(&a);
    assert!(
        !error && text.contains("Rule `allowed from the dialog` added (this session)"),
        "{text}"
    );
    // In force in the core's book: the next call like it is allowed by it.
    let parsed = json!({"city": "Parma"});
    let decided = a.toolbox.rules().preview(&weather(), &parsed).decision;
    assert_eq!(decided.verdict, Verdict::Allow);
}

#[test]
fn a_rule_edited_past_the_call_is_not_added_and_the_dialog_keeps_asking() {
    let mut a = app();
    asking(
        &mut a,
        r#"{"city": "Paris"}"#,
        RuleDecision::by_tool(Verdict::Ask),
    );
    key(&mut a, KeyCode::Char('r'));
    // "Paris" -> "Parisx": no longer this call.
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::End);
    for _ in 0..3 {
        key(&mut a, KeyCode::Left);
    }
    typed(&mut a, "x");
    let fx = ctrl(&mut a, 's');
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::AddRule { .. }))),
        "{fx:?}"
    );
    assert_eq!(
        form_problems(&a),
        vec!["the rule as edited does not match this call: widen it, or Esc".to_owned()]
    );
    // Esc: back to the question, still pending.
    key(&mut a, KeyCode::Esc);
    assert!(matches!(
        a.layers.dialog.as_ref().map(|d| &d.stage),
        Some(DialogStage::Asking)
    ));
}

#[test]
fn the_cores_refusal_of_a_rule_is_shown_in_the_form() {
    let mut a = app();
    asking(
        &mut a,
        r#"{"city": "Paris"}"#,
        RuleDecision::by_tool(Verdict::Ask),
    );
    key(&mut a, KeyCode::Char('r'));
    // Into the user config, which this run has none of: the core refuses the rule.
    key(&mut a, KeyCode::Tab);
    let notices = a.transcript.entries.len();
    let fx = ctrl(&mut a, 's');
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::AddRule { .. })))
    );
    assert!(approvals(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        form_problems(&a),
        vec!["the rule was not added: there is no config file to write it to".to_owned()]
    );
    assert_eq!(
        a.transcript.entries.len(),
        notices,
        "in the form, not the transcript"
    );
    let shown = screen(&mut a, 90, 28);
    assert!(
        shown.contains("✗ the rule was not added: there is no config file"),
        "{shown}"
    );
    // Back to this session: saved and approved.
    key(&mut a, KeyCode::Tab);
    let fx = ctrl(&mut a, 's');
    assert_eq!(approvals(&fx).len(), 1, "{fx:?}");
}

#[test]
fn an_edit_the_rules_deny_stays_in_the_editor_with_the_rule_named() {
    let mut bases = Rule::new("get_weather", Verdict::Deny);
    bases.args.insert("city".into(), json!("Area *"));
    bases.reason = Some("no secret bases".into());
    let mut a = app_with_rules(vec![(bases, config_line(77))]);
    let args = r#"{"city": "Paris"}"#;
    asking(&mut a, args, RuleDecision::by_tool(Verdict::Ask));
    key(&mut a, KeyCode::Char('e'));
    let Some(DialogStage::Editing { editor, .. }) = a.layers.dialog.as_mut().map(|d| &mut d.stage)
    else {
        panic!("editing");
    };
    editor.select_all();
    editor.cut();
    typed(&mut a, r#"{"city": "Area 51"}"#);
    // Valid for the schema, but the core's rules deny it: it stays in the editor.
    let fx = ctrl(&mut a, 's');
    assert!(approvals(&fx).is_empty(), "{fx:?}");
    match a.layers.dialog.as_ref().map(|d| &d.stage) {
        Some(DialogStage::Editing { problems, .. }) => assert_eq!(
            problems,
            &vec![
                "the rules refuse your edit: denied by rule `no secret bases`, config.toml:77"
                    .to_owned()
            ]
        ),
        other => panic!("still editing: {other:?}"),
    }
    // The pane of the call keeps what decided the call as it stands (the model's arguments).
    let Some(Entry::Assistant(t)) = a.transcript.entries.last() else {
        panic!("a turn")
    };
    assert_eq!(t.panes[0].state, PaneState::WaitingApproval);
    // The rules did not count the edit as a call.
    assert_eq!(a.toolbox.rules().entries()[0].matches, 0);
    // An edit they allow runs.
    let Some(DialogStage::Editing { editor, .. }) = a.layers.dialog.as_mut().map(|d| &mut d.stage)
    else {
        panic!("editing");
    };
    editor.select_all();
    editor.cut();
    typed(&mut a, r#"{"city": "Lyon"}"#);
    let fx = ctrl(&mut a, 's');
    assert_eq!(approvals(&fx).len(), 1, "{fx:?}");
}

fn listed() -> Vec<(Rule, RuleSource)> {
    let mut git = Rule::new("run_command", Verdict::Allow);
    git.args.insert("command".into(), json!("git status*"));
    git.reason = Some("read-only git".into());
    vec![
        (git, config_line(42)),
        (
            Rule::new("get_weather", Verdict::Allow),
            RuleSource::Session,
        ),
    ]
}

#[test]
fn slash_rules_lists_them_and_removes_only_session_rules() {
    let mut a = app_with_rules(listed());
    // Nothing listed yet: N means nothing.
    typed(&mut a, "/rules remove 1");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::RemoveRule { .. })))
    );
    assert!(last_notice(&a).0.starts_with("No rules listed yet"));
    typed(&mut a, "/rules");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(fx.contains(&Effect::Agent(Op::ListRules)), "{fx:?}");
    let shown = screen(&mut a, 130, 12);
    assert!(
        shown.contains("2. allow get_weather · this session · matched 0×"),
        "{shown}"
    );
    insta::assert_snapshot!("rules_listing", shown);
    // A rule from a file is not removed from here.
    typed(&mut a, "/rules remove 1");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::RemoveRule { .. })))
    );
    assert_eq!(
        last_notice(&a),
        (
            "Rule 1 is written in a file: edit that file to remove it.".to_owned(),
            true
        )
    );
    typed(&mut a, "/rules remove 3");
    key(&mut a, KeyCode::Enter);
    assert_eq!(last_notice(&a).0, "There is no rule 3: /rules lists 2.");
    typed(&mut a, "/rules remove 2");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(
        fx.contains(&Effect::Agent(Op::RemoveRule { id: RuleId(2) })),
        "{fx:?}"
    );
    // The core's listing after the removal.
    let (text, _) = last_notice(&a);
    assert!(
        text.contains("1. allow run_command") && !text.contains("2."),
        "{text}"
    );
    assert_eq!(a.toolbox.rules().entries().len(), 1);
}

#[test]
fn trusting_a_project_goes_through_an_effect_and_its_answer() {
    let mut a = app();
    let dir = PathBuf::from("/work/repo");
    crate::app::trust::ask(&mut a, dir.clone());
    insta::assert_snapshot!("trust_prompt", screen(&mut a, 90, 20));
    // Other keys do nothing; the composer gets none of them.
    typed(&mut a, "x");
    assert!(a.composer.input.is_empty() && a.layers.trust.is_some());
    let fx = key(&mut a, KeyCode::Char('t'));
    assert_eq!(fx, vec![Effect::TrustProject { dir: dir.clone() }]);
    // Keys wait for the answer.
    assert!(key(&mut a, KeyCode::Char('t')).is_empty());
    update(&mut a, AppEvent::Trusted(Ok(dir)));
    assert!(a.layers.trust.is_none());
    let (text, error) = last_notice(&a);
    assert!(!error && text.starts_with("Trusted /work/repo"), "{text}");
}

#[test]
fn not_trusting_a_project_says_its_allow_rules_are_ignored() {
    let mut a = app();
    crate::app::trust::ask(&mut a, PathBuf::from("/work/repo"));
    let fx = key(&mut a, KeyCode::Char('n'));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(a.layers.trust.is_none());
    assert_eq!(
        last_notice(&a),
        (crate::app::trust::NOT_TRUSTED.to_owned(), true)
    );
}
