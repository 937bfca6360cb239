//! Incremental rendering of a message that grows while streaming.

use ratatui::text::Line;

use super::blocks::Splitter;
use super::highlight::{Lang, resume_point};
use super::render::{LastLine, code_lines, fence_lang, last_line_code};
use super::{Theme, render_into};

/// A fenced code block being streamed as the last block: its finished lines are laid out once
/// and kept, only the lines after `committed` are laid out again after a change.
#[derive(Debug)]
struct OpenCode {
    /// Where its opening line starts in the text (the block start).
    opener: usize,
    lang: Option<Lang>,
    /// `text[opener..committed]` is laid out as `lines[stable_len..stable_len + committed_len]`.
    committed: usize,
    committed_len: usize,
}

/// Incremental renderer for a message that grows while streaming.
///
/// The text is cut into stable blocks, everything before the last block split (a blank line
/// outside a fenced code block, followed by a complete line that starts a block), and the
/// unstable tail. The lines of the stable blocks are kept for the current width and theme;
/// only the tail is rendered again after a change. A width or theme change renders
/// everything once. The lines are always exactly those of [`render`](super::render) of the
/// whole text.
///
/// A fenced code block opened in column 0 is a block of its own; while it is the open tail,
/// its lines are committed as they complete (see [`resume_point`]), so streaming a long code
/// block costs the same per token at line 2,000 as at line 10.
#[derive(Debug, Default)]
pub struct MarkdownCache {
    text: String,
    /// State of the block splitter after the complete lines of `text[..scanned]`.
    splitter: Splitter,
    scanned: usize,
    /// The last block start found in the complete lines (0 if none).
    boundary: usize,
    /// The open fence that is a block of its own: where its opening line starts and ends.
    fence: Option<(usize, usize)>,
    /// The text holds a `\r` (line endings the code path does not reproduce: render whole).
    has_cr: bool,
    code: Option<OpenCode>,
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
            self.has_cr |= delta.contains('\r');
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
        self.fence = None;
        self.has_cr = text.contains('\r');
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
        self.code = None;
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
            match self.splitter.open_fence_alone() {
                Some(_) if self.fence.is_none() => self.fence = Some((self.scanned, end + 1)),
                Some(_) => {}
                None => self.fence = None,
            }
            // A closed fence ends its block here, whatever the next line holds.
            if self.splitter.block_ended() {
                self.boundary = end + 1;
            }
            self.scanned = end + 1;
        }
    }

    fn refresh(&mut self, width: u16, theme: &Theme) {
        self.scan();
        let width = width as usize;
        if self.boundary > self.stable_end {
            self.lines.truncate(self.stable_len);
            self.code = None;
            let newly_stable = &self.text[self.stable_end..self.boundary];
            render_into(newly_stable, width, theme, &mut self.lines);
            self.rendered_bytes += newly_stable.len() as u64;
            self.stable_end = self.boundary;
            self.stable_len = self.lines.len();
        }
        match self.fence {
            Some((opener, body)) if opener == self.stable_end && !self.has_cr => {
                self.refresh_code(opener, body, width, theme);
            }
            _ => {
                self.code = None;
                self.lines.truncate(self.stable_len);
                let tail = &self.text[self.stable_end..];
                render_into(tail, width, theme, &mut self.lines);
                self.rendered_bytes += tail.len() as u64;
            }
        }
        self.fresh = true;
    }

    /// The tail is an open fenced code block (`text[opener..body]` its opening line): lay out
    /// the lines after the committed ones, and commit those that can no longer change.
    fn refresh_code(&mut self, opener: usize, body: usize, width: usize, theme: &Theme) {
        let mut code = match self.code.take() {
            Some(c) if c.opener == opener => c,
            _ => {
                // The separator and the language badge, as the whole block renders them.
                self.lines.truncate(self.stable_len);
                let head = &self.text[opener..body];
                render_into(head, width, theme, &mut self.lines);
                self.rendered_bytes += head.len() as u64;
                OpenCode {
                    opener,
                    lang: fence_lang(head),
                    committed: body,
                    committed_len: self.lines.len() - self.stable_len,
                }
            }
        };
        self.lines.truncate(self.stable_len + code.committed_len);
        // The incomplete last line: code, or (part of) the closing fence, which pulldown-cmark
        // alone decides exactly (it depends only on the opening line and this line).
        let open_line = &self.text[self.scanned..];
        let end = match last_line_code(&self.text[opener..body], open_line) {
            LastLine::Code => self.text.len(),
            LastLine::NotCode => self.scanned,
            LastLine::Other => {
                // Not seen in practice: lay out the whole block as `render` would.
                self.code = None;
                self.lines.truncate(self.stable_len);
                let tail = &self.text[self.stable_end..];
                render_into(tail, width, theme, &mut self.lines);
                self.rendered_bytes += tail.len() as u64;
                return;
            }
        };
        let region = &self.text[code.committed..end];
        let keep = resume_point(region, code.lang);
        if keep > 0 {
            code_lines(&region[..keep], code.lang, width, theme, &mut self.lines);
            code.committed += keep;
            code.committed_len = self.lines.len() - self.stable_len;
        }
        code_lines(&region[keep..], code.lang, width, theme, &mut self.lines);
        self.rendered_bytes += region.len() as u64;
        self.code = Some(code);
    }
}
