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

/// How a part of the bar gives way when the bar is too narrow.
enum Shrink {
    /// It goes.
    Drop,
    /// It becomes this shorter form.
    To(Span<'static>),
    /// Its text after the leading space is cut with `…`, as far as the bar needs but never
    /// below this many columns.
    Ellipsis(usize),
}

/// A part of the bar and how it gives way: each step with its rank, the lowest rank first in
/// the whole bar. The key hints, the token counts, the MCP summary, the host and the template
/// go first; then the model's vendor prefix, the streaming rate and the gauge's figures; then
/// the mode, the model and the profile are shortened, then dropped. What is happening and the
/// context gauge (as `streaming`, `ctx 41%`) never go.
struct Segment {
    span: Span<'static>,
    steps: std::collections::VecDeque<(u8, Shrink)>,
}

impl Segment {
    fn new(span: Span<'static>, steps: Vec<(u8, Shrink)>) -> Self {
        Segment {
            span,
            steps: steps.into(),
        }
    }
}

/// The model's vendor prefix (`moonshotai/`) goes before the name is cut.
const RANK_VENDOR: u8 = 8;
const RANK_RATE: u8 = 9;
const RANK_GAUGE_FIGURES: u8 = 10;
const RANK_MODE: u8 = 11;
const RANK_MODEL_CUT: u8 = 12;
const RANK_PROFILE_CUT: u8 = 13;
const RANK_MODEL: u8 = 14;
const RANK_PROFILE: u8 = 15;
/// A name cut with `…` keeps at least this many columns.
const MIN_NAME_COLUMNS: usize = 6;

/// The bar's parts, left to right.
fn segments(app: &App, now: Instant) -> Vec<Segment> {
    let c = &app.connection;
    let bar = Style::default().fg(Color::Black).bg(Color::Cyan);
    // A retry's countdown is what is happening while the agent waits.
    let (state, short_state) = match &app.status.retry_wait {
        Some(w) => (w.status_text(now), None),
        None => (activity_label(app, now), short_activity(app)),
    };
    let usage = format!(
        "in {} · out {}",
        app.status.usage.prompt_tokens, app.status.usage.completion_tokens
    );
    let drop = |rank: u8, span: Span<'static>| Segment::new(span, vec![(rank, Shrink::Drop)]);
    let mut out = vec![
        Segment::new(
            Span::styled(format!(" {} ", c.profile), bar),
            vec![
                (RANK_PROFILE_CUT, Shrink::Ellipsis(MIN_NAME_COLUMNS)),
                (RANK_PROFILE, Shrink::Drop),
            ],
        ),
        drop(
            RANK_MODE,
            Span::styled(
                format!(" {} ", c.mode.as_str()),
                Style::default().fg(Color::Black).bg(Color::Magenta),
            ),
        ),
    ];
    // K2-Instruct is the default and says nothing; a thinking template is named.
    if app.template.thinks() {
        out.push(drop(
            6,
            Span::styled(template_label(app), Style::default().fg(Color::Magenta)),
        ));
    }
    let mut model_steps = Vec::new();
    if let Some((_, name)) = c.model.rsplit_once('/')
        && !name.is_empty()
    {
        model_steps.push((RANK_VENDOR, Shrink::To(Span::raw(format!(" {name}")))));
    }
    model_steps.push((RANK_MODEL_CUT, Shrink::Ellipsis(MIN_NAME_COLUMNS)));
    model_steps.push((RANK_MODEL, Shrink::Drop));
    let state_style = Style::default().fg(Color::Yellow);
    let state_steps = match short_state.filter(|s| *s != state) {
        Some(s) => vec![(
            RANK_RATE,
            Shrink::To(Span::styled(format!("│ {s} "), state_style)),
        )],
        None => Vec::new(),
    };
    out.extend([
        Segment::new(Span::raw(format!(" {}", c.model)), model_steps),
        drop(5, Span::raw(format!(" @ {}", c.host))),
        Segment::new(Span::raw(" "), Vec::new()),
        Segment::new(
            Span::styled(format!("│ {state} "), state_style),
            state_steps,
        ),
        context_gauge(app),
        drop(7, always_allowed(app)),
        drop(7, queued(app)),
        drop(7, mouse_span(app)),
        drop(
            3,
            Span::styled(format!("│ {usage} "), Style::default().fg(Color::DarkGray)),
        ),
        drop(4, mcp_span(app)),
    ]);
    // Hint by hint, so that those that fit stay (the first, F1 help, longest).
    for (i, hint) in hints(app.template.thinks()).into_iter().enumerate() {
        let text = if i == 0 {
            format!("│ {hint}")
        } else {
            format!(" · {hint}")
        };
        let rank = if i == 0 { 2 } else { 1 };
        out.push(drop(
            rank,
            Span::styled(text, Style::default().fg(Color::DarkGray)),
        ));
    }
    out
}

/// What is happening, without its figures (`streaming` for `streaming 40 tok/s`).
fn short_activity(app: &App) -> Option<String> {
    match &app.status.activity {
        Activity::Streaming { .. } => Some("streaming".into()),
        Activity::RunningTool { .. } => Some("running".into()),
        _ => None,
    }
}

/// Shrink the parts, lowest rank first (the rightmost of equal ranks first), until the bar
/// fits in `width` columns; what still does not fit is cut at the edge.
fn fit(mut segments: Vec<Segment>, width: u16) -> Vec<Span<'static>> {
    let width = usize::from(width);
    let total = |s: &[Segment]| s.iter().map(|s| s.span.width()).sum::<usize>();
    // Empty parts (nothing to show) take no step.
    segments.retain(|s| s.span.width() > 0);
    loop {
        let over = total(&segments).saturating_sub(width);
        if over == 0 {
            break;
        }
        let Some(i) = (segments.iter().enumerate())
            .filter_map(|(i, s)| s.steps.front().map(|(rank, _)| (i, *rank)))
            .min_by_key(|(i, rank)| (*rank, usize::MAX - i))
            .map(|(i, _)| i)
        else {
            break;
        };
        let seg = &mut segments[i];
        match seg.steps.pop_front().map(|(_, step)| step) {
            Some(Shrink::Drop) => {
                segments.remove(i);
            }
            Some(Shrink::To(span)) => seg.span = span,
            Some(Shrink::Ellipsis(min)) => {
                let text = seg.span.content.to_string();
                let (lead, rest) = text.split_at(usize::from(text.starts_with(' ')));
                let trail = if rest.ends_with(' ') { " " } else { "" };
                let name = rest.strip_suffix(' ').unwrap_or(rest);
                let cols = super::width::str_width(name).saturating_sub(over).max(min);
                let cut = super::width::ellipsize(name, cols);
                seg.span = Span::styled(format!("{lead}{cut}{trail}"), seg.span.style);
            }
            None => {}
        }
    }
    segments.into_iter().map(|s| s.span).collect()
}

/// `│ ctx 41% 53k/128k `: how full the context window is, in the warning style at 80% and
/// above (see `app::models_context`); nothing while nothing is known. On a narrow bar the
/// figures go and `ctx 41%` stays.
fn context_gauge(app: &App) -> Segment {
    let Some((text, warn)) = crate::app::models_context::label(app) else {
        return Segment::new(Span::raw(""), Vec::new());
    };
    let (mark, st) = if warn {
        // The sign says it without colour too (NO_COLOR).
        (
            "⚠ ",
            Style::default()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(ratatui::style::Modifier::BOLD),
        )
    } else {
        ("", Style::default().fg(Color::Green))
    };
    let words: Vec<&str> = text.split(' ').collect();
    let steps = match words.as_slice() {
        [ctx, pct, _, ..] if pct.ends_with('%') => vec![(
            RANK_GAUGE_FIGURES,
            Shrink::To(Span::styled(format!("│ {mark}{ctx} {pct} "), st)),
        )],
        _ => Vec::new(),
    };
    Segment::new(Span::styled(format!("│ {mark}{text} "), st), steps)
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
