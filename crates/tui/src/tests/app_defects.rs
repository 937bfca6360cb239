//! Defects once found in daily use, at the level of `update` (and the drawn screen where the
//! defect is what is shown): Ctrl-C on a draft, `//text`, readline keys, Tab revealing its
//! pane, always-allow shown and revocable, `/export` without a path, the resume hint.

use super::update;
use crate::app::event::{AppEvent, Effect};
use crate::app::state::{App, Entry, PaneState, TurnState};
use crate::ui;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{Decision, EngineEvent, Op};
use kimi_protocol::StreamEvent;

use super::app_update::{app, ask, ctrl, draft, enter, key, notices, screen, typed, user_turn};

fn with_mods(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    update(
        app,
        AppEvent::Terminal(Event::Key(KeyEvent::new(code, mods))),
    )
}

#[test]
fn ctrl_c_clears_a_draft_up_brings_it_back_and_a_second_ctrl_c_quits() {
    let mut a = app();
    typed(&mut a, "a long draft I do not want to lose");
    let fx = ctrl(&mut a, 'c');
    assert!(
        !fx.contains(&Effect::Quit),
        "the first Ctrl-C keeps the app"
    );
    assert_eq!(draft(&a), "", "the draft is cleared");
    assert!(
        notices(&a)
            .iter()
            .any(|(t, _)| t.contains("Up brings it back")),
        "{:?}",
        notices(&a)
    );
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "a long draft I do not want to lose");
    // Cleared again, then Ctrl-C twice on the empty input quits.
    ctrl(&mut a, 'c');
    assert_eq!(draft(&a), "");
    assert!(!ctrl(&mut a, 'c').contains(&Effect::Quit));
    assert!(ctrl(&mut a, 'c').contains(&Effect::Quit));
}

#[test]
fn ctrl_c_mid_turn_still_cancels_and_keeps_the_draft() {
    let mut a = app();
    typed(&mut a, "hello");
    enter(&mut a);
    assert!(a.busy);
    typed(&mut a, "next question");
    let fx = ctrl(&mut a, 'c');
    assert!(fx.contains(&Effect::Agent(Op::Cancel)), "{fx:?}");
    assert!(!fx.contains(&Effect::Quit));
    assert_eq!(draft(&a), "next question");
}

#[test]
fn double_slash_sends_a_message_that_starts_with_a_slash() {
    let mut a = app();
    typed(&mut a, "//etc/hosts: what is it for?");
    let fx = enter(&mut a);
    assert_eq!(fx, user_turn("/etc/hosts: what is it for?"));
    // A single slash is still a command, never sent to the model.
    typed(&mut a, "/etc/hosts");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        notices(&a)
            .iter()
            .any(|(t, e)| *e && t.contains("unknown command"))
    );
}

#[test]
fn the_input_edits_like_readline() {
    let mut a = app();
    typed(&mut a, "one two three");
    ctrl(&mut a, 'w');
    assert_eq!(draft(&a), "one two ");
    ctrl(&mut a, 'a');
    assert_eq!(a.composer.input.cursor(), (0, 0));
    ctrl(&mut a, 'e');
    assert_eq!(a.composer.input.cursor(), (0, 8));
    with_mods(&mut a, KeyCode::Char('b'), KeyModifiers::ALT);
    assert_eq!(a.composer.input.cursor(), (0, 4));
    with_mods(&mut a, KeyCode::Char('f'), KeyModifiers::ALT);
    assert_eq!(a.composer.input.cursor(), (0, 8));
    // Ctrl-U deletes to the start of the line (it is not undo), Ctrl-Y puts it back.
    ctrl(&mut a, 'u');
    assert_eq!(draft(&a), "");
    ctrl(&mut a, 'y');
    assert_eq!(draft(&a), "one two ");
    // Undo, on Ctrl-Z and on Ctrl-_ (which legacy terminals report as Ctrl-7).
    typed(&mut a, "x");
    ctrl(&mut a, 'z');
    assert_eq!(draft(&a), "one two ");
    typed(&mut a, "y");
    ctrl(&mut a, '7');
    assert_eq!(draft(&a), "one two ");
    ctrl(&mut a, 'k');
    ctrl(&mut a, 'a');
    ctrl(&mut a, 'k');
    assert_eq!(draft(&a), "", "Ctrl-K deletes to the end of the line");
}

/// One finished turn with a weather call, followed by `after` exchanges of plain text.
fn long_transcript(a: &mut App, after: usize) {
    let call = "functions.get_weather:0";
    for e in [
        EngineEvent::RoundStarted { round: 1 },
        EngineEvent::Stream(StreamEvent::Text("Checking.".into())),
        EngineEvent::Stream(StreamEvent::ToolCallBegin {
            index: 0,
            id: call.into(),
            name: "get_weather".into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallArgs {
            index: 0,
            delta: r#"{"city": "Paris"}"#.into(),
        }),
        EngineEvent::Stream(StreamEvent::ToolCallEnd { index: 0 }),
    ] {
        update(a, AppEvent::Engine(e));
    }
    if let Some(Entry::Assistant(t)) = a.transcript.entries.last_mut() {
        t.state = TurnState::Done;
        t.panes[0].state = PaneState::Done {
            exit_code: 0,
            duration: std::time::Duration::from_millis(5),
        };
    }
    for i in 0..after {
        a.transcript.entries.push(Entry::User {
            id: Default::default(),
            text: format!("follow-up question number {i}"),
        });
    }
}

#[test]
fn tab_scrolls_the_transcript_to_the_selected_pane() {
    let mut a = app();
    long_transcript(&mut a, 40);
    let before = screen(&mut a, 80, 24);
    assert!(!before.contains("get_weather"), "the pane is off screen");
    key(&mut a, KeyCode::Tab);
    assert!(a.transcript.selected_pane.is_some());
    let after = screen(&mut a, 80, 24);
    assert!(
        after.contains("get_weather"),
        "Tab shows the pane:\n{after}"
    );
    // Back to the bottom on End with an empty input, as before.
    key(&mut a, KeyCode::End);
    let bottom = screen(&mut a, 80, 24);
    assert!(bottom.contains("number 39"), "{bottom}");
}

#[test]
fn always_allow_is_shown_and_revoked_from_tools() {
    let mut a = app();
    let mut first = ask(&mut a, r#"{"city": "Paris"}"#);
    key(&mut a, KeyCode::Char('a'));
    assert!(matches!(first.try_recv(), Ok(Decision::Approve { .. })));
    assert!(first.always(), "`a` asks the engine to always allow");
    // Visible: in the status bar and in /tools.
    let shown = screen(&mut a, 120, 30);
    let status = shown.lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("always: get_weather"), "{status}");
    typed(&mut a, "/tools");
    key(&mut a, KeyCode::Enter);
    let (text, _) = notices(&a).pop().expect("the /tools list");
    assert!(text.contains("always allowed this session"), "{text}");
    assert!(text.contains("/tools revoke"), "{text}");
    // Revoked: the next call asks again, and the status bar no longer says it.
    typed(&mut a, "/tools revoke get_weather");
    let fx = key(&mut a, KeyCode::Enter);
    // The policy is the engine's: it is told, and asks again from then on.
    assert_eq!(
        fx,
        vec![Effect::Agent(Op::Revoke {
            tool: Some("get_weather".into())
        })]
    );
    let (text, error) = notices(&a).pop().expect("the revoke notice");
    assert!(!error && text.contains("revoked for get_weather"), "{text}");
    let shown = screen(&mut a, 120, 30);
    assert!(!shown.contains("always: get_weather"), "{shown}");
    key(&mut a, KeyCode::Esc);
    typed(&mut a, "/tools revoke nope");
    key(&mut a, KeyCode::Enter);
    let (text, error) = notices(&a).pop().expect("the refusal");
    assert!(
        error && text.contains("nope is not always allowed"),
        "{text}"
    );
}

#[test]
fn export_without_a_path_writes_beside_the_user_and_says_where() {
    let mut a = app();
    typed(&mut a, "/export");
    let fx = key(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Export {
            markdown: true,
            path: None,
            replace: false,
        }]
    );
    typed(&mut a, "/export json");
    let fx = key(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Export {
            markdown: false,
            path: None,
            replace: false,
        }]
    );
    let p = crate::app::export::default_export_path(
        std::path::Path::new("/home/u/src"),
        "20261201-120000-ab12",
        true,
    );
    assert_eq!(
        p,
        std::path::Path::new("/home/u/src/kimi-20261201-120000-ab12.md")
    );
}

#[test]
fn the_exit_hint_names_the_session_only_once_it_was_saved() {
    let mut a = app();
    a.session = None;
    // Nothing sent, nothing saved: nothing to resume.
    assert_eq!(crate::app::resume_hint(&a), None);
    // The agent wrote the session's journal and said so.
    let meta = kimi_core::session::Session::new(
        "demo",
        kimi_protocol::Mode::Raw,
        "m",
        "http://127.0.0.1:1/v1",
    );
    update(
        &mut a,
        AppEvent::Engine(kimi_core::engine::EngineEvent::SessionStarted {
            meta: Box::new(meta),
        }),
    );
    let id = a.session.as_ref().map(|s| s.id.clone()).unwrap_or_default();
    let hint = crate::app::resume_hint(&a).expect("a hint");
    assert!(hint.contains(&format!("kimi-tui --session {id}")), "{hint}");
}

/// A chat-mode trace of `events` SSE events, each long enough to wrap at 80 columns.
fn long_chat_trace(events: usize) -> kimi_protocol::Trace {
    let mut t = kimi_protocol::Trace {
        mode: kimi_protocol::Mode::Chat,
        url: "http://h/v1/chat/completions".into(),
        ..kimi_protocol::Trace::default()
    };
    for i in 0..events {
        let data = format!(
            "{{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"event {i} {}\"}}}}]}}",
            "lorem ipsum dolor sit amet ".repeat(4)
        );
        t.push_chunk(&data, 1000 * i as u64);
    }
    t
}

fn rows_of(screen: &str) -> Vec<&str> {
    screen.lines().collect()
}

#[test]
fn inspector_end_and_page_down_count_wrapped_rows() {
    let mut a = app();
    a.traces.push(long_chat_trace(44).into());
    ctrl(&mut a, 't');
    assert!(a.layers.inspector.open);
    screen(&mut a, 80, 24);
    key(&mut a, KeyCode::End);
    let shown = screen(&mut a, 80, 24);
    // By chunk number: the wider prefix (time, gap) wraps the event text anywhere.
    assert!(shown.contains("#43 "), "End shows the last event:\n{shown}");
    // PgDn from the top never skips a line: every event is on one of the pages.
    key(&mut a, KeyCode::Home);
    let mut seen = String::new();
    for _ in 0..60 {
        seen.push_str(&screen(&mut a, 80, 24));
        key(&mut a, KeyCode::PageDown);
    }
    for i in 0..44 {
        assert!(seen.contains(&format!("#{i} ")), "event {i} skipped");
    }
}

#[test]
fn inspector_search_highlights_wraps_around_and_leaves_no_stale_note() {
    let mut a = app();
    a.traces.push(long_chat_trace(30).into());
    ctrl(&mut a, 't');
    screen(&mut a, 100, 30);
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "event 29 ");
    key(&mut a, KeyCode::Enter);
    let first = a.layers.inspector.scroll;
    // The match is drawn in reverse video.
    let frame = super::drawn(&mut a, 100, 30);
    let buf = &frame;
    let reversed: String = buf
        .content()
        .iter()
        .filter(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(|c| c.symbol())
        .collect();
    // (The input's cursor cell is reversed too: a space at the end.)
    assert_eq!(reversed.trim_end(), "event 29");
    // n past the last match wraps to the first and says so.
    key(&mut a, KeyCode::Char('n'));
    let note = a.layers.inspector.message.clone().unwrap_or_default();
    assert!(note.contains("wrapped to the top"), "{note}");
    assert_eq!(a.layers.inspector.scroll, first, "the only match again");
    // Scrolling clears the note: it described the old position.
    key(&mut a, KeyCode::Up);
    assert_eq!(a.layers.inspector.message, None);
    let shown = screen(&mut a, 100, 30);
    assert!(!rows_of(&shown).iter().any(|r| r.contains("wrapped")));
    // A query with no match at all says so.
    key(&mut a, KeyCode::Char('/'));
    typed(&mut a, "zzz");
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        a.layers.inspector.message.as_deref(),
        Some("/zzz: no matches")
    );
}

/// The screen with reverse-video runs in ⟦ ⟧: what tells a badge apart without colour.
fn styled_screen(app: &mut App, w: u16, h: u16) -> (String, bool) {
    let frame = super::drawn(app, w, h);
    let buf = &frame;
    let mut colourless = true;
    let mut out = String::new();
    for y in 0..h {
        let mut row = String::new();
        let mut inside = false;
        let mut skip = 0;
        for x in 0..w {
            let cell = &buf[(x, y)];
            colourless &=
                cell.fg == ratatui::style::Color::Reset && cell.bg == ratatui::style::Color::Reset;
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let rev = cell.modifier.contains(ratatui::style::Modifier::REVERSED);
            if rev != inside {
                row.push(if rev { '⟦' } else { '⟧' });
                inside = rev;
            }
            row.push_str(cell.symbol());
            skip = ui::width::str_width(cell.symbol()).saturating_sub(1);
        }
        if inside {
            row.push('⟧');
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    (out, colourless)
}

#[test]
fn under_no_color_marker_badges_are_in_reverse_video() {
    let mut t = kimi_protocol::Trace {
        mode: kimi_protocol::Mode::Raw,
        url: "http://127.0.0.1:8000/v1/completions".into(),
        prompt: Some("<|im_user|>user<|im_middle|>Weather in Paris?<|im_end|>".into()),
        ..kimi_protocol::Trace::default()
    };
    for (i, c) in ["Let me check.", "<|tool_calls_section_begin|>", "done"]
        .iter()
        .enumerate()
    {
        t.push_chunk(c, 1000 * i as u64);
    }
    t.markers.push(kimi_protocol::MarkerHit {
        marker: kimi_protocol::Marker::SectionBegin,
        offset: 13,
        call: None,
    });
    let mut a = app();
    a.traces.push(t.into());
    a.layers.inspector.open = true;
    a.no_color = true;
    let (shown, colourless) = styled_screen(&mut a, 90, 20);
    assert!(colourless, "NO_COLOR: no colour anywhere");
    // Markers and their token ids stand out from the text around them.
    assert!(
        shown.contains("│⟦<|tool_calls_section_begin|> 163595 ⟧│"),
        "{shown}"
    );
    assert!(shown.contains("⟦<|im_user|> 163587 ⟧user"), "{shown}");
    insta::assert_snapshot!(shown);
}

fn turn_done(app: &mut App, cancelled: bool) -> Vec<Effect> {
    update(
        app,
        AppEvent::Engine(EngineEvent::TurnDone {
            outcome: Box::new(kimi_core::engine::TurnOutcome {
                cancelled,
                ..Default::default()
            }),
        }),
    )
}

#[test]
fn a_message_typed_during_a_turn_is_queued_shown_and_sent_when_it_ends() {
    let mut a = app();
    typed(&mut a, "first");
    enter(&mut a);
    assert!(a.busy);
    typed(&mut a, "second");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "nothing sent mid-turn: {fx:?}");
    assert_eq!(a.composer.queued, ["second"]);
    assert_eq!(draft(&a), "");
    let shown = screen(&mut a, 120, 30);
    assert!(shown.contains("│ 1 queued"), "{shown}");
    // The turn ends: the queued message goes out at once.
    let fx = turn_done(&mut a, false);
    assert!(fx.contains(&Effect::Agent(Op::UserTurn {
        text: "second".into()
    })));
    assert!(a.composer.queued.is_empty() && a.busy);
}

#[test]
fn a_queued_message_can_be_taken_back_and_a_cancel_keeps_it() {
    let mut a = app();
    typed(&mut a, "first");
    enter(&mut a);
    typed(&mut a, "second");
    key(&mut a, KeyCode::Enter);
    // Up on the empty input takes it back to edit.
    key(&mut a, KeyCode::Up);
    assert_eq!(draft(&a), "second");
    assert!(a.composer.queued.is_empty());
    key(&mut a, KeyCode::Enter);
    assert_eq!(a.composer.queued, ["second"]);
    // Cancelled: nothing is sent, the text is back in the input.
    let fx = turn_done(&mut a, true);
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::UserTurn { .. }))),
        "{fx:?}"
    );
    assert_eq!(draft(&a), "second");
    assert!(a.composer.queued.is_empty());
}
