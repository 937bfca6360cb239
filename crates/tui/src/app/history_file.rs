//! The prompt history across runs: `<data dir>/kimi-tui/history.jsonl` (beside `sessions/`),
//! one JSON string per line (so multi-line prompts round-trip), mode 0600 in a 0700 directory.
//! Appended by a writer thread (the UI never waits for the disk); when it holds more than
//! [`CAP`] + [`SLACK`] entries it is rewritten with the newest [`CAP`] (a new file renamed over
//! it). A prompt equal to the one before is not added, nor one over [`ENTRY_MAX`] bytes; one
//! that contains the profile's API key is never written. A line that cannot be read (a crash mid-write) is skipped.

use kimi_core::redactor::Redactor;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Entries kept.
pub(crate) const CAP: usize = 1000;
/// Entries beyond the cap before the file is compacted: a rewrite every SLACK prompts at most.
pub(crate) const SLACK: usize = 100;
/// Longest prompt written: a pasted log of up to the 1 MiB draft cap would make the file (and
/// every start, which reads it) up to a gigabyte; such a prompt is in its session anyway.
pub(crate) const ENTRY_MAX: usize = 64 << 10;

/// The history file and its writer thread.
pub(crate) struct HistoryFile {
    path: PathBuf,
    tx: Option<mpsc::Sender<String>>,
    thread: Option<JoinHandle<()>>,
    /// The API keys, as the core hands them over (checked, never read): a prompt holding
    /// one is not written.
    secrets: Redactor,
}

impl std::fmt::Debug for HistoryFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        f.debug_struct("HistoryFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Where the history lives: beside the sessions directory, in the data directory.
pub(crate) fn default_path() -> Option<PathBuf> {
    let store = kimi_core::session::SessionStore::open_default().ok()?;
    Some(store.dir.parent()?.join("history.jsonl"))
}

/// Most bytes of the file read at start: its newest part. A thousand prompts of ordinary length
/// fit many times over; a file grown far beyond (written by something else, or a link to a
/// device) costs a bounded read, never the whole file in memory.
pub(crate) const READ_MAX: u64 = 16 << 20;
/// Longest line kept while reading: an entry of [`ENTRY_MAX`] bytes with every byte escaped
/// (`\u00XX`) and its quotes. A longer line is skipped as it is read, never held whole.
const LINE_MAX: usize = ENTRY_MAX * 6 + 2;

/// The entries in the file at `path`, oldest first, the newest [`CAP`] of them, read from its
/// last [`READ_MAX`] bytes. A missing file is an empty history.
pub(crate) fn load(path: &Path) -> io::Result<Vec<String>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    // Started mid-file: from the byte before, so that the line cut there is skipped whole
    // (just the newline when the cut fell on a line start).
    let partial_first = len > READ_MAX;
    if partial_first {
        f.seek(SeekFrom::Start(len - READ_MAX - 1))?;
    }
    let mut reader = BufReader::new(f.take(READ_MAX + 1));
    let mut out = std::collections::VecDeque::with_capacity(CAP.min(64));
    let mut line = Vec::new();
    let mut skip = partial_first;
    loop {
        line.clear();
        let (read, whole) = read_line_capped(&mut reader, &mut line, LINE_MAX)?;
        if read == 0 {
            break;
        }
        if std::mem::take(&mut skip) || !whole {
            continue;
        }
        // Not JSON (a line cut short by a crash): skipped, the rest is read.
        if let Ok(text) = serde_json::from_slice::<String>(&line) {
            if out.len() == CAP {
                out.pop_front();
            }
            out.push_back(text);
        }
    }
    Ok(out.into())
}

/// Read one line (without its newline) into `line`, keeping at most `cap` bytes: a longer line
/// is consumed to its end and `line` left empty. Returns the bytes consumed and whether the
/// line fitted.
fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    let (mut consumed, mut fits) = (0, true);
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((consumed, fits));
        }
        let newline = memchr::memchr(b'\n', buf);
        let part = &buf[..newline.unwrap_or(buf.len())];
        if fits && line.len() + part.len() <= cap {
            line.extend_from_slice(part);
        } else {
            fits = false;
            line.clear();
        }
        let used = newline.map_or(buf.len(), |i| i + 1);
        reader.consume(used);
        consumed += used;
        if newline.is_some() {
            return Ok((consumed, fits));
        }
    }
}

impl HistoryFile {
    /// Start the writer for `path`; `entries` are what [`load`] read (the writer compares the
    /// next prompt with the last of them).
    pub(crate) fn start(path: PathBuf, entries: &[String], secrets: Redactor) -> HistoryFile {
        let (tx, rx) = mpsc::channel::<String>();
        let mut writer = Writer {
            path: path.clone(),
            last: entries.last().cloned(),
            count: entries.len(),
            failed: false,
            tail_checked: false,
        };
        let thread = std::thread::Builder::new()
            .name("kimi-history".into())
            .spawn(move || {
                for text in rx {
                    writer.add(text);
                }
            })
            .ok();
        HistoryFile {
            path,
            tx: thread.is_some().then_some(tx),
            thread,
            secrets,
        }
    }

    /// Open the history at `path`: its entries, and the writer that adds to it.
    pub(crate) fn open(
        path: PathBuf,
        secrets: Redactor,
    ) -> (HistoryFile, Vec<String>, Option<String>) {
        let (entries, problem) = match load(&path) {
            Ok(e) => (e, None),
            Err(e) => (
                Vec::new(),
                Some(format!(
                    "cannot read the prompt history {}: {e}",
                    path.display()
                )),
            ),
        };
        (
            HistoryFile::start(path, &entries, secrets),
            entries,
            problem,
        )
    }

    /// Whether `text` may be written: it holds no API key.
    pub(crate) fn allows(&self, text: &str) -> bool {
        !self.secrets.found_in(text)
    }

    /// Add a prompt (written by the thread; a prompt holding the key is dropped here).
    pub(crate) fn record(&self, text: &str) {
        if text.len() > ENTRY_MAX || text.trim().is_empty() || !self.allows(text) {
            return;
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(text.to_owned());
        }
    }

    /// Stop the writer once it has written what it was sent.
    #[cfg(test)]
    pub(crate) fn close(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for HistoryFile {
    fn drop(&mut self) {
        // What was sent is written before the app exits.
        self.finish();
    }
}

/// Whether the file at `path` is empty, missing, or ends with a newline.
fn ends_with_newline(path: &Path) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    if f.metadata()?.len() == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The writer thread's side.
struct Writer {
    path: PathBuf,
    last: Option<String>,
    /// Entries in the file (as far as this run knows).
    count: usize,
    /// A write failed: logged once, then the history is kept in memory only.
    failed: bool,
    /// Whether the file's end was looked at: a line cut short by a crash is ended before the
    /// first entry of this run, so that the entry is not glued to it.
    tail_checked: bool,
}

impl Writer {
    fn add(&mut self, text: String) {
        if self.failed || self.last.as_ref() == Some(&text) {
            return;
        }
        if let Err(e) = self.append(&text) {
            tracing::error!(path = %self.path.display(), "cannot write the prompt history: {e}");
            self.failed = true;
            return;
        }
        self.last = Some(text);
        self.count += 1;
        if self.count > CAP + SLACK {
            match self.compact() {
                Ok(n) => self.count = n,
                Err(e) => tracing::warn!("cannot compact the prompt history: {e}"),
            }
        }
    }

    fn append(&mut self, text: &str) -> io::Result<()> {
        let mut line = Vec::new();
        if !self.tail_checked {
            self.tail_checked = true;
            if !ends_with_newline(&self.path)? {
                line.push(b'\n');
            }
        }
        line.extend(serde_json::to_vec(text).map_err(io::Error::other)?);
        line.push(b'\n');
        let mut f = kimi_core::private_fs::append_no_follow(&self.path)?;
        // One write per entry: a crash leaves at most the last line cut short.
        f.write_all(&line)
    }

    /// Rewrite the file with its newest [`CAP`] entries: written beside it, renamed over it.
    fn compact(&self) -> io::Result<usize> {
        let entries = load(&self.path)?;
        let mut bytes = Vec::new();
        for e in &entries {
            bytes.extend(serde_json::to_vec(e).map_err(io::Error::other)?);
            bytes.push(b'\n');
        }
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        kimi_core::private_fs::write_no_follow(&tmp, &bytes)?;
        std::fs::rename(&tmp, &self.path)?;
        Ok(entries.len())
    }
}
