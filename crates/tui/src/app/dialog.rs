//! The approval dialog's view: which argument rows the next frame shows, scrolling them, and
//! whether every row has been on screen before `y` or `a` counts. `update` owns all of it;
//! the widget only draws what is recorded here.

use super::keys::Action;
use ratatui::layout::{Position, Rect};

use super::state::{App, ApprovalDialog, DialogStage, DialogView};
use crate::ui::approval;
use crate::ui::approval_rows::ArgRows;
use kimi_protocol::invisible;
use kimi_protocol::sanitize;

fn screen_rect(screen: (u16, u16)) -> Rect {
    Rect::new(0, 0, screen.0, screen.1)
}

/// Recompute what the next frame shows of the dialog at the current screen size, keeping the
/// scroll position inside the arguments.
pub(crate) fn refresh(app: &mut App) {
    let screen = screen_rect(app.screen);
    let rows = &mut app.layers.approval_rows;
    let Some(d) = app.layers.dialog.as_mut() else {
        rows.clear();
        return;
    };
    rows.refresh(d, approval::text_width(screen.width));
    let l = approval::layout(d, rows, screen);
    let view = DialogView {
        rows: l.args.height as usize,
        total: l.arg_rows.len(),
        width: l.args.width,
        area: l.rect,
    };
    d.scroll = d.scroll.min(view.total.saturating_sub(view.rows));
    d.view = view;
}

fn overflows(d: &ApprovalDialog) -> bool {
    d.view.total > d.view.rows
}

fn scroll_by(d: &mut ApprovalDialog, lines: usize, up: bool) {
    d.scroll = if up {
        d.scroll.saturating_sub(lines)
    } else {
        d.scroll
            .saturating_add(lines)
            .min(d.view.total.saturating_sub(d.view.rows))
    };
    d.hint = None;
}

/// Scroll the arguments by `action` (a scroll action of the key table) when they do not fit;
/// false when they fit (then PgUp/PgDn scroll the transcript behind).
pub(crate) fn scroll(d: &mut ApprovalDialog, action: Action) -> bool {
    if !overflows(d) {
        return false;
    }
    let page = d.view.rows.saturating_sub(1).max(1);
    match action {
        Action::LineUp => scroll_by(d, 1, true),
        Action::LineDown => scroll_by(d, 1, false),
        Action::PageUp => scroll_by(d, page, true),
        Action::PageDown => scroll_by(d, page, false),
        Action::Top => scroll_by(d, usize::MAX, true),
        Action::Bottom => scroll_by(d, usize::MAX, false),
        _ => return false,
    }
    true
}

/// The mouse wheel over a dialog whose arguments scroll; false when it is not for the dialog.
pub(crate) fn wheel(app: &mut App, column: u16, row: u16, up: bool) -> bool {
    if app.layers.inspector.open {
        return false;
    }
    match app.layers.dialog.as_mut() {
        Some(d) if overflows(d) && d.view.area.contains(Position::new(column, row)) => {
            scroll_by(d, 3, up);
            true
        }
        _ => false,
    }
}

/// Why `y` did nothing: part of the arguments has not been on screen.
pub(crate) fn unseen_hint(d: &ApprovalDialog) -> String {
    if d.view.rows == 0 {
        return "the terminal is too small to show the arguments: enlarge it to approve".into();
    }
    let unseen = if d.seen.len() == d.view.total {
        d.seen.iter().filter(|s| !**s).count()
    } else {
        d.view.total
    };
    format!(
        "scroll to the end first: j/PgDn ({} not shown yet)",
        crate::ui::count::count(unseen as u64, "line")
    )
}

/// Whether the editor shows every character of its text: no line cut off at the bottom or the
/// right, nothing invisible, no long blank run.
pub(crate) fn editor_all_shown(d: &ApprovalDialog, rows: &ArgRows, screen: (u16, u16)) -> bool {
    let DialogStage::Editing { editor, problems } = &d.stage else {
        return false;
    };
    let area = approval::layout(d, rows, screen_rect(screen)).editor;
    // As drawn: the problems take their rows under the editor, which has a border.
    let rows = area
        .height
        .saturating_sub(problems.len() as u16 + 1)
        .saturating_sub(2) as usize;
    let cols = area.width.saturating_sub(2) as usize;
    let lines = editor.lines();
    lines.len() <= rows
        && lines.iter().all(|l| {
            unicode_width::UnicodeWidthStr::width(l.as_str()) < cols
                && !invisible::any_hidden(l)
                && matches!(sanitize::compress_blanks(l), std::borrow::Cow::Borrowed(_))
        })
}

/// Back to the asking stage with `arguments` shown from the top, to be read before `y`.
pub(crate) fn review(d: &mut ApprovalDialog, arguments: String, edited: bool) {
    d.request.arguments = arguments;
    d.request.problems.clear();
    // New arguments: the rows laid out for the old ones no longer apply.
    d.args_rev = crate::ui::approval_rows::next_rev();
    d.edited = edited;
    d.stage = DialogStage::Asking;
    d.scroll = 0;
    d.seen.clear();
    d.seen_all = false;
    d.hint = Some(if edited {
        "your edit holds text the editor did not show: read it here, then y".into()
    } else {
        "read the arguments to the end, then y".into()
    });
}
