//! Starting one MCP server: spawn it (stdio, in its own process group, stderr kept) or open its
//! Streamable HTTP endpoint, initialize, list its tools.

use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::Tool;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::AsyncReadExt;

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

/// A server that answered `initialize` and `tools/list`.
pub(crate) struct Connected {
    pub service: RunningService<RoleClient, ()>,
    pub tools: Vec<Tool>,
    /// The stdio server's process group (its pid), killed on stop.
    pub pgid: Option<i32>,
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

/// Start `config`'s server and list its tools within `startup_timeout_secs`. The error is one
/// line for the user (the stderr tail is kept apart, in `stderr`).
pub(crate) async fn connect(
    config: &McpServerConfig,
    stderr: &StderrTail,
) -> Result<Connected, String> {
    let timeout = Duration::from_secs(config.startup_timeout_secs);
    let mut pgid = None;
    let started = async {
        match config.transport() {
            Some(Transport::Stdio(argv)) => {
                let (process, group) = spawn(config, argv, stderr)?;
                pgid = group;
                ().serve(process)
                    .await
                    .map_err(|e| format!("initialize failed: {e}"))
            }
            Some(Transport::Http(url)) => {
                let transport = http_transport(config, url)?;
                ().serve(transport)
                    .await
                    .map_err(|e| format!("initialize failed: {e}"))
            }
            None => Err("neither command nor url is set".to_owned()),
        }
    };
    let service = match tokio::time::timeout(timeout, started).await {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            kill_group(pgid);
            return Err(e);
        }
        Err(_) => {
            kill_group(pgid);
            return Err(format!(
                "did not start within {} s (startup_timeout_secs)",
                config.startup_timeout_secs
            ));
        }
    };
    match tokio::time::timeout(timeout, service.peer().list_all_tools()).await {
        Ok(Ok(tools)) => Ok(Connected {
            service,
            tools,
            pgid,
        }),
        Ok(Err(e)) => {
            kill_group(pgid);
            Err(format!("tools/list failed: {e}"))
        }
        Err(_) => {
            kill_group(pgid);
            Err(format!(
                "tools/list did not answer within {} s",
                config.startup_timeout_secs
            ))
        }
    }
}

/// Spawn a stdio server: argv without a shell, the local tools' environment rules (no API key
/// variables), its own process group, stderr read into `stderr`.
fn spawn(
    config: &McpServerConfig,
    argv: &[String],
    stderr: &StderrTail,
) -> Result<(TokioChildProcess, Option<i32>), String> {
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
        .process_group(0)
        .kill_on_drop(true);
    let (process, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{program}`: {}", os_message(&e)))?;
    let pgid = process
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .filter(|&id| id > 0);
    if let Some(mut err) = err {
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
    Ok((process, pgid))
}

fn http_transport(
    config: &McpServerConfig,
    url: &str,
) -> Result<impl rmcp::transport::Transport<rmcp::RoleClient> + use<>, String> {
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
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
