mod app_defects;
mod app_sessions;
mod app_update;
mod ui_snapshots;
