//! A request's trace, written by the agent alone and read in place by whoever shows or saves
//! it. The agent builds each trace from its stream's events (`Trace::record`) behind a lock;
//! the TUI holds a handle to the same trace and reads it for a frame: one copy of every chunk,
//! live while it streams.

use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};

use kimi_protocol::{StreamEvent, Trace};

/// A shared, read-only (outside the builder) handle to one trace.
#[derive(Clone, Default)]
pub struct SharedTrace(Arc<RwLock<Trace>>);

impl SharedTrace {
    pub fn new(trace: Trace) -> Self {
        SharedTrace(Arc::new(RwLock::new(trace)))
    }

    /// The trace as it stands. Hold the guard briefly: the agent waits for it to add a chunk.
    pub fn read(&self) -> RwLockReadGuard<'_, Trace> {
        // A panic while recording leaves a trace that is still whole (each change is one push).
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Record one event of the trace's stream (see [`Trace::record`]): the only way in.
    pub fn record(&self, event: &StreamEvent) {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .record(event);
    }

    /// Whether both handles are the same trace.
    pub fn same(&self, other: &SharedTrace) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Equal when both handles are the same trace (what an [`Op`](super::Op) compares).
impl PartialEq for SharedTrace {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

impl From<Trace> for SharedTrace {
    fn from(trace: Trace) -> Self {
        SharedTrace::new(trace)
    }
}

// By hand: a whole trace is megabytes; its identity is enough in a debug line.
impl std::fmt::Debug for SharedTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.read();
        f.debug_struct("SharedTrace")
            .field("url", &t.url)
            .field("chunks", &t.chunks.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_sees_what_the_builder_records_without_a_copy() {
        let writer = SharedTrace::default();
        let reader = writer.clone();
        assert!(reader.same(&writer));
        writer.record(&StreamEvent::Chunk {
            data: "Hel".into(),
            at_us: 3,
        });
        assert_eq!(reader.read().data, "Hel");
        writer.record(&StreamEvent::Chunk {
            data: "lo".into(),
            at_us: 4,
        });
        assert_eq!(reader.read().chunks().count(), 2);
        assert!(!reader.same(&SharedTrace::new(reader.read().clone())));
    }
}
