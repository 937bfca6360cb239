//! The log file: what happened to requests, tools, approvals and saves, and why, kept after the
//! TUI exits. Written to `kimi-tui.log` under the state directory (never to the screen, which the
//! TUI owns); `KIMI_TUI_LOG` sets the level in `EnvFilter` syntax, `info` by default. No event
//! carries a key, a header or a URL's userinfo, and text from the server or the model is logged
//! escaped on one line, so reading the log cannot drive the terminal either.

use std::path::Path;

pub use kimi_client::log::{TEXT_CHARS, chain};
use kimi_protocol::sanitize::one_line;

use crate::engine::{Decision, EngineEvent};
use crate::tools::{CallProblem, Failure, ToolResult, ToolStatus};

/// The log file's name inside the state directory.
pub(crate) const FILE_NAME: &str = "kimi-tui.log";

/// Log lines queued for the writer thread at most.
const LOG_QUEUE_LINES: usize = 1024;

/// Starts logging to `dir/kimi-tui.log` (created 0600). Logging is best effort: when the file
/// cannot be opened, or a subscriber is already set, nothing is logged and the app runs on.
/// Keep the guard until exit: dropping it flushes what is queued.
pub fn init(dir: &Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    // Opened here rather than by tracing-appender, which would create it with the umask's mode.
    let file = crate::private_fs::append(&dir.join(FILE_NAME)).ok()?;
    // The default queue of 128,000 lines is allocated up front (4 MB resident for the whole
    // run); the app logs a few lines per turn. Lossy: a full queue drops lines, never blocks.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .lossy(true)
        .finish(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("KIMI_TUI_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// The user's (or the always-allow list's) answer about a call.
pub fn approval(name: &str, id: &str, decision: &Decision, edited: bool) {
    let (name, id) = (one_line(name, 64), one_line(id, 64));
    match decision {
        Decision::Approve { .. } => {
            tracing::info!(tool = %name, id = %id, edited, "tool call approved")
        }
        Decision::Deny { reason } => {
            tracing::info!(tool = %name, id = %id, with_reason = reason.is_some(), "tool call denied")
        }
    }
}

/// Tool events from the agent loop; the rest of its events are not logged (stream events are
/// logged by the backend, per request).
pub(crate) fn engine_event(e: &EngineEvent) {
    match e {
        EngineEvent::ToolRefused { call, problem, .. } => {
            let (name, id) = (one_line(&call.function.name, 64), one_line(&call.id, 64));
            tracing::warn!(tool = %name, id = %id, why = problem_kind(problem), "tool call refused");
            // The problem may quote the arguments: only at debug.
            tracing::debug!(tool = %name, id = %id, problem = %one_line(&problem.to_string(), TEXT_CHARS), "refusal detail");
        }
        EngineEvent::ToolStarted {
            call, arguments, ..
        } => {
            let (name, id) = (one_line(&call.function.name, 64), one_line(&call.id, 64));
            tracing::info!(tool = %name, id = %id, argument_bytes = arguments.len(), "tool started");
            tracing::debug!(tool = %name, id = %id, arguments = %one_line(arguments, TEXT_CHARS), "tool arguments");
        }
        EngineEvent::ToolFinished { call, outcome, .. } => {
            tool_finished(&call.function.name, &call.id, outcome)
        }
        _ => {}
    }
}

fn tool_finished(name: &str, id: &str, o: &ToolResult) {
    let (name, id) = (one_line(name, 64), one_line(id, 64));
    let ms = o.duration.as_millis() as u64;
    let out = o.output_total_bytes;
    match &o.status {
        ToolStatus::Ok => {
            tracing::info!(tool = %name, id = %id, exit_code = 0, ms, stdout_bytes = out, "tool finished")
        }
        ToolStatus::Failed(Failure::Exit(code)) => {
            tracing::warn!(tool = %name, id = %id, exit_code = code, ms, stdout_bytes = out, "tool failed")
        }
        ToolStatus::Failed(Failure::ErrorResult) => {
            tracing::warn!(tool = %name, id = %id, ms, stdout_bytes = out, "tool answered with an error")
        }
        ToolStatus::Failed(Failure::Signal(sig)) => {
            tracing::warn!(tool = %name, id = %id, signal = sig, ms, "tool killed by a signal")
        }
        ToolStatus::TimedOut => tracing::warn!(tool = %name, id = %id, ms, "tool timed out"),
        ToolStatus::Cancelled => tracing::info!(tool = %name, id = %id, ms, "tool cancelled"),
        ToolStatus::CouldNotStart(why) => {
            tracing::error!(tool = %name, id = %id, error = %one_line(why, TEXT_CHARS), "tool could not start")
        }
    }
}

fn problem_kind(p: &CallProblem) -> &'static str {
    match p {
        CallProblem::UnknownTool { .. } => "unknown tool",
        CallProblem::InvalidJson { .. } => "arguments not JSON",
        CallProblem::DoubleEncoded => "arguments double-encoded",
        CallProblem::NotAnObject => "arguments not an object",
        CallProblem::Schema { .. } => "arguments break the schema",
        CallProblem::Denied { reason: None } => "denied",
        CallProblem::Denied { reason: Some(_) } => "denied with a reason",
        CallProblem::DeniedByRule { .. } => "denied by a rule",
    }
}

/// A task ended in a panic (the app reports it and goes on).
pub fn task_panicked(message: &str) {
    tracing::error!(panic = %one_line(message, TEXT_CHARS), "panic in a task");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn the_chain_names_every_cause_once_on_one_line() {
        let e = E(
            "cannot save",
            Some(Box::new(E(
                "rename failed: disk full",
                Some(Box::new(E("disk full", None))),
            ))),
        );
        assert_eq!(chain(&e), "cannot save: rename failed: disk full");
        let hostile = E("bad\n\u{1b}[2Jthing", None);
        assert_eq!(chain(&hostile), "bad\\n\\x1b[2Jthing");
    }
}
