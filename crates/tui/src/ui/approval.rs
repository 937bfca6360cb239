//! The approval dialog: what will run, with which arguments, and the keys to decide. The
//! arguments scroll inside the dialog; [`layout`] is shared with `update`, which owns the scroll
//! position and records which rows each frame shows.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::approval_rows::ArgRows;
use super::style;
use super::tool_pane::display_arguments;
use super::wrap::wrap;
use crate::app::state::{ApprovalDialog, DialogStage};
use kimi_protocol::sanitize;

/// Tool names are shown up to this many characters.
const NAME_CHARS: usize = 64;
/// Problem texts (which quote names and values) are shown up to this many characters.
const PROBLEM_CHARS: usize = 300;

fn key(k: &'static str, what: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!(" {k} "), style::key()),
        Span::raw(format!(" {what}  ")),
    ]
}

/// The lines above the arguments: the call, the command, the working directory.
pub(crate) fn head_lines(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    let r = &d.request;
    let name = sanitize::one_line(&r.call.function.name, NAME_CHARS);
    let id = sanitize::display_id(&r.call.id);
    let mut out = wrap(
        &format!("Run {name}?   {id}"),
        width,
        Span::raw(""),
        Style::default().add_modifier(Modifier::BOLD),
    );
    // An MCP tool has no command: the server and its own name for the tool are what runs.
    let command = match &r.spec.mcp {
        Some(origin) => format!(
            "MCP server: {} · tool: {}   (a tools/call request to the server)",
            sanitize::one_line(&origin.server, NAME_CHARS),
            sanitize::one_line(&origin.tool, NAME_CHARS)
        ),
        None => format!(
            "command: {}   (arguments on stdin; no shell)",
            sanitize::one_line(&r.spec.command.join(" "), 200)
        ),
    };
    out.extend(wrap(&command, width, Span::raw(""), style::dim()));
    if let Some(cwd) = &r.spec.cwd {
        out.extend(wrap(
            &format!(
                "in: {}",
                sanitize::one_line(&cwd.display().to_string(), 200)
            ),
            width,
            Span::raw(""),
            style::dim(),
        ));
    }
    // Why the dialog asks: the rule (or the tool's approval) that decided, as the core said.
    if let Some(decided) = crate::app::rules_view::request_decision(&d.request) {
        let (text, st) = super::rule_line::decision_line(decided);
        out.extend(wrap(&format!("why: {text}"), width, Span::raw(""), st));
    }
    let label = if d.edited {
        "arguments (your edit):"
    } else {
        "arguments:"
    };
    out.push(Line::from(Span::styled(label, style::dim())));
    out
}

/// Every row of the arguments: pretty JSON when valid, hidden characters escaped, long blank
/// runs counted, wrapped to `width`.
pub(crate) fn argument_rows(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    let r = &d.request;
    let args_style = if r.problems.is_empty() {
        Style::default()
    } else {
        style::error()
    };
    let text = display_arguments(&r.arguments, true);
    sanitize::display_lines(&text)
        .iter()
        .flat_map(|l| wrap(l, width, Span::raw("  "), args_style))
        .collect()
}

fn problem_lines(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for p in &d.request.problems {
        let text = format!("✗ {}", sanitize::one_line(&p.to_string(), PROBLEM_CHARS));
        out.extend(wrap(&text, width, Span::raw(""), style::error()));
    }
    out
}

/// The key hints, laid out in as many rows of `width` columns as they need.
pub(crate) fn key_lines(d: &ApprovalDialog, width: u16) -> Vec<Line<'static>> {
    // The name is cut to the dialog's width, so the key's row is never cut at the edge.
    let room = usize::from(width).saturating_sub(" a   always allow   ".len());
    let name = super::width::ellipsize(
        &sanitize::one_line(&d.request.call.function.name, 40),
        room.max(8),
    );
    let mut keys = Vec::new();
    if d.request.problems.is_empty() {
        keys.push(key("y", "approve".into()));
        keys.push(key("a", format!("always allow {name}")));
        keys.push(key("r", "always allow calls like this".into()));
        keys.push(key("e", "edit".into()));
    } else {
        keys.push(key("e", "fix the arguments".into()));
    }
    keys.push(key("n", "deny with reason".into()));
    keys.push(key("Esc", "deny".into()));
    keys.push(key("Ctrl-T", "raw stream".into()));
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

/// Where everything goes on a screen of size `screen`, with the lines to draw.
pub(crate) struct DialogLayout<'a> {
    pub(crate) rect: Rect,
    pub(crate) head: Rect,
    pub(crate) head_lines: Vec<Line<'static>>,
    /// The arguments viewport; `arg_rows` holds every row, of which it shows `args.height`.
    pub(crate) args: Rect,
    pub(crate) arg_rows: std::borrow::Cow<'a, [Line<'static>]>,
    /// One row: position in the arguments and hints.
    pub(crate) status: Rect,
    pub(crate) problems: Rect,
    pub(crate) problem_lines: Vec<Line<'static>>,
    pub(crate) editor: Rect,
    pub(crate) keys: Rect,
    pub(crate) key_lines: Vec<Line<'static>>,
}

/// The dialog's width on a screen `screen_width` columns wide.
fn dialog_width(screen_width: u16) -> u16 {
    screen_width
        .saturating_sub(4)
        .clamp(20, 100)
        .min(screen_width)
}

/// The width the arguments are wrapped to on a screen `screen_width` columns wide.
pub(crate) fn text_width(screen_width: u16) -> u16 {
    dialog_width(screen_width).saturating_sub(2)
}

/// The dialog's layout on `screen`; `rows`: the argument rows laid out for it (built here when
/// they are not, as for a dialog never refreshed).
pub(crate) fn layout<'a>(
    d: &'a ApprovalDialog,
    rows: &'a ArgRows,
    screen: Rect,
) -> DialogLayout<'a> {
    let w = dialog_width(screen.width);
    let inner_w = text_width(screen.width);
    let head_lines = head_lines(d, inner_w);
    let arg_rows = match rows.get(d, inner_w) {
        Some(rows) => std::borrow::Cow::Borrowed(rows),
        None => std::borrow::Cow::Owned(argument_rows(d, inner_w)),
    };
    let problem_lines = problem_lines(d, inner_w);
    let key_lines = key_lines(d, inner_w);
    let editor_rows: u16 = match &d.stage {
        DialogStage::Asking => 0,
        DialogStage::Reason(_) => 3,
        DialogStage::Editing { editor, problems } => {
            editor_rows(editor.lines().len()) + row_count(problems.len()) + 1
        }
        // The scope row and the problems under the editor.
        DialogStage::Rule(form) => {
            editor_rows(form.editor.lines().len()) + row_count(form.problems.len()) + 2
        }
    };
    let n = |v: &[Line<'static>]| v.len().min(u16::MAX as usize) as u16;
    let want = n(&head_lines)
        .saturating_add(n(&arg_rows))
        .saturating_add(1 + n(&problem_lines) + n(&key_lines) + editor_rows + 2);
    // Arguments that do not fit take the whole screen, and scroll.
    let h = if want <= screen.height.saturating_sub(2) {
        want.max(5).min(screen.height)
    } else {
        screen.height
    };
    let rect = Rect {
        x: screen.x + (screen.width.saturating_sub(w)) / 2,
        y: screen.y + (screen.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    };
    let inner = Block::default().borders(Borders::ALL).inner(rect);
    // The keys, the editor and the status row keep their rows; the call's name keeps its own;
    // the arguments get the rest and scroll.
    let mut left = inner.height;
    let mut take = |want: u16, keep: u16| {
        let got = want.min(left.saturating_sub(keep));
        left -= got;
        got
    };
    let keys_h = take(n(&key_lines), 0);
    let editor_h = take(editor_rows, 0);
    let status_h = take(1, 0);
    let head_h = take(n(&head_lines), 1);
    let problems_h = take(n(&problem_lines), 1);
    let args_h = left;
    let mut y = inner.y;
    let mut row = |height: u16| {
        let r = Rect { y, height, ..inner };
        y += height;
        r
    };
    let head = row(head_h);
    let args = row(args_h);
    let status = row(status_h);
    let problems = row(problems_h);
    let editor = row(editor_h);
    let keys = row(keys_h);
    DialogLayout {
        rect,
        head,
        head_lines,
        args,
        arg_rows,
        status,
        problems,
        problem_lines,
        editor,
        keys,
        key_lines,
    }
}

/// The status row: where the view is in the arguments, and the hint of the last refused key
/// (in place of the scroll keys, so it fits).
fn status_line(d: &ApprovalDialog, rows: usize, total: usize) -> Line<'static> {
    let mut spans = Vec::new();
    if total > rows {
        let first = d.scroll.min(total) + 1;
        let last = (d.scroll + rows).min(total);
        spans.push(Span::styled(
            format!("lines {first}-{last} of {total}"),
            style::accent(),
        ));
        if d.hint.is_none() {
            spans.push(Span::styled(" · ↑↓ j/k PgUp/PgDn Home/End", style::dim()));
            if !d.seen_all {
                spans.push(Span::styled(" · read it all to approve", style::dim()));
            }
        }
    }
    if let Some(h) = &d.hint {
        if !spans.is_empty() {
            spans.push(Span::raw(" · "));
        }
        spans.push(Span::styled(h.clone(), style::warning()));
    }
    Line::from(spans)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, d: &ApprovalDialog, rows: &ArgRows) {
    let l = layout(d, rows, area);
    frame.render_widget(Clear, l.rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style::warning())
        .title(" Tool call needs approval ");
    frame.render_widget(block, l.rect);
    frame.render_widget(Paragraph::new(l.head_lines), l.head);
    let rows = l.args.height as usize;
    let total = l.arg_rows.len();
    let from = d.scroll.min(total.saturating_sub(rows));
    let shown: Vec<Line<'static>> = l.arg_rows.iter().skip(from).take(rows).cloned().collect();
    frame.render_widget(Paragraph::new(shown), l.args);
    frame.render_widget(Paragraph::new(status_line(d, rows, total)), l.status);
    frame.render_widget(Paragraph::new(l.problem_lines), l.problems);
    frame.render_widget(Paragraph::new(l.key_lines), l.keys);
    match &d.stage {
        DialogStage::Asking => {}
        DialogStage::Reason(t) => {
            let mut t = (**t).clone();
            t.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Reason for the model · Enter deny · Esc back "),
            );
            frame.render_widget(&t, l.editor);
        }
        DialogStage::Editing { editor, problems } => {
            let [ed, probs] = Layout::vertical([
                Constraint::Min(3),
                Constraint::Length(problems.len() as u16 + 1),
            ])
            .areas(l.editor);
            let mut e = (**editor).clone();
            e.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" Edit arguments (JSON) · Ctrl-S validate & run · Esc back "),
            );
            frame.render_widget(&e, ed);
            render_problems(frame, probs, problems);
        }
        DialogStage::Rule(form) => render_rule_form(frame, l.editor, form),
    }
}

/// Rows for an editor of `lines` lines: its border, at least 5 and at most 14 (a paste of any
/// size cannot overflow the sum).
fn editor_rows(lines: usize) -> u16 {
    row_count(lines.saturating_add(2)).clamp(5, 14)
}

/// `n` rows, capped where a frame ends anyway.
fn row_count(n: usize) -> u16 {
    n.min(u16::MAX as usize / 4) as u16
}

/// The rule form: the TOML of the rule, where it goes, and why the last save did not add it.
fn render_rule_form(frame: &mut Frame, area: Rect, form: &crate::app::rule_form::RuleForm) {
    let [ed, scope, probs] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(form.problems.len() as u16 + 1),
    ])
    .areas(area);
    let mut e = (*form.editor).clone();
    e.set_block(
        Block::default()
            .borders(Borders::ALL)
            .title(" Rule for calls like this (TOML) · Ctrl-S save & run · Tab where · Esc back "),
    );
    frame.render_widget(&e, ed);
    let mut spans = vec![
        Span::styled("save to: ", style::dim()),
        Span::styled(
            crate::app::rule_form::scope_label(form.scope),
            style::accent(),
        ),
    ];
    if form.pending {
        spans.push(Span::styled("  · adding…", style::dim()));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), scope);
    render_problems(frame, probs, &form.problems);
}

/// Why a save was refused, one line each, escaped.
fn render_problems(frame: &mut Frame, area: Rect, problems: &[String]) {
    let lines: Vec<Line> = (problems.iter())
        .map(|p| {
            Line::from(Span::styled(
                format!("✗ {}", sanitize::one_line(p, PROBLEM_CHARS)),
                style::error(),
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}
