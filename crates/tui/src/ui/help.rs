//! The help overlay (F1, or `?` on an empty input): every row of the key table, by section,
//! then the slash commands. It scrolls when the screen is shorter than the help.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::style;
use super::wrap::wrap_line;
use crate::app::commands::help_rows;
use crate::app::keys::{SECTIONS, TABLE, row_works};

/// Columns of the key column, with its indent.
const KEYS_COLUMN: usize = 24;

/// One row: the keys, then what they do, wrapped under itself to fit `width` columns (the
/// help is as narrow as the screen: nothing is cut off at 80 columns).
fn row(keys: &str, what: &str, width: usize, out: &mut Vec<Line<'static>>) {
    if width < KEYS_COLUMN + MIN_HELP_COLUMNS {
        return narrow_row(keys, what, width, out);
    }
    let avail = width.saturating_sub(KEYS_COLUMN);
    // Keys too long for their column get a line of their own.
    let own_line = keys.chars().count() > KEYS_COLUMN - 3;
    if own_line {
        out.push(Line::from(Span::styled(
            format!("  {keys}"),
            style::user_header(),
        )));
    }
    for (i, piece) in wrap_line(what, avail).into_iter().enumerate() {
        let head = if i == 0 && !own_line {
            format!("  {keys:<22}")
        } else {
            " ".repeat(KEYS_COLUMN)
        };
        out.push(Line::from(vec![
            Span::styled(head, style::user_header()),
            Span::raw(piece),
        ]));
    }
}

/// Fewer columns than this beside the key column, and the rows are laid out narrow.
const MIN_HELP_COLUMNS: usize = 16;
/// The indent of what the keys do in a narrow row.
const NARROW_INDENT: usize = 4;

/// One row on a narrow screen: the keys on a line of their own, what they do under them,
/// indented, both wrapped to `width` columns.
fn narrow_row(keys: &str, what: &str, width: usize, out: &mut Vec<Line<'static>>) {
    for piece in wrap_line(keys, width.saturating_sub(2).max(1)) {
        out.push(Line::from(Span::styled(
            format!("  {piece}"),
            style::user_header(),
        )));
    }
    let avail = width.saturating_sub(NARROW_INDENT).max(1);
    for piece in wrap_line(what, avail) {
        out.push(Line::from(vec![
            Span::raw(" ".repeat(NARROW_INDENT)),
            Span::raw(piece),
        ]));
    }
}

/// The inside width of the help overlay on a screen `screen_width` columns wide.
fn inner_width(screen_width: u16) -> usize {
    usize::from(screen_width.saturating_sub(4).min(96).saturating_sub(2))
}

/// The help's lines for a screen `screen_width` wide, drawn from the key table (the rows whose
/// keys reach the app in this terminal: `enhanced` is the keyboard protocol) and the command
/// list.
#[cfg(test)]
pub(crate) fn lines(screen_width: u16, enhanced: bool) -> Vec<Line<'static>> {
    lines_with(screen_width, enhanced, &Default::default())
}

/// [`lines`], then the prompt commands of the ready MCP servers in `mcp`.
pub(crate) fn lines_with(
    screen_width: u16,
    enhanced: bool,
    mcp: &crate::app::mcp_view::Ready,
) -> Vec<Line<'static>> {
    let width = inner_width(screen_width);
    let mut lines = Vec::new();
    for (title, contexts) in SECTIONS {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(*title, style::accent())));
        for r in TABLE
            .iter()
            .filter(|r| contexts.contains(&r.context) && row_works(r, enhanced))
        {
            row(r.keys, r.help, width, &mut lines);
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Commands", style::accent())));
    for (c, what) in help_rows() {
        row(&c, what, width, &mut lines);
    }
    if !mcp.prompts.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "MCP prompts (into the input, to review and send)",
            style::accent(),
        )));
    }
    for (server, p) in &mcp.prompts {
        let what = p
            .description
            .as_deref()
            .map(|d| kimi_protocol::sanitize::one_line(d, 200))
            .unwrap_or_default();
        row(
            &crate::app::mcp_view::prompt_usage(server, p),
            &what,
            width,
            &mut lines,
        );
    }
    lines
}

/// How many lines the help has (what `update` scrolls through).
pub(crate) fn line_count(
    screen_width: u16,
    enhanced: bool,
    mcp: &crate::app::mcp_view::Ready,
) -> usize {
    lines_with(screen_width, enhanced, mcp).len()
}

pub(crate) fn render(
    frame: &mut Frame,
    area: Rect,
    scroll: usize,
    enhanced: bool,
    mcp: &crate::app::mcp_view::Ready,
) {
    let lines = lines_with(area.width, enhanced, mcp);
    let total = lines.len();
    let w = area.width.saturating_sub(4).min(96);
    let h = (total as u16 + 2).min(area.height);
    let shown = usize::from(h.saturating_sub(2));
    let scroll = scroll.min(total.saturating_sub(shown));
    let title = if shown < total {
        let (from, to) = (scroll + 1, (scroll + shown).min(total));
        let long = format!(" Help · lines {from}-{to} of {total} · ↑↓ PgUp PgDn ");
        // A narrow overlay keeps where it is and how to move.
        if super::width::str_width(&long) + 2 <= usize::from(w) {
            long
        } else {
            format!(" Help {from}-{to}/{total} ↑↓ ")
        }
    } else {
        " Help ".to_owned()
    };
    let rect = Rect {
        x: area.x + area.width.saturating_sub(w) / 2,
        y: area.y + area.height.saturating_sub(h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(Block::default().borders(Borders::ALL).title(title)),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> Vec<String> {
        lines(200, true).iter().map(crate::ui::line_text).collect()
    }

    #[test]
    fn every_row_of_the_key_table_is_in_the_help_and_every_hint_too() {
        let text = text();
        for r in TABLE {
            assert!(
                text.iter()
                    .any(|l| l.contains(r.keys) && l.contains(r.help)),
                "{r:?} missing from the help"
            );
        }
        for (key, _) in crate::app::keys::hints() {
            assert!(
                text.iter().any(|l| l.trim_start().starts_with(key)),
                "hint {key} is not a key in the help"
            );
        }
        assert_eq!(line_count(200, true, &Default::default()), text.len());
    }

    /// Every line fits the overlay at `cols` columns, and every word of every row (its keys
    /// and what they do) is on screen: the description wraps under itself.
    fn nothing_is_cut_off_at(cols: u16) {
        let text: Vec<String> = lines(cols, false)
            .iter()
            .map(crate::ui::line_text)
            .collect();
        for l in &text {
            assert!(
                unicode_width::UnicodeWidthStr::width(l.as_str()) <= inner_width(cols),
                "{l:?} is wider than the overlay at {cols} columns"
            );
        }
        let all = text.join(" ");
        for r in TABLE.iter().filter(|r| row_works(r, false)) {
            for w in r.help.split_whitespace().chain(r.keys.split_whitespace()) {
                assert!(all.contains(w), "{w} of {r:?} is missing at {cols} columns");
            }
        }
    }

    #[test]
    fn at_80_columns_nothing_is_cut_off() {
        nothing_is_cut_off_at(80);
    }

    #[test]
    fn at_40_columns_nothing_is_cut_off_either() {
        // Narrow: each row's keys above what they do.
        nothing_is_cut_off_at(40);
        let text: Vec<String> = lines(40, false).iter().map(crate::ui::line_text).collect();
        let at = text
            .iter()
            .position(|l| l == "  Enter")
            .expect("Enter on its own line");
        assert_eq!(text[at + 1], "    send the message");
    }

    #[test]
    fn shift_enter_is_listed_only_when_the_terminal_reports_it() {
        let has = |enhanced| {
            lines(100, enhanced)
                .iter()
                .any(|l| l.spans.iter().any(|s| s.content.contains("Shift-Enter")))
        };
        assert!(has(true));
        assert!(!has(false));
    }
}
