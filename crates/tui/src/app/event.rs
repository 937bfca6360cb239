//! What the app reacts to: every source (terminal reader, the agent, the ticker) becomes an
//! [`AppEvent`]; `update` is the only consumer.

use kimi_core::engine::{EngineEvent, Op};

#[derive(Debug)]
pub enum AppEvent {
    /// A key, paste, mouse or resize event from the terminal.
    Terminal(crossterm::event::Event),
    /// What the agent reports: progress of a turn, approvals, changes to the conversation.
    Engine(EngineEvent),
    /// Time passes (spinners, elapsed times); only redraws when something is animated.
    Tick,
}

/// What `update` asks the event loop to do: the things that need the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send this operation to the agent (a turn, a cancel, a new system prompt, ...).
    Agent(Op),
    /// Save this trace as a replayable file (the inspector's `s`).
    SaveTrace(Box<kimi_protocol::Trace>),
    /// Write the session file (after each message).
    SaveSession,
    /// `/export [md|json] [PATH]`; no path: a file named for the session in the current
    /// directory.
    Export {
        markdown: bool,
        path: Option<String>,
    },
    Quit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stay_small() {
        // Every streamed token is an event, and the queue holds up to EVENT_QUEUE of them:
        // big payloads are boxed so that a full queue stays a few hundred kilobytes.
        let sizes = (
            std::mem::size_of::<AppEvent>(),
            std::mem::size_of::<EngineEvent>(),
            std::mem::size_of::<kimi_protocol::StreamEvent>(),
        );
        eprintln!("AppEvent, EngineEvent, StreamEvent: {sizes:?}");
        assert!(sizes.0 <= 256 && sizes.2 <= 128, "{sizes:?}");
    }
}
