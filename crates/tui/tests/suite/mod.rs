mod app_defects;
mod app_sessions;
mod app_update;
mod reasoning_cell;
mod token_view;
mod transcript_view;
mod ui_snapshots;
