//! The interactive app: state, the `update` function, and the event loop that owns the
//! terminal. Producers (terminal reader, agent task, ticker) send `AppEvent`s into one channel;
//! `update` changes the state; a frame is drawn only when something changed, at most ~60 times
//! a second, so a burst of tokens costs one redraw.

pub mod commands;
pub mod demo;
pub mod dialog;
pub mod event;
mod journal_sync;
pub mod partial;
pub mod paste;
mod resume;
pub mod saved;
pub mod state;
pub mod terminal;
pub mod update;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::backend::Backend;
use crate::cli::ConnectArgs;
use crate::config::{self, Resolved};
use crate::engine::{Agent, ApprovalRequest, Approver, Decision};
use crate::session::{Session, SessionStore};
use crate::tools::Toolbox;
use crate::ui;
use event::{AppEvent, Effect};
use state::{App, Connection};

const FRAME: Duration = Duration::from_millis(16);
/// Engine events buffered between the agent task and the screen.
const EVENT_QUEUE: usize = 1024;
/// How long quitting waits for the session writer to write and fsync what it was sent.
const FINAL_SAVE_WAIT: Duration = Duration::from_secs(10);

/// Logs, saved inspector dumps and demo tools live here, never on the screen.
pub fn state_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "kimi-tui")
        .map(|d| d.state_dir().unwrap_or(d.data_local_dir()).to_path_buf())
        .unwrap_or_else(|| std::env::temp_dir().join("kimi-tui"))
}

fn init_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    // Opened here rather than by tracing-appender, which would create it with the umask's mode.
    let file = crate::private_fs::append(&state_dir().join("kimi-tui.log")).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(file);
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

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct Start {
    pub demo: bool,
    /// Continue the latest saved session.
    pub resume: bool,
    /// Continue this saved session (an id or a file path).
    pub session: Option<String>,
}

/// Run the TUI until the user quits.
pub fn run(connect: &ConnectArgs, start: Start) -> Result<()> {
    let _log = init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async_main(connect, start))
}

async fn async_main(connect: &ConnectArgs, start: Start) -> Result<()> {
    let demo = start.demo;
    // Everything that can fail on configuration fails here, before the terminal is taken.
    let (demo_server, resolved) = if demo {
        let (server, resolved) = demo::start(connect.mode).await?;
        (Some(server), resolved)
    } else {
        (None, config::resolve(&connect.overrides())?)
    };
    let Resolved {
        profile_name,
        profile,
        tools,
        ..
    } = resolved;
    let endpoint = profile
        .endpoint()
        .map_err(|e| anyhow::anyhow!("profile `{profile_name}`: {e}"))?;
    let toolbox = Toolbox::new(tools).map_err(anyhow::Error::msg)?;
    let host = reqwest::Url::parse(&endpoint.base_url)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| {
                format!(
                    "{h}{}",
                    u.port().map(|p| format!(":{p}")).unwrap_or_default()
                )
            })
        })
        .unwrap_or_else(|| endpoint.base_url.clone());
    let connection = Connection {
        profile: profile_name,
        mode: endpoint.mode,
        model: endpoint.model.clone(),
        host,
    };
    let (store, resumed, note) = resume::open_sessions(&start)?;
    let session = Session::for_endpoint(&connection.profile, &endpoint);
    let backend = Backend::new(endpoint)?;
    let mut app = App::new(connection, toolbox.clone(), profile.system_prompt.clone());
    app.neutralize_tool_markers = profile.neutralize_markers_in_tool_results;
    match resumed {
        Some(r) => {
            saved::restore(&mut app, r.session);
            app.lock = Some(r.lock);
            if r.forked {
                // A new id: its first write must create the file, never replace one.
                app.saved = None;
            } else if !r.journal {
                saved::continue_old_file(&mut app);
            }
        }
        None => app.session = store.as_ref().map(|_| session),
    }
    if let Some(n) = note {
        app.notice(n, false);
    }
    tracing::info!(demo, "starting the TUI");
    let mut guard = terminal::TerminalGuard::enter().context("cannot take over the terminal")?;
    let result = event_loop(
        &mut guard.terminal,
        &mut app,
        backend,
        toolbox,
        profile.max_rounds,
        store.as_ref(),
    )
    .await;
    // However the loop ended (quit, a signal, a terminal error), what has streamed since the
    // last timed save is written too, and the writer is given time to finish.
    saved::save(&mut app, store.as_ref());
    if !saved::flush(&mut app, FINAL_SAVE_WAIT) {
        tracing::error!("the session writer did not finish within {FINAL_SAVE_WAIT:?}");
    }
    drop(guard);
    if let Some(server) = demo_server {
        server.shutdown().await;
    }
    result
}

/// Asks the user through the app: sends the request into the event channel and waits.
struct ChannelApprover {
    tx: mpsc::Sender<AppEvent>,
}

impl Approver for ChannelApprover {
    async fn decide(&mut self, request: ApprovalRequest) -> Decision {
        let (reply, answer) = oneshot::channel();
        let request = Box::new(request);
        if self
            .tx
            .send(AppEvent::Approval { request, reply })
            .await
            .is_err()
        {
            return Decision::Deny { reason: None };
        }
        answer.await.unwrap_or(Decision::Deny { reason: None })
    }
}

/// The running turn.
struct Running {
    cancel: CancellationToken,
}

async fn event_loop(
    terminal: &mut terminal::Term,
    app: &mut App,
    mut backend: Backend,
    toolbox: Toolbox,
    max_rounds: u32,
    store: Option<&SessionStore>,
) -> Result<()> {
    // Bounded: when the screen falls behind a fast stream, the stream waits instead of
    // queueing every token in memory.
    let (tx, mut rx) = mpsc::channel::<AppEvent>(EVENT_QUEUE);
    let mut term_events = crossterm::event::EventStream::new();
    let mut stop = stop_signals().context("cannot watch for SIGHUP and SIGTERM")?;
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let theme = ui::markdown::Theme::default();
    let mut running: Option<Running> = None;
    let mut last_draw = Instant::now() - FRAME;
    // At most ~60 frames a second, and fewer when a frame is expensive (a huge message being
    // re-wrapped): drawing never takes more than about a fifth of the time.
    let mut frame_gap = FRAME;
    loop {
        if app.dirty && last_draw.elapsed() >= frame_gap {
            let started = Instant::now();
            let size = terminal.size()?;
            // A resize not yet reported: `update` must know the size the frame is drawn at.
            if app.screen != (size.width, size.height) {
                let resize = crossterm::event::Event::Resize(size.width, size.height);
                update::update(app, AppEvent::Terminal(resize));
            }
            let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
            ui::prepare(app, area, &theme);
            terminal.draw(|f| ui::draw(f, app))?;
            app.frame_drawn();
            app.dirty = false;
            last_draw = Instant::now();
            frame_gap = FRAME.max(started.elapsed() * 5);
        }
        let wait = if app.dirty {
            frame_gap.saturating_sub(last_draw.elapsed())
        } else {
            Duration::from_secs(3600)
        };
        let event = tokio::select! {
            e = term_events.next() => match e {
                Some(Ok(e)) => AppEvent::Terminal(e),
                Some(Err(e)) => return Err(e).context("reading the terminal"),
                None => break,
            },
            Some(e) = rx.recv() => e,
            _ = ticker.tick() => AppEvent::Tick,
            // A closed terminal window (SIGHUP) or a plain `kill`: leave through the final save.
            _ = stop.recv() => break,
            _ = tokio::time::sleep(wait) => continue,
        };
        let mut effects = update::update(app, event);
        // Drain what else is queued (a burst of tokens) before the next frame.
        for _ in 0..4096 {
            match rx.try_recv() {
                Ok(e) => effects.extend(update::update(app, e)),
                Err(_) => break,
            }
        }
        for fx in effects {
            match fx {
                Effect::StartTurn => {
                    let cancel = CancellationToken::new();
                    running = Some(Running {
                        cancel: cancel.clone(),
                    });
                    spawn_turn(app, &backend, &toolbox, max_rounds, cancel, tx.clone());
                }
                Effect::Cancel => {
                    if let Some(r) = &running {
                        r.cancel.cancel();
                    }
                }
                Effect::SwitchMode(mode) => {
                    let mut ep = backend.endpoint().clone();
                    ep.mode = mode;
                    match Backend::new(ep) {
                        Ok(b) => backend = b,
                        Err(e) => app.notice(format!("cannot switch mode: {e}"), true),
                    }
                }
                Effect::SaveInspector(text) => save_inspector(app, &text),
                Effect::SaveSession => saved::save(app, store),
                Effect::Export { markdown, path } => saved::export_to(app, markdown, &path),
                Effect::Quit => app.should_quit = true,
            }
        }
        // A failure of the session writer becomes a notice.
        saved::poll(app);
        if !app.busy {
            running = None;
        }
        if app.should_quit {
            if let Some(r) = running.take() {
                r.cancel.cancel();
            }
            break;
        }
    }
    Ok(())
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

fn spawn_turn(
    app: &App,
    backend: &Backend,
    toolbox: &Toolbox,
    max_rounds: u32,
    cancel: CancellationToken,
    tx: mpsc::Sender<AppEvent>,
) {
    let mut conversation = app.conversation.clone();
    let backend = backend.clone();
    let toolbox = toolbox.clone();
    let events = tx.clone();
    let turn = async move {
        let agent = Agent {
            backend: &backend,
            toolbox: &toolbox,
            max_rounds,
        };
        let mut approver = ChannelApprover { tx: events.clone() };
        let outcome = agent
            .run_turn(&mut conversation, &mut approver, &cancel, &mut |e| {
                send_blocking(&events, AppEvent::Engine(e))
            })
            .await;
        AppEvent::TurnDone {
            conversation,
            outcome: Box::new(outcome),
        }
    };
    tokio::spawn(watch_turn(turn, tx));
}

/// Run the turn in its own task and always report its end: a panic inside it (a bug) ends the
/// turn as failed with a message instead of leaving the app "streaming" forever.
async fn watch_turn<F>(turn: F, tx: mpsc::Sender<AppEvent>)
where
    F: std::future::Future<Output = AppEvent> + Send + 'static,
{
    let done = match tokio::spawn(turn).await {
        Ok(done) => done,
        Err(e) => AppEvent::TurnPanicked {
            message: panic_message(e),
        },
    };
    let _ = tx.send(done).await;
}

fn panic_message(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return "the turn's task was stopped".to_owned();
    }
    let payload = e.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Send from the engine's synchronous callback; when the queue is full, wait for the screen
/// (off the async worker, which `block_in_place` allows) rather than grow the queue.
fn send_blocking(tx: &mpsc::Sender<AppEvent>, event: AppEvent) {
    match tx.try_send(event) {
        Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
        Err(mpsc::error::TrySendError::Full(event)) => {
            tokio::task::block_in_place(|| {
                let _ = tx.blocking_send(event);
            });
        }
    }
}

fn save_inspector(app: &mut App, text: &str) {
    let dir = state_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // The raw stream can hold anything the user or the model wrote: private. Two dumps in the
    // same second get two files: an earlier one is never replaced.
    let result = crate::private_fs::create_numbered(
        &dir,
        &format!("inspector-{stamp}"),
        "txt",
        text.as_bytes(),
    );
    app.inspector.message = Some(match result {
        Ok(path) => format!("saved to {}", path.display()),
        Err(e) => format!("cannot save in {}: {e}", dir.display()),
    });
    app.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_in_the_turn_task_is_reported_as_a_failed_turn() {
        let (tx, mut rx) = mpsc::channel(4);
        let turn = async {
            let v: Vec<u8> = Vec::new();
            // A bug of the kind eventsource-stream 0.2.3 had on a BOM.
            AppEvent::TurnPanicked {
                message: format!("{}", v[usize::from(v.is_empty())]),
            }
        };
        watch_turn(turn, tx).await;
        match rx.recv().await {
            Some(AppEvent::TurnPanicked { message }) => {
                assert!(message.contains("index out of bounds"), "{message}");
            }
            other => panic!("expected a failed turn, got {other:?}"),
        }
        let (tx, mut rx) = mpsc::channel(4);
        watch_turn(async { AppEvent::Tick }, tx).await;
        assert!(matches!(rx.recv().await, Some(AppEvent::Tick)));
    }
}
