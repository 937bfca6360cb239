//! The answer being streamed, kept as the model sent it (not as sanitized for the screen) so
//! that a timed save can record it: a `kill -9` mid-answer loses at most the last second.
//!
//! The answer's text is held once: while the turn on screen shows it exactly as sent (no
//! escape sequence was removed, nearly always), the turn's text is the answer's and nothing
//! is copied here; from the first token the sanitizer changed, the text as sent is kept here.

use kimi_core::session::PartialAnswer;
use kimi_protocol::ToolCall;

use super::state::{App, Entry};

/// Bytes of an answer's text, reasoning and each call's arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Size {
    pub text: usize,
    pub reasoning: usize,
    pub args: Vec<usize>,
}

/// Everything that has arrived of the current round's answer.
#[derive(Debug, Default)]
pub struct Streaming {
    /// The answer but its text while the turn shows that verbatim (see [`Streaming::answer`]).
    pub answer: PartialAnswer,
    /// The stream's index of each call in `answer.tool_calls`.
    indices: Vec<usize>,
    /// Whether `answer.content` holds the text (the turn shows it changed, or there is no turn).
    own_text: bool,
    /// Bytes of the text so far, wherever it is held.
    text_len: usize,
}

impl Streaming {
    /// A round whose request was made with `messages` messages in the conversation.
    pub fn new(messages: usize) -> Self {
        Streaming {
            answer: PartialAnswer {
                after_message: messages,
                ..PartialAnswer::default()
            },
            ..Streaming::default()
        }
    }

    /// A piece `t` of the answer's text; `shown`: the turn's text after it took `t`, and its
    /// length before (`None`: no turn shows it).
    pub fn text(&mut self, t: &str, shown: Option<(&str, usize)>) {
        self.text_len += t.len();
        if self.own_text {
            self.answer.content.push_str(t);
            return;
        }
        match shown {
            // Shown as sent: the turn holds the text.
            Some((all, before)) if all.get(before..) == Some(t) => {}
            // Until now shown as sent: what the turn showed before is the text so far.
            Some((all, before)) => {
                self.own_text = true;
                self.answer.content = String::with_capacity(before + t.len());
                self.answer
                    .content
                    .push_str(all.get(..before).unwrap_or(""));
                self.answer.content.push_str(t);
            }
            None => {
                self.own_text = true;
                self.answer.content.push_str(t);
            }
        }
    }

    /// The text was moved to the reasoning (the turn's text is emptied with it).
    pub fn clear_text(&mut self) {
        self.answer.content = String::new();
        self.own_text = false;
        self.text_len = 0;
    }

    /// The reasoning so far was the answer (`shown`: the turn's text before the move): it goes
    /// to the front of the text, as sent.
    pub fn reasoning_was_text(&mut self, shown: &str) {
        let reasoning = std::mem::take(&mut self.answer.reasoning_content);
        let text = if self.own_text {
            std::mem::take(&mut self.answer.content)
        } else {
            shown.to_owned()
        };
        self.answer.content = reasoning + &text;
        self.own_text = true;
        self.text_len = self.answer.content.len();
    }

    /// The answer so far; `shown` is the text of the turn that shows it.
    pub fn answer(&self, shown: &str) -> PartialAnswer {
        let a = &self.answer;
        PartialAnswer {
            after_message: a.after_message,
            content: if self.own_text {
                a.content.clone()
            } else {
                shown.to_owned()
            },
            reasoning_content: a.reasoning_content.clone(),
            tool_calls: a.tool_calls.clone(),
            saved_unix_ms: a.saved_unix_ms,
        }
    }

    /// How much of the answer has arrived: what a save compares to know whether it grew, and
    /// where the next save's part starts.
    pub fn size(&self) -> Size {
        Size {
            text: self.text_len,
            reasoning: self.answer.reasoning_content.len(),
            args: self
                .answer
                .tool_calls
                .iter()
                .map(|c| c.function.arguments.len())
                .collect(),
        }
    }

    /// What arrived after the answer was `from` big (`shown`: as in [`Streaming::answer`]), to
    /// go on the end of what was saved then; `None` when the answer no longer extends that
    /// (its text went to the reasoning): then the whole answer is saved again.
    pub fn since(&self, shown: &str, from: &Size) -> Option<PartialAnswer> {
        let a = &self.answer;
        let text = if self.own_text { &a.content } else { shown };
        if text.len() != self.text_len || a.tool_calls.len() < from.args.len() {
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
            content: text.get(from.text..)?.to_owned(),
            reasoning_content: a.reasoning_content.get(from.reasoning..)?.to_owned(),
            tool_calls,
            saved_unix_ms: a.saved_unix_ms,
        })
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
        self.text_len == 0
            && self.answer.reasoning_content.is_empty()
            && self.answer.tool_calls.is_empty()
    }
}

/// A piece of the answer's text: shown by the current turn (sanitized) and kept for saving.
pub(crate) fn push_text(app: &mut App, t: &str) {
    let turn = match app
        .transcript
        .turn_entry
        .and_then(|i| app.transcript.entries.get_mut(i))
    {
        Some(Entry::Assistant(turn)) => Some(turn),
        _ => None,
    };
    let shown = turn.map(|turn| {
        let before = turn.text().len();
        turn.push_text(t);
        (turn.text(), before)
    });
    if let Some(s) = app.streaming.as_mut() {
        s.text(t, shown);
        app.change_rev += 1;
    }
}

/// The answer streaming now, if anything of it arrived.
pub(crate) fn live_answer(app: &App) -> Option<PartialAnswer> {
    let s = app.streaming.as_ref().filter(|s| !s.is_empty())?;
    Some(s.answer(shown_text(
        &app.transcript.entries,
        app.transcript.turn_entry,
    )))
}

/// The text of the turn `turn_entry`, which shows the streaming answer.
pub(crate) fn shown_text(entries: &[Entry], turn_entry: Option<usize>) -> &str {
    match turn_entry.and_then(|i| entries.get(i)) {
        Some(Entry::Assistant(turn)) => turn.text(),
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_calls_accumulate_by_stream_index() {
        let mut s = Streaming::new(3);
        assert!(s.is_empty());
        s.text("Checking ", None);
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

    #[test]
    fn text_shown_as_sent_is_held_by_the_turn_only() {
        let mut s = Streaming::new(0);
        s.text("Hello", Some(("Hello", 0)));
        s.text(" world", Some(("Hello world", 5)));
        assert_eq!(
            s.answer.content, "",
            "no copy while the turn shows it as sent"
        );
        assert_eq!((s.size().text, s.size().args.len()), (11, 0));
        assert!(!s.is_empty());
        assert_eq!(s.answer("Hello world").content, "Hello world");
    }

    #[test]
    fn text_the_sanitizer_changed_is_kept_as_sent() {
        let mut s = Streaming::new(0);
        s.text("Hi ", Some(("Hi ", 0)));
        // The turn showed the escape sequence removed.
        s.text("\x1b[31mred", Some(("Hi red", 3)));
        s.text(" done", Some(("Hi red done", 6)));
        assert_eq!(s.answer("Hi red done").content, "Hi \x1b[31mred done");
        assert_eq!(s.size().text, "Hi \x1b[31mred done".len());
        s.clear_text();
        assert!(s.is_empty());
        assert_eq!(s.answer("").content, "");
    }

    #[test]
    fn since_gives_what_arrived_after_a_save_and_the_pieces_rebuild_the_answer() {
        let mut s = Streaming::new(2);
        s.text("Hel", None);
        s.reasoning("thi");
        s.call_begin(0, "a:0", "a");
        s.call_args(0, "{\"x\"");
        let first = s.size();
        let mut saved = s.answer("");
        s.text("lo", None);
        s.reasoning("nk");
        s.call_args(0, ": 1}");
        s.call_begin(1, "b:1", "b");
        s.call_args(1, "{");
        let part = s.since("", &first).expect("extends the last save");
        assert_eq!(
            (part.content.as_str(), part.reasoning_content.as_str()),
            ("lo", "nk")
        );
        assert_eq!(part.tool_calls[0].function.arguments, ": 1}");
        saved.extend(part);
        assert_eq!(saved, s.answer(""));
        // The text went to the reasoning: the last save is no prefix any more.
        let before = s.size();
        s.clear_text();
        assert_eq!(s.since("", &before), None);
    }
}
