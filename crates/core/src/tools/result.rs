//! What a call of any tool produced, whichever source ran it: the `tool` message for the model
//! and what the user is shown (how it ended, its output, its log tail, how long it took).

use std::time::Duration;

/// How a call that ran to its end failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A process exited with this non-zero code.
    Exit(i32),
    /// A signal (not one sent by kimi-tui) killed the process.
    Signal(i32),
    /// The tool answered with a result it marked as an error.
    ErrorResult,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolStatus {
    /// It ran and succeeded.
    Ok,
    /// It ran and failed.
    Failed(Failure),
    /// It ran past its timeout and was stopped.
    TimedOut,
    /// The user cancelled it.
    Cancelled,
    /// It never ran, or its source failed before it could answer. The text is the whole
    /// reason, e.g. ``could not start `./x.sh`: No such file or directory``.
    CouldNotStart(String),
}

impl ToolStatus {
    /// A short label for the user: `exit 3`, `killed by signal 9`, `error result`, `timed out`,
    /// `cancelled`, `could not start: <why>`; `ok` for a success.
    pub fn label(&self) -> String {
        match self {
            ToolStatus::Ok => "ok".to_owned(),
            ToolStatus::Failed(Failure::Exit(code)) => format!("exit {code}"),
            ToolStatus::Failed(Failure::Signal(sig)) => format!("killed by signal {sig}"),
            ToolStatus::Failed(Failure::ErrorResult) => "error result".to_owned(),
            ToolStatus::TimedOut => "timed out".to_owned(),
            ToolStatus::Cancelled => "cancelled".to_owned(),
            ToolStatus::CouldNotStart(why) => format!("could not start: {why}"),
        }
    }
}

/// What a call produced, the same for every tool source.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The `tool` message content sent back to the model (never empty).
    pub content: String,
    pub status: ToolStatus,
    /// The output as kept for the user: a process's stdout, or a server's text with where each
    /// binary block was saved. At most the tool's output cap.
    pub output: String,
    /// Bytes of output the tool produced, kept or not.
    pub output_total_bytes: u64,
    /// The output was longer than the cap.
    pub truncated: bool,
    /// The end of what the tool or its server logged (a process's stderr): for the user and
    /// the log, never for the model unless the source put it in `content`.
    pub log_tail: String,
    /// From the start of the call to its end.
    pub duration: Duration,
}

impl ToolResult {
    /// A call that ended without output: `content` is the model's whole message.
    pub fn without_output(status: ToolStatus, content: String, duration: Duration) -> ToolResult {
        ToolResult {
            content,
            status,
            output: String::new(),
            output_total_bytes: 0,
            truncated: false,
            log_tail: String::new(),
            duration,
        }
    }

    /// A call that never ran, or whose source failed: the model hears `[reason]`.
    pub fn could_not_start(reason: String, duration: Duration) -> ToolResult {
        ToolResult::without_output(
            ToolStatus::CouldNotStart(reason.clone()),
            format!("[{reason}]"),
            duration,
        )
    }

    /// It ran and succeeded. (Truncated output still counts as success.)
    pub fn success(&self) -> bool {
        self.status == ToolStatus::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_each_ending() {
        let labels: Vec<String> = [
            ToolStatus::Ok,
            ToolStatus::Failed(Failure::Exit(3)),
            ToolStatus::Failed(Failure::Signal(9)),
            ToolStatus::Failed(Failure::ErrorResult),
            ToolStatus::TimedOut,
            ToolStatus::Cancelled,
            ToolStatus::CouldNotStart("no such server".to_owned()),
        ]
        .iter()
        .map(ToolStatus::label)
        .collect();
        assert_eq!(
            labels,
            vec![
                "ok",
                "exit 3",
                "killed by signal 9",
                "error result",
                "timed out",
                "cancelled",
                "could not start: no such server"
            ]
        );
    }

    #[test]
    fn could_not_start_tells_the_model_the_reason_in_brackets() {
        let r = ToolResult::could_not_start("the server is gone".to_owned(), Duration::ZERO);
        assert_eq!(r.content, "[the server is gone]");
        assert_eq!(
            r.status,
            ToolStatus::CouldNotStart("the server is gone".to_owned())
        );
        assert!(!r.success());
        assert!(r.output.is_empty() && r.log_tail.is_empty());
    }
}
