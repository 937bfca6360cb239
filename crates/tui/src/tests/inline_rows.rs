//! The inline screen's rows: what a conversation writes into the scrollback, when, and
//! what stays live in the viewport meanwhile.

use super::{round_finished, update};
use crate::app::event::AppEvent;
use crate::app::state::{App, Connection};
use crate::ui::inline;
use crate::ui::line_text;
use crate::ui::markdown::Theme;
use kimi_core::engine::EngineEvent;
use kimi_core::tools::Toolbox;
use kimi_protocol::{Mode, StreamEvent};
use ratatui::text::Line;

fn app() -> App {
    let connection = Connection {
        profile: "test".into(),
        mode: Mode::Raw,
        model: "kimi".into(),
        host: "127.0.0.1:1".into(),
    };
    App::new(connection, Toolbox::new(vec![]).expect("tools"), None)
}

fn engine(app: &mut App, e: EngineEvent) {
    update(app, AppEvent::Engine(e));
}

fn text(app: &mut App, t: &str) {
    engine(app, EngineEvent::Stream(StreamEvent::Text(t.into())));
}

/// A round of an exchange begins (sending a message made the app busy).
fn round(app: &mut App) {
    app.busy = true;
    engine(app, EngineEvent::RoundStarted { round: 1 });
}

/// The round and the exchange end.
fn finished(app: &mut App) {
    round_finished(app);
    let outcome = Box::new(kimi_core::engine::TurnOutcome::default());
    engine(app, EngineEvent::TurnDone { outcome });
}

/// One frame's rows for the scrollback, as text, at `width`.
fn written(app: &mut App, width: u16) -> Vec<String> {
    let rows = inline::prepare(app, width, 20, &Theme::default(), false);
    texts(&rows)
}

fn texts(rows: &[Line<'_>]) -> Vec<String> {
    rows.iter()
        .map(|l| line_text(l).trim_end().to_owned())
        .collect()
}

fn live(app: &App) -> Vec<String> {
    texts(&app.transcript.inline.live)
}

#[test]
fn a_streamed_answer_is_written_a_block_at_a_time_and_never_again() {
    let mut a = app();
    assert!(
        written(&mut a, 40).is_empty(),
        "nothing before the conversation"
    );
    assert!(
        live(&a).iter().any(|l| l.contains("Type a message")),
        "the welcome is live"
    );
    a.notice("hello", false);
    round(&mut a);
    text(&mut a, "First paragraph");
    // The notice is final (something follows it), the header is written at once, without
    // the streaming state; the paragraph is still open.
    assert_eq!(written(&mut a, 40), ["• hello", "", "◆ Kimi"]);
    assert_eq!(live(&a), ["First paragraph", ""]);
    text(&mut a, " goes on.\n\nSecond");
    // The next block started: the first is final, with nothing after it yet.
    assert_eq!(written(&mut a, 40), ["First paragraph goes on."]);
    assert_eq!(live(&a), ["", "Second", ""]);
    assert!(
        written(&mut a, 40).is_empty(),
        "a frame with nothing new writes nothing"
    );
    text(&mut a, " one.\n\n```rust\nfn main() {}\n");
    let rows = written(&mut a, 40);
    assert_eq!(rows, ["", "Second one."], "the code block is open");
    assert!(
        live(&a).iter().any(|l| l.contains("fn main() {}")),
        "{:?}",
        live(&a)
    );
    text(&mut a, "```\n");
    let rows = written(&mut a, 40);
    assert!(
        rows.iter().any(|l| l.contains("fn main() {}")),
        "closed: {rows:?}"
    );
    finished(&mut a);
    let rows = written(&mut a, 40);
    assert!(
        rows.iter().all(|r| !r.contains("fn main")),
        "not twice: {rows:?}"
    );
    assert!(written(&mut a, 40).is_empty());
    assert!(live(&a).is_empty(), "{:?}", live(&a));
}

#[test]
fn the_last_notice_stays_live_while_it_may_still_count_its_repeats() {
    let mut a = app();
    a.notice("draft cleared", false);
    assert!(written(&mut a, 40).is_empty());
    a.notice("draft cleared", false);
    assert!(written(&mut a, 40).is_empty());
    assert_eq!(live(&a), ["• draft cleared ×2", ""]);
    a.notice("other", false);
    assert_eq!(written(&mut a, 40), ["• draft cleared ×2", ""]);
    assert_eq!(live(&a), ["• other", ""]);
}

#[test]
fn cells_behind_a_streaming_turn_wait_for_it_and_go_in_order() {
    let mut a = app();
    round(&mut a);
    text(&mut a, "Working");
    // A notice pushed while the turn streams comes after it, in the scrollback too.
    a.notice("queued", false);
    let rows = written(&mut a, 40);
    assert_eq!(rows, ["◆ Kimi"]);
    let l = live(&a);
    let working = l.iter().position(|r| r == "Working").expect("live answer");
    let queued = l.iter().position(|r| r == "• queued").expect("live notice");
    assert!(working < queued, "{l:?}");
    finished(&mut a);
    let rows = written(&mut a, 40);
    assert_eq!(rows, ["Working", ""], "the notice is the last cell: live");
    a.notice("more", false);
    assert_eq!(written(&mut a, 40), ["• queued", ""]);
}

#[test]
fn a_width_change_goes_on_from_the_same_text_at_the_new_width() {
    let mut a = app();
    round(&mut a);
    text(
        &mut a,
        "alpha beta gamma delta\n\nepsilon zeta eta theta\n\niota",
    );
    let wide = written(&mut a, 40);
    assert_eq!(
        wide[1..],
        ["alpha beta gamma delta", "", "epsilon zeta eta theta"]
    );
    text(&mut a, " kappa\n\nlambda");
    // Narrower: what was written stays; the rest is wrapped to the new width.
    let narrow = written(&mut a, 12);
    assert_eq!(narrow, ["", "iota kappa"]);
    finished(&mut a);
    assert_eq!(written(&mut a, 12)[..2], ["", "lambda"]);
}

#[test]
fn leaving_writes_everything_including_a_streaming_turn() {
    let mut a = app();
    round(&mut a);
    text(&mut a, "half an ans");
    let _ = written(&mut a, 40);
    let rows = texts(&inline::prepare(&mut a, 40, 20, &Theme::default(), true));
    assert_eq!(rows[0], "half an ans", "{rows:?}");
    assert!(live(&a).is_empty());
}

#[test]
fn a_cleared_conversation_writes_only_what_comes_after() {
    let mut a = app();
    a.notice("one", false);
    a.notice("two", false);
    assert_eq!(written(&mut a, 40), ["• one", ""]);
    a.transcript.entries.clear();
    a.notice("three", false);
    a.notice("four", false);
    assert_eq!(written(&mut a, 40), ["• three", ""]);
}

#[test]
fn the_page_keys_say_where_the_conversation_is_instead_of_scrolling() {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    let mut a = app();
    a.inline = true;
    let page_up = Event::Key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE));
    update(&mut a, AppEvent::Terminal(page_up));
    assert_eq!(a.transcript.scroll_from_bottom, 0);
    let _ = written(&mut a, 80);
    assert!(
        live(&a).iter().any(|l| l.contains("does not scroll")),
        "{:?}",
        live(&a)
    );
}

#[test]
fn reasoning_that_comes_after_the_first_frame_is_shown_and_then_written() {
    let mut a = app();
    round(&mut a);
    assert_eq!(
        written(&mut a, 60),
        ["◆ Kimi"],
        "the header, before any token"
    );
    engine(
        &mut a,
        EngineEvent::Stream(StreamEvent::Reasoning("Thinking it over.".into())),
    );
    assert!(written(&mut a, 60).is_empty());
    assert!(
        live(&a).iter().any(|l| l.contains("Thinking it over.")),
        "{:?}",
        live(&a)
    );
    text(&mut a, "The answer.");
    let rows = written(&mut a, 60);
    let head = (rows.iter().find(|l| l.contains("Thought for")))
        .unwrap_or_else(|| panic!("no reasoning written: {rows:?}"));
    assert!(
        !head.contains("F2"),
        "no key to open it in the scrollback: {head}"
    );
    finished(&mut a);
    assert!(written(&mut a, 60).iter().any(|l| l == "The answer."));
}

#[test]
fn a_turn_with_calls_waits_for_their_results_until_the_next_round() {
    let mut a = app();
    round(&mut a);
    text(&mut a, "Checking.");
    for e in [
        StreamEvent::ToolCallBegin {
            index: 0,
            id: "c0".into(),
            name: "get_weather".into(),
        },
        StreamEvent::ToolCallArgs {
            index: 0,
            delta: "{}".into(),
        },
        StreamEvent::ToolCallEnd { index: 0 },
    ] {
        engine(&mut a, EngineEvent::Stream(e));
    }
    round_finished(&mut a);
    // The round is over, its call is not: the turn stays live while the exchange runs.
    let _ = written(&mut a, 60);
    assert!(
        live(&a).iter().any(|l| l.contains("get_weather")),
        "{:?}",
        live(&a)
    );
    // Its result arrives after the pane says done; a long one is folded on screen.
    let result: Vec<String> = (0..30).map(|n| format!("result line {n}")).collect();
    engine(
        &mut a,
        EngineEvent::MessageAppended {
            index: 2,
            message: Box::new(kimi_protocol::Message::tool_result(
                "c0",
                "get_weather",
                result.join("\n"),
            )),
        },
    );
    let _ = written(&mut a, 60);
    assert!(
        live(&a).iter().any(|l| l.contains("Ctrl-O expands")),
        "{:?}",
        live(&a)
    );
    // The next round: the turn is final, written with its pane and the whole result (no key
    // reaches the scrollback to expand it).
    round(&mut a);
    let rows = written(&mut a, 60);
    assert!(rows.iter().any(|l| l.contains("get_weather")), "{rows:?}");
    assert!(
        rows.iter().any(|l| l.contains("result line 29")),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|l| l.contains("Ctrl-O")), "{rows:?}");
    assert!(!live(&a).iter().any(|l| l.contains("get_weather")));
}

#[test]
fn a_turn_that_no_exchange_runs_is_final_whatever_its_calls_say() {
    let mut a = app();
    // A resumed turn whose call never ran: not busy, not streaming.
    round(&mut a);
    text(&mut a, "Calling.");
    engine(
        &mut a,
        EngineEvent::Stream(StreamEvent::ToolCallBegin {
            index: 0,
            id: "c0".into(),
            name: "get_weather".into(),
        }),
    );
    finished(&mut a);
    a.notice("after it", false);
    a.notice("and more", false);
    let rows = written(&mut a, 60);
    let call = rows.iter().position(|l| l.contains("get_weather"));
    let after = rows.iter().position(|l| l.contains("after it"));
    assert!(call.is_some() && after > call, "{rows:?}");
}

#[test]
fn a_width_change_in_the_middle_of_a_stream_loses_and_repeats_no_line() {
    let mut a = app();
    round(&mut a);
    let mut all = Vec::new();
    for n in 0..30 {
        text(&mut a, &format!("Line {n:05}"));
        // A frame after every token but while lines 12 to 14 stream (a busy moment: they
        // are final, unwritten, when the terminal narrows at line 15).
        let frames = !(12..15).contains(&n);
        let width = if n < 15 { 100 } else { 70 };
        for w in [" ipsum", " dolor", " sit", " amet", " consectetur"] {
            text(&mut a, w);
            if frames {
                all.extend(written(&mut a, width));
            }
        }
        text(&mut a, ".\n\n");
        if frames {
            all.extend(written(&mut a, width));
        }
    }
    finished(&mut a);
    all.extend(written(&mut a, 70));
    let lines: Vec<&String> = all.iter().filter(|l| l.starts_with("Line ")).collect();
    let want: Vec<String> = (0..30)
        .map(|n| format!("Line {n:05} ipsum dolor sit amet consectetur."))
        .collect();
    assert_eq!(lines, want.iter().collect::<Vec<_>>(), "{all:#?}");
}
