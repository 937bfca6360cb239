//! The reasoning cell of thinking models: what `update` does with reasoning deltas, the fold
//! when the answer starts, the F2 toggle, `/thinking`, and the cell's lines as snapshots.

use std::time::{Duration, Instant};

use super::{update, update_after};
use crate::app::event::{AppEvent, Effect};
use crate::app::reasoning::Reasoning;
use crate::app::state::{App, AssistantTurn, Connection, Entry};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use kimi_core::engine::{EngineEvent, Op};
use kimi_core::tools::Toolbox;
use kimi_protocol::{Mode, StreamEvent, Template};
use ratatui::style::{Color, Modifier};
use ratatui::text::Line;

fn app() -> App {
    let connection = Connection {
        profile: "test".into(),
        mode: Mode::Chat,
        model: "kimi-k2-thinking".into(),
        host: "127.0.0.1:1".into(),
    };
    let mut app = App::new(connection, Toolbox::new(vec![]).expect("tools"), None);
    app.template = Template::K2Thinking;
    app
}

fn engine(app: &mut App, e: EngineEvent) -> Vec<Effect> {
    update(app, AppEvent::Engine(e))
}

fn stream(app: &mut App, s: StreamEvent) {
    engine(app, EngineEvent::Stream(s));
}

fn turn(app: &App) -> &AssistantTurn {
    app.transcript
        .entries
        .iter()
        .rev()
        .find_map(|e| match e {
            Entry::Assistant(t) => Some(&**t),
            _ => None,
        })
        .expect("an answer")
}

/// The screen as text rows, trailing spaces trimmed.
fn screen(app: &mut App, w: u16, h: u16) -> String {
    let frame = super::drawn(app, w, h);
    let buf = &frame;
    (0..h)
        .map(|y| {
            let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_owned()).collect();
            format!("{}\n", row.trim_end())
        })
        .collect()
}

/// Lines with their style: `[dim]`/`[dim italic]` before each styled run.
fn styled(lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for l in lines {
        for s in &l.spans {
            let mut tags = Vec::new();
            if s.style.fg == Some(Color::DarkGray) {
                tags.push("dim");
            }
            if s.style.add_modifier.contains(Modifier::ITALIC) {
                tags.push("italic");
            }
            if !tags.is_empty() {
                out.push_str(&format!("[{}]", tags.join(" ")));
            }
            out.push_str(&s.content);
        }
        out.push('\n');
    }
    out
}

#[test]
fn reasoning_streams_into_its_cell_and_folds_when_the_answer_starts() {
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    stream(&mut a, StreamEvent::Reasoning("The user asks. ".into()));
    stream(&mut a, StreamEvent::Reasoning("I know this.".into()));
    let t = turn(&a);
    assert_eq!(t.reasoning.text(), "The user asks. I know this.");
    assert_eq!(t.reasoning.tokens, 2);
    assert!(t.reasoning.live());
    assert_eq!(t.text(), "", "never part of the answer");
    let s = screen(&mut a, 60, 12);
    assert!(s.contains("Thinking…"), "{s}");
    assert!(s.contains("│ The user asks. I know this."), "{s}");

    stream(&mut a, StreamEvent::Text("Paris is sunny.".into()));
    let t = turn(&a);
    assert!(!t.reasoning.live(), "the answer folds it");
    assert_eq!(t.text(), "Paris is sunny.");
    let s = screen(&mut a, 60, 12);
    assert!(s.contains("Thought for") && s.contains("2 tokens"), "{s}");
    assert!(s.contains("(F2 show)"), "{s}");
    assert!(!s.contains("I know this."), "folded: {s}");

    // F2 opens every folded cell, and again closes them.
    update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE))),
    );
    assert!(a.transcript.reasoning_open);
    let s = screen(&mut a, 60, 12);
    assert!(s.contains("I know this.") && s.contains("(F2 hide)"), "{s}");
    update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE))),
    );
    assert!(!screen(&mut a, 60, 12).contains("I know this."));
}

/// The seconds in a live header `Thinking… 1.2s`.
fn thinking_secs(screen: &str) -> Option<f64> {
    let rest = &screen[screen.find("Thinking… ")? + "Thinking… ".len()..];
    rest[..rest.find('s')?].parse().ok()
}

#[test]
fn the_live_timer_counts_up_between_deltas_and_stops_when_folded() {
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    stream(&mut a, StreamEvent::Reasoning("A long thought.".into()));
    let s = screen(&mut a, 60, 12);
    assert!(thinking_secs(&s).is_some_and(|t| t < 1.0), "{s}");
    // No delta for over a second: the ticker alone moves the timer (it lays the cell out
    // again once a second, not at every 100 ms tick). Time passes by the ticks' instants.
    let rev = turn(&a).rev;
    update_after(&mut a, Duration::from_millis(900), AppEvent::Tick);
    assert_eq!(turn(&a).rev, rev, "not yet a second");
    update_after(&mut a, Duration::from_millis(200), AppEvent::Tick);
    let rev = turn(&a).rev;
    update_after(&mut a, Duration::from_millis(100), AppEvent::Tick);
    assert_eq!(turn(&a).rev, rev, "at most one layout a second");
    assert!(a.dirty);
    let s = screen(&mut a, 60, 12);
    assert!(thinking_secs(&s).is_some_and(|t| t >= 1.0), "{s}");
    // Folded: the ticks no longer touch the cell.
    stream(&mut a, StreamEvent::Text("Done.".into()));
    let rev = turn(&a).rev;
    update_after(&mut a, Duration::from_millis(1000), AppEvent::Tick);
    assert_eq!(turn(&a).rev, rev);
}

#[test]
fn reasoning_moved_out_of_the_answer_leaves_it_once() {
    // A server without a reasoning parser: the client moves the text shown before `</think>`.
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    stream(&mut a, StreamEvent::Text("thinking it over".into()));
    stream(&mut a, StreamEvent::Reasoning("thinking it over".into()));
    stream(&mut a, StreamEvent::Text("The answer.".into()));
    let t = turn(&a);
    assert_eq!(t.reasoning.text(), "thinking it over");
    assert_eq!(t.text(), "The answer.");
}

#[test]
fn reasoning_escapes_are_removed_before_the_screen() {
    let mut a = app();
    engine(&mut a, EngineEvent::RoundStarted { round: 1 });
    stream(&mut a, StreamEvent::Reasoning("red \u{1b}[31".into()));
    stream(&mut a, StreamEvent::Reasoning("mtext".into()));
    let s = screen(&mut a, 60, 8);
    assert!(!s.contains("[31m") && !s.contains('\u{1b}'), "{s}");
    assert!(s.contains("red text"), "{s}");
}

#[test]
fn thinking_command_switches_the_next_request_and_the_status_bar() {
    let mut a = app();
    a.template = Template::K25;
    for c in "/thinking off".chars() {
        update(
            &mut a,
            AppEvent::Terminal(Event::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            ))),
        );
    }
    let fx = update(
        &mut a,
        AppEvent::Terminal(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        ))),
    );
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Agent(Op::SetThinking(false)))),
        "{fx:?}"
    );
    assert_eq!(a.thinking, Some(false));
    let s = screen(&mut a, 120, 6);
    assert!(s.contains("k2.5 · thinking off"), "{s}");
}

fn cell(open: bool, done: bool) -> String {
    let t0 = Instant::now();
    let mut r = Reasoning::default();
    for piece in [
        "The user asks about the weather in Paris. ",
        "A tool can tell: I should call get_weather ",
        "and answer from its result.",
    ] {
        r.push(piece, t0);
    }
    let at = t0 + Duration::from_millis(2400);
    if done {
        r.end(at);
    }
    styled(&crate::ui::reasoning::lines(&r, open, 40, at))
}

#[test]
fn reasoning_cell_live() {
    insta::assert_snapshot!(cell(false, false));
}

#[test]
fn reasoning_cell_folded() {
    insta::assert_snapshot!(cell(false, true));
}

#[test]
fn reasoning_cell_open() {
    insta::assert_snapshot!(cell(true, true));
}

#[test]
fn a_journal_keeps_each_answers_reasoning_and_a_resumed_view_shows_it_folded() {
    use kimi_core::session::{Session, SessionStore, to_markdown};
    use kimi_protocol::{Message, Mode, ToolCall};
    let dir = tempfile::tempdir().expect("tmp");
    let store = SessionStore::new(dir.path().join("sessions"));
    let mut s = Session::new("t", Mode::Chat, "kimi-k2-thinking", "http://127.0.0.1:1/v1");
    s.id = "20261201-101010-think".into();
    s.messages = vec![
        Message::user("weather?"),
        Message {
            reasoning_content: Some("I should call get_weather.".into()),
            ..Message::assistant_with_calls(
                "",
                vec![ToolCall::new(
                    "functions.get_weather:0",
                    "get_weather",
                    "{}",
                )],
            )
        },
        Message::tool_result("functions.get_weather:0", "get_weather", "Sunny"),
        Message {
            reasoning_content: Some("It is sunny; say so.".into()),
            ..Message::assistant("Sunny.")
        },
    ];
    store.save(&s).expect("saved");
    let back = store.load(&s.id).expect("loads");
    assert_eq!(back.messages, s.messages, "reasoning survives the journal");
    let md = to_markdown(&back);
    assert!(
        md.contains("<summary>Reasoning</summary>\n\nIt is sunny; say so."),
        "{md}"
    );

    // The resumed transcript: each answer's reasoning in its cell, not in its text.
    let connection = crate::app::state::Connection {
        profile: "t".into(),
        mode: Mode::Chat,
        model: "kimi-k2-thinking".into(),
        host: "h".into(),
    };
    let mut app =
        crate::app::state::App::new(connection, kimi_core::tools::Toolbox::default(), None);
    for e in kimi_core::engine::replay::resume_events(&back, None).0 {
        crate::app::update::update(
            &mut app,
            crate::app::event::AppEvent::Engine(e),
            std::time::Instant::now(),
        );
    }
    let turns: Vec<_> = app
        .transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            crate::app::state::Entry::Assistant(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].reasoning.text(), "It is sunny; say so.");
    assert_eq!(turns[1].text(), "Sunny.");
    assert!(!turns[1].reasoning.live(), "folded");
}
