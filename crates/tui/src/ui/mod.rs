//! Widgets. `prepare` refreshes what the next frame needs (the views' own state: the transcript's
//! rows, the inspector's lines; called by the event loop before each frame); `draw` renders
//! from `&App` only. Widgets implement [`renderable::Renderable`] where they own their rows.

pub(crate) mod approval;
pub(crate) mod approval_rows;
pub(crate) mod count;
pub(crate) mod elicit;
pub(crate) mod help;
pub(crate) mod inline;
pub(crate) mod inspector;
pub(crate) mod inspector_ab;
pub(crate) mod inspector_chat;
pub(crate) mod inspector_cost;
pub(crate) mod inspector_diff;
pub(crate) mod inspector_k3;
mod inspector_mcp;
pub(crate) mod inspector_parsed;
pub(crate) mod inspector_rows;
pub(crate) mod inspector_tokens;
pub(crate) mod inspector_tokens_view;
pub(crate) mod inspector_view;
pub(crate) mod markdown;
mod more_below;
pub(crate) mod no_color;
pub(crate) mod picker;
pub(crate) mod reasoning;
pub(crate) mod reasoning_layout;
pub(crate) mod renderable;
pub(crate) mod rule_line;
pub(crate) mod slash;
pub(crate) mod special;
pub(crate) mod status;
pub(crate) mod style;
pub(crate) mod theme;
pub(crate) mod tool_pane;
pub(crate) mod transcript;
pub(crate) mod trust;
pub(crate) mod width;
pub(crate) mod wrap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;

use crate::app::state::App;
use renderable::Renderable;

/// The text of a line: its spans' contents joined (search, saving, tests).
pub(crate) fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The areas of one frame.
pub(crate) struct Areas {
    pub(crate) transcript: Rect,
    pub(crate) input: Rect,
    pub(crate) status: Rect,
}

/// Rows of the composer: its lines (1 to 8) and its border.
pub(crate) fn input_rows(app: &App) -> u16 {
    (app.composer.input.lines().len().min(8) as u16).max(1) + 2
}

pub(crate) fn areas(app: &App, size: Rect) -> Areas {
    let input_rows = input_rows(app);
    let [transcript, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(input_rows),
        Constraint::Length(1),
    ])
    .areas(size);
    Areas {
        transcript,
        input,
        status,
    }
}

/// Refresh what the next frame needs at `size`.
pub(crate) fn prepare(app: &mut App, size: Rect, theme: &markdown::Theme) {
    crate::app::composer::fit_placeholder(&mut app.composer.input, size.width);
    let a = areas(app, size);
    transcript::prepare(app, a.transcript.width, a.transcript.height, theme);
    if app.layers.inspector.open && app.layers.inspector.tokens.open {
        // The token view instead of the chunks.
        inspector_tokens::prepare(app, a.transcript);
    } else if app.layers.inspector.open {
        app.layers.inspector.token_view.clear();
        prepare_inspector(app, a.transcript);
    } else {
        app.layers.inspector.view.clear();
        app.layers.inspector.token_view.clear();
    }
}

fn prepare_inspector(app: &mut App, area: Rect) {
    let Some(i) = app.inspected_index() else {
        app.layers.inspector.view.clear();
        return;
    };
    let total = app.traces.len();
    // The view appends what arrived since the last frame; it never rebuilds a growing trace.
    app.layers
        .inspector
        .view
        .set_stall_ms(app.layers.inspector.stall_ms);
    app.layers
        .inspector
        .view
        .set_raw_json(app.layers.inspector.raw_json);
    app.layers
        .inspector
        .view
        .refresh(&app.traces[i].read(), i, total, app.template);
    let notes = inspector_mcp::notes_lines(app, &app.traces[i].read());
    app.layers.inspector.view.add_to_foot(notes);
    let cost = inspector_cost::lines(&crate::app::thinking_cost::request(app, i));
    app.layers.inspector.view.add_to_foot(cost);
    let started = app.traces[i].read().started_unix_ms;
    let ab = match &app.layers.inspector.ab {
        Some(ab) if ab.is_of(i, started) => inspector_ab::lines(ab),
        _ => Vec::new(),
    };
    app.layers.inspector.view.set_ab(ab);
    // The prompt diff against the request before: compared once per request, not per frame.
    let traces = &app.traces;
    let key = (i, traces[i].read().started_unix_ms);
    app.layers.inspector.view.prompt_diff(key, || {
        let now = traces[i].read();
        let before = i.checked_sub(1).map(|p| traces[p].read());
        let diff = before
            .as_deref()
            .and_then(|b| kimi_protocol::prompt_diff::between(b, &now));
        let dropped = before
            .as_deref()
            .and_then(|b| crate::app::thinking_cost::dropped(b, &now));
        inspector_diff::lines(diff.as_ref(), i, now.mode, dropped.as_deref())
    });
    let lines = &app.layers.inspector.view;
    if let Some(call) = app.layers.inspector.jump_to_call.take() {
        match inspector::line_of_call(
            &app.traces[i].read(),
            lines.iter(),
            call,
            app.layers.inspector.raw_json,
        ) {
            Some(n) => app.layers.inspector.scroll = n,
            None => {
                app.layers.inspector.message =
                    Some(format!("no markers of call {call} in this request"))
            }
        }
    }
    // Lines wrap when drawn: scrolling counts screen rows, so `End` (and any scroll past the
    // end) puts the last line on the last row, and a page is the lines the view holds.
    let rows = area.height.saturating_sub(3) as usize;
    let width = area.width.saturating_sub(2) as usize;
    let lines = &app.layers.inspector.view;
    let last = inspector_rows::last_top(lines.len(), |n| lines.line(n), width, rows);
    if app.layers.inspector.scroll > last {
        app.layers.inspector.scroll = last;
    }
    app.layers.inspector.page =
        inspector_rows::fitting(lines.window(app.layers.inspector.scroll, rows), width, rows);
}

pub(crate) fn draw(frame: &mut Frame, app: &App) {
    let a = areas(app, frame.area());
    if app.layers.inspector.open && app.layers.inspector.tokens.open {
        inspector_tokens::render(frame, a.transcript, app);
    } else if app.layers.inspector.open {
        inspector::render(frame, a.transcript, app);
    } else {
        app.transcript.view.render(a.transcript, frame.buffer_mut());
        more_below::render(app, a.transcript, frame.buffer_mut());
    }
    frame.render_widget(&app.composer.input, a.input);
    status::render(frame, a.status, app);
    // The commands matching a `/name` being typed, over the transcript's last rows.
    let popup = &app.composer.slash;
    popup.render(
        slash::area(popup, a.input, frame.area()),
        frame.buffer_mut(),
    );
    // The inspector opened from the dialog (Ctrl-T) covers it until closed.
    if let Some(d) = &app.layers.dialog
        && !app.layers.inspector.open
    {
        approval::render(frame, frame.area(), d, &app.layers.approval_rows);
    }
    // The picker of earlier messages or saved sessions.
    if let Some(p) = &app.layers.picker {
        let at = picker::area(p, a.transcript);
        p.render(at, frame.buffer_mut());
    }
    if app.layers.help.open {
        help::render(
            frame,
            frame.area(),
            app.layers.help.scroll,
            app.keyboard_enhanced,
            &app.mcp,
        );
    }
    if let Some(p) = &app.layers.trust {
        trust::render(frame, frame.area(), p);
    }
    // A server's question takes the keys, so it is drawn over everything.
    if let Some(d) = &app.layers.questions.open {
        elicit::render(frame, frame.area(), d);
    }
    theme::apply(frame.buffer_mut(), app.theme);
    if app.no_color {
        no_color::strip(frame.buffer_mut());
    }
}
