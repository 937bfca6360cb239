//! The conversation as lines. `prepare` (called by the event loop before drawing) refreshes
//! the cached lines of the blocks that are visible, starting from the bottom, so a frame costs
//! the same with 10 or 10,000 messages; `render` only reads those caches.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::markdown::Theme;
use super::wrap::{wrap, wrap_hanging};
use super::{reasoning, special, style, tool_pane};
use crate::app::state::{App, AssistantTurn, Entry, LineCache, TurnState};
use kimi_protocol::sanitize;

/// Lines of one block, in order, borrowed from its caches.
fn segments(entry: &Entry) -> [&[Line<'static>]; 3] {
    match entry {
        Entry::User { cache, .. } | Entry::Notice { cache, .. } => [&cache.lines, &[], &[]],
        Entry::Assistant(t) => [&t.header.lines, t.markdown.cached_lines(), &t.extra.lines],
    }
}

fn height(entry: &Entry) -> usize {
    segments(entry).iter().map(|s| s.len()).sum()
}

/// Bring the caches of every visible block up to date for `width`, keep the view still when
/// the user has scrolled up and the last block grows, and clamp the scroll position.
pub fn prepare(app: &mut App, width: u16, height_rows: u16, theme: &Theme) {
    let now = Instant::now();
    let rows = height_rows as usize;
    app.page_height = rows;
    let count = app.entries.len();
    let selected = app.selected_pane;
    // While scrolled up, what grows below the view (the last block, new blocks) moves the
    // anchor by as much, so the text being read stays put.
    let (seen_count, seen_width) = app.last_seen;
    let tail_from = seen_count.saturating_sub(1).min(count);
    let tail_height = |entries: &[Entry]| entries[tail_from..].iter().map(height).sum::<usize>();
    let before = tail_height(&app.entries);
    let mut covered = 0usize;
    let mut i = count;
    while i > 0 {
        i -= 1;
        let sel = selected.and_then(|(e, p)| (e == i).then_some(p));
        refresh(
            &mut app.entries[i],
            width,
            theme,
            sel,
            now,
            app.reasoning_open,
        );
        covered += height(&app.entries[i]);
        if covered >= app.scroll_from_bottom.saturating_add(rows) && i + 1 < count {
            break;
        }
    }
    let after = tail_height(&app.entries);
    if app.scroll_from_bottom > 0 && seen_width == width && seen_count <= count && after > before {
        app.scroll_from_bottom += after - before;
    }
    app.last_seen = (count, width);
    if std::mem::take(&mut app.reveal_selected) {
        reveal_selected(app, width, rows, theme, now);
    }
    if i == 0 {
        let total: usize = app.entries.iter().map(height).sum();
        app.scroll_from_bottom = app.scroll_from_bottom.min(total.saturating_sub(rows));
    }
}

/// Scroll so the selected tool pane is on screen (Tab chose it): its top at the top of the view
/// when it is above, its bottom at the bottom when it is below.
fn reveal_selected(app: &mut App, width: u16, rows: usize, theme: &Theme, now: Instant) {
    let Some((e, p)) = app.selected_pane else {
        return;
    };
    // The blocks from the pane's down are laid out (once; the caches keep them).
    for i in e..app.entries.len() {
        let sel = (i == e).then_some(p);
        let open = app.reasoning_open;
        refresh(&mut app.entries[i], width, theme, sel, now, open);
    }
    let Some(Entry::Assistant(t)) = app.entries.get(e) else {
        return;
    };
    let before_pane: usize = t.panes[..p.min(t.panes.len())]
        .iter()
        .map(|pane| tool_pane::lines(pane, width, false, now).len())
        .sum();
    let pane_len = t
        .panes
        .get(p)
        .map_or(0, |pane| tool_pane::lines(pane, width, true, now).len());
    let below: usize = app.entries[e + 1..].iter().map(height).sum();
    // Lines from the bottom of the transcript up to (and including) the pane's first line.
    let top = t.extra.lines.len() - before_pane.min(t.extra.lines.len()) + below;
    let bottom = top.saturating_sub(pane_len);
    let shown = app.scroll_from_bottom..app.scroll_from_bottom + rows;
    if !shown.contains(&(top.saturating_sub(1))) || !shown.contains(&bottom) {
        app.scroll_from_bottom = bottom.max(top.saturating_sub(rows));
    }
}

fn refresh(
    entry: &mut Entry,
    width: u16,
    theme: &Theme,
    selected: Option<usize>,
    now: Instant,
    reasoning_open: bool,
) {
    match entry {
        Entry::User { text, cache } => {
            if !cache.valid(width, 1) {
                let mut head = Line::from(Span::styled("▌ You", style::user_header()));
                head.spans.extend(special::note(text));
                let mut lines = vec![head];
                lines.extend(special::badge(wrap(
                    &sanitize::for_terminal(text),
                    width,
                    Span::styled("▌ ", style::user_header()),
                    Style::default(),
                )));
                lines.push(Line::default());
                set(cache, width, 1, lines);
            }
        }
        Entry::Notice { text, error, cache } => {
            if !cache.valid(width, 1) {
                let s = if *error { style::error() } else { style::dim() };
                let text = sanitize::for_terminal(text);
                let mut lines =
                    wrap_hanging(&text, width, Span::styled("• ", s), Span::raw("  "), s);
                lines.push(Line::default());
                set(cache, width, 1, lines);
            }
        }
        Entry::Assistant(t) => refresh_turn(t, width, theme, selected, now, reasoning_open),
    }
}

fn set(cache: &mut LineCache, width: u16, rev: u64, lines: Vec<Line<'static>>) {
    cache.width = width;
    cache.rev = rev;
    cache.lines = lines;
}

fn refresh_turn(
    t: &mut AssistantTurn,
    width: u16,
    theme: &Theme,
    selected: Option<usize>,
    now: Instant,
    reasoning_open: bool,
) {
    let rev = t.rev;
    if !t.header.valid(width, rev) {
        let mut spans = vec![Span::styled("◆ Kimi", style::assistant_header())];
        match &t.state {
            TurnState::Streaming => spans.push(Span::styled("  streaming…", style::dim())),
            TurnState::Cancelled => spans.push(Span::styled("  cancelled", style::warning())),
            TurnState::Failed(_) => spans.push(Span::styled("  failed", style::error())),
            TurnState::Interrupted => spans.push(Span::styled("  interrupted", style::warning())),
            TurnState::Done => {}
        }
        // The reasoning cell sits between the header and the answer.
        let mut lines = vec![Line::from(spans)];
        lines.extend(reasoning::lines(&t.reasoning, reasoning_open, width, now));
        set(&mut t.header, width, rev, lines);
    }
    // The markdown cache re-renders only its changed tail.
    t.markdown.lines(width, theme);
    if !t.extra.valid(width, rev) {
        let mut lines = Vec::new();
        for (k, pane) in t.panes.iter().enumerate() {
            lines.extend(tool_pane::lines(pane, width, selected == Some(k), now));
        }
        for w in &t.warnings {
            let mark = Span::styled("⚠ ", style::warning());
            lines.extend(wrap_hanging(
                w,
                width,
                mark,
                Span::raw("  "),
                style::warning(),
            ));
        }
        match &t.state {
            TurnState::Failed(e) => {
                let mark = Span::styled("✗ ", style::error());
                lines.extend(wrap_hanging(
                    e,
                    width,
                    mark,
                    Span::raw("  "),
                    style::error(),
                ));
                lines.push(Line::from(Span::styled(
                    "  /retry sends the message again",
                    style::dim(),
                )));
            }
            TurnState::Cancelled => {
                lines.push(Line::from(Span::styled(
                    "⊘ cancelled: the partial answer is kept",
                    style::warning(),
                )));
            }
            TurnState::Interrupted => {
                lines.extend(wrap_hanging(
                    "interrupted: kimi-tui stopped while this answer streamed; what had arrived \
                     is kept here and was not sent back to the model",
                    width,
                    Span::styled("⚠ ", style::warning()),
                    Span::raw("  "),
                    style::warning(),
                ));
            }
            _ => {}
        }
        lines.push(Line::default());
        set(&mut t.extra, width, rev, lines);
    }
}

/// Draw the visible window of the transcript (caches prepared for `area.width`).
pub fn render(frame: &mut Frame, area: Rect, app: &App) {
    let rows = area.height as usize;
    // Walk up from the bottom to the first visible line.
    let mut skip_from_bottom = app.scroll_from_bottom;
    let mut window: Vec<Line<'static>> = Vec::with_capacity(rows);
    for entry in app.entries.iter().rev() {
        let h = height(entry);
        if skip_from_bottom >= h {
            skip_from_bottom -= h;
            continue;
        }
        // Lines `from..take` of this entry are in view: only those are visited, so a frame
        // costs the same at the end of a 10,000-line answer as of a 10-line one.
        let take = h - skip_from_bottom;
        let need = rows - window.len();
        let from = take.saturating_sub(need);
        let mut picked: Vec<&Line<'static>> = Vec::with_capacity(take - from);
        let mut base = 0;
        for seg in segments(entry) {
            let (lo, hi) = (from.max(base), take.min(base + seg.len()));
            if lo < hi {
                picked.extend(&seg[lo - base..hi - base]);
            }
            base += seg.len();
        }
        for l in picked.into_iter().rev() {
            window.push(l.clone());
        }
        skip_from_bottom = 0;
        if window.len() >= rows {
            break;
        }
    }
    window.reverse();
    if app.entries.is_empty() {
        window = welcome(app);
    }
    frame.render_widget(Paragraph::new(window), area);
}

fn welcome(app: &App) -> Vec<Line<'static>> {
    vec![
        Line::from(Span::styled("kimi-tui", style::assistant_header())),
        Line::from(Span::styled(
            format!(
                "{} · {} mode · {} tools configured",
                app.connection.model,
                app.connection.mode.as_str(),
                app.toolbox.specs().len()
            ),
            style::dim(),
        )),
        Line::default(),
        Line::from("Type a message and press Enter. Try: What's the weather like in Paris?"),
        Line::from(Span::styled(
            "F1 help · Ctrl-T inspector · /mode chat · Ctrl-C quit",
            style::dim(),
        )),
    ]
}
