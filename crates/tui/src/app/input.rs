//! The terminal's input as a stream of events that can be stopped, so that something else
//! can read the terminal (the editor, the answer to a cursor position query).

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;

/// Crossterm's event stream, started on demand.
#[derive(Default)]
pub(crate) struct Input(Option<EventStream>);

impl Input {
    /// The next event; reading starts again if it was stopped.
    pub(crate) async fn next(&mut self) -> Option<std::io::Result<Event>> {
        self.0.get_or_insert_with(EventStream::new).next().await
    }

    /// Stop reading. The stream is dropped before any new one is made: its reader thread
    /// holds crossterm's reader while it waits for input, and lets go only once told to stop
    /// (a new stream would wait for it first).
    pub(crate) fn stop(&mut self) {
        drop(self.0.take());
    }
}
