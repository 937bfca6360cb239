//! Rules on call arguments in the agent loop: against the real mock server over loopback, with
//! real child processes for tools. A rule decides before any dialog: allow runs, deny refuses
//! (the model is told which rule), ask asks; arguments edited in the dialog are decided again.

use std::collections::VecDeque;
use std::path::PathBuf;

use kimi_client::{Backend, Endpoint};
use kimi_core::engine::{
    Agent, AgentHandle, AgentInit, ApprovalRequest, Decision, EVENT_QUEUE, EngineEvent, Op,
};
use kimi_core::tools::rules::{
    CompiledRule, DecisionOrigin, Rule, RuleDecision, RuleScope, RuleSource, Rules, Verdict,
};
use kimi_core::tools::{Approval, CallProblem, ToolSpec, Toolbox};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::{Message, Mode};
use serde_json::json;

fn weather(approval: Approval) -> ToolSpec {
    ToolSpec {
        description: "test tool get_weather".into(),
        parameters: json!({"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string", "description": "City name"}}}),
        approval,
        timeout_secs: 10,
        ..ToolSpec::new(
            "get_weather",
            vec![kimi_test_support::tool_script("weather.sh")],
        )
    }
}

fn city_rule(city: &str, decision: Verdict, reason: &str) -> Rule {
    let mut r = Rule::new("get_weather", decision);
    r.args.insert("city".into(), json!(city));
    r.reason = Some(reason.into());
    r
}

fn config_line(line: usize) -> RuleSource {
    RuleSource::Config {
        path: PathBuf::from("/home/u/.config/kimi-tui/config.toml"),
        line,
    }
}

fn rules(list: Vec<(Rule, usize)>, config_path: Option<PathBuf>) -> Rules {
    let compiled = list
        .into_iter()
        .map(|(r, line)| (CompiledRule::new(r).expect("valid rule"), config_line(line)))
        .collect();
    Rules::new(compiled, config_path)
}

struct Run {
    events: Vec<EngineEvent>,
    asked: Vec<ApprovalRequest>,
    conversation: Vec<Message>,
}

impl Run {
    fn tool_text(&self) -> String {
        let tools: Vec<&Message> = (self.conversation.iter())
            .filter(|m| m.role == "tool")
            .collect();
        assert_eq!(tools.len(), 1, "{:?}", self.conversation);
        tools[0].text()
    }

    fn decisions(&self) -> Vec<&RuleDecision> {
        (self.events.iter())
            .filter_map(|e| match e {
                EngineEvent::CallDecided { decision, .. } => Some(decision),
                _ => None,
            })
            .collect()
    }

    fn ran(&self) -> bool {
        (self.events.iter()).any(|e| matches!(e, EngineEvent::ToolStarted { .. }))
    }
}

fn spawn(backend: Backend, toolbox: Toolbox) -> AgentHandle {
    Agent::spawn(
        AgentInit {
            backend,
            toolbox,
            max_rounds: 4,
            system_prompt: None,
            conversation: Vec::new(),
            traces: Vec::new(),
        },
        EVENT_QUEUE,
    )
}

/// One turn asking for Paris's weather, approvals answered in order by `answers` (approve as
/// asked when they run out).
async fn turn(agent: &mut AgentHandle, mut answers: VecDeque<Decision>) -> Run {
    assert!(agent.send(Op::UserTurn {
        text: "What's the weather like in Paris?".into()
    }));
    let mut events = Vec::new();
    let mut asked = Vec::new();
    loop {
        match agent.events.recv().await.expect("the agent reports") {
            EngineEvent::ApprovalRequested { id, request } => {
                let decision = answers.pop_front().unwrap_or(Decision::Approve {
                    arguments: request.arguments.clone(),
                });
                asked.push(*request);
                agent.send(Op::Approve {
                    id,
                    decision,
                    always: false,
                });
            }
            EngineEvent::TurnDone { .. } => break,
            EngineEvent::TurnFailed { message } => panic!("the turn failed: {message}"),
            e => events.push(e),
        }
    }
    assert!(agent.send(Op::Snapshot));
    let conversation = loop {
        if let EngineEvent::Snapshot { messages, .. } = agent.events.recv().await.expect("snap") {
            break messages;
        }
    };
    Run {
        events,
        asked,
        conversation,
    }
}

async fn run(tool: ToolSpec, rules: Rules, answers: Vec<Decision>) -> Vec<Run> {
    let mut out = Vec::new();
    for mode in [Mode::Raw, Mode::Chat] {
        let server = MockServer::start(MockOptions::default(), 0)
            .await
            .expect("mock starts");
        let ep = Endpoint::new(mode, &server.base_url(), "moonshotai/Kimi-K2-Instruct");
        let toolbox = Toolbox::new(vec![tool.clone()])
            .expect("valid tools")
            .with_rules(rules.clone());
        let mut agent = spawn(Backend::new(ep).expect("client"), toolbox);
        out.push(turn(&mut agent, answers.clone().into()).await);
        server.shutdown().await;
    }
    out
}

#[tokio::test]
async fn an_allow_rule_runs_an_ask_tool_without_asking() {
    let rules = rules(
        vec![(city_rule("Par*", Verdict::Allow, "weather is harmless"), 42)],
        None,
    );
    for r in run(weather(Approval::Ask), rules.clone(), vec![]).await {
        assert!(r.asked.is_empty(), "no dialog: {:?}", r.asked);
        assert!(r.ran());
        assert!(r.tool_text().contains("Paris"), "{}", r.tool_text());
        let d = r.decisions();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "allowed by rule `weather is harmless`, config.toml:42"
        );
    }
    // Both runs' calls counted.
    assert_eq!(rules.entries()[0].matches, 2);
}

#[tokio::test]
async fn a_deny_rule_beats_an_auto_tool_and_the_model_is_told_which_rule() {
    let rules = rules(
        vec![
            (city_rule("*", Verdict::Allow, "any city"), 3),
            (city_rule("Paris", Verdict::Deny, "not Paris"), 9),
        ],
        None,
    );
    for r in run(weather(Approval::Auto), rules.clone(), vec![]).await {
        assert!(r.asked.is_empty());
        assert!(!r.ran(), "a denied call never runs");
        assert_eq!(
            r.tool_text(),
            "Error: denied by the rule `not Paris` (/home/u/.config/kimi-tui/config.toml:9); do not retry this call"
        );
        let refused = r.events.iter().find_map(|e| match e {
            EngineEvent::ToolRefused { problem, .. } => Some(problem.clone()),
            _ => None,
        });
        assert!(
            matches!(refused, Some(CallProblem::DeniedByRule { ref rule, .. }) if rule == "not Paris"),
            "{refused:?}"
        );
    }
    // Every matching rule counts, not only the one that decided.
    let counts: Vec<u64> = rules.entries().iter().map(|e| e.matches).collect();
    assert_eq!(counts, vec![2, 2]);
}

#[tokio::test]
async fn an_ask_rule_asks_for_an_auto_tool_and_the_request_says_which_rule() {
    let rules = rules(
        vec![(city_rule("P*", Verdict::Ask, "check P cities"), 5)],
        None,
    );
    for r in run(weather(Approval::Auto), rules, vec![]).await {
        assert_eq!(r.asked.len(), 1);
        let why = &r.asked[0].rule;
        assert_eq!(why.verdict, Verdict::Ask);
        assert!(
            matches!(&why.origin, DecisionOrigin::Rule { label, source, .. }
                if label == "check P cities" && *source == config_line(5)),
            "{why:?}"
        );
        assert!(r.ran(), "approved in the dialog");
    }
}

#[tokio::test]
async fn no_matching_rule_leaves_the_tool_approval_and_the_request_says_so() {
    let rules = rules(
        vec![(city_rule("Berlin", Verdict::Allow, "Berlin"), 5)],
        None,
    );
    for r in run(weather(Approval::Ask), rules, vec![]).await {
        assert_eq!(r.asked.len(), 1);
        assert_eq!(r.asked[0].rule, RuleDecision::by_tool(Verdict::Ask));
    }
}

#[tokio::test]
async fn arguments_edited_into_a_denied_call_are_refused() {
    let rules = rules(
        vec![(city_rule("Berlin", Verdict::Deny, "not Berlin"), 7)],
        None,
    );
    let edit = Decision::Approve {
        arguments: r#"{"city": "Berlin"}"#.into(),
    };
    for r in run(weather(Approval::Ask), rules, vec![edit]).await {
        assert_eq!(r.asked.len(), 1);
        assert!(!r.ran(), "the edit is denied");
        let d = r.decisions();
        assert_eq!(d.len(), 2, "decided, then decided again after the edit");
        assert_eq!(d[0].verdict, Verdict::Ask);
        assert_eq!(d[1].verdict, Verdict::Deny);
        let edited = r.events.iter().find_map(|e| match e {
            EngineEvent::CallDecided { arguments, .. } if arguments.contains("Berlin") => {
                Some(arguments.clone())
            }
            _ => None,
        });
        assert_eq!(edited.as_deref(), Some(r#"{"city": "Berlin"}"#));
        assert!(
            r.tool_text().contains("denied by the rule `not Berlin`"),
            "{}",
            r.tool_text()
        );
    }
}

#[tokio::test]
async fn a_deny_tool_never_runs_whatever_a_rule_allows() {
    let rules = rules(vec![(city_rule("*", Verdict::Allow, "all"), 1)], None);
    for r in run(weather(Approval::Deny), rules, vec![]).await {
        assert!(!r.ran());
        assert_eq!(r.decisions(), vec![&RuleDecision::by_tool(Verdict::Deny)]);
        assert!(
            r.tool_text().contains("approval = \"deny\""),
            "{}",
            r.tool_text()
        );
    }
}

/// Read events until one that answers a rule operation.
async fn rules_answer(agent: &mut AgentHandle) -> EngineEvent {
    loop {
        let e = agent.events.recv().await.expect("an answer");
        if matches!(e, EngineEvent::Rules { .. } | EngineEvent::Notice { .. }) {
            return e;
        }
    }
}

#[tokio::test]
async fn session_rules_are_added_listed_used_and_removed() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock starts");
    let ep = Endpoint::new(
        Mode::Chat,
        &server.base_url(),
        "moonshotai/Kimi-K2-Instruct",
    );
    let rules = rules(
        vec![(city_rule("Berlin", Verdict::Deny, "not Berlin"), 4)],
        None,
    );
    let toolbox = Toolbox::new(vec![weather(Approval::Ask)])
        .expect("valid")
        .with_rules(rules.clone());
    let mut agent = spawn(Backend::new(ep).expect("client"), toolbox);
    // "Always allow calls like this": the call's arguments as exact patterns.
    let like = Rule::like_call("get_weather", &json!({"city": "Paris"}), Verdict::Allow);
    assert!(agent.send(Op::AddRule {
        rule: Box::new(like.clone()),
        scope: RuleScope::Session,
    }));
    let EngineEvent::Rules {
        rules: listed,
        added,
    } = rules_answer(&mut agent).await
    else {
        panic!("a listing");
    };
    assert_eq!(listed.len(), 2);
    assert_eq!(added, Some(listed[1].id));
    assert_eq!(listed[1].source, RuleSource::Session);
    assert_eq!(listed[1].rule, like);
    // The next call like it runs without asking, and counts.
    let r = turn(&mut agent, VecDeque::new()).await;
    assert!(r.asked.is_empty() && r.ran());
    assert!(agent.send(Op::ListRules));
    let EngineEvent::Rules { rules: listed, .. } = rules_answer(&mut agent).await else {
        panic!("a listing");
    };
    assert_eq!(listed[1].matches, 1);
    // A config rule is not removed from the session; the session rule is.
    assert!(agent.send(Op::RemoveRule { id: listed[0].id }));
    assert!(matches!(
        rules_answer(&mut agent).await,
        EngineEvent::Notice { error: true, .. }
    ));
    assert!(agent.send(Op::RemoveRule { id: listed[1].id }));
    let EngineEvent::Rules { rules: left, .. } = rules_answer(&mut agent).await else {
        panic!("a listing");
    };
    assert_eq!(left.len(), 1);
    let r = turn(&mut agent, VecDeque::new()).await;
    assert_eq!(r.asked.len(), 1, "asks again once the rule is gone");
    // A rule whose own example contradicts it is refused with a notice.
    let mut bad = city_rule("Par*", Verdict::Allow, "bad");
    bad.not_match = vec![serde_json::from_value(json!({"city": "Paris"})).expect("object")];
    assert!(agent.send(Op::AddRule {
        rule: Box::new(bad),
        scope: RuleScope::Session,
    }));
    let EngineEvent::Notice { text, .. } = rules_answer(&mut agent).await else {
        panic!("a notice");
    };
    assert!(text.contains("matches its `not_match` example"), "{text}");
    assert_eq!(rules.entries().len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_rule_added_to_the_user_config_is_written_back_with_its_comments() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("config.toml");
    let original = "# my settings: keep me\n[profiles.local]  # the box\nbase_url = \"http://127.0.0.1:1/v1\"\n";
    std::fs::write(&path, original).expect("write");
    let toolbox = Toolbox::new(vec![weather(Approval::Ask)])
        .expect("valid")
        .with_rules(rules(Vec::new(), Some(path.clone())));
    // The supervisor's answer: the same code an agent without one runs.
    let rule = city_rule("Paris", Verdict::Allow, "Paris is fine");
    let op = Op::AddRule {
        rule: Box::new(rule.clone()),
        scope: RuleScope::UserConfig,
    };
    let Some(EngineEvent::Rules {
        rules: listed,
        added,
    }) = kimi_core::engine::toolbox_answer(&toolbox, op)
    else {
        panic!("a listing");
    };
    assert_eq!(added, Some(listed[0].id));
    assert_eq!(
        listed[0].source,
        RuleSource::Config {
            path: path.clone(),
            line: 5
        }
    );
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.starts_with(original), "{text}");
    assert_eq!(
        &text[original.len()..],
        "\n[[rules]]\ntool = \"get_weather\"\nargs = { city = \"Paris\" }\ndecision = \"allow\"\nreason = \"Paris is fine\"\n"
    );
    // It loads back as the same rule, at the line reported.
    let config = kimi_core::config::Config::parse(&path, &text).expect("valid");
    assert_eq!(config.rules, vec![rule]);
    assert_eq!(config.checked_rules[0].1, 5);
}
