//! Which saved session a run continues (`--resume`, `--session ID|PATH`, a pick in
//! `/sessions`), locked for this instance before it is read, so that what another instance
//! saved before it quit is what this one continues from.

use std::path::{Path, PathBuf};

use super::{Session, SessionError, SessionLock, SessionStore, is_valid_id, new_id, time};
use kimi_protocol::sanitize::for_terminal;

/// A saved session to continue, locked for this instance.
#[derive(Debug)]
pub struct Resumed {
    pub session: Session,
    pub lock: SessionLock,
    /// Continued under a new id: its first write creates a file holding all of it.
    pub forked: bool,
    /// Read from the store's journal, which this run appends to (else an old `.json`, or a
    /// journal kept elsewhere: the store gets a new journal holding all of it, and the file
    /// read is never written).
    pub journal: bool,
    /// What to tell the user (a cut-off last record, a fork), made safe to show.
    pub notice: Option<String>,
}

/// The session `--resume` (`latest`) or `--session ARG` names, locked and read; `None` when
/// neither asks for one, or `--resume` finds none (then a notice says so).
///
/// A second instance on a session is refused (the lock's error names the pid holding it). A
/// session file given by path that differs from the stored session with the same id continues
/// under a new id, so that neither file is replaced; so does one whose id cannot name a file.
pub fn open_for_start(
    store: &SessionStore,
    latest: bool,
    arg: Option<&str>,
) -> Result<(Option<Resumed>, Option<String>), SessionError> {
    let path = match arg {
        Some(arg) if arg.contains('/') || arg.ends_with(".json") || arg.ends_with(".jsonl") => {
            PathBuf::from(arg)
        }
        Some(id) => return open_stored(store, id).map(|r| (Some(r), None)),
        None if latest => {
            return match store.list().sessions.first() {
                Some(s) => open_stored(store, &s.id.clone()).map(|r| (Some(r), None)),
                None => Ok((
                    None,
                    Some("No saved session to resume yet: starting a new one.".to_owned()),
                )),
            };
        }
        None => return Ok((None, None)),
    };
    open_path(store, &path).map(|r| (Some(r), None))
}

fn open_path(store: &SessionStore, path: &Path) -> Result<Resumed, SessionError> {
    let opened = SessionStore::open_path(path)?;
    let (mut session, journal) = (opened.session, opened.journal);
    let cut = opened.notice.map(|n| for_terminal(&n).into_owned());
    let shown = for_terminal(&path.display().to_string()).into_owned();
    if !is_valid_id(&session.id) {
        let old = fork(&mut session);
        let lock = store.lock(&session.id)?;
        let note = format!(
            "{shown} has the id `{}`, which cannot name a file: continuing as new session {}.",
            kimi_protocol::sanitize::one_line(&old, 80),
            session.id
        );
        return Ok(resumed(session, lock, true, journal, Some(join(cut, note))));
    }
    // Locked before the stored file is compared: one instance per session.
    let lock = store.lock(&session.id)?;
    if !is_other_copy(store, path, &session.id) {
        let stored = std::fs::symlink_metadata(store.journal_path(&session.id)).is_ok();
        return Ok(resumed(session, lock, false, journal && stored, cut));
    }
    drop(lock);
    let old = fork(&mut session);
    let lock = store.lock(&session.id)?;
    let note = format!(
        "{shown} is a copy of session {old} that differs from the stored one: continuing as new session {} so that neither is overwritten.",
        session.id
    );
    Ok(resumed(session, lock, true, journal, Some(join(cut, note))))
}

/// Session `id` of the store: locked by its file name, then read under the lock. The file is
/// what is continued, whatever id it holds inside.
pub fn open_stored(store: &SessionStore, id: &str) -> Result<Resumed, SessionError> {
    let lock = store.lock(id)?;
    let opened = store.open(id)?;
    let mut session = opened.session;
    let same_id = session.id == id;
    session.id = id.to_owned();
    let cut = opened.notice.map(|n| for_terminal(&n).into_owned());
    // A journal holding another id is continued as a new journal only when its header agrees.
    Ok(resumed(
        session,
        lock,
        false,
        opened.journal && same_id,
        cut,
    ))
}

fn resumed(
    session: Session,
    lock: SessionLock,
    forked: bool,
    journal: bool,
    notice: Option<String>,
) -> Resumed {
    Resumed {
        session,
        lock,
        forked,
        journal,
        notice,
    }
}

/// Two notices as one.
fn join(first: Option<String>, second: String) -> String {
    match first {
        Some(f) => format!("{f}. {second}"),
        None => second,
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
