//! The inspector's token view: every token of the answer with its real boundaries,
//! shaded by probability, markers badged with the id the server produced (markers spread over
//! ordinary tokens flagged), and the selected token's id, probability and top alternatives in
//! a pane below. The lines come from [`TokenView`](super::inspector_tokens_view::TokenView),
//! laid out incrementally in `prepare`; drawing only reads them.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::inspector::Ids;
use super::inspector_tokens_view::{TokenView, UNLIKELY, UNSURE, shade, shown_text, split_style};
use super::style;
use crate::app::state::App;
use kimi_protocol::trace_tokens::probability;
use kimi_protocol::{Marker, Trace};

/// Alternatives listed in the pane (a server may send up to 20).
const SHOWN_ALTERNATIVES: usize = 6;
/// Rows of the selected token's pane: its border, two of facts, the alternatives, "more".
const DETAIL_ROWS: u16 = 4 + SHOWN_ALTERNATIVES as u16;
const HEAD_ROWS: u16 = 4;

/// How the selected token is drawn (reverse, bold and underlined without colour, where an
/// unlikely token is reverse only).
fn selected_style() -> Style {
    Style::default()
        .fg(Color::White)
        .bg(Color::Blue)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

/// The areas inside the inspector's frame: summary, tokens, the selected token, footer.
pub(crate) fn areas(area: Rect) -> [Rect; 4] {
    let inner = Block::default().borders(Borders::ALL).inner(area);
    Layout::vertical([
        Constraint::Length(HEAD_ROWS),
        Constraint::Min(1),
        Constraint::Length(DETAIL_ROWS),
        Constraint::Length(1),
    ])
    .areas(inner)
}

/// Bring the token view up to date for the trace in view and keep the selection on screen.
pub(crate) fn prepare(app: &mut App, area: Rect) {
    let Some(i) = app.inspected_index() else {
        app.layers.inspector.token_view.clear();
        return;
    };
    let [_, body, _, _] = areas(area);
    {
        let trace = app.traces[i].read();
        let family = Ids::of(&trace, app.template).template();
        app.layers.inspector.token_view.refresh(
            &trace.tokens,
            i,
            trace.started_unix_ms,
            body.width as usize,
            family,
        );
    }
    let view = &app.layers.inspector.token_view;
    let cur = &mut app.layers.inspector.tokens;
    cur.selected = cur.selected.min(view.len().saturating_sub(1));
    let rows = (body.height as usize).max(1);
    if let Some(p) = view.pos(cur.selected) {
        if p.line < cur.scroll {
            cur.scroll = p.line;
        } else if p.line >= cur.scroll + rows {
            cur.scroll = p.line + 1 - rows;
        }
    }
    cur.scroll = cur.scroll.min(view.lines().len().saturating_sub(1));
}

/// The summary: counts, the legend, and the warning about split markers.
pub(crate) fn head_lines(
    trace: &Trace,
    view: &TokenView,
    index: usize,
    total: usize,
) -> Vec<Line<'static>> {
    let tokens = &trace.tokens;
    let mut out = Vec::new();
    out.push(Line::from(vec![
        Span::styled(
            format!("Request {} of {total}", index + 1),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " · {} · {} unlikely · {}{}",
                super::count::count(tokens.len() as u64, "token"),
                view.unlikely(),
                super::count::count(view.markers().len() as u64, "marker"),
                if tokens.dropped > 0 {
                    format!(" · {} later tokens not kept", tokens.dropped)
                } else {
                    String::new()
                }
            ),
            style::dim(),
        ),
    ]));
    if tokens.is_empty() {
        out.push(Line::from(Span::styled(
            "No token data for this request: set logprobs = N in the profile or type /logprobs N (the server may not send them).",
            style::warning(),
        )));
        return out;
    }
    out.push(Line::from(vec![
        Span::styled("p < 25%", shade(Some(UNLIKELY.ln() - 0.1))),
        Span::raw(" "),
        Span::styled("p < 50%", shade(Some(UNSURE.ln() - 0.1))),
        Span::styled(" · │ token boundary · ", style::dim()),
        Span::styled("marker", style::badge()),
        Span::styled(" id as produced · ", style::dim()),
        Span::styled("split", split_style()),
        Span::styled(" marker made of ordinary tokens", style::dim()),
    ]));
    let split = view.split_markers();
    if split > 0 {
        out.push(Line::from(Span::styled(
            format!(
                "⚠ {split} marker(s) arrived as several ordinary tokens: the server does not treat them as special tokens, so its tool parser misses the calls. vLLM: skip_special_tokens=false, and a tokenizer with Kimi's special tokens (added_tokens)."
            ),
            style::warning(),
        )));
    }
    out
}

/// The selected token: its id, probability, where it arrived, and its alternatives.
pub(crate) fn detail_lines(trace: &Trace, view: &TokenView, i: usize) -> Vec<Line<'static>> {
    let tokens = &trace.tokens;
    let Some(t) = tokens.get(i) else {
        return Vec::new();
    };
    let mut facts = vec![
        Span::styled(
            format!("token #{i}"),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(
            " · id {}",
            t.id.map_or_else(|| "not sent".to_owned(), |id| id.to_string())
        )),
    ];
    // An id is named as the trace's family has it: 163587 is `<|open|>` for K3, `<|im_user|>`
    // for K2.
    if let Some(m) = t.id.and_then(|id| Marker::for_id(id, view.template())) {
        facts.push(Span::styled(format!(" {}", m.text()), style::badge()));
    }
    match t.logprob {
        Some(lp) => facts.push(Span::styled(
            format!(" · logprob {lp:.3} · p {:.2}%", probability(lp) * 100.0),
            shade(Some(lp)),
        )),
        None => facts.push(Span::raw(" · no logprob")),
    }
    let at = trace.chunks.get(t.chunk).map(|c| c.at_us);
    facts.push(Span::styled(
        match at {
            Some(us) => format!(" · chunk #{} at {:.1} ms", t.chunk, us as f64 / 1000.0),
            None => format!(" · chunk #{}", t.chunk),
        },
        style::dim(),
    ));
    let mut out = vec![Line::from(facts)];
    let marker = view.markers().iter().find(|m| m.first <= i && i <= m.last);
    let mut text_line = vec![
        Span::styled("text ", style::dim()),
        Span::styled(format!("⟨{}⟩", shown_text(t.text)), Style::default()),
    ];
    if let Some(m) = marker {
        let special = m
            .marker
            .token_id()
            .map_or_else(|| "no id".to_owned(), |id| id.to_string());
        text_line.push(Span::styled(
            if m.split {
                format!(
                    " ⚠ part of {} ({} tokens; the special token is {special})",
                    m.marker.text(),
                    m.last - m.first + 1
                )
            } else {
                format!(" marker {} (special token {special})", m.marker.text())
            },
            if m.split {
                style::warning()
            } else {
                style::dim()
            },
        ));
    }
    out.push(Line::from(text_line));
    let alts = tokens.alternatives(i);
    if alts.is_empty() {
        out.push(Line::from(Span::styled(
            "no alternatives (logprobs = 0, or the server sent none)",
            style::dim(),
        )));
    }
    for a in alts.iter().take(SHOWN_ALTERNATIVES) {
        let p = probability(a.logprob);
        let chosen = a.text == t.text && (a.id.is_none() || a.id == t.id)
            || (a.text.is_empty() && a.id.is_some() && a.id == t.id);
        let bar_len = (p * 10.0).round() as usize;
        let mut spans = vec![
            Span::raw(format!("{:>7.2}% ", p * 100.0)),
            Span::styled(
                format!("{:<10}", "█".repeat(bar_len)),
                if p < UNLIKELY {
                    style::dim()
                } else {
                    style::accent()
                },
            ),
            Span::styled(
                format!(
                    " {:>7} ",
                    a.id.map_or_else(|| "-".to_owned(), |id| id.to_string())
                ),
                style::dim(),
            ),
            // With `return_tokens_as_token_ids` alternatives come as ids only.
            match (a.text.is_empty(), chosen) {
                (false, _) => Span::raw(format!("⟨{}⟩", shown_text(&a.text))),
                (true, true) => Span::raw(format!("⟨{}⟩", shown_text(t.text))),
                (true, false) => match a.id.and_then(|id| Marker::for_id(id, view.template())) {
                    Some(m) => Span::raw(format!("⟨{}⟩", m.text())),
                    None => Span::styled("(sent as an id only)", style::dim()),
                },
            },
        ];
        if chosen {
            spans.push(Span::styled(" ◀ chosen", style::ok()));
        }
        out.push(Line::from(spans));
    }
    if alts.len() > SHOWN_ALTERNATIVES {
        out.push(Line::from(Span::styled(
            format!("… {} more", alts.len() - SHOWN_ALTERNATIVES),
            style::dim(),
        )));
    }
    out
}

pub(crate) fn render(frame: &mut Frame, area: Rect, app: &App) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(style::accent())
        .title(" Inspector · tokens · ←→↑↓ select · u next unlikely · t chunks · [ ] request · Esc close ");
    frame.render_widget(block, area);
    let [head, body, detail, foot] = areas(area);
    let Some((i, trace)) = app.inspected_trace() else {
        frame.render_widget(
            Paragraph::new("No request yet: send a message, then come back here."),
            head,
        );
        return;
    };
    let view = &app.layers.inspector.token_view;
    let total = app.traces.len();
    frame.render_widget(
        Paragraph::new(head_lines(&trace, view, i, total)).wrap(Wrap { trim: false }),
        head,
    );
    let cur = &app.layers.inspector.tokens;
    let selected = view.pos(cur.selected);
    let visible: Vec<Line<'static>> = view
        .lines()
        .iter()
        .enumerate()
        .skip(cur.scroll)
        .take(body.height as usize)
        .map(|(n, l)| match selected {
            Some(p) if p.line == n => {
                let mut l = l.clone();
                if let Some(s) = l.spans.get_mut(p.span) {
                    s.style = selected_style();
                }
                l
            }
            _ => l.clone(),
        })
        .collect();
    frame.render_widget(Paragraph::new(visible), body);
    frame.render_widget(
        Paragraph::new(detail_lines(&trace, view, cur.selected)).block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(style::dim()),
        ),
        detail,
    );
    let foot_text = match (&app.layers.inspector.message, view.len()) {
        (Some(m), _) => m.clone(),
        (None, 0) => String::new(),
        (None, n) => format!("token {}/{n}", cur.selected + 1),
    };
    frame.render_widget(Paragraph::new(Span::styled(foot_text, style::dim())), foot);
}
