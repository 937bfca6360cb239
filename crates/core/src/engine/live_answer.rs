//! The answer streaming now, gathered from the stream events the agent reports, so that the
//! recorder can save it as a partial answer: a crash mid-answer loses at most the last second.

use kimi_protocol::{StreamEvent, ToolCall};

use crate::session::PartialAnswer;

/// Bytes of an answer's text, reasoning and each call's arguments: what a save compares to
/// know whether the answer grew, and where the next save's part starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Size {
    /// Text moved between the answer and the reasoning this many times: a save before a move
    /// is no prefix of the answer after it.
    moves: u32,
    text: usize,
    reasoning: usize,
    args: Vec<usize>,
}

/// Everything that has arrived of the current round's answer, as the model sent it.
#[derive(Debug, Default)]
pub(crate) struct LiveAnswer {
    pub answer: PartialAnswer,
    /// The stream's index of each call in `answer.tool_calls`.
    indices: Vec<usize>,
    /// See [`Size::moves`].
    moves: u32,
}

impl LiveAnswer {
    /// A round whose request was made with `messages` messages in the conversation.
    pub(super) fn new(messages: usize) -> Self {
        LiveAnswer {
            answer: PartialAnswer {
                after_message: messages,
                ..PartialAnswer::default()
            },
            indices: Vec::new(),
            moves: 0,
        }
    }

    /// Take one stream event; `true` when the answer changed.
    pub(super) fn take(&mut self, e: &StreamEvent) -> bool {
        let a = &mut self.answer;
        match e {
            StreamEvent::Text(t) => a.content.push_str(t),
            StreamEvent::Reasoning(t) => {
                // Text the client moved out of the answer (everything before `</think>` from a
                // server without a reasoning parser) arrives as one delta equal to it.
                if a.reasoning_content.is_empty() && !t.is_empty() && a.content == *t {
                    a.content.clear();
                    self.moves += 1;
                }
                a.reasoning_content.push_str(t);
            }
            StreamEvent::ReasoningWasText => {
                let reasoning = std::mem::take(&mut a.reasoning_content);
                a.content.insert_str(0, &reasoning);
                self.moves += 1;
            }
            StreamEvent::ToolCallBegin { index, id, name } => {
                self.indices.push(*index);
                a.tool_calls.push(ToolCall::new(id, name, ""));
            }
            StreamEvent::ToolCallArgs { index, delta } => {
                let Some(k) = self.indices.iter().rposition(|i| i == index) else {
                    return false;
                };
                let Some(call) = a.tool_calls.get_mut(k) else {
                    return false;
                };
                call.function.arguments.push_str(delta);
            }
            _ => return false,
        }
        true
    }

    /// Whether anything has arrived worth saving.
    pub(super) fn is_empty(&self) -> bool {
        let a = &self.answer;
        a.content.is_empty() && a.reasoning_content.is_empty() && a.tool_calls.is_empty()
    }

    pub(super) fn size(&self) -> Size {
        let a = &self.answer;
        Size {
            moves: self.moves,
            text: a.content.len(),
            reasoning: a.reasoning_content.len(),
            args: a
                .tool_calls
                .iter()
                .map(|c| c.function.arguments.len())
                .collect(),
        }
    }

    /// What arrived after the answer was `from` big, to go on the end of what was saved then;
    /// `None` when the answer no longer extends that (text moved to or from the reasoning):
    /// then the whole answer is saved again.
    pub(super) fn since(&self, from: &Size) -> Option<PartialAnswer> {
        let a = &self.answer;
        if from.moves != self.moves || a.tool_calls.len() < from.args.len() {
            return None;
        }
        let mut tool_calls = Vec::with_capacity(a.tool_calls.len());
        for (k, call) in a.tool_calls.iter().enumerate() {
            let saved = from.args.get(k).copied().unwrap_or(0);
            let args = call.function.arguments.get(saved..)?;
            tool_calls.push(ToolCall::new(&call.id, &call.function.name, args));
        }
        Some(PartialAnswer {
            after_message: a.after_message,
            content: a.content.get(from.text..)?.to_owned(),
            reasoning_content: a.reasoning_content.get(from.reasoning..)?.to_owned(),
            tool_calls,
            saved_unix_ms: a.saved_unix_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn begin(index: usize, id: &str, name: &str) -> StreamEvent {
        StreamEvent::ToolCallBegin {
            index,
            id: id.into(),
            name: name.into(),
        }
    }

    fn args(index: usize, delta: &str) -> StreamEvent {
        StreamEvent::ToolCallArgs {
            index,
            delta: delta.into(),
        }
    }

    #[test]
    fn text_reasoning_and_calls_accumulate_by_stream_index() {
        let mut s = LiveAnswer::new(3);
        assert!(s.is_empty());
        assert!(s.take(&StreamEvent::Text("Checking ".into())));
        s.take(&begin(1, "functions.a:1", "a"));
        s.take(&begin(0, "functions.b:0", "b"));
        s.take(&args(0, "{\"x\":"));
        s.take(&args(1, "{}"));
        s.take(&args(0, " 1"));
        assert!(!s.take(&args(7, "lost")));
        assert!(!s.take(&StreamEvent::Usage(Default::default())));
        assert_eq!(s.answer.after_message, 3);
        assert_eq!(s.answer.content, "Checking ");
        let got: Vec<&str> = (s.answer.tool_calls.iter())
            .map(|c| c.function.arguments.as_str())
            .collect();
        assert_eq!(got, ["{}", "{\"x\": 1"]);
    }

    #[test]
    fn text_moved_to_the_reasoning_and_back_is_kept_as_the_answer_says() {
        let mut s = LiveAnswer::new(0);
        s.take(&StreamEvent::Text("thinking".into()));
        s.take(&StreamEvent::Reasoning("thinking".into()));
        assert_eq!(
            (
                s.answer.content.as_str(),
                s.answer.reasoning_content.as_str()
            ),
            ("", "thinking")
        );
        s.take(&StreamEvent::Text(" answer".into()));
        s.take(&StreamEvent::ReasoningWasText);
        assert_eq!(s.answer.content, "thinking answer");
        assert_eq!(s.answer.reasoning_content, "");
    }

    #[test]
    fn since_gives_what_arrived_after_a_save_and_the_pieces_rebuild_the_answer() {
        let mut s = LiveAnswer::new(2);
        s.take(&StreamEvent::Text("Hel".into()));
        s.take(&StreamEvent::Reasoning("thi".into()));
        s.take(&begin(0, "a:0", "a"));
        s.take(&args(0, "{\"x\""));
        let first = s.size();
        let mut saved = s.answer.clone();
        s.take(&StreamEvent::Text("lo".into()));
        s.take(&StreamEvent::Reasoning("nk".into()));
        s.take(&args(0, ": 1}"));
        s.take(&begin(1, "b:1", "b"));
        s.take(&args(1, "{"));
        let part = s.since(&first).expect("extends the last save");
        assert_eq!(
            (part.content.as_str(), part.reasoning_content.as_str()),
            ("lo", "nk")
        );
        saved.extend(part);
        assert_eq!(saved, s.answer);
        // The reasoning went to the front of the text: the last save is no prefix any more.
        let before = s.size();
        s.take(&StreamEvent::ReasoningWasText);
        assert_eq!(s.since(&before), None);
    }
}
