//! The approval dialog: what will run, with which arguments, and the keys to decide.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::style;
use crate::app::state::{ApprovalDialog, DialogStage};
use crate::app::update::pretty_lines;
use crate::sanitize;

fn key(k: &'static str, what: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!(" {k} "), style::key()),
        Span::raw(format!(" {what}  ")),
    ]
}

/// The dialog's text (without the editors).
pub fn lines(d: &ApprovalDialog) -> Vec<Line<'static>> {
    let r = &d.request;
    let name = sanitize::for_terminal(&r.call.function.name).into_owned();
    let mut out = vec![
        Line::from(vec![
            Span::styled(
                format!("Run {name}?"),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("   {}", sanitize::for_terminal(&r.call.id)),
                style::dim(),
            ),
        ]),
        Line::from(vec![
            Span::styled("command: ", style::dim()),
            Span::raw(r.spec.command.join(" ")),
            Span::styled("   (arguments on stdin; no shell)", style::dim()),
        ]),
    ];
    if let Some(cwd) = &r.spec.cwd {
        out.push(Line::from(vec![
            Span::styled("in: ", style::dim()),
            Span::raw(cwd.display().to_string()),
        ]));
    }
    out.push(Line::from(Span::styled("arguments:", style::dim())));
    let bad = !r.problems.is_empty();
    for l in pretty_lines(&r.arguments) {
        let shown = sanitize::visible(&l).into_owned();
        out.push(Line::from(Span::styled(
            format!("  {shown}"),
            if bad {
                style::error()
            } else {
                Style::default()
            },
        )));
    }
    for p in &r.problems {
        out.push(Line::from(Span::styled(
            format!("✗ {}", sanitize::for_terminal(&p.to_string())),
            style::error(),
        )));
    }
    out.push(Line::default());
    let mut keys = Vec::new();
    if bad {
        keys.extend(key("e", "fix the arguments".into()));
    } else {
        keys.extend(key("y", "approve".into()));
        keys.extend(key("a", format!("always allow {name}")));
        keys.extend(key("e", "edit".into()));
    }
    keys.extend(key("n", "deny with reason".into()));
    keys.extend(key("Esc", "deny".into()));
    out.push(Line::from(keys));
    out
}

pub fn render(frame: &mut Frame, area: Rect, d: &ApprovalDialog) {
    let body = lines(d);
    let editor_rows: u16 = match &d.stage {
        DialogStage::Asking => 0,
        DialogStage::Reason(_) => 3,
        DialogStage::Editing { editor, problems } => {
            (editor.lines().len() as u16 + 2).clamp(5, 14) + problems.len() as u16 + 1
        }
    };
    let w = area.width.saturating_sub(4).clamp(20, 100);
    let h = (body.len() as u16 + 2 + editor_rows)
        .min(area.height.saturating_sub(2))
        .max(5);
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style::warning())
        .title(" Tool call needs approval ");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [top, bottom] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(editor_rows)]).areas(inner);
    frame.render_widget(Paragraph::new(body).wrap(Wrap { trim: false }), top);
    match &d.stage {
        DialogStage::Asking => {}
        DialogStage::Reason(t) => {
            let mut t = (**t).clone();
            t.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Reason for the model · Enter deny · Esc back "),
            );
            frame.render_widget(&t, bottom);
        }
        DialogStage::Editing { editor, problems } => {
            let [ed, probs] = Layout::vertical([
                Constraint::Min(3),
                Constraint::Length(problems.len() as u16 + 1),
            ])
            .areas(bottom);
            let mut e = (**editor).clone();
            e.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Edit arguments (JSON) · Ctrl-S validate & run · Esc back "),
            );
            frame.render_widget(&e, ed);
            let lines: Vec<Line> = problems
                .iter()
                .map(|p| Line::from(Span::styled(format!("✗ {p}"), style::error())))
                .collect();
            frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), probs);
        }
    }
}
