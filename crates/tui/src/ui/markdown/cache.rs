//! Incremental rendering of a message that grows while streaming.

use ratatui::text::Line;

use super::blocks::Splitter;
use super::{Theme, render_into};

/// Incremental renderer for a message that grows while streaming.
///
/// The text is cut into stable blocks, everything before the last block split (a blank line
/// outside a fenced code block, followed by a complete line that starts a block), and the
/// unstable tail. The lines of the stable blocks are kept for the current width and theme;
/// only the tail is rendered again after a change. A width or theme change renders
/// everything once. The lines are always exactly those of [`render`](super::render) of the
/// whole text.
#[derive(Debug, Default)]
pub struct MarkdownCache {
    text: String,
    /// State of the block splitter after the complete lines of `text[..scanned]`.
    splitter: Splitter,
    scanned: usize,
    /// The last block start found in the complete lines (0 if none).
    boundary: usize,
    /// Width and theme of `lines` (`None` until the first call).
    key: Option<(u16, Theme)>,
    /// Whether `lines` is up to date with `text`.
    fresh: bool,
    lines: Vec<Line<'static>>,
    /// `text[..stable_end]` is rendered as `lines[..stable_len]`.
    stable_end: usize,
    stable_len: usize,
    /// Bytes of text rendered since creation (for tests and benchmarks).
    rendered_bytes: u64,
}

impl MarkdownCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append streamed text.
    pub fn push_str(&mut self, delta: &str) {
        if !delta.is_empty() {
            self.text.push_str(delta);
            self.fresh = false;
        }
    }

    /// Replace the whole text (e.g. on load).
    pub(crate) fn set_text(&mut self, text: &str) {
        self.text.clear();
        self.text.push_str(text);
        self.splitter = Splitter::default();
        self.scanned = 0;
        self.boundary = 0;
        self.invalidate();
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The wrapped lines for `width`. Re-renders only what changed: the stable blocks are
    /// kept per width, the unstable tail is rendered again after each change, and a width
    /// change renders everything once.
    pub fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        let same = matches!(&self.key, Some((w, t)) if *w == width && t == theme);
        if !same {
            self.invalidate();
            self.key = Some((width, theme.clone()));
        }
        if !self.fresh {
            self.refresh(width, theme);
        }
        &self.lines
    }

    /// Number of lines at `width` (same caching).
    pub fn height(&mut self, width: u16, theme: &Theme) -> usize {
        self.lines(width, theme).len()
    }

    /// The lines as of the last call to [`lines`](Self::lines) or [`height`](Self::height),
    /// without bringing them up to date (empty before the first call).
    pub fn cached_lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// Bytes of text rendered so far, a measure of the work done.
    pub fn rendered_bytes(&self) -> u64 {
        self.rendered_bytes
    }

    fn invalidate(&mut self) {
        self.lines.clear();
        self.stable_end = 0;
        self.stable_len = 0;
        self.fresh = false;
    }

    /// Feed the complete lines not seen yet to the splitter.
    fn scan(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(p) = memchr::memchr(b'\n', &bytes[self.scanned..]) {
            let end = self.scanned + p;
            if self.splitter.feed(&self.text[self.scanned..end]) {
                self.boundary = self.scanned;
            }
            self.scanned = end + 1;
        }
    }

    fn refresh(&mut self, width: u16, theme: &Theme) {
        self.scan();
        self.lines.truncate(self.stable_len);
        let width = width as usize;
        if self.boundary > self.stable_end {
            let newly_stable = &self.text[self.stable_end..self.boundary];
            render_into(newly_stable, width, theme, &mut self.lines);
            self.rendered_bytes += newly_stable.len() as u64;
            self.stable_end = self.boundary;
            self.stable_len = self.lines.len();
        }
        let tail = &self.text[self.stable_end..];
        render_into(tail, width, theme, &mut self.lines);
        self.rendered_bytes += tail.len() as u64;
        self.fresh = true;
    }
}
