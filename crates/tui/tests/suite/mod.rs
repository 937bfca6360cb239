mod app_defects;
mod app_go_back;
mod app_sessions;
mod app_update;
mod reasoning_cell;
mod transcript_view;
mod ui_snapshots;
