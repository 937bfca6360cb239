//! `/export md|json [PATH]`: `update` asks for it ([`super::event::Effect::Export`]); the
//! event loop takes the session as the view holds it, and a blocking task resolves the path
//! (`~` is the home directory; a relative path is taken from the directory kimi-tui was
//! started from; no path: a file named for the session there), writes the file and answers
//! with [`super::event::AppEvent::Exported`]. An existing file is replaced only once the user
//! said `y` to the question the answer asks.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kimi_core::session::{Session, to_markdown, to_openai_json};

use super::event::Effect;
use super::state::App;

/// Why an export was not written; shown as a notice.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("Nothing to export: no session is recorded in this run yet.")]
    NoSession,
    #[error("{} exists.", path.display())]
    Exists { path: PathBuf, markdown: bool },
    #[error("Cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An export waiting for the user to say whether it replaces the file at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PendingExport {
    pub(crate) path: PathBuf,
    pub(crate) markdown: bool,
}

/// Where `/export` without a path writes: `DIR/kimi-ID.md` (or `.json`).
pub(crate) fn default_export_path(dir: &Path, id: &str, markdown: bool) -> PathBuf {
    dir.join(format!(
        "kimi-{id}.{}",
        if markdown { "md" } else { "json" }
    ))
}

/// The absolute path a typed `path` names: `~` and `~/...` under `home` (as a shell would
/// expand them; without a home they stay literal), a relative path under `cwd`.
pub(crate) fn resolve(path: &Path, home: Option<&Path>, cwd: &Path) -> PathBuf {
    let under_home = match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => Some(home.join(rest)),
        _ => None,
    };
    let path = under_home.unwrap_or_else(|| path.to_path_buf());
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

/// The session as the view holds it: the recorded session's metadata, the conversation, the
/// traces, and the interrupted answers it keeps.
pub(crate) fn snapshot(app: &App) -> Option<Session> {
    let meta = app.session.as_ref()?;
    let mut s = meta.clone();
    s.messages = app.conversation.clone();
    s.traces.clear();
    for (i, trace) in app.traces.iter().enumerate() {
        let message_index = (app.trace_messages.get(i).copied()).unwrap_or(app.conversation.len());
        s.push_trace(message_index, trace.read().clone());
    }
    s.partial = app.partial.clone();
    s.touch();
    Some(s)
}

/// Write `session` (off the event loop: this does file I/O); returns the absolute path
/// written. A file already there is left alone unless `replace`.
pub(crate) fn write(
    session: &Session,
    markdown: bool,
    path: Option<PathBuf>,
    replace: bool,
) -> Result<PathBuf, ExportError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let path = match path {
        Some(p) => resolve(&p, std::env::home_dir().as_deref(), &cwd),
        None => default_export_path(&cwd, &session.id, markdown),
    };
    if !replace && std::fs::symlink_metadata(&path).is_ok() {
        return Err(ExportError::Exists { path, markdown });
    }
    let text = if markdown {
        to_markdown(session)
    } else {
        to_openai_json(session)
    };
    // The whole conversation: private, like the session file itself.
    kimi_core::private_fs::write(&path, text.as_bytes()).map_err(|source| ExportError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// The answer of an export: where it went, why not, or the question whether to replace.
pub(super) fn exported(app: &mut App, result: Result<PathBuf, ExportError>) {
    match result {
        Ok(path) => app.notice(format!("Exported to {}.", path.display()), false),
        Err(ExportError::Exists { path, markdown }) => {
            app.notice(format!("{} exists. Replace it? y/n", path.display()), false);
            app.export_confirm = Some(PendingExport { path, markdown });
        }
        Err(e) => app.notice(e.to_string(), true),
    }
}

/// A key while the question of [`exported`] is open: `y` exports again over the file; `n` or
/// Esc keeps it. Returns whether the key was the answer; any other key drops the question
/// (the file is kept, and said so) and goes on to the input.
pub(crate) fn confirm_key(app: &mut App, k: &KeyEvent, fx: &mut Vec<Effect>) -> bool {
    let Some(pending) = app.export_confirm.take() else {
        return false;
    };
    let plain = !k
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match k.code {
        KeyCode::Char('y' | 'Y') if plain => {
            fx.push(Effect::Export {
                markdown: pending.markdown,
                path: Some(pending.path),
                replace: true,
            });
            true
        }
        KeyCode::Char('n' | 'N') if plain => {
            kept(app, &pending.path);
            true
        }
        KeyCode::Esc => {
            kept(app, &pending.path);
            true
        }
        _ => {
            kept(app, &pending.path);
            false
        }
    }
}

fn kept(app: &mut App, path: &Path) {
    app.notice(format!("Not exported: {} is kept.", path.display()), false);
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use std::path::Path;

    #[test]
    fn a_tilde_is_the_home_directory_and_a_relative_path_the_working_one() {
        let (home, cwd) = (Some(Path::new("/home/u")), Path::new("/work/dir"));
        let r = |p: &str| resolve(Path::new(p), home, cwd);
        assert_eq!(r("~/out.json"), Path::new("/home/u/out.json"));
        assert_eq!(r("~"), Path::new("/home/u"));
        assert_eq!(r("out.json"), Path::new("/work/dir/out.json"));
        assert_eq!(r("/tmp/a.json"), Path::new("/tmp/a.json"));
        // Someone else's home is not guessed at: a file under the working directory.
        assert_eq!(r("~bob/x"), Path::new("/work/dir/~bob/x"));
        // Without a home, `~` stays a name.
        assert_eq!(
            resolve(Path::new("~/x"), None, cwd),
            Path::new("/work/dir/~/x")
        );
    }
}
