//! What the session journal still lacks of the conversation: the records of what changed
//! since the last save, worked out from lengths and a few remembered facts, so that a save
//! costs what changed, not the whole session. The records go to the writer thread.

use std::time::Duration;

use kimi_core::session::SessionStore;
use kimi_core::session::journal::{Header, Record, TraceBody};
use kimi_core::session::writer::{JournalWriter, Target};

use super::partial::{self, Size};
use super::state::App;

/// What this run has written to the journal, beyond the message and trace counts in
/// `App::saved`; the writer it goes through.
#[derive(Default)]
pub struct JournalState {
    pub writer: Option<JournalWriter>,
    /// The system prompt the journal holds as its first message.
    system: Option<String>,
    /// Restored interrupted answers the journal holds (`App::partial`).
    kept_partials: usize,
    /// The streaming answer last written: its `after_message` and size.
    live: Option<(usize, Size)>,
    /// The streaming request's trace, written with its first partial record.
    streaming_trace: Option<usize>,
    /// The session continued is an old `ID.json`: its journal is new and holds it all.
    pub beside_legacy: bool,
}

impl JournalState {
    /// The journal holds the conversation `app` was just restored to.
    pub fn restored(app: &App) -> JournalState {
        JournalState {
            writer: None,
            system: system_of(app),
            kept_partials: app.partial.len(),
            live: None,
            streaming_trace: None,
            beside_legacy: false,
        }
    }

    /// Wait for the writer, at most `timeout` (see [`JournalWriter::flush`]).
    pub fn flush(&mut self, timeout: Duration) -> bool {
        self.writer.as_mut().is_none_or(|w| w.flush(timeout))
    }
}

fn system_of(app: &App) -> Option<String> {
    app.conversation
        .first()
        .filter(|m| m.role == "system")
        .map(|m| m.text())
}

/// Make sure a writer for session `id` runs; `creating`: this run writes its first record.
pub(crate) fn writer_for<'a>(
    app: &'a mut App,
    store: &SessionStore,
    id: &str,
    creating: bool,
) -> std::io::Result<&'a mut JournalWriter> {
    let j = &mut app.journal;
    if j.writer.as_ref().is_none_or(|w| w.id != id) {
        let target = if creating {
            Target::Create {
                beside_legacy: j.beside_legacy,
            }
        } else {
            Target::Continue
        };
        j.writer = Some(JournalWriter::spawn(store, id, target)?);
    }
    match j.writer.as_mut() {
        Some(w) => Ok(w),
        None => Err(std::io::Error::other("no journal writer")),
    }
}

/// The records that bring the journal up to `app`, and the counts it then holds. `at`: now.
pub fn records(app: &mut App, creating: bool, at: u64) -> (Vec<Record>, (usize, usize)) {
    let mut out = Vec::new();
    if creating {
        let beside_legacy = app.journal.beside_legacy;
        app.journal = JournalState {
            beside_legacy,
            writer: app.journal.writer.take(),
            ..JournalState::default()
        };
        if let Some(meta) = &app.session {
            out.push(Record::Header(Header::of(meta)));
        }
    }
    let (mut m, mut t) = if creating {
        (0, 0)
    } else {
        app.saved.unwrap_or((0, 0))
    };
    let len = app.conversation.len();
    // Traces whose round ended (the streaming one, if any, is the next).
    let finals = app.trace_messages.len().min(app.traces.len());
    let system = system_of(app);
    let j = &mut app.journal;
    // `/retry` cut the conversation back (and the answers and traces after it).
    if len < m || finals < t || app.partial.len() < j.kept_partials {
        m = m.min(len);
        t = t.min(finals);
        out.push(Record::Truncate {
            at,
            messages: m,
            traces: t,
        });
        j.live = None;
        j.streaming_trace = None;
        if m == 0 {
            j.system = None;
        }
    }
    j.kept_partials = j.kept_partials.min(app.partial.len());
    // `/system` replaced the first message, or put one before the conversation.
    if m > 0
        && system != j.system
        && let Some(content) = &system
    {
        out.push(Record::System {
            at,
            content: content.clone(),
        });
        if j.system.is_none() {
            m += 1;
        }
    }
    j.system = system;
    for (index, message) in app.conversation.iter().enumerate().skip(m) {
        out.push(Record::Message {
            at,
            index,
            message: message.clone(),
        });
    }
    for index in t..finals {
        out.push(Record::Trace {
            at,
            index,
            message_index: app.trace_messages[index],
            // Finished: the writer reads the agent's trace in place, no copy.
            trace: TraceBody::Shared(app.traces[index].clone()),
        });
    }
    if j.streaming_trace.is_some_and(|k| k < finals) {
        j.streaming_trace = None;
    }
    // Restored interrupted answers, written once with the rest of a new journal.
    for p in app.partial.iter().skip(j.kept_partials) {
        out.push(Record::Partial {
            at,
            partial: p.clone(),
            more: false,
        });
    }
    j.kept_partials = app.partial.len();
    let live = app.streaming.as_ref().filter(|s| !s.is_empty());
    if let Some((k, _)) = j.live
        && live.is_none_or(|s| s.answer.after_message != k)
    {
        // Its message and trace are written above: the partial record is done with.
        out.push(Record::PartialEnd {
            at,
            after_message: k,
        });
        j.live = None;
    }
    if let Some(s) = live {
        let after = s.answer.after_message;
        let size = s.size();
        let last = j.live.as_ref().filter(|l| l.0 == after).map(|l| &l.1);
        if last != Some(&size) {
            // The streaming request's trace goes with its first partial record, so that a
            // crash keeps the request; its final version replaces it when the round ends.
            if j.streaming_trace.is_none() && app.traces.len() == finals + 1 {
                out.push(Record::Trace {
                    at,
                    index: finals,
                    message_index: len,
                    // A copy: the agent is still adding to it.
                    trace: TraceBody::from(app.traces[finals].read().clone()),
                });
                j.streaming_trace = Some(finals);
            }
            // What arrived since the last save (the writer thread takes the copy); the whole
            // answer when it is the first save, or when it no longer extends the last one.
            let shown = partial::shown_text(&app.transcript.entries, app.transcript.turn_entry);
            let (partial, more) = match last.and_then(|from| s.since(shown, from)) {
                Some(part) => (part, true),
                None => (s.answer(shown), false),
            };
            out.push(Record::Partial { at, partial, more });
            j.live = Some((after, size));
        }
    }
    (out, (len, finals))
}
