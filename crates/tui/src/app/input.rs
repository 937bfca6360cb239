//! The terminal's input as a stream of events that can be stopped, so that something else
//! can read the terminal (the editor, the answer to a cursor position query).

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;

/// The longest [`Input::stop`] waits for the reader thread.
const STOP_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Crossterm's event stream, started on demand.
#[derive(Default)]
pub(crate) struct Input(Option<EventStream>);

impl Input {
    /// The next event; reading starts again if it was stopped.
    pub(crate) async fn next(&mut self) -> Option<std::io::Result<Event>> {
        self.0.get_or_insert_with(EventStream::new).next().await
    }

    /// Stop reading, and wait until the reader thread has let go of the terminal. The stream
    /// is dropped before any new one is made: its thread holds crossterm's reader while it
    /// waits for input, and lets go only once told to stop (a new stream would wait for it
    /// first). Until it has, what the terminal sends may end up in that thread's hands:
    /// the answer to a cursor position query would then be lost and the query time out.
    pub(crate) fn stop(&mut self) {
        if self.0.take().is_some() {
            // Waits for the reader (then for input, briefly); keys stay queued.
            let _ = crossterm::event::poll(STOP_WAIT);
        }
    }
}
