//! The answer being streamed, kept as the model sent it (not as sanitized for the screen) so
//! that a timed save can record it: a `kill -9` mid-answer loses at most the last second.

use kimi_core::session::PartialAnswer;
use kimi_protocol::ToolCall;

/// Everything that has arrived of the current round's answer.
#[derive(Debug, Default)]
pub struct Streaming {
    pub answer: PartialAnswer,
    /// The stream's index of each call in `answer.tool_calls`.
    indices: Vec<usize>,
}

impl Streaming {
    /// A round whose request was made with `messages` messages in the conversation.
    pub fn new(messages: usize) -> Self {
        Streaming {
            answer: PartialAnswer {
                after_message: messages,
                ..PartialAnswer::default()
            },
            indices: Vec::new(),
        }
    }

    pub fn text(&mut self, t: &str) {
        self.answer.content.push_str(t);
    }

    /// A piece of reasoning (thinking models), kept apart from the answer's text.
    pub fn reasoning(&mut self, t: &str) {
        self.answer.reasoning_content.push_str(t);
    }

    pub(crate) fn call_begin(&mut self, index: usize, id: &str, name: &str) {
        self.indices.push(index);
        self.answer.tool_calls.push(ToolCall::new(id, name, ""));
    }

    pub(crate) fn call_args(&mut self, index: usize, delta: &str) {
        if let Some(k) = self.indices.iter().rposition(|&i| i == index)
            && let Some(call) = self.answer.tool_calls.get_mut(k)
        {
            call.function.arguments.push_str(delta);
        }
    }

    /// Whether anything has arrived worth saving.
    pub fn is_empty(&self) -> bool {
        self.answer.content.is_empty()
            && self.answer.reasoning_content.is_empty()
            && self.answer.tool_calls.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_calls_accumulate_by_stream_index() {
        let mut s = Streaming::new(3);
        assert!(s.is_empty());
        s.text("Checking ");
        s.call_begin(1, "functions.a:1", "a");
        s.call_begin(0, "functions.b:0", "b");
        s.call_args(0, "{\"x\":");
        s.call_args(1, "{}");
        s.call_args(0, " 1");
        s.call_args(7, "lost");
        assert_eq!(s.answer.after_message, 3);
        assert_eq!(s.answer.content, "Checking ");
        let args: Vec<&str> = s
            .answer
            .tool_calls
            .iter()
            .map(|c| c.function.arguments.as_str())
            .collect();
        assert_eq!(args, ["{}", "{\"x\": 1"]);
    }

    #[test]
    fn reasoning_alone_is_worth_saving() {
        let mut s = Streaming::new(1);
        s.reasoning("Let me ");
        assert!(!s.is_empty());
        s.reasoning("think.");
        assert_eq!(s.answer.reasoning_content, "Let me think.");
        assert_eq!(s.answer.content, "");
    }
}
