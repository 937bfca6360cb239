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

/// Open `path` with `options` unless it is a symbolic link: a link planted where kimi-tui keeps
/// its own files (a session lock, a journal, the prompt history) would otherwise make it
/// truncate or append to whatever file the link points at. The error then names the path.
pub fn open_no_follow(options: &mut OpenOptions, path: &Path) -> io::Result<File> {
    options
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| refuse_symlink(path, e))
}

/// `e` from an open with `O_NOFOLLOW`, in words when it is the link that was refused.
fn refuse_symlink(path: &Path, e: io::Error) -> io::Error {
    let is_link = e.raw_os_error() == Some(libc::ELOOP)
        && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return e;
    }
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is a symbolic link, which kimi-tui does not follow for its own files; remove it",
            path.display()
        ),
    )
}

/// Open `path` for writing, created 0600 (truncated when `truncate`, else appended to). An
/// existing file is brought to 0600 too: what is written now is as private as a new file.
/// With `no_follow`, a symbolic link at `path` is refused ([`open_no_follow`]).
fn open(path: &Path, truncate: bool, no_follow: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create(true).mode(FILE_MODE);
    if truncate {
        o.truncate(true);
    } else {
        o.append(true);
    }
    let f = if no_follow {
        open_no_follow(&mut o, path)?
    } else {
        o.open(path)?
    };
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
    let mut f = open(path, true, false)?;
    f.write_all(bytes)?;
    f.flush()
}

/// [`write`] for a file of kimi-tui's own (never a path the user named): a symbolic link at
/// `path` is refused rather than followed.
pub fn write_no_follow(path: &Path, bytes: &[u8]) -> io::Result<()> {
    create_parent(path)?;
    let mut f = open(path, true, true)?;
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
    open(path, false, false)
}

/// [`append`] for a file of kimi-tui's own: a symbolic link at `path` is refused.
pub fn append_no_follow(path: &Path) -> io::Result<File> {
    create_parent(path)?;
    open(path, false, true)
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

    #[test]
    fn own_files_are_never_opened_through_a_symbolic_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "the user's file").expect("write");
        let link = dir.path().join("planted");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        for e in [
            append_no_follow(&link).map(|_| ()).expect_err("append"),
            write_no_follow(&link, b"x").expect_err("write"),
        ] {
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
            assert!(e.to_string().contains(&link.display().to_string()), "{e}");
        }
        // A dangling link is refused too (O_CREAT would create its target).
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        assert!(append_no_follow(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(
            fs::read_to_string(&victim).expect("read"),
            "the user's file"
        );
        // A regular file is opened as before.
        let own = dir.path().join("own.jsonl");
        append_no_follow(&own)
            .expect("open")
            .write_all(b"1\n")
            .expect("w");
        write_no_follow(&own, b"2\n").expect("write");
        assert_eq!(fs::read_to_string(&own).expect("read"), "2\n");
    }
}
