//! What goes into the agent ([`Op`]) and what comes out ([`EngineEvent`]).

use super::approval::{ApprovalRequest, Decision};
pub(super) use super::session_op::SessionHandoff;
use super::shared_trace::SharedTrace;
use super::switchboard::ProfileChoice;
use super::tools_report::ToolsReport;
use crate::session::Session;
use crate::tools::rules::{Rule, RuleDecision, RuleEntry, RuleId, RuleScope};
use crate::tools::{CallProblem, ToolResult};
use kimi_client::ab::{Comparison, Variant};
use kimi_client::{BackendError, Endpoint, ModelList};
use kimi_protocol::{Message, ToolCall};
use kimi_protocol::{Mode, StreamEvent, Trace, Usage};

/// An operation for the agent. Those that change the conversation while a turn runs are
/// applied where the conversation is consistent: `SetSystem` and `SetMode` before the next
/// request of the turn, `Clear`, `UserTurn`, `Retry`, `Rewind` and `Load` after the turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Append a user message and answer it (the system prompt goes first in a new conversation).
    UserTurn { text: String },
    /// Stop the running turn; what arrived is kept. Nothing to do when idle.
    Cancel,
    /// Replace the system prompt (kept for the next conversation when this one is empty).
    SetSystem { prompt: String },
    /// Forget the conversation and its traces.
    Clear,
    /// Talk to the server in this mode from the next request on.
    SetMode(Mode),
    /// The `thinking` switch (K2.5/K2.6) from the next request on: `/thinking on|off`.
    SetThinking(bool),
    /// Token-level data from the next request on: `/logprobs N` (0 off).
    SetLogprobs(u8),
    /// Drop the answers to the last user message and ask again.
    Retry,
    /// Replace the last answer by `text`, the user's edit of the model's output of it (raw
    /// mode: the completion text, markers included; chat mode: the content), and let the
    /// model continue from there (see `Backend::stream_continue`); the agent loop carries on
    /// as after any answer. The new answer records the edit ([`kimi_protocol::AnswerEdit`]).
    /// Applied when the turn ends; without an answer to edit, a notice and `TurnDone`.
    ContinueEdited { text: String },
    /// Reply with [`EngineEvent::Snapshot`].
    Snapshot,
    /// Take back "always allow" (given with [`Op::Approve`]) from one tool, or from all: their
    /// next calls ask again. Applied between rounds or when idle.
    Revoke { tool: Option<String> },
    /// Cancel the running turn and stop.
    Shutdown,
    /// The answer to [`EngineEvent::ApprovalRequested`] `id`. With `always` (and approved),
    /// later calls of the same tool with valid arguments run without asking, until the agent
    /// stops. A decision for an id that is not waiting (answered, cancelled, unknown) is
    /// ignored with a log line.
    Approve {
        id: u64,
        decision: Decision,
        always: bool,
    },
    // Going back and switching sessions.
    /// Cut the conversation before its `user_index`-th user message (counted from 0): that
    /// message, everything after it and the traces of those requests go (reported as
    /// [`EngineEvent::Truncated`]). Applied when the turn ends; an index past the last user
    /// message is refused with a notice.
    Rewind { user_index: usize },
    // Switching without restarting.
    /// Send the next requests to this endpoint (`/model`, `/profile`: server, key, mode,
    /// model, template, thinking, sampling, timeouts, retries), with at most `max_rounds`
    /// requests per turn. The conversation, the tools and "always allow" stay. Applied
    /// between rounds, like `SetMode`; answered with [`EngineEvent::EndpointSet`].
    SetEndpoint {
        endpoint: Box<Endpoint>,
        max_rounds: u32,
    },
    // Answered by the supervisor (`Supervisor::send`), never seen by the agent.
    /// GET `/models` from the endpoint in use, off the agent: answered with
    /// [`EngineEvent::Models`] (`shown` as asked: `/model` shows the list, the quiet listing
    /// at start only learns the context window).
    ListModels { show: bool },
    /// `/model NAME`: checked against the server's list (a server that cannot list is
    /// trusted), then used from the next request: answered with [`EngineEvent::Models`],
    /// [`EngineEvent::ModelChosen`] and, once the agent applied it,
    /// [`EngineEvent::EndpointSet`]; or with a notice saying why not.
    SwitchModel { id: String },
    /// `/profile NAME`: the profile's endpoint from the next request: answered with
    /// [`EngineEvent::ProfileChosen`] then [`EngineEvent::EndpointSet`]; or with a notice.
    SwitchProfile { name: String },
    /// Check the user's edit of approval `id`'s arguments for `tool`: answered with
    /// [`EngineEvent::ArgumentsChecked`].
    CheckArguments {
        id: u64,
        tool: String,
        arguments: String,
    },
    /// `/tools`: answered with [`EngineEvent::Tools`].
    ToolsReport,
    // Rules on calls (answered by the supervisor, or by an agent without one).
    /// Put `rule` in force now: for the session, or also appended to the user's config file
    /// (its comments and layout kept). Answered with [`EngineEvent::Rules`] naming the new
    /// rule, or with an error notice (a rule whose examples contradict it, a config that
    /// cannot be written) and nothing added.
    AddRule { rule: Box<Rule>, scope: RuleScope },
    /// Take a session rule out of force: answered with [`EngineEvent::Rules`]; a rule from a
    /// file, or an unknown id, is refused with a notice.
    RemoveRule { id: RuleId },
    /// `/rules`: answered with [`EngineEvent::Rules`].
    ListRules,
    /// A/B: send request `index` (its `trace`) again as `variant` says, to the endpoint in
    /// use, off the agent; answered with [`EngineEvent::Compared`]. A comparison still on its
    /// way is given up (never answered).
    Compare {
        index: usize,
        trace: Box<Trace>,
        variant: Variant,
    },
    /// Make the agent's task panic, for the supervisor's tests.
    #[cfg(test)]
    PanicForTest,
    // Sessions.
    /// Record the conversation from now on into a session (see [`SessionHandoff`]): a new one,
    /// or a saved one continued, whose history is reported first as the events a live turn
    /// produces, between [`EngineEvent::Resuming`] and [`EngineEvent::Resumed`]. Applied when
    /// the turn ends.
    Record(SessionHandoff),
    /// `/sessions`: lock and read the stored session `id` (off the agent's task), then
    /// continue it as [`Op::Record`] does; on failure a notice, and the conversation stays.
    /// Applied when the turn ends.
    Resume {
        store: crate::session::SessionStore,
        id: String,
    },
}

/// How a new system prompt changed the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemChange {
    /// The conversation is empty: the prompt is kept for its first message.
    Stored,
    /// The first message was the system prompt and was replaced.
    Replaced,
    /// The prompt was inserted as message 0: every later message moved up by one.
    Inserted,
}

/// Apply a new system prompt to a conversation (the agent's, or a view of it).
pub fn set_system(conversation: &mut Vec<Message>, prompt: &str) -> SystemChange {
    match conversation.first_mut() {
        Some(m) if m.role == "system" => {
            *m = Message::system(prompt);
            SystemChange::Replaced
        }
        Some(_) => {
            conversation.insert(0, Message::system(prompt));
            SystemChange::Inserted
        }
        None => SystemChange::Stored,
    }
}

/// What the agent reports. The `MessageAppended`, `TraceStarted`, `TraceFinished`,
/// `SystemSet`, `Cleared` and `Truncated` events are every change to what it owns, in order: a
/// view (the TUI) or a journal replaying them holds the same conversation and traces as the
/// agent (the traces themselves shared, not copied: see [`SharedTrace`]).
#[derive(Debug)]
pub enum EngineEvent {
    /// A request to the model is about to be sent (`round` counts from 1 within the turn).
    RoundStarted { round: u32 },
    /// An event of the stream, as recorded in the request's trace; a `Chunk` comes with empty
    /// `data` (its text is in the trace).
    Stream(StreamEvent),
    /// The model's answer for this round is complete (or failed). Its message and trace were
    /// reported just before (`MessageAppended`, `TraceFinished`).
    RoundFinished {
        round: u32,
        finish: String,
        error: Option<Box<BackendError>>,
        cancelled: bool,
    },
    /// A message was appended at `index` (user, assistant or tool).
    MessageAppended { index: usize, message: Box<Message> },
    /// A request is going out; its trace is `traces[index]`, which the agent fills in as the
    /// answer streams (read it through the handle; the stream's `Request` event is not
    /// forwarded, this replaces it).
    TraceStarted { index: usize, trace: SharedTrace },
    /// The trace at `index` is complete; it belongs to the message at `message_index` (the
    /// one its answer produced, or the next one when none was kept).
    TraceFinished { index: usize, message_index: usize },
    /// A call needs a decision: the turn waits for [`Op::Approve`] with this `id` (unique for
    /// the agent's life) or for [`Op::Cancel`], which denies it.
    ApprovalRequested {
        id: u64,
        request: Box<ApprovalRequest>,
    },
    /// A call that will not run: unknown tool, bad arguments, denied by config or user.
    ToolRefused {
        index: usize,
        call: ToolCall,
        problem: CallProblem,
    },
    /// What the rules (or, none matching, the tool's `approval`) decided about the call at
    /// `index` with `arguments`, before any dialog: allow runs it, ask asks, deny refuses it
    /// (then a `ToolRefused` follows). Reported again for arguments edited in the dialog.
    CallDecided {
        index: usize,
        call_id: String,
        arguments: String,
        decision: RuleDecision,
    },
    /// An approved call is starting, with the arguments it gets.
    ToolStarted {
        index: usize,
        call: ToolCall,
        arguments: String,
    },
    /// A running call's server reported progress or a log line.
    ToolNote {
        index: usize,
        call_id: String,
        note: crate::tools::mcp::ToolNote,
    },
    /// An approved call ended: how (its status, output for the pane, log tail, duration). The
    /// `tool` message sent back follows as `MessageAppended`; `outcome.content` is empty.
    ToolFinished {
        index: usize,
        call: ToolCall,
        outcome: Box<ToolResult>,
    },
    /// The system prompt is now `prompt`.
    SystemSet {
        prompt: String,
        change: SystemChange,
    },
    /// The conversation and traces were emptied.
    Cleared,
    /// `/retry` or [`Op::Rewind`]: the conversation now has `messages` messages and `traces`
    /// traces.
    Truncated { messages: usize, traces: usize },
    /// Requests now go out in this mode.
    ModeSet(Mode),
    /// Something to tell the user that is not part of a turn (a failed mode switch).
    Notice { text: String, error: bool },
    /// "Always allow" no longer covers `tool`: its server changed its description or schema
    /// since the user allowed it, so it asks again.
    AllowanceDropped { tool: String },
    /// The turn is over.
    TurnDone { outcome: Box<TurnOutcome> },
    /// The turn stopped on an internal error (a panic); what was appended before it is kept.
    TurnFailed { message: String },
    /// Requests now go to this endpoint ([`Op::SetEndpoint`] was applied).
    EndpointSet {
        mode: Mode,
        model: String,
        /// As shown: without userinfo.
        base_url: String,
        template: kimi_protocol::Template,
        thinking: Option<bool>,
    },
    /// The request failed before any of its answer arrived, with an error worth another try
    /// (HTTP 429/5xx, connection refused): attempt `attempt` of `attempts` goes out after
    /// `wait`, unless the turn is cancelled meanwhile (then it ends with `error`). The failed
    /// attempt's trace was reported (`TraceStarted`/`TraceFinished`) like any other.
    RetryScheduled {
        error: Box<BackendError>,
        attempt: u32,
        attempts: u32,
        wait: std::time::Duration,
    },
    /// Answer to [`Op::Snapshot`].
    Snapshot {
        messages: Vec<Message>,
        /// Each trace with the index of its message.
        traces: Vec<(usize, Trace)>,
    },
    // Reported by the supervisor.
    /// The server's models ([`Op::ListModels`], or the listing a switch made), or why not;
    /// `shown`: the user asked to see them.
    Models {
        shown: bool,
        listing: Result<Box<ModelList>, Box<BackendError>>,
    },
    /// The A/B of request `index` ([`Op::Compare`]): the saved answer beside the new one, or
    /// why it could not be made.
    Compared {
        index: usize,
        variant: Variant,
        outcome: Result<Box<Comparison>, String>,
    },
    /// [`Op::SwitchModel`] was accepted: the agent uses `model` from its next request.
    ModelChosen { model: String },
    /// [`Op::SwitchProfile`] was accepted: what the profile changes beside the endpoint.
    ProfileChosen { choice: Box<ProfileChoice> },
    /// The agent's task stopped (a panic, `message`): a new one took over the conversation,
    /// the endpoint and the tools; "always allow" was forgotten with the old one. A turn the
    /// old one was running is reported as [`EngineEvent::TurnFailed`] right after.
    AgentRestarted { message: String },
    /// Answer to [`Op::CheckArguments`]: the arguments as JSON, or why they cannot run.
    ArgumentsChecked {
        id: u64,
        arguments: String,
        result: Result<Box<serde_json::Value>, CallProblem>,
    },
    /// The call at `index` of this round has streamed in whole; `problem` is why its
    /// arguments cannot run as they are (reported before any approval is asked).
    CallChecked {
        index: usize,
        problem: Option<CallProblem>,
    },
    /// Answer to [`Op::ToolsReport`].
    Tools { report: Box<ToolsReport> },
    /// Answer to [`Op::ListRules`], [`Op::AddRule`] (`added`: the new rule's id) and
    /// [`Op::RemoveRule`]: every rule in force, in order, with where it comes from and how
    /// often it matched this session.
    Rules {
        rules: Vec<RuleEntry>,
        added: Option<RuleId>,
    },
    // Sessions.
    /// The conversation is recorded into this session's journal, written from now on (its
    /// messages and traces are empty here).
    SessionStarted { meta: Box<Session> },
    /// Saving failed and is off for this run: `reason` says why, as a notice.
    SessionStopped { reason: String },
    /// A saved session replaces the conversation: its history follows as the events a live
    /// turn produces, up to [`EngineEvent::Resumed`]. `notice`: what to tell the user first
    /// (a cut-off last record, a fork), safe to show.
    Resuming {
        meta: Box<Session>,
        notice: Option<String>,
    },
    /// The saved session's history has been reported; it holds `turns` user messages, and
    /// `meta.partial` the interrupted answers shown in it.
    Resumed { meta: Box<Session>, turns: usize },
    /// A saved answer that was still streaming when the run that streamed it stopped: the
    /// round reported since `RoundStarted` ends here, interrupted (resumed history only).
    RoundInterrupted,
}

/// How a turn ended.
#[derive(Debug, Clone, Default)]
pub struct TurnOutcome {
    pub rounds: u32,
    pub error: Option<BackendError>,
    pub cancelled: bool,
    /// The loop stopped at `max_rounds` while the model still wanted tools.
    pub hit_max_rounds: bool,
    /// The last answer was cut off (max_tokens) rather than finished.
    pub truncated: bool,
    pub usage: Usage,
}
