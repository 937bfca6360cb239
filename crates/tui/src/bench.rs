//! What the criterion benches reach: they are crates of their own, and everything else in
//! kimi-ui is private to it. An app as `kimi-tui` starts one (raw mode, no tools), fed the way
//! the event loop feeds it and drawn on a 120x40 screen the way it draws it. Not an API.

use std::time::Instant;

use crossterm::event::Event;
use kimi_core::engine::SharedTrace;
use kimi_core::tools::Toolbox;
use kimi_protocol::{Mode, Trace};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

use crate::app::event::AppEvent;
use crate::app::state::{App, AssistantTurn, Connection, Entry, TurnState};
use crate::ui;

pub use crate::app::paste::MAX_DRAFT_BYTES;
pub use crate::ui::markdown::{MarkdownCache, Theme, render};

/// The screen every bench draws.
pub const AREA: Rect = Rect::new(0, 0, 120, 40);

/// An app and the terminal it is drawn on.
pub struct BenchApp {
    app: App,
    term: Terminal<TestBackend>,
    theme: Theme,
}

impl Default for BenchApp {
    fn default() -> Self {
        Self::new()
    }
}

impl BenchApp {
    pub fn new() -> Self {
        let connection = Connection {
            profile: "bench".into(),
            mode: Mode::Raw,
            model: "m".into(),
            host: "127.0.0.1:8000".into(),
        };
        BenchApp {
            app: App::new(connection, Toolbox::default(), None),
            term: Terminal::new(TestBackend::new(AREA.width, AREA.height))
                .unwrap_or_else(|e| match e {}),
            theme: Theme::default(),
        }
    }

    /// One frame, as the event loop draws it: laid out, then drawn.
    pub fn frame(&mut self) {
        ui::prepare(&mut self.app, AREA, &self.theme);
        let app = &self.app;
        // The test backend cannot fail.
        let _ = self.term.draw(|f| ui::draw(f, std::hint::black_box(app)));
    }

    /// The layout half of a frame (the views' caches), without drawing.
    pub fn prepare(&mut self) {
        ui::prepare(&mut self.app, AREA, &self.theme);
    }

    /// A terminal event (a key, a paste) through `update`; how many effects it returned.
    pub fn feed(&mut self, event: Event) -> usize {
        crate::app::update::update(&mut self.app, AppEvent::Terminal(event), Instant::now()).len()
    }

    /// A user message in the transcript.
    pub fn push_user(&mut self, text: &str) {
        let e = Entry::User {
            id: Default::default(),
            text: text.to_owned(),
        };
        self.app.transcript.entries.push(e);
    }

    /// An answer in the transcript: finished, or the one streaming now.
    pub fn push_answer(&mut self, text: &str, done: bool) {
        let mut t = AssistantTurn::new(None);
        t.push_text(text);
        if done {
            t.state = TurnState::Done;
        }
        let entries = &mut self.app.transcript.entries;
        entries.push(Entry::Assistant(Box::new(t)));
        if !done {
            self.app.transcript.turn_entry = Some(entries.len() - 1);
        }
    }

    /// A token arrives for the last answer.
    pub fn push_token(&mut self, token: &str) {
        if let Some(Entry::Assistant(t)) = self.app.transcript.entries.last_mut() {
            t.push_text(token);
        }
    }

    /// A request's trace, as the agent shares it with the app.
    pub fn push_trace(&mut self, trace: Trace) {
        self.app.traces.push(trace.into());
    }

    /// The last trace: the agent adds chunks to it in place.
    pub fn last_trace(&self) -> Option<&SharedTrace> {
        self.app.traces.last()
    }

    /// Open the inspector at the end of the latest trace.
    pub fn open_inspector(&mut self) {
        self.app.layers.inspector.open = true;
        self.app.layers.inspector.scroll = usize::MAX / 2;
    }

    /// The inspector's first visible line.
    pub fn inspector_scroll(&self) -> usize {
        self.app.layers.inspector.scroll
    }

    /// Scroll the inspector to the top and forget the last search or stall hit.
    pub fn inspector_to_top(&mut self) {
        self.app.layers.inspector.scroll = 0;
        self.app.layers.inspector.hit = None;
    }

    /// Select the last token of the token view.
    pub fn select_last_token(&mut self) {
        self.app.layers.inspector.tokens.selected = usize::MAX;
    }
}
