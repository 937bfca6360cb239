//! Files and directories only the user can read: every file kimi-tui writes (sessions, exports,
//! inspector dumps, logs, lock files, the example config) is mode 0600 and every directory it
//! creates 0700, whatever the umask. Conversations and traces can hold anything the user typed.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Mode of every file kimi-tui writes.
pub const FILE_MODE: u32 = 0o600;
/// Mode of every directory kimi-tui creates.
pub(crate) const DIR_MODE: u32 = 0o700;

/// Create `dir` and its missing parents with mode 0700; existing ones are left as they are
/// (they may be the user's own, such as `~/.config`).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
}

/// Create the parent directory of `path` (0700) when it is missing.
pub(crate) fn create_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) => create_dir_all(p),
        None => Ok(()),
    }
}

/// Open `path` for writing, created 0600 (truncated when `truncate`, else appended to). An
/// existing file is brought to 0600 too: what is written now is as private as a new file.
fn open(path: &Path, truncate: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create(true).mode(FILE_MODE);
    if truncate {
        o.truncate(true);
    } else {
        o.append(true);
    }
    let f = o.open(path)?;
    let meta = f.metadata()?;
    // Only a regular file: `-o /dev/stdout` must not change the terminal device's mode.
    if meta.is_file() && meta.permissions().mode() & 0o777 != FILE_MODE {
        f.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(f)
}

/// Write `bytes` to `path` (replacing its contents) with mode 0600, creating the parent
/// directory (0700) if needed: `std::fs::write` for private data.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create_parent(path)?;
    let mut f = open(path, true)?;
    f.write_all(bytes)?;
    f.flush()
}

/// Write `bytes` to a new file `DIR/STEM.EXT` (0600, `dir` created 0700), or `STEM-2.EXT`,
/// `STEM-3.EXT`... when that exists: an existing file is never replaced. Returns its path.
pub fn create_numbered(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    create_dir_all(dir)?;
    for n in 1..1000 {
        let name = match n {
            1 => format!("{stem}.{ext}"),
            n => format!("{stem}-{n}.{ext}"),
        };
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(bytes)?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{stem}.{ext} and 998 numbered copies exist"),
    ))
}

/// Open `path` for appending with mode 0600 (a log file), creating the parent directory.
pub fn append(path: &Path) -> io::Result<File> {
    create_parent(path)?;
    open(path, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn new_and_existing_files_end_up_private() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("a/b/out.md");
        write(&path, b"hello").expect("write");
        assert_eq!(mode(&path), FILE_MODE);
        assert_eq!(mode(&dir.path().join("a")), DIR_MODE);
        assert_eq!(mode(&dir.path().join("a/b")), DIR_MODE);
        let open_file = dir.path().join("open.txt");
        fs::write(&open_file, "old and longer").expect("write");
        fs::set_permissions(&open_file, fs::Permissions::from_mode(0o644)).expect("chmod");
        write(&open_file, b"new").expect("write");
        assert_eq!(mode(&open_file), FILE_MODE);
        assert_eq!(fs::read_to_string(&open_file).expect("read"), "new");
        let log = dir.path().join("logs/x.log");
        append(&log).expect("open").write_all(b"1\n").expect("w");
        append(&log).expect("open").write_all(b"2\n").expect("w");
        assert_eq!(fs::read_to_string(&log).expect("read"), "1\n2\n");
        assert_eq!(mode(&log), FILE_MODE);
        let dumps = dir.path().join("state");
        let a = create_numbered(&dumps, "dump", "txt", b"one").expect("first");
        let b = create_numbered(&dumps, "dump", "txt", b"two").expect("second");
        assert_eq!(
            (a.file_name(), b.file_name()),
            (Some("dump.txt".as_ref()), Some("dump-2.txt".as_ref()))
        );
        assert_eq!(fs::read_to_string(&a).expect("read"), "one");
        assert_eq!(
            (mode(&a), mode(&b), mode(&dumps)),
            (FILE_MODE, FILE_MODE, DIR_MODE)
        );
    }
}
