//! The inline screen on the terminal: a viewport of a few rows at the bottom of the normal
//! screen, and the rows that became final written above it, once, as styled text that
//! scrolls into the terminal's own scrollback (where its search, selection and copy mode
//! reach them).
//!
//! Rows go in by clearing the viewport, writing them where it was (`\r\n` after each, so
//! the screen scrolls at its bottom like any program's output) and drawing the viewport
//! again below them; all of a frame is one synchronized update, so none of it is seen half
//! done. After every frame the (hidden) cursor is parked at the viewport's top-left: a
//! terminal keeps the cursor with the text it is on when a resize rewraps the screen, so
//! asking the terminal where the cursor is ([`InlineScreen::found`]) finds the viewport
//! again, and clearing from there removes whatever the rewrap made of it (a narrowed screen
//! wraps the viewport's rows in two) without touching the rows above.

use std::io::{self, Write};

use crossterm::cursor::MoveTo;
use crossterm::queue;
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::Widget;
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

/// How rows written to the scrollback are coloured, as the viewport is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paint {
    pub(crate) theme: crate::ui::theme::Theme,
    pub(crate) no_color: bool,
}

/// The bytes of one frame, gathered before any goes out: a frame is written whole, or not at
/// all (see [`InlineScreen::frame`]). Cloned into the viewport terminal's backend.
#[derive(Debug, Clone, Default)]
struct Staged(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Staged {
    /// Write what was gathered to `out` (when `send`), and empty the buffer, keeping its
    /// capacity for the next frame.
    fn drain_into(&self, out: &mut impl Write, send: bool) -> io::Result<()> {
        let mut bytes = self.0.borrow_mut();
        let sent = if send {
            out.write_all(&bytes).and_then(|()| out.flush())
        } else {
            Ok(())
        };
        bytes.clear();
        sent
    }
}

/// The viewport's place on the screen and what it last drew.
pub(crate) struct InlineScreen<W: Write> {
    out: W,
    /// Where a frame is put together before it is written.
    staged: Staged,
    /// Rows for the scrollback not written yet: a frame given up (the screen's size changed
    /// while it was made) keeps them for the next.
    pending: Vec<Line<'static>>,
    /// Draws the viewport (a fixed area of the screen); rebuilt, after a clear, whenever the
    /// area changes, so its first frame there draws everything.
    term: Option<Terminal<CrosstermBackend<Staged>>>,
    area: Rect,
    size: Size,
    /// Where the viewport is must be asked of the terminal before the next frame (at the
    /// start, after a resize, after another program had the screen).
    pub(crate) lost: bool,
    /// An overlay is shown on the alternate screen; the viewport waits on the normal one.
    pub(crate) alt: bool,
}

impl<W: Write> InlineScreen<W> {
    /// A screen of `size`; where the viewport starts is asked before the first frame.
    pub(crate) fn new(out: W, size: Size) -> Self {
        InlineScreen {
            out,
            staged: Staged::default(),
            pending: Vec::new(),
            term: None,
            area: Rect::new(0, size.height.saturating_sub(1), size.width, 0),
            size,
            lost: true,
            alt: false,
        }
    }

    /// The size of the screen as of the last frame.
    pub(crate) fn size(&self) -> Size {
        self.size
    }

    /// The viewport's top row: where the cursor is now (`Some`, as the terminal answered),
    /// or, if the terminal did not say, the bottom of the screen.
    pub(crate) fn found(&mut self, cursor: Option<(u16, u16)>, size: Size) -> io::Result<()> {
        let last = size.height.saturating_sub(1);
        let row = match cursor {
            // Something was written after the last frame (a shell prompt at start): the
            // viewport starts on a line of its own (the screen scrolls if that was the last).
            Some((x, y)) if x > 0 => {
                self.out.write_all(b"\r\n")?;
                self.out.flush()?;
                (y + 1).min(last)
            }
            Some((_, y)) => y.min(last),
            None => last,
        };
        self.area.y = row;
        self.size = size;
        self.term = None;
        self.lost = false;
        Ok(())
    }

    /// One frame: `rows` written into the scrollback above the viewport, then the viewport
    /// (`height` rows, drawn by `render` into the area it is given) below them, all of it
    /// one synchronized update. The frame is put together first and written in one piece,
    /// and only when `unchanged` says the screen still has `size`: a frame drawn for a size
    /// the terminal no longer has would put rows where they do not belong (a resize moves and
    /// rewraps what is on the screen). Given up, it writes nothing; its rows wait for the
    /// next frame, which finds the viewport again first.
    pub(crate) fn frame(
        &mut self,
        size: Size,
        rows: &[Line<'static>],
        paint: Paint,
        height: u16,
        render: impl FnOnce(&mut Frame, Rect),
        unchanged: impl FnOnce() -> bool,
    ) -> io::Result<()> {
        self.pending.extend_from_slice(rows);
        let mut w = self.staged.clone();
        queue!(w, BeginSynchronizedUpdate)?;
        let drawn = || -> io::Result<()> {
            let mut w = self.staged.clone();
            if size != self.size {
                self.size = size;
                self.term = None;
            }
            let screen = size.height.max(1);
            let height = height.clamp(1, screen);
            let mut top = self.area.y.min(screen - 1);
            let mut clear = self.term.is_none();
            if !self.pending.is_empty() {
                clear_below(&mut w, top, screen)?;
                top = write_rows(&mut w, &self.pending, size.width, screen, top, paint)?;
                clear = true;
            }
            if top + height > screen {
                // Room for the viewport: the screen scrolls up, its top into the scrollback.
                queue!(w, MoveTo(0, screen - 1))?;
                for _ in 0..top + height - screen {
                    w.write_all(b"\n")?;
                }
                top = screen - height;
                clear = true;
            }
            let area = Rect::new(0, top, size.width, height);
            if clear || area != self.area {
                clear_below(&mut w, top, screen)?;
                let backend = CrosstermBackend::new(self.staged.clone());
                let options = TerminalOptions {
                    viewport: Viewport::Fixed(area),
                };
                self.term = Some(Terminal::with_options(backend, options)?);
            }
            self.area = area;
            if let Some(term) = self.term.as_mut() {
                term.draw(|f| render(f, area))?;
                term.backend_mut()
                    .set_cursor_position(Position::new(0, top))?;
            }
            Ok(())
        };
        let drawn = drawn();
        // Ended even when drawing failed: a terminal left inside the update shows nothing.
        queue!(w, EndSynchronizedUpdate)?;
        if !unchanged() {
            self.staged.drain_into(&mut self.out, false)?;
            self.term = None;
            self.lost = true;
            return drawn;
        }
        self.pending.clear();
        let written = self.staged.drain_into(&mut self.out, true);
        drawn.and(written)
    }

    /// Clear the viewport for another program's output (the cursor left at its top-left);
    /// where the viewport goes next is asked again.
    pub(crate) fn vacate(&mut self) -> io::Result<()> {
        clear_below(&mut self.out, self.area.y, self.size.height.max(1))?;
        self.term = None;
        self.lost = true;
        self.out.flush()
    }

    /// The app is leaving: `rows` (the rest of what it showed) written into the scrollback,
    /// the viewport cleared, and the cursor left below the conversation for the shell.
    pub(crate) fn close(
        &mut self,
        size: Size,
        rows: &[Line<'static>],
        paint: Paint,
    ) -> io::Result<()> {
        self.pending.extend_from_slice(rows);
        let rows = std::mem::take(&mut self.pending);
        let w = &mut self.out;
        let screen = size.height.max(1);
        let top = self.area.y.min(screen - 1);
        queue!(w, BeginSynchronizedUpdate)?;
        let written = clear_below(w, top, screen)
            .and_then(|()| write_rows(w, &rows, size.width, screen, top, paint))
            .and_then(|top| queue!(w, MoveTo(0, top)));
        self.term = None;
        let ended = queue!(w, EndSynchronizedUpdate).and_then(|()| w.flush());
        written.and(ended)
    }
}

/// Clear the rows from `top` to the bottom of the screen (`screen` rows), leaving the cursor
/// at the start of `top`. Row by row: tmux takes "clear to the end" from the top-left corner
/// for a clear screen and scrolls what was on it into the scrollback.
fn clear_below<W: Write>(w: &mut W, top: u16, screen: u16) -> io::Result<()> {
    for y in top..screen {
        queue!(w, MoveTo(0, y), Clear(ClearType::CurrentLine))?;
    }
    queue!(w, MoveTo(0, top))
}

/// Write `rows` from row `top` down (the cursor is there, at column 0), scrolling the screen
/// (`screen` rows) as they pass its bottom; returns the row after the last.
fn write_rows<W: Write>(
    w: &mut W,
    rows: &[Line<'static>],
    width: u16,
    screen: u16,
    top: u16,
    paint: Paint,
) -> io::Result<u16> {
    let area = Rect::new(0, 0, width, 1);
    let blank = Buffer::empty(area);
    let mut row = top;
    for line in rows {
        let mut buf = Buffer::empty(area);
        line.render(area, &mut buf);
        crate::ui::theme::apply(&mut buf, paint.theme);
        if paint.no_color {
            crate::ui::no_color::strip(&mut buf);
        }
        // Only what differs from a blank row: no trailing spaces reach the scrollback.
        let cells = blank.diff(&buf).into_iter().map(|(x, _, c)| (x, row, c));
        CrosstermBackend::new(&mut *w).draw(cells)?;
        w.write_all(b"\r\n")?;
        row = (row + 1).min(screen - 1);
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Bytes written, shared with the screen's writers.
    #[derive(Clone, Default)]
    struct Tape(Rc<RefCell<Vec<u8>>>);

    impl Write for Tape {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Tape {
        fn take(&self) -> Vec<u8> {
            std::mem::take(&mut self.0.borrow_mut())
        }
    }

    fn nz(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).expect("not zero")
    }

    fn term(rows: u16, cols: u16, scrollback: usize) -> vt100::Parser {
        vt100::Parser::new(nz(rows), nz(cols), scrollback)
    }

    const PAINT: Paint = Paint {
        theme: crate::ui::theme::Theme::Dark,
        no_color: true,
    };

    /// Every row of the terminal's history and screen, top to bottom, trailing blanks cut.
    fn all_rows(vt: &mut vt100::Parser) -> Vec<String> {
        let (rows, cols) = vt.screen().size();
        let (rows, cols) = (rows.get(), cols.get());
        let back = vt.screen().scrollback_len();
        let mut out = Vec::new();
        for k in (1..=back).rev() {
            vt.screen_mut().set_scrollback(k);
            out.push(vt.screen().rows(0, cols).next().unwrap_or_default());
        }
        vt.screen_mut().set_scrollback(0);
        out.extend(vt.screen().rows(0, cols).take(rows as usize));
        out.into_iter().map(|r| r.trim_end().to_owned()).collect()
    }

    fn viewport(label: &'static str) -> impl FnOnce(&mut Frame, Rect) {
        move |f, area| {
            for y in area.top()..area.bottom() {
                let row = Rect {
                    y,
                    height: 1,
                    ..area
                };
                Line::from(format!("{label} {}", y - area.y)).render(row, f.buffer_mut());
            }
        }
    }

    /// A terminal of `cols` x `rows` and a screen on it whose viewport starts at the top.
    fn started(cols: u16, rows: u16) -> (Tape, vt100::Parser, InlineScreen<Tape>, Size) {
        let tape = Tape::default();
        let size = Size::new(cols, rows);
        let mut s = InlineScreen::new(tape.clone(), size);
        s.found(Some((0, 0)), size).unwrap();
        (tape, term(rows, cols, 100), s, size)
    }

    /// How many rows of the terminal start with `prefix`.
    fn count(rows: &[String], prefix: &str) -> usize {
        rows.iter().filter(|r| r.starts_with(prefix)).count()
    }

    fn lines(from: usize, to: usize) -> Vec<Line<'static>> {
        (from..to)
            .map(|n| Line::from(format!("answer line {n}")))
            .collect()
    }

    #[test]
    fn rows_go_above_the_viewport_once_and_scroll_into_the_scrollback_in_order() {
        let tape = Tape::default();
        let size = Size::new(30, 8);
        let mut vt = term(8, 30, 1000);
        // A shell prompt on the first row; the app starts below it.
        vt.process(b"$ kimi-tui --inline\r\n");
        let mut s = InlineScreen::new(tape.clone(), size);
        s.found(Some((0, 1)), size).unwrap();
        s.frame(size, &[], PAINT, 3, viewport("vp"), || true)
            .unwrap();
        vt.process(&tape.take());
        assert_eq!(
            vt.screen().cursor_position(),
            (1, 0),
            "parked at the viewport"
        );
        for chunk in [lines(0, 2), lines(2, 9), Vec::new(), lines(9, 20)] {
            s.frame(size, &chunk, PAINT, 3, viewport("vp"), || true)
                .unwrap();
            let bytes = tape.take();
            assert!(bytes.starts_with(b"\x1b[?2026h") && bytes.ends_with(b"\x1b[?2026l"));
            vt.process(&bytes);
        }
        let rows = all_rows(&mut vt);
        let answer: Vec<&String> = rows.iter().filter(|r| r.starts_with("answer")).collect();
        let want: Vec<String> = (0..20).map(|n| format!("answer line {n}")).collect();
        assert_eq!(answer, want.iter().collect::<Vec<_>>(), "{rows:#?}");
        assert_eq!(rows[0], "$ kimi-tui --inline");
        // The viewport is the screen's last three rows, once.
        assert_eq!(&rows[rows.len() - 3..], ["vp 0", "vp 1", "vp 2"]);
        assert_eq!(count(&rows, "vp"), 3);
        // No trailing spaces were written after the text.
        assert!(!String::from_utf8_lossy(&tape.take()).contains("  \r\n"));
    }

    #[test]
    fn a_growing_then_shrinking_viewport_leaves_nothing_behind() {
        let (tape, mut vt, mut s, size) = started(20, 10);
        for h in [2, 6, 3, 1] {
            s.frame(size, &lines(0, 1), PAINT, h, viewport("vp"), || true)
                .unwrap();
        }
        vt.process(&tape.take());
        let rows = all_rows(&mut vt);
        assert_eq!(count(&rows, "vp"), 1, "{rows:#?}");
        assert_eq!(count(&rows, "answer"), 4);
    }

    #[test]
    fn a_frame_made_for_a_size_the_screen_no_longer_has_writes_nothing_and_its_rows_wait() {
        let (tape, mut vt, mut s, size) = started(20, 8);
        s.frame(size, &lines(0, 2), PAINT, 2, viewport("vp"), || false)
            .unwrap();
        assert!(tape.take().is_empty(), "nothing written");
        assert!(s.lost, "the viewport is asked for again");
        s.found(Some((0, 0)), size).unwrap();
        s.frame(size, &lines(2, 3), PAINT, 2, viewport("vp"), || true)
            .unwrap();
        vt.process(&tape.take());
        let rows = all_rows(&mut vt);
        assert_eq!(
            &rows[..3],
            ["answer line 0", "answer line 1", "answer line 2"],
            "the held rows first, once: {rows:#?}"
        );
        assert_eq!(count(&rows, "vp"), 2);
    }

    #[test]
    fn closing_writes_the_rest_and_leaves_the_cursor_below_it() {
        let (tape, mut vt, mut s, size) = started(20, 6);
        s.frame(size, &lines(0, 2), PAINT, 3, viewport("vp"), || true)
            .unwrap();
        s.close(size, &lines(2, 3), PAINT).unwrap();
        vt.process(&tape.take());
        let rows = all_rows(&mut vt);
        assert_eq!(
            &rows[..3],
            ["answer line 0", "answer line 1", "answer line 2"]
        );
        assert!(rows.iter().all(|r| !r.starts_with("vp")), "{rows:#?}");
        assert_eq!(vt.screen().cursor_position(), (3, 0));
    }

    #[test]
    fn a_viewport_found_again_after_a_rewrap_is_redrawn_without_copies() {
        let (tape, mut vt, mut s, size) = started(20, 8);
        s.frame(size, &lines(0, 3), PAINT, 3, viewport("vp"), || true)
            .unwrap();
        vt.process(&tape.take());
        // The terminal got taller; the app asks where the cursor went and draws there.
        vt.screen_mut().set_size(nz(10), nz(20));
        let size = Size::new(20, 10);
        let (y, x) = vt.screen().cursor_position();
        s.found(Some((x, y)), size).unwrap();
        s.frame(size, &lines(3, 4), PAINT, 3, viewport("vp"), || true)
            .unwrap();
        vt.process(&tape.take());
        let rows = all_rows(&mut vt);
        assert_eq!(count(&rows, "answer"), 4, "{rows:#?}");
        assert_eq!(count(&rows, "vp"), 3, "{rows:#?}");
    }
}
