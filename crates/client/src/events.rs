//! The events a decoder made of what it was given, waiting to be handed out one at a time by
//! the turn's stream: decoders push here instead of calling back into their caller, so no
//! callback crosses an `await`, and the stream reads the socket again only once it is empty.

use std::collections::VecDeque;

use kimi_protocol::StreamEvent;

/// A first-in, first-out queue of decoded events.
#[derive(Debug, Default)]
pub(crate) struct Events(VecDeque<StreamEvent>);

impl Events {
    pub(crate) fn push(&mut self, event: StreamEvent) {
        self.0.push_back(event);
    }

    pub(crate) fn pop(&mut self) -> Option<StreamEvent> {
        self.0.pop_front()
    }

    /// Queue everything `other` holds after what is queued.
    pub(crate) fn append(&mut self, other: Events) {
        self.0.extend(other.0);
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Everything queued, in order (for tests and synchronous callers).
    #[cfg(test)]
    pub(crate) fn into_vec(self) -> Vec<StreamEvent> {
        self.0.into()
    }
}

impl Extend<StreamEvent> for Events {
    fn extend<T: IntoIterator<Item = StreamEvent>>(&mut self, iter: T) {
        self.0.extend(iter);
    }
}
