//! Incremental rendering of a message that grows while streaming.
//!
//! [`MarkdownLayout`] holds no text: it is handed the message (owned by the model) on each
//! refresh and keeps only layout. [`MarkdownCache`] bundles a text with a layout for callers
//! that have no model (tests, benches, one-off renders).

use std::ops::Range;

use ratatui::text::Line;

use super::blocks::{Splitter, split};
use super::highlight::{Lang, resume_point};
use super::render::{LastLine, code_lines, fence_lang, last_line_code, render_block};
use super::{Theme, render_into_after};
use crate::ui::markdown::paragraph;

/// Code pieces are merged up to this many rows: big enough to keep the piece list short
/// (400 pieces for 100,000 lines), small enough that laying one out again is cheap.
const CODE_PIECE_ROWS: usize = 256;

/// How a piece of the text was laid out, so that it can be laid out again after eviction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PieceKind {
    /// Whole blocks, as [`render_into_after`] lays them out (`sep`: after other rows).
    Blocks { sep: bool },
    /// Whole lines of an open fenced block, starting at a highlighting restart point.
    Code(Option<Lang>),
    /// The first rows of a one-line paragraph (`sep`: preceded by the blank separator).
    Para { sep: bool },
}

/// Committed rows of `text[range]`: they never change while the text grows.
#[derive(Debug)]
struct Piece {
    range: Range<usize>,
    kind: PieceKind,
    first_row: usize,
    rows: usize,
    /// `None` when evicted (far from the viewport); laid out again on demand.
    lines: Option<Vec<Line<'static>>>,
}

impl Piece {
    fn layout(&self, text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut out = Vec::with_capacity(self.rows);
        let t = &text[self.range.clone()];
        match self.kind {
            PieceKind::Blocks { sep } => render_into_after(t, width, theme, &mut out, sep),
            PieceKind::Code(lang) => code_lines(t, lang, width, theme, &mut out),
            PieceKind::Para { sep } => {
                if sep {
                    out.push(Line::default());
                }
                render_block(t, width, theme, &mut out);
            }
        }
        out
    }
}

/// The open block at the end of the text, laid out piece by piece as it completes.
#[derive(Debug)]
enum Open {
    /// A fenced code block that is a block of its own: `text[opener..committed]` is in pieces.
    Code {
        opener: usize,
        /// Where its opening line ends.
        body: usize,
        lang: Option<Lang>,
        committed: usize,
    },
    /// A paragraph on one line: `text[start..committed]` is in pieces; a commit is tried
    /// again once the uncommitted part reaches `retry` bytes.
    Para {
        start: usize,
        committed: usize,
        retry: usize,
    },
}

/// Incremental layout of a message that grows while streaming.
///
/// The text is cut into stable blocks, everything before the last block split (a blank line
/// outside a fenced code block, followed by a complete line that starts a block), and the
/// unstable tail. Stable blocks are laid out once per width and theme; only the tail is laid
/// out again after a change. The rows are always exactly those of [`render`](super::render)
/// of the whole text.
///
/// Two kinds of tail commit their finished rows as they stream, so a token costs the same at
/// the end of a long block as of a short one:
/// - a fenced code block opened in column 0 (a block of its own): whole lines, cut at
///   highlighting restart points (see [`resume_point`]);
/// - a paragraph on one line: all rows but the last few, once the text before them can no
///   longer be restyled by what follows (see [`paragraph`]).
///
/// Rows are kept in pieces that remember the text they came from; [`retain`](Self::retain)
/// drops the rows of pieces far from the viewport and [`materialize`](Self::materialize)
/// lays them out again, so memory follows what is on screen, not what was drawn.
#[derive(Debug, Default)]
pub struct MarkdownLayout {
    /// Bytes of the text seen (the text only grows between [`reset`](Self::reset)s).
    seen: usize,
    /// State of the block splitter after the complete lines of `text[..scanned]`.
    splitter: Splitter,
    scanned: usize,
    /// The last block start found in the complete lines (0 if none).
    boundary: usize,
    /// The open fence that is a block of its own: where its opening line starts and ends.
    fence: Option<(usize, usize)>,
    /// The last fence that was a block of its own and closed: (opener, closing line start,
    /// closing line end).
    closed: Option<(usize, usize, usize)>,
    /// The text holds a `\r` (line endings the incremental paths do not reproduce).
    has_cr: bool,
    open: Option<Open>,
    /// Width and theme of the rows (`None` until the first refresh).
    key: Option<(u16, Theme)>,
    pieces: Vec<Piece>,
    /// Pieces that hold their rows.
    live: Vec<usize>,
    /// `text[..stable_end]` is laid out as `pieces[..stable_pieces]`.
    stable_end: usize,
    stable_pieces: usize,
    /// Rows after the pieces: the uncommitted tail.
    tail: Vec<Line<'static>>,
    /// Bytes of text laid out since creation (for tests and benchmarks).
    rendered_bytes: u64,
}

impl MarkdownLayout {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget everything: the text was replaced.
    pub fn reset(&mut self) {
        let rendered = self.rendered_bytes;
        *self = Self::default();
        self.rendered_bytes = rendered;
    }

    fn invalidate(&mut self) {
        self.pieces.clear();
        self.live.clear();
        self.tail.clear();
        self.stable_end = 0;
        self.stable_pieces = 0;
        self.open = None;
    }

    /// Rows in all, as of the last [`refresh`](Self::refresh).
    pub fn height(&self) -> usize {
        self.committed_rows() + self.tail.len()
    }

    /// Rows that no appended text can change (the blocks before the last block start), and
    /// the bytes of text they lay out.
    pub(crate) fn stable(&self) -> (usize, usize) {
        let rows = match self.stable_pieces {
            0 => 0,
            n => self.pieces[n - 1].first_row + self.pieces[n - 1].rows,
        };
        (rows, self.stable_end)
    }

    fn committed_rows(&self) -> usize {
        self.pieces.last().map_or(0, |p| p.first_row + p.rows)
    }

    /// Bytes of text laid out so far, a measure of the work done.
    pub fn rendered_bytes(&self) -> u64 {
        self.rendered_bytes
    }

    /// Rows that hold their lines now (for tests of eviction).
    pub fn live_rows(&self) -> usize {
        let kept: usize = self
            .live
            .iter()
            .filter_map(|&i| self.pieces.get(i))
            .map(|p| p.rows)
            .sum();
        kept + self.tail.len()
    }

    /// Bring the layout up to date with `text` (the same text as before, possibly longer) at
    /// `width`. Lays out only what changed; a width or theme change lays out everything once.
    pub fn refresh(&mut self, text: &str, width: u16, theme: &Theme) {
        if text.len() < self.seen {
            self.reset();
        }
        let same = matches!(&self.key, Some((w, t)) if *w == width && t == theme);
        if !same {
            self.invalidate();
            self.key = Some((width, theme.clone()));
        } else if text.len() == self.seen && !(self.pieces.is_empty() && self.tail.is_empty()) {
            return;
        }
        self.has_cr |= text[self.seen..].contains('\r');
        self.seen = text.len();
        self.scan(text);
        if width == 0 {
            self.invalidate();
            return;
        }
        self.layout(text, width as usize, theme);
    }

    /// Feed the complete lines not seen yet to the splitter.
    fn scan(&mut self, text: &str) {
        let bytes = text.as_bytes();
        while let Some(p) = memchr::memchr(b'\n', &bytes[self.scanned..]) {
            let end = self.scanned + p;
            if self.splitter.feed(&text[self.scanned..end]) {
                self.boundary = self.scanned;
            }
            let was = self.fence;
            match self.splitter.open_fence_alone() {
                Some(_) if self.fence.is_none() => self.fence = Some((self.scanned, end + 1)),
                Some(_) => {}
                None => self.fence = None,
            }
            // A closed fence ends its block here, whatever the next line holds.
            if self.splitter.block_ended() {
                if let Some((opener, _)) = was {
                    self.closed = Some((opener, self.scanned, end + 1));
                }
                self.boundary = end + 1;
            }
            self.scanned = end + 1;
        }
    }

    fn push_piece(&mut self, range: Range<usize>, kind: PieceKind, lines: Vec<Line<'static>>) {
        if lines.is_empty() && range.is_empty() {
            return;
        }
        let open_pieces = self.pieces.len() > self.stable_pieces;
        if let PieceKind::Code(_) = kind
            && open_pieces
            && let Some(last) = self.pieces.last_mut()
            && last.kind == kind
            && last.range.end == range.start
            && last.rows < CODE_PIECE_ROWS
            && let Some(held) = last.lines.as_mut()
        {
            last.range.end = range.end;
            last.rows += lines.len();
            held.extend(lines);
            return;
        }
        let first_row = self.committed_rows();
        self.live.push(self.pieces.len());
        self.pieces.push(Piece {
            range,
            kind,
            first_row,
            rows: lines.len(),
            lines: Some(lines),
        });
    }

    fn truncate_pieces(&mut self, n: usize) {
        self.pieces.truncate(n);
        self.live.retain(|&i| i < n);
    }

    /// Whole blocks of `text[range]`, one piece each (so each can be evicted on its own).
    fn push_blocks(&mut self, text: &str, range: Range<usize>, width: usize, theme: &Theme) {
        let mut at = range.start;
        for block in split(&text[range]) {
            let sep = self.committed_rows() > 0;
            let mut lines = Vec::new();
            render_into_after(block, width, theme, &mut lines, sep);
            self.rendered_bytes += block.len() as u64;
            let end = at + block.len();
            self.push_piece(at..end, PieceKind::Blocks { sep }, lines);
            at = end;
        }
    }

    fn layout(&mut self, text: &str, width: usize, theme: &Theme) {
        // An incomplete last line that can only be a paragraph start: whether a block starts
        // at it is already known (it depends on its first characters), so a long paragraph
        // after a list or a quote does not wait for its line to end to be laid out alone.
        let partial = &text[self.scanned..];
        if self.scanned > self.boundary && paragraph::shape(partial).is_some() {
            let mut probe = self.splitter.clone();
            if probe.feed(partial) {
                self.boundary = self.scanned;
            }
        }
        let blank_gap = self.boundary > self.stable_end
            && text.as_bytes()[self.stable_end..self.boundary]
                .iter()
                .all(|&c| c == b'\n');
        if blank_gap
            && matches!(self.open, Some(Open::Para { start, .. }) if start == self.boundary)
        {
            // The splitter found the block start of the open paragraph (its line is
            // complete): only blank lines lie before it, and its committed rows stay.
            self.stable_end = self.boundary;
        } else if self.boundary > self.stable_end {
            let from = match self.finish_open(text, width, theme) {
                Some(end) => end,
                None => {
                    self.truncate_pieces(self.stable_pieces);
                    self.stable_end
                }
            };
            self.open = None;
            self.push_blocks(text, from..self.boundary, width, theme);
            self.stable_end = self.boundary;
            self.stable_pieces = self.pieces.len();
        }
        self.layout_tail(text, width, theme);
    }

    /// Lay out what follows the stable blocks.
    fn layout_tail(&mut self, text: &str, width: usize, theme: &Theme) {
        self.tail.clear();
        let para = self.para_start(text);
        match self.fence {
            Some((opener, body)) if opener == self.stable_end && !self.has_cr => {
                self.layout_code(text, opener, body, width, theme);
            }
            _ if !self.has_cr && paragraph::shape(&text[para..]).is_some() => {
                self.layout_para(text, width, theme);
            }
            _ => self.layout_whole_tail(text, width, theme),
        }
    }

    /// Where a paragraph in the tail would start: after the blank lines the tail opens with.
    fn para_start(&self, text: &str) -> usize {
        let tail = &text.as_bytes()[self.stable_end..];
        self.stable_end + tail.iter().take_while(|&&c| c == b'\n').count()
    }

    /// The tail laid out whole (no incremental path applies).
    fn layout_whole_tail(&mut self, text: &str, width: usize, theme: &Theme) {
        self.open = None;
        self.truncate_pieces(self.stable_pieces);
        self.tail.clear();
        let tail = &text[self.stable_end..];
        let sep = self.committed_rows() > 0;
        render_into_after(tail, width, theme, &mut self.tail, sep);
        self.rendered_bytes += tail.len() as u64;
    }

    /// The open block at `stable_end` ended before the new boundary: keep its committed
    /// pieces, add its last rows, and return where its text ends.
    fn finish_open(&mut self, text: &str, width: usize, theme: &Theme) -> Option<usize> {
        match *self.open.as_ref()? {
            Open::Code {
                opener,
                body,
                lang,
                committed,
            } => {
                let (o, close_start, close_end) = self.closed?;
                if o != opener || opener != self.stable_end || close_end > self.boundary {
                    return None;
                }
                // The splitter's closing fence must be one for pulldown-cmark too (it reads
                // some lines, such as a fence followed by a tab, as code).
                let close = text[close_start..close_end].trim_end_matches('\n');
                if !matches!(
                    last_line_code(&text[opener..body], close),
                    LastLine::NotCode
                ) {
                    return None;
                }
                let mut lines = Vec::new();
                code_lines(
                    &text[committed..close_start],
                    lang,
                    width,
                    theme,
                    &mut lines,
                );
                self.rendered_bytes += (close_start - committed) as u64;
                self.push_piece(committed..close_start, PieceKind::Code(lang), lines);
                Some(close_end)
            }
            Open::Para {
                start, committed, ..
            } => {
                if start != self.para_start(text) {
                    return None;
                }
                let shape = paragraph::shape(&text[start..])?;
                let line_end = start + shape.line_end?;
                if !shape.ended || line_end + 1 > self.boundary {
                    return None;
                }
                let sep = committed == start && self.committed_rows() > 0;
                let mut lines = Vec::new();
                if sep {
                    lines.push(Line::default());
                }
                render_block(&text[committed..line_end], width, theme, &mut lines);
                self.rendered_bytes += (line_end - committed) as u64;
                self.push_piece(committed..line_end, PieceKind::Para { sep }, lines);
                Some(line_end + 1)
            }
        }
    }

    /// The tail is an open fenced code block (`text[opener..body]` its opening line): lay out
    /// the lines after the committed ones, and commit those that can no longer change.
    fn layout_code(&mut self, text: &str, opener: usize, body: usize, width: usize, theme: &Theme) {
        let (lang, mut committed) = match self.open {
            Some(Open::Code {
                opener: o,
                lang,
                committed,
                ..
            }) if o == opener => (lang, committed),
            _ => {
                // The separator and the language badge, as the whole block renders them.
                self.truncate_pieces(self.stable_pieces);
                let head = &text[opener..body];
                let sep = self.committed_rows() > 0;
                let mut lines = Vec::new();
                render_into_after(head, width, theme, &mut lines, sep);
                self.rendered_bytes += head.len() as u64;
                self.push_piece(opener..body, PieceKind::Blocks { sep }, lines);
                (fence_lang(head), body)
            }
        };
        // The incomplete last line: code, or (part of) the closing fence, which pulldown-cmark
        // alone decides exactly (it depends only on the opening line and this line).
        let open_line = &text[self.scanned..];
        let end = match last_line_code(&text[opener..body], open_line) {
            LastLine::Code => text.len(),
            LastLine::NotCode => self.scanned,
            // Not seen in practice: lay out the whole block as `render` would.
            LastLine::Other => return self.layout_whole_tail(text, width, theme),
        };
        let region = &text[committed..end];
        let keep = resume_point(region, lang);
        if keep > 0 {
            let mut lines = Vec::new();
            code_lines(&region[..keep], lang, width, theme, &mut lines);
            self.push_piece(committed..committed + keep, PieceKind::Code(lang), lines);
            committed += keep;
        }
        code_lines(&region[keep..], lang, width, theme, &mut self.tail);
        self.rendered_bytes += region.len() as u64;
        self.open = Some(Open::Code {
            opener,
            body,
            lang,
            committed,
        });
    }

    /// The tail is a paragraph on one line: lay out its uncommitted rows, and commit all but
    /// the last rows once that is safe. Ended by a blank line, it becomes stable.
    fn layout_para(&mut self, text: &str, width: usize, theme: &Theme) {
        let start = self.para_start(text);
        let (mut committed, retry) = match self.open {
            Some(Open::Para {
                start: s,
                committed,
                retry,
            }) if s == start => (committed, retry),
            _ => {
                self.truncate_pieces(self.stable_pieces);
                (start, 0)
            }
        };
        let Some(shape) = paragraph::shape(&text[start..]) else {
            return self.layout_whole_tail(text, width, theme);
        };
        let end = start + shape.line_end.unwrap_or(text.len() - start);
        let first = committed == start;
        let sep = first && self.committed_rows() > 0;
        if shape.ended {
            // A blank line ends a paragraph whatever follows: its rows are final, and what
            // comes after the blank line is a new block.
            let mut lines = Vec::new();
            if sep {
                lines.push(Line::default());
            }
            render_block(&text[committed..end], width, theme, &mut lines);
            // The line's `\n` and the blank lines before it count as read.
            let lead = if first { start - self.stable_end } else { 0 };
            self.rendered_bytes += (lead + end + 1 - committed) as u64;
            self.push_piece(committed..end, PieceKind::Para { sep }, lines);
            self.open = None;
            self.stable_end = end + 1;
            self.stable_pieces = self.pieces.len();
            return self.layout_tail(text, width, theme);
        }
        if sep {
            self.tail.push(Line::default());
        }
        let from = self.tail.len();
        render_block(&text[committed..end], width, theme, &mut self.tail);
        let lead = if first { start - self.stable_end } else { 0 };
        self.rendered_bytes += (lead + text.len().min(end + 1) - committed) as u64;
        let mut retry = retry;
        // Commit only while the line may still grow: once it ended, it is committed whole
        // when the next block starts.
        if shape.line_end.is_none() && end - committed >= retry.max(4 * width) {
            match paragraph::commit_point(text, committed, end, &self.tail[from..], width, theme) {
                Some((p, rows)) => {
                    // The separator (when there is one) goes with the first piece.
                    let lines: Vec<Line<'static>> = self.tail.drain(..from + rows).collect();
                    self.push_piece(committed..p, PieceKind::Para { sep }, lines);
                    committed = p;
                    retry = 0;
                }
                // Try again when the uncommitted text has doubled: the cost stays linear.
                None => retry = 2 * (end - committed),
            }
        }
        self.open = Some(Open::Para {
            start,
            committed,
            retry,
        });
    }

    /// Copy rows `range` (clamped to the height) into `out`. Rows of evicted pieces are
    /// skipped: call [`materialize`](Self::materialize) for the range first.
    pub fn rows_into(&self, range: Range<usize>, out: &mut Vec<Line<'static>>) {
        let committed = self.committed_rows();
        let end = range.end.min(self.height());
        if range.start >= end {
            return;
        }
        if range.start < committed {
            let mut k = self
                .pieces
                .partition_point(|p| p.first_row + p.rows <= range.start);
            while let Some(p) = self.pieces.get(k) {
                if p.first_row >= end.min(committed) {
                    break;
                }
                if let Some(lines) = &p.lines {
                    let lo = range.start.max(p.first_row) - p.first_row;
                    let hi = end.min(p.first_row + p.rows) - p.first_row;
                    out.extend_from_slice(&lines[lo..hi]);
                }
                k += 1;
            }
        }
        if end > committed {
            let lo = range.start.max(committed) - committed;
            out.extend_from_slice(&self.tail[lo..end - committed]);
        }
    }

    /// Lay out again the evicted pieces that hold rows in `range`.
    pub fn materialize(&mut self, text: &str, range: Range<usize>) {
        let Some((w, theme)) = self.key.clone() else {
            return;
        };
        let mut k = self
            .pieces
            .partition_point(|p| p.first_row + p.rows <= range.start);
        while let Some(p) = self.pieces.get_mut(k) {
            if p.first_row >= range.end {
                break;
            }
            if p.lines.is_none() {
                let lines = p.layout(text, w as usize, &theme);
                self.rendered_bytes += p.range.len() as u64;
                debug_assert_eq!(lines.len(), p.rows);
                p.lines = Some(lines);
                self.live.push(k);
            }
            k += 1;
        }
    }

    /// Drop the rows of the pieces entirely outside `keep`; their heights stay known.
    pub fn retain(&mut self, keep: Range<usize>) {
        let pieces = &mut self.pieces;
        self.live.retain(|&i| match pieces.get_mut(i) {
            Some(p) if p.first_row + p.rows <= keep.start || p.first_row >= keep.end => {
                p.lines = None;
                false
            }
            Some(_) => true,
            None => false,
        });
    }
}

/// A text together with its layout: the streaming renderer for callers without a model.
#[derive(Debug, Default)]
pub struct MarkdownCache {
    text: String,
    layout: MarkdownLayout,
    lines: Vec<Line<'static>>,
}

impl MarkdownCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append streamed text.
    pub fn push_str(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    /// Replace the whole text (e.g. on load).
    pub fn set_text(&mut self, text: &str) {
        self.text.clear();
        self.text.push_str(text);
        self.layout.reset();
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The wrapped lines for `width`, laid out incrementally (see [`MarkdownLayout`]).
    pub fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        self.layout.refresh(&self.text, width, theme);
        let h = self.layout.height();
        self.layout.materialize(&self.text, 0..h);
        self.lines.clear();
        self.layout.rows_into(0..h, &mut self.lines);
        &self.lines
    }

    /// Number of lines at `width` (same caching).
    pub fn height(&mut self, width: u16, theme: &Theme) -> usize {
        self.layout.refresh(&self.text, width, theme);
        self.layout.height()
    }

    /// The lines as of the last call to [`lines`](Self::lines).
    pub fn cached_lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// Bytes of text rendered so far, a measure of the work done.
    pub fn rendered_bytes(&self) -> u64 {
        self.layout.rendered_bytes()
    }

    /// The layout, for tests of eviction.
    pub fn layout_mut(&mut self) -> (&str, &mut MarkdownLayout) {
        (&self.text, &mut self.layout)
    }
}
