//! The journal's writer: a thread that owns the file, fed records through a bounded channel,
//! so that the UI never waits for the disk. Records are serialized here, not on the UI task:
//! cloning a message or a trace costs the UI far less than encoding it (see `benches/session.rs`).
//!
//! Each record is its line and newline, encoded through a buffer straight into the file (a
//! finished trace is a line of tens of MB: it is never held whole in memory); a record that
//! fails has what it wrote cut away. A batch holding a finished message
//! (anything but a partial answer) is fsynced at once; partial answers at most once a second.
//! The first error stops the writer (nothing more is written) and is reported once.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use super::journal::{self, Record};
use super::{SessionError, SessionStore, io_error};

/// Batches in flight before the UI keeps them itself (see [`JournalWriter::send`]).
const QUEUE: usize = 64;
/// Bytes of a line gathered per `write(2)`.
const LINE_BUFFER: usize = 64 << 10;
/// Longest a partial answer stays written but not fsynced.
pub(crate) const PARTIAL_SYNC_EVERY: Duration = Duration::from_secs(1);

/// How the writer starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A new `ID.jsonl`; an existing one is never replaced. `beside_legacy`: an old `ID.json`
    /// of this very session may be there (it is being continued as a journal, and left as it
    /// was); without it, an `ID.json` there is another session's and refuses the write.
    Create { beside_legacy: bool },
    /// Append to the `ID.jsonl` this session was loaded from (a cut-off last line is cut away).
    Continue,
}

enum Cmd {
    /// Records, and whether the batch holds a partial answer (counted in `unwritten`).
    Records(Vec<Record>, bool),
    Flush(mpsc::Sender<()>),
}

/// The sending end, held by the UI.
pub struct JournalWriter {
    pub id: String,
    tx: SyncSender<Cmd>,
    /// Batches the full channel did not take yet, sent first next time: nothing is dropped.
    pending: VecDeque<(Vec<Record>, bool)>,
    errors: Receiver<SessionError>,
    /// Batches holding a partial answer sent and not yet written (see [`JournalWriter::busy`]).
    unwritten: Arc<AtomicUsize>,
}

impl JournalWriter {
    /// Start the writer of session `id` in `store`. Nothing touches the disk before the
    /// first batch arrives.
    pub fn spawn(store: &SessionStore, id: &str, target: Target) -> io::Result<JournalWriter> {
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let (etx, errors) = mpsc::channel();
        let mut file = JournalFile {
            store: store.clone(),
            id: id.to_owned(),
            target,
            file: None,
            unsynced_since: None,
            failed: false,
        };
        let unwritten = Arc::new(AtomicUsize::new(0));
        let written = unwritten.clone();
        std::thread::Builder::new()
            .name(format!("journal-{id}"))
            .spawn(move || file.run(&rx, &etx, &written))?;
        Ok(JournalWriter {
            id: id.to_owned(),
            tx,
            pending: VecDeque::new(),
            errors,
            unwritten,
        })
    }

    /// Whether a batch holding a partial answer is still waiting to be written. A timed save
    /// of a streaming answer waits for it: each holds a copy of the whole answer so far, and a
    /// writer behind a fast stream would otherwise hold several.
    pub fn busy(&self) -> bool {
        self.unwritten.load(Ordering::Acquire) > 0
    }

    /// Queue `records`; never blocks. When the writer is behind and the channel full, the
    /// batch waits here and goes with the next `send` or `flush`.
    pub fn send(&mut self, records: Vec<Record>) {
        if !records.is_empty() {
            let partial = records.iter().any(|r| matches!(r, Record::Partial { .. }));
            if partial {
                self.unwritten.fetch_add(1, Ordering::AcqRel);
            }
            self.pending.push_back((records, partial));
        }
        while let Some((batch, partial)) = self.pending.pop_front() {
            match self.tx.try_send(Cmd::Records(batch, partial)) {
                Ok(()) => {}
                Err(TrySendError::Full(Cmd::Records(b, p))) => {
                    self.pending.push_front((b, p));
                    return;
                }
                // The writer stopped: its error is (or was) reported through `error`.
                Err(_) => {
                    self.unwritten.store(0, Ordering::Release);
                    return self.pending.clear();
                }
            }
        }
    }

    /// The writer's failure, once, if it failed.
    pub fn error(&self) -> Option<SessionError> {
        self.errors.try_recv().ok()
    }

    /// Wait until everything sent is written and fsynced, at most `timeout`; `false` when it
    /// took longer (the writer goes on). For quitting, and for tests.
    pub fn flush(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.pending.is_empty() {
            self.send(Vec::new());
            if Instant::now() >= deadline {
                return false;
            }
            if !self.pending.is_empty() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let (reply, done) = mpsc::channel();
        let mut cmd = Cmd::Flush(reply);
        loop {
            match self.tx.try_send(cmd) {
                Ok(()) => break,
                // Stopped: nothing more will be written.
                Err(TrySendError::Disconnected(_)) => return true,
                Err(TrySendError::Full(c)) => {
                    if Instant::now() >= deadline {
                        return false;
                    }
                    cmd = c;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        match done.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
            Err(RecvTimeoutError::Timeout) => false,
        }
    }
}

/// The writer thread's state.
struct JournalFile {
    store: SessionStore,
    id: String,
    target: Target,
    file: Option<File>,
    /// Written but not yet fsynced since then.
    unsynced_since: Option<Instant>,
    failed: bool,
}

impl JournalFile {
    fn run(
        &mut self,
        rx: &Receiver<Cmd>,
        errors: &mpsc::Sender<SessionError>,
        unwritten: &AtomicUsize,
    ) {
        loop {
            // Nothing waiting to be synced: asleep until the next command, not woken by a timer.
            let next = match self.unsynced_since {
                Some(t) => rx.recv_timeout(PARTIAL_SYNC_EVERY.saturating_sub(t.elapsed())),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            let result = match next {
                Ok(Cmd::Records(records, partial)) => {
                    let r = self.write(records);
                    if partial {
                        unwritten.fetch_sub(1, Ordering::AcqRel);
                    }
                    r
                }
                Ok(Cmd::Flush(reply)) => {
                    let r = self.sync();
                    let _ = reply.send(());
                    r
                }
                Err(RecvTimeoutError::Timeout) => self.sync(),
                Err(RecvTimeoutError::Disconnected) => {
                    if let Err(e) = self.sync() {
                        tracing::error!(session = %self.id, "session not saved: {e}");
                    }
                    return;
                }
            };
            if let Err(e) = result {
                tracing::error!(session = %self.id, "session not saved: {e}");
                self.failed = true;
                self.file = None;
                let _ = errors.send(e);
            }
        }
    }

    fn path(&self) -> PathBuf {
        self.store.journal_path(&self.id)
    }

    fn write(&mut self, records: Vec<Record>) -> Result<(), SessionError> {
        if self.failed {
            return Ok(());
        }
        let durable = records.iter().any(Record::is_durable);
        let file = match self.file.take() {
            Some(f) => f,
            None => self.open()?,
        };
        let file = self.file.insert(file);
        let path = self.store.journal_path(&self.id);
        let mut end = file
            .metadata()
            .map_err(|e| io_error("read", &path, &e))?
            .len();
        for mut r in records {
            // Encoded straight into the file through a buffer, not into a line in memory
            // first: a finished trace's line is tens of MB. A crash still cuts at most the
            // line being written; a failed write has its part of a line cut away, so that
            // the file stays whole lines.
            let mut out = BufWriter::with_capacity(LINE_BUFFER, &*file);
            let written =
                journal::encode_to(&mut r, &mut out).and_then(|n| out.flush().map(|()| n));
            // What a failure left in the buffer goes unwritten: a `BufWriter` dropped would
            // write it, after the cut below.
            let _ = out.into_parts();
            match written {
                Ok(n) => end += n,
                Err(e) => {
                    let _ = file.set_len(end);
                    return Err(io_error("write", &path, &e));
                }
            }
        }
        if self.unsynced_since.is_none() {
            self.unsynced_since = Some(Instant::now());
        }
        let due = self
            .unsynced_since
            .is_some_and(|t| t.elapsed() >= PARTIAL_SYNC_EVERY);
        if durable || due {
            self.sync()?;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), SessionError> {
        if self.unsynced_since.take().is_none() {
            return Ok(());
        }
        match &self.file {
            // Only the appended bytes are new: fdatasync costs what was written.
            Some(f) => f
                .sync_data()
                .map_err(|e| io_error("sync", &self.path(), &e)),
            None => Ok(()),
        }
    }

    fn open(&self) -> Result<File, SessionError> {
        let path = self.path();
        let dir = &self.store.dir;
        crate::private_fs::create_dir_all(dir)
            .map_err(|e| io_error("create the directory", dir, &e))?;
        match self.target {
            Target::Create { beside_legacy } => {
                let legacy = self.store.legacy_path(&self.id);
                for p in [&path, &legacy] {
                    if std::fs::symlink_metadata(p).is_err() || (beside_legacy && *p == legacy) {
                        continue;
                    }
                    let reason = match SessionStore::load_path(p) {
                        Ok(_) => "already holds a different session with the same id".to_owned(),
                        Err(SessionError::Newer { version, .. }) => {
                            format!("was written by a newer kimi-tui (version {version})")
                        }
                        Err(SessionError::Corrupt { detail, .. }) => {
                            format!("is not a valid session file ({detail})")
                        }
                        Err(e) => return Err(e),
                    };
                    return Err(SessionError::WontOverwrite {
                        path: p.clone(),
                        reason,
                    });
                }
                let f = OpenOptions::new()
                    .append(true)
                    .create_new(true)
                    .mode(crate::private_fs::FILE_MODE)
                    .open(&path)
                    .map_err(|e| io_error("create", &path, &e))?;
                // The new name itself must survive a crash.
                if let Ok(d) = File::open(dir) {
                    let _ = d.sync_all();
                }
                Ok(f)
            }
            Target::Continue => {
                let loaded = journal::read(&path).map_err(|e| match e {
                    SessionError::Corrupt { path, detail } => SessionError::WontOverwrite {
                        path,
                        reason: format!("is not a valid session file ({detail})"),
                    },
                    e => e,
                })?;
                if loaded.session.id != self.id {
                    return Err(SessionError::WontOverwrite {
                        path,
                        reason: format!("holds session `{}`", loaded.session.id),
                    });
                }
                // Appended to and maybe truncated: never through a link planted in its place.
                let mut f =
                    crate::private_fs::open_no_follow(OpenOptions::new().append(true), &path)
                        .map_err(|e| io_error("open", &path, &e))?;
                let len = f.metadata().map_err(|e| io_error("read", &path, &e))?.len();
                if len > loaded.valid_len {
                    // The cut-off last record (reported when it was loaded) goes, so that
                    // what follows starts on a line of its own.
                    f.set_len(loaded.valid_len)
                        .map_err(|e| io_error("truncate", &path, &e))?;
                } else if loaded.needs_newline {
                    f.write_all(b"\n")
                        .map_err(|e| io_error("write", &path, &e))?;
                }
                Ok(f)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use kimi_protocol::{Mode, Trace};

    use super::*;
    use crate::session::Session;

    /// A writer creating the journal of session `id`.
    fn created(store: &SessionStore, id: &str) -> JournalWriter {
        JournalWriter::spawn(
            store,
            id,
            Target::Create {
                beside_legacy: false,
            },
        )
        .expect("spawn")
    }

    /// A trace whose line spans many buffer-fulls, its key in a header.
    fn long_trace() -> Trace {
        let mut t = Trace {
            headers: vec![("Authorization".into(), "Bearer sk-secret-key".into())],
            ..Trace::default()
        };
        for i in 0..40_000u64 {
            t.push_chunk("fn x() {}\n\u{1b}[2J ", i);
        }
        t
    }

    #[test]
    fn a_long_trace_is_written_through_the_buffer_as_the_line_encode_makes() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        let s = Session::new("local", Mode::Raw, "kimi", "http://127.0.0.1:8000/v1");
        let trace = Record::Trace {
            at: 1,
            index: 0,
            message_index: 0,
            trace: long_trace().into(),
        };
        let mut records = journal::records_of(&s);
        records.push(trace.clone());
        let mut w = created(&store, &s.id);
        w.send(records.clone());
        assert!(w.flush(Duration::from_secs(10)));
        assert!(w.error().is_none());

        let mut want = Vec::new();
        for mut r in records {
            journal::encode(&mut r, &mut want).expect("encode");
        }
        let path = store.journal_path(&s.id);
        let got = std::fs::read(&path).expect("read");
        assert!(got.len() > 4 * LINE_BUFFER, "{} bytes", got.len());
        assert!(
            got == want,
            "the file differs from the records encoded whole"
        );
        let text = String::from_utf8(got).expect("utf-8");
        assert!(!text.contains("sk-secret-key"));
        assert!(!text.contains('\u{1b}'));
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let back = journal::read(&path).expect("loads");
        assert_eq!(back.session.traces[0].trace.chunks.len(), 40_000);
    }

    #[test]
    fn a_shared_trace_is_written_as_its_copy_would_be_and_its_key_redacted_in_a_copy() {
        use crate::engine::SharedTrace;
        use crate::session::journal::TraceBody;
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        let s = Session::new("local", Mode::Raw, "kimi", "http://127.0.0.1:8000/v1");
        let shared = SharedTrace::new(long_trace());
        let record = |trace: TraceBody| Record::Trace {
            at: 1,
            index: 0,
            message_index: 0,
            trace,
        };
        let mut w = created(&store, &s.id);
        let mut records = journal::records_of(&s);
        records.push(record(TraceBody::Shared(shared.clone())));
        w.send(records);
        assert!(w.flush(Duration::from_secs(10)));
        assert!(w.error().is_none());

        let mut want = Vec::new();
        for mut r in journal::records_of(&s) {
            journal::encode(&mut r, &mut want).expect("encode");
        }
        journal::encode(&mut record(shared.read().clone().into()), &mut want).expect("encode");
        let got = std::fs::read(store.journal_path(&s.id)).expect("read");
        assert!(
            got == want,
            "the shared trace's line differs from its copy's"
        );
        assert!(!String::from_utf8_lossy(&got).contains("sk-secret-key"));
        // The agent's own trace is left as it was: the redaction went to a copy.
        assert_eq!(shared.read().headers[0].1, "Bearer sk-secret-key");
        let back = journal::read(&store.journal_path(&s.id)).expect("loads");
        assert_eq!(back.session.traces[0].trace.chunks.len(), 40_000);
    }

    #[test]
    fn a_journal_planted_as_a_symbolic_link_is_not_continued_through_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let elsewhere = SessionStore::new(dir.path().join("elsewhere"));
        let store = SessionStore::new(dir.path().join("sessions"));
        let s = Session::new("local", Mode::Raw, "kimi", "http://127.0.0.1:8000/v1");
        let mut w = created(&elsewhere, &s.id);
        w.send(journal::records_of(&s));
        assert!(w.flush(Duration::from_secs(10)));
        drop(w);
        let target = elsewhere.journal_path(&s.id);
        let before = std::fs::read(&target).expect("read");
        std::fs::create_dir_all(&store.dir).expect("mkdir");
        std::os::unix::fs::symlink(&target, store.journal_path(&s.id)).expect("symlink");
        let mut w = JournalWriter::spawn(&store, &s.id, Target::Continue).expect("spawn");
        w.send(journal::records_of(&s));
        w.flush(Duration::from_secs(10));
        let e = w.error().expect("refused").to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(
            e.contains(&store.journal_path(&s.id).display().to_string()),
            "{e}"
        );
        assert_eq!(std::fs::read(&target).expect("read"), before);
    }
}
