//! `kimi-tui sessions` (list the saved sessions) and `kimi-tui export` (one session as
//! Markdown or as an OpenAI-shape JSON array).

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{ExportArgs, ExportFormat, SessionsArgs};
use kimi_core::session::{self, Session, SessionStore, time::format_utc_minute};
use kimi_protocol::sanitize::for_terminal;

fn store(dir: Option<&Path>) -> Result<SessionStore> {
    match dir {
        Some(d) => {
            check_dir(d).map_err(|e| anyhow::anyhow!("--dir {}: {e}", d.display()))?;
            Ok(SessionStore::new(d))
        }
        None => {
            let store = SessionStore::open_default()?;
            // Not made yet is fine (no sessions yet); there but unreadable is not.
            if store.dir.symlink_metadata().is_ok() {
                check_dir(&store.dir)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", store.dir.display()))?;
            }
            Ok(store)
        }
    }
}

/// A session directory must be a directory that can be read: a file, a typo or a directory
/// without permission is an error, not an empty list.
fn check_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err("not a directory".to_owned()),
        Ok(_) => std::fs::read_dir(dir).map(drop).map_err(|e| io_detail(&e)),
        Err(e) => Err(io_detail(&e)),
    }
}

/// An I/O error without the `(os error N)` tail.
fn io_detail(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

pub fn list(args: &SessionsArgs) -> Result<()> {
    let store = store(args.dir.as_deref())?;
    let list = store.list();
    for p in &list.problems {
        eprintln!("kimi-tui: warning: skipped {}", for_terminal(p));
    }
    if list.sessions.is_empty() {
        let text = if list.problems.is_empty() {
            format!(
                "no sessions yet (they are saved in {})\n",
                store.dir.display()
            )
        } else {
            format!("no readable sessions in {}\n", store.dir.display())
        };
        return super::write_stdout(text.as_bytes());
    }
    let rows: Vec<[String; 5]> = list
        .sessions
        .iter()
        .map(|s| {
            [
                format_utc_minute(s.updated_unix_ms),
                s.id.clone(),
                for_terminal(&s.profile).into_owned(),
                s.turns.to_string(),
                for_terminal(&s.first_line).into_owned(),
            ]
        })
        .collect();
    let header = ["UPDATED (UTC)", "ID", "PROFILE", "TURNS", "FIRST MESSAGE"];
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header.map(str::to_owned)).chain(rows) {
        let [date, id, profile, turns, first] = row;
        out.push_str(&format!(
            "{date:<w0$}  {id:<w1$}  {profile:<w2$}  {turns:>w3$}  {first}",
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
        ));
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
    super::write_stdout(out.as_bytes())
}

/// The session `arg` names: `latest`, an id in the store, or a path to a session file.
fn find(store: &SessionStore, arg: &str) -> Result<Session> {
    if arg == "latest" {
        return store.latest()?.ok_or_else(|| {
            anyhow::anyhow!(
                "no sessions yet (they are saved in {})",
                store.dir.display()
            )
        });
    }
    let opened = if session::is_valid_id(arg) && !arg.ends_with(".json") && !arg.ends_with(".jsonl")
    {
        store.open(arg)?
    } else {
        SessionStore::open_path(Path::new(arg))?
    };
    // A journal whose last record was cut off (a crash mid-write): exported without it.
    if let Some(n) = opened.notice {
        eprintln!("kimi-tui: warning: {}", for_terminal(&n));
    }
    Ok(opened.session)
}

pub fn export(args: &ExportArgs) -> Result<()> {
    let store = store(args.dir.as_deref())?;
    let session = find(&store, &args.session)?;
    let format = args.format.unwrap_or_else(|| {
        match args
            .output
            .as_deref()
            .and_then(Path::extension)
            .and_then(|e| e.to_str())
        {
            Some("json") => ExportFormat::Json,
            _ => ExportFormat::Md,
        }
    });
    let mut text = match format {
        ExportFormat::Md => session::to_markdown(&session),
        ExportFormat::Json => session::to_openai_json(&session),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match &args.output {
        // Model text to a terminal: no escape sequence, C1 or bidi control gets through.
        None if std::io::stdout().is_terminal() => {
            super::write_stdout(for_terminal(&text).as_bytes())
        }
        None => super::write_stdout(text.as_bytes()),
        Some(path) => {
            write_file(path, &text)?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
    }
}

/// Exports hold the whole conversation: mode 0600, in a 0700 directory when one is created.
fn write_file(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        kimi_core::private_fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    kimi_core::private_fs::write(path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
