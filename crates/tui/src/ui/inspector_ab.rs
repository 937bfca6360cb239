//! The inspector's A/B lines (`a`, `A`): the saved answer and the same request sent again,
//! field by field in two columns, `≠` where they part, then the prompts and the verdict. The
//! values were made terminal-safe and one line each by the comparison.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::style;
use crate::app::inspector_ab::{Ab, AbState};
use kimi_core::backend::ab::Comparison;

/// The lines for `state` (shown above the request they compare).
pub(crate) fn lines(ab: &Ab) -> Vec<Line<'static>> {
    let title = |t: String| Line::from(Span::styled(format!("── A/B: {t} "), style::accent()));
    let variant = ab.variant.as_str();
    match &ab.state {
        AbState::Sending => vec![
            title(format!("sending the request again ({variant})")),
            Line::from(Span::styled(
                "the saved answer is set beside the new one when it is in",
                style::dim(),
            )),
        ],
        AbState::Failed(why) => vec![
            title(format!("{variant} not compared")),
            Line::from(Span::styled(
                kimi_protocol::sanitize::one_line(why, 400),
                style::error(),
            )),
        ],
        AbState::Done(comparison) => table(comparison, title),
    }
}

fn table(c: &Comparison, title: impl Fn(String) -> Line<'static>) -> Vec<Line<'static>> {
    let mut out = vec![title(format!("{} vs {}", c.a, c.b))];
    let field = c.rows.iter().map(|r| r.field.len()).max().unwrap_or(0);
    let width = c
        .rows
        .iter()
        .map(|r| r.a.chars().count())
        .max()
        .unwrap_or(0);
    for r in &c.rows {
        let (mark, look) = if r.same {
            ("= ", style::dim())
        } else {
            ("≠ ", style::error().add_modifier(Modifier::BOLD))
        };
        out.push(Line::from(vec![
            Span::styled(mark, look),
            Span::styled(format!("{:field$}  ", r.field), look),
            Span::raw(format!("{:width$}  ", r.a)),
            Span::raw(r.b.clone()),
        ]));
        if let Some(note) = &r.note {
            out.push(Line::from(Span::styled(
                format!("  {:field$}  {note}", ""),
                style::dim(),
            )));
        }
    }
    let prompt = if c.prompt_differs {
        style::error()
    } else {
        style::dim()
    };
    out.push(Line::from(vec![
        Span::styled("prompt: ", style::dim()),
        // One line, terminal-safe: the comparison made it so.
        Span::styled(c.prompt.clone(), prompt),
    ]));
    out.push(match c.differences() {
        0 => Line::from(Span::styled("the two answers agree", style::ok())),
        n => Line::from(Span::styled(
            format!("{n} difference{}", if n == 1 { "" } else { "s" }),
            style::error().add_modifier(Modifier::BOLD),
        )),
    });
    out
}
