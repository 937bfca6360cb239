//! The approval dialog: what will run, with which arguments, and the keys to decide.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::style;
use super::wrap::wrap;
use crate::app::state::{ApprovalDialog, DialogStage};
use crate::app::update::pretty_lines;
use crate::sanitize;

fn key(k: &'static str, what: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!(" {k} "), style::key()),
        Span::raw(format!(" {what}  ")),
    ]
}

/// The dialog's text (without the editors and the keys), wrapped to `width` columns.
pub fn lines(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    let r = &d.request;
    let name = sanitize::for_terminal(&r.call.function.name).into_owned();
    let mut out = wrap(
        &format!("Run {name}?   {}", sanitize::for_terminal(&r.call.id)),
        width,
        Span::raw(""),
        Style::default().add_modifier(Modifier::BOLD),
    );
    let command = format!(
        "command: {}   (arguments on stdin; no shell)",
        r.spec.command.join(" ")
    );
    out.extend(wrap(&command, width, Span::raw(""), style::dim()));
    if let Some(cwd) = &r.spec.cwd {
        out.extend(wrap(
            &format!("in: {}", cwd.display()),
            width,
            Span::raw(""),
            style::dim(),
        ));
    }
    out.push(Line::from(Span::styled("arguments:", style::dim())));
    let args_style = if r.problems.is_empty() {
        Style::default()
    } else {
        style::error()
    };
    for l in pretty_lines(&r.arguments) {
        out.extend(wrap(
            &sanitize::visible(&l),
            width,
            Span::raw("  "),
            args_style,
        ));
    }
    for p in &r.problems {
        let text = format!("✗ {}", sanitize::for_terminal(&p.to_string()));
        out.extend(wrap(&text, width, Span::raw(""), style::error()));
    }
    out
}

/// The key hints, laid out in as many rows of `width` columns as they need.
pub fn key_lines(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    let name = sanitize::for_terminal(&d.request.call.function.name).into_owned();
    let mut keys = Vec::new();
    if d.request.problems.is_empty() {
        keys.push(key("y", "approve".into()));
        keys.push(key("a", format!("always allow {name}")));
        keys.push(key("e", "edit".into()));
    } else {
        keys.push(key("e", "fix the arguments".into()));
    }
    keys.push(key("n", "deny with reason".into()));
    keys.push(key("Esc", "deny".into()));
    // A blank row, then the keys.
    let mut out: Vec<Line<'static>> = vec![Line::default(), Line::default()];
    for k in keys {
        let w: usize = k.iter().map(Span::width).sum();
        if let Some(last) = out.last()
            && last.width() > 0
            && last.width() + w > width as usize
        {
            out.push(Line::default());
        }
        if let Some(last) = out.last_mut() {
            last.spans.extend(k);
        }
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, d: &ApprovalDialog) {
    let w = area.width.saturating_sub(4).clamp(20, 100);
    let inner_w = w.saturating_sub(2);
    let body = lines(d, inner_w);
    let keys = key_lines(d, inner_w);
    let editor_rows: u16 = match &d.stage {
        DialogStage::Asking => 0,
        DialogStage::Reason(_) => 3,
        DialogStage::Editing { editor, problems } => {
            (editor.lines().len() as u16 + 2).clamp(5, 14) + problems.len() as u16 + 1
        }
    };
    let want = body.len() as u16 + keys.len() as u16 + editor_rows + 2;
    let h = want.min(area.height.saturating_sub(2)).max(5);
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
    // The keys and the editor keep their rows; the call's text gives way when space is short.
    let keys_h = (keys.len() as u16).min(inner.height);
    let editor_h = editor_rows.min(inner.height - keys_h);
    let top_h = inner.height - keys_h - editor_h;
    let row = |y: u16, height: u16| Rect {
        y: inner.y + y,
        height,
        ..inner
    };
    let (top, editor_area, keys_area) = (
        row(0, top_h),
        row(top_h, editor_h),
        row(top_h + editor_h, keys_h),
    );
    frame.render_widget(Paragraph::new(body), top);
    frame.render_widget(Paragraph::new(keys), keys_area);
    match &d.stage {
        DialogStage::Asking => {}
        DialogStage::Reason(t) => {
            let mut t = (**t).clone();
            t.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Reason for the model · Enter deny · Esc back "),
            );
            frame.render_widget(&t, editor_area);
        }
        DialogStage::Editing { editor, problems } => {
            let [ed, probs] = Layout::vertical([
                Constraint::Min(3),
                Constraint::Length(problems.len() as u16 + 1),
            ])
            .areas(editor_area);
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
