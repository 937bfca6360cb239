//! The interactive app: state, the `update` function, and the event loop that owns the
//! terminal. The terminal reader, the agent (its bounded event channel) and the deadlines the
//! app asks for (`wake`: none while nothing on screen moves with the clock) become `AppEvent`s; `update` changes the state and returns effects (operations for the agent among
//! them); a frame is drawn only when something changed, at most ~60 times
//! a second, so a burst of tokens costs one redraw.

pub(crate) mod answer_edit;
pub(crate) mod attach;
pub(crate) mod background;
pub(crate) mod clipboard;
pub(crate) mod commands;
pub(crate) mod composer;
pub(crate) mod copy;
pub(crate) mod dialog;
pub(crate) mod editor;
pub(crate) mod elicit;
mod error;
pub(crate) mod event;
pub(crate) mod export;
pub(crate) mod frame;
pub(crate) mod history_file;
pub(crate) mod history_search;
pub(crate) mod inline_screen;
pub(crate) mod input;
pub(crate) mod inspector_ab;
pub(crate) mod inspector_tokens;
pub(crate) mod inspector_trace;
mod job_control;
#[cfg(test)]
pub(crate) mod key_reference;
pub(crate) mod keys;
pub(crate) mod layers;
pub(crate) mod mcp_prompts;
pub(crate) mod mcp_view;
pub(crate) mod models;
pub(crate) mod models_context;
pub(crate) mod paste;
pub(crate) mod picker;
mod picker_rewind;
pub(crate) mod picker_sessions;
pub(crate) mod queue;
pub(crate) mod quit_confirm;
pub(crate) mod reasoning;
mod reasoning_update;
mod resume_switch;
mod resumed;
pub(crate) mod retry;
pub(crate) mod rule_form;
pub(crate) mod rules_view;
pub(crate) mod screen;
pub(crate) mod slash;
pub(crate) mod state;
pub(crate) mod status_line;
pub(crate) mod terminal;
pub(crate) mod thinking_cost;
mod toggles;
pub(crate) mod transcript;
pub(crate) mod trust;
pub(crate) mod update;
pub(crate) mod usage_report;
mod view;
pub(crate) mod wake;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::ui;
pub use error::AppError;
use event::{AppEvent, Effect};
use kimi_core::config::{Resolved, ScreenChoice, ThemeChoice};
use kimi_core::engine::StartError;
use kimi_core::engine::{EVENT_QUEUE, Op, SessionHandoff, Supervisor, SupervisorInit, Switchboard};
use kimi_core::session::{Resumed, SessionError, SessionStore};
use kimi_core::tools::Toolbox;
use state::{App, Connection};

/// The shortest gap between frames: about 60 a second, the refresh rate of most displays, so
/// a streamed answer looks smooth while a burst of tokens costs one frame per refresh rather
/// than one per token (more would be drawn but never seen).
const FRAME: Duration = Duration::from_millis(16);
/// How long quitting waits for the session writer to write and fsync what it was sent.
const FINAL_SAVE_WAIT: Duration = Duration::from_secs(10);
/// How long quitting waits for MCP sessions to close.
const MCP_CLOSE_WAIT: Duration = Duration::from_secs(3);

/// Logs, saved inspector dumps and demo tools live here, never on the screen.
pub fn state_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "kimi-tui")
        .map(|d| d.state_dir().unwrap_or(d.data_local_dir()).to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("kimi-tui"))
}

/// The log goes to a file under the state directory: the TUI owns the screen.
pub fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    kimi_core::logging::init(&state_dir())
}

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct Start {
    pub demo: bool,
    /// Continue the latest saved session.
    pub resume: bool,
    /// Continue this saved session (an id or a file path).
    pub session: Option<String>,
    /// `--inline` / `--fullscreen`: the screen, whatever the config says.
    pub screen: Option<ScreenChoice>,
}

/// Run the TUI until the user quits. `setup` resolves the profile before the terminal is taken
/// (so a bad config stops with a message, not a blank screen); it runs on the TUI's runtime and
/// may start servers there (`--demo`): what it returns beside the profile is kept alive until
/// the terminal is restored, then dropped.
pub fn run<S, E, F>(start: Start, setup: F) -> Result<(), AppError>
where
    F: Future<Output = Result<(Resolved, S), E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let _log = init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(AppError::Runtime)?;
    runtime.block_on(async_main(start, setup))
}

async fn async_main<S, E, F>(start: Start, setup: F) -> Result<(), AppError>
where
    F: Future<Output = Result<(Resolved, S), E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let demo = start.demo;
    // Everything that can fail on configuration fails here, before the terminal is taken.
    let (resolved, keep_alive) = setup.await.map_err(|e| AppError::Setup(e.into()))?;
    let origin = resolved.origin();
    let ui_options = resolved.ui;
    let Resolved {
        profile_name,
        profile,
        tools,
        mcp_servers,
        history,
        profiles,
        config_path,
        rules,
        ..
    } = resolved;
    // The core resolves the profile to an endpoint (its key read from the environment here);
    // the app sees names, hosts and the strings to scrub, never the key.
    let board = Switchboard::new(profile_name, profile.clone(), profiles, config_path.clone())?;
    let toolbox = Toolbox::new(tools).map_err(|error| AppError::Tools {
        origin: origin.clone(),
        error,
    })?;
    // The config's rules and the working directory's project rules (its allow rules only
    // once trusted: asked below), shared by the app, the supervisor and its agent.
    let cwd = std::env::current_dir().ok();
    let (rules, ask_trust) =
        trust::start_rules(rules, config_path.clone(), cwd.as_deref(), toolbox.specs())?;
    let toolbox = toolbox.with_rules(rules);
    // MCP servers start in the background: the first frame does not wait for them.
    let toolbox = if mcp_servers.is_empty() {
        toolbox
    } else {
        let hub = kimi_core::tools::mcp::McpHub::new(mcp_servers, toolbox.names());
        hub.start();
        toolbox.with_mcp(hub)
    };
    let view = board.view();
    let connection = Connection {
        profile: view.profile.clone(),
        mode: view.mode,
        model: view.model.clone(),
        host: view.host.clone(),
    };
    let (store, resumed, note) = open_sessions(&start)?;
    // What the agent records into: the session continued, or a new one.
    let recording = store.as_ref().map(|store| match resumed {
        Some(r) => SessionHandoff::resume(store.clone(), r),
        None => SessionHandoff::new_session(store.clone(), board.session()),
    });
    let secrets = board.redactions();
    let mut app = App::new(connection, toolbox.clone(), profile.system_prompt.clone());
    if history {
        // No API key is ever written to the prompt history.
        attach_history(&mut app, secrets.clone());
    }
    app.neutralize_tool_markers = profile.neutralize_markers_in_tool_results;
    app.template = view.template;
    app.thinking = view.thinking;
    // What `/profile` lists, and the gauge's window.
    app.switch.profiles = board.profiles();
    app.switch.config_path = config_path;
    app.switch.can_list = true;
    app.status.context.window = view.context_window;
    app.status.context.window_from_profile = view.context_window.is_some();
    app.secrets = secrets;
    app.layers.inspector.stall_ms = profile.inspector_stall_ms;
    app.logprobs = view.logprobs;
    if let Some(n) = note {
        app.notice(n, false);
    }
    if let Some(dir) = ask_trust {
        trust::ask(&mut app, dir);
    }
    tracing::info!(demo, "starting the TUI");
    // Mouse capture only when asked for (it takes the terminal's own selection away); the
    // theme, asked of the terminal for auto.
    let inline = start.screen.unwrap_or(ui_options.screen) == ScreenChoice::Inline;
    // Inline, the terminal scrolls and selects: mouse capture would take both away.
    app.mouse = ui_options.mouse && !inline;
    app.inline = inline;
    let auto = ui_options.theme == ThemeChoice::Auto;
    let mut guard =
        terminal::TerminalGuard::enter(app.mouse, !inline, auto).map_err(AppError::Terminal)?;
    let size = guard.terminal.size().map_err(AppError::Terminal)?;
    let mut screen = screen::Screen::new(inline, size);
    app.theme = match ui_options.theme {
        ThemeChoice::Dark => ui::theme::Theme::Dark,
        ThemeChoice::Light => ui::theme::Theme::Light,
        ThemeChoice::Auto => guard.detected_theme.unwrap_or_default(),
    };
    let mcp = toolbox.mcp().cloned();
    app.keyboard_enhanced = guard.keyboard_enhanced;
    app.no_color = crate::ui::no_color::requested();
    // The agent owns the conversation from here on; the app keeps its view. Its supervisor
    // starts a new one should its task die.
    let init = SupervisorInit {
        toolbox: toolbox.clone(),
        system_prompt: app.system_prompt.clone(),
        conversation: Vec::new(),
        traces: Vec::new(),
    };
    let mut agent = Supervisor::spawn(board, init, EVENT_QUEUE).map_err(StartError::from)?;
    if let Some(r) = recording {
        agent.send(Op::Record(r));
    }
    let result = event_loop(
        &mut guard.terminal,
        &mut screen,
        &mut app,
        &mut agent,
        toolbox,
        store.as_ref(),
    )
    .await;
    // However the loop ended (quit, a signal, a terminal error), the agent stops: a running
    // turn is cancelled, and its recorder writes what it has, given time to finish.
    agent.send(Op::Shutdown);
    if let Some(hub) = mcp {
        // HTTP sessions are closed (DELETE) while the final save runs.
        hub.close(MCP_CLOSE_WAIT).await;
    }
    // What the agent reported while it stopped (its journal being started, or failing).
    for e in agent.stopped(FINAL_SAVE_WAIT).await {
        update::update(&mut app, AppEvent::Engine(e), Instant::now());
    }
    let theme = ui::markdown::Theme::default();
    if let Err(e) = screen.close(&mut guard.terminal, &mut app, &theme) {
        tracing::error!(error = %e, "cannot write the conversation to the screen on the way out");
    }
    drop(guard);
    drop(keep_alive);
    if let Some(text) = resume_hint(&app) {
        println!("{text}");
    }
    result
}

type OpenedSessions = (Option<SessionStore>, Option<Resumed>, Option<String>);

/// The session store (if there is one), the saved session to continue, if asked for (locked
/// and read, so that a bad one stops the start with its message), and a notice for the user.
fn open_sessions(start: &Start) -> Result<OpenedSessions, SessionError> {
    let store = match SessionStore::open_default() {
        Ok(s) => s,
        Err(e) if start.resume || start.session.is_some() => return Err(e),
        Err(e) => return Ok((None, None, Some(format!("Sessions are not saved: {e}")))),
    };
    let (resumed, note) =
        kimi_core::session::open_for_start(&store, start.resume, start.session.as_deref())?;
    Ok((Some(store), resumed, note))
}

/// The prompt history of earlier runs, recalled with Up and Ctrl-R; this run's prompts are
/// added to the file.
fn attach_history(app: &mut App, secrets: kimi_core::redactor::Redactor) {
    let Some(path) = history_file::default_path() else {
        return;
    };
    let (file, entries, problem) = history_file::HistoryFile::open(path, secrets);
    app.composer.history = entries;
    app.composer.history_file = Some(file);
    if let Some(p) = problem {
        app.notice(kimi_protocol::sanitize::for_terminal(&p).into_owned(), true);
    }
}

/// What is printed on exit when the conversation was saved: its id and the exact command that
/// continues it. Nothing for a run that saved nothing (a demo where nothing was sent).
pub(crate) fn resume_hint(app: &App) -> Option<String> {
    let session = app.session.as_ref()?;
    Some(format!(
        "Session {id} saved. Continue it with:\n  kimi-tui --session {id}",
        id = session.id
    ))
}

async fn event_loop(
    terminal: &mut terminal::Term,
    screen: &mut screen::Screen,
    app: &mut App,
    agent: &mut Supervisor,
    toolbox: Toolbox,
    store: Option<&SessionStore>,
) -> Result<(), AppError> {
    let mut term_events = input::Input::default();
    let mut stop = stop_signals().map_err(AppError::Signals)?;
    let mut job = job_control::signals().map_err(AppError::Signals)?;
    let theme = ui::markdown::Theme::default();
    let mut last_draw = Instant::now() - FRAME;
    // At most ~60 frames a second, and fewer when a frame is expensive (a huge message being
    // re-wrapped): drawing never takes more than about a fifth of the time.
    let mut frame_gap = FRAME;
    // MCP servers report their state changes as notices.
    let mut mcp_changes = toolbox.mcp().map(|h| h.subscribe());
    let mut mcp_seen = mcp_view::Announced::default();
    // Servers' questions come to the dialog from now on (without a reader they are cancelled).
    let mut questions = toolbox.mcp().map(|h| h.questions());
    // A server may have failed before the subscription: what changed until now is seen here.
    mcp_view::announce_changes(app, &mut mcp_seen);
    mcp_view::drain_notices(app);
    // Answers of work done off the loop (MCP prompts and resources) come back here.
    let (bg_tx, mut bg_rx) = mpsc::unbounded_channel::<AppEvent>();
    if app.status.context.window.is_none() {
        // The server may say how long the model's context is (vLLM's max_model_len).
        agent.send(Op::ListModels { show: false });
    }
    loop {
        if app.dirty && last_draw.elapsed() >= frame_gap {
            let started = Instant::now();
            let size = terminal.size().map_err(AppError::Draw)?;
            // A resize not yet reported: `update` must know the size the frame is drawn at.
            if app.screen != (size.width, size.height) {
                let resize = crossterm::event::Event::Resize(size.width, size.height);
                update::update(app, AppEvent::Terminal(resize), Instant::now());
            }
            screen
                .draw(terminal, app, &theme, &mut term_events)
                .map_err(AppError::Draw)?;
            app.frame_drawn();
            app.dirty = false;
            last_draw = Instant::now();
            frame_gap = FRAME.max(started.elapsed() * 5);
        }
        // Sleep until the next frame is due (something changed) or time alone changes the
        // screen; with neither, only an event wakes the loop.
        let frame_due = app.dirty.then(|| last_draw + frame_gap);
        let wake = app.next_wake(Instant::now());
        let deadline = frame_due.into_iter().chain(wake).min();
        let event = tokio::select! {
            e = term_events.next() => match e {
                Some(Ok(e)) => AppEvent::Terminal(e),
                Some(Err(e)) => return Err(AppError::ReadTerminal(e)),
                None => break,
            },
            // `None` only after `Shutdown`; a dead agent is replaced by the supervisor.
            e = agent.recv() => match e {
                Some(e) => AppEvent::Engine(e),
                None => break,
            },
            Some(e) = bg_rx.recv() => e,
            changed = async {
                match mcp_changes.as_mut() {
                    Some(rx) => rx.changed().await,
                    None => std::future::pending().await,
                }
            } => {
                if changed.is_err() {
                    mcp_changes = None;
                }
                // A question the server gave up goes away (the hub reports it as a change).
                elicit::drop_abandoned(app);
                mcp_view::announce_changes(app, &mut mcp_seen);
                mcp_view::drain_notices(app);
                continue;
            }
            ask = async {
                match questions.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => match ask {
                Some(ask) => AppEvent::Elicit(ask),
                None => {
                    questions = None;
                    continue;
                }
            },
            // A closed terminal window (SIGHUP) or a plain `kill`: leave through the final save.
            _ = stop.recv() => break,
            // `kill -TSTP`, then `fg`: the shell gets the terminal while the app is stopped.
            Some(sig) = job.recv() => {
                job_control::handle(sig, terminal, screen, app);
                continue;
            }
            _ = sleep_until(deadline) => {
                if wake.is_some_and(|w| w <= Instant::now()) {
                    AppEvent::Tick
                } else {
                    continue;
                }
            }
        };
        // Each event is stamped as it comes out of the queue: the loop is the only reader of
        // the clock for `update`.
        let effects = update::update(app, event, Instant::now());
        let mut io = TermIo {
            terminal: &mut *terminal,
            screen: &mut *screen,
            events: &mut term_events,
        };
        run_effects(app, effects, agent, store, &mut io, &bg_tx);
        // Drain what else is queued (a burst of tokens) before the next frame. Effects run after
        // each event, against the state that asked for them: a save asked for by the last
        // message of a turn writes it even when `Cleared` follows in the same burst.
        for _ in 0..4096 {
            match agent.try_recv() {
                Some(e) => {
                    let effects = update::update(app, AppEvent::Engine(e), Instant::now());
                    run_effects(app, effects, agent, store, &mut io, &bg_tx);
                }
                None => break,
            }
        }
        if app.should_quit {
            // A running turn is cancelled (the agent is stopped on the way out); what arrived
            // is already in the view.
            break;
        }
    }
    Ok(())
}

/// What the effects that use the terminal itself need: `/copy`, `/mouse`, `Ctrl-G`.
struct TermIo<'a> {
    terminal: &'a mut terminal::Term,
    screen: &'a mut screen::Screen,
    events: &'a mut input::Input,
}

fn run_effects(
    app: &mut App,
    effects: Vec<Effect>,
    agent: &mut Supervisor,
    store: Option<&SessionStore>,
    io: &mut TermIo<'_>,
    background: &mpsc::UnboundedSender<AppEvent>,
) {
    for fx in effects {
        match fx {
            Effect::Agent(op) => {
                if !agent.send(op) {
                    app.notice("The agent has stopped; the operation was not done.", true);
                }
            }
            Effect::SaveTrace(trace) => inspector_trace::save_trace(app, *trace, &state_dir()),
            Effect::SaveRepro(trace) => inspector_trace::save_repro(app, &trace, &state_dir()),
            Effect::Export {
                markdown,
                path,
                replace,
            } => {
                let session = export::snapshot(app);
                let events = background.clone();
                tokio::task::spawn_blocking(move || {
                    let result = match session {
                        Some(s) => export::write(&s, markdown, path, replace),
                        None => Err(export::ExportError::NoSession),
                    };
                    let _ = events.send(AppEvent::Exported(result));
                });
            }
            Effect::Quit => app.should_quit = true,
            // The trust is written and the project's rules read off the loop.
            Effect::TrustProject { dir } => {
                let (toolbox, events) = (app.toolbox.clone(), background.clone());
                tokio::task::spawn_blocking(move || {
                    let result = trust::trust_and_reload(&dir, &toolbox);
                    let _ = events.send(AppEvent::Trusted(result));
                });
            }
            // Getting text out, compose.
            Effect::Copy { text, what } => copied(app, &text, &what),
            Effect::Mouse(on) if on && io.screen.is_inline() => {
                app.mouse = false;
                app.notice(
                    "Mouse capture stays off on the inline screen: the terminal's own scrolling \
                     and selection work on the whole conversation.",
                    false,
                );
            }
            Effect::Mouse(on) => {
                if let Err(e) = terminal::set_mouse(on) {
                    // The status bar must not claim what the terminal did not take.
                    app.mouse = !on;
                    app.notice(format!("Cannot switch mouse capture: {e}"), true);
                }
            }
            Effect::Editor(draft) => {
                let result = edit_in_editor(io, app.mouse, &draft);
                let effects = update::update(app, AppEvent::Edited(result), Instant::now());
                run_effects(app, effects, agent, store, io, background);
            }
            // Going back, history and sessions.
            Effect::History(text) => {
                if let Some(h) = &app.composer.history_file {
                    h.record(&text);
                }
            }
            Effect::ListSessions => match store {
                // Every file's ends are read, or whole for an older journal: never on the
                // loop, which keeps drawing meanwhile.
                Some(s) => {
                    let (store, events) = (s.clone(), background.clone());
                    tokio::task::spawn_blocking(move || {
                        let list = Box::new(store.list());
                        let _ = events.send(AppEvent::SessionsListed(list));
                    });
                }
                None => app.notice("Sessions are not saved in this run: none to list.", true),
            },
            Effect::ResumeSession { id } => match store {
                Some(s) => {
                    let op = Op::Resume {
                        store: s.clone(),
                        id,
                    };
                    if !agent.send(op) {
                        app.notice("The agent has stopped; the session was not loaded.", true);
                    }
                }
                None => app.notice("Sessions are not saved in this run.", true),
            },
            Effect::GetPrompt {
                server,
                prompt,
                arguments,
            } => {
                let Some(hub) = app.toolbox.mcp().cloned() else {
                    app.notice("No MCP servers are configured.", true);
                    continue;
                };
                let events = background.clone();
                tokio::spawn(async move {
                    let result = hub.get_prompt(&server, &prompt, arguments).await;
                    let _ = events.send(AppEvent::PromptGot {
                        server,
                        prompt,
                        result,
                    });
                });
            }
            Effect::ReadResources { message, refs } => {
                let Some(hub) = app.toolbox.mcp().cloned() else {
                    app.notice("No MCP servers are configured.", true);
                    continue;
                };
                let events = background.clone();
                tokio::spawn(async move {
                    let mut texts = Vec::new();
                    let mut result = Ok(());
                    for (server, uri) in refs {
                        match hub.read_resource(&server, &uri).await {
                            Ok(text) => texts.push((server, uri, text)),
                            Err(e) => {
                                result = Err(format!("cannot read @{server}:{uri}: {e}"));
                                break;
                            }
                        }
                    }
                    let result = result.map(|()| texts);
                    let _ = events.send(AppEvent::ResourcesRead { message, result });
                });
            }
        }
    }
}

/// `/copy`: the OSC 52 sequence written, and said so.
fn copied(app: &mut App, text: &str, what: &str) {
    match clipboard::write(text) {
        Ok(()) => {
            let tmux = if clipboard::in_tmux() {
                " (in tmux: with `set -g set-clipboard on` or `allow-passthrough on`)"
            } else {
                ""
            };
            app.notice(
                format!(
                    "Copied {what}: {} chars, via OSC 52{tmux}.",
                    clipboard::thousands(text.chars().count())
                ),
                false,
            );
        }
        Err(e) => app.notice(format!("Cannot copy {what}: {e}"), true),
    }
}

/// `Ctrl-G`: the input reader stopped (it would steal the editor's keys), the screen handed
/// over, the editor run, all of it taken back whatever happened.
fn edit_in_editor(
    io: &mut TermIo<'_>,
    mouse: bool,
    draft: &str,
) -> Result<String, editor::EditorError> {
    // The input reader lets go of the terminal: the editor reads it.
    io.events.stop();
    let result = match io.screen.hand_over().and_then(|()| terminal::suspend()) {
        Ok(()) => editor::run(draft),
        Err(e) => Err(editor::EditorError::Suspend(e.to_string())),
    };
    let taken = terminal::resume(mouse, !io.screen.is_inline(), true)
        .and_then(|()| io.screen.taken_back(io.terminal));
    if let Err(e) = taken {
        tracing::error!(error = %e, "cannot take the terminal back from the editor");
    }
    result
}

/// Sleeps until `deadline`; without one, forever (another arm of the loop's `select!` wins).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// SIGHUP and SIGTERM as one stream of "stop now".
fn stop_signals() -> std::io::Result<mpsc::Receiver<()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, rx) = mpsc::channel(1);
    for kind in [SignalKind::hangup(), SignalKind::terminate()] {
        let mut sig = signal(kind)?;
        let tx = tx.clone();
        tokio::spawn(async move {
            while sig.recv().await.is_some() {
                let _ = tx.try_send(());
            }
        });
    }
    Ok(rx)
}
