//! How the agent's reports change the app's view of the conversation. The agent owns the
//! conversation and the traces; the app keeps a copy to draw and save, changed only here, in
//! the order the agent reports its changes.

use super::event::Effect;
use super::state::*;
use super::status_line::Activity;
use kimi_core::engine::{ApprovalRequest, Decision, Op, SharedTrace, SystemChange, TurnOutcome};
use kimi_protocol::sanitize;
use kimi_protocol::{Content, Message, special};

/// A message the agent appended: the view follows. A user message of a resumed session's
/// history is shown as it comes (a live one was shown when it was sent).
pub(super) fn appended(app: &mut App, index: usize, message: Message) {
    if index != app.conversation.len() {
        // Never expected: the view missed or doubled a message. The agent's index wins.
        tracing::warn!(
            index,
            view = app.conversation.len(),
            "the conversation view is out of step"
        );
        app.conversation.truncate(index);
    }
    match message.role.as_str() {
        // The turn that showed the answer holds its text from now on.
        "assistant" => {
            if let Some(Entry::Assistant(turn)) = app
                .transcript
                .turn_entry
                .and_then(|i| app.transcript.entries.get_mut(i))
            {
                let edited = message.edited.is_some();
                if turn.edited && !edited {
                    // A continuation that failed: the core gave the original answer back,
                    // shown in its place, untagged.
                    turn.set_text(&message.text());
                    turn.edited = false;
                    turn.rev += 1;
                } else {
                    if let Some(Content::Text(text)) = &message.content {
                        turn.share_text(text);
                    }
                    // A resumed session's edited answer is tagged as it comes.
                    if edited && !turn.edited {
                        turn.edited = true;
                        turn.rev += 1;
                    }
                }
            }
        }
        "tool" => tool_result(app, &message),
        "user" if app.replaying => app.transcript.entries.push(Entry::User {
            id: Default::default(),
            text: message.text(),
        }),
        "system" => app.system_prompt = Some(message.text()),
        _ => {}
    }
    app.conversation.push(message);
}

fn tool_result(app: &mut App, message: &Message) {
    let id = message.tool_call_id.clone().unwrap_or_default();
    let text = message.text();
    let found = special::find(&text);
    if !found.is_empty() {
        let name = message.name.clone().unwrap_or_default();
        let neutralized = app.neutralize_tool_markers;
        super::update::warn_special_tokens(
            app,
            format!(
                "The tool result of {name} contains {}",
                special::describe(&text, &found)
            ),
            neutralized,
        );
    }
    if let Some(p) = app.pane_for_call(&id) {
        p.result = Some(text);
        // A result with no run reported: a resumed call whose run was not recorded.
        if p.state == PaneState::Pending {
            p.state = PaneState::Answered;
        }
    }
}

/// `/clear` as the agent applied it: a new conversation, and a new session file (the agent
/// says which when it writes it).
pub(super) fn cleared(app: &mut App) {
    forget_conversation(app);
    app.notice("Conversation cleared.", false);
}

/// The view of the conversation goes (`/clear`, another session resumed).
pub(super) fn forget_conversation(app: &mut App) {
    app.conversation.clear();
    app.partial.clear();
    app.transcript.entries.clear();
    app.traces.clear();
    app.trace_messages.clear();
    app.transcript.turn_entry = None;
    app.session = None;
    app.transcript.selected_pane = None;
    app.transcript.scroll_from_bottom = 0;
}

/// The agent asks about a call (tools allowed for the session it no longer asks about): denied
/// at once while the turn is being cancelled, else the dialog opens and answers `id`.
pub(super) fn approval(app: &mut App, id: u64, request: ApprovalRequest, fx: &mut Vec<Effect>) {
    if app.cancelling {
        fx.push(Effect::Agent(Op::Approve {
            id,
            decision: Decision::Deny {
                reason: Some("the user cancelled the turn".into()),
            },
            always: false,
        }));
    } else {
        if let Some(p) = app.pane_for_call(&request.call.id) {
            p.state = PaneState::WaitingApproval;
        }
        app.layers.dialog = Some(ApprovalDialog::new(request, Some(id)));
        // The dialog takes the keys: nothing else may sit over it.
        app.layers.inspector.open = false;
        app.layers.help.open = false;
        app.status.activity = Activity::WaitingApproval;
    }
    app.dirty = true;
}

fn turn_over(app: &mut App) {
    app.busy = false;
    app.continuing = false;
    app.cancelling = false;
    app.status.activity = Activity::Idle;
    app.layers.dialog = None;
    app.dirty = true;
}

pub(super) fn turn_done(app: &mut App, outcome: &TurnOutcome) {
    turn_over(app);
    if outcome.hit_max_rounds {
        app.notice(
            format!(
                "Stopped after {} with the model still calling tools (max_rounds).",
                crate::ui::count::count(outcome.rounds as u64, "round")
            ),
            true,
        );
    }
    if outcome.truncated {
        app.notice("The answer was cut off at max_tokens.", true);
    }
}

/// The turn stopped on an internal error: it ends as failed, with the message.
pub(super) fn turn_failed(app: &mut App, message: &str) {
    let text = format!(
        "internal error, the turn was stopped: {}",
        sanitize::for_terminal(message)
    );
    if let Some(t) = app.current_turn()
        && t.state == TurnState::Streaming
    {
        t.state = TurnState::Failed(text.clone());
        t.rev += 1;
    }
    turn_over(app);
    app.notice(
        format!("{text}. The conversation so far is kept; please report this."),
        true,
    );
}

/// A request went out: its trace (the agent's, shared) is in view from now on, live.
pub(super) fn trace_started(app: &mut App, index: usize, trace: SharedTrace) {
    if index != app.traces.len() {
        // Never expected: the view missed or doubled a trace. The agent's index wins.
        tracing::warn!(
            index,
            view = app.traces.len(),
            "the trace view is out of step"
        );
        app.traces.truncate(index);
        app.trace_messages.truncate(index);
    }
    let index = app.traces.len();
    app.traces.push(trace);
    if let Some(t) = app.current_turn() {
        t.trace = Some(index);
    }
    app.status.tokens_this_round = 0;
    app.status.round_started = Some(app.now);
}

/// The trace at `index` is complete and belongs to the message at `message_index`. Written
/// with the round's end, which the agent reports next.
pub(super) fn trace_finished(app: &mut App, index: usize, message_index: usize) {
    if index >= app.traces.len() {
        tracing::warn!(
            index,
            view = app.traces.len(),
            "a finished trace is not in view"
        );
        return;
    }
    app.trace_messages.resize(index + 1, message_index);
    app.trace_messages[index] = message_index;
    if let Some(t) = app.current_turn() {
        t.trace = Some(index);
    }
}

pub(super) fn system_set(app: &mut App, prompt: String, change: SystemChange) {
    kimi_core::engine::set_system(&mut app.conversation, &prompt);
    app.system_prompt = Some(prompt);
    if change == SystemChange::Inserted {
        // Every message moved up by one: what points at messages moves with them.
        app.trace_messages.iter_mut().for_each(|m| *m += 1);
        app.partial.iter_mut().for_each(|p| p.after_message += 1);
    }
    app.notice("System prompt set.", false);
}

/// `/retry`: the agent dropped the answers to the last user message and their traces.
pub(super) fn truncated(app: &mut App, messages: usize, traces: usize) {
    app.conversation.truncate(messages);
    app.traces.truncate(traces);
    app.trace_messages.truncate(traces);
}
