//! Saved conversations: one journal per session in the data directory
//! (`~/.local/share/kimi-tui/sessions/ID.jsonl` on Linux), mode 0600, appended to record by
//! record by a writer thread (see [`journal`], [`writer`]). Sessions saved by earlier versions
//! as one JSON document (`ID.json`) still load; continuing one writes `ID.jsonl` beside it and
//! leaves the old file as it was.
//!
//! A file holds the messages in the OpenAI shape and the trace of every request (the inspector's
//! view), never an API key. A file this version cannot read (corrupt, or written by a newer
//! kimi-tui) is reported and left untouched: it is never overwritten.
//!
//! - [`Session`]: the saved state; [`SessionStore`]: the directory (save, load, list, latest).
//! - [`to_markdown`], [`to_openai_json`]: exports.

mod export;
pub mod journal;
mod lock;
mod resume;
pub mod time;
mod validate;
pub mod writer;

use std::collections::hash_map::RandomState;
use std::fs::{self, DirBuilder, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

pub use export::{to_markdown, to_openai_json};
pub use lock::SessionLock;
pub use resume::{Resumed, open_for_start, open_stored};

use kimi_client::Endpoint;
use kimi_protocol::trace::REDACTED;
use kimi_protocol::{Message, ToolCall};
use kimi_protocol::{Mode, Trace};

/// The session file format this build writes, and the newest it reads.
pub(crate) const SESSION_VERSION: u32 = 1;

/// One conversation as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The file format; see [`SESSION_VERSION`].
    pub version: u32,
    /// `20261130-120102-ab12`: UTC creation time, then 4 hex digits; sorts by creation time.
    pub id: String,
    pub created_unix_ms: u64,
    pub updated_unix_ms: u64,
    /// The profile it ran with (`command-line` without a config file).
    pub profile: String,
    pub mode: Mode,
    pub model: String,
    pub base_url: String,
    /// The conversation in the OpenAI chat shape, system prompt first when there is one.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Every request made, in order.
    #[serde(default)]
    pub traces: Vec<SessionTrace>,
    /// Answers saved while they streamed and never finished (kimi-tui was killed, crashed or
    /// lost its terminal): shown as interrupted on resume, never sent to the model. Absent from
    /// files without any, so version-1 readers and writers are unaffected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<PartialAnswer>,
    /// How each call that ran ended, by call id (journals only; empty in older files): a
    /// resumed session shows its tool panes as they were shown live.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_ends: Vec<ToolEnd>,
    /// What decided each call (a rule, or the tool's approval), in order; a call whose edited
    /// arguments were checked again has two. Empty in files written before rules existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<CallDecision>,
}

/// What decided a call, as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallDecision {
    pub call_id: String,
    /// The arguments decided about (the model's, or the user's edit).
    pub arguments: String,
    pub decision: crate::tools::rules::RuleDecision,
}

/// How a call that ran ended, as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolEnd {
    pub call_id: String,
    pub exit: ToolExit,
    pub duration_ns: u64,
}

/// How a call ended ([`crate::tools::ToolStatus`]), as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolExit {
    Exited(i32),
    Signaled(i32),
    /// The tool answered with a result it marked as an error (an MCP `isError`).
    ErrorResult,
    TimedOut,
    Cancelled,
    FailedToStart(String),
}

impl From<&crate::tools::ToolStatus> for ToolExit {
    fn from(s: &crate::tools::ToolStatus) -> Self {
        use crate::tools::{Failure, ToolStatus as S};
        match s {
            S::Ok => ToolExit::Exited(0),
            S::Failed(Failure::Exit(c)) => ToolExit::Exited(*c),
            S::Failed(Failure::Signal(sig)) => ToolExit::Signaled(*sig),
            S::Failed(Failure::ErrorResult) => ToolExit::ErrorResult,
            S::TimedOut => ToolExit::TimedOut,
            S::Cancelled => ToolExit::Cancelled,
            S::CouldNotStart(m) => ToolExit::FailedToStart(m.clone()),
        }
    }
}

impl From<&ToolExit> for crate::tools::ToolStatus {
    fn from(e: &ToolExit) -> Self {
        use crate::tools::{Failure, ToolStatus as S};
        match e {
            ToolExit::Exited(0) => S::Ok,
            ToolExit::Exited(c) => S::Failed(Failure::Exit(*c)),
            ToolExit::Signaled(sig) => S::Failed(Failure::Signal(*sig)),
            ToolExit::ErrorResult => S::Failed(Failure::ErrorResult),
            ToolExit::TimedOut => S::TimedOut,
            ToolExit::Cancelled => S::Cancelled,
            ToolExit::FailedToStart(m) => S::CouldNotStart(m.clone()),
        }
    }
}

/// What had arrived of an answer when it was last saved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartialAnswer {
    /// Where it belongs: `messages.len()` when its request was made.
    pub after_message: usize,
    /// The text so far, as the model sent it.
    #[serde(default)]
    pub content: String,
    /// The reasoning so far (thinking models), as the model sent it; absent when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning_content: String,
    /// Tool calls seen so far, arguments possibly cut short. They never run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub saved_unix_ms: u64,
}

impl PartialAnswer {
    /// Add `more`, what arrived after this was saved: its text and reasoning go on the end,
    /// each call's arguments on that call's, and calls past those held are new.
    pub fn extend(&mut self, more: PartialAnswer) {
        self.content.push_str(&more.content);
        self.reasoning_content.push_str(&more.reasoning_content);
        let mut calls = more.tool_calls.into_iter();
        for (call, more) in self.tool_calls.iter_mut().zip(calls.by_ref()) {
            call.function.arguments.push_str(&more.function.arguments);
        }
        self.tool_calls.extend(calls);
        self.saved_unix_ms = more.saved_unix_ms;
    }
}

/// The trace of one request and the message it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTrace {
    /// The index in `messages` of the assistant message this request produced; when the request
    /// failed without a message, `messages.len()` at the time of the failure.
    pub message_index: usize,
    pub trace: Trace,
}

/// A session to write, its conversation and traces borrowed from whoever holds them.
/// Serializes exactly as [`Session`] does; `meta`'s own messages and traces are ignored.
pub struct SessionView<'a> {
    pub meta: &'a Session,
    pub messages: &'a [Message],
    /// (message_index, trace), as in [`SessionTrace`].
    pub traces: Vec<(usize, &'a Trace)>,
    /// As [`Session::partial`].
    pub partial: Vec<&'a PartialAnswer>,
}

impl<'a> SessionView<'a> {
    pub fn of(session: &'a Session) -> Self {
        SessionView {
            meta: session,
            messages: &session.messages,
            traces: session
                .traces
                .iter()
                .map(|t| (t.message_index, &t.trace))
                .collect(),
            partial: session.partial.iter().collect(),
        }
    }
}

impl Serialize for SessionView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};
        struct Traces<'b>(&'b [(usize, &'b Trace)]);
        impl Serialize for Traces<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for &(message_index, trace) in self.0 {
                    // Whatever a trace holds, no Authorization value reaches the file.
                    let trace = if has_secret(trace) {
                        let mut t = trace.clone();
                        redact(&mut t);
                        std::borrow::Cow::Owned(t)
                    } else {
                        std::borrow::Cow::Borrowed(trace)
                    };
                    seq.serialize_element(&SessionTraceRef {
                        message_index,
                        trace: &trace,
                    })?;
                }
                seq.end()
            }
        }
        #[derive(Serialize)]
        struct SessionTraceRef<'c> {
            message_index: usize,
            trace: &'c Trace,
        }
        let m = self.meta;
        let mut st = s.serialize_struct("Session", 11)?;
        st.serialize_field("version", &m.version)?;
        st.serialize_field("id", &m.id)?;
        st.serialize_field("created_unix_ms", &m.created_unix_ms)?;
        st.serialize_field("updated_unix_ms", &m.updated_unix_ms)?;
        st.serialize_field("profile", &m.profile)?;
        st.serialize_field("mode", &m.mode)?;
        st.serialize_field("model", &m.model)?;
        // Sessions written before userinfo was stripped at the source lose it on the next save.
        st.serialize_field("base_url", &kimi_client::redact_url(&m.base_url))?;
        st.serialize_field("messages", self.messages)?;
        st.serialize_field("traces", &Traces(&self.traces))?;
        if self.partial.is_empty() {
            st.skip_field("partial")?;
        } else {
            st.serialize_field("partial", &self.partial)?;
        }
        st.end()
    }
}

fn has_secret(trace: &Trace) -> bool {
    trace
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("authorization") && v != REDACTED)
}

impl Session {
    /// A new, empty session, created now.
    pub fn new(profile: &str, mode: Mode, model: &str, base_url: &str) -> Session {
        let now = time::now_unix_ms();
        Session {
            version: SESSION_VERSION,
            id: new_id(now),
            created_unix_ms: now,
            updated_unix_ms: now,
            profile: profile.to_owned(),
            mode,
            model: model.to_owned(),
            base_url: kimi_client::redact_url(base_url),
            messages: Vec::new(),
            traces: Vec::new(),
            partial: Vec::new(),
            tool_ends: Vec::new(),
            decisions: Vec::new(),
        }
    }

    /// A new session for `endpoint` (its key is not kept).
    pub fn for_endpoint(profile: &str, endpoint: &Endpoint) -> Session {
        Session::new(profile, endpoint.mode, &endpoint.model, &endpoint.base_url)
    }

    /// Record a request's trace (see [`SessionTrace::message_index`]). An `Authorization`
    /// header is redacted here too, whatever the trace holds.
    pub fn push_trace(&mut self, message_index: usize, mut trace: Trace) {
        redact(&mut trace);
        self.traces.push(SessionTrace {
            message_index,
            trace,
        });
    }

    /// Set `updated_unix_ms` to now.
    pub fn touch(&mut self) {
        self.updated_unix_ms = time::now_unix_ms().max(self.created_unix_ms);
    }

    /// How many user messages it holds.
    pub fn turns(&self) -> usize {
        count_turns(&self.messages)
    }

    /// The first user message on one line, at most 60 characters (`…` when cut).
    pub fn first_line(&self) -> String {
        first_line(&self.messages)
    }
}

pub(crate) fn count_turns(messages: &[Message]) -> usize {
    messages.iter().filter(|m| m.role == "user").count()
}

/// Longest `first_line`, in characters.
pub(crate) const FIRST_LINE_CHARS: usize = 60;

pub(crate) fn first_line(messages: &[Message]) -> String {
    let Some(m) = messages.iter().find(|m| m.role == "user") else {
        return String::new();
    };
    let text = m.text();
    let one: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    match one.char_indices().nth(FIRST_LINE_CHARS - 1) {
        Some((i, _)) if one.chars().count() > FIRST_LINE_CHARS => format!("{}…", &one[..i]),
        _ => one,
    }
}

/// Whether [`redact`] would change `trace`.
pub(crate) fn needs_redaction(trace: &Trace) -> bool {
    trace
        .headers
        .iter()
        .any(|(name, value)| name.eq_ignore_ascii_case("authorization") && value != REDACTED)
}

pub(crate) fn redact(trace: &mut Trace) {
    for (name, value) in &mut trace.headers {
        if name.eq_ignore_ascii_case("authorization") && value != REDACTED {
            *value = REDACTED.to_owned();
        }
    }
}

/// `YYYYMMDD-HHMMSS-xxxx` for `now_ms`: UTC time, then 4 hex digits from a per-process random
/// hash of the clock, the pid and a counter.
pub fn new_id(now_ms: u64) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(now_ms);
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u32(d.subsec_nanos());
    }
    format!(
        "{}-{:04x}",
        time::Utc::from_unix_ms(now_ms).compact(),
        h.finish() & 0xffff
    )
}

/// Whether `id` can name a file in the session directory: letters, digits, `-`, `_` and `.`,
/// not starting with `.`, at most 100 characters.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What can go wrong with session files. Each message is one line naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("cannot {action} {}: {detail}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        detail: String,
    },
    /// Not JSON, or not a session; `detail` has the JSON error with its line and column.
    #[error("{}: not a valid session file: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{}: written by a newer kimi-tui (version {version}); left untouched", path.display())]
    Newer { path: PathBuf, version: u64 },
    #[error("no session `{id}` in {}; `kimi-tui sessions` lists them", dir.display())]
    NotFound { id: String, dir: PathBuf },
    #[error("`{0}` is not a session id (expected something like 20261130-120102-ab12)")]
    BadId(String),
    /// `save` found a file it must not replace.
    #[error("session not saved: {} {reason}; it was left untouched", path.display())]
    WontOverwrite { path: PathBuf, reason: String },
    /// Another instance has the session open (see [`SessionStore::lock`]).
    #[error("session `{id}` is open in another kimi-tui{}; quit that one first, or start a new session without --resume/--session", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Locked { id: String, pid: Option<u32> },
}

fn io_error(action: &'static str, path: &Path, e: &io::Error) -> SessionError {
    let text = e.to_string();
    let detail = match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    };
    SessionError::Io {
        action,
        path: path.to_owned(),
        detail,
    }
}

/// A session read from its file, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened {
    pub session: Session,
    /// Read from a journal (else an old `.json`, which is continued as a new journal).
    pub journal: bool,
    /// The journal's last record was cut off and dropped: say so.
    pub notice: Option<String>,
}

/// One line of `kimi-tui sessions`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// What [`SessionStore::load`] takes: the file name without `.jsonl` or `.json`.
    pub id: String,
    pub updated_unix_ms: u64,
    pub profile: String,
    pub mode: Mode,
    /// The model it ran with (empty for an old `.json` without one).
    pub model: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The first user message, one line, at most 60 characters.
    pub first_line: String,
    /// User messages.
    pub turns: usize,
    pub path: PathBuf,
}

/// The sessions found, newest first, and the files that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
    /// One line per unreadable file or directory, naming it.
    pub problems: Vec<String>,
}

/// The directory of session files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    pub dir: PathBuf,
}

/// Just the version, read before anything else so that a newer format is never misread.
#[derive(Deserialize)]
struct VersionProbe {
    version: u64,
}

/// What a listing needs; the traces are skipped.
#[derive(Deserialize)]
struct SummaryProbe {
    updated_unix_ms: u64,
    profile: String,
    mode: Mode,
    #[serde(default)]
    model: String,
    #[serde(default)]
    messages: Vec<Message>,
}

impl SessionStore {
    /// `<data dir>/kimi-tui/sessions` (`$XDG_DATA_HOME/kimi-tui/sessions` on Linux); `None`
    /// without a home directory.
    pub(crate) fn default_dir() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "kimi-tui").map(|d| d.data_dir().join("sessions"))
    }

    pub fn new(dir: impl Into<PathBuf>) -> SessionStore {
        SessionStore { dir: dir.into() }
    }

    /// The store in [`SessionStore::default_dir`].
    pub fn open_default() -> Result<SessionStore, SessionError> {
        Self::default_dir()
            .map(SessionStore::new)
            .ok_or_else(|| SessionError::Io {
                action: "find",
                path: PathBuf::from("the data directory"),
                detail: "no home directory (set HOME or XDG_DATA_HOME)".to_owned(),
            })
    }

    /// The file that holds session `id`: its journal, else an old `ID.json`, else where its
    /// journal will go.
    pub fn path_of(&self, id: &str) -> PathBuf {
        let journal = self.journal_path(id);
        if fs::symlink_metadata(&journal).is_err() {
            let legacy = self.legacy_path(id);
            if fs::symlink_metadata(&legacy).is_ok() {
                return legacy;
            }
        }
        journal
    }

    /// `ID.jsonl`: the journal of session `id`.
    pub fn journal_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// `ID.json`: where versions before the journal saved session `id`.
    pub fn legacy_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Write all of `session` as its journal `ID.jsonl`, atomically: a `ID.jsonl.tmp` (mode
    /// 0600) in the same directory, fsynced, renamed over the file. Creates the directory
    /// (mode 0700) if needed. An existing journal that cannot be read as a session, or that a
    /// newer kimi-tui wrote, is not replaced ([`SessionError::WontOverwrite`]); an old
    /// `ID.json` is left as it is. Returns the journal's path.
    pub fn save(&self, session: &Session) -> Result<PathBuf, SessionError> {
        self.write_journal(session, true)
    }

    /// [`SessionStore::save`] without the check of the file already there.
    pub fn replace(&self, session: &Session) -> Result<PathBuf, SessionError> {
        self.write_journal(session, false)
    }

    fn write_journal(&self, session: &Session, check: bool) -> Result<PathBuf, SessionError> {
        if !is_valid_id(&session.id) {
            return Err(SessionError::BadId(session.id.clone()));
        }
        let path = self.journal_path(&session.id);
        if check && fs::symlink_metadata(&path).is_ok() {
            self.check_file(&path)?;
        }
        let mut bytes = Vec::new();
        for mut r in journal::records_of(session) {
            journal::encode(&mut r, &mut bytes).map_err(|e| io_error("write", &path, &e))?;
        }
        self.write_atomic(&path, &bytes)
    }

    /// Write a session in the format of versions before the journal (`ID.json`, one JSON
    /// document), its conversation and traces borrowed from their holder. For tools and tests
    /// that need such a file; kimi-tui itself writes journals.
    /// `check_existing`: a file there that is not a readable session is not replaced.
    pub fn save_view(
        &self,
        view: &SessionView<'_>,
        check_existing: bool,
    ) -> Result<PathBuf, SessionError> {
        if !is_valid_id(&view.meta.id) {
            return Err(SessionError::BadId(view.meta.id.clone()));
        }
        if check_existing {
            self.check_existing(&view.meta.id)?;
        }
        self.write_view(view)
    }

    /// A file already there may be replaced only if it is a session this version can read.
    fn check_existing(&self, id: &str) -> Result<(), SessionError> {
        let path = self.legacy_path(id);
        if fs::symlink_metadata(&path).is_err() {
            return Ok(());
        }
        self.check_file(&path)
    }

    fn check_file(&self, path: &Path) -> Result<(), SessionError> {
        let path = path.to_owned();
        match Self::load_path(&path) {
            Ok(_) => Ok(()),
            Err(SessionError::Newer { version, .. }) => Err(SessionError::WontOverwrite {
                path,
                reason: format!("was written by a newer kimi-tui (version {version})"),
            }),
            Err(SessionError::Corrupt { detail, .. }) => Err(SessionError::WontOverwrite {
                path,
                reason: format!("is not a valid session file ({detail})"),
            }),
            Err(e) => Err(e),
        }
    }

    fn write_view(&self, view: &SessionView<'_>) -> Result<PathBuf, SessionError> {
        let path = self.legacy_path(&view.meta.id);
        // Escaped so that `cat`ting a session file cannot drive the terminal.
        let mut bytes = crate::json_out::to_string(view)
            .map_err(|e| io_error("write", &path, &io::Error::other(e)))?
            .into_bytes();
        bytes.push(b'\n');
        self.write_atomic(&path, &bytes)
    }

    /// Replace `path` (in the store) with `bytes`: a `.tmp` beside it (0600), fsynced, renamed.
    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> Result<PathBuf, SessionError> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| io_error("create the directory", &self.dir, &e))?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(io_error("remove the stale", &tmp, &e));
            }
            _ => {}
        }
        let write = || -> io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&tmp);
            return Err(io_error("write", &tmp, &e));
        }
        if let Err(e) = fs::rename(&tmp, path) {
            let _ = fs::remove_file(&tmp);
            return Err(io_error("replace", path, &e));
        }
        // Make the rename itself durable; a failure here loses nothing already written.
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(path.to_owned())
    }

    /// The session `id` (the name of a file in the directory, without `.jsonl` or `.json`).
    pub fn load(&self, id: &str) -> Result<Session, SessionError> {
        self.open(id).map(|o| o.session)
    }

    /// The session `id`, with what [`SessionStore::open_path`] says of it.
    pub fn open(&self, id: &str) -> Result<Opened, SessionError> {
        if !is_valid_id(id) {
            return Err(SessionError::BadId(id.to_owned()));
        }
        let path = self.path_of(id);
        if fs::symlink_metadata(&path).is_err() {
            return Err(SessionError::NotFound {
                id: id.to_owned(),
                dir: self.dir.clone(),
            });
        }
        Self::open_path(&path)
    }

    /// The session in the file at `path` (anywhere), a journal or an old `.json`; a journal's
    /// cut-off last record is dropped with a notice.
    pub fn open_path(path: &Path) -> Result<Opened, SessionError> {
        if journal::is_journal(path)? {
            let l = journal::read(path)?;
            return Ok(Opened {
                session: l.session,
                journal: true,
                notice: l.notice,
            });
        }
        Ok(Opened {
            session: Self::load_json(path)?,
            journal: false,
            notice: None,
        })
    }

    /// The session in the file at `path` (anywhere); see [`SessionStore::open_path`].
    pub fn load_path(path: &Path) -> Result<Session, SessionError> {
        Self::open_path(path).map(|o| o.session)
    }

    fn load_json(path: &Path) -> Result<Session, SessionError> {
        let bytes = fs::read(path).map_err(|e| io_error("read", path, &e))?;
        check_version(path, &bytes)?;
        let session: Session = decode(path, &bytes)?;
        validate::check(&session).map_err(|e| SessionError::Corrupt {
            path: path.to_owned(),
            detail: e.to_string(),
        })?;
        Ok(session)
    }

    /// Every session in the directory, newest first. Files that cannot be read are skipped and
    /// named in `problems`. A missing directory is an empty list.
    pub fn list(&self) -> SessionList {
        let mut list = SessionList::default();
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return list,
            Err(e) => {
                list.problems
                    .push(io_error("read the directory", &self.dir, &e).to_string());
                return list;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    list.problems
                        .push(io_error("read the directory", &self.dir, &e).to_string());
                    continue;
                }
            };
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str());
            let Some(id) = name
                .and_then(|n| n.strip_suffix(".jsonl").or_else(|| n.strip_suffix(".json")))
                .filter(|id| is_valid_id(id))
                .map(str::to_owned)
            else {
                continue;
            };
            // An old `ID.json` continued as `ID.jsonl`: the journal is the session.
            if path.extension().is_some_and(|e| e == "json")
                && fs::symlink_metadata(self.journal_path(&id)).is_ok()
            {
                continue;
            }
            match summarize(&path, id) {
                Ok(s) => list.sessions.push(s),
                Err(e) => list.problems.push(e.to_string()),
            }
        }
        list.sessions.sort_by(|a, b| {
            b.updated_unix_ms
                .cmp(&a.updated_unix_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        list.problems.sort();
        list
    }

    /// The most recently updated readable session, if any.
    pub fn latest(&self) -> Result<Option<Session>, SessionError> {
        match self.list().sessions.first() {
            Some(s) => Self::load_path(&s.path).map(Some),
            None => Ok(None),
        }
    }
}

fn summarize(path: &Path, id: String) -> Result<SessionSummary, SessionError> {
    let bytes = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if journal::is_journal(path)? {
        if let Some((h, updated_unix_ms, turns, first_line)) = journal::quick_summary(path)? {
            return Ok(SessionSummary {
                id,
                updated_unix_ms,
                profile: h.profile,
                mode: h.mode,
                model: h.model,
                bytes,
                first_line,
                turns,
                path: path.to_owned(),
            });
        }
        // No summary at the end (an older journal, or a run that stopped mid-turn): replayed.
        let s = journal::read(path)?.session;
        return Ok(SessionSummary {
            id,
            updated_unix_ms: s.updated_unix_ms,
            profile: s.profile.clone(),
            mode: s.mode,
            model: s.model.clone(),
            bytes,
            first_line: s.first_line(),
            turns: s.turns(),
            path: path.to_owned(),
        });
    }
    let data = fs::read(path).map_err(|e| io_error("read", path, &e))?;
    check_version(path, &data)?;
    let p: SummaryProbe = decode(path, &data)?;
    Ok(SessionSummary {
        id,
        updated_unix_ms: p.updated_unix_ms,
        profile: p.profile,
        mode: p.mode,
        model: p.model,
        bytes,
        first_line: first_line(&p.messages),
        turns: count_turns(&p.messages),
        path: path.to_owned(),
    })
}

/// A newer format is refused before its contents are interpreted.
fn check_version(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    let probe: VersionProbe = decode(path, bytes)?;
    if probe.version > u64::from(SESSION_VERSION) {
        return Err(SessionError::Newer {
            path: path.to_owned(),
            version: probe.version,
        });
    }
    Ok(())
}

/// Decode JSON; an error names the JSON path (when inside the document), line and column.
fn decode<T: serde::de::DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T, SessionError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        let detail = if at == "." || inner.is_syntax() || inner.is_eof() {
            inner.to_string()
        } else {
            format!("{at}: {inner}")
        };
        SessionError::Corrupt {
            path: path.to_owned(),
            detail,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use kimi_protocol::ToolCall;

    fn sample() -> Session {
        let mut s = Session::new("local", Mode::Raw, "kimi", "http://127.0.0.1:8000/v1");
        s.messages = vec![
            Message::system("Be brief."),
            Message::user("What's the weather\nin Beijing?"),
            Message::assistant_with_calls(
                "Checking. ",
                vec![ToolCall::new(
                    "functions.get_weather:0",
                    "get_weather",
                    "{\"city\": \"Beijing\"}",
                )],
            ),
            Message::tool_result("functions.get_weather:0", "get_weather", "Sunny"),
            Message::assistant("It is sunny."),
        ];
        s.push_trace(2, Trace::default());
        s.push_trace(4, Trace::default());
        s
    }

    #[test]
    fn ids_are_sortable_and_valid() {
        let id = new_id(1_796_040_062_345);
        assert!(id.starts_with("20261130-120102-"), "{id}");
        assert_eq!(id.len(), "20261130-120102-ab12".len());
        assert!(is_valid_id(&id));
        for bad in ["", "../x", "a/b", ".hidden", "a b"] {
            assert!(!is_valid_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn save_and_load_round_trip_with_private_permissions() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path().join("nested/sessions"));
        let s = sample();
        let path = store.save(&s).expect("saved");
        assert_eq!(path, store.path_of(&s.id));
        let mode = fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dmode = fs::metadata(&store.dir).expect("meta").permissions().mode();
        assert_eq!(dmode & 0o777, 0o700);
        assert!(!store.dir.join(format!("{}.json.tmp", s.id)).exists());
        assert_eq!(store.load(&s.id).expect("loads"), s);
        // Saving again replaces it.
        let mut s2 = s.clone();
        s2.messages.push(Message::user("more"));
        store.save(&s2).expect("saved again");
        assert_eq!(store.load(&s.id).expect("loads").turns(), 2);
    }

    #[test]
    fn first_line_and_turns() {
        let s = sample();
        assert_eq!(s.turns(), 1);
        assert_eq!(s.first_line(), "What's the weather in Beijing?");
        let mut long = sample();
        long.messages[1] = Message::user("é".repeat(100));
        let line = long.first_line();
        assert_eq!(line.chars().count(), FIRST_LINE_CHARS);
        assert!(line.ends_with('…'));
        let mut exact = sample();
        exact.messages[1] = Message::user("x".repeat(60));
        assert_eq!(exact.first_line(), "x".repeat(60));
    }

    #[test]
    fn corrupt_and_newer_files_are_errors_and_never_overwritten() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        let s = sample();
        let path = store.path_of(&s.id);
        fs::write(&path, "{\n  \"version\": 1,\n  \"id\": \n").expect("write");
        let e = store.load(&s.id).expect_err("corrupt");
        let text = e.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("line 4"), "{text}");
        let e = store.save(&s).expect_err("refuses");
        assert!(matches!(e, SessionError::WontOverwrite { .. }), "{e}");
        assert!(e.to_string().contains("left untouched"), "{e}");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            "{\n  \"version\": 1,\n  \"id\": \n"
        );

        let newer = r#"{"version": 7, "whatever": "a future shape"}"#;
        fs::write(&path, newer).expect("write");
        let e = store.load(&s.id).expect_err("newer");
        assert_eq!(
            e.to_string(),
            format!(
                "{}: written by a newer kimi-tui (version 7); left untouched",
                path.display()
            )
        );
        let e = store.save(&s).expect_err("refuses");
        assert!(e.to_string().contains("newer kimi-tui (version 7)"), "{e}");
        assert_eq!(fs::read_to_string(&path).expect("read"), newer);

        // A wrong shape names the field.
        fs::write(&path, r#"{"version": 1, "id": 5}"#).expect("write");
        let e = store.load(&s.id).expect_err("shape");
        assert!(e.to_string().contains("id:"), "{e}");
    }

    #[test]
    fn a_legacy_file_loads_with_or_without_partial_answers() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path().join("s"));
        let s = sample();
        store
            .save_view(&SessionView::of(&s), false)
            .expect("written");
        assert_eq!(store.load(&s.id).expect("loads"), s);
        // A version-1 file without `partial` still loads; one with it round-trips.
        let mut with = s.clone();
        with.partial.push(PartialAnswer {
            after_message: 5,
            content: "Half an ans".into(),
            reasoning_content: "First the weather, then".into(),
            tool_calls: Vec::new(),
            saved_unix_ms: 7,
        });
        store.save(&with).expect("save");
        assert_eq!(store.load(&s.id).expect("loads"), with);
    }

    #[test]
    fn list_is_newest_first_and_reports_problems() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        assert_eq!(store.list(), SessionList::default());
        assert_eq!(store.latest().expect("empty"), None);
        let mut old = sample();
        old.id = "20260101-000000-aaaa".into();
        old.updated_unix_ms = 1000;
        let mut new = sample();
        new.id = "20260101-000000-bbbb".into();
        new.updated_unix_ms = 2000;
        new.profile = "moonshot".into();
        store.save(&old).expect("save");
        store.save(&new).expect("save");
        fs::write(dir.path().join("broken.json"), "not json").expect("write");
        fs::write(dir.path().join("notes.txt"), "ignored").expect("write");
        let list = store.list();
        let ids: Vec<&str> = list.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["20260101-000000-bbbb", "20260101-000000-aaaa"]);
        assert_eq!(list.sessions[0].profile, "moonshot");
        assert_eq!(list.sessions[0].turns, 1);
        assert_eq!(list.problems.len(), 1);
        assert!(
            list.problems[0].contains("broken.json"),
            "{:?}",
            list.problems
        );
        assert_eq!(store.latest().expect("latest").map(|s| s.id), Some(new.id));
        // A journal saved whole ends with its summary: the listing reads only its ends.
        let journal = fs::read_to_string(store.journal_path(&old.id)).expect("read");
        let last = journal.lines().last().expect("a line");
        assert!(last.starts_with(r#"{"type":"summary""#), "{last}");
        assert_eq!(list.sessions[1].first_line, old.first_line());
        let whole = store.load(&old.id).expect("loads");
        assert_eq!(list.sessions[1].updated_unix_ms, whole.updated_unix_ms);
    }

    #[test]
    fn load_rejects_bad_ids_and_names_missing_ones() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        assert!(matches!(store.load("../etc"), Err(SessionError::BadId(_))));
        let e = store.load("20260101-000000-cccc").expect_err("missing");
        assert!(matches!(e, SessionError::NotFound { .. }));
        assert!(e.to_string().contains("kimi-tui sessions"), "{e}");
    }

    #[test]
    fn authorization_headers_are_redacted() {
        let mut t = Trace::default();
        t.headers
            .push(("authorization".into(), "Bearer sk-live-123".into()));
        let mut s = sample();
        s.traces.push(SessionTrace {
            message_index: 0,
            trace: t.clone(),
        });
        let dir = tempfile::tempdir().expect("tmp");
        let store = SessionStore::new(dir.path());
        let path = store.save(&s).expect("save");
        let text = fs::read_to_string(path).expect("read");
        assert!(!text.contains("sk-live-123"));
        s.push_trace(0, t);
        assert_eq!(s.traces.last().expect("trace").trace.headers[0].1, REDACTED);
    }
}
