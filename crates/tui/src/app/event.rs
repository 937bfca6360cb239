//! The one channel into the app: every producer (terminal reader, the agent task, the ticker)
//! sends an [`AppEvent`]; `update` is the only consumer.

use tokio::sync::oneshot;

use kimi_core::engine::{ApprovalRequest, Decision, EngineEvent, TurnOutcome};
use kimi_protocol::Message;

#[derive(Debug)]
pub enum AppEvent {
    /// A key, paste, mouse or resize event from the terminal.
    Terminal(crossterm::event::Event),
    /// Progress of the running turn.
    Engine(EngineEvent),
    /// The agent loop asks about a call; answer through `reply`.
    Approval {
        request: Box<ApprovalRequest>,
        reply: oneshot::Sender<Decision>,
    },
    /// The turn is over; `conversation` is the authoritative history it produced.
    TurnDone {
        conversation: Vec<Message>,
        outcome: Box<TurnOutcome>,
    },
    /// Time passes (spinners, elapsed times); only redraws when something is animated.
    Tick,
    /// The turn's task panicked: the turn ends as failed with this message. The conversation
    /// keeps what was mirrored into the app before the panic.
    TurnPanicked { message: String },
}

/// What `update` asks the event loop to do: the things that need the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Start the agent loop on the current conversation.
    StartTurn,
    /// Cancel the running turn.
    Cancel,
    /// Reconnect in this mode.
    SwitchMode(kimi_protocol::Mode),
    /// Write the inspector's text to a file.
    SaveInspector(String),
    /// Write the session file (after each message).
    SaveSession,
    /// `/export md|json PATH`.
    Export {
        markdown: bool,
        path: String,
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
