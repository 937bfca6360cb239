//! What the answer-level server bugs of [`crate::server_bugs`] do to one answer, before it is
//! cut into tokens.

use kimi_protocol::message::Message;

use super::MockOptions;
use super::script::{Reply, Text};

/// `im_end_after_think`: a thinking model answering a tool result writes its reasoning and
/// stops; the answer has neither text nor calls.
pub(crate) fn after_tool_result(opts: &MockOptions, reply: Reply, messages: &[Message]) -> Reply {
    let follows_tool = messages.last().is_some_and(|m| m.role == "tool");
    if opts.im_end_after_think && follows_tool {
        Reply::text("")
    } else {
        reply
    }
}

/// `nonstream_differs`: what the non-streamed answer holds instead: the calls dropped, or
/// without calls, nothing after the reasoning's `</think>` (no text at all when there is none).
pub(crate) fn non_streamed(opts: &MockOptions, mut reply: Reply) -> Reply {
    if !opts.nonstream_differs {
        return reply;
    }
    if !reply.calls.is_empty() {
        reply.calls.clear();
        return reply;
    }
    if let Text::Plain(text) = &mut reply.content {
        let keep = text.rfind("</think>").map_or(0, |at| at + "</think>".len());
        text.truncate(keep);
    }
    reply
}

/// The call ids `numbered_call_ids` gives: `call00000`, `call00001`, ...
pub(crate) fn numbered_id(i: usize) -> String {
    format!("call{i:05}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Call;

    fn on() -> MockOptions {
        MockOptions {
            im_end_after_think: true,
            nonstream_differs: true,
            ..MockOptions::default()
        }
    }

    #[test]
    fn only_a_tool_result_is_answered_with_nothing() {
        let r = Reply::text("Sunny.");
        let after_user = after_tool_result(&on(), r.clone(), &[Message::user("q")]);
        assert_eq!(after_user, r);
        let tool = [Message::user("q"), Message::tool_result("a", "f", "x")];
        assert_eq!(after_tool_result(&on(), r.clone(), &tool), Reply::text(""));
        assert_eq!(
            after_tool_result(&MockOptions::default(), r.clone(), &tool),
            r
        );
    }

    #[test]
    fn the_non_streamed_answer_loses_its_calls_or_its_answer_text() {
        let calling = Reply {
            content: Text::Plain("Checking.".into()),
            calls: vec![Call {
                name: "f".into(),
                arguments: "{}".into(),
            }],
        };
        let r = non_streamed(&on(), calling.clone());
        assert!(r.calls.is_empty());
        assert_eq!(r.content, calling.content);
        let thought = Reply::text("<think>hm</think>Hi.");
        assert_eq!(
            non_streamed(&on(), thought.clone()),
            Reply::text("<think>hm</think>")
        );
        assert_eq!(non_streamed(&on(), Reply::text("Hi.")), Reply::text(""));
        assert_eq!(
            non_streamed(&MockOptions::default(), thought.clone()),
            thought
        );
        assert_eq!(numbered_id(3), "call00003");
    }
}
