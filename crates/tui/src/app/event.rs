//! What the app reacts to: every source (terminal reader, the agent, the deadlines of `wake`) becomes an
//! [`AppEvent`]; `update` is the only consumer.

use kimi_core::engine::{EngineEvent, Op};

#[derive(Debug)]
pub(crate) enum AppEvent {
    /// A key, paste, mouse or resize event from the terminal.
    Terminal(crossterm::event::Event),
    /// What the agent reports: progress of a turn, approvals, changes to the conversation.
    Engine(EngineEvent),
    /// The deadline `App::next_wake` asked for came: spinners, timers and countdowns move.
    Tick,
    /// The editor `Ctrl-G` opened has exited: the edited draft, or why the draft stays.
    Edited(Result<String, super::editor::EditorError>),
    /// An MCP server asks the user something (elicitation); answered only by the user.
    Elicit(kimi_core::tools::mcp::ElicitAsk),
    /// The answer to [`Effect::GetPrompt`].
    PromptGot {
        server: String,
        prompt: String,
        result:
            Result<Vec<kimi_core::tools::mcp::PromptText>, kimi_core::tools::mcp::McpRequestError>,
    },
    /// The answer to [`Effect::ReadResources`]: `(server, uri, text)` of each, or why not.
    ResourcesRead {
        message: String,
        result: Result<Vec<(String, String, String)>, String>,
    },
    /// The answer to [`Effect::ListSessions`]: the store's sessions, newest first.
    SessionsListed(Box<kimi_core::session::SessionList>),
    /// The answer to [`Effect::Export`]: the file written, or why not.
    Exported(Result<std::path::PathBuf, super::export::ExportError>),
    /// The answer to [`Effect::TrustProject`]: the directory trusted (its rules reloaded),
    /// or why not.
    Trusted(Result<std::path::PathBuf, super::trust::TrustFailed>),
}

/// What `update` asks the event loop to do: the things that need the runtime.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// Send this operation to the agent (a turn, a cancel, a new system prompt, ...).
    Agent(Op),
    /// Save this trace as a replayable file (the inspector's `s`).
    SaveTrace(Box<kimi_protocol::Trace>),
    /// Write this trace as a reproducer, beside the saved traces (the inspector's `x`).
    SaveRepro(Box<kimi_protocol::Trace>),
    /// `/export [md|json] [PATH]`; no path: a file named for the session in the current
    /// directory. Written off the event loop; answered with [`AppEvent::Exported`].
    Export {
        markdown: bool,
        path: Option<std::path::PathBuf>,
        /// The user said an existing file there may be replaced.
        replace: bool,
    },
    Quit,
    /// Trust `dir`'s project rules (remembered in the user's state) and reload them; answered
    /// with [`AppEvent::Trusted`].
    TrustProject {
        dir: std::path::PathBuf,
    },
    // Getting text out, compose.
    /// Put `text` on the clipboard (OSC 52); `what` names it in the confirmation
    /// ("answer 3").
    Copy {
        text: String,
        what: String,
    },
    /// Mouse capture on or off.
    Mouse(bool),
    /// Suspend the screen, edit this draft in `$VISUAL`/`$EDITOR`, answer with
    /// [`AppEvent::Edited`].
    Editor(String),
    // Going back, history and sessions.
    /// Append a sent prompt to the history file (through its writer thread).
    History(String),
    /// `/sessions`: list the session store off the event loop; answered with
    /// [`AppEvent::SessionsListed`].
    ListSessions,
    /// Resume saved session `id` in place (`Op::Resume` for the agent, with the store).
    ResumeSession {
        id: String,
    },
    /// `prompts/get` off the event loop; answered with [`AppEvent::PromptGot`].
    GetPrompt {
        server: String,
        prompt: String,
        arguments: serde_json::Map<String, serde_json::Value>,
    },
    /// `resources/read` of each of `refs` (`(server, uri)`) for `message`, off the event loop;
    /// answered with [`AppEvent::ResourcesRead`].
    ReadResources {
        message: String,
        refs: Vec<(String, String)>,
    },
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
