//! `update`: the only place the app's state changes. Events in, state changed, effects out.
//! Time comes in with the event (`now`, kept in `app.now`): nothing here reads the clock.

use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui_textarea::{CursorMove, TextArea};

use super::commands::{self, SlashCommand};
use super::composer::new_input;
use super::event::{AppEvent, Effect};
use super::keys::{Action, Context, lookup};
use super::layers::Layer;
use super::paste;
use super::state::*;
use super::status_line::Activity;
use super::view;
use kimi_core::engine::{Decision, EngineEvent, Op, ToolsReport};
use kimi_core::tools::mcp::ToolNote;
use kimi_core::tools::{CallProblem, ToolResult, ToolStatus};
use kimi_protocol::StreamEvent;
use kimi_protocol::sanitize;
use kimi_protocol::special;

/// Error texts from the server are shown up to this many characters.
const ERROR_CHARS: usize = 2000;
/// Log lines of a running MCP call kept in its pane.
const PANE_LOG_LINES: usize = 5;

/// Apply one event that happened at `now`. Returns what the event loop must do.
pub(crate) fn update(app: &mut App, event: AppEvent, now: Instant) -> Vec<Effect> {
    app.now = now;
    let mut fx = Vec::new();
    apply(app, event, &mut fx);
    // Any event may change what the dialog shows (a key, a resize, a new stage), and what the
    // input holds (a key, a paste, a message put back).
    super::dialog::refresh(app);
    super::slash::refresh(app);
    fx
}

fn apply(app: &mut App, event: AppEvent, fx: &mut Vec<Effect>) {
    match event {
        AppEvent::Terminal(e) => terminal(app, e, fx),
        AppEvent::Engine(e) => engine(app, e, fx),
        AppEvent::Edited(result) => super::editor::finished(app, result),
        AppEvent::Elicit(ask) => super::elicit::arrived(app, ask),
        AppEvent::PromptGot {
            server,
            prompt,
            result,
        } => super::mcp_prompts::got(app, &server, &prompt, result),
        AppEvent::ResourcesRead { message, result } => {
            super::attach::read(app, message, result, fx)
        }
        AppEvent::SessionsListed(list) => super::picker_sessions::open(app, *list),
        AppEvent::Exported(result) => super::export::exported(app, result),
        AppEvent::Trusted(result) => super::trust::answered(app, result),
        AppEvent::Tick => super::wake::tick(app),
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
    if super::elicit::paste(app, text) {
        return;
    }
    let target = match app.layers.dialog.as_mut().map(|d| &mut d.stage) {
        Some(DialogStage::Editing { editor, .. }) => Some((&mut **editor, false)),
        Some(DialogStage::Reason(t)) => Some((&mut **t, true)),
        Some(DialogStage::Rule(form)) => Some((&mut *form.editor, false)),
        Some(DialogStage::Asking) => None,
        None => Some((&mut app.composer.input, false)),
    };
    let Some((input, one_line)) = target else {
        return;
    };
    // The size is checked first: a refused paste costs nothing but the notice.
    let draft: usize = input.lines().iter().map(|l| l.len() + 1).sum::<usize>() - 1;
    if let Err(notice) = paste::check_size(text.len(), draft) {
        app.notice(notice.to_string(), true);
        return;
    }
    let text = paste::clean(text);
    if one_line {
        input.insert_str(text.replace('\n', " "));
    } else {
        input.insert_str(&text);
    }
}

fn key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    if lookup(Context::Global, &k) == Some(Action::CancelOrQuit) {
        // A picker or a history search open: Ctrl-C closes it.
        if app.layers.picker.take().is_some() {
            return;
        }
        if app.layers.history_search.is_some() {
            return super::history_search::cancel(app);
        }
        if app.busy {
            cancel(app, fx);
        } else if app.layers.dialog.is_none() && !app.composer.input.is_empty() {
            clear_draft(app);
        } else if app.layers.dialog.is_none() {
            super::quit_confirm::press(app, "Ctrl-C", fx);
        } else {
            fx.push(Effect::Quit);
        }
        return;
    }
    // The layer on top takes the keys; any key but a second Esc disarms going back.
    let top = app.layers.top();
    if top.is_none() && super::export::confirm_key(app, &k, fx) {
        return;
    }
    match top {
        Some(Layer::Question) => return super::elicit::key(app, &k),
        Some(Layer::Trust) => return super::trust::key(app, &k, fx),
        Some(Layer::Dialog) => return dialog_key(app, k, fx),
        // Over the dialog (Ctrl-T shows the call's raw markers); closing it returns to the
        // dialog, still pending.
        Some(Layer::Inspector) if app.layers.dialog.is_some() => {
            return inspector_key(app, k, fx);
        }
        Some(Layer::Help) => return help_key(app, &k),
        Some(Layer::Picker) => return super::picker::key(app, &k, fx),
        Some(Layer::HistorySearch) => return super::history_search::key(app, &k),
        Some(Layer::Inspector) | None => {}
    }
    let armed = std::mem::take(&mut app.composer.esc_armed);
    if armed {
        super::picker_rewind::disarm(app);
    }
    if top == Some(Layer::Inspector) {
        return inspector_key(app, k, fx);
    }
    if super::slash::key(app, &k) {
        return;
    }
    let empty = app.composer.input.is_empty();
    let page = app.transcript.page_height.saturating_sub(2).max(1);
    match lookup(Context::Input, &k) {
        Some(Action::Cancel) if app.busy => cancel(app, fx),
        Some(Action::Cancel) => {
            if let Some((e, _)) = app.transcript.selected_pane.take() {
                bump(app, e);
            } else {
                super::picker_rewind::esc(app, armed);
            }
        }
        Some(Action::StartHistorySearch) => super::history_search::start(app),
        Some(Action::OpenHelp) if k.code != KeyCode::Char('?') || empty => open_help(app),
        Some(Action::QuitIfEmpty) if empty && !app.busy => {
            super::quit_confirm::press(app, "Ctrl-D", fx)
        }
        Some(Action::QuitIfEmpty) if empty => fx.push(Effect::Quit),
        Some(Action::PageUp) => scroll(app, page, true),
        Some(Action::PageDown) => scroll(app, page, false),
        Some(Action::Top) if empty || k.modifiers.contains(KeyModifiers::CONTROL) => {
            scroll(app, usize::MAX / 2, true);
        }
        Some(Action::Bottom) if empty || k.modifiers.contains(KeyModifiers::CONTROL) => {
            app.transcript.scroll_from_bottom = 0;
        }
        Some(Action::SelectPrevCall) => select_pane(app, true),
        Some(Action::SelectNextCall) => select_pane(app, false),
        Some(Action::ToggleCall) => toggle_pane(app),
        Some(Action::ToggleInspector) => toggle_inspector(app),
        Some(Action::ToggleReasoning) => super::reasoning_update::toggle(app),
        // Getting text out, compose.
        Some(Action::ToggleMouse) => super::toggles::mouse(app, None, fx),
        Some(Action::OpenEditor) => super::editor::open(app, fx),
        Some(Action::NewLine) => app.composer.input.insert_newline(),
        Some(a) if edit(&mut app.composer.input, a) => {}
        Some(Action::Send) => submit(app, fx),
        Some(Action::HistoryPrev) if empty && !app.composer.queued.is_empty() => {
            if let Some(text) = super::queue::take_back(app) {
                set_input(&mut app.composer.input, &text);
            }
        }
        Some(Action::HistoryPrev)
            if app.composer.input.cursor().0 == 0 && !app.composer.history.is_empty() =>
        {
            recall(app, true)
        }
        Some(Action::HistoryNext)
            if app.composer.history_pos.is_some()
                && app.composer.input.cursor().0 + 1 >= app.composer.input.lines().len() =>
        {
            recall(app, false)
        }
        // Unbound, or bound but not applicable here (Up inside a multi-line draft): text.
        _ => {
            app.composer.input.input(k);
        }
    }
}

/// Ctrl-C on a draft, as in Codex and Claude Code: the draft goes (into the prompt history, so
/// Up brings it back) and a second Ctrl-C on the empty input quits.
fn clear_draft(app: &mut App) {
    let text = app.composer.input.lines().join("\n");
    if app.composer.history.last() != Some(&text) {
        app.composer.history.push(text);
    }
    app.composer.history_pos = None;
    app.composer.input = new_input();
    app.notice(
        "Draft cleared (Up brings it back); Ctrl-C again quits.",
        false,
    );
}

/// The readline editing actions of the key table, applied to a text box. `false` when `action`
/// is not one of them.
fn edit(input: &mut TextArea<'static>, action: Action) -> bool {
    match action {
        Action::LineStart => input.move_cursor(CursorMove::Head),
        Action::LineEnd => input.move_cursor(CursorMove::End),
        Action::WordBack => input.move_cursor(CursorMove::WordBack),
        Action::WordForward => input.move_cursor(CursorMove::WordForward),
        Action::DeleteToLineStart => {
            input.delete_line_by_head();
        }
        Action::DeleteToLineEnd => {
            input.delete_line_by_end();
        }
        Action::DeleteWordBack => {
            input.delete_word();
        }
        Action::Undo => {
            input.undo();
        }
        Action::Yank => {
            input.paste();
        }
        _ => return false,
    }
    true
}

fn open_help(app: &mut App) {
    app.layers.help.open = true;
    app.layers.help.scroll = 0;
}

fn help_key(app: &mut App, k: &KeyEvent) {
    // The help's lines and the rows the overlay shows of them (two go to its border).
    let total = crate::ui::help::line_count(app.screen.0, app.keyboard_enhanced, &app.mcp);
    let shown = usize::from(app.screen.1).saturating_sub(2).max(1);
    let last = total.saturating_sub(shown);
    let page = shown.saturating_sub(1).max(1);
    let s = &mut app.layers.help.scroll;
    match lookup(Context::Help, k) {
        Some(Action::CloseHelp) => app.layers.help.open = false,
        Some(Action::LineUp) => *s = s.saturating_sub(1),
        Some(Action::LineDown) => *s = (*s + 1).min(last),
        Some(Action::PageUp) => *s = s.saturating_sub(page),
        Some(Action::PageDown) => *s = (*s + page).min(last),
        Some(Action::Top) => *s = 0,
        Some(Action::Bottom) => *s = last,
        _ => {}
    }
}

fn cancel(app: &mut App, fx: &mut Vec<Effect>) {
    // The agent denies the call it waits about when the turn is cancelled.
    app.layers.dialog = None;
    app.cancelling = true;
    fx.push(Effect::Agent(Op::Cancel));
}

/// What the page keys say on the inline screen.
pub(crate) const INLINE_SCROLL: &str = "The inline screen does not scroll: the conversation is in \
     the terminal's own scrollback (Shift-PgUp in most terminals; Ctrl-B [ in tmux).";

/// Lines scrolled; `up` moves toward older text.
fn scroll(app: &mut App, lines: usize, up: bool) {
    if app.inline {
        app.notice(INLINE_SCROLL, false);
        return;
    }
    app.transcript.scroll_from_bottom = if up {
        app.transcript.scroll_from_bottom.saturating_add(lines)
    } else {
        app.transcript.scroll_from_bottom.saturating_sub(lines)
    };
}

fn recall(app: &mut App, older: bool) {
    let n = app.composer.history.len();
    let pos = match (app.composer.history_pos, older) {
        (None, true) => Some(n - 1),
        (Some(0), true) => Some(0),
        (Some(i), true) => Some(i - 1),
        (Some(i), false) if i + 1 < n => Some(i + 1),
        (_, false) => None,
    };
    app.composer.history_pos = pos;
    let text = pos
        .map(|i| app.composer.history[i].clone())
        .unwrap_or_default();
    set_input(&mut app.composer.input, &text);
}

pub(super) fn set_input(input: &mut TextArea<'static>, text: &str) {
    *input = new_input();
    input.insert_str(text);
    input.move_cursor(CursorMove::Bottom);
    input.move_cursor(CursorMove::End);
}

fn select_pane(app: &mut App, forward: bool) {
    let all: Vec<(usize, usize)> = app
        .transcript
        .entries
        .iter()
        .enumerate()
        .flat_map(|(e, entry)| match entry {
            Entry::Assistant(t) => (0..t.panes.len()).map(|p| (e, p)).collect(),
            _ => Vec::new(),
        })
        .collect();
    if all.is_empty() {
        app.transcript.selected_pane = None;
        return;
    }
    let cur = app
        .transcript
        .selected_pane
        .and_then(|s| all.iter().position(|x| *x == s));
    let next = match (cur, forward) {
        (None, true) => all.len() - 1,
        (None, false) => 0,
        (Some(i), true) => (i + all.len() - 1) % all.len(),
        (Some(i), false) => (i + 1) % all.len(),
    };
    if let Some((e, _)) = app.transcript.selected_pane.replace(all[next]) {
        bump(app, e);
    }
    bump(app, all[next].0);
    app.transcript.reveal_selected = true;
}

fn bump(app: &mut App, entry: usize) {
    if let Some(Entry::Assistant(t)) = app.transcript.entries.get_mut(entry) {
        t.rev += 1;
    }
}

fn toggle_pane(app: &mut App) {
    let target = app.transcript.selected_pane.or_else(|| {
        app.transcript
            .entries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(e, entry)| match entry {
                Entry::Assistant(t) if !t.panes.is_empty() => Some((e, t.panes.len() - 1)),
                _ => None,
            })
    });
    if let Some((e, p)) = target
        && let Some(Entry::Assistant(t)) = app.transcript.entries.get_mut(e)
        && let Some(pane) = t.panes.get_mut(p)
    {
        pane.expanded = !pane.expanded;
        t.rev += 1;
    }
}

fn toggle_inspector(app: &mut App) {
    let ins = &mut app.layers.inspector;
    ins.open = !ins.open;
    ins.searching = None;
    ins.message = None;
    ins.hit = None;
    if !ins.open {
        return;
    }
    ins.scroll = 0;
    ins.selected = None;
    ins.jump_to_call = None;
    // Opening with a tool pane selected jumps to that call's markers.
    if let Some((e, p)) = app.transcript.selected_pane
        && let Some(Entry::Assistant(t)) = app.transcript.entries.get(e)
        && let (Some(trace), Some(pane)) = (t.trace, t.panes.get(p))
    {
        app.layers.inspector.selected = Some(trace);
        app.layers.inspector.jump_to_call = Some(pane.index);
    }
}

/// Open the inspector at the markers of the call the dialog asks about.
fn inspect_dialog_call(app: &mut App) {
    let Some(id) = app
        .layers
        .dialog
        .as_ref()
        .map(|d| d.request.call.id.clone())
    else {
        return;
    };
    let target = app.current_turn().and_then(|t| {
        let pane = t.panes.iter().find(|p| p.id == id)?;
        Some((t.trace, pane.index))
    });
    toggle_inspector(app);
    if !app.layers.inspector.open {
        return;
    }
    match target {
        Some((Some(trace), index)) => {
            app.layers.inspector.selected = Some(trace);
            app.layers.inspector.jump_to_call = Some(index);
        }
        _ => {
            app.layers.inspector.message =
                Some("this call's request is not in the inspector".into())
        }
    }
}

fn inspector_key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    // The editor of the last answer takes every key while it is open.
    if app.layers.inspector.edit.is_some() {
        return super::answer_edit::key(app, k, fx);
    }
    let over_dialog = app.layers.dialog.is_some();
    let ins = &mut app.layers.inspector;
    if let Some(q) = ins.searching.as_mut() {
        match lookup(Context::Search, &k) {
            Some(Action::RunSearch) => {
                ins.query = Some(std::mem::take(q)).filter(|q| !q.is_empty());
                ins.searching = None;
                ins.message = Some("search: n next, N previous".into());
                ins.jump_to_call = None;
                ins.hit = None;
                search_step(app, true, true);
                return;
            }
            Some(Action::CancelSearch) => {
                ins.searching = None;
                return;
            }
            Some(Action::DeleteSearchChar) => {
                q.pop();
                return;
            }
            // Ctrl-T still closes the inspector (below); other keys are the query.
            _ if lookup(Context::Inspector, &k) == Some(Action::ToggleInspector) => {}
            _ => {
                if let KeyCode::Char(c) = k.code {
                    q.push(c);
                }
                return;
            }
        }
    }
    // The token view takes its keys first.
    if super::inspector_tokens::key(app, &k) {
        return;
    }
    let page = app.layers.inspector.page.max(1);
    let traces = app.traces.len();
    let ins = &mut app.layers.inspector;
    let action = lookup(Context::Inspector, &k);
    // Moving on leaves the last search note behind (it described the old position).
    if matches!(
        action,
        Some(
            Action::LineUp
                | Action::LineDown
                | Action::PageUp
                | Action::PageDown
                | Action::Top
                | Action::Bottom
                | Action::PrevRequest
                | Action::NextRequest
        )
    ) {
        ins.message = None;
        ins.hit = None;
    }
    match action {
        // Over the dialog only the view closes: the dialog is still pending under it.
        Some(Action::ToggleInspector) if over_dialog => ins.open = false,
        Some(Action::ToggleInspector) => toggle_inspector(app),
        Some(Action::CloseInspector) => ins.open = false,
        Some(Action::LineUp) => ins.scroll = ins.scroll.saturating_sub(1),
        Some(Action::LineDown) => ins.scroll = ins.scroll.saturating_add(1),
        Some(Action::PageUp) => ins.scroll = ins.scroll.saturating_sub(page),
        Some(Action::PageDown) => ins.scroll = ins.scroll.saturating_add(page),
        Some(Action::Top) => ins.scroll = 0,
        Some(Action::Bottom) => ins.scroll = usize::MAX / 2,
        Some(Action::StartSearch) => ins.searching = Some(String::new()),
        Some(Action::NextMatch) => search_step(app, true, false),
        Some(Action::PrevMatch) => search_step(app, false, false),
        Some(Action::PrevRequest) if traces > 0 => {
            let cur = ins.selected.unwrap_or(traces - 1);
            ins.selected = Some(cur.saturating_sub(1));
            ins.scroll = 0;
        }
        Some(Action::NextRequest) if traces > 0 => {
            let cur = ins.selected.unwrap_or(traces - 1);
            ins.selected = Some((cur + 1).min(traces - 1));
            ins.scroll = 0;
        }
        Some(Action::SaveTrace) => {
            if let Some((_, trace)) = app.inspected_trace() {
                fx.push(Effect::SaveTrace(Box::new(trace.clone())));
            }
        }
        Some(Action::SaveRepro) => {
            if let Some((_, trace)) = app.inspected_trace() {
                fx.push(Effect::SaveRepro(Box::new(trace.clone())));
            }
        }
        Some(Action::CompareNonStream) => super::inspector_ab::start(app, false, fx),
        Some(Action::CompareOtherMode) => super::inspector_ab::start(app, true, fx),
        Some(Action::ToggleRawJson) => {
            ins.raw_json = !ins.raw_json;
            ins.view.set_raw_json(ins.raw_json);
            ins.message = Some(if ins.raw_json {
                "chat events as raw JSON (r: compact)".into()
            } else {
                "chat events compact (r: raw JSON)".into()
            });
        }
        Some(Action::EditAnswer) => super::answer_edit::open(app),
        Some(Action::NextStall) => super::inspector_trace::jump(app, true),
        Some(Action::PrevStall) => super::inspector_trace::jump(app, false),
        _ => {}
    }
}

/// Move the inspector to the next (or previous) line matching the query.
fn search_step(app: &mut App, forward: bool, from_current: bool) {
    let Some(query) = app.layers.inspector.query.clone() else {
        return;
    };
    let Some(i) = app.inspected_index() else {
        return;
    };
    // The view's kept lines, brought up to date (appending only): no rebuild per step.
    let total = app.traces.len();
    let view = &mut app.layers.inspector.view;
    view.refresh(&app.traces[i].read(), i, total, app.template);
    let start = app
        .layers
        .inspector
        .hit
        .unwrap_or(app.layers.inspector.scroll)
        .min(view.len());
    let from = if forward && !from_current {
        start + 1
    } else {
        start
    };
    // Past the last match the search wraps around, as in less and vim, and says so.
    let (hit, wrapped) = match view.find(&query, from, forward) {
        Some(n) => (Some(n), false),
        None if forward => (view.find(&query, 0, true), true),
        None => (view.find(&query, view.len(), false), true),
    };
    app.layers.inspector.message = Some(match hit {
        Some(n) => {
            app.layers.inspector.scroll = n;
            app.layers.inspector.hit = Some(n);
            let note = match (wrapped, forward) {
                (false, _) => "",
                (true, true) => " (wrapped to the top)",
                (true, false) => " (wrapped to the bottom)",
            };
            format!("/{query}: line {}{note}", n + 1)
        }
        None => format!("/{query}: no matches"),
    });
}

fn dialog_key(app: &mut App, k: KeyEvent, fx: &mut Vec<Effect>) {
    // Ctrl-T shows the call's raw markers, whatever the dialog is doing.
    if lookup(Context::Dialog, &k) == Some(Action::InspectCall) {
        return inspect_dialog_call(app);
    }
    let Some(dialog) = app.layers.dialog.as_mut() else {
        return;
    };
    let mut decision = None;
    let mut always = false;
    match &mut dialog.stage {
        DialogStage::Asking => match lookup(Context::Dialog, &k) {
            // Arguments too long for the dialog scroll first.
            Some(a) if super::dialog::scroll(dialog, a) => {}
            // Invalid arguments cannot be approved as they are: only fixed (e) or denied.
            Some(Action::Approve | Action::AlwaysAllow | Action::AddRule)
                if !dialog.request.problems.is_empty() =>
            {
                dialog.hint = Some("invalid arguments: fix them with e, or deny with n/Esc".into());
            }
            // Nothing runs on arguments the user has not had on screen.
            Some(Action::Approve | Action::AlwaysAllow | Action::AddRule) if !dialog.seen_all => {
                dialog.hint = Some(super::dialog::unseen_hint(dialog));
            }
            Some(Action::AddRule) => super::rule_form::open(dialog),
            // The arguments fit: page keys scroll the transcript behind the dialog.
            Some(a @ (Action::PageUp | Action::PageDown)) => {
                let page = app.transcript.page_height.saturating_sub(2).max(1);
                app.transcript.scroll_from_bottom = if a == Action::PageUp {
                    app.transcript.scroll_from_bottom.saturating_add(page)
                } else {
                    app.transcript.scroll_from_bottom.saturating_sub(page)
                };
            }
            Some(a @ (Action::Approve | Action::AlwaysAllow)) => {
                always = a == Action::AlwaysAllow;
                decision = Some(Decision::Approve {
                    arguments: dialog.request.arguments.clone(),
                });
            }
            Some(Action::DenyWithReason) => {
                let mut t = TextArea::default();
                t.set_placeholder_text("reason for the model (optional), Enter to deny");
                dialog.stage = DialogStage::Reason(Box::new(t));
            }
            Some(Action::Edit) => {
                let mut editor = TextArea::new(pretty_lines(&dialog.request.arguments));
                editor.move_cursor(CursorMove::Top);
                dialog.stage = DialogStage::Editing {
                    editor: Box::new(editor),
                    problems: Vec::new(),
                };
            }
            Some(Action::Deny) => decision = Some(Decision::Deny { reason: None }),
            _ => {}
        },
        DialogStage::Reason(t) => match lookup(Context::DialogReason, &k) {
            Some(Action::SubmitReason) => {
                let reason = t.lines().join(" ").trim().to_owned();
                decision = Some(Decision::Deny {
                    reason: (!reason.is_empty()).then_some(reason),
                });
            }
            Some(Action::BackToDialog) => dialog.stage = DialogStage::Asking,
            _ => {
                t.input(k);
            }
        },
        DialogStage::Editing { editor, problems } => {
            let action = lookup(Context::DialogEdit, &k);
            if action == Some(Action::SaveEdit) {
                // The core checks the edit against the tool's schema; the answer
                // (`ArgumentsChecked`) saves it or shows the problems.
                let _ = problems;
                fx.push(Effect::Agent(Op::CheckArguments {
                    id: dialog.id.unwrap_or_default(),
                    tool: dialog.request.call.function.name.clone(),
                    arguments: editor.lines().join("\n"),
                }));
            } else if action == Some(Action::BackToDialog) {
                dialog.stage = DialogStage::Asking;
            } else {
                editor.input(k);
            }
        }
        DialogStage::Rule(form) => match lookup(Context::DialogRule, &k) {
            Some(Action::SaveRule) => super::rule_form::save(dialog, fx),
            Some(Action::ToggleRuleScope) if !form.pending => super::rule_form::toggle_scope(form),
            Some(Action::BackToDialog) => dialog.stage = DialogStage::Asking,
            // Sent: the text stays as the core is checking it.
            _ if form.pending => {}
            _ => {
                form.editor.input(k);
            }
        },
    }
    if let Some(d) = decision {
        decide(app, d, always, fx);
    }
}

/// The core checked the edited arguments of approval `id`: saved when the editor still holds
/// what was checked (keys typed since then wait for the next save).
fn arguments_checked(
    app: &mut App,
    id: u64,
    text: &str,
    result: Result<serde_json::Value, CallProblem>,
    fx: &mut Vec<Effect>,
) {
    let screen = app.screen;
    // The rules see the edit too: one they deny stays in the editor, saying which rule.
    let refused = match &result {
        Ok(value) => super::rules_view::edit_refused(app, value),
        Err(_) => None,
    };
    let Some(dialog) = app.layers.dialog.as_mut() else {
        return;
    };
    if dialog.id.unwrap_or_default() != id {
        return;
    }
    let DialogStage::Editing { editor, problems } = &mut dialog.stage else {
        return;
    };
    if editor.lines().join("\n") != text {
        return;
    }
    let value = match result {
        Ok(value) => value,
        Err(p) => {
            *problems = vec![p.to_string()];
            app.dirty = true;
            return;
        }
    };
    if let Some(refused) = refused {
        *problems = vec![refused];
        app.dirty = true;
        return;
    }
    // Saved without a change: the model's own text, not a re-serialization.
    let original = serde_json::from_str::<serde_json::Value>(&dialog.request.arguments);
    let unchanged = original.ok().as_ref() == Some(&value);
    let arguments = if unchanged {
        dialog.request.arguments.clone()
    } else {
        value.to_string()
    };
    if unchanged && dialog.seen_all
        || !unchanged && super::dialog::editor_all_shown(dialog, &app.layers.approval_rows, screen)
    {
        decide(app, Decision::Approve { arguments }, false, fx);
    } else {
        // The editor hid part of the text (off screen, invisible characters): show it as the
        // dialog shows arguments, then y.
        super::dialog::review(dialog, arguments, !unchanged);
    }
    app.dirty = true;
}

/// The user decided about the dialog's call: the agent is told, the dialog closes.
pub(super) fn decide(app: &mut App, d: Decision, always: bool, fx: &mut Vec<Effect>) {
    let Some(dialog) = app.layers.dialog.as_mut() else {
        return;
    };
    let id = dialog.request.call.id.clone();
    let tool = &dialog.request.call.function.name;
    if always && matches!(d, Decision::Approve { .. }) && !app.always_allow.contains(tool) {
        app.always_allow.push(tool.clone());
    }
    if let Some(approval) = dialog.id.take() {
        fx.push(Effect::Agent(Op::Approve {
            id: approval,
            decision: d.clone(),
            always,
        }));
    }
    app.layers.dialog = None;
    app.status.activity = Activity::Idle;
    if let (Decision::Approve { .. }, Some(p)) = (&d, app.pane_for_call(&id)) {
        p.state = PaneState::Pending;
    }
}

/// The arguments as pretty JSON lines for the editor; as typed when they are not JSON.
pub(crate) fn pretty_lines(arguments: &str) -> Vec<String> {
    let text = serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_owned());
    text.lines().map(str::to_owned).collect()
}

fn submit(app: &mut App, fx: &mut Vec<Effect>) {
    let text = app.composer.input.lines().join("\n");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    // `//text` is a message that starts with `/` (`/text`); a single `/` starts a command.
    let message = match commands::unescape(&text) {
        Some(message) => message,
        None => {
            match commands::parse(trimmed) {
                // A mistyped command (or bad arguments) stays in the input to be put right.
                Some(SlashCommand::Unknown(msg)) => return app.notice(msg, true),
                Some(cmd) => {
                    app.composer.input = new_input();
                    return slash(app, cmd, fx);
                }
                None => {}
            }
            text.clone()
        }
    };
    // The history keeps what was typed (`//text`), so recalling it sends the same message;
    // the same prompt twice in a row is kept once, and the history file gets it.
    if app.composer.history_file.is_some() {
        fx.push(Effect::History(text.clone()));
    }
    if app.composer.history.last() != Some(&text) {
        app.composer.history.push(text);
    }
    app.composer.history_pos = None;
    // `@server:uri`: the message waits in the input until its resources are read.
    if super::attach::submit(app, &message, fx) {
        return;
    }
    app.composer.input = new_input();
    send_or_queue(app, message, fx);
}

/// A message to send now, or after the running turn.
pub(super) fn send_or_queue(app: &mut App, message: String, fx: &mut Vec<Effect>) {
    if app.busy {
        return super::queue::push(app, message);
    }
    send_user(app, message, fx);
}

fn send_user(app: &mut App, text: String, fx: &mut Vec<Effect>) {
    // The agent appends the message (after the system prompt in a new conversation) and
    // reports it; the view shows it at once.
    let found = special::find(&text);
    app.transcript.entries.push(Entry::User {
        id: Default::default(),
        text: text.clone(),
    });
    app.transcript.scroll_from_bottom = 0;
    start_turn(app, fx, Op::UserTurn { text: text.clone() });
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
pub(super) fn warn_special_tokens(app: &mut App, what: String, neutralized: bool) {
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

pub(super) fn start_turn(app: &mut App, fx: &mut Vec<Effect>, op: Op) {
    // The user's message is saved when the agent reports it, before the request is made.
    app.busy = true;
    app.cancelling = false;
    app.special_tokens_warned = false;
    app.status.activity = Activity::Streaming {
        since: app.now,
        chunks: 0,
    };
    fx.push(Effect::Agent(op));
}

fn slash(app: &mut App, cmd: SlashCommand, fx: &mut Vec<Effect>) {
    match cmd {
        SlashCommand::Help => open_help(app),
        SlashCommand::Quit => fx.push(Effect::Quit),
        SlashCommand::Inspector => toggle_inspector(app),
        SlashCommand::Mode(m) => {
            // The agent switches before its next request; the status bar follows its report.
            if app.busy {
                app.notice(
                    format!("Mode {} applies from the next request.", m.as_str()),
                    false,
                );
            }
            fx.push(Effect::Agent(Op::SetMode(m)));
        }
        SlashCommand::Logprobs(n) => super::inspector_tokens::command(app, n, fx),
        SlashCommand::Thinking(on) => {
            // The agent switches before its next request.
            app.thinking = Some(on);
            let text = if !app.template.thinks() {
                format!(
                    "Thinking {}: the template {} has no reasoning; the switch is sent anyway.",
                    if on { "on" } else { "off" },
                    app.template.as_str()
                )
            } else {
                format!(
                    "Thinking {} from the next request.",
                    if on { "on" } else { "off" }
                )
            };
            app.notice(text, false);
            fx.push(Effect::Agent(Op::SetThinking(on)));
        }
        SlashCommand::Clear => {
            if app.busy {
                app.notice(
                    "The conversation will be cleared when this answer ends.",
                    false,
                );
            }
            fx.push(Effect::Agent(Op::Clear));
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
                if app.busy {
                    app.notice(
                        "The new system prompt applies from the next request.",
                        false,
                    );
                }
                fx.push(Effect::Agent(Op::SetSystem { prompt: t }));
                if let Some(w) = warning {
                    app.notice(w, true);
                }
            }
        },
        // The core reports its tools (`EngineEvent::Tools`).
        SlashCommand::Tools => fx.push(Effect::Agent(Op::ToolsReport)),
        SlashCommand::Revoke(name) => revoke(app, name, fx),
        SlashCommand::Rules => super::rules_view::command(fx),
        SlashCommand::Usage => {
            let text = super::usage_report::report(&super::thinking_cost::all(app));
            app.notice(text, false);
        }
        SlashCommand::RemoveRule(n) => super::rules_view::remove(app, n, fx),
        SlashCommand::Mcp => {
            let reports = app.toolbox.mcp().map(|h| h.reports()).unwrap_or_default();
            let toolbox = &app.toolbox;
            let text = super::mcp_view::mcp_report(
                &reports,
                |name| {
                    toolbox
                        .find(name)
                        .map(|t| format!("{:?}", t.approval).to_lowercase())
                        .unwrap_or_else(|| "?".to_owned())
                },
                &app.always_allow,
            );
            app.notice(text, false);
        }
        SlashCommand::McpPrompt { name, args } => {
            super::mcp_prompts::command(app, &name, &args, fx)
        }
        SlashCommand::Retry => {
            if app.busy {
                return app.notice("A turn is running.", true);
            }
            let Some(last_user) = app.conversation.iter().rposition(|m| m.role == "user") else {
                return app.notice("Nothing to retry yet.", true);
            };
            // The agent drops the answers (and their traces) and reports it (`Truncated`).
            // Interrupted answers to the message being retried go with the answers replaced.
            app.partial.retain(|p| p.after_message <= last_user);
            app.transcript.selected_pane = None;
            app.transcript.turn_entry = None;
            if let Some(e) = app
                .transcript
                .entries
                .iter()
                .rposition(|e| matches!(e, Entry::User { .. }))
            {
                app.transcript.entries.truncate(e + 1);
            }
            app.transcript.scroll_from_bottom = 0;
            start_turn(app, fx, Op::Retry);
        }
        SlashCommand::Export { markdown, path } => fx.push(Effect::Export {
            markdown,
            path: path.map(std::path::PathBuf::from),
            replace: false,
        }),
        // Getting text out, themes.
        SlashCommand::Copy(target) => super::copy::copy(app, target, fx),
        SlashCommand::Mouse(on) => super::toggles::mouse(app, on, fx),
        SlashCommand::Theme(theme) => super::toggles::theme(app, theme),
        SlashCommand::Sessions => super::picker_sessions::command(app, fx),
        // Switching without restarting.
        SlashCommand::Model(name) => super::models::model_command(name, fx),
        SlashCommand::Profile(name) => super::models::profile_command(app, name, fx),
        SlashCommand::Unknown(msg) => app.notice(msg, true),
    }
}

/// Take "always allow" back: the engine holds the policy (`Op::Revoke`), `app.always_allow` is
/// the view of it the status bar and `/tools` show. The next call of the tool asks again.
fn revoke(app: &mut App, name: Option<String>, fx: &mut Vec<Effect>) {
    let text = match name {
        None if app.always_allow.is_empty() => "No tool is always allowed.".to_owned(),
        None => {
            let names = std::mem::take(&mut app.always_allow).join(", ");
            fx.push(Effect::Agent(Op::Revoke { tool: None }));
            format!("Always allow revoked for {names}: their calls ask again.")
        }
        Some(n) => match app.always_allow.iter().position(|a| *a == n) {
            Some(i) => {
                app.always_allow.remove(i);
                fx.push(Effect::Agent(Op::Revoke {
                    tool: Some(n.clone()),
                }));
                format!("Always allow revoked for {n}: its calls ask again.")
            }
            None => {
                let shown = sanitize::one_line(&n, 80);
                return app.notice(format!("{shown} is not always allowed."), true);
            }
        },
    };
    app.notice(text, false);
}

fn engine(app: &mut App, e: EngineEvent, fx: &mut Vec<Effect>) {
    app.dirty = true;
    match e {
        EngineEvent::RoundStarted { .. } => {
            let mut turn = AssistantTurn::new(None);
            turn.edited = std::mem::take(&mut app.continuing);
            app.transcript
                .entries
                .push(Entry::Assistant(Box::new(turn)));
            app.transcript.turn_entry = Some(app.transcript.entries.len() - 1);
            app.status.activity = Activity::Streaming {
                since: app.now,
                chunks: 0,
            };
        }
        EngineEvent::Stream(s) => stream(app, s),
        EngineEvent::RoundFinished {
            error, cancelled, ..
        } => {
            super::retry::ended(app, false);
            super::reasoning_update::answer_started(app);
            // Server text: on its own line, escaped, capped.
            if let Some(e) = &error {
                super::retry::failed(app, e);
            }
            app.status.retried = None;
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
            app.status.activity = Activity::Idle;
        }
        EngineEvent::MessageAppended { index, message } => {
            view::appended(app, index, *message);
            super::models_context::check(app);
        }
        EngineEvent::TraceStarted { index, trace } => {
            // A retry's request is going out: its countdown is over.
            super::retry::ended(app, true);
            view::trace_started(app, index, trace)
        }
        EngineEvent::TraceFinished {
            index,
            message_index,
        } => view::trace_finished(app, index, message_index),
        EngineEvent::ApprovalRequested { id, request } => view::approval(app, id, *request, fx),
        EngineEvent::TurnDone { outcome } => {
            super::retry::ended(app, false);
            super::models::after_turn(app, fx);
            view::turn_done(app, &outcome);
            // A cancelled or failed turn sends nothing queued: it goes back into the input.
            let stopped = outcome.cancelled || outcome.error.is_some();
            if let Some(text) = super::queue::next(app, stopped) {
                send_user(app, text, fx);
            }
        }
        EngineEvent::TurnFailed { message } => {
            super::retry::ended(app, false);
            view::turn_failed(app, &message);
            let _ = super::queue::next(app, true);
        }
        EngineEvent::SystemSet { prompt, change } => view::system_set(app, prompt, change),
        EngineEvent::Cleared => {
            view::cleared(app);
            super::models_context::forget_measure(app);
        }
        EngineEvent::Truncated { messages, traces } => {
            view::truncated(app, messages, traces);
            super::models_context::forget_measure(app);
        }
        EngineEvent::EndpointSet {
            mode,
            model,
            base_url,
            template,
            thinking,
        } => super::models::endpoint_set(app, mode, model, &base_url, template, thinking),
        EngineEvent::RetryScheduled {
            error,
            attempt,
            attempts,
            wait,
        } => super::retry::scheduled(app, &error, attempt, attempts, wait, app.now),
        EngineEvent::ModeSet(m) => {
            app.connection.mode = m;
            app.notice(
                format!("Mode: {} (takes effect on the next message).", m.as_str()),
                false,
            );
        }
        // An error while the dialog's rule form waits: the rule was not added, said there.
        EngineEvent::Notice { text, error } => {
            if !(error && super::rules_view::refused(app, &text)) {
                app.notice(text, error)
            }
        }
        EngineEvent::CallDecided {
            call_id, decision, ..
        } => super::rules_view::call_decided(app, &call_id, decision),
        EngineEvent::Rules { rules, added } => super::rules_view::rules(app, rules, added, fx),
        EngineEvent::AllowanceDropped { tool } => {
            app.always_allow.retain(|t| *t != tool);
            app.notice(
                format!(
                    "`{}` changed its description or schema since you allowed it always: it asks again.",
                    sanitize::one_line(&tool, 80)
                ),
                true,
            );
        }
        // Only `exec` and tests ask for snapshots; the app holds its view.
        EngineEvent::Snapshot { .. } => {}
        EngineEvent::Models { shown, listing } => {
            let result = listing.as_deref().map_err(ToString::to_string);
            super::models::listed(app, shown, result)
        }
        EngineEvent::ModelChosen { model } => super::models::model_chosen(app, model),
        EngineEvent::Compared {
            index,
            variant,
            outcome,
        } => super::inspector_ab::compared(app, index, variant, outcome),
        EngineEvent::ProfileChosen { choice } => super::models::profile_chosen(app, *choice, fx),
        EngineEvent::AgentRestarted { message } => {
            tracing::error!(%message, "the agent restarted");
            // The session's recorder died with the agent: saving is off, said so.
            if app.session.take().is_some() {
                app.notice(
                    "The agent restarted: this session is no longer saved.",
                    true,
                );
            }
            // The policy died with the agent: the view must not claim otherwise.
            if !app.always_allow.is_empty() {
                app.always_allow.clear();
                app.notice(
                    "The agent restarted: tools allowed with `a` will ask again.",
                    true,
                );
            }
        }
        EngineEvent::ArgumentsChecked {
            id,
            arguments,
            result,
        } => arguments_checked(app, id, &arguments, result.map(|v| *v), fx),
        EngineEvent::CallChecked { index, problem } => {
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.problem = problem.map(|e| e.to_string());
            }
        }
        EngineEvent::Tools { report } => tools_report(app, &report),
        // What decided a call is also in its approval request; the pane and `/rules` views
        // of these are the rules UI's.
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
            app.status.activity = Activity::RunningTool {
                name: call.function.name.clone(),
            };
            let now = app.now;
            if let Some(p) = app.pane_for_call(&call.id) {
                p.state = PaneState::Running { since: now };
                if arguments != call.function.arguments {
                    p.edited_arguments = Some(arguments);
                }
            }
        }
        EngineEvent::ToolNote { call_id, note, .. } => {
            if let Some(p) = app.pane_for_call(&call_id) {
                match note {
                    ToolNote::Progress { .. } => p.progress = Some(note),
                    ToolNote::Log { .. } => {
                        if p.log.len() >= PANE_LOG_LINES {
                            p.log.pop_front();
                        }
                        p.log
                            .push_back(sanitize::one_line(&note.line(), ERROR_CHARS));
                    }
                }
            }
        }
        EngineEvent::SessionStarted { meta } => app.session = Some(*meta),
        EngineEvent::SessionStopped { reason } => {
            app.session = None;
            app.notice(reason, true);
        }
        EngineEvent::Resuming { meta, notice } => super::resumed::resuming(app, *meta, notice),
        EngineEvent::Resumed { meta, turns } => super::resumed::resumed(app, *meta, turns),
        EngineEvent::RoundInterrupted => {
            if let Some(t) = app.current_turn() {
                t.state = TurnState::Interrupted;
                t.rev += 1;
            }
            app.status.activity = Activity::Idle;
        }
        EngineEvent::ToolFinished { call, outcome, .. } => {
            app.status.activity = Activity::Idle;
            if let Some(p) = app.pane_for_call(&call.id) {
                p.state = finished_state(&outcome);
            }
        }
    }
}

/// The pane's state for a finished call, whichever source ran it.
fn finished_state(r: &ToolResult) -> PaneState {
    let duration = r.duration;
    match &r.status {
        ToolStatus::Ok => PaneState::Done {
            exit_code: 0,
            duration,
        },
        ToolStatus::TimedOut => PaneState::TimedOut { duration },
        failed => PaneState::Failed {
            summary: failed.label(),
            duration,
        },
    }
}

fn stream(app: &mut App, s: StreamEvent) {
    match s {
        // The agent recorded these in the trace the app shares with it.
        StreamEvent::Request(_)
        | StreamEvent::Response { .. }
        | StreamEvent::Marker(_)
        | StreamEvent::Meta(_)
        | StreamEvent::Tokens(_)
        | StreamEvent::Finished { .. } => {}
        StreamEvent::Chunk { .. } => {
            app.status.tokens_this_round += 1;
            if let Activity::Streaming { chunks, .. } = &mut app.status.activity {
                *chunks += 1;
            }
        }
        StreamEvent::Text(t) => {
            super::reasoning_update::answer_started(app);
            if let Some(turn) = app.current_turn() {
                turn.push_text(&t);
            }
        }
        // Never part of the answer: the reasoning cell holds it.
        StreamEvent::Reasoning(t) => super::reasoning_update::reasoning(app, &t),
        StreamEvent::ReasoningWasText => super::reasoning_update::reasoning_was_text(app),
        StreamEvent::ToolCallBegin { index, id, name } => {
            super::reasoning_update::answer_started(app);
            if let Some(t) = app.current_turn() {
                // Kept as received: engine events match panes by the exact id; the pane
                // escapes both when it draws them.
                t.panes.push(ToolPane::new(index, id, name));
                t.rev += 1;
            }
        }
        StreamEvent::ToolCallArgs { index, delta } => {
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.arguments.push_str(&delta);
            }
        }
        StreamEvent::ToolCallEnd { index } => {
            // The core checks the arguments now (`CallChecked` follows), so the pane shows
            // invalid arguments before any dialog opens.
            if let Some(p) = app.current_turn().and_then(|t| t.pane_mut(index)) {
                p.state = PaneState::Pending;
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
            super::models_context::usage(app, &u);
            app.status.usage.prompt_tokens += u.prompt_tokens;
            app.status.usage.completion_tokens += u.completion_tokens;
            app.status.usage.total_tokens += u.total_tokens;
        }
    }
}

/// `/tools`: the core's report, with what only the view knows (tools allowed for the session).
fn tools_report(app: &mut App, report: &ToolsReport) {
    let mcp = &report.mcp_text(|name| app.always_allow.iter().any(|a| a == name));
    let text = if report.tools.is_empty() && !mcp.is_empty() {
        mcp.clone()
    } else if report.tools.is_empty() {
        "No tools are configured.".to_owned()
    } else {
        let mut s = String::from("Tools:");
        for t in &report.tools {
            let always = if app.always_allow.contains(&t.name) {
                ", always allowed this session"
            } else {
                ""
            };
            s.push_str(&format!(
                "\n  {} [{}{always}] {} · {}",
                t.name, t.approval, t.command, t.description
            ));
        }
        if !app.always_allow.is_empty() {
            s.push_str("\n/tools revoke NAME (or all: /tools revoke) asks again.");
        }
        if !mcp.is_empty() {
            s.push('\n');
            s.push_str(mcp);
        }
        s
    };
    app.notice(text, false);
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_core::tools::mcp::{McpHub, McpOrigin};
    use kimi_core::tools::{Failure, ToolSpec, Toolbox};
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    /// A local tool that cannot start and an MCP tool whose server is not there: the pane shows
    /// both the same way, from the result alone.
    #[tokio::test]
    async fn local_and_mcp_failures_show_alike_in_the_pane() {
        let local = ToolSpec::new("gone", vec!["/nonexistent/kimi-tool".to_owned()]);
        let remote = ToolSpec {
            mcp: Some(McpOrigin {
                server: "away".to_owned(),
                tool: "t".to_owned(),
            }),
            ..ToolSpec::new("mcp__away__t", vec![])
        };
        let tb = Toolbox::new(vec![local.clone()])
            .expect("valid")
            .with_mcp(McpHub::new(vec![], Vec::<String>::new()).with_media_dir(None));
        for spec in [&local, &remote] {
            let r = tb
                .run_call(spec, "c", "{}", CancellationToken::new(), None)
                .await;
            let ToolStatus::CouldNotStart(why) = &r.status else {
                panic!("{r:?}")
            };
            assert_eq!(
                finished_state(&r),
                PaneState::Failed {
                    summary: format!("could not start: {why}"),
                    duration: r.duration,
                }
            );
        }
    }

    #[test]
    fn each_ending_has_its_pane_state() {
        let d = Duration::from_millis(5);
        let result = |status| ToolResult::without_output(status, String::new(), d);
        let failed = |summary: &str| PaneState::Failed {
            summary: summary.to_owned(),
            duration: d,
        };
        assert_eq!(
            finished_state(&result(ToolStatus::Ok)),
            PaneState::Done {
                exit_code: 0,
                duration: d
            }
        );
        assert_eq!(
            finished_state(&result(ToolStatus::TimedOut)),
            PaneState::TimedOut { duration: d }
        );
        assert_eq!(
            finished_state(&result(ToolStatus::Failed(Failure::Exit(3)))),
            failed("exit 3")
        );
        assert_eq!(
            finished_state(&result(ToolStatus::Failed(Failure::Signal(9)))),
            failed("killed by signal 9")
        );
        assert_eq!(
            finished_state(&result(ToolStatus::Failed(Failure::ErrorResult))),
            failed("error result")
        );
        assert_eq!(
            finished_state(&result(ToolStatus::Cancelled)),
            failed("cancelled")
        );
    }
}
