//! The session journal, `ID.jsonl`: one JSON record per line, appended, never rewritten. The
//! first line is the header; each later line is one event (a message appended, a trace
//! added, the system prompt changed, the conversation cut back by `/retry` or by going back to
//! an earlier message (`Esc Esc`), the streaming answer so far). Replaying the lines in order
//! rebuilds the [`Session`]: after a cut, the conversation as it is after the cut, while the
//! lines of the part cut off stay in the file.
//!
//! A crash mid-write can leave only the last line cut short: loading drops it with a notice.
//! A bad line anywhere else is corruption, reported with its line number.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{PartialAnswer, SESSION_VERSION, Session, SessionError, io_error};
use kimi_protocol::Message;
use kimi_protocol::{Mode, Trace};

use crate::engine::SharedTrace;

/// The journal format this build writes, and the newest it reads.
pub(crate) const JOURNAL_VERSION: u32 = 1;

/// Longest line read or written. A trace holds at most 2 MiB of answer but its request holds
/// the whole conversation; the bound keeps a hostile file from taking all memory.
pub(crate) const MAX_LINE: usize = 256 << 20;

/// What every journal starts with, byte for byte: how a journal is told from an old `.json`.
pub(crate) const HEADER_START: &[u8] = br#"{"type":"header""#;

/// The summary record of a conversation at `at`.
pub fn summary_of(messages: &[Message], at: u64) -> Record {
    Record::Summary {
        at,
        turns: super::count_turns(messages),
        first_line: super::first_line(messages),
    }
}

/// Most bytes read from either end of a journal for a listing: a header or a summary line is
/// far shorter.
const QUICK_READ: u64 = 64 << 10;

/// What a listing needs of a journal, read from its first line and its last: the header, and
/// the summary record when it is the last line (`None` when it is not: records were added
/// after it, by a run that stopped mid-turn or by an older kimi-tui; the caller reads the
/// whole file then).
pub(crate) fn quick_summary(
    path: &Path,
) -> Result<Option<(Header, u64, usize, String)>, SessionError> {
    use std::io::{Seek, SeekFrom};
    let mut f = File::open(path).map_err(|e| io_error("read", path, &e))?;
    let len = f.metadata().map_err(|e| io_error("read", path, &e))?.len();
    let mut first = Vec::new();
    BufReader::new((&mut f).take(QUICK_READ))
        .read_until(b'\n', &mut first)
        .map_err(|e| io_error("read", path, &e))?;
    if first.last() != Some(&b'\n') {
        return Ok(None);
    }
    let header = first_record(path, &first).map_err(|e| header_error(path, e))?;
    let from = len.saturating_sub(QUICK_READ).max(first.len() as u64);
    f.seek(SeekFrom::Start(from))
        .map_err(|e| io_error("read", path, &e))?;
    let mut tail = Vec::new();
    f.take(QUICK_READ)
        .read_to_end(&mut tail)
        .map_err(|e| io_error("read", path, &e))?;
    let Some(body) = tail.strip_suffix(b"\n") else {
        return Ok(None);
    };
    let Some(start) = body.iter().rposition(|&b| b == b'\n').map(|i| i + 1) else {
        // The last line may have started before the window: a whole read decides.
        return Ok(None);
    };
    match serde_json::from_slice::<Record>(&body[start..]) {
        Ok(Record::Summary {
            at,
            turns,
            first_line,
        }) => {
            let updated = at.max(header.created_unix_ms);
            Ok(Some((header, updated, turns, first_line)))
        }
        _ => Ok(None),
    }
}

/// The first line: what the session is, as [`Session`]'s metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub version: u32,
    pub id: String,
    pub created_unix_ms: u64,
    pub profile: String,
    pub mode: Mode,
    pub model: String,
    /// Without userinfo (see [`kimi_client::redact_url`]).
    pub base_url: String,
}

impl Header {
    pub fn of(s: &Session) -> Header {
        Header {
            version: JOURNAL_VERSION,
            id: s.id.clone(),
            created_unix_ms: s.created_unix_ms,
            profile: s.profile.clone(),
            mode: s.mode,
            model: s.model.clone(),
            base_url: kimi_client::redact_url(&s.base_url),
        }
    }
}

/// One line. `at` is when it was written (Unix ms): the session's `updated_unix_ms` is the
/// latest of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Header(Header),
    /// `messages[index]`, appended: `index` is always the current length.
    Message {
        at: u64,
        index: usize,
        message: Message,
    },
    /// `traces[index]`: appended when `index` is the current length, else replacing the one
    /// saved while its answer streamed.
    Trace {
        at: u64,
        index: usize,
        message_index: usize,
        trace: TraceBody,
    },
    /// `/system`: replaces the first message when it is a system prompt, else is inserted
    /// before the conversation (an empty one is left empty), as the TUI does.
    System {
        at: u64,
        content: String,
    },
    /// The answer streaming now, as far as it arrived: replaces the previous partial record
    /// with the same `after_message`. Kept (shown as interrupted) unless a `partial_end` or a
    /// `truncate` removes it.
    Partial {
        at: u64,
        partial: PartialAnswer,
        /// It holds only what arrived since the partial record before it with the same
        /// `after_message`, and continues that one ([`PartialAnswer::extend`]): a timed save
        /// of a long answer then writes what arrived, not the whole answer again each time.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        more: bool,
    },
    /// The streamed answer after `after_message` finished: its message and trace are saved.
    PartialEnd {
        at: u64,
        after_message: usize,
    },
    /// The cut record: `/retry`, or going back to an earlier message (`Esc Esc`, which cuts
    /// before it). Keep the first `messages` messages and `traces` traces; partial answers to
    /// the messages dropped go too. What was cut stays in the lines before this one: the
    /// record drops it from the conversation, never from the file. One record kind for both
    /// cuts, so that journals with a going-back cut still load in builds that know `/retry`.
    Truncate {
        at: u64,
        messages: usize,
        traces: usize,
    },
    /// A call ran and ended so (its result is the tool message recorded next).
    ToolEnd {
        at: u64,
        #[serde(flatten)]
        end: super::ToolEnd,
    },
    /// What decided a call (a rule, with its file and line, or the tool's approval).
    CallDecided {
        at: u64,
        call: super::CallDecision,
    },
    /// What a listing shows of the session as it stands after the records before it: appended
    /// after each change worth listing, so that a listing reads the header and the last line
    /// instead of the whole journal. Replaying ignores it but for its time.
    Summary {
        at: u64,
        /// User messages.
        turns: usize,
        /// The first user message on one line (see [`Session::first_line`]).
        first_line: String,
    },
}

impl Record {
    /// Whether losing it in a crash would lose a finished message: fsynced at once.
    pub(crate) fn is_durable(&self) -> bool {
        !matches!(self, Record::Partial { .. })
    }

    /// Make it fit to write: no `Authorization` value, no userinfo in the URL.
    pub(crate) fn scrub(&mut self) {
        match self {
            Record::Header(h) => h.base_url = kimi_client::redact_url(&h.base_url),
            Record::Trace { trace, .. } => trace.scrub(),
            _ => {}
        }
    }
}

/// A trace in a [`Record::Trace`]. Read back, it is owned. Sent to be written, a finished
/// request's trace is the agent's own, read in place by the writer thread: a copy of it (its
/// chunk marks and text, tens of MB at a million tokens) would double it while it is written.
/// The agent never writes to a finished trace, so the read lock held while it is encoded
/// blocks nobody.
#[derive(Clone)]
pub enum TraceBody {
    Owned(Box<Trace>),
    Shared(SharedTrace),
}

impl TraceBody {
    /// The trace itself (a shared one is copied).
    pub fn into_trace(self) -> Trace {
        match self {
            TraceBody::Owned(t) => *t,
            TraceBody::Shared(t) => t.read().clone(),
        }
    }

    /// No `Authorization` value. A shared trace holds none (the client redacts it when the
    /// trace starts); should one ever be there, the trace is copied and redacted, never the
    /// agent's own changed.
    fn scrub(&mut self) {
        if let TraceBody::Shared(t) = self {
            if !super::needs_redaction(&t.read()) {
                return;
            }
            let copy = t.read().clone();
            *self = TraceBody::Owned(Box::new(copy));
        }
        if let TraceBody::Owned(t) = self {
            super::redact(t);
        }
    }
}

impl From<Trace> for TraceBody {
    fn from(trace: Trace) -> Self {
        TraceBody::Owned(Box::new(trace))
    }
}

impl From<Box<Trace>> for TraceBody {
    fn from(trace: Box<Trace>) -> Self {
        TraceBody::Owned(trace)
    }
}

impl Serialize for TraceBody {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TraceBody::Owned(t) => t.serialize(s),
            TraceBody::Shared(t) => t.read().serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for TraceBody {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<Trace>::deserialize(d).map(TraceBody::Owned)
    }
}

/// Equal when the traces are (a shared one compared with itself is not read twice).
impl PartialEq for TraceBody {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (TraceBody::Shared(a), TraceBody::Shared(b)) if a.same(b) => true,
            (TraceBody::Owned(a), TraceBody::Owned(b)) => a == b,
            (TraceBody::Owned(a), TraceBody::Shared(b))
            | (TraceBody::Shared(b), TraceBody::Owned(a)) => **a == *b.read(),
            (TraceBody::Shared(a), TraceBody::Shared(b)) => *a.read() == *b.read(),
        }
    }
}

impl std::fmt::Debug for TraceBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceBody::Owned(t) => t.fmt(f),
            TraceBody::Shared(t) => t.fmt(f),
        }
    }
}

/// `record` as one line, newline included, escaped so that `cat` cannot drive a terminal.
pub fn encode(record: &mut Record, out: &mut Vec<u8>) -> io::Result<()> {
    let start = out.len();
    encode_to(record, out)
        .map(|_| ())
        .inspect_err(|_| out.truncate(start))
}

/// `record` as one line, newline included, straight into `out` (no copy of the line in
/// memory: a finished request's trace is a line of tens of MB). Returns the bytes written.
/// Fails past [`MAX_LINE`] having written part of the line: the caller cuts it away.
pub(crate) fn encode_to(record: &mut Record, out: &mut impl io::Write) -> io::Result<u64> {
    record.scrub();
    let mut w = Bounded { inner: out, len: 0 };
    crate::json_out::to_writer(&mut w, record).map_err(io::Error::other)?;
    io::Write::write_all(&mut w, b"\n")?;
    Ok(w.len)
}

/// Counts what goes through and refuses a line longer than [`MAX_LINE`].
struct Bounded<'a, W> {
    inner: &'a mut W,
    len: u64,
}

impl<W: io::Write> io::Write for Bounded<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.len + buf.len() as u64 > MAX_LINE as u64 {
            return Err(io::Error::other(format!(
                "a record of more than {} MiB cannot be saved",
                MAX_LINE >> 20
            )));
        }
        let n = self.inner.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The whole of `session` as journal records, header first.
pub fn records_of(session: &Session) -> Vec<Record> {
    let at = session.updated_unix_ms;
    let mut out = vec![Record::Header(Header::of(session))];
    out.extend(
        session
            .messages
            .iter()
            .enumerate()
            .map(|(index, m)| Record::Message {
                at,
                index,
                message: m.clone(),
            }),
    );
    out.extend(
        session
            .traces
            .iter()
            .enumerate()
            .map(|(index, t)| Record::Trace {
                at,
                index,
                message_index: t.message_index,
                trace: t.trace.clone().into(),
            }),
    );
    out.extend(session.partial.iter().map(|p| Record::Partial {
        at,
        partial: p.clone(),
        more: false,
    }));
    out.extend(session.tool_ends.iter().map(|end| Record::ToolEnd {
        at,
        end: end.clone(),
    }));
    out.extend(session.decisions.iter().map(|d| Record::CallDecided {
        at,
        call: d.clone(),
    }));
    out.push(summary_of(&session.messages, at));
    out
}

/// A journal read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub session: Session,
    /// Set when the last line was cut off and dropped.
    pub notice: Option<String>,
    /// Bytes of whole records: where the next record goes (a cut-off tail is cut away first).
    pub(crate) valid_len: u64,
    /// The last record lacks its newline (written whole, cut just before it).
    pub(crate) needs_newline: bool,
}

/// The session a journal rebuilds, record by record.
struct Replay {
    session: Session,
}

impl Replay {
    fn new(h: Header) -> Replay {
        Replay {
            session: Session {
                version: SESSION_VERSION,
                id: h.id,
                created_unix_ms: h.created_unix_ms,
                updated_unix_ms: h.created_unix_ms,
                profile: h.profile,
                mode: h.mode,
                model: h.model,
                base_url: h.base_url,
                messages: Vec::new(),
                traces: Vec::new(),
                partial: Vec::new(),
                tool_ends: Vec::new(),
                decisions: Vec::new(),
            },
        }
    }

    fn apply(&mut self, r: Record) -> Result<(), RecordError> {
        let s = &mut self.session;
        let at = match r {
            Record::Header(_) => return Err(RecordError::SecondHeader),
            Record::Message { at, index, message } => {
                if index != s.messages.len() {
                    return Err(RecordError::MessageOutOfOrder {
                        index,
                        expected: s.messages.len(),
                    });
                }
                s.messages.push(message);
                at
            }
            Record::Trace {
                at,
                index,
                message_index,
                trace,
            } => {
                let t = super::SessionTrace {
                    message_index,
                    trace: trace.into_trace(),
                };
                let len = s.traces.len();
                match s.traces.get_mut(index) {
                    Some(slot) => *slot = t,
                    None if index == len => s.traces.push(t),
                    None => {
                        return Err(RecordError::TraceOutOfOrder { index, max: len });
                    }
                }
                at
            }
            Record::System { at, content } => {
                match s.messages.first_mut() {
                    Some(m) if m.role == "system" => *m = Message::system(content),
                    Some(_) => {
                        s.messages.insert(0, Message::system(content));
                        // Every message moved up by one: what points at messages moves too,
                        // as in the agent and the app's view.
                        s.traces.iter_mut().for_each(|t| t.message_index += 1);
                        s.partial.iter_mut().for_each(|p| p.after_message += 1);
                    }
                    None => {}
                }
                at
            }
            Record::Partial { at, partial, more } => {
                match s
                    .partial
                    .iter_mut()
                    .find(|p| p.after_message == partial.after_message)
                {
                    Some(p) if more => p.extend(partial),
                    Some(p) => *p = partial,
                    None => s.partial.push(partial),
                }
                at
            }
            Record::PartialEnd { at, after_message } => {
                s.partial.retain(|p| p.after_message != after_message);
                at
            }
            Record::Truncate {
                at,
                messages,
                traces,
            } => {
                s.messages.truncate(messages);
                s.traces.truncate(traces);
                s.partial.retain(|p| p.after_message < messages);
                let calls: std::collections::HashSet<&str> = (s.messages.iter())
                    .flat_map(|m| m.tool_calls.iter().map(|c| c.id.as_str()))
                    .collect();
                s.tool_ends.retain(|e| calls.contains(e.call_id.as_str()));
                s.decisions.retain(|d| calls.contains(d.call_id.as_str()));
                at
            }
            Record::Summary { at, .. } => at,
            Record::ToolEnd { at, end } => {
                s.tool_ends.push(end);
                at
            }
            Record::CallDecided { at, call } => {
                s.decisions.push(call);
                at
            }
        };
        s.updated_unix_ms = s.updated_unix_ms.max(at);
        Ok(())
    }
}

/// Whether `path` holds a journal (else an old `.json` session): its first bytes say.
pub(crate) fn is_journal(path: &Path) -> Result<bool, SessionError> {
    let mut head = [0u8; HEADER_START.len()];
    let mut f = File::open(path).map_err(|e| io_error("read", path, &e))?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error("read", path, &e)),
        }
    }
    Ok(&head[..got] == HEADER_START)
}

/// Read the journal at `path`, line by line.
pub fn read(path: &Path) -> Result<Loaded, SessionError> {
    let f = File::open(path).map_err(|e| io_error("read", path, &e))?;
    read_from(path, BufReader::with_capacity(1 << 16, f))
}

fn corrupt(path: &Path, line: usize, detail: impl std::fmt::Display) -> SessionError {
    SessionError::Corrupt {
        path: path.to_owned(),
        detail: format!("line {line}: {detail}"),
    }
}

fn read_from(path: &Path, mut r: impl BufRead) -> Result<Loaded, SessionError> {
    let mut replay: Option<Replay> = None;
    let mut line = Vec::new();
    // A line that failed to parse: an error unless it turns out to be the last one.
    let mut bad: Option<(usize, u64, RecordError)> = None;
    let mut offset: u64 = 0;
    let mut valid_len: u64 = 0;
    let mut needs_newline = false;
    let mut n = 0;
    loop {
        line.clear();
        let got = (&mut r)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error("read", path, &e))?;
        if got == 0 {
            break;
        }
        n += 1;
        if let Some((at, _, detail)) = bad.take() {
            return Err(corrupt(path, at, detail));
        }
        let start = offset;
        offset += got as u64;
        let complete = line.last() == Some(&b'\n');
        if !complete && got > MAX_LINE {
            return Err(corrupt(
                path,
                n,
                format!("longer than {} MiB", MAX_LINE >> 20),
            ));
        }
        let parsed = match replay.as_mut() {
            None => first_record(path, &line).map(|h| replay = Some(Replay::new(h))),
            Some(rp) => serde_json::from_slice::<Record>(&line)
                .map_err(|e| RecordError::Json(e.to_string()))
                .and_then(|rec| rp.apply(rec)),
        };
        match parsed {
            Ok(()) => {
                valid_len = offset;
                needs_newline = !complete;
            }
            Err(detail) if replay.is_some() => bad = Some((n, start, detail)),
            // The header itself: nothing to keep.
            Err(detail) => return Err(header_error(path, detail)),
        }
    }
    let Some(replay) = replay else {
        return Err(SessionError::Corrupt {
            path: path.to_owned(),
            detail: "empty file".to_owned(),
        });
    };
    let notice = bad.map(|(_, start, _)| {
        format!(
            "{}: the last record was cut off (crash mid-write?); {} bytes ignored",
            path.display(),
            offset - start
        )
    });
    let session = replay.session;
    super::validate::check(&session).map_err(|e| SessionError::Corrupt {
        path: path.to_owned(),
        detail: e.to_string(),
    })?;
    Ok(Loaded {
        session,
        notice,
        valid_len,
        needs_newline,
    })
}

/// The header error says what it is: a newer version is refused before anything is read.
fn header_error(path: &Path, detail: RecordError) -> SessionError {
    match detail {
        RecordError::Newer(version) => SessionError::Newer {
            path: path.to_owned(),
            version,
        },
        detail => corrupt(path, 1, detail),
    }
}

/// What is wrong with one line of a journal; shown after its line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum RecordError {
    /// Not a record: serde's message.
    #[error("{0}")]
    Json(String),
    /// The first line is not a header record: serde's message.
    #[error("header: {0}")]
    Header(String),
    #[error("the first record is `{0}`, not the header")]
    FirstIsNot(String),
    #[error("the first record is not the header")]
    NotHeader,
    /// Written by a newer version: refused as a whole, never shown as a line's problem.
    #[error("written by a newer kimi-tui (version {0})")]
    Newer(u64),
    #[error("a second header record")]
    SecondHeader,
    #[error("message {index} where message {expected} was expected")]
    MessageOutOfOrder { index: usize, expected: usize },
    #[error("trace {index} where at most trace {max} was expected")]
    TraceOutOfOrder { index: usize, max: usize },
}

fn first_record(_path: &Path, line: &[u8]) -> Result<Header, RecordError> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "type")]
        kind: String,
        version: u64,
    }
    let header = |e: serde_json::Error| RecordError::Header(e.to_string());
    let p: Probe = serde_json::from_slice(line).map_err(header)?;
    if p.kind != "header" {
        return Err(RecordError::FirstIsNot(p.kind));
    }
    if p.version > u64::from(JOURNAL_VERSION) {
        return Err(RecordError::Newer(p.version));
    }
    match serde_json::from_slice::<Record>(line).map_err(header)? {
        Record::Header(h) => Ok(h),
        _ => Err(RecordError::NotHeader),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let s = Session::new("p", Mode::Raw, "m", "http://u:pw@h/v1");
        let mut out = Vec::new();
        encode(&mut Record::Header(Header::of(&s)), &mut out).expect("encode");
        out
    }

    #[test]
    fn the_header_starts_as_sniffed_and_holds_no_userinfo() {
        let h = header();
        assert!(
            h.starts_with(HEADER_START),
            "{}",
            String::from_utf8_lossy(&h)
        );
        assert!(!String::from_utf8_lossy(&h).contains("pw"));
    }

    #[test]
    fn replay_follows_each_record_kind() {
        let mut bytes = header();
        let mut add = |mut r: Record| encode(&mut r, &mut bytes).expect("encode");
        add(Record::Message {
            at: 5,
            index: 0,
            message: Message::user("a"),
        });
        add(Record::System {
            at: 6,
            content: "sys".into(),
        });
        add(Record::Partial {
            at: 7,
            partial: PartialAnswer {
                after_message: 2,
                content: "x".into(),
                ..PartialAnswer::default()
            },
            more: false,
        });
        add(Record::Partial {
            at: 8,
            partial: PartialAnswer {
                after_message: 2,
                content: "xy".into(),
                ..PartialAnswer::default()
            },
            more: false,
        });
        add(Record::Message {
            at: 9,
            index: 2,
            message: Message::assistant("xyz"),
        });
        add(Record::PartialEnd {
            at: 9,
            after_message: 2,
        });
        let l = read_from(Path::new("j"), &bytes[..]).expect("reads");
        let s = l.session;
        assert_eq!(
            s.messages,
            [
                Message::system("sys"),
                Message::user("a"),
                Message::assistant("xyz")
            ]
        );
        assert!(s.partial.is_empty());
        assert_eq!(s.updated_unix_ms, s.created_unix_ms.max(9));
        assert_eq!(l.valid_len, bytes.len() as u64);
        // A message out of order is corruption, named by line.
        let mut more = bytes.clone();
        encode(
            &mut Record::Message {
                at: 1,
                index: 7,
                message: Message::user("?"),
            },
            &mut more,
        )
        .expect("encode");
        encode(
            &mut Record::Truncate {
                at: 1,
                messages: 1,
                traces: 0,
            },
            &mut more,
        )
        .expect("encode");
        let e = read_from(Path::new("j"), &more[..]).expect_err("corrupt");
        assert!(
            e.to_string()
                .contains("line 8: message 7 where message 3 was expected"),
            "{e}"
        );
    }

    #[test]
    fn an_edited_answer_keeps_its_edit_and_original_through_the_journal() {
        let mut bytes = header();
        let user = Message::user("weather?");
        let original = Message::assistant("Let me check.");
        let edited = Message {
            edited: Some(Box::new(kimi_protocol::AnswerEdit {
                original: "Let me check.<|tool_calls_section_begin|><|tool_call_begin".into(),
                original_calls: Vec::new(),
                prefix: "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>".into(),
            })),
            ..Message::assistant("Let me check.")
        };
        for mut r in [
            Record::Message {
                at: 1,
                index: 0,
                message: user.clone(),
            },
            Record::Message {
                at: 2,
                index: 1,
                message: original,
            },
            Record::Truncate {
                at: 3,
                messages: 1,
                traces: 0,
            },
            Record::Message {
                at: 4,
                index: 1,
                message: edited.clone(),
            },
        ] {
            encode(&mut r, &mut bytes).expect("encode");
        }
        let s = read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session;
        assert_eq!(s.messages, [user, edited]);
        let edit = s.messages[1].edited.as_deref().expect("the edit survives");
        assert!(edit.original.ends_with("<|tool_call_begin"));
        assert!(edit.prefix.ends_with("<|tool_call_begin|>"));
    }

    #[test]
    fn a_journal_written_before_answers_could_be_edited_still_reads() {
        let mut bytes = header();
        bytes.extend_from_slice(
            br#"{"type":"message","at":5,"index":0,"message":{"role":"user","content":"hi"}}
{"type":"message","at":6,"index":1,"message":{"role":"assistant","content":"Hello.","edited_arguments":null}}
"#,
        );
        let s = read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session;
        assert_eq!(
            s.messages,
            [Message::user("hi"), Message::assistant("Hello.")]
        );
        assert!(s.messages.iter().all(|m| m.edited.is_none()));
    }

    #[test]
    fn call_decisions_are_recorded_replayed_and_cut_with_their_calls() {
        use crate::tools::rules::{DecisionOrigin, RuleDecision, RuleId, RuleSource, Verdict};
        let call = kimi_protocol::ToolCall::new("functions.get_weather:0", "get_weather", "{}");
        let decision = RuleDecision {
            verdict: Verdict::Allow,
            origin: DecisionOrigin::Rule {
                id: RuleId(1),
                label: "weather".into(),
                source: RuleSource::Config {
                    path: "/c/config.toml".into(),
                    line: 42,
                },
            },
        };
        let mut bytes = header();
        let mut add = |mut r: Record| encode(&mut r, &mut bytes).expect("encode");
        add(Record::Message {
            at: 1,
            index: 0,
            message: Message::user("weather?"),
        });
        add(Record::Message {
            at: 2,
            index: 1,
            message: Message::assistant_with_calls(String::new(), vec![call.clone()]),
        });
        add(Record::CallDecided {
            at: 3,
            call: super::super::CallDecision {
                call_id: call.id.clone(),
                arguments: "{}".into(),
                decision: decision.clone(),
            },
        });
        add(Record::Message {
            at: 4,
            index: 2,
            message: Message::tool_result(&call.id, "get_weather", "sunny".to_owned()),
        });
        let s = read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session;
        assert_eq!(s.decisions.len(), 1);
        assert_eq!(s.decisions[0].decision, decision);
        // A resumed session reports the decision before the call's result, as live.
        let (events, _) = crate::engine::replay::resume_events(&s, None);
        let decided = events.iter().find_map(|e| match e {
            crate::engine::EngineEvent::CallDecided {
                index, decision, ..
            } => Some((*index, decision.clone())),
            _ => None,
        });
        assert_eq!(decided, Some((0, decision)));
        // Written whole (a fork) and read back, it is kept.
        let mut again = Vec::new();
        for mut r in records_of(&s) {
            encode(&mut r, &mut again).expect("encode");
        }
        let back = read_from(Path::new("j"), &again[..])
            .expect("reads")
            .session;
        assert_eq!(back.decisions, s.decisions);
        // Cutting the call away cuts its decision.
        encode(
            &mut Record::Truncate {
                at: 5,
                messages: 1,
                traces: 0,
            },
            &mut bytes,
        )
        .expect("encode");
        let cut = read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session;
        assert!(cut.decisions.is_empty());
    }

    #[test]
    fn a_listing_reads_the_summary_at_the_end_and_falls_back_without_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("j.jsonl");
        let mut bytes = header();
        let add = |bytes: &mut Vec<u8>, mut r: Record| encode(&mut r, bytes).expect("encode");
        add(
            &mut bytes,
            Record::Message {
                at: 5,
                index: 0,
                message: Message::user("first question"),
            },
        );
        // What the summary says is what a listing shows: the body is not read.
        add(
            &mut bytes,
            Record::Summary {
                at: 6,
                turns: 7,
                first_line: "as summarized".into(),
            },
        );
        std::fs::write(&path, &bytes).expect("write");
        let (h, _, turns, first) = quick_summary(&path).expect("reads").expect("summary");
        assert_eq!(
            (h.profile.as_str(), turns, first.as_str()),
            ("p", 7, "as summarized")
        );
        // A record after the summary: the quick read declines, and replay still loads it.
        add(
            &mut bytes,
            Record::Message {
                at: 9,
                index: 1,
                message: Message::assistant("x"),
            },
        );
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(quick_summary(&path).expect("reads"), None);
        assert_eq!(read(&path).expect("loads").session.messages.len(), 2);
    }

    #[test]
    fn a_partial_record_with_more_continues_the_one_before() {
        use kimi_protocol::ToolCall;
        let mut bytes = header();
        let add = |bytes: &mut Vec<u8>, mut r: Record| encode(&mut r, bytes).expect("encode");
        let part = |content: &str, reasoning: &str, calls: Vec<ToolCall>| PartialAnswer {
            after_message: 0,
            content: content.into(),
            reasoning_content: reasoning.into(),
            tool_calls: calls,
            saved_unix_ms: 0,
        };
        add(
            &mut bytes,
            Record::Partial {
                at: 1,
                partial: part("Hel", "thi", vec![ToolCall::new("a:0", "a", "{\"x\"")]),
                more: false,
            },
        );
        add(
            &mut bytes,
            Record::Partial {
                at: 2,
                partial: part(
                    "lo",
                    "nk",
                    vec![
                        ToolCall::new("a:0", "a", ": 1}"),
                        ToolCall::new("b:1", "b", "{"),
                    ],
                ),
                more: true,
            },
        );
        let line = String::from_utf8_lossy(&bytes);
        assert_eq!(line.matches("\"more\":true").count(), 1, "{line}");
        let p = &read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session
            .partial;
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].content.as_str(), p[0].reasoning_content.as_str()),
            ("Hello", "think")
        );
        let args: Vec<_> = p[0]
            .tool_calls
            .iter()
            .map(|c| c.function.arguments.as_str())
            .collect();
        assert_eq!(args, ["{\"x\": 1}", "{"]);
        // Without `more`, a record replaces the one before, as every older journal says.
        add(
            &mut bytes,
            Record::Partial {
                at: 3,
                partial: part("Bye", "", vec![]),
                more: false,
            },
        );
        let p = read_from(Path::new("j"), &bytes[..])
            .expect("reads")
            .session
            .partial;
        assert_eq!(p[0], part("Bye", "", vec![]));
    }
}
