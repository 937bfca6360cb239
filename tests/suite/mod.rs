mod ab_compare;
mod ab_inspector_tmux;
mod cli;
mod config_cli;
mod config_example;
mod continue_edit_tmux;
mod defects_cli;
mod doctor;
mod doctor_conformance;
mod doctor_thinking;
mod exec_cli;
mod exec_input_cli;
mod family_cli;
mod files_tmux;
mod go_back_tmux;
mod golden;
mod history_refs;
mod job_control_tmux;
mod k3_differential;
mod k3_exec;
mod k3_inspector_tmux;
mod layering;
mod mcp;
mod mcp_filesystem;
mod mcp_http;
mod mcp_python;
mod mcp_tmux;
mod mock_cli;
mod mock_process;
mod mock_tool_call_flags;
mod newcomer_tmux;
mod raw_family;
mod repro_cli;
mod retry_cli;
mod rules_cli;
mod rules_tmux;
mod sandbox_exec;
mod screen_tmux;
mod sessions;
mod stream_items;
mod stream_timeouts;
mod switch_limits_tmux;
mod text_out_tmux;
mod thinking_cli;
mod thinking_tmux;
mod token_level;
mod token_view_tmux;
mod trace_replay;
mod tui_defects_tmux;
mod tui_dialog_tmux;
mod tui_midturn_tmux;
mod tui_network_tmux;
mod tui_paste;
mod tui_tmux;

/// `kimi-tui --config CONFIG` in tmux at `size`, with `home` as its home (see
/// `Tmux::start_sized`).
fn tui_with_config(
    name: &str,
    config: &std::path::Path,
    home: &std::path::Path,
    size: (u16, u16),
) -> kimi_test_support::tmux::Tmux {
    let cmd = format!(
        "{} --config {}",
        env!("CARGO_BIN_EXE_kimi-tui"),
        config.display()
    );
    kimi_test_support::tmux::Tmux::start_sized(name, &cmd, home, size)
}

/// The one tool the loopback tests offer: `get_weather(city)`, as an OpenAI tool.
fn weather_tool() -> serde_json::Value {
    serde_json::json!({"type": "function", "function": {"name": "get_weather", "description": "Weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
}
