//! Markdown of assistant messages as wrapped, styled ratatui lines.
//!
//! - [`render`]: a whole text at a width.
//! - [`MarkdownLayout`]: the same for a message that grows while streaming (the text stays
//!   with its owner), laying out only the unstable tail, in pieces that can be evicted.
//! - [`MarkdownCache`]: a text with its layout, for callers without a model.
//! - [`Theme`]: the styles used.
//!
//! Text is cut into blocks at blank lines (see `blocks`); each block is parsed with
//! pulldown-cmark (tables, strikethrough and task lists on), turned into logical lines by
//! `render`, and laid out at the width by `wrap` (word wrap for prose, hard wrap for code,
//! clipping for tables). No line is wider than the width, measured as ratatui does.
//! Code blocks are highlighted by the small highlighter in `highlight`.
//!
//! Known limits: reference-style links whose definition is in another block (after a blank
//! line) stay unresolved, and HTML is shown as text.

mod blocks;
mod cache;
mod highlight;
mod paragraph;
mod render;
pub(crate) mod wrap;

#[cfg(test)]
mod tests;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

pub use cache::MarkdownCache;
pub(crate) use cache::MarkdownLayout;

/// Colours and styles used by markdown rendering.
///
/// The default uses only named colours and modifiers, which terminals map to their own
/// palette, so it reads on dark and light backgrounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Headings (H1 is also underlined).
    pub(crate) heading: Style,
    pub(crate) emphasis: Style,
    pub(crate) strong: Style,
    pub(crate) strikethrough: Style,
    /// Inline `code` (the backticks are not shown).
    pub(crate) code_inline: Style,
    /// The base of code block text (set a background here for a code background).
    pub(crate) code_block: Style,
    /// The `▎` bar left of code block lines.
    pub(crate) code_bar: Style,
    /// The language badge above a code block.
    pub(crate) code_label: Style,
    /// The `│` bar left of block quotes.
    pub(crate) quote: Style,
    /// Patched onto the text inside block quotes.
    pub(crate) quote_text: Style,
    /// List bullets, numbers and task boxes.
    pub(crate) list_bullet: Style,
    /// Link text.
    pub(crate) link: Style,
    /// The ` (url)` after a link whose text is not its URL.
    pub(crate) link_url: Style,
    /// Horizontal rules.
    pub(crate) rule: Style,
    /// Table column separators and the line under the header.
    pub(crate) table_border: Style,
    /// Patched onto header cells.
    pub(crate) table_header: Style,
    /// Raw HTML, shown as text.
    pub(crate) html: Style,
    /// Highlighting: keywords.
    pub(crate) keyword: Style,
    /// Highlighting: string and char literals.
    pub(crate) string: Style,
    /// Highlighting: comments.
    pub(crate) comment: Style,
    /// Highlighting: numbers and constants (`true`, `None`, `nil`).
    pub(crate) number: Style,
    /// Highlighting: type names (built-in types, capitalised names where that means a type).
    pub(crate) type_name: Style,
    /// `diff` blocks: added lines.
    pub(crate) diff_added: Style,
    /// `diff` blocks: removed lines.
    pub(crate) diff_removed: Style,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            heading: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: Style::new().add_modifier(Modifier::BOLD),
            strikethrough: Style::new().add_modifier(Modifier::CROSSED_OUT),
            code_inline: Style::new().fg(Color::Magenta),
            code_block: Style::new(),
            code_bar: Style::new().fg(Color::DarkGray),
            code_label: Style::new().add_modifier(Modifier::REVERSED),
            quote: Style::new().fg(Color::DarkGray),
            quote_text: Style::new().add_modifier(Modifier::ITALIC),
            list_bullet: Style::new().fg(Color::Cyan),
            link: Style::new()
                .fg(Color::Blue)
                .add_modifier(Modifier::UNDERLINED),
            link_url: Style::new().add_modifier(Modifier::DIM),
            rule: Style::new().fg(Color::DarkGray),
            table_border: Style::new().fg(Color::DarkGray),
            table_header: Style::new().add_modifier(Modifier::BOLD),
            html: Style::new().add_modifier(Modifier::DIM),
            keyword: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            string: Style::new().fg(Color::Green),
            comment: Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC),
            number: Style::new().fg(Color::Red),
            type_name: Style::new().fg(Color::Cyan),
            diff_added: Style::new().fg(Color::Green),
            diff_removed: Style::new().fg(Color::Red),
        }
    }
}

/// Render complete markdown text to wrapped lines of at most `width` display columns.
/// Width 0 gives no lines.
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    render_into(text, width as usize, theme, &mut out);
    out
}

/// Render `text` block by block, appending to `out`; blocks that render to something are
/// separated by one blank line, also from lines already in `out`.
fn render_into(text: &str, width: usize, theme: &Theme, out: &mut Vec<Line<'static>>) {
    render_into_after(text, width, theme, out, false);
}

/// [`render_into`], where `after` says rows come before `out` (so the first block that renders
/// to something gets its separator too).
fn render_into_after(
    text: &str,
    width: usize,
    theme: &Theme,
    out: &mut Vec<Line<'static>>,
    after: bool,
) {
    if width == 0 {
        return;
    }
    for block in blocks::split(text) {
        let before = out.len();
        let sep = after || before > 0;
        if sep {
            out.push(Line::default());
        }
        render::render_block(block, width, theme, out);
        if sep && out.len() == before + 1 {
            out.pop();
        }
    }
}
