//! The supervisor's copy of what the agent owns (system prompt, conversation, traces), kept
//! from the events the agent reports (they are every change to it, in order) and the
//! sessions it is sent to load: what a new agent starts from when the old one's task died.

use std::collections::VecDeque;

use super::event::{EngineEvent, Op, SystemChange, set_system};
use super::shared_trace::SharedTrace;
use kimi_protocol::Message;

/// A saved session sent to be loaded: its messages and traces.
type Session = (Vec<Message>, Vec<(usize, SharedTrace)>);

#[derive(Debug, Default)]
pub(crate) struct Mirror {
    pub system_prompt: Option<String>,
    pub conversation: Vec<Message>,
    /// Each trace with the index of its message (for one still streaming: the next message).
    pub traces: Vec<(usize, SharedTrace)>,
    /// Sessions sent with [`Op::Load`], applied when the agent reports them loaded.
    loads: VecDeque<Session>,
}

impl Mirror {
    pub fn new(
        system_prompt: Option<String>,
        conversation: Vec<Message>,
        traces: Vec<(usize, SharedTrace)>,
    ) -> Self {
        Mirror {
            system_prompt,
            conversation,
            traces,
            loads: VecDeque::new(),
        }
    }

    /// An operation went to the agent.
    pub fn sent(&mut self, op: &Op) {
        if let Op::Load { messages, traces } = op {
            self.loads.push_back((messages.clone(), traces.clone()));
        }
    }

    /// The agent reported `e`.
    pub fn observe(&mut self, e: &EngineEvent) {
        match e {
            EngineEvent::MessageAppended { index, message } => {
                self.conversation.truncate(*index);
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
            EngineEvent::Loaded { .. } => {
                if let Some((messages, traces)) = self.loads.pop_front() {
                    if let Some(m) = messages.first().filter(|m| m.role == "system") {
                        self.system_prompt = Some(m.text());
                    }
                    self.conversation = messages;
                    self.traces = traces;
                }
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
    fn the_mirror_follows_appends_traces_system_prompts_truncation_and_loads() {
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
        let load = Op::Load {
            messages: vec![Message::system("saved"), Message::user("x")],
            traces: vec![(1, trace)],
        };
        m.sent(&load);
        assert_eq!(
            m.conversation.len(),
            2,
            "nothing changes before the agent loads it"
        );
        m.observe(&EngineEvent::Loaded {
            messages: 2,
            traces: 1,
        });
        assert_eq!(m.conversation[1].text(), "x");
        assert_eq!(m.system_prompt.as_deref(), Some("saved"));
        assert_eq!(m.traces.len(), 1);
        m.observe(&EngineEvent::Cleared);
        assert!(m.conversation.is_empty() && m.traces.is_empty());
    }
}
