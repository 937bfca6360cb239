//! `kimi-tui mock-server`: the command-line options turned into the mock's, and the server run
//! until a signal.

use std::io::Write as _;

use anyhow::Context as _;
use kimi_mock::{MockOptions, MockServer, ScriptedCall};
use serde_json::Value;

use crate::cli::MockArgs;

/// `kimi-tui mock-server`: serve until Ctrl-C or SIGTERM.
pub fn run(args: &MockArgs) -> anyhow::Result<()> {
    if args.server_bug.as_deref() == Some("list") {
        print!("{}", kimi_mock::server_bugs::list());
        return Ok(());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async {
        let opts = MockOptions {
            tool_calls: scripted_calls(args)?,
            ..options(args)
        };
        let server = MockServer::start(opts, args.port).await?;
        let mut out = std::io::stdout();
        writeln!(out, "listening on {}", server.base_url())?;
        out.flush()?;
        wait_for_signal().await;
        server.shutdown().await;
        Ok(())
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The calls `args` asks for: the file's (one object or an array), then the one built from
/// `--tool-call-name` and friends.
fn scripted_calls(args: &MockArgs) -> anyhow::Result<Vec<ScriptedCall>> {
    let mut calls = Vec::new();
    if let Some(path) = &args.tool_call_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let parsed = match value {
            Value::Array(_) => serde_json::from_value(value),
            other => serde_json::from_value(other).map(|c| vec![c]),
        };
        calls.extend(parsed.with_context(|| {
            format!(
                "{}: expected {{\"id\", \"name\", \"arguments\"}} or an array of them",
                path.display()
            )
        })?);
    }
    match (
        &args.tool_call_name,
        &args.tool_call_id,
        &args.tool_call_args,
    ) {
        (Some(name), id, arguments) => calls.push(ScriptedCall {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone().unwrap_or_else(|| "{}".to_owned()),
        }),
        (None, None, None) => {}
        (None, ..) => {
            anyhow::bail!("--tool-call-id and --tool-call-args need --tool-call-name")
        }
    }
    Ok(calls)
}

/// The server options `kimi-tui mock-server` was given (the scripted calls come apart: reading a
/// file can fail), with the `--server-bug` scenario applied last.
pub fn options(a: &MockArgs) -> MockOptions {
    let mut opts = flag_options(a);
    if let Some(bug) = a
        .server_bug
        .as_deref()
        .and_then(kimi_mock::server_bugs::find)
    {
        bug.apply(&mut opts);
    }
    opts
}

fn flag_options(a: &MockArgs) -> MockOptions {
    MockOptions {
        // `MockArgs::default()` (not parsed by clap) has an empty model.
        model: if a.model.is_empty() {
            MockOptions::default().model
        } else {
            a.model.clone()
        },
        chunk_bytes: a.chunk_bytes,
        delay_ms: a.delay_ms,
        // The reasoning's pacing is the demo's alone.
        reasoning_ms: 0,
        drop_after_bytes: a.drop_after_bytes,
        fail_status: a.fail_status,
        malformed_sse: a.malformed_sse,
        error_event: a.error_event,
        markers_in_content: a.markers_in_content,
        api_key: a.api_key.clone(),
        strip_special_tokens: a.strip_special_tokens,
        bom: a.bom,
        content_type: a.content_type.clone(),
        error_body_bytes: a.error_body_bytes,
        slow_body_bps: a.slow_body_bps,
        long_line_bytes: a.long_line_bytes,
        redirect_to: a.redirect_to.clone(),
        // `MockArgs::default()` (not parsed by clap) has 0.
        redirect_status: match a.redirect_status {
            0 => 307,
            s => s,
        },
        // Filled by `run` from `scripted_calls`, which can fail.
        tool_calls: Vec::new(),
        always_stream: a.always_stream,
        // `MockArgs::default()` (not parsed by clap) has an empty key.
        reasoning_key: if a.reasoning_key.is_empty() {
            MockOptions::default().reasoning_key
        } else {
            a.reasoning_key.clone()
        },
        reasoning_in_content: a.reasoning_in_content,
        call_in_reasoning: a.call_in_reasoning,
        duplicate_calls: a.duplicate_calls,
        stale_chat_template: a.stale_chat_template,
        require_reasoning: a.require_reasoning,
        broken_marker: a.broken_marker,
        refuse_partial: a.refuse_partial,
        fail_times: a.fail_times,
        retry_after: a.retry_after.clone(),
        extra_models: a.extra_models.clone(),
        max_model_len: match a.max_model_len {
            None => MockOptions::default().max_model_len,
            Some(0) => None,
            Some(n) => Some(n),
        },
        split_markers: a.split_markers,
        refuse_logprobs: a.refuse_logprobs,
        k3_shape: a.k3_shape.clone(),
        // The scenarios' own switches: only `--server-bug` sets them.
        ..MockOptions::default()
    }
}
