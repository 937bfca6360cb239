mod app_defects;
mod app_sessions;
mod app_switch_limits;
mod app_update;
mod reasoning_cell;
mod transcript_view;
mod ui_snapshots;
