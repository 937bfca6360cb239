//! What a new user meets first, at the level of `update`: quitting takes a second Ctrl-C or
//! Ctrl-D, a repeated notice is counted instead of piling up, counts are in words, `/tools`
//! marks an always-allowed MCP tool, and `/export` asks before replacing a file.

use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::{Event, KeyCode};
use kimi_core::engine::{EngineEvent, McpLine, ToolLine, ToolsReport};

use super::app_update::{app, ctrl, key, notices, screen, typed};
use super::{update, update_after};
use crate::app::event::{AppEvent, Effect};
use crate::app::export::ExportError;
use crate::app::quit_confirm::QUIT_WINDOW;
use crate::app::state::Entry;

fn ctrl_after(app: &mut crate::app::state::App, later: Duration, c: char) -> Vec<Effect> {
    use crossterm::event::{KeyEvent, KeyModifiers};
    let k = KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    update_after(app, later, AppEvent::Terminal(Event::Key(k)))
}

#[test]
fn one_ctrl_c_on_the_empty_input_asks_and_a_second_in_time_quits() {
    let mut a = app();
    assert!(
        ctrl(&mut a, 'c').is_empty(),
        "the first press keeps the app"
    );
    let shown = screen(&mut a, 80, 20);
    assert!(shown.contains("Press Ctrl-C again to quit."), "{shown}");
    let fx = ctrl_after(&mut a, Duration::from_millis(800), 'c');
    assert_eq!(fx, vec![Effect::Quit]);
}

#[test]
fn a_second_press_too_late_only_asks_again() {
    for c in ['c', 'd'] {
        let mut a = app();
        assert!(ctrl(&mut a, c).is_empty());
        let late = QUIT_WINDOW + Duration::from_millis(100);
        assert!(ctrl_after(&mut a, late, c).is_empty(), "Ctrl-{c} too late");
        // That one counts as a first press: the next in time quits.
        let fx = ctrl_after(&mut a, Duration::from_millis(300), c);
        assert_eq!(fx, vec![Effect::Quit], "Ctrl-{c}");
        let name = format!("Press Ctrl-{} again to quit.", c.to_ascii_uppercase());
        assert!(
            notices(&a).iter().any(|(t, _)| *t == name),
            "{:?}",
            notices(&a)
        );
    }
}

#[test]
fn ctrl_c_keeps_its_other_meanings() {
    // A draft is cleared, not quit, even right after a first press.
    let mut a = app();
    ctrl(&mut a, 'c');
    typed(&mut a, "draft");
    assert!(ctrl(&mut a, 'c').is_empty());
    assert!(a.composer.input.is_empty());
    // A running turn is cancelled.
    let mut b = app();
    typed(&mut b, "hello");
    key(&mut b, KeyCode::Enter);
    let fx = ctrl(&mut b, 'c');
    assert!(
        fx.contains(&Effect::Agent(kimi_core::engine::Op::Cancel)),
        "{fx:?}"
    );
    assert!(!fx.contains(&Effect::Quit));
}

#[test]
fn the_same_notice_back_to_back_is_counted_once() {
    let mut a = app();
    for _ in 0..5 {
        typed(&mut a, "draft");
        ctrl(&mut a, 'c');
    }
    let cleared: Vec<_> = (notices(&a).into_iter())
        .filter(|(t, _)| t.contains("Up brings it back"))
        .collect();
    assert_eq!(cleared.len(), 1, "{:?}", notices(&a));
    let shown = screen(&mut a, 100, 20);
    assert!(shown.contains("×5"), "{shown}");
    // Another notice between two equal ones: both stay.
    a.notice("one", false);
    a.notice("two", false);
    a.notice("one", false);
    let n = notices(&a);
    assert_eq!(
        n[n.len() - 3..]
            .iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>(),
        ["one", "two", "one"]
    );
}

#[test]
fn one_tool_is_one_tool_on_the_welcome_screen() {
    let mut a = app();
    let shown = screen(&mut a, 100, 20);
    assert!(shown.contains("1 tool configured"), "{shown}");
    assert!(!shown.contains("1 tools"), "{shown}");
}

#[test]
fn tools_marks_an_always_allowed_mcp_tool_as_it_does_a_local_one() {
    let mut a = app();
    a.always_allow = vec!["get_weather".into(), "mcp__srv__read".into()];
    let report = ToolsReport {
        tools: vec![ToolLine {
            name: "get_weather".into(),
            approval: "ask".into(),
            command: "/bin/true".into(),
            description: "Weather".into(),
        }],
        mcp: vec![
            McpLine::Text("MCP servers:\n  srv · ready, 2 tools".into()),
            McpLine::Tool {
                name: "mcp__srv__read".into(),
                approval: "ask".into(),
                description: "reads".into(),
            },
            McpLine::Tool {
                name: "mcp__srv__write".into(),
                approval: "ask".into(),
                description: "writes".into(),
            },
        ],
    };
    let event = EngineEvent::Tools {
        report: Box::new(report),
    };
    update(&mut a, AppEvent::Engine(event));
    let (text, _) = notices(&a).pop().expect("the report");
    assert!(
        text.contains("get_weather [ask, always allowed this session]"),
        "{text}"
    );
    assert!(
        text.contains("mcp__srv__read [ask, always allowed this session] reads"),
        "{text}"
    );
    assert!(text.contains("mcp__srv__write [ask] writes"), "{text}");
}

/// `/export` found `path` taken: the question is asked.
fn asked(path: &str) -> crate::app::state::App {
    let mut a = app();
    typed(&mut a, "/export json ~/out.json");
    let fx = key(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Export {
            markdown: false,
            path: Some(PathBuf::from("~/out.json")),
            replace: false,
        }]
    );
    let taken = ExportError::Exists {
        path: PathBuf::from(path),
        markdown: false,
    };
    update(&mut a, AppEvent::Exported(Err(taken)));
    let (text, _) = notices(&a).pop().expect("the question");
    assert_eq!(text, format!("{path} exists. Replace it? y/n"));
    a
}

#[test]
fn export_asks_before_replacing_and_y_replaces() {
    let mut a = asked("/home/u/out.json");
    let fx = key(&mut a, KeyCode::Char('y'));
    assert_eq!(
        fx,
        vec![Effect::Export {
            markdown: false,
            path: Some(PathBuf::from("/home/u/out.json")),
            replace: true,
        }]
    );
    assert!(a.composer.input.is_empty(), "the answer is not typed");
    assert_eq!(a.export_confirm, None);
    update(
        &mut a,
        AppEvent::Exported(Ok(PathBuf::from("/home/u/out.json"))),
    );
    let (text, _) = notices(&a).pop().expect("done");
    assert_eq!(text, "Exported to /home/u/out.json.");
}

#[test]
fn export_keeps_the_file_on_n_and_on_any_other_key() {
    let mut a = asked("/home/u/out.json");
    assert!(key(&mut a, KeyCode::Char('n')).is_empty());
    let (text, _) = notices(&a).pop().expect("kept");
    assert_eq!(text, "Not exported: /home/u/out.json is kept.");
    assert!(a.composer.input.is_empty());
    // Typing on instead: the file is kept and the key goes to the input.
    let mut b = asked("/home/u/out.json");
    assert!(key(&mut b, KeyCode::Char('h')).is_empty());
    assert_eq!(b.composer.input.lines().join(""), "h");
    assert_eq!(b.export_confirm, None);
    assert!(matches!(
        b.transcript.entries.last(),
        Some(Entry::Notice { text, .. }) if text.contains("is kept")
    ));
}

#[test]
fn export_writes_to_a_new_file_refuses_an_existing_one_and_replaces_when_told() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut a = app();
    let meta =
        kimi_core::session::Session::new("local", kimi_protocol::Mode::Raw, "m", "http://h/v1");
    a.session = Some(meta);
    let session = crate::app::export::snapshot(&a).expect("a session");
    let path = dir.path().join("out.json");
    let written =
        crate::app::export::write(&session, false, Some(path.clone()), false).expect("a new file");
    assert_eq!(written, path);
    std::fs::write(&path, "mine").expect("write");
    let refused = crate::app::export::write(&session, false, Some(path.clone()), false);
    assert!(
        matches!(refused, Err(ExportError::Exists { .. })),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "mine");
    crate::app::export::write(&session, false, Some(path.clone()), true).expect("replaced");
    assert_ne!(std::fs::read_to_string(&path).expect("read"), "mine");
}
