//! The interactive terminal UI: `app` holds the state, the pure `update` function and the event
//! loop; `ui` draws the state with ratatui.

pub mod app;
pub mod ui;
