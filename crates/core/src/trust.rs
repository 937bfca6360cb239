//! Which working directories the user trusts: a trusted directory's `.kimi-tui/rules.toml`
//! may allow calls; an untrusted one's only denies or asks. Remembered in the user's state
//! directory (`trusted-dirs.toml`), keyed by canonical path, so a symlink or `..` does not
//! make a new directory look trusted, nor a trusted one look new.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why trust could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("no state directory to remember trusted directories in")]
    NoStateDir,
    #[error("cannot resolve {}: {source}", path.display())]
    Resolve { path: PathBuf, source: io::Error },
    #[error("cannot save {}: {source}", path.display())]
    Save { path: PathBuf, source: io::Error },
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    trusted: BTreeSet<PathBuf>,
}

/// The file the trusted directories are kept in: `STATE/trusted-dirs.toml`.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "kimi-tui").map(|d| {
        d.state_dir()
            .unwrap_or(d.data_local_dir())
            .join("trusted-dirs.toml")
    })
}

/// Whether the user trusts `dir` (false when it cannot be told: trust is never assumed).
pub fn is_trusted(dir: &Path) -> bool {
    default_path().is_some_and(|f| is_trusted_in(&f, dir))
}

/// Remember that the user trusts `dir`.
pub fn trust(dir: &Path) -> Result<(), TrustError> {
    trust_in(&default_path().ok_or(TrustError::NoStateDir)?, dir)
}

/// [`is_trusted`] with the list kept in `file`.
pub fn is_trusted_in(file: &Path, dir: &Path) -> bool {
    let (Ok(dir), Ok(list)) = (dir.canonicalize(), read(file)) else {
        return false;
    };
    list.trusted.contains(&dir)
}

/// [`trust`] with the list kept in `file`.
pub fn trust_in(file: &Path, dir: &Path) -> Result<(), TrustError> {
    let dir = dir.canonicalize().map_err(|source| TrustError::Resolve {
        path: dir.to_owned(),
        source,
    })?;
    let mut list = read(file)?;
    if list.trusted.insert(dir) {
        let text = toml::to_string(&list).map_err(|e| TrustError::Parse {
            path: file.to_owned(),
            message: e.to_string(),
        })?;
        crate::private_fs::write_no_follow(file, text.as_bytes()).map_err(|source| {
            TrustError::Save {
                path: file.to_owned(),
                source,
            }
        })?;
    }
    Ok(())
}

fn read(file: &Path) -> Result<TrustFile, TrustError> {
    match std::fs::read_to_string(file) {
        Ok(text) => toml::from_str(&text).map_err(|e| TrustError::Parse {
            path: file.to_owned(),
            message: e.message().to_owned(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(TrustFile::default()),
        Err(source) => Err(TrustError::Resolve {
            path: file.to_owned(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_remembered_by_canonical_path() {
        let tmp = tempfile::tempdir().expect("tmp");
        let file = tmp.path().join("state/trusted-dirs.toml");
        let project = tmp.path().join("project");
        std::fs::create_dir_all(project.join("sub")).expect("mkdir");
        assert!(!is_trusted_in(&file, &project));
        trust_in(&file, &project.join("sub/..")).expect("trust");
        assert!(is_trusted_in(&file, &project));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&project, &link).expect("symlink");
        assert!(is_trusted_in(&file, &link));
        assert!(!is_trusted_in(&file, &project.join("sub")));
        // Trusting twice keeps one entry.
        trust_in(&file, &project).expect("again");
        let text = std::fs::read_to_string(&file).expect("read");
        assert_eq!(text.matches("project").count(), 1, "{text}");
    }

    #[test]
    fn a_broken_list_trusts_nothing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let file = tmp.path().join("trusted-dirs.toml");
        std::fs::write(&file, "trusted = 3").expect("write");
        assert!(!is_trusted_in(&file, tmp.path()));
        assert!(matches!(
            trust_in(&file, tmp.path()),
            Err(TrustError::Parse { .. })
        ));
    }
}
