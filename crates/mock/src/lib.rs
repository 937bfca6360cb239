//! The scripted mock Kimi server: real HTTP on loopback (axum), shaped like vLLM's OpenAI server,
//! behind `--demo`, `kimi-tui mock-server` and the tests.
//!
//! - `routes`: endpoints, API-key check, body delivery (delay, batching, drop).
//! - `request`: request bodies of the two generation endpoints.
//! - `prompt`: a rendered raw prompt read back into the conversation.
//! - `script`: the scripted model (conversation -> content and calls).
//! - `tokens`: a reply cut into tokens; `deltas`: tokens -> per-event payloads.
//! - `sse`: event and response shapes; `faults`: deliberate failures.

pub mod deltas;
pub mod faults;
pub mod prompt;
pub mod request;
mod routes;
pub mod script;
pub mod sse;
pub mod tokens;

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::cli::MockArgs;

/// How the mock streams and fails. `Default` is a well-behaved server.
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Served by `/v1/models` and echoed in responses.
    pub model: String,
    /// Stream in pieces of this many bytes (moved to char boundaries) instead of one token per
    /// event, so markers get split across events.
    pub chunk_bytes: Option<usize>,
    /// Delay between SSE events.
    pub delay_ms: u64,
    /// Abort the connection after this many bytes of a generation response body.
    pub drop_after_bytes: Option<usize>,
    /// Every generation request answers this status with an OpenAI error body.
    pub fail_status: Option<u16>,
    /// One malformed `data:` line (invalid JSON) mid-stream.
    pub malformed_sse: bool,
    /// An `{"error": ...}` event mid-stream, then the stream ends without `[DONE]`.
    pub error_event: bool,
    /// Chat endpoint: raw marker text in `delta.content` instead of `tool_calls` (vLLM without
    /// `--tool-call-parser`).
    pub markers_in_content: bool,
    /// Require `Authorization: Bearer KEY` on every `/v1` route.
    pub api_key: Option<String>,
    /// Completions endpoint: strip special tokens from the text even when the request says
    /// `skip_special_tokens: false` (a server that ignores the flag).
    pub strip_special_tokens: bool,
    /// A UTF-8 BOM before the first event.
    pub bom: bool,
    /// Content-Type of streamed answers (`text/html`: a login page instead of events; empty:
    /// no header).
    pub content_type: Option<String>,
    /// With `fail_status`: pad the error body to this many bytes.
    pub error_body_bytes: Option<usize>,
    /// Deliver every body at this many bytes per second.
    pub slow_body_bps: Option<u64>,
    /// One first event whose `data:` line is this long.
    pub long_line_bytes: Option<usize>,
    /// Redirect every `/v1` request to this base URL, with `redirect_status`.
    pub redirect_to: Option<String>,
    pub redirect_status: u16,
    /// Answer every user message with these calls, whatever they hold (hostile ids, names,
    /// arguments); tool results are still quoted back as usual.
    pub tool_calls: Vec<ScriptedCall>,
}

/// A tool call the mock emits verbatim (`--tool-call-file`, `--tool-call-id/-name/-args`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The call id as sent (chat `tool_calls[].id`, raw text between the call markers);
    /// `functions.NAME:IDX` when absent.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    /// The argument text, not necessarily JSON.
    pub arguments: String,
}

impl ScriptedCall {
    /// The calls `args` asks for: the file's (one object or an array), then the one built from
    /// `--tool-call-name` and friends.
    pub fn from_args(args: &MockArgs) -> anyhow::Result<Vec<ScriptedCall>> {
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
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            model: "moonshotai/Kimi-K2-Instruct".to_owned(),
            chunk_bytes: None,
            delay_ms: 0,
            drop_after_bytes: None,
            fail_status: None,
            malformed_sse: false,
            error_event: false,
            markers_in_content: false,
            api_key: None,
            strip_special_tokens: false,
            bom: false,
            content_type: None,
            error_body_bytes: None,
            slow_body_bps: None,
            long_line_bytes: None,
            redirect_to: None,
            redirect_status: 307,
            tool_calls: Vec::new(),
        }
    }
}

impl From<&MockArgs> for MockOptions {
    fn from(a: &MockArgs) -> Self {
        MockOptions {
            // `MockArgs::default()` (not parsed by clap) has an empty model.
            model: if a.model.is_empty() {
                MockOptions::default().model
            } else {
                a.model.clone()
            },
            chunk_bytes: a.chunk_bytes,
            delay_ms: a.delay_ms,
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
            // Read by `run_cli` (a file can fail to load; `From` cannot fail).
            tool_calls: Vec::new(),
        }
    }
}

/// A running mock server. Dropping it stops the server task.
pub struct MockServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl MockServer {
    /// Bind 127.0.0.1:port (0 = any free port) and serve in a tokio task.
    pub async fn start(opts: MockOptions, port: u16) -> anyhow::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let app = routes::router(routes::AppState {
            opts: Arc::new(opts),
            requests: requests.clone(),
        });
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = rx.await;
            });
            if let Err(e) = serve.await {
                eprintln!("kimi-tui mock server: {e}");
            }
        });
        Ok(MockServer {
            addr,
            shutdown: Some(tx),
            task: Some(task),
            requests,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every JSON request body received on `/v1/completions` and `/v1/chat/completions`, in order
    /// (bodies rejected by the API-key check are not recorded).
    pub fn requests(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Stop accepting, let running responses finish for up to a second, then stop hard.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(1), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// `kimi-tui mock-server`: serve until Ctrl-C or SIGTERM.
pub fn run_cli(args: &MockArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async {
        let opts = MockOptions {
            tool_calls: ScriptedCall::from_args(args)?,
            ..MockOptions::from(args)
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
