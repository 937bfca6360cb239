//! The supervisor's copy of what the agent owns (system prompt, conversation, traces), kept
//! from the events the agent reports (they are every change to it, in order; a resumed
//! session's history among them): what a new agent starts from when the old one's task died.

use super::event::{EngineEvent, SystemChange, set_system};
use super::shared_trace::SharedTrace;
use kimi_protocol::Message;

#[derive(Debug, Default)]
pub(crate) struct Mirror {
    pub system_prompt: Option<String>,
    pub conversation: Vec<Message>,
    /// Each trace with the index of its message (for one still streaming: the next message).
    pub traces: Vec<(usize, SharedTrace)>,
}

impl Mirror {
    pub(super) fn new(
        system_prompt: Option<String>,
        conversation: Vec<Message>,
        traces: Vec<(usize, SharedTrace)>,
    ) -> Self {
        Mirror {
            system_prompt,
            conversation,
            traces,
        }
    }

    /// The agent reported `e`.
    pub(super) fn observe(&mut self, e: &EngineEvent) {
        match e {
            EngineEvent::MessageAppended { index, message } => {
                self.conversation.truncate(*index);
                // A resumed session's system prompt arrives as its first message.
                if *index == 0 && message.role == "system" {
                    self.system_prompt = Some(message.text());
                }
                self.conversation.push((**message).clone());
            }
            EngineEvent::TraceStarted { index, trace } => {
                self.traces.truncate(*index);
                self.traces.push((self.conversation.len(), trace.clone()));
            }
            EngineEvent::TraceFinished {
                index,
                message_index,
            } => {
                if let Some((m, _)) = self.traces.get_mut(*index) {
                    *m = *message_index;
                }
            }
            EngineEvent::SystemSet { prompt, .. } => {
                if set_system(&mut self.conversation, prompt) == SystemChange::Inserted {
                    self.traces.iter_mut().for_each(|(m, _)| *m += 1);
                }
                self.system_prompt = Some(prompt.clone());
            }
            EngineEvent::Cleared => {
                self.conversation.clear();
                self.traces.clear();
            }
            EngineEvent::Truncated { messages, traces } => {
                self.conversation.truncate(*messages);
                self.traces.truncate(*traces);
            }
            // A saved session replaces the conversation: its history follows as events.
            EngineEvent::Resuming { .. } => {
                self.conversation.clear();
                self.traces.clear();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::Trace;

    fn appended(index: usize, m: Message) -> EngineEvent {
        EngineEvent::MessageAppended {
            index,
            message: Box::new(m),
        }
    }

    #[test]
    fn the_mirror_follows_appends_traces_system_prompts_truncation_and_resumes() {
        let mut m = Mirror::default();
        m.observe(&appended(0, Message::user("a")));
        let trace = SharedTrace::new(Trace::default());
        m.observe(&EngineEvent::TraceStarted {
            index: 0,
            trace: trace.clone(),
        });
        m.observe(&appended(1, Message::assistant("b")));
        m.observe(&EngineEvent::TraceFinished {
            index: 0,
            message_index: 1,
        });
        m.observe(&EngineEvent::SystemSet {
            prompt: "s".into(),
            change: SystemChange::Inserted,
        });
        assert_eq!(m.conversation.len(), 3);
        assert_eq!(m.conversation[0].role, "system");
        assert_eq!(m.traces[0].0, 2, "the trace's message moved up with it");
        m.observe(&EngineEvent::Truncated {
            messages: 2,
            traces: 0,
        });
        assert_eq!((m.conversation.len(), m.traces.len()), (2, 0));
        m.observe(&EngineEvent::Resuming {
            meta: Box::new(crate::session::Session::new(
                "p",
                kimi_protocol::Mode::Raw,
                "m",
                "http://127.0.0.1:1",
            )),
            notice: None,
        });
        assert!(m.conversation.is_empty() && m.traces.is_empty());
        m.observe(&appended(0, Message::system("saved")));
        m.observe(&appended(1, Message::user("x")));
        m.observe(&EngineEvent::TraceStarted {
            index: 0,
            trace: trace.clone(),
        });
        assert_eq!(m.conversation[1].text(), "x");
        assert_eq!(m.system_prompt.as_deref(), Some("saved"));
        assert_eq!(m.traces.len(), 1);
        m.observe(&EngineEvent::Cleared);
        assert!(m.conversation.is_empty() && m.traces.is_empty());
    }
}
