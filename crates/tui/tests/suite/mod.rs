mod app_sessions;
mod app_update;
mod ui_snapshots;
mod reasoning_cell;
