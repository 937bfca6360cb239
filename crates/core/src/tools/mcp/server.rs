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
) -> Result<Connected, String> {
    let timeout = Duration::from_secs(config.startup_timeout_secs);
    match config.transport() {
        Some(Transport::Stdio(argv)) => {
            let (child, stdout, first_line) = spawn(config, argv, stderr)?;
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .filter(|&id| id > 0);
            let mut child = child;
            let Some(stdin) = child.stdin.take() else {
                kill_group(pgid);
                return Err("could not open the server's stdin".to_owned());
            };
            let outcome = tokio::time::timeout(timeout, handler.serve((stdout, stdin))).await;
            let failed = |why: String| {
                kill_group(pgid);
                Err(with_first_line(why, &first_line))
            };
            match outcome {
                Ok(Ok(service)) => Ok(Connected {
                    service,
                    pgid,
                    child: Some(child),
                }),
                Ok(Err(e)) => failed(format!("initialize failed: {}", init_error(&e, config))),
                Err(_) => failed(format!(
                    "did not start within {} s (startup_timeout_secs)",
                    config.startup_timeout_secs
                )),
            }
        }
        Some(Transport::Http(url)) => {
            let transport = http_transport(config, url)?;
            match tokio::time::timeout(timeout, handler.serve(transport)).await {
                Ok(Ok(service)) => Ok(Connected {
                    service,
                    pgid: None,
                    child: None,
                }),
                Ok(Err(e)) => Err(format!("initialize failed: {}", init_error(&e, config))),
                Err(_) => Err(format!(
                    "did not answer initialize within {} s (startup_timeout_secs)",
                    config.startup_timeout_secs
                )),
            }
        }
        None => Err("neither command nor url is set".to_owned()),
    }
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
    cause_chain(e)
}

/// An error and each of its sources, `: `-joined, repeats dropped.
pub(crate) fn cause_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// Say what a stdio server printed instead of JSON-RPC, when that is why it failed.
fn with_first_line(why: String, first: &FirstLine) -> String {
    let line = first.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let line = String::from_utf8_lossy(&line);
    let line = line.trim();
    if line.is_empty() || serde_json::from_str::<serde_json::Value>(line).is_ok() {
        return why;
    }
    format!(
        "{why}; the server printed non-JSON on stdout at startup (MCP stdio servers must print only JSON-RPC there): {:?}",
        kimi_protocol::sanitize::one_line(line, 200)
    )
}

/// The first line a stdio server printed (up to 200 bytes).
type FirstLine = Arc<Mutex<Vec<u8>>>;

/// The server's stdout, with the first line copied aside as it passes.
struct FirstLineTee<R> {
    inner: R,
    first: FirstLine,
    done: bool,
}

impl<R: AsyncRead + Unpin> AsyncRead for FirstLineTee<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if !self.done {
            let new = &buf.filled()[before..];
            let end = new.iter().position(|&b| b == b'\n');
            let take = &new[..end.unwrap_or(new.len())];
            let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
            let room = 200usize.saturating_sub(first.len());
            first.extend_from_slice(&take[..take.len().min(room)]);
            let full = first.len() >= 200;
            drop(first);
            if end.is_some() || full || (new.is_empty() && poll.is_ready()) {
                self.done = true;
            }
        }
        poll
    }
}

/// Spawn a stdio server: argv without a shell, the local tools' environment rules (no
/// credential variables), its own process group, stderr read into `stderr`.
fn spawn(
    config: &McpServerConfig,
    argv: &[String],
    stderr: &StderrTail,
) -> Result<
    (
        tokio::process::Child,
        FirstLineTee<tokio::process::ChildStdout>,
        FirstLine,
    ),
    String,
> {
    let Some(program) = argv.first().filter(|p| !p.is_empty()) else {
        return Err("the command is empty".to_owned());
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
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("could not start `{program}`: {}", os_message(&e)))?;
    let Some(stdout) = child.stdout.take() else {
        return Err("could not open the server's stdout".to_owned());
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
    let tee = FirstLineTee {
        inner: stdout,
        first: first.clone(),
        done: false,
    };
    Ok((child, tee, first))
}

fn http_transport(
    config: &McpServerConfig,
    url: &str,
) -> Result<impl rmcp::transport::Transport<rmcp::RoleClient> + use<>, String> {
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    // An expired session (HTTP 404) is initialized again, transparently.
    transport_config.reinit_on_expired_session = true;
    if let Some(var) = &config.bearer_token_env {
        match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => {
                transport_config = transport_config.auth_header(token.trim().to_owned());
            }
            _ => {
                return Err(format!(
                    "the environment variable {var} (bearer_token_env) is not set"
                ));
            }
        }
    }
    // HTTP is the client crate's: the same TLS provider and redirect policy as the model's.
    let client = kimi_client::http_client(Duration::from_secs(config.startup_timeout_secs))
        .map_err(|e| e.to_string())?;
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
        let mut tee = FirstLineTee {
            inner: &b"Starting server v1.2...\n{\"jsonrpc\":\"2.0\"}\n"[..],
            first: first.clone(),
            done: false,
        };
        let mut all = Vec::new();
        tee.read_to_end(&mut all).await.expect("read");
        assert_eq!(all.len(), 42, "everything passes through");
        let why = with_first_line("initialize failed: connection closed".into(), &first);
        assert_eq!(
            why,
            "initialize failed: connection closed; the server printed non-JSON on stdout at startup (MCP stdio servers must print only JSON-RPC there): \"Starting server v1.2...\""
        );
        let json: FirstLine = Arc::new(Mutex::new(b"{\"jsonrpc\":\"2.0\"}".to_vec()));
        assert_eq!(with_first_line("x".into(), &json), "x");
    }

    #[test]
    fn a_cause_chain_is_kept_whole() {
        #[derive(Debug)]
        struct E(&'static str, Option<Box<E>>);
        impl std::fmt::Display for E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for E {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|e| e as _)
            }
        }
        let e = E("send failed", Some(Box::new(E("connection refused", None))));
        assert_eq!(cause_chain(&e), "send failed: connection refused");
    }
}
