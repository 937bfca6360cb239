//! An MCP server's question to the user (elicitation): the questions waiting, the form of the one
//! shown, and its keys. Only the user answers: Enter (the form checked first), Ctrl-D (decline)
//! or Esc (cancel). A question the server gave up on goes with a notice, never with an answer.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kimi_core::tools::mcp::{ElicitAsk, ElicitReply, Field, FieldKind};
use kimi_protocol::sanitize::one_line;
use serde_json::{Map, Value};

use super::keys::{Action, Context, lookup};
use super::state::App;

/// Server names in notices are cut after this many characters.
const NAME_CHARS: usize = 64;

/// The question on screen: the server's form and what the user typed in each field.
#[derive(Debug)]
pub(crate) struct ElicitDialog {
    pub(crate) ask: ElicitAsk,
    /// One text per field, in the form's order; prefilled with the defaults.
    pub(crate) inputs: Vec<String>,
    /// The field being typed in.
    pub(crate) focus: usize,
    /// Why the last Enter sent nothing, one line per problem.
    pub(crate) problems: Vec<String>,
}

impl ElicitDialog {
    pub(crate) fn new(ask: ElicitAsk) -> Self {
        let inputs = ask.fields.iter().map(default_text).collect();
        ElicitDialog {
            ask,
            inputs,
            focus: 0,
            problems: Vec::new(),
        }
    }

    /// The answer the form holds: each non-empty field parsed, empty ones left out (a required
    /// one is then reported by the check), or the problems.
    pub(crate) fn values(&self) -> Result<Map<String, Value>, Vec<String>> {
        let mut values = Map::new();
        let mut problems = Vec::new();
        for (f, text) in self.ask.fields.iter().zip(&self.inputs) {
            if text.trim().is_empty() {
                continue;
            }
            match f.parse(text) {
                Ok(v) => {
                    values.insert(f.name.clone(), v);
                }
                Err(e) => problems.push(format!("{}: {e}", f.label())),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        self.ask.check(&values)?;
        Ok(values)
    }
}

/// The questions: the one shown and the ones after it.
#[derive(Debug, Default)]
pub(crate) struct Questions {
    pub(crate) open: Option<ElicitDialog>,
    pub(crate) waiting: VecDeque<ElicitAsk>,
}

/// The default as the user would type it.
fn default_text(f: &Field) -> String {
    match &f.default {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.to_owned(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Some(v) => v.to_string(),
    }
}

/// What a field takes, for its row: `text, email`, `whole number, 1 to 10`, `yes/no`, the
/// choices with their labels.
pub(crate) fn type_hint(f: &Field) -> String {
    fn listed(values: &[String], labels: &[String]) -> String {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| match labels.get(i) {
                Some(l) if l != v => format!("{v} ({l})"),
                _ => v.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
    let range = |lo: Option<String>, hi: Option<String>| match (lo, hi) {
        (Some(lo), Some(hi)) => format!(", {lo} to {hi}"),
        (Some(lo), None) => format!(", at least {lo}"),
        (None, Some(hi)) => format!(", at most {hi}"),
        (None, None) => String::new(),
    };
    match &f.kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
        } => {
            let mut s = "text".to_owned();
            if let Some(fmt) = format {
                s.push_str(&format!(", {fmt}"));
            }
            s.push_str(&range(
                min_length.map(|n| format!("{n} chars")),
                max_length.map(|n| format!("{n} chars")),
            ));
            s
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => format!(
            "{}{}",
            if *integer { "whole number" } else { "number" },
            range(
                minimum.map(|n| n.to_string()),
                maximum.map(|n| n.to_string())
            )
        ),
        FieldKind::Boolean => "yes/no".to_owned(),
        FieldKind::Choice { values, labels } => format!("one of: {}", listed(values, labels)),
        FieldKind::Choices { values, labels } => {
            format!("any of, comma-separated: {}", listed(values, labels))
        }
    }
}

/// Questions waiting behind the open one at most.
const MAX_WAITING: usize = 8;

fn server_name(ask: &ElicitAsk) -> String {
    one_line(&ask.server, NAME_CHARS)
}

/// A question arrived: shown now, or after the ones before it.
pub(crate) fn arrived(app: &mut App, ask: ElicitAsk) {
    app.dirty = true;
    if !ask.is_waiting() {
        return gave_up(app, &ask);
    }
    if app.layers.questions.open.is_some() {
        if app.layers.questions.waiting.len() >= MAX_WAITING {
            // A server asking faster than anyone can answer: the extra questions are cancelled
            // (dropping one answers "cancel"), said once each, and memory stays bounded.
            return app.notice(
                format!(
                    "MCP server `{}` asked more questions than wait here ({MAX_WAITING}): this one was cancelled: {}",
                    server_name(&ask),
                    one_line(&ask.message, 200)
                ),
                true,
            );
        }
        app.layers.questions.waiting.push_back(ask);
    } else {
        app.layers.questions.open = Some(ElicitDialog::new(ask));
    }
}

fn gave_up(app: &mut App, ask: &ElicitAsk) {
    app.notice(
        format!(
            "MCP server `{}` stopped waiting for an answer to its question: {}",
            server_name(ask),
            one_line(&ask.message, 200)
        ),
        true,
    );
}

/// Show the next question that is still waiting.
fn next(app: &mut App) {
    while let Some(ask) = app.layers.questions.waiting.pop_front() {
        if ask.is_waiting() {
            app.layers.questions.open = Some(ElicitDialog::new(ask));
            return;
        }
        gave_up(app, &ask);
    }
}

/// Questions whose server gave up (the call ended, the server went away) leave the screen with
/// a notice; checked when the MCP hub reports a change (a question's request ended) and on
/// each tick.
pub(crate) fn drop_abandoned(app: &mut App) {
    let waiting = std::mem::take(&mut app.layers.questions.waiting);
    for ask in waiting {
        if ask.is_waiting() {
            app.layers.questions.waiting.push_back(ask);
        } else {
            gave_up(app, &ask);
        }
    }
    let open_gone = app
        .layers
        .questions
        .open
        .as_ref()
        .is_some_and(|d| !d.ask.is_waiting());
    if open_gone && let Some(d) = app.layers.questions.open.take() {
        gave_up(app, &d.ask);
        next(app);
    }
}

fn answer(app: &mut App, reply: ElicitReply) {
    let Some(d) = app.layers.questions.open.take() else {
        return;
    };
    let server = server_name(&d.ask);
    let said = match &reply {
        ElicitReply::Accept(values) => {
            let names: Vec<&str> = values.keys().map(String::as_str).collect();
            format!(
                "sent your answer ({})",
                if names.is_empty() {
                    "no fields".to_owned()
                } else {
                    names.join(", ")
                }
            )
        }
        ElicitReply::Decline => "declined".to_owned(),
        ElicitReply::Cancel => "cancelled".to_owned(),
    };
    match d.ask.answer(reply) {
        Ok(()) => app.notice(format!("MCP server `{server}`'s question: {said}."), false),
        // Checked before: not expected. The question is gone (answered "cancel").
        Err(problems) => app.notice(
            format!(
                "MCP server `{server}`'s question was cancelled: {}",
                problems.join("; ")
            ),
            true,
        ),
    }
    next(app);
}

/// A key while a question is shown.
pub(crate) fn key(app: &mut App, k: &KeyEvent) {
    let Some(d) = app.layers.questions.open.as_mut() else {
        return;
    };
    let n = d.inputs.len();
    match lookup(Context::Elicit, k) {
        Some(Action::ElicitNext) if n > 0 => d.focus = (d.focus + 1) % n,
        Some(Action::ElicitPrev) if n > 0 => d.focus = (d.focus + n - 1) % n,
        Some(Action::ElicitAccept) => match d.values() {
            Ok(values) => answer(app, ElicitReply::Accept(values)),
            Err(problems) => d.problems = problems,
        },
        Some(Action::ElicitDecline) => answer(app, ElicitReply::Decline),
        Some(Action::ElicitCancel) => answer(app, ElicitReply::Cancel),
        Some(Action::ElicitDeleteChar) => {
            if let Some(t) = d.inputs.get_mut(d.focus) {
                t.pop();
            }
        }
        Some(Action::ElicitClearField) => {
            if let Some(t) = d.inputs.get_mut(d.focus) {
                t.clear();
            }
        }
        _ => {
            if let KeyCode::Char(c) = k.code
                && !k
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                && let Some(t) = d.inputs.get_mut(d.focus)
            {
                t.push(c);
            }
        }
    }
}

/// Pasted text goes into the focused field, on one line.
pub(crate) fn paste(app: &mut App, text: &str) -> bool {
    let Some(d) = app.layers.questions.open.as_mut() else {
        return false;
    };
    if let Some(t) = d.inputs.get_mut(d.focus) {
        let clean = kimi_protocol::sanitize::for_terminal(text);
        t.push_str(&clean.replace(['\n', '\r'], " "));
    }
    true
}
