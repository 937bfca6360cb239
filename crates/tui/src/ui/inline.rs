//! The inline screen's rows: what is final goes into the terminal's own scrollback, written
//! once ([`prepare`] returns it); what still changes is drawn in a small viewport at the
//! bottom, above the composer and the status line ([`draw`]).
//!
//! A cell is final when nothing can change it any more: a user message; a notice once
//! anything follows it (the last one still counts its repeats); an assistant turn once the
//! next round started or the exchange is over (its calls' results arrive after their panes
//! say done; a resumed turn whose calls never ran is final too). A streaming turn is written
//! in parts as
//! they become final: its header at once, its reasoning when it folds, its answer a markdown
//! block at a time (the markdown layout's stable blocks: a paragraph once the next block
//! starts, a code block once its fence closes). Cells are written in order, so the first one
//! that is not final holds back those after it; they are drawn in the viewport meanwhile.
//! Rows are wrapped to the width of the moment they are written: the scrollback keeps them
//! as they were.

use std::collections::HashSet;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::markdown::{self, MarkdownLayout, Theme};
use super::reasoning_layout::ReasoningLayout;
use super::renderable::Renderable;
use super::transcript::{Ctx, StaticCell, TurnCell, welcome};
use super::{approval, no_color, status, theme};
use crate::app::layers::Layer;
use crate::app::state::{App, AssistantTurn, CellId, Entry};

/// What has been written to the scrollback, and the rows still changing.
#[derive(Debug, Default)]
pub(crate) struct InlineLog {
    written: HashSet<CellId>,
    /// Entries before this index are written (a hint, trusted while the entry before it is
    /// `last`: the conversation may have been cut or replaced since).
    from: usize,
    last: Option<CellId>,
    /// The turn being written in parts.
    part: Option<Partial>,
    /// The rows not final yet, top to bottom; the viewport shows the last ones that fit.
    pub(crate) live: Vec<Line<'static>>,
}

/// How far a streaming turn has been written.
#[derive(Debug)]
struct Partial {
    id: CellId,
    header: bool,
    /// Its reasoning was written (or it had none when the answer began).
    reasoning_done: bool,
    /// The live reasoning's rows.
    reasoning: ReasoningLayout,
    /// The answer's layout, and the generation of the text it holds.
    md: MarkdownLayout,
    text_gen: u64,
    /// The answer's bytes written, and its rows at `width`.
    bytes: usize,
    rows: usize,
    width: u16,
}

impl Partial {
    fn new(id: CellId) -> Self {
        Partial {
            id,
            header: false,
            reasoning_done: false,
            reasoning: ReasoningLayout::default(),
            md: MarkdownLayout::new(),
            text_gen: 0,
            bytes: 0,
            rows: 0,
            width: 0,
        }
    }
}

/// Bring the inline rows up to date at `width`, with at most `max` rows of any one cell kept
/// live (the viewport shows no more). Returns the rows that became final, in order, for the
/// scrollback; `app.transcript.inline.live` holds the rest. `flush`: everything is final (the
/// app is leaving, and what it showed must stay on the screen).
pub(crate) fn prepare(
    app: &mut App,
    width: u16,
    max: u16,
    theme: &Theme,
    flush: bool,
) -> Vec<Line<'static>> {
    crate::app::composer::fit_placeholder(&mut app.composer.input, width);
    let now = app.now;
    let max = max as usize;
    // The turn a running exchange (or a session being replayed) may still change.
    let current = (app.busy || app.replaying)
        .then_some(app.transcript.turn_entry)
        .flatten();
    let t = &mut app.transcript;
    let log = &mut t.inline;
    let mut out = Vec::new();
    let mut live = std::mem::take(&mut log.live);
    live.clear();
    let count = t.entries.len();
    let hint_holds =
        log.from <= count && (log.from == 0 || Some(t.entries[log.from - 1].id()) == log.last);
    let start = if hint_holds { log.from } else { 0 };
    let mut held = false;
    for (i, entry) in t.entries.iter().enumerate().skip(start) {
        let id = entry.id();
        let ctx = Ctx {
            width,
            theme,
            selected: t.selected_pane.and_then(|(e, p)| (e == i).then_some(p)),
            now,
            reasoning_open: t.reasoning_open,
            whole_results: false,
        };
        let done = if log.written.contains(&id) {
            true
        } else if held {
            // Waiting behind a cell not final yet: drawn whole, as the transcript lays it out.
            live.extend(t.view.rows_of(entry, &ctx));
            false
        } else {
            let done = match entry {
                Entry::User { .. } => {
                    out.extend(StaticCell::layout(entry, width));
                    true
                }
                Entry::Notice { .. } if flush || i + 1 < count => {
                    out.extend(StaticCell::layout(entry, width));
                    true
                }
                Entry::Notice { .. } => {
                    live.extend(StaticCell::layout(entry, width));
                    false
                }
                Entry::Assistant(turn) => {
                    let step = Step {
                        ctx: &ctx,
                        done: flush || current != Some(i),
                        max,
                    };
                    write_turn(&mut log.part, turn, &step, &mut out, &mut live)
                }
            };
            if done {
                log.written.insert(id);
            }
            done
        };
        if done && !held {
            log.from = i + 1;
            log.last = Some(id);
        }
        held |= !done;
    }
    log.live = live;
    if count == 0 && !flush {
        let w = welcome(app, width);
        app.transcript.inline.live = w;
    }
    out
}

/// What writing one turn needs besides the turn.
struct Step<'a> {
    ctx: &'a Ctx<'a>,
    /// Nothing will change the turn any more.
    done: bool,
    max: usize,
}

/// Write what became final of `turn` to `out`, the rest to `live`; true once it is all
/// written.
fn write_turn(
    part: &mut Option<Partial>,
    turn: &AssistantTurn,
    step: &Step<'_>,
    out: &mut Vec<Line<'static>>,
    live: &mut Vec<Line<'static>>,
) -> bool {
    let ctx = step.ctx;
    let done = step.done;
    let p = match part {
        Some(p) if p.id == turn.id => p,
        _ => part.insert(Partial::new(turn.id)),
    };
    if !p.header {
        // A streaming turn's state is on the status line; the header written stays as it is.
        out.extend(TurnCell::header(turn, done));
        p.header = true;
    }
    if p.text_gen != turn.text_gen() && !turn.reasoning.is_empty() {
        // The answer so far was reasoning after all (moved there when `</think>` came): the
        // reasoning is written when it folds, with it.
        p.reasoning_done = false;
    }
    if !p.reasoning_done {
        if turn.reasoning.live() && !done {
            p.reasoning
                .refresh(&turn.reasoning, true, ctx.width, ctx.now);
            let h = p.reasoning.height();
            let shown = h.saturating_sub(step.max)..h;
            p.reasoning.materialize(&turn.reasoning, shown.clone());
            p.reasoning.rows_into(shown, live);
            return false;
        }
        let began = done || !turn.text().is_empty() || !turn.panes.is_empty();
        if turn.reasoning.is_empty() && !began {
            // Nothing yet: reasoning may still come first.
            return false;
        }
        if !turn.reasoning.is_empty() {
            let mut folded = ReasoningLayout::default();
            folded.refresh(&turn.reasoning, ctx.reasoning_open, ctx.width, ctx.now);
            let h = folded.height();
            folded.materialize(&turn.reasoning, 0..h);
            let first = out.len();
            folded.rows_into(0..h, out);
            // In the scrollback the reasoning key can no longer open or fold it.
            if let Some(head) = out.get_mut(first) {
                super::reasoning::drop_toggle(head);
            }
        }
        p.reasoning = ReasoningLayout::default();
        p.reasoning_done = true;
    }
    let text = turn.text();
    if p.text_gen != turn.text_gen() {
        // The answer was replaced (its text moved into the reasoning): what was written
        // stays written, the new text is written from its start.
        p.md.reset();
        p.text_gen = turn.text_gen();
        p.bytes = 0;
        p.width = 0;
    }
    p.md.refresh(text, ctx.width, ctx.theme);
    if p.width != ctx.width {
        // Rows written at another width: go on from the same text in this width's layout,
        // whose rows before that text are those of the text alone (it ends at a block start,
        // and blocks lay out the same alone or together).
        p.rows = markdown::render(&text[..p.bytes], ctx.width, ctx.theme).len();
        p.width = ctx.width;
    }
    let h = p.md.height();
    let (stable, end) = if done { (h, text.len()) } else { p.md.stable() };
    if stable > p.rows {
        p.md.materialize(text, p.rows..stable);
        p.md.rows_into(p.rows..stable, out);
        p.rows = stable;
        p.bytes = end;
    }
    if done {
        let written = Ctx {
            whole_results: true,
            ..*ctx
        };
        out.extend(TurnCell::extra(turn, &written).0);
        *part = None;
        return true;
    }
    let shown = p.rows.max(h.saturating_sub(step.max))..h;
    p.md.materialize(text, shown.clone());
    p.md.rows_into(shown.clone(), live);
    p.md.retain(shown);
    live.extend(TurnCell::extra(turn, ctx).0);
    false
}

/// The layers drawn on the alternate screen over everything (the inline viewport has no room
/// for them); the approval dialog stays in the viewport.
pub(crate) fn needs_full_screen(app: &App) -> bool {
    matches!(
        app.layers.top(),
        Some(
            Layer::Question
                | Layer::Trust
                | Layer::Inspector
                | Layer::Help
                | Layer::Picker
                | Layer::HistorySearch
        )
    )
}

/// Rows of the dialog drawn in a viewport `width` wide, with `max` rows at most.
fn dialog_rows(app: &App, width: u16, max: u16) -> u16 {
    match &app.layers.dialog {
        Some(d) => {
            approval::layout(d, &app.layers.approval_rows, Rect::new(0, 0, width, max))
                .rect
                .height
        }
        None => 0,
    }
}

/// The viewport's height on a screen `width` x `max`: the live rows, the dialog, the
/// commands popup, the composer and the status line, at most the screen.
pub(crate) fn viewport_height(app: &App, width: u16, max: u16) -> u16 {
    let fixed = super::input_rows(app) + 1 + app.composer.slash.desired_height(width);
    let dialog = dialog_rows(app, width, max.saturating_sub(fixed));
    let live = u16::try_from(app.transcript.inline.live.len()).unwrap_or(u16::MAX);
    fixed.saturating_add(dialog).saturating_add(live).min(max)
}

/// Draw the viewport in `area`: the live rows (their last ones, if they do not all fit),
/// the dialog, the commands popup, the composer and the status line.
pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App) {
    let input = super::input_rows(app).min(area.height);
    let status_rows = u16::from(area.height > input);
    let popup = &app.composer.slash;
    let popup_rows = popup
        .desired_height(area.width)
        .min(area.height.saturating_sub(input + status_rows));
    let dialog = dialog_rows(
        app,
        area.width,
        area.height.saturating_sub(input + status_rows + popup_rows),
    );
    let [live_area, dialog_area, popup_area, input_area, status_area] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(dialog),
        Constraint::Length(popup_rows),
        Constraint::Length(input),
        Constraint::Length(status_rows),
    ])
    .areas(area);
    let live = &app.transcript.inline.live;
    let skip = live.len().saturating_sub(live_area.height as usize);
    for (k, line) in live[skip..].iter().enumerate() {
        let row = Rect {
            y: live_area.y + k as u16,
            height: 1,
            ..live_area
        };
        line.render(row, frame.buffer_mut());
    }
    if let Some(d) = &app.layers.dialog {
        approval::render(frame, dialog_area, d, &app.layers.approval_rows);
    }
    popup.render(popup_area, frame.buffer_mut());
    frame.render_widget(&app.composer.input, input_area);
    status::render(frame, status_area, app);
    theme::apply(frame.buffer_mut(), app.theme);
    if app.no_color {
        no_color::strip(frame.buffer_mut());
    }
}
