//! The MCP servers of a session: started together in the background, their tools offered while
//! they live (and listed again when a server says they changed), withdrawn when they fail or
//! die, their sessions closed and process groups killed at the end.

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientNotification, ClientRequest, GetPromptRequestParams, ProgressToken,
    ReadResourceRequestParams, ResourceContents, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningServiceCancellationToken};
use serde_json::Value;
use tokio::sync::{Notify, mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::McpOrigin;
use super::client::Handler;
use super::config::McpServerConfig;
use super::convert::convert;
use super::elicit::ElicitAsk;
use super::listing::{ListError, all_pages};
use super::naming::tool_name;
use super::notes::{HubNotice, ToolNote};
use super::server::{NeedTasks, StderrTail, connect, kill_group, new_tail, tail_text};
use crate::logging::chain;
use crate::tools::result::{Failure, ToolResult, ToolStatus};
use crate::tools::source::OfferedTool;
use crate::tools::spec::{ToolSpec, compile_parameters};

/// Notices kept for the user until read; older ones are dropped first.
const MAX_NOTICES: usize = 200;
/// Log lines kept per server (for `/mcp`).
const MAX_LOG_LINES: usize = 50;
/// A resource's text attached to a message at most.
pub const MAX_RESOURCE_BYTES: usize = 256 * 1024;

/// Why a resource or prompt could not be had from a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpRequestError {
    #[error("no MCP server named `{server}`")]
    NoServer { server: String },
    /// `why` is the server's status: why it failed, or `starting`/`stopped`.
    #[error("the MCP server `{server}` is not running: {why}")]
    NotRunning { server: String, why: String },
    #[error("resources/read {uri}: {why}")]
    Read { uri: String, why: String },
    #[error(
        "resource {uri} is {bytes} bytes, over the {MAX_RESOURCE_BYTES}-byte limit for an attachment"
    )]
    TooLarge { uri: String, bytes: usize },
    #[error("prompts/get {name}: {why}")]
    GetPrompt { name: String, why: String },
}

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

/// What `/tools`, `/mcp`, the status bar and `doctor` show of a server.
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
    /// `name version` as the server introduced itself.
    pub version: Option<String>,
    /// The server's instructions, and whether they go into the system prompt.
    pub instructions: Option<String>,
    pub instructions_in_prompt: bool,
    pub resources: Vec<ResourceInfo>,
    pub prompts: Vec<PromptInfo>,
    /// Its last log lines (`notifications/message`).
    pub log: Vec<String>,
    /// The stdio command or the URL (without credentials).
    pub endpoint: String,
}

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    pub mime_type: Option<String>,
    pub description: Option<String>,
}

/// A prompt a server offers (a slash command `/mcp__SERVER__PROMPT`).
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInfo {
    pub name: String,
    pub description: Option<String>,
    /// Its arguments: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// One message of an MCP prompt, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptText {
    /// `user` or `assistant`.
    pub role: String,
    pub text: String,
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
    child: Option<tokio::process::Child>,
    version: Option<String>,
    instructions: Option<String>,
    resources: Vec<ResourceInfo>,
    prompts: Vec<PromptInfo>,
    log: VecDeque<String>,
    /// Rung by `list_changed`: list tools, resources and prompts again.
    relist: Arc<Notify>,
    /// Its connection has ended (the session was closed, or never opened).
    closed: bool,
}

/// Where the notes of a running call go.
struct Route {
    server: usize,
    token: ProgressToken,
    notes: mpsc::UnboundedSender<ToolNote>,
}

pub(crate) struct Inner {
    servers: RwLock<Vec<Server>>,
    /// Names no MCP tool may take: the local tools'.
    reserved: BTreeSet<String>,
    changed: watch::Sender<u64>,
    /// Where servers' questions go; without a reader they are cancelled, and said so.
    asks: Mutex<Option<mpsc::UnboundedSender<ElicitAsk>>>,
    notices: Mutex<VecDeque<HubNotice>>,
    routes: Mutex<Vec<Route>>,
    /// Where images, audio and blobs of results are saved for the user.
    media_dir: Option<PathBuf>,
}

impl Inner {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A server's question, to whoever shows it.
    pub(crate) fn ask(&self, ask: ElicitAsk) {
        let summary = ask.summary();
        let sent = Self::lock(&self.asks)
            .as_ref()
            .is_some_and(|tx| tx.send(ask).is_ok());
        if !sent {
            // Dropping the question answered "cancel": the user hears about it.
            self.notice(HubNotice {
                server: String::new(),
                text: format!("{summary}; answered cancel: nothing here can show the question"),
                error: true,
            });
        }
    }

    /// A question's request ended (answered, given up by its server, or its connection gone):
    /// subscribers look again, so a front end drops a question nobody waits for without
    /// polling it.
    pub(crate) fn question_ended(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    pub(crate) fn notice(&self, notice: HubNotice) {
        let mut q = Self::lock(&self.notices);
        if q.len() >= MAX_NOTICES {
            q.pop_front();
        }
        q.push_back(notice);
        drop(q);
        self.changed.send_modify(|v| *v += 1);
    }

    /// A note of server `index`: progress to the call with `token`, a log line to every call
    /// running on that server (and to its log).
    pub(crate) fn route(&self, index: usize, token: Option<&ProgressToken>, note: ToolNote) {
        if let ToolNote::Log { .. } = &note {
            let mut servers = self.servers.write().unwrap_or_else(PoisonError::into_inner);
            if let Some(s) = servers.get_mut(index) {
                if s.log.len() >= MAX_LOG_LINES {
                    s.log.pop_front();
                }
                s.log.push_back(note.line());
            }
        }
        for r in Self::lock(&self.routes).iter() {
            if r.server == index && token.is_none_or(|t| *t == r.token) {
                let _ = r.notes.send(note.clone());
            }
        }
    }

    pub(crate) fn relist(&self, index: usize) {
        let servers = self.servers.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = servers.get(index) {
            s.relist.notify_one();
        }
    }
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
                child: None,
                version: None,
                instructions: None,
                resources: Vec::new(),
                prompts: Vec::new(),
                log: VecDeque::new(),
                relist: Arc::new(Notify::new()),
                closed: false,
            })
            .collect();
        McpHub {
            inner: Arc::new(Inner {
                servers: RwLock::new(servers),
                reserved: reserved.into_iter().collect(),
                changed: watch::channel(0).0,
                asks: Mutex::new(None),
                notices: Mutex::new(VecDeque::new()),
                routes: Mutex::new(Vec::new()),
                media_dir: default_media_dir(),
            }),
        }
    }

    /// Save binary results under `dir` instead of the default (tests; `None`: not at all). A
    /// builder step for the hub `new` returned, before it is cloned or started: a hub already
    /// shared keeps its directory.
    pub fn with_media_dir(mut self, dir: Option<PathBuf>) -> McpHub {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.media_dir = dir;
        }
        self
    }

    /// The servers' questions from now on (the last caller gets them). Without a reader a
    /// question is answered "cancel" at once, with a notice.
    pub fn questions(&self) -> mpsc::UnboundedReceiver<ElicitAsk> {
        let (tx, rx) = mpsc::unbounded_channel();
        *Inner::lock(&self.inner.asks) = Some(tx);
        rx
    }

    /// What servers did since the last call that the user should hear of.
    pub fn take_notices(&self) -> Vec<HubNotice> {
        Inner::lock(&self.inner.notices).drain(..).collect()
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
        let Some((config, stderr, relist)) = self.read(|s| {
            s.get(i)
                .map(|s| (s.config.clone(), s.stderr.clone(), s.relist.clone()))
        }) else {
            return;
        };
        let handler = Handler {
            index: i,
            server: config.name.clone(),
            roots: config.roots.iter().map(|r| format!("file://{r}")).collect(),
            hub: Arc::downgrade(&self.inner),
        };
        let need_tasks = NeedTasks::default();
        let connected = match connect(&config, handler, &stderr, &need_tasks).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(server = %config.name, error = %e, "MCP server failed to start");
                self.write(|s| {
                    s[i].status = ServerStatus::Failed(e.to_string());
                    s[i].closed = true;
                });
                return;
            }
        };
        let peer = connected.service.peer().clone();
        let (version, instructions) = connected
            .service
            .peer_info()
            .map(|info| {
                let version = info
                    .server_info
                    .as_ref()
                    .map(|i| format!("{} {}", i.name, i.version));
                (version, info.instructions.clone())
            })
            .unwrap_or_default();
        let listed = self.list(&config, &peer, &need_tasks).await;
        let (tools, skipped, resources, prompts) = match listed {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(server = %config.name, error = %e, "MCP server failed to list its tools");
                kill_group(connected.pgid);
                self.write(|s| {
                    s[i].status = ServerStatus::Failed(e.to_string());
                    s[i].closed = true;
                });
                return;
            }
        };
        tracing::info!(server = %config.name, tools = tools.len(), "MCP server ready");
        let stop = connected.service.cancellation_token();
        let pgid = connected.pgid;
        let stopped = self.write(|s| {
            let server = &mut s[i];
            server.pgid = pgid;
            server.child = connected.child;
            if server.status == ServerStatus::Stopped {
                return true;
            }
            server.status = ServerStatus::Ready;
            server.tools = tools;
            server.skipped = skipped;
            server.resources = resources;
            server.prompts = prompts;
            server.version = version;
            server.instructions = instructions;
            server.peer = Some(peer.clone());
            server.stop = Some(stop);
            false
        });
        if stopped {
            drop(connected.service.cancel().await);
            kill_group(pgid);
            self.write(|s| s[i].closed = true);
            return;
        }
        let closing = connected.service.waiting();
        tokio::pin!(closing);
        let reason = loop {
            tokio::select! {
                r = &mut closing => break match r {
                    Ok(r) => format!("{r:?}"),
                    Err(e) => e.to_string(),
                },
                _ = relist.notified() => self.relisted(i, &config, &peer, &need_tasks).await,
            }
        };
        self.write(|s| {
            let server = &mut s[i];
            server.tools.clear();
            server.peer = None;
            server.closed = true;
            if server.status != ServerStatus::Stopped {
                tracing::warn!(server = %server.config.name, %reason, "MCP server stopped");
                server.status = ServerStatus::Failed("the server stopped".to_owned());
            }
            kill_group(server.pgid);
        });
    }

    /// The server's tools (offered and not), resources and prompts, each list bounded.
    async fn list(
        &self,
        config: &McpServerConfig,
        peer: &Peer<RoleClient>,
        need_tasks: &NeedTasks,
    ) -> Result<
        (
            Vec<Offered>,
            Vec<String>,
            Vec<ResourceInfo>,
            Vec<PromptInfo>,
        ),
        ListError,
    > {
        let caps = peer.peer_info().map(|i| i.capabilities.clone());
        let has = |f: fn(&rmcp::model::ServerCapabilities) -> bool| caps.as_ref().is_some_and(f);
        let tools = all_pages("tools/list", |p| async move {
            peer.list_tools(p).await.map(|r| (r.tools, r.next_cursor))
        })
        .await?;
        let need_tasks = need_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let (offered, skipped) = self.offer(config, tools, &need_tasks);
        // Resources and prompts are extras: a server that fails to list them still serves
        // its tools, and the failure is a note in `/mcp`.
        let mut skipped = skipped;
        let resources = if has(|c| c.resources.is_some()) {
            all_pages("resources/list", |p| async move {
                peer.list_resources(p)
                    .await
                    .map(|r| (r.resources, r.next_cursor))
            })
            .await
            .map(|list| {
                list.into_iter()
                    .map(|r| ResourceInfo {
                        uri: r.uri.clone(),
                        name: r.name.clone(),
                        mime_type: r.mime_type.clone(),
                        description: r.description.clone(),
                    })
                    .collect()
            })
            .unwrap_or_else(|e| {
                skipped.push(format!("resources: {e}"));
                Vec::new()
            })
        } else {
            Vec::new()
        };
        let prompts = if has(|c| c.prompts.is_some()) {
            all_pages("prompts/list", |p| async move {
                peer.list_prompts(p)
                    .await
                    .map(|r| (r.prompts, r.next_cursor))
            })
            .await
            .map(|list| {
                list.into_iter()
                    .map(|p| PromptInfo {
                        name: p.name.clone(),
                        description: p.description.clone(),
                        arguments: p
                            .arguments
                            .iter()
                            .flatten()
                            .map(|a| (a.name.clone(), a.required == Some(true)))
                            .collect(),
                    })
                    .collect()
            })
            .unwrap_or_else(|e| {
                skipped.push(format!("prompts: {e}"));
                Vec::new()
            })
        } else {
            Vec::new()
        };
        Ok((offered, skipped, resources, prompts))
    }

    /// `list_changed`: list again, take the new lists, and say what changed. A tool whose
    /// description or schema changed has a new fingerprint, so "always allow" no longer covers it.
    async fn relisted(
        &self,
        i: usize,
        config: &McpServerConfig,
        peer: &Peer<RoleClient>,
        need_tasks: &NeedTasks,
    ) {
        let (tools, skipped, resources, prompts) = match self.list(config, peer, need_tasks).await {
            Ok(l) => l,
            Err(e) => {
                self.inner.notice(HubNotice {
                    server: config.name.clone(),
                    text: format!(
                        "MCP server `{}` changed its lists, but listing them again failed: {e}; the old tools stay",
                        config.name
                    ),
                    error: true,
                });
                return;
            }
        };
        let before: Vec<(String, u64)> = self.read(|s| {
            s[i].tools
                .iter()
                .map(|t| (t.spec.name.clone(), t.spec.fingerprint()))
                .collect()
        });
        let after: Vec<(String, u64)> = tools
            .iter()
            .map(|t| (t.spec.name.clone(), t.spec.fingerprint()))
            .collect();
        let added: Vec<&str> = after
            .iter()
            .filter(|(n, _)| !before.iter().any(|(b, _)| b == n))
            .map(|(n, _)| n.as_str())
            .collect();
        let removed: Vec<&str> = before
            .iter()
            .filter(|(n, _)| !after.iter().any(|(a, _)| a == n))
            .map(|(n, _)| n.as_str())
            .collect();
        let changed: Vec<&str> = after
            .iter()
            .filter(|(n, f)| before.iter().any(|(b, g)| b == n && g != f))
            .map(|(n, _)| n.as_str())
            .collect();
        let mut parts = Vec::new();
        if !added.is_empty() {
            parts.push(format!("added {}", added.join(", ")));
        }
        if !removed.is_empty() {
            parts.push(format!("removed {}", removed.join(", ")));
        }
        if !changed.is_empty() {
            parts.push(format!(
                "changed {} (description or schema: approval is asked again)",
                changed.join(", ")
            ));
        }
        tracing::info!(server = %config.name, ?added, ?removed, ?changed, "MCP tools listed again");
        if !parts.is_empty() {
            self.inner.notice(HubNotice {
                server: config.name.clone(),
                text: format!("MCP server `{}` tools: {}", config.name, parts.join("; ")),
                error: false,
            });
        }
        self.write(|s| {
            let server = &mut s[i];
            if server.status == ServerStatus::Ready {
                server.tools = tools;
                server.skipped = skipped;
                server.resources = resources;
                server.prompts = prompts;
            }
        });
    }

    /// The listed tools that are offered, and a note for each one that is not.
    fn offer(
        &self,
        config: &McpServerConfig,
        listed: Vec<rmcp::model::Tool>,
        need_tasks: &BTreeSet<String>,
    ) -> (Vec<Offered>, Vec<String>) {
        let mut offered: Vec<Offered> = Vec::new();
        let mut skipped = Vec::new();
        for tool in listed {
            let raw = tool.name.to_string();
            if !config.offers(&raw) {
                continue;
            }
            if need_tasks.contains(&raw) {
                // Every call without a task would fail: the model must not be offered it.
                skipped.push(format!(
                    "{raw}: needs MCP tasks (execution.taskSupport = required), which kimi-tui does not run"
                ));
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

    /// Ticks whenever a server's state changes, a notice is queued or a question ends.
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
                    version: s.version.clone(),
                    instructions: s.instructions.clone(),
                    instructions_in_prompt: s.config.instructions,
                    resources: s.resources.clone(),
                    prompts: s.prompts.clone(),
                    log: s.log.iter().cloned().collect(),
                    endpoint: match (&s.config.command, &s.config.url) {
                        (Some(argv), _) => argv.join(" "),
                        (None, Some(url)) => kimi_client::redact_url(url),
                        (None, None) => String::new(),
                    },
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
    pub(crate) fn lookup(&self, name: &str) -> Option<OfferedTool> {
        self.read(|servers| {
            servers
                .iter()
                .flat_map(|s| s.tools.iter())
                .find(|t| t.spec.name == name)
                .map(|t| OfferedTool {
                    spec: t.spec.clone(),
                    validator: t.validator.clone(),
                })
        })
    }

    /// The ready server `server`'s peer, or why there is none.
    fn peer_of(&self, server: &str) -> Result<(usize, Peer<RoleClient>), McpRequestError> {
        self.read(|servers| {
            let Some((i, s)) = servers
                .iter()
                .enumerate()
                .find(|(_, s)| s.config.name == server)
            else {
                return Err(McpRequestError::NoServer {
                    server: server.to_owned(),
                });
            };
            let not_running = |why: String| McpRequestError::NotRunning {
                server: server.to_owned(),
                why,
            };
            match (&s.peer, &s.status) {
                (Some(p), _) => Ok((i, p.clone())),
                (None, ServerStatus::Failed(e)) => Err(not_running(e.clone())),
                (None, other) => Err(not_running(format!("{other:?}").to_lowercase())),
            }
        })
    }

    /// Call an approved, validated tool (the hub's [`ToolSource::call`](crate::tools::ToolSource::call)).
    /// Progress and log lines of the call go to `notes`. Cancelling `cancel`, or
    /// `tool_timeout_secs`, sends `notifications/cancelled`. Never panics: every failure is in
    /// the result. A server's stderr stays in the result's log tail (the pane and the log): it
    /// never goes to the model.
    pub(crate) async fn call_tool(
        &self,
        spec: &ToolSpec,
        arguments: &str,
        cancel: CancellationToken,
        notes: Option<mpsc::UnboundedSender<ToolNote>>,
    ) -> ToolResult {
        let started = Instant::now();
        let Some(origin) = &spec.mcp else {
            return failed("not an MCP tool".to_owned(), started);
        };
        let (index, peer) = match self.peer_of(&origin.server) {
            Ok(p) => p,
            Err(e) => return failed(e.to_string(), started),
        };
        let (stderr, cap) = self.read(|s| (s[index].stderr.clone(), s[index].config.output_cap()));
        let args = match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(map)) => map,
            _ => return failed("the arguments must be a JSON object".to_owned(), started),
        };
        let mut params = CallToolRequestParams::new(origin.tool.clone());
        params.arguments = Some(args);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => return call_failed(&origin.server, &e, &stderr, started),
        };
        let request_id = handle.id.clone();
        let _route =
            notes.map(|tx| RouteGuard::new(&self.inner, index, handle.progress_token.clone(), tx));
        let timeout = Duration::from_secs(spec.timeout_secs);
        let result = tokio::select! {
            r = handle.await_response() => r,
            _ = cancel.cancelled() => {
                cancel_request(&peer, request_id, "cancelled by the user").await;
                return stopped(ToolStatus::Cancelled, "[cancelled by the user]".to_owned(), started);
            }
            _ = tokio::time::sleep(timeout) => {
                cancel_request(&peer, request_id, "timed out").await;
                return stopped(
                    ToolStatus::TimedOut,
                    format!("[timed out after {} s; the call was cancelled]", timeout.as_secs()),
                    started,
                );
            }
        };
        let duration = started.elapsed();
        let media = self.inner.media_dir.as_deref();
        match result {
            Ok(ServerResult::CallToolResult(result)) => {
                let c = convert(&result, cap, media);
                ToolResult {
                    content: c.content,
                    status: if c.is_error {
                        ToolStatus::Failed(Failure::ErrorResult)
                    } else {
                        ToolStatus::Ok
                    },
                    output: c.text,
                    output_total_bytes: c.total_bytes,
                    truncated: c.truncated,
                    log_tail: String::new(),
                    duration,
                }
            }
            Ok(ServerResult::CreateTaskResult(_)) => failed(
                format!(
                    "the MCP server `{}` answered with a task, which kimi-tui does not run",
                    origin.server
                ),
                started,
            ),
            Ok(_) => failed(
                format!(
                    "the MCP server `{}` sent an answer of the wrong kind",
                    origin.server
                ),
                started,
            ),
            Err(e) => call_failed(&origin.server, &e, &stderr, started),
        }
    }

    /// The text of resource `uri` of server `server`, for `@server:uri` in a message: text
    /// contents as they are (at most [`MAX_RESOURCE_BYTES`]), binary ones described.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, McpRequestError> {
        let (_, peer) = self.peer_of(server)?;
        let result = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| McpRequestError::Read {
                uri: uri.to_owned(),
                why: chain(&e),
            })?;
        let mut parts = Vec::new();
        for c in &result.contents {
            match c {
                ResourceContents::TextResourceContents { text, .. } => parts.push(text.clone()),
                ResourceContents::BlobResourceContents {
                    mime_type, blob, ..
                } => parts.push(format!(
                    "[binary resource: {}, about {} bytes; not attached]",
                    mime_type.as_deref().unwrap_or("application/octet-stream"),
                    blob.len() * 3 / 4
                )),
                _ => parts.push("[a resource of an unknown kind]".to_owned()),
            }
        }
        let text = parts.join("\n");
        if text.len() > MAX_RESOURCE_BYTES {
            return Err(McpRequestError::TooLarge {
                uri: uri.to_owned(),
                bytes: text.len(),
            });
        }
        Ok(text)
    }

    /// The messages of prompt `name` of server `server` with `arguments`, as text.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Vec<PromptText>, McpRequestError> {
        let (_, peer) = self.peer_of(server)?;
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = Some(arguments);
        let result = peer
            .get_prompt(params)
            .await
            .map_err(|e| McpRequestError::GetPrompt {
                name: name.to_owned(),
                why: chain(&e),
            })?;
        let media = self.inner.media_dir.as_deref();
        Ok(result
            .messages
            .iter()
            .map(|m| {
                let block = rmcp::model::CallToolResult::success(vec![m.content.clone()]);
                PromptText {
                    role: format!("{:?}", m.role).to_lowercase(),
                    text: convert(&block, MAX_RESOURCE_BYTES, media).content,
                }
            })
            .collect())
    }

    /// The instructions of the ready servers whose entry says `instructions = true`, as
    /// `(server, text)`, for the system prompt.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.read(|servers| {
            servers
                .iter()
                .filter(|s| s.config.instructions && s.status == ServerStatus::Ready)
                .filter_map(|s| Some((s.config.name.clone(), s.instructions.clone()?)))
                .collect()
        })
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
                if s.config.url.is_none() {
                    kill_group(s.pgid);
                }
            }
        });
    }

    /// [`McpHub::shutdown`], then wait (up to `wait`) until every connection has ended: an
    /// HTTP session is closed with `DELETE` then. Stdio process groups are killed at once.
    pub async fn close(&self, wait: Duration) {
        let mut rx = self.inner.changed.subscribe();
        self.shutdown();
        let deadline = Instant::now() + wait;
        while !self.read(|s| s.iter().all(|s| s.closed || s.config.url.is_none())) {
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                tracing::warn!("MCP sessions still closing after {wait:?}");
                return;
            }
        }
    }
}

/// Registers a call's route for its notes; removes it when the call ends.
struct RouteGuard<'a> {
    inner: &'a Inner,
    token: ProgressToken,
}

impl<'a> RouteGuard<'a> {
    fn new(
        inner: &'a Inner,
        server: usize,
        token: ProgressToken,
        notes: mpsc::UnboundedSender<ToolNote>,
    ) -> RouteGuard<'a> {
        Inner::lock(&inner.routes).push(Route {
            server,
            token: token.clone(),
            notes,
        });
        RouteGuard { inner, token }
    }
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        Inner::lock(&self.inner.routes).retain(|r| r.token != self.token);
    }
}

async fn cancel_request(peer: &Peer<RoleClient>, id: rmcp::model::RequestId, reason: &str) {
    let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
    let note = ClientNotification::CancelledNotification(CancelledNotification::new(params));
    if let Err(e) = peer.send_notification(note).await {
        tracing::warn!(error = %e, "could not send notifications/cancelled");
    }
}

fn stopped(status: ToolStatus, content: String, started: Instant) -> ToolResult {
    ToolResult::without_output(status, content, started.elapsed())
}

/// A call the server failed: the model hears that it failed and the server's error; the
/// stderr tail is for the user only (it may hold anything the server logs).
fn call_failed(
    server: &str,
    e: &rmcp::service::ServiceError,
    stderr: &StderrTail,
    started: Instant,
) -> ToolResult {
    let cause = if e.auth_challenge().is_some() {
        "authentication failed (HTTP 401/403)".to_owned()
    } else {
        chain(e)
    };
    ToolResult {
        log_tail: tail_text(stderr),
        ..ToolResult::without_output(
            ToolStatus::CouldNotStart(format!("MCP server `{server}`: {cause}")),
            format!("[the MCP server `{server}` failed the call: {cause}]"),
            started.elapsed(),
        )
    }
}

/// Where results' binary blocks are saved: `mcp-media` under the state directory.
fn default_media_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "kimi-tui").map(|d| {
        d.state_dir()
            .unwrap_or(d.data_local_dir())
            .join("mcp-media")
    })
}

fn failed(message: String, started: Instant) -> ToolResult {
    ToolResult::could_not_start(message, started.elapsed())
}
