//! Token-level data on the agent's side: `/logprobs N` switches it for the next
//! request; after each round, what became of it is told to the user once: a server that
//! ignores the fields ("server sent no logprobs"), or one that refused them with a 400 (the
//! client sent the request again without; they stay off until `/logprobs` again).

use super::agent::State;
use super::event::EngineEvent;
use super::inbox::Io;
use kimi_client::{Backend, LogprobsOutcome};

/// What the agent remembers about the token-level data of the session.
#[derive(Debug, Default)]
pub(crate) struct LogprobsState {
    /// "server sent no logprobs" was said (once per session, or per `/logprobs`).
    pub missing_told: bool,
}

/// `/logprobs N`: ask for `n` alternatives per token from the next request on (0: off).
pub(crate) async fn set(state: &mut State, io: &mut Io, n: u8) {
    state.logprobs.missing_told = false;
    if let Err(e) = with_logprobs(state, n) {
        let text = format!("cannot switch logprobs: {e}");
        io.emit(EngineEvent::Notice { text, error: true }).await;
    }
}

fn with_logprobs(state: &mut State, n: u8) -> Result<(), kimi_client::BackendError> {
    let mut endpoint = state.backend.endpoint().clone();
    endpoint.logprobs = n;
    state.backend = Backend::new(endpoint)?;
    Ok(())
}

/// After a round: say what became of the request's logprobs, and turn them off for the
/// session when the server refused them.
pub(crate) async fn after_round(state: &mut State, io: &mut Io, outcome: LogprobsOutcome) {
    let text = match outcome {
        LogprobsOutcome::NotAsked | LogprobsOutcome::Received => return,
        LogprobsOutcome::Missing if state.logprobs.missing_told => return,
        LogprobsOutcome::Missing => {
            state.logprobs.missing_told = true;
            "server sent no logprobs: the inspector shows chunks only (it may not support them, or drop them behind a proxy)".to_owned()
        }
        LogprobsOutcome::Refused => {
            let n = state.backend.endpoint().logprobs;
            // Only a failure to build the client can stop this; then say so too.
            let off = with_logprobs(state, 0).err().map_or_else(String::new, |e| {
                format!(" (and could not turn them off: {e})")
            });
            format!(
                "the server refused logprobs (HTTP 400): the request was sent again without them; they stay off until /logprobs {n}{off}"
            )
        }
    };
    io.emit(EngineEvent::Notice { text, error: false }).await;
}
