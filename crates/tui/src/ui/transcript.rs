//! The conversation as rows: [`TranscriptView`] owns the rendering of every cell (keyed by
//! the cell's [`CellId`]), the model (`App::entries`) holds only domain data.
//!
//! Each frame, [`prepare`] refreshes the cells that are visible, starting from the bottom (so a
//! frame costs the same with 10 or 10,000 messages), keeps the view still when the user has
//! scrolled up and the last cell grows, picks the visible rows, and drops the rows of cells
//! (and of pieces of a long answer) far from the viewport: memory follows the text held, not
//! what was drawn. [`TranscriptView`] then renders from `&self` ([`Renderable`]).
//!
//! Adding a cell kind: add its variant to `Entry` with a `CellId`, a struct that renders it
//! implementing [`CellView`] (refresh from the entry at a width, say its height, copy rows,
//! evict what it can lay out again), and a line in [`CellCache::new`] and [`CellCache::view`].
//! Nothing else here changes. A part of an existing cell (the reasoning of a thinking model)
//! is instead a segment of that cell's view: [`TurnCell`] lays out the answer's reasoning
//! between its header and its markdown, keyed by what it shows (`reasoning_layout.rs`).

use std::collections::HashMap;
use std::ops::Range;
use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::markdown::{MarkdownLayout, Theme};
use super::reasoning_layout::ReasoningLayout;
use super::renderable::Renderable;
use super::wrap::{wrap, wrap_hanging};
use super::{special, style, tool_pane};
use crate::app::state::{App, AssistantTurn, CellId, Entry, TurnState};
use crate::app::transcript::Transcript;
use kimi_protocol::sanitize;

/// Screens of rows kept laid out above and below the viewport (scrolling a page is free).
const MARGIN_SCREENS: usize = 2;

/// What a cell's rendering needs besides the cell.
pub(crate) struct Ctx<'a> {
    pub(crate) width: u16,
    pub(crate) theme: &'a Theme,
    /// The selected tool pane of this cell, if any.
    pub(crate) selected: Option<usize>,
    pub(crate) now: Instant,
    /// Finished reasoning cells are shown open (the reasoning key, F2).
    pub(crate) reasoning_open: bool,
    /// Tool panes show their whole results (rows written to the inline screen's scrollback,
    /// where `Ctrl-O` cannot expand them).
    pub(crate) whole_results: bool,
}

/// The rendering of one kind of transcript cell: owned by the view, never by the model.
pub(crate) trait CellView {
    /// Bring the rows up to date with `entry` (the cell it was made for) at `ctx.width`.
    fn refresh(&mut self, entry: &Entry, ctx: &Ctx<'_>);
    /// Rows in all, as of the last refresh.
    fn height(&self) -> usize;
    /// Lay out again the rows of `range` that were evicted.
    fn materialize(&mut self, entry: &Entry, range: Range<usize>);
    /// Append rows `range` to `out`.
    fn rows_into(&self, range: Range<usize>, out: &mut Vec<Line<'static>>);
    /// Drop the rows outside `keep` that can be laid out again (heights stay known).
    fn retain(&mut self, keep: Range<usize>);
}

/// Rows of a cell whose text never changes (a user message, a notice).
#[derive(Debug, Default)]
pub(crate) struct StaticCell {
    /// The width `rows` was counted at (0: never laid out).
    width: u16,
    rows: usize,
    lines: Option<Vec<Line<'static>>>,
}

impl StaticCell {
    pub(crate) fn layout(entry: &Entry, width: u16) -> Vec<Line<'static>> {
        match entry {
            Entry::User { text, .. } => {
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
                lines
            }
            Entry::Notice {
                text,
                error,
                repeats,
                ..
            } => {
                let s = if *error { style::error() } else { style::dim() };
                let text = sanitize::for_terminal(text);
                let text = match repeats {
                    0 | 1 => text,
                    n => format!("{text} ×{n}").into(),
                };
                let mut lines =
                    wrap_hanging(&text, width, Span::styled("• ", s), Span::raw("  "), s);
                lines.push(Line::default());
                lines
            }
            Entry::Assistant(_) => Vec::new(),
        }
    }
}

impl CellView for StaticCell {
    fn refresh(&mut self, entry: &Entry, ctx: &Ctx<'_>) {
        // Evicted rows keep their count; they are laid out again only when shown.
        if self.width != ctx.width {
            let lines = Self::layout(entry, ctx.width);
            self.width = ctx.width;
            self.rows = lines.len();
            self.lines = Some(lines);
        }
    }

    fn height(&self) -> usize {
        self.rows
    }

    fn materialize(&mut self, entry: &Entry, _range: Range<usize>) {
        if self.lines.is_none() {
            self.lines = Some(Self::layout(entry, self.width));
        }
    }

    fn rows_into(&self, range: Range<usize>, out: &mut Vec<Line<'static>>) {
        if let Some(lines) = &self.lines {
            let end = range.end.min(lines.len());
            out.extend_from_slice(&lines[range.start.min(end)..end]);
        }
    }

    fn retain(&mut self, keep: Range<usize>) {
        if keep.is_empty() || keep.start >= self.rows {
            self.lines = None;
        }
    }
}

/// Rows of an assistant turn: a header, the reasoning cell (thinking models), the answer's
/// markdown, then panes, warnings and the error. The markdown's layout keeps no copy of the
/// text (the turn holds it).
#[derive(Debug, Default)]
pub(crate) struct TurnCell {
    width: u16,
    /// The turn's `rev` that `header` and `extra` show.
    rev: u64,
    text_gen: u64,
    header: Vec<Line<'static>>,
    reasoning: ReasoningLayout,
    markdown: MarkdownLayout,
    extra: Vec<Line<'static>>,
    /// Rows of each tool pane within `extra` (for revealing the selected pane).
    panes: Vec<Range<usize>>,
}

impl TurnCell {
    /// The turn's header; `state`: with what the turn is doing (the inline screen writes a
    /// streaming turn's header into the scrollback without it, once).
    pub(crate) fn header(t: &AssistantTurn, state: bool) -> Vec<Line<'static>> {
        let mut spans = vec![Span::styled("◆ Kimi", style::assistant_header())];
        if t.edited {
            spans.push(Span::styled("  edited", style::dim()));
        }
        if !state {
            return vec![Line::from(spans)];
        }
        match &t.state {
            TurnState::Streaming => spans.push(Span::styled("  streaming…", style::dim())),
            TurnState::Cancelled => spans.push(Span::styled("  cancelled", style::warning())),
            TurnState::Failed(_) if t.attempts > 1 => spans.push(Span::styled(
                format!("  failed after {} attempts", t.attempts),
                style::error(),
            )),
            TurnState::Failed(_) => spans.push(Span::styled("  failed", style::error())),
            TurnState::Interrupted => spans.push(Span::styled("  interrupted", style::warning())),
            TurnState::Done => {}
        }
        vec![Line::from(spans)]
    }

    /// Lines after the markdown: panes, warnings, the error; and the rows of each pane.
    pub(crate) fn extra(
        t: &AssistantTurn,
        ctx: &Ctx<'_>,
    ) -> (Vec<Line<'static>>, Vec<Range<usize>>) {
        let width = ctx.width;
        let mut lines = Vec::new();
        let mut panes = Vec::with_capacity(t.panes.len());
        for (k, pane) in t.panes.iter().enumerate() {
            let start = lines.len();
            lines.extend(tool_pane::lines(
                pane,
                width,
                ctx.selected == Some(k),
                ctx.whole_results,
                ctx.now,
            ));
            panes.push(start..lines.len());
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
        (lines, panes)
    }

    /// Rows above the markdown: the header and the reasoning cell.
    fn above_markdown(&self) -> usize {
        self.header.len() + self.reasoning.height()
    }

    /// The turn's rows `range`, as a range of the rows of a part that starts at `base`.
    fn part_range(range: &Range<usize>, base: usize) -> Range<usize> {
        range.start.saturating_sub(base)..range.end.saturating_sub(base)
    }

    /// The markdown rows `range` of the turn's rows, as a range of the markdown's rows.
    fn markdown_range(&self, range: &Range<usize>) -> Range<usize> {
        Self::part_range(range, self.above_markdown())
    }

    /// Rows of pane `pane` within the turn's rows.
    fn pane_rows(&self, pane: usize) -> Option<Range<usize>> {
        let base = self.above_markdown() + self.markdown.height();
        let r = self.panes.get(pane)?;
        Some(base + r.start..base + r.end)
    }
}

impl CellView for TurnCell {
    fn refresh(&mut self, entry: &Entry, ctx: &Ctx<'_>) {
        let Entry::Assistant(t) = entry else {
            return;
        };
        if self.width != ctx.width || self.rev != t.rev || self.header.is_empty() {
            self.header = Self::header(t, true);
            (self.extra, self.panes) = Self::extra(t, ctx);
            self.width = ctx.width;
            self.rev = t.rev;
        }
        self.reasoning
            .refresh(&t.reasoning, ctx.reasoning_open, ctx.width, ctx.now);
        if self.text_gen != t.text_gen() {
            self.markdown.reset();
            self.text_gen = t.text_gen();
        }
        // Lays out only what changed: the tail, or everything after a width change.
        self.markdown.refresh(t.text(), ctx.width, ctx.theme);
    }

    fn height(&self) -> usize {
        self.above_markdown() + self.markdown.height() + self.extra.len()
    }

    fn materialize(&mut self, entry: &Entry, range: Range<usize>) {
        if let Entry::Assistant(t) = entry {
            let r = Self::part_range(&range, self.header.len());
            self.reasoning.materialize(&t.reasoning, r);
            let r = self.markdown_range(&range);
            self.markdown.materialize(t.text(), r);
        }
    }

    fn rows_into(&self, range: Range<usize>, out: &mut Vec<Line<'static>>) {
        let h = self.header.len();
        let a = self.above_markdown();
        let m = self.markdown.height();
        let seg = |lines: &[Line<'static>], base: usize, out: &mut Vec<Line<'static>>| {
            let lo = range.start.max(base);
            let hi = range.end.min(base + lines.len());
            if lo < hi {
                out.extend_from_slice(&lines[lo - base..hi - base]);
            }
        };
        seg(&self.header, 0, out);
        self.reasoning.rows_into(Self::part_range(&range, h), out);
        let r = self.markdown_range(&range);
        self.markdown.rows_into(r.start..r.end.min(m), out);
        seg(&self.extra, a + m, out);
    }

    fn retain(&mut self, keep: Range<usize>) {
        self.reasoning
            .retain(Self::part_range(&keep, self.header.len()));
        let r = self.markdown_range(&keep);
        self.markdown.retain(r);
    }
}

/// One cell's rendering, of the kind that matches its entry.
#[derive(Debug)]
pub(crate) enum CellCache {
    Static(StaticCell),
    Turn(Box<TurnCell>),
}

impl CellCache {
    fn new(entry: &Entry) -> Self {
        match entry {
            Entry::User { .. } | Entry::Notice { .. } => CellCache::Static(StaticCell::default()),
            Entry::Assistant(_) => CellCache::Turn(Box::default()),
        }
    }

    fn view(&mut self) -> &mut dyn CellView {
        match self {
            CellCache::Static(c) => c,
            CellCache::Turn(c) => c.as_mut(),
        }
    }

    fn view_ref(&self) -> &dyn CellView {
        match self {
            CellCache::Static(c) => c,
            CellCache::Turn(c) => c.as_ref(),
        }
    }
}

/// The transcript's rendering: the cells' rows near the viewport, and the rows of the next
/// frame (chosen by [`prepare`]).
#[derive(Debug, Default)]
pub(crate) struct TranscriptView {
    cells: HashMap<CellId, CellCache>,
    /// Cells that held rows after the last frame (the others hold only their height).
    live: Vec<CellId>,
    /// The rows the next frame shows, top to bottom, and the width they were laid out for.
    window: Vec<Line<'static>>,
    width: u16,
    /// Rows of the whole transcript at `width` (for `desired_height`).
    total: usize,
}

impl TranscriptView {
    /// Bring `entry`'s rendering up to date (made on first sight); its height.
    fn refresh(&mut self, entry: &Entry, ctx: &Ctx<'_>) -> usize {
        let cell = self
            .cells
            .entry(entry.id())
            .or_insert_with(|| CellCache::new(entry));
        cell.view().refresh(entry, ctx);
        cell.view_ref().height()
    }

    /// Every row of `entry` as the transcript lays it out (kept in this view's cache).
    pub(crate) fn rows_of(&mut self, entry: &Entry, ctx: &Ctx<'_>) -> Vec<Line<'static>> {
        let h = self.refresh(entry, ctx);
        let mut rows = Vec::with_capacity(h);
        if let Some(cell) = self.cells.get_mut(&entry.id()) {
            cell.view().materialize(entry, 0..h);
            cell.view_ref().rows_into(0..h, &mut rows);
        }
        rows
    }

    fn height_of(&self, entry: &Entry) -> usize {
        self.cells
            .get(&entry.id())
            .map_or(0, |c| c.view_ref().height())
    }

    /// Rows of cell text laid out and held now, across all cells (for tests of eviction).
    #[cfg(test)]
    pub(crate) fn held_rows(&self) -> usize {
        let mut n = 0;
        for c in self.cells.values() {
            n += match c {
                CellCache::Static(s) => s.lines.as_ref().map_or(0, Vec::len),
                CellCache::Turn(t) => {
                    t.header.len()
                        + t.reasoning.live_rows()
                        + t.markdown.live_rows()
                        + t.extra.len()
                }
            };
        }
        n
    }
}

impl Renderable for TranscriptView {
    fn render(&self, area: Rect, buf: &mut Buffer) {
        self.window.render(area, buf);
    }

    fn desired_height(&self, width: u16) -> u16 {
        let rows = if width == self.width {
            self.total
        } else {
            self.window.len()
        };
        u16::try_from(rows).unwrap_or(u16::MAX)
    }
}

/// Bring the view up to date for a transcript area of `width` x `height_rows`: refresh the
/// visible cells, keep the view still when the user has scrolled up and the last cell grows,
/// clamp the scroll position, pick the rows to draw, and evict what is far from them.
pub(crate) fn prepare(app: &mut App, width: u16, height_rows: u16, theme: &Theme) {
    // The instant of the last event, not the clock: a frame shows the state at that time.
    let now = app.now;
    let rows = height_rows as usize;
    app.transcript.page_height = rows;
    let Transcript {
        entries,
        view,
        selected_pane,
        last_seen,
        scroll_from_bottom,
        reasoning_open,
        reveal_selected: reveal,
        ..
    } = &mut app.transcript;
    let count = entries.len();
    // While scrolled up, what grows below the view (the last cell, new cells) moves the
    // anchor by as much, so the text being read stays put.
    let (seen_count, seen_width) = *last_seen;
    let tail_from = seen_count.saturating_sub(1).min(count);
    let before: usize = entries[tail_from..].iter().map(|e| view.height_of(e)).sum();
    let mut covered = 0usize;
    let mut i = count;
    while i > 0 {
        i -= 1;
        let entry = &entries[i];
        let ctx = Ctx {
            width,
            theme,
            selected: selected_pane.and_then(|(e, p)| (e == i).then_some(p)),
            now,
            reasoning_open: *reasoning_open,
            whole_results: false,
        };
        covered += view.refresh(entry, &ctx);
        if covered >= scroll_from_bottom.saturating_add(rows) && i + 1 < count {
            break;
        }
    }
    let after: usize = entries[tail_from..].iter().map(|e| view.height_of(e)).sum();
    if *scroll_from_bottom > 0 && seen_width == width && seen_count <= count && after > before {
        *scroll_from_bottom += after - before;
    }
    *last_seen = (count, width);
    if std::mem::take(reveal)
        && let Some(sel) = *selected_pane
    {
        let ctx = Ctx {
            width,
            theme,
            selected: None,
            now,
            reasoning_open: *reasoning_open,
            whole_results: false,
        };
        reveal_selected(view, entries, sel, &ctx, rows, scroll_from_bottom);
    }
    if i == 0 {
        let total: usize = entries.iter().map(|e| view.height_of(e)).sum();
        *scroll_from_bottom = (*scroll_from_bottom).min(total.saturating_sub(rows));
        view.total = total;
    }
    view.width = width;
    pick_window(view, entries, *scroll_from_bottom, rows);
    if count == 0 {
        let w = welcome(app, width);
        app.transcript.view.window = w;
    }
}

/// Scroll so the selected tool pane `(entry, pane)` is on screen (Tab chose it): its top at
/// the top of the view when it is above, its bottom at the bottom when it is below.
fn reveal_selected(
    view: &mut TranscriptView,
    entries: &[Entry],
    (e, p): (usize, usize),
    ctx: &Ctx<'_>,
    rows: usize,
    scroll_from_bottom: &mut usize,
) {
    if e >= entries.len() {
        return;
    }
    // The cells from the pane's down are laid out (once; the view keeps their heights).
    let mut below = 0usize;
    for entry in &entries[e + 1..] {
        below += view.refresh(entry, ctx);
    }
    let ctx = Ctx {
        selected: Some(p),
        ..*ctx
    };
    let h = view.refresh(&entries[e], &ctx);
    let Some(CellCache::Turn(cell)) = view.cells.get(&entries[e].id()) else {
        return;
    };
    let Some(pane) = cell.pane_rows(p) else {
        return;
    };
    // Rows from the bottom of the transcript up to (and including) the pane's first row, and
    // up to just below its last.
    let top = h.saturating_sub(pane.start) + below;
    let bottom = h.saturating_sub(pane.end) + below;
    let shown = *scroll_from_bottom..*scroll_from_bottom + rows;
    if !shown.contains(&(top.saturating_sub(1))) || !shown.contains(&bottom) {
        *scroll_from_bottom = bottom.max(top.saturating_sub(rows));
    }
}

/// Choose the rows in view (`skip` rows up from the bottom), lay out again what was evicted
/// among them, and evict the rows of cells far from them.
fn pick_window(view: &mut TranscriptView, entries: &[Entry], skip: usize, rows: usize) {
    let margin = rows.saturating_mul(MARGIN_SCREENS);
    // Rows of the whole transcript counted from the bottom: view [skip, skip + rows), keep
    // [skip - margin, skip + rows + margin).
    let keep_lo = skip.saturating_sub(margin);
    let keep_hi = skip + rows + margin;
    let mut chunks: Vec<Vec<Line<'static>>> = Vec::new();
    let mut kept: Vec<CellId> = Vec::new();
    let mut below = 0usize;
    for entry in entries.iter().rev() {
        if below >= keep_hi {
            break;
        }
        let id = entry.id();
        let Some(cell) = view.cells.get_mut(&id) else {
            continue;
        };
        let h = cell.view_ref().height();
        // This cell's rows, top-down, are [h - (hi - below), h - (lo - below)) of the view.
        let local = |from_bottom_lo: usize, from_bottom_hi: usize| {
            let lo = h.saturating_sub(from_bottom_hi.saturating_sub(below));
            let hi = h.saturating_sub(from_bottom_lo.saturating_sub(below));
            lo..hi
        };
        let keep = local(keep_lo, keep_hi);
        let show = local(skip, skip + rows);
        if below + h > keep_lo {
            let c = cell.view();
            c.materialize(entry, show.clone());
            c.retain(keep);
            kept.push(id);
            if !show.is_empty() {
                let mut part = Vec::with_capacity(show.len());
                c.rows_into(show, &mut part);
                chunks.push(part);
            }
        }
        below += h;
    }
    // Cells that held rows last frame and are now far away give them up.
    for id in std::mem::take(&mut view.live) {
        if !kept.contains(&id)
            && let Some(c) = view.cells.get_mut(&id)
        {
            c.view().retain(0..0);
        }
    }
    view.live = kept;
    // Rendering of removed cells (/clear, /retry) is dropped once they pile up.
    if view.cells.len() > entries.len() + 64 {
        let ids: std::collections::HashSet<CellId> = entries.iter().map(Entry::id).collect();
        view.cells.retain(|id, _| ids.contains(id));
    }
    view.window.clear();
    for part in chunks.into_iter().rev() {
        view.window.extend(part);
    }
}

/// The empty transcript's greeting, wrapped to `width` columns (a narrow screen cuts none of it).
pub(crate) fn welcome(app: &App, width: u16) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(
        "kimi-tui",
        style::assistant_header(),
    ))];
    let about = format!(
        "{} · {} mode · {} configured",
        app.connection.model,
        app.connection.mode.as_str(),
        super::count::count(app.toolbox.specs().len() as u64, "tool")
    );
    out.extend(wrap(&about, width, Span::raw(""), style::dim()));
    out.push(Line::default());
    out.extend(wrap(
        "Type a message and press Enter. Try: What's the weather like in Paris?",
        width,
        Span::raw(""),
        Style::default(),
    ));
    out.extend(wrap(
        "F1 help · Ctrl-T inspector · /mode chat · Ctrl-C quit",
        width,
        Span::raw(""),
        style::dim(),
    ));
    out
}
