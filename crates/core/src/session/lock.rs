//! One writer per session: an advisory `flock` on `ID.lock` beside the session file, held for
//! as long as an instance has the session open. A second instance is refused (rather than
//! continued under a new id) because the user asked for this very conversation: a silent fork
//! would leave two diverging copies and no hint which one is which.
//!
//! The lock file stays after use: removing it could let two instances lock two different
//! files of the same name. The lock itself dies with the process, `kill -9` included.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use super::{SessionError, SessionStore, io_error, is_valid_id};

/// Held while this instance writes the session `id`; dropping it releases the lock.
#[derive(Debug)]
pub struct SessionLock {
    pub id: String,
    pub path: PathBuf,
    _file: File,
}

impl SessionStore {
    /// Where the lock of session `id` lives.
    pub(crate) fn lock_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.lock"))
    }

    /// Take the lock on session `id`, or [`SessionError::Locked`] naming the process holding it.
    pub fn lock(&self, id: &str) -> Result<SessionLock, SessionError> {
        if !is_valid_id(id) {
            return Err(SessionError::BadId(id.to_owned()));
        }
        crate::private_fs::create_dir_all(&self.dir)
            .map_err(|e| io_error("create the directory", &self.dir, &e))?;
        let path = self.lock_path(id);
        // Truncated to write the pid: never through a link planted in its place.
        let mut file = crate::private_fs::open_no_follow(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(crate::private_fs::FILE_MODE),
            &path,
        )
        .map_err(|e| io_error("open the lock file", &path, &e))?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(SessionError::Locked {
                    id: id.to_owned(),
                    pid: text.trim().parse().ok(),
                });
            }
            return Err(io_error("lock", &path, &e));
        }
        // The holder's pid, for the message the next instance shows; best effort.
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        Ok(SessionLock {
            id: id.to_owned(),
            path,
            _file: file,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = "20261201-000000-abcd";
        let held = store.lock(id).expect("first");
        let mode = std::fs::metadata(&held.path)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // flock locks belong to the open file description: a second open conflicts even here.
        let e = store.lock(id).expect_err("second");
        assert_eq!(
            e,
            SessionError::Locked {
                id: id.into(),
                pid: Some(std::process::id())
            }
        );
        assert!(
            e.to_string().contains(&std::process::id().to_string()),
            "{e}"
        );
        drop(held);
        store.lock(id).expect("free again");
        assert!(matches!(store.lock("../x"), Err(SessionError::BadId(_))));
    }

    #[test]
    fn a_lock_file_planted_as_a_symbolic_link_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path().join("sessions"));
        std::fs::create_dir_all(&store.dir).expect("mkdir");
        let victim = dir.path().join("notes.txt");
        std::fs::write(&victim, "my notes\n").expect("write");
        let id = "20261201-000000-abcd";
        std::os::unix::fs::symlink(&victim, store.lock_path(id)).expect("symlink");
        let e = store.lock(id).expect_err("a link");
        let text = e.to_string();
        assert!(text.contains("symbolic link"), "{text}");
        assert!(
            text.contains(&store.lock_path(id).display().to_string()),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).expect("read"),
            "my notes\n"
        );
    }
}
