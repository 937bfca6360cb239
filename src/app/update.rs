//! `update`: the only place the app's state changes. Events in, state changed, effects out.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui_textarea::{CursorMove, TextArea};

use super::commands::{self, SlashCommand};
use super::event::{AppEvent, Effect};
use super::partial::Streaming;
use super::paste;
use super::saved;
use super::state::*;
use crate::backend::{StreamEvent, Trace};
use crate::engine::{Decision, EngineEvent};
use crate::protocol::{Message, special};
use crate::sanitize;
use crate::tools::{ExitKind, ToolOutcome};

/// Error texts from the server are shown up to this many characters.
const ERROR_CHARS: usize = 2000;

/// Apply one event. Returns what the event loop must do.
pub fn update(app: &mut App, event: AppEvent) -> Vec<Effect> {
    let mut fx = Vec::new();
    apply(app, event, &mut fx);
    // Any event may change what the dialog shows (a key, a resize, a new stage).
    super::dialog::refresh(app);
    fx
}

fn apply(app: &mut App, event: AppEvent, fx: &mut Vec<Effect>) {
    match event {
        AppEvent::Terminal(e) => terminal(app, e, fx),
        AppEvent::Engine(e) => engine(app, e, fx),
        AppEvent::Approval { request, reply } => {
            let name = request.call.function.name.clone();
            if app.cancelling {
                let _ = reply.send(Decision::Deny {
                    reason: Some("the user cancelled the turn".into()),
                });
            } else if request.problems.is_empty() && app.always_allow.contains(&name) {
                let _ = reply.send(Decision::Approve {
                    arguments: request.arguments,
                });
            } else {
                let request = *request;
                if let Some(p) = app.pane_for_call(&request.call.id) {
                    p.state = PaneState::WaitingApproval;
                }
                app.dialog = Some(ApprovalDialog::new(request, Some(reply)));
                // The dialog takes the keys: nothing else may sit over it.
                app.inspector.open = false;
                app.help_open = false;
                app.activity = Activity::WaitingApproval;
            }
            app.dirty = true;
        }
        AppEvent::TurnDone {
            conversation,
            outcome,
        } => {
            app.conversation = conversation;
            fx.push(Effect::SaveSession);
            app.busy = false;
            app.cancelling = false;
            app.activity = Activity::Idle;
            app.dialog = None;
            if outcome.hit_max_rounds {
                app.notice(
                    format!(
                        "Stopped after {} rounds with the model still calling tools (max_rounds).",
                        outcome.rounds
                    ),
                    true,
                );
            }
            if outcome.truncated {
                app.notice("The answer was cut off at max_tokens.", true);
            }
            app.dirty = true;
        }
        AppEvent::TurnPanicked { message } => {
            let text = format!(
                "internal error, the turn was stopped: {}",
                sanitize::for_terminal(&message)
            );
            if let Some(t) = app.current_turn()
                && t.state == TurnState::Streaming
            {
                t.state = TurnState::Failed(text.clone());
                t.rev += 1;
            }
            fx.push(Effect::SaveSession);
            app.busy = false;
            app.cancelling = false;
            app.activity = Activity::Idle;
            app.dialog = None;
            app.notice(
                format!("{text}. The conversation so far is kept; please report this."),
                true,
            );
        }
        AppEvent::Tick => {
            if saved::partial_due(app, Instant::now()) {
                fx.push(Effect::SaveSession);
            }
            // Spinners and elapsed times move only while something runs.
            if app.busy {
                app.dirty = true;
                if let Some(t) = app.current_turn()
                    && t.panes
                        .iter()
                        .any(|p| matches!(p.state, PaneState::Running { .. }))
                {
                    t.rev += 1;
                }
            }
        }
    }
}

fn terminal(app: &mut App, e: Event, fx: &mut Vec<Effect>) {
    app.dirty = true;
    match e {
        Event::Key(k) if k.kind != KeyEventKind::Release => key(app, k, fx),
        Event::Paste(text) => paste(app, &text),
        Event::Mouse(m) => {
            let up = match m.kind {
                MouseEventKind::ScrollUp => true,
                MouseEventKind::ScrollDown => false,
                _ => {
                    app.dirty = false;
                    return;
                }
            };
            // Over a dialog whose arguments scroll, the wheel scrolls them; elsewhere the
            // transcript.
            if !super::dialog::wheel(app, m.column, m.row, up) {
                scroll(app, 3, up);
            }
        }
        // The next draw lays everything out again at the new size.
        Event::Resize(w, h) => app.screen = (w, h),
        _ => app.dirty = false,
    }
}

fn paste(app: &mut App, text: &str) {
    let target = match app.dialog.as_mut().map(|d| &mut d.stage) {
        Some(DialogStage::Editing { editor, .. }) => Some((&mut **editor, false)),
        Some(DialogStage::Reason(t)) => Some((&mut **t, true)),
        Some(DialogStage::Asking) => None,
        None => Some((&mut app.input, false)),
    };
    let Some((input, one_line)) = target else {
        return;
    };
    // The size is checked first: a refused paste costs nothing but the notice.
    let draft: usize = input.lines().iter().map(|l| l.len() + 1).sum::<usize>() - 1;
    if let Err(notice) = paste::check_size(text.len(), draft) {
        app.notice(notice, true);
        return;
    }
    let text = paste::clean(text);
    if one_line {
        input.insert_str(text.replace('\n', " "));
    } else {
        input.insert_str(&text);
    }
}

fn ctrl(k: &KeyEvent, c: char) -> bool {
    k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char(c)
}

fn key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    if ctrl(&k, 'c') {
        if app.busy {
            cancel(app, fx);
        } else {
            fx.push(Effect::Quit);
        }
        return;
    }
    if app.dialog.is_some() {
        // Ctrl-T shows the call's raw markers; closing the inspector returns to the dialog,
        // still pending.
        if app.inspector.open {
            if ctrl(&k, 't') {
                app.inspector.open = false;
                return;
            }
            return inspector_key(app, k, fx);
        }
        if ctrl(&k, 't') {
            return inspect_dialog_call(app);
        }
        return dialog_key(app, k);
    }
    if app.help_open {
        if matches!(
            k.code,
            KeyCode::Esc | KeyCode::F(1) | KeyCode::Char('?' | 'q')
        ) {
            app.help_open = false;
        }
        return;
    }
    if ctrl(&k, 't') {
        toggle_inspector(app);
        return;
    }
    if app.inspector.open {
        return inspector_key(app, k, fx);
    }
    match k.code {
        KeyCode::Esc if app.busy => cancel(app, fx),
        KeyCode::Esc => {
            if let Some((e, _)) = app.selected_pane.take() {
                bump(app, e);
            }
        }
        KeyCode::F(1) => app.help_open = true,
        KeyCode::Char('?') if app.input.is_empty() => app.help_open = true,
        KeyCode::Char('d') if ctrl(&k, 'd') && app.input.is_empty() => fx.push(Effect::Quit),
        KeyCode::PageUp => scroll(app, app.page_height.saturating_sub(2).max(1), true),
        KeyCode::PageDown => scroll(app, app.page_height.saturating_sub(2).max(1), false),
        KeyCode::Home if app.input.is_empty() || k.modifiers.contains(KeyModifiers::CONTROL) => {
            app.scroll_from_bottom = usize::MAX / 2;
        }
        KeyCode::End if app.input.is_empty() || k.modifiers.contains(KeyModifiers::CONTROL) => {
            app.scroll_from_bottom = 0;
        }
        KeyCode::Tab => select_pane(app, true),
        KeyCode::BackTab => select_pane(app, false),
        KeyCode::Char('o') if k.modifiers.contains(KeyModifiers::CONTROL) => toggle_pane(app),
        KeyCode::Enter
            if k.modifiers
                .intersects(KeyModifiers::SHIFT | KeyModifiers::ALT) =>
        {
            app.input.insert_newline()
        }
        KeyCode::Char('j') if ctrl(&k, 'j') => app.input.insert_newline(),
        KeyCode::Enter => submit(app, fx),
        KeyCode::Up if app.input.cursor().0 == 0 && !app.history.is_empty() => recall(app, true),
        KeyCode::Down
            if app.history_pos.is_some() && app.input.cursor().0 + 1 >= app.input.lines().len() =>
        {
            recall(app, false)
        }
        _ => {
            app.input.input(k);
        }
    }
}

fn cancel(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(mut d) = app.dialog.take()
        && let Some(reply) = d.reply.take()
    {
        let _ = reply.send(Decision::Deny {
            reason: Some("the user cancelled the turn".into()),
        });
    }
    app.cancelling = true;
    fx.push(Effect::Cancel);
}

/// Lines scrolled; `up` moves toward older text.
fn scroll(app: &mut App, lines: usize, up: bool) {
    app.scroll_from_bottom = if up {
        app.scroll_from_bottom.saturating_add(lines)
    } else {
        app.scroll_from_bottom.saturating_sub(lines)
    };
}

fn recall(app: &mut App, older: bool) {
    let n = app.history.len();
    let pos = match (app.history_pos, older) {
        (None, true) => Some(n - 1),
        (Some(0), true) => Some(0),
        (Some(i), true) => Some(i - 1),
        (Some(i), false) if i + 1 < n => Some(i + 1),
        (_, false) => None,
    };
    app.history_pos = pos;
    let text = pos.map(|i| app.history[i].clone()).unwrap_or_default();
    set_input(&mut app.input, &text);
}

fn set_input(input: &mut TextArea<'static>, text: &str) {
    *input = new_input();
    input.insert_str(text);
    input.move_cursor(CursorMove::Bottom);
    input.move_cursor(CursorMove::End);
}

fn select_pane(app: &mut App, forward: bool) {
    let all: Vec<(usize, usize)> = app
        .entries
        .iter()
        .enumerate()
        .flat_map(|(e, entry)| match entry {
            Entry::Assistant(t) => (0..t.panes.len()).map(|p| (e, p)).collect(),
            _ => Vec::new(),
        })
        .collect();
    if all.is_empty() {
        app.selected_pane = None;
        return;
    }
    let cur = app
        .selected_pane
        .and_then(|s| all.iter().position(|x| *x == s));
    let next = match (cur, forward) {
        (None, true) => all.len() - 1,
        (None, false) => 0,
        (Some(i), true) => (i + all.len() - 1) % all.len(),
        (Some(i), false) => (i + 1) % all.len(),
    };
    if let Some((e, _)) = app.selected_pane.replace(all[next]) {
        bump(app, e);
    }
    bump(app, all[next].0);
}

fn bump(app: &mut App, entry: usize) {
    if let Some(Entry::Assistant(t)) = app.entries.get_mut(entry) {
        t.rev += 1;
    }
}

fn toggle_pane(app: &mut App) {
    let target = app.selected_pane.or_else(|| {
        app.entries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(e, entry)| match entry {
                Entry::Assistant(t) if !t.panes.is_empty() => Some((e, t.panes.len() - 1)),
                _ => None,
            })
    });
    if let Some((e, p)) = target
        && let Some(Entry::Assistant(t)) = app.entries.get_mut(e)
        && let Some(pane) = t.panes.get_mut(p)
    {
        pane.expanded = !pane.expanded;
        t.rev += 1;
    }
}

fn toggle_inspector(app: &mut App) {
    let ins = &mut app.inspector;
    ins.open = !ins.open;
    ins.searching = None;
    ins.message = None;
    if !ins.open {
        return;
    }
    ins.scroll = 0;
    ins.selected = None;
    ins.jump_to_call = None;
    // Opening with a tool pane selected jumps to that call's markers.
    if let Some((e, p)) = app.selected_pane
        && let Some(Entry::Assistant(t)) = app.entries.get(e)
        && let (Some(trace), Some(pane)) = (t.trace, t.panes.get(p))
    {
        app.inspector.selected = Some(trace);
        app.inspector.jump_to_call = Some(pane.index);
    }
}

/// Open the inspector at the markers of the call the dialog asks about.
fn inspect_dialog_call(app: &mut App) {
    let Some(id) = app.dialog.as_ref().map(|d| d.request.call.id.clone()) else {
        return;
    };
    let target = app.current_turn().and_then(|t| {
        let pane = t.panes.iter().find(|p| p.id == id)?;
        Some((t.trace, pane.index))
    });
    toggle_inspector(app);
    if !app.inspector.open {
        return;
    }
    match target {
        Some((Some(trace), index)) => {
            app.inspector.selected = Some(trace);
            app.inspector.jump_to_call = Some(index);
        }
        _ => app.inspector.message = Some("this call's request is not in the inspector".into()),
    }
}

fn inspector_key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    let ins = &mut app.inspector;
    if let Some(q) = ins.searching.as_mut() {
        match k.code {
            KeyCode::Enter => {
                ins.query = Some(std::mem::take(q)).filter(|q| !q.is_empty());
                ins.searching = None;
                ins.message = Some("search: n next, N previous".into());
                ins.jump_to_call = None;
                search_step(app, true, true);
            }
            KeyCode::Esc => ins.searching = None,
            KeyCode::Backspace => {
                q.pop();
            }
            KeyCode::Char(c) => q.push(c),
            _ => {}
        }
        return;
    }
    let page = app.page_height.saturating_sub(2).max(1);
    let traces = app.traces.len();
    let ins = &mut app.inspector;
    match k.code {
        KeyCode::Esc | KeyCode::Char('q') => ins.open = false,
        KeyCode::Up | KeyCode::Char('k') => ins.scroll = ins.scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => ins.scroll = ins.scroll.saturating_add(1),
        KeyCode::PageUp => ins.scroll = ins.scroll.saturating_sub(page),
        KeyCode::PageDown | KeyCode::Char(' ') => ins.scroll = ins.scroll.saturating_add(page),
        KeyCode::Home | KeyCode::Char('g') => ins.scroll = 0,
        KeyCode::End | KeyCode::Char('G') => ins.scroll = usize::MAX / 2,
        KeyCode::Char('/') => ins.searching = Some(String::new()),
        KeyCode::Char('n') => search_step(app, true, false),
        KeyCode::Char('N') => search_step(app, false, false),
        KeyCode::Char('[') | KeyCode::Left if traces > 0 => {
            let cur = ins.selected.unwrap_or(traces - 1);
            ins.selected = Some(cur.saturating_sub(1));
            ins.scroll = 0;
        }
        KeyCode::Char(']') | KeyCode::Right if traces > 0 => {
            let cur = ins.selected.unwrap_or(traces - 1);
            ins.selected = Some((cur + 1).min(traces - 1));
            ins.scroll = 0;
        }
        KeyCode::Char('s') => {
            if let Some((i, trace)) = app.inspected_trace() {
                let text = crate::ui::inspector::plain_text(trace, i);
                fx.push(Effect::SaveInspector(text));
            }
        }
        _ => {}
    }
}

/// Move the inspector to the next (or previous) line matching the query.
fn search_step(app: &mut App, forward: bool, from_current: bool) {
    let Some(query) = app.inspector.query.clone() else {
        return;
    };
    let Some((i, _)) = app.inspected_trace() else {
        return;
    };
    // The view's kept lines, brought up to date (appending only): no rebuild per step.
    let total = app.traces.len();
    let view = &mut app.inspector_view;
    view.refresh(&app.traces[i], i, total);
    let start = app.inspector.scroll.min(view.len());
    let from = if forward && !from_current {
        start + 1
    } else {
        start
    };
    let hit = view.find(&query, from, forward);
    match hit {
        Some(n) => {
            app.inspector.scroll = n;
            app.inspector.message = Some(format!("/{query}: line {}", n + 1));
        }
        None => app.inspector.message = Some(format!("/{query}: no more matches")),
    }
}

fn dialog_key(app: &mut App, k: KeyEvent) {
    let Some(dialog) = app.dialog.as_mut() else {
        return;
    };
    let mut decision = None;
    if matches!(dialog.stage, DialogStage::Asking) && super::dialog::scroll_key(dialog, &k) {
        return;
    }
    match &mut dialog.stage {
        DialogStage::Asking => match k.code {
            // Invalid arguments cannot be approved as they are: only fixed (e) or denied.
            KeyCode::Char('y' | 'a') if !dialog.request.problems.is_empty() => {
                dialog.hint = Some("invalid arguments: fix them with e, or deny with n/Esc".into());
            }
            // Nothing runs on arguments the user has not had on screen.
            KeyCode::Char('y' | 'a') if !dialog.seen_all => {
                dialog.hint = Some(super::dialog::unseen_hint(dialog));
            }
            // The arguments fit: page keys scroll the transcript behind the dialog.
            KeyCode::PageUp | KeyCode::PageDown => {
                let page = app.page_height.saturating_sub(2).max(1);
                app.scroll_from_bottom = if k.code == KeyCode::PageUp {
                    app.scroll_from_bottom.saturating_add(page)
                } else {
                    app.scroll_from_bottom.saturating_sub(page)
                };
            }
            KeyCode::Char('y' | 'a') => {
                if k.code == KeyCode::Char('a') {
                    app.always_allow
                        .push(dialog.request.call.function.name.clone());
                }
                decision = Some(Decision::Approve {
                    arguments: dialog.request.arguments.clone(),
                });
            }
            KeyCode::Char('n') => {
                let mut t = TextArea::default();
                t.set_placeholder_text("reason for the model (optional), Enter to deny");
                dialog.stage = DialogStage::Reason(Box::new(t));
            }
            KeyCode::Char('e') => {
                let mut editor = TextArea::new(pretty_lines(&dialog.request.arguments));
                editor.move_cursor(CursorMove::Top);
                dialog.stage = DialogStage::Editing {
                    editor: Box::new(editor),
                    problems: Vec::new(),
                };
            }
            KeyCode::Esc => decision = Some(Decision::Deny { reason: None }),
            _ => {}
        },
        DialogStage::Reason(t) => match k.code {
            KeyCode::Enter => {
                let reason = t.lines().join(" ").trim().to_owned();
                decision = Some(Decision::Deny {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            KeyCode::Esc => dialog.stage = DialogStage::Asking,
            _ => {
                t.input(k);
            }
        },
        DialogStage::Editing { editor, problems } => {
            if ctrl(&k, 's') {
                let text = editor.lines().join("\n");
                match app
                    .toolbox
                    .check_call(&dialog.request.call.function.name, &text)
                {
                    Ok(value) => {
                        // Saved without a change: the model's own text, not a re-serialization.
                        let original =
                            serde_json::from_str::<serde_json::Value>(&dialog.request.arguments);
                        let unchanged = original.ok().as_ref() == Some(&value);
                        let arguments = if unchanged {
                            dialog.request.arguments.clone()
                        } else {
                            value.to_string()
                        };
                        let screen = app.screen;
                        if unchanged && dialog.seen_all
                            || !unchanged && super::dialog::editor_all_shown(dialog, screen)
                        {
                            decision = Some(Decision::Approve { arguments })
                        } else {
                            // The editor hid part of the text (off screen, invisible
                            // characters): show it as the dialog shows arguments, then y.
                            super::dialog::review(dialog, arguments, !unchanged);
                        }
                    }
                    Err(p) => *problems = vec![p.to_string()],
                }
            } else if k.code == KeyCode::Esc {
                dialog.stage = DialogStage::Asking;
            } else {
                editor.input(k);
            }
        }
    }
    if let Some(d) = decision {
        let id = dialog.request.call.id.clone();
        if let Some(reply) = dialog.reply.take() {
            let _ = reply.send(d.clone());
        }
        app.dialog = None;
        app.activity = Activity::Idle;
        if let (Decision::Approve { .. }, Some(p)) = (&d, app.pane_for_call(&id)) {
            p.state = PaneState::Pending;
        }
    }
}

/// The arguments as pretty JSON lines for the editor; as typed when they are not JSON.
pub fn pretty_lines(arguments: &str) -> Vec<String> {
    let text = serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_owned());
    text.lines().map(str::to_owned).collect()
}

fn submit(app: &mut App, fx: &mut Vec<Effect>) {
    let text = app.input.lines().join("\n");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    if let Some(cmd) = commands::parse(trimmed) {
        app.input = new_input();
        return slash(app, cmd, fx);
    }
    if app.busy {
        app.notice(
            "A turn is running: wait for it, or press Esc to cancel it.",
            true,
        );
        return;
    }
    app.history.push(text.clone());
    app.history_pos = None;
    app.input = new_input();
    send_user(app, text, fx);
}

fn send_user(app: &mut App, text: String, fx: &mut Vec<Effect>) {
    if app.conversation.is_empty()
        && let Some(sys) = &app.system_prompt
    {
        app.conversation.push(Message::system(sys.clone()));
    }
    app.conversation.push(Message::user(text.clone()));
    let found = special::find(&text);
    app.entries.push(Entry::User {
        text: text.clone(),
        cache: LineCache::default(),
    });
    app.scroll_from_bottom = 0;
    start_turn(app, fx);
    if !found.is_empty() {
        warn_special_tokens(
            app,
            format!("Your message contains {}", special::describe(&text, &found)),
            false,
        );
    }
}

/// The one warning of a turn about special-token strings in text the template renders as is.
/// `neutralized`: the text is a tool result and the profile breaks its markers before sending.
fn warn_special_tokens(app: &mut App, what: String, neutralized: bool) {
    if app.special_tokens_warned {
        return;
    }
    app.special_tokens_warned = true;
    let consequence = if neutralized {
        "they are sent broken up (`< |im_end|>`), as neutralize_markers_in_tool_results asks"
    } else {
        "the server may read them as real turn boundaries (they are marked ⚠ in the transcript and the inspector)"
    };
    app.notice(format!("{what}; {consequence}."), !neutralized);
}

fn start_turn(app: &mut App, fx: &mut Vec<Effect>) {
    // The user's message is on disk before the request is made: a crash loses nothing typed.
    fx.push(Effect::SaveSession);
    app.busy = true;
    app.cancelling = false;
    app.special_tokens_warned = false;
    app.activity = Activity::Streaming {
        since: Instant::now(),
        chunks: 0,
    };
    fx.push(Effect::StartTurn);
}

fn slash(app: &mut App, cmd: SlashCommand, fx: &mut Vec<Effect>) {
    match cmd {
        SlashCommand::Help => app.help_open = true,
        SlashCommand::Quit => fx.push(Effect::Quit),
        SlashCommand::Inspector => toggle_inspector(app),
        SlashCommand::Mode(m) => {
            if app.busy {
                return app.notice("Cannot switch modes during a turn.", true);
            }
            app.connection.mode = m;
            fx.push(Effect::SwitchMode(m));
            app.notice(
                format!("Mode: {} (takes effect on the next message).", m.as_str()),
                false,
            );
        }
        SlashCommand::Clear => {
            if app.busy {
                return app.notice("Cannot clear during a turn; press Esc first.", true);
            }
            app.conversation.clear();
            app.partial.clear();
            app.entries.clear();
            app.traces.clear();
            app.trace_messages.clear();
            app.saved = None;
            app.turn_entry = None;
            // A cleared conversation is a new session; the old file stays as it was.
            if let Some(s) = &app.session {
                app.session = Some(crate::session::Session::new(
                    &s.profile,
                    s.mode,
                    &s.model,
                    &s.base_url,
                ));
            }
            app.selected_pane = None;
            app.scroll_from_bottom = 0;
            app.notice("Conversation cleared.", false);
        }
        SlashCommand::System(Some(_)) if app.busy => {
            app.notice("Cannot change the system prompt during a turn.", true)
        }
        SlashCommand::System(text) => match text {
            None => {
                let cur = app
                    .system_prompt
                    .clone()
                    .unwrap_or_else(|| "(none: the template's default applies)".to_owned());
                app.notice(format!("System prompt: {cur}"), false);
            }
            Some(t) => {
                // Rendered as typed, like a message: say what its special-token strings may do.
                let found = special::find(&t);
                let warning = (!found.is_empty()).then(|| {
                    format!(
                        "The system prompt contains {}; the server may read them as real turn boundaries.",
                        special::describe(&t, &found)
                    )
                });
                app.system_prompt = Some(t.clone());
                match app.conversation.first_mut() {
                    Some(m) if m.role == "system" => *m = Message::system(t),
                    Some(_) => app.conversation.insert(0, Message::system(t)),
                    None => {}
                }
                // A replaced system prompt adds no message: marked as a change to save now.
                app.change_rev += 1;
                fx.push(Effect::SaveSession);
                app.notice("System prompt set.", false);
                if let Some(w) = warning {
                    app.notice(w, true);
                }
            }
        },
        SlashCommand::Tools => {
            let text = if app.toolbox.is_empty() {
                "No tools are configured.".to_owned()
            } else {
                let mut s = String::from("Tools:");
                for t in app.toolbox.specs() {
                    s.push_str(&format!(
                        "\n  {} [{}] {} · {}",
                        t.name,
                        format!("{:?}", t.approval).to_lowercase(),
                        t.command.join(" "),
                        t.description
                    ));
                }
                s
            };
            app.notice(text, false);
        }
        SlashCommand::Retry => {
            if app.busy {
                return app.notice("A turn is running.", true);
            }
            let Some(last_user) = app.conversation.iter().rposition(|m| m.role == "user") else {
                return app.notice("Nothing to retry yet.", true);
            };
            app.conversation.truncate(last_user + 1);
            // Interrupted answers to the message being retried go with the answers replaced.
            app.partial.retain(|p| p.after_message <= last_user);
            // Traces of the answers being replaced go too.
            let keep = app
                .trace_messages
                .iter()
                .position(|&m| m > last_user)
                .unwrap_or(app.trace_messages.len());
            app.traces.truncate(keep);
            app.trace_messages.truncate(keep);
            app.selected_pane = None;
            app.turn_entry = None;
            if let Some(e) = app
                .entries
                .iter()
                .rposition(|e| matches!(e, Entry::User { .. }))
            {
                app.entries.truncate(e + 1);
            }
            app.scroll_from_bottom = 0;
            start_turn(app, fx);
        }
        SlashCommand::Export { markdown, path } => fx.push(Effect::Export { markdown, path }),
        SlashCommand::Unknown(msg) => app.notice(msg, true),
    }
}

fn engine(app: &mut App, e: EngineEvent, fx: &mut Vec<Effect>) {
    app.dirty = true;
    match e {
        EngineEvent::RoundStarted { .. } => {
            app.entries
                .push(Entry::Assistant(Box::new(AssistantTurn::new(None))));
            app.turn_entry = Some(app.entries.len() - 1);
            app.streaming = Some(Streaming::new(app.conversation.len()));
            app.change_rev += 1;
            app.activity = Activity::Streaming {
                since: Instant::now(),
                chunks: 0,
            };
        }
        EngineEvent::Stream(s) => stream(app, s),
        EngineEvent::RoundFinished {
            message,
            error,
            cancelled,
            trace,
            ..
        } => {
            // Mirror the engine's conversation message by message, so it can be saved now.
            let message_index = app.conversation.len();
            // The round's message (or its failure) replaces what was saved of it as it streamed.
            app.streaming = None;
            app.change_rev += 1;
            if let Some(m) = message {
                app.conversation.push(*m);
            }
            let trace_slot = app.current_turn().and_then(|t| t.trace);
            match trace_slot {
                Some(i) if i < app.traces.len() => app.traces[i] = *trace,
                _ => {
                    app.traces.push(*trace);
                    let i = app.traces.len() - 1;
                    if let Some(t) = app.current_turn() {
                        t.trace = Some(i);
                    }
                }
            }
            app.trace_messages.resize(app.traces.len(), message_index);
            if let Some(i) = app.current_turn().and_then(|t| t.trace) {
                app.trace_messages[i] = message_index;
            }
            fx.push(Effect::SaveSession);
            if let Some(t) = app.current_turn() {
                t.state = match (&error, cancelled) {
                    (Some(e), _) => {
                        // Server text: on its own line, escaped, capped.
                        TurnState::Failed(sanitize::one_line(&e.to_string(), ERROR_CHARS))
                    }
                    (None, true) => TurnState::Cancelled,
                    (None, false) => TurnState::Done,
                };
                t.rev += 1;
            }
            app.activity = Activity::Idle;
        }
        EngineEvent::ToolRefused { call, problem, .. } => {
            if let Some(p) = app.pane_for_call(&call.id) {
                p.state = PaneState::Refused {
                    reason: problem.to_string(),
                    invalid: problem.is_argument_problem(),
                };
            }
        }
        EngineEvent::ToolStarted {
            call, arguments, ..
        } => {
            app.activity = Activity::RunningTool {
                name: call.function.name.clone(),
            };
            if let Some(p) = app.pane_for_call(&call.id) {
                p.state = PaneState::Running {
                    since: Instant::now(),
                };
                if arguments != call.function.arguments {
                    p.edited_arguments = Some(arguments);
                }
            }
        }
        EngineEvent::ToolFinished { call, outcome, .. } => {
            app.activity = Activity::Idle;
            if let Some(p) = app.pane_for_call(&call.id) {
                p.state = finished_state(&outcome);
            }
        }
        EngineEvent::ToolResult { message, .. } => {
            let id = message.tool_call_id.clone().unwrap_or_default();
            let text = message.text();
            let found = special::find(&text);
            if !found.is_empty() {
                let name = message.name.clone().unwrap_or_default();
                let neutralized = app.neutralize_tool_markers;
                warn_special_tokens(
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
            }
            app.conversation.push(message);
            fx.push(Effect::SaveSession);
        }
    }
}

fn finished_state(o: &ToolOutcome) -> PaneState {
    let duration = o.duration;
    match &o.exit {
        ExitKind::Exited(0) => PaneState::Done {
            exit_code: 0,
            duration,
        },
        ExitKind::Exited(code) => PaneState::Failed {
            summary: format!("exit {code}"),
            duration,
        },
        ExitKind::Signaled(sig) => PaneState::Failed {
            summary: format!("killed by signal {sig}"),
            duration,
        },
        ExitKind::TimedOut => PaneState::TimedOut { duration },
        ExitKind::Cancelled => PaneState::Failed {
            summary: "cancelled".into(),
            duration,
        },
        ExitKind::FailedToStart(e) => PaneState::Failed {
            summary: format!("could not start: {e}"),
            duration,
        },
    }
}

fn stream(app: &mut App, s: StreamEvent) {
    match s {
        StreamEvent::Request { url, body, prompt } => {
            app.traces.push(Trace {
                mode: app.connection.mode,
                url,
                request: body,
                prompt,
                ..Trace::default()
            });
            let i = app.traces.len() - 1;
            if let Some(t) = app.current_turn() {
                t.trace = Some(i);
            }
            app.tokens_this_round = 0;
            app.round_started = Some(Instant::now());
        }
        StreamEvent::Chunk { data, at_us } => {
            if let Some(i) = app.current_turn().and_then(|t| t.trace)
                && let Some(trace) = app.traces.get_mut(i)
            {
                trace.push_chunk(&data, at_us);
            }
            app.tokens_this_round += 1;
            if let Activity::Streaming { chunks, .. } = &mut app.activity {
                *chunks += 1;
            }
        }
        StreamEvent::Marker(hit) => {
            if let Some(i) = app.current_turn().and_then(|t| t.trace)
                && let Some(trace) = app.traces.get_mut(i)
            {
                trace.markers.push(hit);
            }
        }
        StreamEvent::Text(t) => {
            if let Some(s) = app.streaming.as_mut() {
                s.text(&t);
                app.change_rev += 1;
            }
            if let Some(turn) = app.current_turn() {
                turn.markdown.push_str(&sanitize::for_terminal(&t));
            }
        }
        StreamEvent::ToolCallBegin { index, id, name } => {
            if let Some(s) = app.streaming.as_mut() {
                s.call_begin(index, &id, &name);
                app.change_rev += 1;
            }
            if let Some(t) = app.current_turn() {
                // Kept as received: engine events match panes by the exact id; the pane
                // escapes both when it draws them.
                t.panes.push(ToolPane::new(index, id, name));
                t.rev += 1;
            }
        }
        StreamEvent::ToolCallArgs { index, delta } => {
            if let Some(s) = app.streaming.as_mut() {
                s.call_args(index, &delta);
                app.change_rev += 1;
            }
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.arguments.push_str(&delta);
            }
        }
        StreamEvent::ToolCallEnd { index } => {
            // Checked now, so the pane shows invalid arguments before any dialog opens.
            let call = app
                .current_turn()
                .and_then(|t| t.panes.iter().find(|p| p.index == index))
                .map(|p| (p.name.clone(), p.arguments.clone()));
            let problem = call
                .and_then(|(name, args)| app.toolbox.check_call(&name, &args).err())
                .map(|e| e.to_string());
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.state = PaneState::Pending;
                p.problem = problem;
            }
        }
        StreamEvent::ToolCallIncomplete { index } => {
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.state = PaneState::Incomplete;
            }
        }
        StreamEvent::Warning(w) => {
            if let Some(t) = app.current_turn() {
                // Warnings quote model text: one line each, escaped.
                t.warnings.push(sanitize::one_line(&w, ERROR_CHARS));
                t.rev += 1;
            }
        }
        StreamEvent::Usage(u) => {
            app.usage.prompt_tokens += u.prompt_tokens;
            app.usage.completion_tokens += u.completion_tokens;
            app.usage.total_tokens += u.total_tokens;
        }
    }
}
