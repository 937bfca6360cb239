//! The status bar: where we are connected, what is happening, token usage, a key hint.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::state::App;
use crate::app::status_line::Activity;

pub(crate) fn activity_label(app: &App, now: Instant) -> String {
    match &app.status.activity {
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

pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    let line = Line::from(fit(segments(app, app.now), area.width));
    frame.render_widget(Paragraph::new(line), area);
}

/// A part of the bar and how much it matters: when the bar is too narrow the least important
/// parts go first (the key hints, then the token counts, ...), never the profile, the model,
/// what is happening or the context gauge.
struct Segment {
    keep: u8,
    span: Span<'static>,
}

/// The bar's parts, left to right.
fn segments(app: &App, now: Instant) -> Vec<Segment> {
    let c = &app.connection;
    let bar = Style::default().fg(Color::Black).bg(Color::Cyan);
    // A retry's countdown is what is happening while the agent waits.
    let state = match &app.status.retry_wait {
        Some(w) => w.status_text(now),
        None => activity_label(app, now),
    };
    let usage = format!(
        "in {} · out {}",
        app.status.usage.prompt_tokens, app.status.usage.completion_tokens
    );
    let seg = |keep: u8, span: Span<'static>| Segment { keep, span };
    let mut out = vec![
        seg(9, Span::styled(format!(" {} ", c.profile), bar)),
        seg(
            9,
            Span::styled(
                format!(" {} ", c.mode.as_str()),
                Style::default().fg(Color::Black).bg(Color::Magenta),
            ),
        ),
    ];
    // K2-Instruct is the default and says nothing; a thinking template is named.
    if app.template.thinks() {
        out.push(seg(
            6,
            Span::styled(template_label(app), Style::default().fg(Color::Magenta)),
        ));
    }
    out.extend([
        seg(10, Span::raw(format!(" {}", c.model))),
        seg(5, Span::raw(format!(" @ {}", c.host))),
        seg(10, Span::raw(" ")),
        seg(
            10,
            Span::styled(format!("│ {state} "), Style::default().fg(Color::Yellow)),
        ),
        seg(9, context_gauge(app)),
        seg(7, always_allowed(app)),
        seg(7, queued(app)),
        seg(7, mouse_span(app)),
        seg(
            3,
            Span::styled(format!("│ {usage} "), Style::default().fg(Color::DarkGray)),
        ),
        seg(4, mcp_span(app)),
    ]);
    // Hint by hint, so that those that fit stay (the first, F1 help, longest).
    for (i, hint) in hints(app.template.thinks()).into_iter().enumerate() {
        let text = if i == 0 {
            format!("│ {hint}")
        } else {
            format!(" · {hint}")
        };
        let keep = if i == 0 { 2 } else { 1 };
        out.push(seg(
            keep,
            Span::styled(text, Style::default().fg(Color::DarkGray)),
        ));
    }
    out
}

/// Drop the least important parts until the rest fits in `width` columns (what still does not
/// fit is cut at the edge).
fn fit(mut segments: Vec<Segment>, width: u16) -> Vec<Span<'static>> {
    let total = |s: &[Segment]| s.iter().map(|s| s.span.width()).sum::<usize>();
    while total(&segments) > usize::from(width) {
        let Some((i, _)) = segments
            .iter()
            .enumerate()
            .filter(|(_, s)| s.keep < 9 && s.span.width() > 0)
            .min_by_key(|(i, s)| (s.keep, usize::MAX - i))
        else {
            break;
        };
        segments.remove(i);
    }
    segments.into_iter().map(|s| s.span).collect()
}

/// `│ ctx 41% 53k/128k `: how full the context window is, in the warning style at 80% and
/// above (see `app::models_context`); nothing while nothing is known.
fn context_gauge(app: &App) -> Span<'static> {
    match crate::app::models_context::label(app) {
        None => Span::raw(""),
        Some((text, false)) => {
            Span::styled(format!("│ {text} "), Style::default().fg(Color::Green))
        }
        // The sign says it without colour too (NO_COLOR).
        Some((text, true)) => Span::styled(
            format!("│ ⚠ {text} "),
            Style::default()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(ratatui::style::Modifier::BOLD),
        ),
    }
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

/// `│ mouse ` while wheel scrolling is on: the terminal's own selection then needs
/// Shift, which the user must be able to see.
fn mouse_span(app: &App) -> Span<'static> {
    if !app.mouse {
        return Span::raw("");
    }
    Span::styled("│ mouse ", Style::default().fg(Color::Cyan))
}

/// Messages waiting for the turn to end.
fn queued(app: &App) -> Span<'static> {
    match app.composer.queued.len() {
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
fn hints(thinking_model: bool) -> Vec<String> {
    crate::app::keys::hints()
        .iter()
        .filter(|(key, _)| thinking_model || *key != crate::ui::reasoning::TOGGLE_KEY)
        .map(|(key, what)| format!("{key} {what}"))
        .collect()
}
