//! The inspector's A/B (`a`: the request in view sent again non-streamed; `A`: in the other
//! mode): asked of the engine, which sends it off the conversation, and shown above that
//! request until another comparison replaces it.

use super::event::Effect;
use super::state::App;
use kimi_core::backend::ab::{self, Comparison, Variant};
use kimi_core::engine::Op;

/// One comparison: of which request, how, and how far it got.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ab {
    pub(crate) index: usize,
    /// The request's start: the same index can name another request after `/clear`.
    pub(crate) started_unix_ms: u64,
    pub(crate) variant: Variant,
    pub(crate) state: AbState,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AbState {
    Sending,
    Done(Box<Comparison>),
    Failed(String),
}

impl Ab {
    /// Whether it compares the request `index` that started at `started_unix_ms`.
    pub(crate) fn is_of(&self, index: usize, started_unix_ms: u64) -> bool {
        self.index == index && self.started_unix_ms == started_unix_ms
    }
}

/// `a` / `A` on the request in view: `other_mode` sends it to the other endpoint. A
/// comparison still on its way (a server that does not answer) is given up for it.
pub(crate) fn start(app: &mut App, other_mode: bool, fx: &mut Vec<Effect>) {
    let Some((index, trace)) = app.inspected_trace() else {
        return;
    };
    let variant = if other_mode {
        Variant::other_mode(trace.mode)
    } else {
        Variant::NonStream
    };
    let refused = if app.busy && index + 1 == app.traces.len() {
        Some("this request is still going: compare it once it ended".to_owned())
    } else {
        ab::check(&trace, variant).err()
    };
    if let Some(why) = refused {
        drop(trace);
        app.layers.inspector.message = Some(format!("A/B: {why}"));
        return;
    }
    let started_unix_ms = trace.started_unix_ms;
    let copy = Box::new(trace.clone());
    drop(trace);
    fx.push(Effect::Agent(Op::Compare {
        index,
        trace: copy,
        variant,
    }));
    let ins = &mut app.layers.inspector;
    ins.ab = Some(Ab {
        index,
        started_unix_ms,
        variant,
        state: AbState::Sending,
    });
    ins.scroll = 0;
    ins.message = Some(format!(
        "A/B: request {} sent again ({}); the answers show side by side at the top",
        index + 1,
        variant.as_str()
    ));
}

/// The engine's answer (one for another request than the one asked last is dropped).
pub(crate) fn compared(
    app: &mut App,
    index: usize,
    variant: Variant,
    outcome: Result<Box<Comparison>, String>,
) {
    let ins = &mut app.layers.inspector;
    let Some(ab) = ins
        .ab
        .as_mut()
        .filter(|ab| ab.index == index && ab.variant == variant)
    else {
        return;
    };
    let said = match &outcome {
        Ok(c) if c.agrees() => "the two answers agree".to_owned(),
        Ok(c) => format!("{} difference(s)", c.differences()),
        Err(_) => "not compared".to_owned(),
    };
    ab.state = match outcome {
        Ok(c) => AbState::Done(c),
        Err(why) => AbState::Failed(why),
    };
    ins.message = Some(format!(
        "A/B of request {} ({}): {said}",
        index + 1,
        variant.as_str()
    ));
}
