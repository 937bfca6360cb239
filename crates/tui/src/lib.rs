//! The interactive terminal UI: `app` holds the state, the pure `update` function and the event
//! loop; `ui` draws the state with ratatui.

mod app;
#[doc(hidden)]
pub mod bench;
mod ui;

pub use app::{AppError, Start, init_logging, run, state_dir};

// The UI's tests live in the crate: they drive `update` and the widgets through the harness in
// `tests/mod.rs`, reaching what is private to the crate.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
