//! The status line component: what is happening now, the tokens and context used, and the
//! retry countdown.

use std::time::Instant;

use kimi_protocol::Usage;

/// The status line's view of what is happening.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Activity {
    Idle,
    Streaming { since: Instant, chunks: u64 },
    WaitingApproval,
    RunningTool { name: String },
}

/// What the status line shows.
pub(crate) struct StatusLine {
    pub(crate) activity: Activity,
    pub(crate) usage: Usage,
    pub(crate) tokens_this_round: u64,
    pub(crate) round_started: Option<Instant>,
    /// How full the context window is (the gauge).
    pub(crate) context: super::models_context::ContextGauge,
    /// The agent waits before retrying a request (the countdown).
    pub(crate) retry_wait: Option<super::retry::RetryWait>,
    /// The last retry's line, while the round it retried has not finished.
    pub(crate) retried: Option<super::retry::RetryLine>,
}

impl Default for StatusLine {
    fn default() -> Self {
        StatusLine {
            activity: Activity::Idle,
            usage: Usage::default(),
            tokens_this_round: 0,
            round_started: None,
            context: Default::default(),
            retry_wait: None,
            retried: None,
        }
    }
}
