//! Going back (`Esc Esc`): cut the conversation before an earlier user message. Runs only
//! between turns (`turn::waits_for_turn_end`).

use super::agent::State;
use super::event::EngineEvent;
use super::inbox::Io;
use super::shared_trace::SharedTrace;
use kimi_protocol::Message;

/// Where the `user_index`-th user message (from 0) sits in `conversation`.
pub fn user_message_index(conversation: &[Message], user_index: usize) -> Option<usize> {
    conversation
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == "user")
        .nth(user_index)
        .map(|(i, _)| i)
}

/// How many of `traces` (each with the index of its message) survive a cut to `messages`
/// messages: those of requests made before the cut message was added. A failed request's trace
/// points at the message count it failed at, which may equal `messages`: it stays.
pub(crate) fn traces_kept(traces: &[(usize, SharedTrace)], messages: usize) -> usize {
    traces
        .iter()
        .position(|(m, _)| *m > messages)
        .unwrap_or(traces.len())
}

pub(crate) async fn rewind(state: &mut State, io: &mut Io, user_index: usize) {
    let Some(cut) = user_message_index(&state.conversation, user_index) else {
        let text = format!(
            "There is no user message {} to go back to: nothing was cut.",
            user_index + 1
        );
        io.emit(EngineEvent::Notice { text, error: true }).await;
        return;
    };
    state.conversation.truncate(cut);
    let keep = traces_kept(&state.traces, cut);
    state.traces.truncate(keep);
    io.emit(EngineEvent::Truncated {
        messages: cut,
        traces: keep,
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_messages_are_counted_past_the_system_prompt_and_tool_results() {
        let c = vec![
            Message::system("s"),
            Message::user("a"),
            Message::assistant("x"),
            Message::tool_result("id", "t", "r"),
            Message::user("b"),
        ];
        assert_eq!(user_message_index(&c, 0), Some(1));
        assert_eq!(user_message_index(&c, 1), Some(4));
        assert_eq!(user_message_index(&c, 2), None);
    }

    #[test]
    fn traces_of_requests_after_the_cut_go() {
        let t = |m: usize| (m, SharedTrace::default());
        let traces = vec![t(2), t(3), t(4), t(6)];
        assert_eq!(traces_kept(&traces, 3), 2);
        assert_eq!(traces_kept(&traces, 1), 0);
        assert_eq!(traces_kept(&traces, 9), 4);
    }
}
