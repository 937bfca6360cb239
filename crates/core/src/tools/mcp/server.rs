//! Starting one MCP server: spawn it (stdio, in its own process group, stderr kept, the first
//! line of its stdout kept to explain a failed start) or open its Streamable HTTP endpoint,
//! then initialize. Errors are said in words: which server, what failed, what to change.

use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

use super::client::Handler;
use super::config::{McpServerConfig, Transport};
use crate::tools::env::child_env;
use crate::tools::runner::{STDERR_TAIL_BYTES, Tail};
use crate::tools::sandbox::{Confinement, SandboxError};
use crate::tools::spec::ToolSpec;

/// The last 2 KiB of a server's stderr, shared with the task that reads it.
pub(crate) type StderrTail = Arc<Mutex<Tail>>;

pub(crate) fn new_tail() -> StderrTail {
    Arc::new(Mutex::new(Tail::new(STDERR_TAIL_BYTES)))
}

pub(crate) fn tail_text(tail: &StderrTail) -> String {
    tail.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .finish()
}

/// A server that answered `initialize`.
pub(crate) struct Connected {
    pub service: RunningService<RoleClient, Handler>,
    /// The stdio server's process group (its pid), killed on stop.
    pub pgid: Option<i32>,
    /// The stdio server's process, killed when dropped.
    pub child: Option<tokio::process::Child>,
    /// A sandboxed stdio server's private TMPDIR, removed when the server is done with.
    pub _sandbox: Option<Confinement>,
}

/// Kill a server's whole process group (what `npx` started too). Never with 0 or a negative id.
pub(crate) fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|&p| p > 0) {
        // SAFETY: killpg only sends a signal; a stale group id at worst gets ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// Start `config`'s server and initialize it within `startup_timeout_secs`. The error is one
/// line for the user (the stderr tail is kept apart, in `stderr`).
pub(crate) async fn connect(
    config: &McpServerConfig,
    handler: Handler,
    stderr: &StderrTail,
    need_tasks: &NeedTasks,
) -> Result<Connected, McpStartError> {
    let timeout = Duration::from_secs(config.startup_timeout_secs);
    match config.transport() {
        Some(Transport::Stdio(argv)) => {
            let (child, stdout, first_line, sandbox) = spawn(config, argv, stderr, need_tasks)?;
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .filter(|&id| id > 0);
            let mut child = child;
            let Some(stdin) = child.stdin.take() else {
                kill_group(pgid);
                return Err(McpStartError::NoStdin);
            };
            let outcome = tokio::time::timeout(timeout, handler.serve((stdout, stdin))).await;
            let failed = |why: McpStartError| {
                kill_group(pgid);
                Err(with_first_line(why, &first_line))
            };
            match outcome {
                Ok(Ok(service)) => Ok(Connected {
                    service,
                    pgid,
                    child: Some(child),
                    _sandbox: sandbox,
                }),
                Ok(Err(e)) => failed(McpStartError::Initialize(init_error(&e, config))),
                Err(_) => failed(McpStartError::NotStarted {
                    secs: config.startup_timeout_secs,
                }),
            }
        }
        Some(Transport::Http(url)) => {
            let transport = http_transport(config, url)?;
            match tokio::time::timeout(timeout, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Connected {
                    service,
                    pgid: None,
                    child: None,
                    _sandbox: None,
                }),
                Ok(Err(e)) => Err(McpStartError::Initialize(init_error(&e, config))),
                Err(_) => Err(McpStartError::NoAnswer {
                    secs: config.startup_timeout_secs,
                }),
            }
        }
        None => Err(McpStartError::NoTransport),
    }
}

/// Why an MCP server did not start, in one line for the user (its stderr is kept apart).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum McpStartError {
    #[error("neither command nor url is set")]
    NoTransport,
    #[error("the command is empty")]
    EmptyCommand,
    /// `why` is the OS's message without Rust's " (os error N)".
    #[error("could not start `{program}`: {why}")]
    Spawn { program: String, why: String },
    #[error("could not open the server's stdin")]
    NoStdin,
    #[error("could not open the server's stdout")]
    NoStdout,
    /// Its sandbox cannot be enforced here (or set up): it was not started without it.
    #[error("{0}")]
    Sandbox(String),
    #[error("the environment variable {var} (bearer_token_env) is not set")]
    TokenNotSet { var: String },
    /// The HTTP client could not be built.
    #[error("{0}")]
    Http(String),
    /// The `initialize` exchange failed: the cause in words.
    #[error("initialize failed: {0}")]
    Initialize(String),
    /// A stdio server was not initialized within `startup_timeout_secs`.
    #[error("did not start within {secs} s (startup_timeout_secs)")]
    NotStarted { secs: u64 },
    /// An HTTP server did not answer `initialize` within `startup_timeout_secs`.
    #[error("did not answer initialize within {secs} s (startup_timeout_secs)")]
    NoAnswer { secs: u64 },
    /// A stdio server failed after printing `line` (not JSON-RPC) on stdout: likely why.
    #[error(
        "{error}; the server printed non-JSON on stdout at startup (MCP stdio servers must print only JSON-RPC there): {line:?}"
    )]
    PrintedNonJson {
        error: Box<McpStartError>,
        line: String,
    },
}

/// A failed `initialize` in words: an authentication failure names the variable that holds
/// the token, everything else keeps its whole cause chain on one line.
fn init_error(e: &ClientInitializeError, config: &McpServerConfig) -> String {
    if e.auth_challenge().is_some() {
        return match &config.bearer_token_env {
            Some(var) => format!(
                "authentication failed (HTTP 401/403): the server refused the token in the environment variable {var} (bearer_token_env)"
            ),
            None => "authentication required (HTTP 401/403): set bearer_token_env to the environment variable that holds the server's token".to_owned(),
        };
    }
    kimi_client::log::chain(e)
}

/// Say what a stdio server printed instead of JSON-RPC, when that is why it failed.
fn with_first_line(why: McpStartError, first: &FirstLine) -> McpStartError {
    let line = first.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let line = String::from_utf8_lossy(&line);
    let line = line.trim();
    if line.is_empty() || serde_json::from_str::<serde_json::Value>(line).is_ok() {
        return why;
    }
    McpStartError::PrintedNonJson {
        error: Box::new(why),
        line: kimi_protocol::sanitize::one_line(line, 200),
    }
}

/// The first line a stdio server printed (up to 200 bytes).
type FirstLine = Arc<Mutex<Vec<u8>>>;

/// Tools a server listed with `execution.taskSupport = "required"`: the SDK drops that field,
/// so it is read from the bytes as they pass.
pub(crate) type NeedTasks = Arc<Mutex<std::collections::BTreeSet<String>>>;

/// A line longer than this is not looked into for `taskSupport` (a tool list is far smaller).
const MAX_SCANNED_LINE: usize = 4 << 20;

/// The server's stdout, with the first line copied aside and tool lists read for tools that
/// need tasks, as the bytes pass to the SDK.
struct StdoutTee<R> {
    inner: R,
    first: FirstLine,
    first_done: bool,
    line: Vec<u8>,
    /// The current line outgrew [`MAX_SCANNED_LINE`]: skipped up to its end.
    skipping: bool,
    need_tasks: NeedTasks,
}

impl<R> StdoutTee<R> {
    fn new(inner: R, first: FirstLine, need_tasks: NeedTasks) -> StdoutTee<R> {
        StdoutTee {
            inner,
            first,
            first_done: false,
            line: Vec::new(),
            skipping: false,
            need_tasks,
        }
    }

    fn first_line(&mut self, new: &[u8], eof: bool) {
        let end = memchr::memchr(b'\n', new);
        let take = &new[..end.unwrap_or(new.len())];
        let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        let room = 200usize.saturating_sub(first.len());
        first.extend_from_slice(&take[..take.len().min(room)]);
        if end.is_some() || first.len() >= 200 || eof {
            self.first_done = true;
        }
    }

    fn scan(&mut self, mut new: &[u8]) {
        while !new.is_empty() {
            let end = memchr::memchr(b'\n', new);
            let part = &new[..end.unwrap_or(new.len())];
            if !self.skipping {
                if self.line.len() + part.len() > MAX_SCANNED_LINE {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            let Some(end) = end else { return };
            if !self.skipping {
                let line = std::mem::take(&mut self.line);
                note_task_tools(&line, &self.need_tasks);
            }
            self.skipping = false;
            new = &new[end + 1..];
        }
    }
}

/// Record the tools of a `tools/list` result line that require tasks.
fn note_task_tools(line: &[u8], need_tasks: &NeedTasks) {
    if memchr::memmem::find(line, b"taskSupport").is_none() {
        return;
    }
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
        return;
    };
    let Some(tools) = v.pointer("/result/tools").and_then(|t| t.as_array()) else {
        return;
    };
    let mut set = need_tasks.lock().unwrap_or_else(PoisonError::into_inner);
    for t in tools {
        let required =
            t.pointer("/execution/taskSupport").and_then(|s| s.as_str()) == Some("required");
        if let (true, Some(name)) = (required, t.get("name").and_then(|n| n.as_str())) {
            set.insert(name.to_owned());
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StdoutTee<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let new = &buf.filled()[before..];
        let eof = new.is_empty() && poll.is_ready();
        if !self.first_done {
            self.first_line(new, eof);
        }
        self.scan(new);
        poll
    }
}

/// Spawn a stdio server: argv without a shell, the local tools' environment rules (no
/// credential variables), its own process group, stderr read into `stderr`.
fn spawn(
    config: &McpServerConfig,
    argv: &[String],
    stderr: &StderrTail,
    need_tasks: &NeedTasks,
) -> Result<
    (
        tokio::process::Child,
        StdoutTee<tokio::process::ChildStdout>,
        FirstLine,
        Option<Confinement>,
    ),
    McpStartError,
> {
    let Some(program) = argv.first().filter(|p| !p.is_empty()) else {
        return Err(McpStartError::EmptyCommand);
    };
    let env_spec = ToolSpec {
        env: config.env.clone(),
        hidden_env: config.hidden_env.clone(),
        ..ToolSpec::new(format!("mcp__{}", config.name), Vec::new())
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(child_env(&env_spec, "", std::env::vars_os()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // A workspace-write server may write under the directory it starts in: ours.
    let workspace = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let mut sandbox = Confinement::prepare(config.sandbox_policy(), &workspace)
        .map_err(|e: SandboxError| McpStartError::Sandbox(e.to_string()))?;
    if let Some(sandbox) = sandbox.as_mut() {
        sandbox.apply(&mut cmd);
    }
    let mut child = cmd.spawn().map_err(|e| McpStartError::Spawn {
        program: program.clone(),
        why: os_message(&e),
    })?;
    let Some(stdout) = child.stdout.take() else {
        return Err(McpStartError::NoStdout);
    };
    if let Some(mut err) = child.stderr.take() {
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(&buf[..n]);
            }
        });
    }
    let first: FirstLine = Arc::default();
    let tee = StdoutTee::new(stdout, first.clone(), need_tasks.clone());
    Ok((child, tee, first, sandbox))
}

fn http_transport(
    config: &McpServerConfig,
    url: &str,
) -> Result<impl rmcp::transport::Transport<rmcp::RoleClient> + use<>, McpStartError> {
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    // An expired session (HTTP 404) is initialized again, transparently.
    transport_config.reinit_on_expired_session = true;
    if let Some(var) = &config.bearer_token_env {
        match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => {
                transport_config = transport_config.auth_header(token.trim().to_owned());
            }
            _ => {
                return Err(McpStartError::TokenNotSet { var: var.clone() });
            }
        }
    }
    // HTTP is the client crate's: the same TLS provider and redirect policy as the model's.
    let client = kimi_client::http_client(Duration::from_secs(config.startup_timeout_secs))
        .map_err(|e| McpStartError::Http(e.to_string()))?;
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}

/// "No such file or directory", without Rust's " (os error 2)".
fn os_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_line_is_kept_as_it_passes() {
        let first: FirstLine = Arc::default();
        let mut tee = StdoutTee::new(
            &b"Starting server v1.2...\n{\"jsonrpc\":\"2.0\"}\n"[..],
            first.clone(),
            NeedTasks::default(),
        );
        let mut all = Vec::new();
        tee.read_to_end(&mut all).await.expect("read");
        assert_eq!(all.len(), 42, "everything passes through");
        let why = with_first_line(
            McpStartError::Initialize("connection closed".into()),
            &first,
        );
        assert_eq!(
            why.to_string(),
            "initialize failed: connection closed; the server printed non-JSON on stdout at startup (MCP stdio servers must print only JSON-RPC there): \"Starting server v1.2...\""
        );
        let json: FirstLine = Arc::new(Mutex::new(b"{\"jsonrpc\":\"2.0\"}".to_vec()));
        let x = McpStartError::Initialize("x".into());
        assert_eq!(with_first_line(x.clone(), &json), x);
    }

    #[tokio::test]
    async fn a_server_whose_sandbox_cannot_be_enforced_is_not_started() {
        use crate::tools::sandbox::{SandboxMode, Support, pretend};
        let dir = tempfile::tempdir().expect("tmp");
        let marker = dir.path().join("ran");
        let argv = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            format!("touch '{}'", marker.display()),
        ];
        let config = McpServerConfig {
            sandbox: SandboxMode::ReadOnly,
            ..McpServerConfig::stdio("s", argv.clone())
        };
        let _fake = pretend(Support { landlock_abi: 0 });
        let Err(e) = spawn(&config, &argv, &new_tail(), &NeedTasks::default()) else {
            panic!("started without its sandbox");
        };
        assert_eq!(
            e.to_string(),
            "sandbox = \"read-only\" needs Landlock ABI 3 or later (Linux 6.2+) and this kernel has no Landlock; not run without its sandbox"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn tools_that_need_tasks_are_seen_at_any_read_size() {
        let list = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"research","execution":{"taskSupport":"required"},"inputSchema":{}},{"name":"b","execution":{"taskSupport":"optional"},"inputSchema":{}}]}}"#;
        let mut input = b"{\"jsonrpc\":\"2.0\"}\n".to_vec();
        input.extend_from_slice(list);
        input.push(b'\n');
        for size in [1, 7, 64, 4096] {
            let need = NeedTasks::default();
            let mut tee = StdoutTee::new(&input[..], FirstLine::default(), need.clone());
            let mut out = Vec::new();
            let mut buf = vec![0u8; size];
            loop {
                let n = tee.read(&mut buf).await.expect("read");
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            assert_eq!(out, input);
            let set = need.lock().expect("lock").clone();
            assert_eq!(
                set.into_iter().collect::<Vec<_>>(),
                ["research"],
                "size {size}"
            );
        }
    }
}
