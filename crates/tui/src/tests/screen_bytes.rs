//! The terminal modes around the drawing, as bytes: each frame is one synchronized update, and
//! without mouse capture the wheel is not turned into arrow keys (alternate scroll off), until
//! the terminal is given back.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use crate::app::state::{App, Connection};
use crate::app::{frame, terminal};
use crate::ui;
use kimi_core::tools::Toolbox;
use kimi_protocol::Mode;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

const BEGIN_SYNC: &[u8] = b"\x1b[?2026h";
const END_SYNC: &[u8] = b"\x1b[?2026l";
const ALT_SCROLL_OFF: &[u8] = b"\x1b[?1007l";
const ALT_SCROLL_ON: &[u8] = b"\x1b[?1007h";

/// The bytes the backend writes, kept where the test can read them after the draw.
#[derive(Clone, Default)]
struct Written(Rc<RefCell<Vec<u8>>>);

impl Write for Written {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn app() -> App {
    let connection = Connection {
        profile: "test".into(),
        mode: Mode::Raw,
        model: "m".into(),
        host: "127.0.0.1:1".into(),
    };
    App::new(connection, Toolbox::new(vec![]).expect("tools"), None)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn each_frame_is_one_synchronized_update() {
    let mut app = app();
    let area = Rect::new(0, 0, 80, 24);
    let written = Written::default();
    let mut term = Terminal::with_options(
        CrosstermBackend::new(written.clone()),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
    .expect("terminal");
    let theme = ui::markdown::Theme::default();
    // The first frame draws the welcome; the second has nothing new to draw, and is still
    // bracketed (the cursor is placed inside the update too).
    for first in [true, false] {
        ui::prepare(&mut app, area, &theme);
        frame::draw(&mut term, &app).expect("draw");
        let bytes = written.0.take();
        assert!(
            bytes.starts_with(BEGIN_SYNC),
            "{:?}",
            String::from_utf8_lossy(&bytes)
        );
        assert!(
            bytes.ends_with(END_SYNC),
            "{:?}",
            String::from_utf8_lossy(&bytes)
        );
        assert_eq!(count(&bytes, BEGIN_SYNC), 1);
        assert_eq!(count(&bytes, END_SYNC), 1);
        assert_eq!(contains(&bytes, b"kimi-tui"), first);
    }
}

#[test]
fn without_mouse_capture_alternate_scroll_is_off_until_the_terminal_is_left() {
    let mut entered = Vec::new();
    terminal::write_enter(&mut entered, false, true).expect("enter");
    assert!(contains(&entered, ALT_SCROLL_OFF));
    assert!(!contains(&entered, ALT_SCROLL_ON));
    let mut left = Vec::new();
    terminal::write_leave(&mut left).expect("leave");
    assert!(contains(&left, ALT_SCROLL_ON));
    assert!(!contains(&left, ALT_SCROLL_OFF));
}

#[test]
fn toggling_the_mouse_off_turns_alternate_scroll_off() {
    let mut off = Vec::new();
    terminal::write_mouse(&mut off, false).expect("mouse off");
    assert!(contains(&off, ALT_SCROLL_OFF));
    // With capture on the app gets the wheel itself: no arrow keys to stop.
    let mut on = Vec::new();
    terminal::write_mouse(&mut on, true).expect("mouse on");
    assert!(!contains(&on, ALT_SCROLL_OFF));
    assert!(contains(&on, b"\x1b[?1000h"));
    let mut entered = Vec::new();
    terminal::write_enter(&mut entered, true, true).expect("enter");
    assert!(contains(&entered, b"\x1b[?1000h"));
    assert!(!contains(&entered, ALT_SCROLL_OFF));
}
