//! What [`Op::Record`](super::Op::Record) hands the agent: a session to record into, taken
//! once. A lock travels with a resumed session, so the handoff is shared, not copied.

use std::sync::{Arc, Mutex};

use crate::session::{Resumed, Session, SessionStore};

/// A session for the agent to record into. Clones share the one handoff: the first
/// [`Op::Record`](super::Op::Record) applied takes it.
#[derive(Clone)]
pub struct SessionHandoff(Arc<Mutex<Option<Handoff>>>);

pub(crate) enum Handoff {
    /// A new session (nothing is written until its first message).
    New {
        store: SessionStore,
        meta: Box<Session>,
    },
    /// A saved session, locked and read: its history is reported, then recorded on.
    Resume {
        store: SessionStore,
        resumed: Box<Resumed>,
    },
}

impl SessionHandoff {
    /// Record a new session, `meta`, into `store`.
    pub fn new_session(store: SessionStore, meta: Session) -> Self {
        Self::of(Handoff::New {
            store,
            meta: Box::new(meta),
        })
    }

    /// Continue `resumed` (see [`crate::session::open_for_start`]) in `store`.
    pub fn resume(store: SessionStore, resumed: Resumed) -> Self {
        Self::of(Handoff::Resume {
            store,
            resumed: Box::new(resumed),
        })
    }

    fn of(h: Handoff) -> Self {
        SessionHandoff(Arc::new(Mutex::new(Some(h))))
    }

    pub(crate) fn take(&self) -> Option<Handoff> {
        self.0.lock().ok()?.take()
    }
}

/// The same handoff.
impl PartialEq for SessionHandoff {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SessionHandoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionHandoff")
    }
}
