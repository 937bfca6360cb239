mod app_sessions;
mod app_update;
mod transcript_view;
mod ui_snapshots;
