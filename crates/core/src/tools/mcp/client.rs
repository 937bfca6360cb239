//! What kimi-tui is to a server: its name and version, what it offers (elicitation, through
//! the user; roots, only those the config names; no sampling, which would spend the user's model
//! on a server's behalf), and where each notification goes.
#![expect(
    deprecated,
    reason = "roots and logging are deprecated in the SDK, still in use by servers"
)]

use std::sync::Weak;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode,
    Implementation, ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    Root, RootsCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};

use super::elicit::{ElicitAsk, ElicitReply, fields};
use super::hub::Inner;
use super::notes::ToolNote;

/// The handler of one server's connection.
pub(crate) struct Handler {
    /// The server's position in the hub.
    pub index: usize,
    pub server: String,
    /// `file://` URIs of the configured roots.
    pub roots: Vec<String>,
    /// The hub (weak: the connection must not keep the hub, which kills the servers on drop).
    pub hub: Weak<Inner>,
}

/// Tells the hub, when dropped, that a question's request is over however it ended.
struct QuestionEnded(Weak<Inner>);

impl Drop for QuestionEnded {
    fn drop(&mut self) {
        if let Some(hub) = self.0.upgrade() {
            hub.question_ended();
        }
    }
}

/// How kimi-tui introduces itself.
pub(crate) fn implementation() -> Implementation {
    Implementation::new("kimi-tui", env!("CARGO_PKG_VERSION")).with_title("kimi-tui")
}

impl Handler {
    fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        // Form questions only: a URL question would send the user to a page the dialog cannot
        // vouch for.
        caps.elicitation = Some(ElicitationCapability::default());
        if !self.roots.is_empty() {
            caps.roots = Some(RootsCapabilities::default());
        }
        caps
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(self.capabilities(), implementation())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            tracing::warn!(server = %self.server, "URL elicitation refused: not supported");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // Declared before the reply's receiver, so dropped after it: whoever shows the question
        // hears that it ended once it no longer waits.
        let _ended = QuestionEnded(self.hub.clone());
        let order = requested_schema.property_order.clone();
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let (ask, reply) = ElicitAsk::new(
            self.server.clone(),
            message,
            fields(&schema, order.as_deref()),
        );
        tracing::info!(summary = %ask.summary(), "MCP elicitation");
        let Some(hub) = self.hub.upgrade() else {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        hub.ask(ask);
        drop(hub);
        // The server may give up (cancel its request): then the dialog's question goes away.
        let reply = tokio::select! {
            r = reply => r.unwrap_or(ElicitReply::Cancel),
            _ = context.ct.cancelled() => ElicitReply::Cancel,
        };
        Ok(match reply {
            ElicitReply::Accept(values) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(values)),
            ElicitReply::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitReply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        // Not advertised; a server that asks anyway gets a reason it can pass on.
        tracing::warn!(server = %self.server, "sampling request refused: not offered");
        Err(rmcp::ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "kimi-tui does not offer sampling: the user's model is not lent to servers",
            None,
        ))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        Ok(ListRootsResult::new(
            self.roots.iter().map(Root::new).collect(),
        ))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hub) = self.hub.upgrade() {
            let note = ToolNote::Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            };
            hub.route(self.index, Some(&params.progress_token), note);
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = format!("{:?}", params.level).to_lowercase();
        tracing::info!(server = %self.server, %level, logger = ?params.logger, %text, "MCP log");
        if let Some(hub) = self.hub.upgrade() {
            hub.route(self.index, None, ToolNote::Log { level, text });
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(hub) = self.hub.upgrade() {
            hub.relist(self.index);
        }
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(hub) = self.hub.upgrade() {
            hub.relist(self.index);
        }
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(hub) = self.hub.upgrade() {
            hub.relist(self.index);
        }
    }
}
