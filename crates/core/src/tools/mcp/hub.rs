//! The MCP servers of a session: started together in the background, their tools offered while
//! they live, withdrawn when they fail or die, their process groups killed at the end.

use std::collections::BTreeSet;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient, RunningServiceCancellationToken};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::McpOrigin;
use super::config::McpServerConfig;
use super::convert::convert;
use super::naming::tool_name;
use super::server::{StderrTail, connect, kill_group, new_tail, tail_text};
use crate::tools::runner::{ExitKind, ToolOutcome};
use crate::tools::spec::{ToolSpec, compile_parameters};

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerStatus {
    Starting,
    Ready,
    /// It failed to start, or stopped: why, on one line. Its tools are withdrawn.
    Failed(String),
    /// Stopped by [`McpHub::shutdown`].
    Stopped,
}

/// What `/tools`, the status bar and `doctor` show of a server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    pub name: String,
    pub status: ServerStatus,
    /// Offered names (`mcp__SERVER__TOOL`).
    pub tools: Vec<String>,
    /// Tools the server lists that are not offered, each with why.
    pub skipped: Vec<String>,
    /// The end of its stderr (stdio servers).
    pub stderr_tail: String,
}

/// One offered tool.
#[derive(Clone)]
struct Offered {
    spec: ToolSpec,
    validator: Arc<jsonschema::Validator>,
}

struct Server {
    config: McpServerConfig,
    status: ServerStatus,
    stderr: StderrTail,
    tools: Vec<Offered>,
    skipped: Vec<String>,
    peer: Option<Peer<RoleClient>>,
    stop: Option<RunningServiceCancellationToken>,
    pgid: Option<i32>,
}

struct Inner {
    servers: RwLock<Vec<Server>>,
    /// Names no MCP tool may take: the local tools'.
    reserved: BTreeSet<String>,
    changed: watch::Sender<u64>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // However the session ends, no server outlives it.
        let servers = self
            .servers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for s in servers.iter() {
            kill_group(s.pgid);
        }
    }
}

/// The MCP servers of a session. Cheap to clone (shared state); `Send + Sync`.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.reports())
            .finish()
    }
}

/// What a call produced: the outcome the UI shows and the `tool` message content.
pub struct CallOutput {
    pub outcome: ToolOutcome,
    pub content: String,
}

impl McpHub {
    /// A hub for `configs` (checked by the config loader); nothing starts until [`McpHub::start`].
    /// `reserved` are the local tools' names (an MCP tool never takes one).
    pub fn new(
        configs: Vec<McpServerConfig>,
        reserved: impl IntoIterator<Item = String>,
    ) -> McpHub {
        let servers = configs
            .into_iter()
            .map(|config| Server {
                config,
                status: ServerStatus::Starting,
                stderr: new_tail(),
                tools: Vec::new(),
                skipped: Vec::new(),
                peer: None,
                stop: None,
                pgid: None,
            })
            .collect();
        McpHub {
            inner: Arc::new(Inner {
                servers: RwLock::new(servers),
                reserved: reserved.into_iter().collect(),
                changed: watch::channel(0).0,
            }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.read(|s| s.is_empty())
    }

    fn read<T>(&self, f: impl FnOnce(&Vec<Server>) -> T) -> T {
        f(&self
            .inner
            .servers
            .read()
            .unwrap_or_else(PoisonError::into_inner))
    }

    fn write<T>(&self, f: impl FnOnce(&mut Vec<Server>) -> T) -> T {
        let out = f(&mut self
            .inner
            .servers
            .write()
            .unwrap_or_else(PoisonError::into_inner));
        self.inner.changed.send_modify(|v| *v += 1);
        out
    }

    /// Start every server, each in its own task, and return at once (the first frame does not
    /// wait). Needs a tokio runtime.
    pub fn start(&self) {
        let n = self.read(Vec::len);
        for i in 0..n {
            let hub = self.clone();
            tokio::spawn(async move { hub.run_server(i).await });
        }
    }

    async fn run_server(&self, i: usize) {
        let Some((config, stderr)) =
            self.read(|s| s.get(i).map(|s| (s.config.clone(), s.stderr.clone())))
        else {
            return;
        };
        let connected = connect(&config, &stderr).await;
        let service = match connected {
            Err(e) => {
                tracing::warn!(server = %config.name, error = %e, "MCP server failed to start");
                self.write(|s| s[i].status = ServerStatus::Failed(e));
                return;
            }
            Ok(c) => {
                let (tools, skipped) = self.offer(&config, c.tools);
                tracing::info!(server = %config.name, tools = tools.len(), "MCP server ready");
                let stopped = self.write(|s| {
                    let server = &mut s[i];
                    server.pgid = c.pgid;
                    if server.status == ServerStatus::Stopped {
                        return true;
                    }
                    server.status = ServerStatus::Ready;
                    server.tools = tools;
                    server.skipped = skipped;
                    server.peer = Some(c.service.peer().clone());
                    server.stop = Some(c.service.cancellation_token());
                    false
                });
                if stopped {
                    kill_group(c.pgid);
                    return;
                }
                c.service
            }
        };
        let reason = match service.waiting().await {
            Ok(r) => format!("{r:?}"),
            Err(e) => e.to_string(),
        };
        self.write(|s| {
            let server = &mut s[i];
            server.tools.clear();
            server.peer = None;
            if server.status != ServerStatus::Stopped {
                tracing::warn!(server = %server.config.name, %reason, "MCP server stopped");
                server.status = ServerStatus::Failed("the server stopped".to_owned());
            }
            kill_group(server.pgid);
        });
    }

    /// The listed tools that are offered, and a note for each one that is not.
    fn offer(
        &self,
        config: &McpServerConfig,
        listed: Vec<rmcp::model::Tool>,
    ) -> (Vec<Offered>, Vec<String>) {
        let mut offered: Vec<Offered> = Vec::new();
        let mut skipped = Vec::new();
        for tool in listed {
            let raw = tool.name.to_string();
            if !config.offers(&raw) {
                continue;
            }
            let Some(name) = tool_name(&config.name, &raw) else {
                skipped.push(format!("{raw:?}: no usable name"));
                continue;
            };
            if self.inner.reserved.contains(&name) || offered.iter().any(|o| o.spec.name == name) {
                skipped.push(format!("{raw}: `{name}` is already taken"));
                continue;
            }
            let parameters = Value::Object((*tool.input_schema).clone());
            let validator = match compile_parameters(&parameters) {
                Ok(v) => Arc::new(v),
                Err(e) => {
                    skipped.push(format!("{raw}: inputSchema: {e}"));
                    continue;
                }
            };
            let spec = ToolSpec {
                description: tool.description.as_deref().unwrap_or("").to_owned(),
                parameters,
                approval: config.approval_for(&raw),
                timeout_secs: config.tool_timeout_secs,
                max_output_bytes: config.max_output_bytes,
                mcp: Some(McpOrigin {
                    server: config.name.clone(),
                    tool: raw,
                }),
                ..ToolSpec::new(name, Vec::new())
            };
            offered.push(Offered { spec, validator });
        }
        (offered, skipped)
    }

    /// Wait until no server is starting, or `timeout` passes (`exec`, `doctor`).
    pub async fn wait_started(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut rx = self.inner.changed.subscribe();
        loop {
            if !self.read(|s| s.iter().any(|s| s.status == ServerStatus::Starting)) {
                return;
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Ticks whenever a server's state changes.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    pub fn reports(&self) -> Vec<ServerReport> {
        self.read(|servers| {
            servers
                .iter()
                .map(|s| ServerReport {
                    name: s.config.name.clone(),
                    status: s.status.clone(),
                    tools: s.tools.iter().map(|t| t.spec.name.clone()).collect(),
                    skipped: s.skipped.clone(),
                    stderr_tail: tail_text(&s.stderr),
                })
                .collect()
        })
    }

    /// For the status bar: `MCP 2/3`, with the names of the failed servers; `None` without
    /// servers. The flag is set when one failed.
    pub fn summary(&self) -> Option<(String, bool)> {
        self.read(|servers| {
            if servers.is_empty() {
                return None;
            }
            let ready = servers
                .iter()
                .filter(|s| s.status == ServerStatus::Ready)
                .count();
            let starting = servers.iter().any(|s| s.status == ServerStatus::Starting);
            let failed: Vec<&str> = servers
                .iter()
                .filter(|s| matches!(s.status, ServerStatus::Failed(_)))
                .map(|s| s.config.name.as_str())
                .collect();
            let mut text = format!("MCP {ready}/{}", servers.len());
            if starting {
                text.push_str(" starting");
            }
            if !failed.is_empty() {
                text.push_str(&format!(" ✗ {}", failed.join(", ")));
            }
            Some((text, !failed.is_empty()))
        })
    }

    /// The offered tools of the ready servers, in config order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read(|servers| {
            servers
                .iter()
                .flat_map(|s| s.tools.iter().map(|t| t.spec.clone()))
                .collect()
        })
    }

    /// The offered tool `name` and its validator.
    pub(crate) fn lookup(&self, name: &str) -> Option<(ToolSpec, Arc<jsonschema::Validator>)> {
        self.read(|servers| {
            servers
                .iter()
                .flat_map(|s| s.tools.iter())
                .find(|t| t.spec.name == name)
                .map(|t| (t.spec.clone(), t.validator.clone()))
        })
    }

    /// Call an approved, validated tool. Cancelling `cancel` drops the request, which makes rmcp
    /// send `notifications/cancelled`; `tool_timeout_secs` does the same. Never panics: every
    /// failure is in the outcome.
    pub async fn call(
        &self,
        spec: &ToolSpec,
        arguments: &str,
        cancel: CancellationToken,
    ) -> CallOutput {
        let started = Instant::now();
        let Some(origin) = &spec.mcp else {
            return failed("not an MCP tool".to_owned(), started);
        };
        let found = self.read(|servers| {
            servers
                .iter()
                .find(|s| s.config.name == origin.server)
                .map(|s| {
                    (
                        s.peer.clone(),
                        s.status.clone(),
                        s.stderr.clone(),
                        s.config.output_cap(),
                    )
                })
        });
        let Some((peer, status, stderr, cap)) = found else {
            return failed(format!("no MCP server named `{}`", origin.server), started);
        };
        let Some(peer) = peer else {
            let why = match status {
                ServerStatus::Failed(e) => e,
                other => format!("{other:?}").to_lowercase(),
            };
            return failed(
                format!("the MCP server `{}` is not running: {why}", origin.server),
                started,
            );
        };
        let args = match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(map)) => map,
            _ => return failed("the arguments must be a JSON object".to_owned(), started),
        };
        let mut params = CallToolRequestParams::new(origin.tool.clone());
        params.arguments = Some(args);
        let timeout = Duration::from_secs(spec.timeout_secs);
        let result = tokio::select! {
            r = peer.call_tool(params) => Some(r),
            _ = cancel.cancelled() => None,
            _ = tokio::time::sleep(timeout) => {
                return CallOutput {
                    content: format!("[timed out after {} s; the call was cancelled]", timeout.as_secs()),
                    outcome: ToolOutcome {
                        exit: ExitKind::TimedOut,
                        stdout: String::new(),
                        stdout_total_bytes: 0,
                        truncated: false,
                        stderr_tail: String::new(),
                        duration: started.elapsed(),
                    },
                };
            }
        };
        let duration = started.elapsed();
        match result {
            None => CallOutput {
                content: "[cancelled by the user]".to_owned(),
                outcome: ToolOutcome {
                    exit: ExitKind::Cancelled,
                    stdout: String::new(),
                    stdout_total_bytes: 0,
                    truncated: false,
                    stderr_tail: String::new(),
                    duration,
                },
            },
            Some(Err(e)) => {
                let tail = tail_text(&stderr);
                let mut content =
                    format!("[the MCP server `{}` failed the call: {e}]", origin.server);
                if !tail.trim().is_empty() {
                    content.push_str(&format!("\nstderr: {}", tail.trim_end()));
                }
                CallOutput {
                    outcome: ToolOutcome {
                        exit: ExitKind::FailedToStart(format!(
                            "MCP server `{}`: {e}",
                            origin.server
                        )),
                        stdout: String::new(),
                        stdout_total_bytes: 0,
                        truncated: false,
                        stderr_tail: tail,
                        duration,
                    },
                    content,
                }
            }
            Some(Ok(result)) => {
                let c = convert(&result, cap);
                CallOutput {
                    outcome: ToolOutcome {
                        // An `isError` result shows as a failure (there is no exit code).
                        exit: ExitKind::Exited(i32::from(c.is_error)),
                        stdout: c.text,
                        stdout_total_bytes: c.total_bytes,
                        truncated: c.truncated,
                        stderr_tail: String::new(),
                        duration,
                    },
                    content: c.content,
                }
            }
        }
    }

    /// Stop every server: close its session and kill its process group.
    pub fn shutdown(&self) {
        self.write(|servers| {
            for s in servers.iter_mut() {
                s.status = ServerStatus::Stopped;
                s.tools.clear();
                s.peer = None;
                if let Some(stop) = s.stop.take() {
                    stop.cancel();
                }
                kill_group(s.pgid);
            }
        });
    }
}

fn failed(message: String, started: Instant) -> CallOutput {
    CallOutput {
        content: format!("[{message}]"),
        outcome: ToolOutcome {
            exit: ExitKind::FailedToStart(message),
            stdout: String::new(),
            stdout_total_bytes: 0,
            truncated: false,
            stderr_tail: String::new(),
            duration: started.elapsed(),
        },
    }
}
