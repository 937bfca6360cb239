//! An A/B comparison ([`Op::Compare`](super::Op::Compare)) off the agent's loop: the saved
//! answer beside the same request sent again, to the endpoint in use. It touches neither the
//! conversation nor the traces: a debugging request, not a turn.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::event::EngineEvent;
use kimi_client::Endpoint;
use kimi_client::ab::{self, Variant};
use kimi_protocol::Trace;

/// Compare in a task of its own; the answer goes to `done`. Cancelling `cancel` drops the
/// requests on their way and answers nothing (a newer comparison took its place).
pub(super) fn spawn(
    endpoint: Endpoint,
    index: usize,
    trace: Trace,
    variant: Variant,
    done: mpsc::UnboundedSender<EngineEvent>,
    cancel: CancellationToken,
) {
    tokio::spawn(async move {
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            outcome = ab::compare(&trace, variant, &endpoint, &cancel) => outcome.map(Box::new),
        };
        if cancel.is_cancelled() {
            return;
        }
        let _ = done.send(EngineEvent::Compared {
            index,
            variant,
            outcome,
        });
    });
}
