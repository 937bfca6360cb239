//! Which saved session a run continues (`--resume`, `--session ID|PATH`), locked for this
//! instance before it is read, so that what another instance saved before it quit is what
//! this one continues from.

use std::path::{Path, PathBuf};

use super::Start;
use kimi_core::session::{
    Session, SessionError, SessionLock, SessionStore, is_valid_id, new_id, time,
};
use kimi_protocol::sanitize::for_terminal;

/// The session store (if there is one), the saved session to continue, a notice.
type Opened = (Option<SessionStore>, Option<Resumed>, Option<String>);

/// A saved session to continue, locked for this instance.
pub struct Resumed {
    pub session: Session,
    pub lock: SessionLock,
    /// Continued under a new id (see [`open_sessions`]): its first write creates a file.
    pub(crate) forked: bool,
    /// Read from a journal, which this run appends to (else an old `.json`: its first write
    /// creates the journal beside it).
    pub journal: bool,
}

/// The session store, the saved session to continue, if asked for, and any notice for the user.
///
/// A second instance on a session is refused (the lock's error names the pid holding it). A
/// session file given by path that differs from the stored session with the same id continues
/// under a new id, so that neither file is replaced; so does one whose id cannot name a file.
pub(crate) fn open_sessions(start: &Start) -> Result<Opened, SessionError> {
    let store = match SessionStore::open_default() {
        Ok(s) => s,
        Err(e) => {
            if start.resume || start.session.is_some() {
                return Err(e);
            }
            return Ok((None, None, Some(format!("Sessions are not saved: {e}"))));
        }
    };
    let path = match &start.session {
        Some(arg) if arg.contains('/') || arg.ends_with(".json") || arg.ends_with(".jsonl") => {
            PathBuf::from(arg)
        }
        _ => return open_stored(store, start),
    };
    let opened = SessionStore::open_path(&path)?;
    let (mut session, journal) = (opened.session, opened.journal);
    let cut = opened.notice.map(|n| for_terminal(&n).into_owned());
    if !is_valid_id(&session.id) {
        let old = fork(&mut session);
        let lock = store.lock(&session.id)?;
        let note = format!(
            "{} has the id `{old}`, which cannot name a file: continuing as new session {}.",
            for_terminal(&path.display().to_string()),
            session.id
        );
        let r = resumed(session, lock, true, journal);
        return Ok((Some(store), Some(r), Some(join(cut, note))));
    }
    // Locked before the stored file is compared: one instance per session.
    let mut lock = store.lock(&session.id)?;
    if !is_other_copy(&store, &path, &session.id) {
        // The store's journal (this file, or one with the same bytes) is appended to; else
        // (an old `.json`, or a journal kept elsewhere) the store gets a new journal, and the
        // file given is never written.
        let stored = std::fs::symlink_metadata(store.journal_path(&session.id)).is_ok();
        let r = resumed(session, lock, false, journal && stored);
        return Ok((Some(store), Some(r), cut));
    }
    let old = fork(&mut session);
    lock = store.lock(&session.id)?;
    let note = format!(
        "{} is a copy of session {old} that differs from the stored one: continuing as new session {} so that neither is overwritten.",
        for_terminal(&path.display().to_string()),
        session.id
    );
    let r = resumed(session, lock, true, journal);
    Ok((Some(store), Some(r), Some(join(cut, note))))
}

/// Two notices as one.
fn join(first: Option<String>, second: String) -> String {
    match first {
        Some(f) => format!("{f}. {second}"),
        None => second,
    }
}

/// `--session ID` or `--resume`: locked by its file name, then read under the lock.
fn open_stored(store: SessionStore, start: &Start) -> Result<Opened, SessionError> {
    let id = match &start.session {
        Some(id) => Some(id.clone()),
        None if start.resume => store.list().sessions.first().map(|s| s.id.clone()),
        None => None,
    };
    let Some(id) = id else {
        let note = start
            .resume
            .then(|| "No saved session to resume yet: starting a new one.".to_owned());
        return Ok((Some(store), None, note));
    };
    let lock = store.lock(&id)?;
    let opened = store.open(&id)?;
    let mut session = opened.session;
    // The file is what is continued, whatever id it holds inside.
    let same_id = session.id == id;
    session.id = id;
    let cut = opened.notice.map(|n| for_terminal(&n).into_owned());
    // A journal holding another id is continued as a new journal only when its header agrees.
    let r = resumed(session, lock, false, opened.journal && same_id);
    Ok((Some(store), Some(r), cut))
}

fn resumed(session: Session, lock: SessionLock, forked: bool, journal: bool) -> Resumed {
    Resumed {
        session,
        lock,
        forked,
        journal,
    }
}

/// Give `session` a new id; returns the old one, made safe to show.
fn fork(session: &mut Session) -> String {
    let new = new_id(time::now_unix_ms());
    for_terminal(&std::mem::replace(&mut session.id, new)).into_owned()
}

/// Whether the session file at `path` (id `id`) is not the store's own file for `id` while the
/// store holds a different file under that id.
fn is_other_copy(store: &SessionStore, path: &Path, id: &str) -> bool {
    let stored = store.path_of(id);
    let same_file = match (std::fs::canonicalize(path), std::fs::canonicalize(&stored)) {
        (Ok(a), Ok(b)) => a == b,
        // Nothing stored under that id: nothing to overwrite.
        (_, Err(_)) => return false,
        _ => false,
    };
    if same_file {
        return false;
    }
    // Byte for byte the same content is the same session, not an older copy.
    !matches!((std::fs::read(path), std::fs::read(&stored)), (Ok(a), Ok(b)) if a == b)
}
