//! The slash-command popup through `update`: `/` lists the commands of the table, typing
//! narrows them, Up/Down select, Tab completes, Esc closes it with the input kept, Enter runs
//! what is typed, and a mistyped command stays in the input with a suggestion.

use crossterm::event::KeyCode;

use super::app_update::{app, ctrl, key, notices, screen, typed};
use crate::app::commands::COMMANDS;
use crate::app::state::{App, Entry};

fn input(app: &App) -> String {
    app.composer.input.lines().join("\n")
}

/// The rows the popup offers, while it is open.
fn offered(app: &App) -> Option<Vec<String>> {
    let p = &app.composer.slash;
    p.is_open()
        .then(|| p.choices.iter().map(|c| c.name.clone()).collect())
}

fn selected(app: &App) -> String {
    let p = &app.composer.slash;
    p.choices[p.selected].name.clone()
}

#[test]
fn a_slash_lists_every_command_and_typing_narrows_the_list() {
    let mut a = app();
    assert_eq!(offered(&a), None, "nothing typed: no popup");
    typed(&mut a, "/");
    let all = offered(&a).expect("open");
    let names: Vec<String> = COMMANDS.iter().map(|c| format!("/{}", c.name)).collect();
    assert_eq!(all, names);
    typed(&mut a, "ex");
    // `/exit` is `/quit`'s alias: offered under the name that matches.
    assert_eq!(offered(&a), Some(vec!["/export".into(), "/exit".into()]));
    typed(&mut a, "p");
    assert_eq!(offered(&a), Some(vec!["/export".into()]));
    // Backspace widens it again.
    key(&mut a, KeyCode::Backspace);
    key(&mut a, KeyCode::Backspace);
    assert_eq!(offered(&a), Some(vec!["/export".into(), "/exit".into()]));
    // A blank ends the command's name: the list goes.
    typed(&mut a, "xport ");
    assert_eq!(offered(&a), None);
    assert_eq!(input(&a), "/export ");
}

#[test]
fn no_popup_for_a_message_or_a_second_line() {
    let mut a = app();
    typed(&mut a, "//etc");
    assert_eq!(offered(&a), None, "`//` starts a message");
    let mut b = app();
    typed(&mut b, "see /ex");
    assert_eq!(offered(&b), None, "a slash later in a message");
    let mut c = app();
    typed(&mut c, "/ex");
    ctrl(&mut c, 'j');
    assert_eq!(offered(&c), None, "two lines are a message");
}

#[test]
fn up_and_down_move_the_selection_and_wrap_around() {
    let mut a = app();
    typed(&mut a, "/");
    assert_eq!(selected(&a), "/mode");
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Down);
    assert_eq!(selected(&a), "/clear");
    assert_eq!(input(&a), "/", "the input stays as typed");
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Up);
    key(&mut a, KeyCode::Up);
    let last = COMMANDS.last().expect("commands").name;
    assert_eq!(selected(&a), format!("/{last}"));
    // Typing starts again from the first match.
    typed(&mut a, "t");
    assert_eq!(selected(&a), "/thinking");
}

/// A fresh app after typing `text` and pressing `keys`.
fn after(text: &str, keys: &[KeyCode]) -> App {
    let mut a = app();
    typed(&mut a, text);
    for k in keys {
        key(&mut a, *k);
    }
    a
}

#[test]
fn tab_completes_the_selected_the_only_or_the_shared_prefix() {
    use KeyCode::{Down, Tab};
    // Several matches, no longer shared prefix: the selected (first) one, and a space.
    let a = after("/ex", &[Tab]);
    assert_eq!(input(&a), "/export ");
    assert_eq!(offered(&a), None, "complete: the list goes");
    // The row chosen with Down.
    assert_eq!(input(&after("/ex", &[Down, Tab])), "/exit ");
    // The only match.
    assert_eq!(input(&after("/lo", &[Tab])), "/logprobs ");
    // /mod: /mode and /model share `/mode`, which Tab fills in without a space, leaving both
    // offered; a second Tab takes the selected one.
    let mut d = after("/mod", &[Tab]);
    assert_eq!(input(&d), "/mode");
    assert_eq!(offered(&d), Some(vec!["/mode".into(), "/model".into()]));
    key(&mut d, Tab);
    assert_eq!(input(&d), "/mode ");
    // Nothing typed after the slash: Tab takes the first command.
    let first = format!("/{} ", COMMANDS[0].name);
    assert_eq!(input(&after("/", &[Tab])), first);
}

#[test]
fn esc_closes_the_popup_and_keeps_the_input() {
    let mut a = app();
    typed(&mut a, "/ex");
    key(&mut a, KeyCode::Esc);
    assert_eq!(input(&a), "/ex");
    assert_eq!(offered(&a), None);
    assert!(!screen(&mut a, 80, 20).contains("commands"));
    // Closed, Tab is the input's again: the input is not completed.
    key(&mut a, KeyCode::Tab);
    assert_eq!(input(&a), "/ex");
    // Typing on opens it again for the new name.
    typed(&mut a, "p");
    assert_eq!(offered(&a), Some(vec!["/export".into()]));
}

#[test]
fn enter_on_a_complete_command_runs_it() {
    let mut a = app();
    typed(&mut a, "/help");
    assert!(offered(&a).is_some());
    key(&mut a, KeyCode::Enter);
    assert!(a.layers.help.open, "/help ran");
    assert_eq!(input(&a), "");
    assert_eq!(offered(&a), None);
}

#[test]
fn a_mistyped_command_stays_in_the_input_with_the_nearest_command() {
    let mut a = app();
    typed(&mut a, "/exprt foo");
    let fx = key(&mut a, KeyCode::Enter);
    assert!(fx.is_empty(), "nothing is sent: {fx:?}");
    assert_eq!(input(&a), "/exprt foo", "nothing is lost");
    assert_eq!(
        notices(&a).last(),
        Some(&(
            "unknown command /exprt; did you mean /export? /help lists them".to_owned(),
            true
        ))
    );
    assert!(
        !(a.transcript.entries.iter()).any(|e| matches!(e, Entry::User { .. })),
        "no message was added"
    );
    // Bad arguments of a known command are kept too.
    let mut b = app();
    typed(&mut b, "/mode fast");
    key(&mut b, KeyCode::Enter);
    assert_eq!(input(&b), "/mode fast");
    assert!(
        notices(&b)
            .iter()
            .any(|(t, _)| t == "usage: /mode raw|chat")
    );
}

#[test]
fn a_typo_in_the_name_offers_the_nearest_command_to_tab_to() {
    let mut a = app();
    typed(&mut a, "/exprt");
    assert_eq!(offered(&a), Some(vec!["/export".into()]));
    assert!(a.composer.slash.guessed);
    assert!(screen(&mut a, 80, 20).contains("did you mean"));
    key(&mut a, KeyCode::Tab);
    assert_eq!(input(&a), "/export ");
    // Nothing near: the popup says so, and Tab changes nothing.
    let mut b = app();
    typed(&mut b, "/xyzzy");
    assert_eq!(offered(&b), Some(vec![]));
    assert!(screen(&mut b, 80, 20).contains("no command starts with /xyzzy"));
    key(&mut b, KeyCode::Tab);
    assert_eq!(input(&b), "/xyzzy");
}

#[test]
fn the_ready_mcp_servers_prompts_are_offered_too() {
    let mut a = super::app_mcp::app_with_docs();
    a.mcp.prompts[0].1.description = Some("Review\x1b[31m a file".into());
    typed(&mut a, "/mcp");
    assert_eq!(
        offered(&a),
        Some(vec!["/mcp".into(), "/mcp__docs__review".into()])
    );
    let help = &a.composer.slash.choices[1].help;
    assert!(!help.contains('\x1b'), "server text is sanitized: {help:?}");
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Tab);
    assert_eq!(input(&a), "/mcp__docs__review ");
}

/// The popup's rows on a screen: from its top border to the row above the input.
fn popup_rows(shown: &str) -> Vec<String> {
    let lines: Vec<&str> = shown.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.contains(" commands"))
        .expect("the popup's title");
    lines[top..]
        .iter()
        .take_while(|l| !l.contains("Tab complete"))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn a_long_list_scrolls_and_a_narrow_screen_cuts_the_help() {
    let mut a = app();
    typed(&mut a, "/");
    for _ in 0..10 {
        key(&mut a, KeyCode::Down);
    }
    let n = COMMANDS.len();
    let shown = screen(&mut a, 40, 15);
    let rows = popup_rows(&shown);
    // The selected (11th) command is on the last row; the title says where the rows are.
    assert!(
        rows[0].contains(&format!("commands 4-11 of {n}")),
        "{shown}"
    );
    let selected = format!("› /{}", COMMANDS[10].name);
    assert!(rows.last().expect("rows").contains(&selected), "{shown}");
    assert!(!shown.contains("/mode "), "scrolled off the top: {shown}");
    // Every row keeps its border: the help is cut with an ellipsis, not wrapped.
    for r in &rows[1..] {
        assert!(r.starts_with('│') && r.ends_with('│'), "{r:?}\n{shown}");
        assert!(r.contains('…'), "{r:?}");
    }
    assert!(screen(&mut a, 120, 40).contains(&format!("commands 4-11 of {n}")));
}

#[test]
fn slash_popup_snapshots() {
    let mut a = app();
    typed(&mut a, "/ex");
    insta::assert_snapshot!("slash_popup_filtered_120x40", screen(&mut a, 120, 40));
    let mut b = app();
    typed(&mut b, "/");
    for _ in 0..10 {
        key(&mut b, KeyCode::Down);
    }
    insta::assert_snapshot!("slash_popup_scrolled_120x40", screen(&mut b, 120, 40));
    insta::assert_snapshot!("slash_popup_scrolled_40x15", screen(&mut b, 40, 15));
}

#[test]
fn the_popup_is_drawn_into_the_area_it_is_given() {
    use crate::ui::renderable::Renderable;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let mut a = app();
    typed(&mut a, "/ex");
    let popup = &a.composer.slash;
    assert_eq!(popup.desired_height(60), 2 + 2, "two rows and the border");
    // Any area: here the bottom of a small viewport, away from the screen's origin.
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, 10));
    let area = Rect::new(5, 6, 50, popup.desired_height(50));
    popup.render(area, &mut buf);
    let row = |y: u16| (0..60).map(|x| buf[(x, y)].symbol()).collect::<String>();
    assert!(
        row(5).trim().is_empty(),
        "nothing above the area: {}",
        row(5)
    );
    assert!(row(7).contains("› /export"), "{}", row(7));
    assert!(row(8).contains("/exit"), "{}", row(8));
    assert_eq!(buf[(4, 7)].symbol(), " ", "nothing left of the area");
    assert_eq!(
        buf[(54, 7)].symbol(),
        "│",
        "the right border at the area's edge"
    );
    // The default place: the rows right above the input.
    let input = Rect::new(0, 30, 120, 3);
    let at = crate::ui::slash::area(popup, input, Rect::new(0, 0, 120, 40));
    assert_eq!(at, Rect::new(0, 26, 120, 4));
    // Little room above the input: the popup is cut to it, never over the screen's top.
    let at = crate::ui::slash::area(popup, Rect::new(0, 2, 120, 3), Rect::new(0, 0, 120, 10));
    assert_eq!(at, Rect::new(0, 0, 120, 2));
}
