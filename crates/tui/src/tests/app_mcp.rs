//! `/mcp`, MCP prompts as slash commands and `@server:uri` attachments through `update`: the
//! hub's work is asked for as effects and its answers come back as events, so `update` never
//! waits on a server.

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::mcp_view::{Ready, mcp_report};
use crate::app::state::{App, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::Op;
use kimi_core::tools::mcp::{
    McpRequestError, PromptInfo, PromptText, ResourceInfo, ServerReport, ServerStatus,
};
use serde_json::json;

pub(super) fn app_with_docs() -> App {
    let mut app = super::app_update::app();
    app.mcp = Ready {
        servers: vec!["docs".into()],
        prompts: vec![(
            "docs".into(),
            PromptInfo {
                name: "review".into(),
                description: Some("Review a file".into()),
                arguments: vec![("file".into(), true), ("focus".into(), false)],
            },
        )],
    };
    app
}

fn enter(app: &mut App, text: &str) -> Vec<Effect> {
    app.composer.input.insert_str(text);
    update(
        app,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        ))),
    )
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

fn input(app: &App) -> String {
    app.composer.input.lines().join("\n")
}

#[test]
fn mcp_lists_each_server_with_everything_on_one_line_each() {
    let ready = ServerReport {
        name: "docs".into(),
        status: ServerStatus::Ready,
        tools: vec!["mcp__docs__search".into(), "mcp__docs__write".into()],
        skipped: vec!["big: its schema is over the limit".into()],
        stderr_tail: String::new(),
        version: Some("docs-server 1.2".into()),
        instructions: Some("Use search first.\nfake line\u{1b}[2J".into()),
        instructions_in_prompt: true,
        resources: vec![ResourceInfo {
            uri: "file:///guide.md".into(),
            name: "Guide".into(),
            mime_type: None,
            description: None,
        }],
        prompts: vec![PromptInfo {
            name: "review".into(),
            description: Some("Review a file".into()),
            arguments: vec![("file".into(), true), ("focus".into(), false)],
        }],
        log: vec!["[info] indexed 3 files".into()],
        endpoint: "docs-server --stdio".into(),
    };
    let failed = ServerReport {
        name: "broken".into(),
        status: ServerStatus::Failed("initialize failed".into()),
        tools: vec![],
        skipped: vec![],
        stderr_tail: "boom: no token\n".into(),
        version: None,
        instructions: None,
        instructions_in_prompt: false,
        resources: vec![],
        prompts: vec![],
        log: vec![],
        endpoint: "https://example.test/mcp".into(),
    };
    let text = mcp_report(
        &[ready, failed],
        |name| {
            if name.ends_with("write") {
                "ask"
            } else {
                "auto"
            }
            .to_owned()
        },
        &["mcp__docs__write".to_owned()],
    );
    for want in [
        "docs · ready, 2 tools",
        "version: docs-server 1.2",
        "endpoint: docs-server --stdio",
        "instructions (in the system prompt): Use search first.\\nfake line\\x1b[2J",
        "mcp__docs__search [auto]",
        "mcp__docs__write [ask, always]",
        "@docs:file:///guide.md · Guide",
        "/mcp__docs__review file=… [focus=…] · Review a file",
        "withheld: big: its schema is over the limit",
        "[info] indexed 3 files",
        "broken · failed: initialize failed",
        "endpoint: https://example.test/mcp",
        "boom: no token",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    assert!(!text.contains('\u{1b}'), "{text}");
    // Without servers, the command says so.
    let mut app = super::app_update::app();
    enter(&mut app, "/mcp");
    assert_eq!(
        last_notice(&app),
        ("No MCP servers are configured.".into(), false)
    );
}

#[test]
fn a_prompt_command_asks_for_the_prompt_and_its_text_lands_in_the_input() {
    let mut app = app_with_docs();
    let fx = enter(
        &mut app,
        r#"/mcp__docs__review main.rs focus="error paths""#,
    );
    assert_eq!(
        fx,
        [Effect::GetPrompt {
            server: "docs".into(),
            prompt: "review".into(),
            arguments: json!({"file": "main.rs", "focus": "error paths"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        }]
    );
    assert!(input(&app).is_empty());
    update(
        &mut app,
        AppEvent::PromptGot {
            server: "docs".into(),
            prompt: "review".into(),
            result: Ok(vec![PromptText {
                role: "user".into(),
                text: "Review main.rs\u{1b}[2J for error paths.".into(),
            }]),
        },
    );
    assert_eq!(input(&app), "Review main.rs for error paths.");
    let (n, error) = last_notice(&app);
    assert!(
        !error && n.contains("Review it, then Enter sends it"),
        "{n}"
    );
    // Nothing went to the agent.
    assert!(!app.busy);
    update(
        &mut app,
        AppEvent::PromptGot {
            server: "docs".into(),
            prompt: "review".into(),
            result: Err(McpRequestError::GetPrompt {
                name: "review".into(),
                why: "no such file".into(),
            }),
        },
    );
    let (n, error) = last_notice(&app);
    assert!(error && n.contains("no such file"), "{n}");
}

#[test]
fn a_prompt_command_without_its_required_arguments_is_a_usage_error() {
    let mut app = app_with_docs();
    let fx = enter(&mut app, "/mcp__docs__review focus=x");
    assert!(fx.is_empty(), "{fx:?}");
    let (n, error) = last_notice(&app);
    assert!(error, "{n}");
    assert!(n.contains("missing required argument file"), "{n}");
    assert!(
        n.contains("usage: /mcp__docs__review file=… [focus=…]"),
        "{n}"
    );
    let fx = enter(&mut app, "/mcp__docs__nope");
    assert!(fx.is_empty());
    let (n, _) = last_notice(&app);
    assert!(n.contains("prompts: /mcp__docs__review"), "{n}");
}

#[test]
fn the_help_lists_the_prompt_commands_of_ready_servers() {
    let mut app = app_with_docs();
    app.layers.help.open = true;
    let buf = super::drawn(&mut app, 100, 200);
    let text: String = (0..200)
        .map(|y| (0..100).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect();
    assert!(text.contains("MCP prompts"), "{text}");
    assert!(
        text.contains("/mcp__docs__review file=… [focus=…]"),
        "{text}"
    );
}

#[test]
fn an_attached_resource_is_read_first_and_sent_after_the_message() {
    let mut app = app_with_docs();
    let fx = enter(&mut app, "summarize @docs:file:///guide.md please");
    assert_eq!(
        fx,
        [Effect::ReadResources {
            message: "summarize @docs:file:///guide.md please".into(),
            refs: vec![("docs".into(), "file:///guide.md".into())],
        }]
    );
    // Nothing is sent yet; the message waits in the input.
    assert!(!app.busy);
    assert_eq!(input(&app), "summarize @docs:file:///guide.md please");
    let fx = update(
        &mut app,
        AppEvent::ResourcesRead {
            message: "summarize @docs:file:///guide.md please".into(),
            result: Ok(vec![(
                "docs".into(),
                "file:///guide.md".into(),
                "# Guide".into(),
            )]),
        },
    );
    let sent = fx.iter().find_map(|f| match f {
        Effect::Agent(Op::UserTurn { text }) => Some(text.clone()),
        _ => None,
    });
    assert_eq!(
        sent.as_deref(),
        Some(
            "summarize @docs:file:///guide.md please\n\n[resource docs:file:///guide.md]\n# Guide"
        )
    );
    assert!(input(&app).is_empty());
    assert!(
        app.transcript
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Notice { text, .. }
            if text.contains("Attached docs:file:///guide.md (7 bytes)"))),
    );
}

#[test]
fn a_failed_read_sends_nothing_and_keeps_the_message() {
    let mut app = app_with_docs();
    enter(&mut app, "look at @docs:file:///missing.md");
    let fx = update(
        &mut app,
        AppEvent::ResourcesRead {
            message: "look at @docs:file:///missing.md".into(),
            result: Err("cannot read @docs:file:///missing.md: not found".into()),
        },
    );
    assert!(fx.is_empty(), "{fx:?}");
    assert!(!app.busy);
    assert_eq!(input(&app), "look at @docs:file:///missing.md");
    let (n, error) = last_notice(&app);
    assert!(
        error && n.contains("Not sent") && n.contains("not found"),
        "{n}"
    );
    // A server that is not ready (or not one) is plain text: sent as typed.
    let mut app = app_with_docs();
    app.composer.input = crate::app::composer::new_input();
    let fx = enter(&mut app, "mail @other:x");
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::UserTurn { text }) if text == "mail @other:x")),
        "{fx:?}"
    );
}
