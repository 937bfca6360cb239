//! The transcript view owns its rows: a long answer streams with rows held only near the
//! viewport, and rows dropped far from it come back exactly when scrolled to.

use crate::app::state::{App, AssistantTurn, Connection, Entry};
use crate::ui;
use kimi_core::tools::Toolbox;
use kimi_protocol::Mode;

const W: u16 = 80;
const H: u16 = 24;
/// Transcript rows at 80x24: the input box takes 3 rows and the status bar 1.
const ROWS: usize = H as usize - 4;

fn app() -> App {
    let connection = Connection {
        profile: "t".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "127.0.0.1:8000".into(),
    };
    App::new(connection, Toolbox::default(), None)
}

/// The transcript rows of the frame, as text: drawn as the event loop draws them, and read
/// from the view itself, since while scrolled up the "more below" marker covers the last row
/// (which is checked here; its look is in the UI snapshots).
fn shown(app: &mut App) -> Vec<String> {
    use ui::renderable::Renderable;
    let frame = super::drawn(app, W, H);
    let last = rows_of(&frame).pop().unwrap_or_default();
    assert_eq!(
        last.starts_with("↓ more below"),
        app.transcript.scroll_from_bottom > 0,
        "{last:?}"
    );
    let area = ratatui::layout::Rect::new(0, 0, W, ROWS as u16);
    let mut view = ratatui::buffer::Buffer::empty(area);
    app.transcript.view.render(area, &mut view);
    rows_of(&view)
}

fn rows_of(buf: &ratatui::buffer::Buffer) -> Vec<String> {
    (0..ROWS as u16)
        .map(|y| {
            (0..W)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// The rows the whole answer renders to (header, markdown, the blank line after).
fn expected(text: &str) -> Vec<String> {
    let mut rows = vec!["◆ Kimi  streaming…".to_owned()];
    rows.extend(
        ui::markdown::render(text, W, &ui::markdown::Theme::default())
            .iter()
            .map(|l| l.to_string().trim_end().to_owned()),
    );
    rows.push(String::new());
    rows
}

fn stream(answer_tokens: &[&str], count: usize) -> (App, String) {
    let mut a = app();
    a.transcript
        .entries
        .push(Entry::Assistant(Box::new(AssistantTurn::new(None))));
    a.transcript.turn_entry = Some(0);
    let mut text = String::new();
    for i in 0..count {
        let tok = answer_tokens[i % answer_tokens.len()];
        text.push_str(tok);
        a.current_turn().expect("turn").push_text(tok);
        if i % 50 == 0 {
            shown(&mut a);
            assert!(
                a.transcript.view.held_rows() <= 8 * ROWS + 2 * 256,
                "{} rows held after {i} tokens",
                a.transcript.view.held_rows()
            );
        }
    }
    (a, text)
}

fn check_long_answer(mut a: App, text: &str) {
    let all = expected(text);
    assert!(
        all.len() > 20 * ROWS,
        "too short to show eviction: {}",
        all.len()
    );
    assert_eq!(shown(&mut a), all[all.len() - ROWS..]);
    // To the top: the first rows are laid out again exactly; the bottom ones are dropped.
    a.transcript.scroll_from_bottom = usize::MAX / 2;
    assert_eq!(shown(&mut a), all[..ROWS]);
    assert!(a.transcript.view.held_rows() <= 8 * ROWS + 2 * 256);
    // The middle, then back to the bottom.
    a.transcript.scroll_from_bottom = all.len() / 2;
    let mid = all.len() - all.len() / 2 - ROWS;
    assert_eq!(shown(&mut a), all[mid..mid + ROWS]);
    a.transcript.scroll_from_bottom = 0;
    assert_eq!(shown(&mut a), all[all.len() - ROWS..]);
}

#[test]
fn a_long_code_answer_holds_rows_only_near_the_viewport() {
    let tokens = ["    let", " v", " =", " f(", "\"s\"", ");", " // c", "\n"];
    let mut first = vec!["Intro:\n```rust\n"];
    first.extend(tokens);
    let (a, text) = stream(&first[..], 1 + 8 * 3_000);
    check_long_answer(a, &text);
}

#[test]
fn a_long_paragraph_holds_rows_only_near_the_viewport() {
    let tokens = [
        "The",
        " quick",
        " **brown**",
        " fox",
        " jumps",
        " over",
        " `lazy`",
        " dogs.",
    ];
    let (a, text) = stream(&tokens, 16_000);
    check_long_answer(a, &text);
}

#[test]
fn many_cells_hold_rows_only_near_the_viewport() {
    let mut a = app();
    for i in 0..2_000 {
        a.transcript.entries.push(Entry::User {
            id: Default::default(),
            text: format!("question {i}"),
        });
        shown(&mut a);
    }
    assert!(a.transcript.view.held_rows() <= 8 * ROWS);
    a.transcript.scroll_from_bottom = usize::MAX / 2;
    let top = shown(&mut a);
    assert_eq!(top[0], "▌ You");
    assert_eq!(top[1], "▌ question 0");
    assert!(a.transcript.view.held_rows() <= 8 * ROWS);
}

/// The reasoning cell is a part of its turn's rows: keyed by what it shows (the toggle, its
/// deltas), so flipping `reasoning_open` alone lays it out again; open and long, its rows are
/// dropped far from the viewport like the answer's and come back exactly.
#[test]
fn a_long_open_reasoning_cell_follows_the_toggle_and_holds_rows_only_near_the_viewport() {
    use std::time::Instant;
    let mut a = app();
    let mut t = AssistantTurn::new(None);
    let start = Instant::now();
    for i in 0..3_000 {
        t.reasoning
            .push(&format!("step {i} of the reasoning goes here.\n"), start);
    }
    t.reasoning.end(start);
    t.push_text("The answer.");
    a.transcript.entries.push(Entry::Assistant(Box::new(t)));
    let reasoning_rows = |a: &App, open: bool| -> Vec<String> {
        let Some(Entry::Assistant(t)) = a.transcript.entries.first() else {
            panic!("a turn");
        };
        ui::reasoning::lines(&t.reasoning, open, W, Instant::now())
            .iter()
            .map(|l| l.to_string().trim_end().to_owned())
            .collect()
    };
    let mut all = vec!["◆ Kimi  streaming…".to_owned()];
    all.extend(reasoning_rows(&a, false));
    all.extend(["The answer.".to_owned(), String::new()]);
    assert_eq!(shown(&mut a)[..all.len()], all[..], "folded: one row");

    // The toggle alone (no `rev` bump): the cell is keyed by it.
    a.transcript.reasoning_open = true;
    let mut all = vec!["◆ Kimi  streaming…".to_owned()];
    all.extend(reasoning_rows(&a, true));
    all.extend(["The answer.".to_owned(), String::new()]);
    assert!(all.len() > 20 * ROWS, "long enough to evict: {}", all.len());
    assert_eq!(shown(&mut a), all[all.len() - ROWS..]);
    assert!(a.transcript.view.held_rows() <= 8 * ROWS);
    a.transcript.scroll_from_bottom = usize::MAX / 2;
    assert_eq!(shown(&mut a), all[..ROWS]);
    assert!(a.transcript.view.held_rows() <= 8 * ROWS);
    a.transcript.scroll_from_bottom = all.len() / 2;
    let mid = all.len() - all.len() / 2 - ROWS;
    assert_eq!(shown(&mut a), all[mid..mid + ROWS]);
    a.transcript.scroll_from_bottom = 0;
    assert_eq!(shown(&mut a), all[all.len() - ROWS..]);

    // Closed again: back to one row.
    a.transcript.reasoning_open = false;
    let shown_rows = shown(&mut a);
    assert_eq!(shown_rows[0], "◆ Kimi  streaming…");
    assert!(shown_rows[1].contains("(F2 show)"), "{shown_rows:?}");
    assert_eq!(shown_rows[2], "The answer.");
}

/// Reasoning streamed in, drawn every few deltas (only its last run laid out again each
/// time), ends up with the rows of laying the whole text out at once, and holds only the rows
/// near the viewport while it grows.
#[test]
fn streamed_reasoning_lays_out_as_the_whole_text_would() {
    use std::time::Instant;
    let mut a = app();
    a.transcript
        .entries
        .push(Entry::Assistant(Box::new(AssistantTurn::new(None))));
    a.transcript.turn_entry = Some(0);
    let pieces = [
        "\n\nFirst",
        " I should",
        " check the",
        " weather.\n",
        "\n",
        "Then a long line that wraps across the width of the screen more than once, ",
        "so that runs end inside wrapped text as well as between lines.\n",
    ];
    let start = Instant::now();
    for i in 0..1_400 {
        let t = a.current_turn().expect("turn");
        t.reasoning.push(pieces[i % pieces.len()], start);
        if i % 37 == 0 {
            shown(&mut a);
            assert!(
                a.transcript.view.held_rows() <= 8 * ROWS + 2 * 40,
                "{} rows held after {i} deltas",
                a.transcript.view.held_rows()
            );
        }
    }
    let screen = shown(&mut a);
    let t = a.current_turn().expect("turn");
    let all: Vec<String> = ui::reasoning::lines(&t.reasoning, false, W, Instant::now())
        .iter()
        .map(|l| l.to_string().trim_end().to_owned())
        .collect();
    assert!(all.len() > 10 * ROWS, "{}", all.len());
    // The bottom of the screen: the last body rows, then the (empty) answer and a blank row.
    assert_eq!(screen[..ROWS - 1], all[all.len() - (ROWS - 1)..]);
    assert_eq!(screen[ROWS - 1], "");
    // And from the top: the header (its elapsed time moves), then the first body rows.
    a.transcript.scroll_from_bottom = usize::MAX / 2;
    let top = shown(&mut a);
    assert!(top[1].contains("Thinking…"), "{top:?}");
    assert_eq!(top[2..], all[1..ROWS - 1]);
}
