//! Continuing from an edited answer: the user edits the model's output of the last answer (a
//! marker split wrong, arguments that are not JSON), the edit replaces that answer, and the
//! model goes on from it (`Backend::stream_continue`). The new answer records the edit and
//! the original; a continuation that fails puts the conversation back as it was. Runs only
//! between turns (`turn::waits_for_turn_end`).

use super::agent::State;
use super::event::{EngineEvent, TurnOutcome};
use super::inbox::Io;
use super::shared_trace::SharedTrace;
use kimi_client::BackendError;
use kimi_protocol::{AnswerEdit, Message, Mode};

/// The answer the user may edit, and the text offered for editing.
#[derive(Debug, Clone, PartialEq)]
pub struct EditableAnswer {
    /// Where the answer is in the conversation.
    pub message: usize,
    /// Raw mode: the completion text exactly as it arrived, markers included; chat mode: the
    /// message's content.
    pub text: String,
}

/// The last answer of `messages` as it can be edited in `mode`: the last assistant message,
/// when it answers the last user message. Raw mode needs the answer's trace (`traces`, each
/// with the index of its message), which holds the model's output as it arrived. Why not,
/// in words, when there is none.
pub fn editable_answer<'a>(
    mode: Mode,
    messages: &[Message],
    traces: impl DoubleEndedIterator<Item = (usize, &'a SharedTrace)>,
) -> Result<EditableAnswer, String> {
    let last_user = messages.iter().rposition(|m| m.role == "user");
    let at = messages
        .iter()
        .rposition(|m| m.role == "assistant")
        .filter(|a| last_user.is_none_or(|u| *a > u))
        .ok_or("There is no answer to edit: the last message has no answer.")?;
    let text = match mode {
        Mode::Chat => messages[at].text(),
        Mode::Raw => {
            // The trace that made this message: a continued answer's starts with its edited
            // prefix; an answer put back after a failed continuation is older than the
            // failed attempt's trace.
            let prefix = messages[at].edited.as_ref().map(|e| e.prefix.as_str());
            let (_, trace) = traces
                .rev()
                .find(|(m, t)| *m == at && t.read().prefix.as_deref() == prefix)
                .ok_or("The last answer has no trace to edit its raw output from.")?;
            let t = trace.read();
            if t.mode != Mode::Raw {
                return Err(
                    "The last answer came in chat mode: its raw output is not known here (edit it in chat mode, /mode chat)."
                        .to_owned(),
                );
            }
            if t.dropped_chunks > 0 {
                return Err(
                    "The last answer is longer than its trace keeps: its raw output cannot be edited whole."
                        .to_owned(),
                );
            }
            format!("{}{}", t.prefix.as_deref().unwrap_or_default(), t.data)
        }
    };
    Ok(EditableAnswer { message: at, text })
}

/// A continuation waiting for the turn that sends it: what the answer goes on from, and what
/// it replaced (put back if it fails).
pub(crate) struct Continuation {
    pub(crate) edit: AnswerEdit,
    pub(crate) removed: Vec<Message>,
}

/// Cut the last answer (and what followed it) for its edited version `prefix`, and queue the
/// request that continues it for the next turn; `false` (said, and the turn reported done)
/// when there is no answer to edit.
pub(crate) async fn start(state: &mut State, io: &mut Io, prefix: String) -> bool {
    let mode = state.backend.endpoint().mode;
    let traces = state.traces.iter().map(|(m, t)| (*m, t));
    let answer = match editable_answer(mode, &state.conversation, traces) {
        Ok(a) => a,
        Err(text) => {
            io.emit(EngineEvent::Notice { text, error: true }).await;
            let outcome = Box::new(TurnOutcome::default());
            io.emit(EngineEvent::TurnDone { outcome }).await;
            return false;
        }
    };
    let at = answer.message;
    let removed = state.conversation.split_off(at);
    let original_calls = match (mode, removed.first()) {
        (Mode::Chat, Some(m)) => m.tool_calls.clone(),
        _ => Vec::new(),
    };
    let keep = super::rewind::traces_kept(&state.traces, at);
    state.traces.truncate(keep);
    io.emit(EngineEvent::Truncated {
        messages: at,
        traces: keep,
    })
    .await;
    state.continuation = Some(Continuation {
        edit: AnswerEdit {
            original: answer.text,
            original_calls,
            prefix,
        },
        removed,
    });
    true
}

/// The continuation failed or was cancelled: the answer it replaced (and what followed it)
/// goes back, and a refused partial-mode request is named.
pub(crate) async fn restore(
    state: &mut State,
    io: &mut Io,
    continuation: Continuation,
    error: Option<&BackendError>,
) {
    let ep = state.backend.endpoint();
    if ep.mode == Mode::Chat
        && let Some(BackendError::Http { status: 400, .. }) = error
    {
        let text = format!(
            "The server refused to continue the edited answer (HTTP 400): it may not support {}. The conversation is as it was.",
            kimi_client::partial_mode_spelling(&ep.base_url)
        );
        io.emit(EngineEvent::Notice { text, error: true }).await;
    } else if error.is_some() {
        let text = "The edited answer was not continued; the conversation is as it was.";
        io.emit(EngineEvent::Notice {
            text: text.to_owned(),
            error: true,
        })
        .await;
    }
    for message in continuation.removed {
        state.append(io, message).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::{RequestSent, StreamEvent, Trace};

    fn raw_trace(chunks: &[&str]) -> SharedTrace {
        continued_trace(None, chunks)
    }

    fn continued_trace(prefix: Option<&str>, chunks: &[&str]) -> SharedTrace {
        let t = SharedTrace::new(Trace::started(RequestSent {
            mode: Mode::Raw,
            prefix: prefix.map(str::to_owned),
            ..RequestSent::default()
        }));
        for (i, c) in chunks.iter().enumerate() {
            t.record(&StreamEvent::Chunk {
                data: (*c).to_owned(),
                at_us: i as u64,
            });
        }
        t
    }

    #[test]
    fn raw_mode_offers_the_completion_as_it_arrived() {
        let messages = vec![
            Message::user("weather?"),
            Message::assistant("Let me check."),
        ];
        let traces = [
            (1, raw_trace(&["nothing"])),
            (
                1,
                raw_trace(&[
                    "Let me check.",
                    "<|tool_calls_section_begin|><|tool_call_beg",
                ]),
            ),
        ];
        let a = editable_answer(Mode::Raw, &messages, traces.iter().map(|(m, t)| (*m, t)))
            .expect("editable");
        assert_eq!(a.message, 1);
        assert_eq!(
            a.text,
            "Let me check.<|tool_calls_section_begin|><|tool_call_beg"
        );
        let chat = editable_answer(Mode::Chat, &messages, std::iter::empty()).expect("chat");
        assert_eq!(chat.text, "Let me check.");
    }

    /// A continued answer is offered whole, its edited start included; an answer put back
    /// after a failed continuation is offered as the model wrote it, not the failed attempt.
    #[test]
    fn a_continued_or_restored_answer_offers_its_own_output() {
        let original = "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|";
        let prefix = "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>";
        let mut continued = Message::assistant("Let me check.");
        continued.edited = Some(Box::new(AnswerEdit {
            original: original.into(),
            original_calls: Vec::new(),
            prefix: prefix.into(),
        }));
        let traces = [
            (1, raw_trace(&[original])),
            (1, continued_trace(Some(prefix), &[r#"{"city": "Paris"}"#])),
        ];
        let messages = vec![Message::user("weather?"), continued];
        let a = editable_answer(Mode::Raw, &messages, traces.iter().map(|(m, t)| (*m, t)))
            .expect("editable");
        assert_eq!(a.text, format!(r#"{prefix}{{"city": "Paris"}}"#));
        // The continuation failed: the original answer is back, the attempt's trace stays.
        let restored = vec![
            Message::user("weather?"),
            Message::assistant("Let me check."),
        ];
        let a = editable_answer(Mode::Raw, &restored, traces.iter().map(|(m, t)| (*m, t)))
            .expect("editable");
        assert_eq!(a.text, original);
    }

    #[test]
    fn no_answer_to_edit_is_said() {
        let none = editable_answer(Mode::Chat, &[Message::user("hi")], std::iter::empty());
        assert!(none.unwrap_err().contains("no answer to edit"));
        // The last user message has no answer yet: an older answer is not "the last answer".
        let older = [
            Message::user("a"),
            Message::assistant("b"),
            Message::user("c"),
        ];
        assert!(editable_answer(Mode::Chat, &older, std::iter::empty()).is_err());
        let no_trace = editable_answer(
            Mode::Raw,
            &[Message::user("a"), Message::assistant("b")],
            std::iter::empty(),
        );
        assert!(no_trace.unwrap_err().contains("no trace"));
    }
}
