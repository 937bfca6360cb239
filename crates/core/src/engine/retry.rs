//! Transient failures retried inside a round: a request that failed before any of
//! its answer arrived (HTTP 429/5xx, a refused connection) is sent again after a wait that the
//! user sees count down and can cancel. A stream that failed after some of its answer arrived
//! is never retried here: its partial answer is kept as the round's (failed) message, and the
//! user decides (`/retry`), so no retry's text is ever joined to it.

use super::agent::State;
use super::event::EngineEvent;
use super::inbox::Io;
use kimi_client::TurnResult;
use serde_json::Value;

/// Stream one request, again after each transient failure the profile's policy allows. The
/// result of the last attempt, and the index of its trace unless it was already reported
/// finished (a wait cancelled by the user ends the round with the error of the attempt
/// before it).
pub(super) async fn stream(
    state: &mut State,
    tools: &[Value],
    io: &mut Io,
    prefix: Option<&str>,
) -> (TurnResult, Option<usize>) {
    let mut retry = 0;
    loop {
        let (mut result, trace) = super::turn::stream(state, tools, io, prefix).await;
        let Some(error) = result.error.clone() else {
            return (result, Some(trace));
        };
        if !nothing_arrived(&result) || io.cancel.is_cancelled() {
            return (result, Some(trace));
        }
        retry += 1;
        let policy = state.backend.endpoint().retry;
        let wait = match policy.wait(&error, retry) {
            Ok(wait) => wait,
            Err(None) => return (result, Some(trace)),
            Err(Some(why)) => {
                let text = format!("{error}: {why}");
                io.emit(EngineEvent::Notice { text, error: true }).await;
                return (result, Some(trace));
            }
        };
        tracing::info!(retry, wait_ms = wait.as_millis() as u64, error = %error, "retrying the request");
        state.finish_trace(io, trace).await;
        io.emit(EngineEvent::RetryScheduled {
            error: Box::new(error),
            attempt: retry + 1,
            attempts: policy.retries + 1,
            wait,
        })
        .await;
        let cancel = io.cancel.clone();
        let cancelled = io
            .run(async {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => false,
                    _ = cancel.cancelled() => true,
                }
            })
            .await;
        if cancelled {
            result.cancelled = true;
            return (result, None);
        }
    }
}

/// Nothing of the answer came: no text, reasoning or call (an HTTP error never has any).
fn nothing_arrived(r: &TurnResult) -> bool {
    r.content.is_empty() && r.reasoning.is_empty() && r.tool_calls.is_empty()
}
