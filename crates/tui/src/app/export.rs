//! `/export md|json [PATH]`: `update` asks for it ([`super::event::Effect::Export`]); the
//! event loop takes the session as the view holds it, and a blocking task resolves the path
//! (no path: a file named for the session in the directory kimi-tui was started from), writes
//! the file and answers with [`super::event::AppEvent::Exported`].

use std::path::{Path, PathBuf};

use kimi_core::session::{Session, to_markdown, to_openai_json};

use super::state::App;

/// Why an export was not written; shown as a notice.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("Nothing to export: no session is recorded in this run yet.")]
    NoSession,
    #[error("Cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where `/export` without a path writes: `DIR/kimi-ID.md` (or `.json`).
pub(crate) fn default_export_path(dir: &Path, id: &str, markdown: bool) -> PathBuf {
    dir.join(format!(
        "kimi-{id}.{}",
        if markdown { "md" } else { "json" }
    ))
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

/// Write `session` (off the event loop: this does file I/O); returns the path written.
pub(crate) fn write(
    session: &Session,
    markdown: bool,
    path: Option<String>,
) -> Result<PathBuf, ExportError> {
    let path = match path {
        Some(p) => PathBuf::from(p),
        None => {
            let dir = std::env::current_dir().unwrap_or_default();
            default_export_path(&dir, &session.id, markdown)
        }
    };
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

/// The answer of an export: where it went, or why not.
pub(super) fn exported(app: &mut App, result: Result<PathBuf, ExportError>) {
    match result {
        Ok(path) => app.notice(format!("Exported to {}.", path.display()), false),
        Err(e) => app.notice(e.to_string(), true),
    }
}
