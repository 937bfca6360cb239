//! Getting text out and composing, at the level of `update`: `/copy` and
//! `/copy code` (numbering, errors, sanitizing, the size cap), `/mouse` and F3, `Ctrl-G` and
//! the editor's answer, `/theme`.

use super::update;
use crate::app::clipboard::MAX_COPY_BYTES;
use crate::app::editor::EditorError;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, AssistantTurn, Entry, TurnState};
use crate::ui::theme::Theme;
use crossterm::event::{Event, KeyCode, KeyModifiers};

use super::app_update::{app, ctrl, draft, enter, key, notices, typed};

fn answer(app: &mut App, text: &str) {
    let mut t = AssistantTurn::new(None);
    t.push_text(text);
    t.state = TurnState::Done;
    app.transcript.entries.push(Entry::Assistant(Box::new(t)));
}

fn command(app: &mut App, line: &str) -> Vec<Effect> {
    typed(app, line);
    enter(app)
}

/// The one copy effect of `fx`: its text and its name.
fn copied(fx: &[Effect]) -> Option<(String, String)> {
    let mut copies = fx.iter().filter_map(|f| match f {
        Effect::Copy { text, what } => Some((text.clone(), what.clone())),
        _ => None,
    });
    let first = copies.next();
    assert!(copies.next().is_none(), "one copy per command: {fx:?}");
    first
}

fn last_notice(app: &App) -> (String, bool) {
    notices(app).last().cloned().expect("a notice")
}

const FIRST: &str = "First answer.\n\n```python\nprint(1)\n```\n";
const SECOND: &str = "Two blocks:\n\n```rust\nfn a() {}\n```\n\ntext\n\n```sh\nls -l\n```\n";

#[test]
fn copy_takes_the_last_answer_or_the_nth_from_the_top() {
    let mut a = app();
    answer(&mut a, FIRST);
    answer(&mut a, SECOND);
    let fx = command(&mut a, "/copy");
    assert_eq!(copied(&fx), Some((SECOND.into(), "answer 2".into())));
    let fx = command(&mut a, "/copy 1");
    assert_eq!(copied(&fx), Some((FIRST.into(), "answer 1".into())));
    // The command itself is no message.
    assert!(!fx.iter().any(|f| matches!(f, Effect::Agent(_))), "{fx:?}");
}

#[test]
fn copy_skips_a_last_answer_without_text_and_says_when_there_is_nothing() {
    let mut a = app();
    let fx = command(&mut a, "/copy");
    assert_eq!(copied(&fx), None);
    let (text, error) = last_notice(&a);
    assert!(error && text.contains("Nothing to copy"), "{text}");

    answer(&mut a, "The answer.");
    // A round that only called a tool: no text of its own.
    answer(&mut a, "");
    assert_eq!(
        copied(&command(&mut a, "/copy")),
        Some(("The answer.".into(), "answer 1".into()))
    );
    assert_eq!(copied(&command(&mut a, "/copy 2")), None);
    let (text, error) = last_notice(&a);
    assert!(error && text.contains("Answer 2 has no text"), "{text}");
    assert_eq!(copied(&command(&mut a, "/copy 3")), None);
    let (text, error) = last_notice(&a);
    assert!(
        error && text.contains("No answer 3") && text.contains("1 to 2"),
        "{text}"
    );
    assert_eq!(copied(&command(&mut a, "/copy 0")), None);
    assert!(last_notice(&a).0.starts_with("usage: /copy"));
}

#[test]
fn copy_code_is_the_block_just_seen_and_counts_within_that_answer() {
    let mut a = app();
    answer(&mut a, FIRST);
    answer(&mut a, SECOND);
    // A later answer without code: the blocks just seen are still the second answer's.
    answer(&mut a, "No code here.");
    assert_eq!(
        copied(&command(&mut a, "/copy code")),
        Some((
            "ls -l\n".into(),
            "code block 2 of 2 (sh) from answer 2".into()
        ))
    );
    assert_eq!(
        copied(&command(&mut a, "/copy code 1")),
        Some((
            "fn a() {}\n".into(),
            "code block 1 of 2 (rust) from answer 2".into()
        ))
    );
    assert_eq!(copied(&command(&mut a, "/copy code 3")), None);
    let (text, error) = last_notice(&a);
    assert!(
        error && text.contains("No code block 3") && text.contains("answer 2 has 2"),
        "{text}"
    );
    let mut b = app();
    answer(&mut b, "plain");
    assert_eq!(copied(&command(&mut b, "/copy code")), None);
    assert!(last_notice(&b).0.contains("No code block"));
}

#[test]
fn copied_text_has_no_control_sequences_but_keeps_newlines_and_tabs() {
    let mut a = app();
    let mut t = AssistantTurn::new(None);
    // Straight into the text, past the stream sanitizer: the copy must clean it itself.
    t.set_text("ok");
    a.transcript.entries.push(Entry::Assistant(Box::new(t)));
    if let Some(Entry::Assistant(t)) = a.transcript.entries.last_mut() {
        t.push_text("\tline\u{1b}]52;c;ZXZpbA==\u{7}\r\nnext\u{1b}[2J\u{9b}31m end");
    }
    let (text, _) = copied(&command(&mut a, "/copy")).expect("copied");
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{text:?}"
    );
    assert!(
        text.contains("\tline") && text.contains("\nnext") && text.ends_with(" end"),
        "{text:?}"
    );
    assert!(
        !text.contains("ZXZpbA"),
        "the OSC payload went with its sequence: {text:?}"
    );
}

#[test]
fn an_answer_over_the_osc52_cap_is_refused_with_the_sizes() {
    let mut a = app();
    answer(&mut a, &"x".repeat(MAX_COPY_BYTES + 1));
    assert_eq!(copied(&command(&mut a, "/copy")), None);
    let (text, error) = last_notice(&a);
    assert!(
        error && text.contains("74,001 bytes") && text.contains("/export"),
        "{text}"
    );
    let mut b = app();
    answer(&mut b, &"x".repeat(MAX_COPY_BYTES));
    assert!(copied(&command(&mut b, "/copy")).is_some());
}

#[test]
fn mouse_is_off_by_default_and_f3_or_the_command_toggles_it() {
    let mut a = app();
    assert!(!a.mouse);
    let fx = key(&mut a, KeyCode::F(3));
    assert!(fx.contains(&Effect::Mouse(true)) && a.mouse, "{fx:?}");
    assert!(last_notice(&a).0.contains("Wheel scrolling on"));
    let fx = command(&mut a, "/mouse");
    assert!(fx.contains(&Effect::Mouse(false)) && !a.mouse, "{fx:?}");
    let fx = command(&mut a, "/mouse off");
    assert!(!fx.iter().any(|f| matches!(f, Effect::Mouse(_))), "{fx:?}");
    assert!(last_notice(&a).0.contains("already off"));
    let fx = command(&mut a, "/mouse on");
    assert!(fx.contains(&Effect::Mouse(true)) && a.mouse);
    // The wheel scrolls while it is on (the terminal only reports it then).
    a.transcript.scroll_from_bottom = 0;
    update(
        &mut a,
        AppEvent::Terminal(Event::Mouse(crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::ScrollUp,
            column: 1,
            row: 1,
            modifiers: KeyModifiers::NONE,
        })),
    );
    assert_eq!(a.transcript.scroll_from_bottom, 3);
}

#[test]
fn ctrl_g_hands_the_draft_to_the_editor_and_takes_its_text_back() {
    let mut a = app();
    typed(&mut a, "a draft");
    let fx = ctrl(&mut a, 'g');
    assert_eq!(fx, vec![Effect::Editor("a draft".into())]);
    // The editor wrote CRLF line endings and an escape sequence: the paste rules apply.
    update(
        &mut a,
        AppEvent::Edited(Ok("line one\r\nline two\u{1b}[31m".into())),
    );
    assert_eq!(draft(&a), "line one\nline two");
    // Sent as typed.
    let fx = enter(&mut a);
    assert!(
        fx.iter().any(|f| matches!(f, Effect::Agent(kimi_core::engine::Op::UserTurn { text }) if text == "line one\nline two")),
        "{fx:?}"
    );
}

#[test]
fn an_editor_failure_keeps_the_draft_and_says_why() {
    let mut a = app();
    typed(&mut a, "keep me");
    ctrl(&mut a, 'g');
    update(
        &mut a,
        AppEvent::Edited(Err(EditorError::Failed {
            program: "false".into(),
            code: Some(1),
        })),
    );
    assert_eq!(draft(&a), "keep me");
    let (text, error) = last_notice(&a);
    assert!(
        error && text.starts_with("Ctrl-G: the editor `false`"),
        "{text}"
    );
    // Too large a file: refused like a paste, the draft kept.
    update(
        &mut a,
        AppEvent::Edited(Ok("y".repeat(crate::app::paste::MAX_DRAFT_BYTES + 1))),
    );
    assert_eq!(draft(&a), "keep me");
    assert!(last_notice(&a).0.starts_with("Edited draft not inserted"));
}

#[test]
fn theme_switches_at_runtime_and_says_which_is_in_use() {
    let mut a = app();
    assert_eq!(a.theme, Theme::Dark);
    command(&mut a, "/theme light");
    assert_eq!(a.theme, Theme::Light);
    command(&mut a, "/theme");
    assert!(last_notice(&a).0.starts_with("Theme: light"));
    command(&mut a, "/theme blue");
    assert_eq!(a.theme, Theme::Light);
    assert!(last_notice(&a).0.starts_with("usage: /theme"));
    // The bad command stays in the input to be put right.
    assert_eq!(a.composer.input.lines(), ["/theme blue"]);
    super::app_update::ctrl(&mut a, 'u');
    command(&mut a, "/theme dark");
    assert_eq!(a.theme, Theme::Dark);
}

#[test]
fn the_new_keys_and_commands_are_in_the_generated_reference() {
    let reference = crate::app::key_reference::markdown();
    for needle in [
        "`Ctrl-G`",
        "`F3`",
        "`/copy [N]`",
        "`/copy code [N]`",
        "`/mouse [on\\|off]`",
        "`/theme dark\\|light`",
    ] {
        assert!(reference.contains(needle), "{needle} missing:\n{reference}");
    }
}
