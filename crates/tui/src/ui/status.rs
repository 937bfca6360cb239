//! The status bar: where we are connected, what is happening, token usage, a key hint.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::state::{Activity, App};

pub(crate) fn activity_label(app: &App, now: Instant) -> String {
    match &app.activity {
        Activity::Idle if app.busy => "working".into(),
        Activity::Idle => "idle".into(),
        Activity::Streaming { since, chunks } => {
            let secs = now.saturating_duration_since(*since).as_secs_f64();
            if secs > 0.2 {
                format!("streaming {:.0} tok/s", *chunks as f64 / secs)
            } else {
                "streaming".into()
            }
        }
        Activity::WaitingApproval => "waiting for approval".into(),
        Activity::RunningTool { name } => {
            format!("running {}", kimi_protocol::sanitize::one_line(name, 40))
        }
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let c = &app.connection;
    let bar = Style::default().fg(Color::Black).bg(Color::Cyan);
    let state = activity_label(app, Instant::now());
    let usage = format!(
        "in {} · out {}",
        app.usage.prompt_tokens, app.usage.completion_tokens
    );
    let mut spans = vec![
        Span::styled(format!(" {} ", c.profile), bar),
        Span::styled(
            format!(" {} ", c.mode.as_str()),
            Style::default().fg(Color::Black).bg(Color::Magenta),
        ),
    ];
    // K2-Instruct is the default and says nothing; a thinking template is named.
    if app.template.thinks() {
        spans.push(Span::styled(
            template_label(app),
            Style::default().fg(Color::Magenta),
        ));
    }
    spans.extend([
        Span::raw(format!(" {} @ {} ", c.model, c.host)),
        Span::styled(format!("│ {state} "), Style::default().fg(Color::Yellow)),
        always_allowed(app),
        queued(app),
        mouse_span(app),
        Span::styled(format!("│ {usage} "), Style::default().fg(Color::DarkGray)),
        mcp_span(app),
        Span::styled(
            format!("│ {}", hints(app.template.thinks())),
            Style::default().fg(Color::DarkGray),
        ),
    ]);
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line), area);
}

/// The tools approved with `a` for this session, visible so the choice is not forgotten
/// (`/tools revoke` takes it back).
fn always_allowed(app: &App) -> Span<'static> {
    if app.always_allow.is_empty() {
        return Span::raw("");
    }
    let names = app.always_allow.join(", ");
    Span::styled(
        format!(
            "│ always: {} ",
            kimi_protocol::sanitize::one_line(&names, 40)
        ),
        Style::default().fg(Color::Green),
    )
}

/// `│ mouse ` while wheel scrolling is on (issue 11): the terminal's own selection then needs
/// Shift, which the user must be able to see.
fn mouse_span(app: &App) -> Span<'static> {
    if !app.mouse {
        return Span::raw("");
    }
    Span::styled("│ mouse ", Style::default().fg(Color::Cyan))
}

/// Messages waiting for the turn to end.
fn queued(app: &App) -> Span<'static> {
    match app.queued.len() {
        0 => Span::raw(""),
        n => Span::styled(format!("│ {n} queued "), Style::default().fg(Color::Cyan)),
    }
}

/// `│ MCP 1/2 ✗ files `, red when a server failed; nothing without MCP servers.
fn mcp_span(app: &App) -> Span<'static> {
    match app.toolbox.mcp().and_then(|h| h.summary()) {
        None => Span::raw(""),
        Some((text, failed)) => Span::styled(
            format!("│ {text} "),
            Style::default().fg(if failed { Color::Red } else { Color::Green }),
        ),
    }
}

/// The family template in use, and `thinking off` when the user turned it off.
fn template_label(app: &App) -> String {
    let off = app.thinking == Some(false) && app.template.thinks();
    format!(
        " {}{} ",
        app.template.as_str(),
        if off { " · thinking off" } else { "" }
    )
}

/// The key table's hints: `F1 help · Ctrl-T inspector · F2 reasoning · Esc cancel`; the
/// reasoning key only for a thinking model, the only one with reasoning to show.
fn hints(thinking_model: bool) -> String {
    crate::app::keys::hints()
        .iter()
        .filter(|(key, _)| thinking_model || *key != crate::ui::reasoning::TOGGLE_KEY)
        .map(|(key, what)| format!("{key} {what}"))
        .collect::<Vec<_>>()
        .join(" · ")
}
