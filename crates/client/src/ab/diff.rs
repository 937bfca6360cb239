//! Two answers to one request set side by side: per field (finish reason, text, reasoning,
//! each call's name and arguments, usage) both values and whether they agree, and the prompt
//! diff when both prompts are known. Pure: the CLI prints [`Comparison::table`], the inspector
//! draws the rows itself.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Side;
use crate::answer::{Answer, CallRec};
use kimi_protocol::prompt_diff::{self, PromptDiff};
use kimi_protocol::sanitize;

/// One compared field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub field: String,
    /// Each side's value, terminal-safe and cut short.
    pub a: String,
    pub b: String,
    pub same: bool,
    /// What the difference is, when it is not plain from the values (where texts part).
    pub note: Option<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// `saved (raw, streamed)`.
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    /// The prompts compared, or why they were not.
    pub prompt: String,
    /// The prompts are known on both sides and differ.
    pub prompt_differs: bool,
}

/// How many characters of a value a row shows (then how many bytes more there are).
const SHOWN: usize = 40;
/// How many characters of a note (why the prompts were not compared) are shown.
const NOTE: usize = 400;

impl Comparison {
    /// Every compared field agrees (the prompts included, where both are known).
    pub fn agrees(&self) -> bool {
        self.rows.iter().all(|r| r.same) && !self.prompt_differs
    }

    pub fn differences(&self) -> usize {
        self.rows.iter().filter(|r| !r.same).count() + usize::from(self.prompt_differs)
    }

    /// A plain-text table: field, A, B, `=` or `≠`, then the notes and the prompt line.
    pub fn table(&self) -> String {
        let mut o = String::new();
        let w = self
            .rows
            .iter()
            .map(|r| r.a.chars().count())
            .chain([self.a.chars().count()])
            .max()
            .unwrap_or(0);
        let fw = self.rows.iter().map(|r| r.field.len()).max().unwrap_or(0);
        let _ = writeln!(o, "  {:fw$}   {:w$}   {}", "", self.a, self.b);
        for r in &self.rows {
            let mark = if r.same { '=' } else { '≠' };
            let _ = writeln!(o, "{mark} {:fw$}   {:w$}   {}", r.field, r.a, r.b);
            if let Some(note) = &r.note {
                let _ = writeln!(o, "  {:fw$}   {note}", "");
            }
        }
        let _ = writeln!(o, "prompt: {}", self.prompt);
        let verdict = match self.differences() {
            0 => "the two answers agree".to_owned(),
            1 => "1 difference".to_owned(),
            n => format!("{n} differences"),
        };
        let _ = writeln!(o, "{verdict}");
        o
    }

    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|r| json!({"field": r.field, "a": r.a, "b": r.b, "same": r.same, "note": r.note}))
            .collect();
        json!({
            "a": self.a,
            "b": self.b,
            "agree": self.agrees(),
            "rows": rows,
            "prompt": self.prompt,
            "prompt_differs": self.prompt_differs,
        })
    }
}

/// Compare side `a` with side `b`.
pub fn compare(a: &Side, b: &Side) -> Comparison {
    let (x, y) = (&a.answer, &b.answer);
    let mut rows = Vec::new();
    if x.error.is_some() || y.error.is_some() {
        rows.push(row(
            "error",
            x.error.as_deref().unwrap_or("-"),
            y.error.as_deref().unwrap_or("-"),
        ));
    }
    rows.push(finish_row(a, b));
    rows.push(text_row("text", &x.content(), &y.content()));
    rows.push(text_row("reasoning", &reasoning(x), &reasoning(y)));
    rows.push(row("calls", &call_names(&x.calls), &call_names(&y.calls)));
    for i in 0..x.calls.len().max(y.calls.len()) {
        rows.push(call_row(i, x.calls.get(i), y.calls.get(i)));
    }
    rows.push(row(
        "parser warnings",
        &x.warnings.len().to_string(),
        &y.warnings.len().to_string(),
    ));
    // Another answer costs other tokens: a completion-token difference counts only when the
    // outputs are the same.
    let output_differs = rows.iter().any(|r| !r.same);
    if let (Some(u), Some(v)) = (x.usage, y.usage) {
        rows.push(row(
            "prompt tokens",
            &u.prompt_tokens.to_string(),
            &v.prompt_tokens.to_string(),
        ));
        let mut r = row(
            "completion tokens",
            &u.completion_tokens.to_string(),
            &v.completion_tokens.to_string(),
        );
        r.same = r.same || output_differs;
        rows.push(r);
    } else {
        let said = |u: Option<kimi_protocol::Usage>| {
            u.map_or("not reported".to_owned(), |u| {
                format!("{} + {}", u.prompt_tokens, u.completion_tokens)
            })
        };
        let mut r = row("usage", &said(x.usage), &said(y.usage));
        r.same = true;
        r.note = Some("usage is compared only when both sides report it".into());
        rows.push(r);
    }
    let (prompt, prompt_differs) = prompts(a, b);
    Comparison {
        a: format!("{} ({})", a.label, a.how()),
        b: format!("{} ({})", b.label, b.how()),
        rows,
        prompt,
        prompt_differs,
    }
}

/// The finish reasons, compared as the client reads them: a raw completion ends with `stop`
/// at `<|im_end|>` whether or not it called, so its calls make it `tool_calls`.
fn finish_row(a: &Side, b: &Side) -> Row {
    let read = |s: &Side| -> (String, String) {
        let said = s.answer.finish_reason.as_deref().unwrap_or("-");
        if s.mode == kimi_protocol::Mode::Raw && said == "stop" && !s.answer.calls.is_empty() {
            (
                "tool_calls".into(),
                format!("tool_calls (the server's: {said})"),
            )
        } else {
            (said.to_owned(), said.to_owned())
        }
    };
    let ((x, shown_a), (y, shown_b)) = (read(a), read(b));
    let mut r = row("finish reason", &shown_a, &shown_b);
    r.same = x == y;
    r
}

fn reasoning(a: &Answer) -> String {
    a.reasoning.iter().map(|(_, t)| t.as_str()).collect()
}

fn call_names(calls: &[CallRec]) -> String {
    if calls.is_empty() {
        return "none".into();
    }
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    format!("{}: {}", calls.len(), names.join(", "))
}

fn call_row(i: usize, a: Option<&CallRec>, b: Option<&CallRec>) -> Row {
    let show =
        |c: Option<&CallRec>| c.map_or("-".to_owned(), |c| format!("{} {}", c.name, c.arguments));
    let mut r = row(&format!("call {}", i + 1), &show(a), &show(b));
    if let (Some(a), Some(b)) = (a, b) {
        r.same = a.name == b.name && a.same_arguments(b);
        if r.same && a.arguments != b.arguments {
            r.note = Some("the same arguments as JSON, written differently".into());
        } else if !r.same && serde_json::from_str::<Value>(&b.arguments).is_err() {
            r.note = Some("B's arguments are not JSON".into());
        } else if !r.same && serde_json::from_str::<Value>(&a.arguments).is_err() {
            r.note = Some("A's arguments are not JSON".into());
        }
    }
    r
}

fn row(field: &str, a: &str, b: &str) -> Row {
    Row {
        field: field.to_owned(),
        a: shown(a),
        b: shown(b),
        same: a == b,
        note: None,
    }
}

/// A text field: its size and start on each side, and where the two part.
fn text_row(field: &str, a: &str, b: &str) -> Row {
    let show = |t: &str| {
        if t.is_empty() {
            "(none)".to_owned()
        } else {
            format!("{} B «{}»", t.len(), t)
        }
    };
    let mut r = row(field, &show(a), &show(b));
    r.same = a == b;
    if !r.same && !a.is_empty() && !b.is_empty() {
        r.note = Some(part(a, b));
    }
    r
}

/// Where two texts first differ, with a little of each from there.
fn part(a: &str, b: &str) -> String {
    match prompt_diff::diff(a, b) {
        PromptDiff::Same => "the same".into(),
        PromptDiff::Append { added } => format!("B goes on for {added} more bytes"),
        PromptDiff::Changed(c) if c.new.is_empty() && c.offset == b.len() => {
            format!("A goes on for {} more bytes", a.len() - b.len())
        }
        PromptDiff::Changed(c) => format!(
            "from byte {}: A «{}», B «{}»",
            c.offset,
            shown(&c.old),
            shown(&c.new)
        ),
    }
}

/// Both prompts compared, or why not: (the line, whether they differ).
fn prompts(a: &Side, b: &Side) -> (String, bool) {
    match (&a.prompt, &b.prompt) {
        (Some(p), Some(q)) => match prompt_diff::diff(p, q) {
            PromptDiff::Same => (format!("the same {} bytes on both sides", p.len()), false),
            PromptDiff::Append { added } => {
                (format!("B's prompt is A's and {added} more bytes"), true)
            }
            PromptDiff::Changed(c) => (
                format!(
                    "they part at byte {} of {} (A) / {} (B): after «{}» A has «{}», B «{}»",
                    c.offset,
                    p.len(),
                    q.len(),
                    shown(&c.before),
                    shown(&c.old),
                    shown(&c.new)
                ),
                true,
            ),
        },
        _ => {
            // A note can hold a server's error text: one line, terminal-safe.
            let why = [&a.prompt_note, &b.prompt_note]
                .into_iter()
                .flatten()
                .next()
                .map_or_else(
                    || "not compared: the chat server's prompt is not known".into(),
                    |n| sanitize::one_line(n, NOTE),
                );
            (why, false)
        }
    }
}

/// One line, terminal-safe, at most [`SHOWN`] characters.
fn shown(text: &str) -> String {
    sanitize::one_line(text, SHOWN)
}
