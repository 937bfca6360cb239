//! `e` in the inspector: the model's output of the last answer in an editor (raw mode: the
//! completion text as it arrived, markers included; chat mode: the content), and `Ctrl-S` to
//! have the model continue from the edit (`Op::ContinueEdited`: the core replaces the answer
//! and runs the agent loop on). `Esc` leaves the answer as it was. Only when no turn runs.

use crossterm::event::KeyEvent;
use ratatui::widgets::{Block, Borders};
use ratatui_textarea::{CursorMove, TextArea};

use super::event::Effect;
use super::keys::{Action, Context, lookup};
use super::state::{App, Entry};
use kimi_core::engine::{Op, editable_answer};

/// The editor of the last answer, open over the inspector's lines.
#[derive(Debug)]
pub(crate) struct AnswerEditor {
    pub(crate) editor: TextArea<'static>,
}

/// `e`: open the editor on the last answer, or say in the footer why not.
pub(crate) fn open(app: &mut App) {
    let why_not = if app.busy {
        Err("a turn is running: edit the last answer when it is over".to_owned())
    } else {
        let traces = app.trace_messages.iter().copied().zip(app.traces.iter());
        editable_answer(app.connection.mode, &app.conversation, traces)
    };
    let ins = &mut app.layers.inspector;
    let answer = match why_not {
        Ok(a) => a,
        Err(why) => {
            ins.message = Some(why.trim_end_matches('.').to_owned());
            return;
        }
    };
    // The text is drawn as it is: what would not print (an escape, a bidi control) must not
    // reach the terminal, and an escaped copy would not be the model's bytes any more.
    if kimi_protocol::invisible::any_hidden(&answer.text) {
        ins.message = Some(
            "the last answer holds characters that do not print: it cannot be edited here".into(),
        );
        return;
    }
    let mut editor = TextArea::new(answer.text.split('\n').map(str::to_owned).collect());
    // Its frame set once: the editor is drawn as it is, never copied per frame.
    editor.set_block(
        Block::default()
            .borders(Borders::ALL)
            .border_style(crate::ui::style::accent())
            .title(" The last answer as the model wrote it: edit, then Ctrl-S to continue · Esc cancel "),
    );
    // The model goes on from the end: that is where an edit most often is.
    editor.move_cursor(CursorMove::Bottom);
    editor.move_cursor(CursorMove::End);
    ins.edit = Some(AnswerEditor { editor });
    ins.message = Some("editing the last answer: Ctrl-S continue from here, Esc cancel".into());
}

/// A key while the editor is open: it takes them all.
pub(crate) fn key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(edit) = app.layers.inspector.edit.as_mut() else {
        return;
    };
    match lookup(Context::AnswerEdit, &k) {
        Some(Action::ContinueEdit) => {
            let text = edit.editor.lines().join("\n");
            app.layers.inspector.edit = None;
            app.layers.inspector.message = None;
            app.layers.inspector.open = false;
            continue_from(app, text, fx);
        }
        Some(Action::CancelEdit) => {
            let ins = &mut app.layers.inspector;
            ins.edit = None;
            ins.message = Some("edit cancelled: the answer is as it was".into());
        }
        _ => {
            edit.editor.input(k);
        }
    }
}

/// The edit is confirmed: the answer's cell goes (the continued answer streams into a new
/// one, as the core replaces the message) and the core continues from `text`.
fn continue_from(app: &mut App, text: String, fx: &mut Vec<Effect>) {
    let entries = &mut app.transcript.entries;
    if let Some(i) = entries
        .iter()
        .rposition(|e| matches!(e, Entry::Assistant(_)))
    {
        entries.remove(i);
    }
    app.transcript.selected_pane = None;
    app.transcript.turn_entry = None;
    app.transcript.scroll_from_bottom = 0;
    app.continuing = true;
    super::update::start_turn(app, fx, Op::ContinueEdited { text });
}
