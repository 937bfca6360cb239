//! A small MCP server (rmcp's server side, stdio) behind `kimi-tui mock-mcp-server` (with the
//! `demo` feature): the demo's
//! MCP tools and the hermetic MCP tests' counterpart. Tools: `echo` (text), `add` (structured
//! content), `fail` (an `isError` result), `image` (binary content), `slow` (waits, and says on
//! stderr when it is cancelled), `crash` (exits mid-call), `ask` (asks the user through the
//! client, `elicitation/create`, and returns what they answered).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// The mock server's handler.
#[derive(Debug, Clone, Default)]
pub struct MockMcp;

fn schema(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// The tools it lists.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "echo",
            "Say the text back",
            schema(json!({"type": "object", "required": ["text"],
                "properties": {"text": {"type": "string", "description": "What to say"}}})),
        ),
        Tool::new(
            "add",
            "Add two numbers",
            schema(json!({"type": "object", "required": ["a", "b"],
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})),
        ),
        Tool::new(
            "fail",
            "Always fails",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "image",
            "Returns a tiny image",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "slow",
            "Waits `secs` seconds",
            schema(json!({"type": "object", "required": ["secs"],
                "properties": {"secs": {"type": "integer", "minimum": 0}}})),
        ),
        Tool::new(
            "crash",
            "Exits in the middle of the call",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "ask",
            "Asks the user for their name (and a colour), and says what they answered",
            schema(json!({"type": "object",
                "properties": {"message": {"type": "string", "description": "The question"}}})),
        ),
    ]
}

/// The form `ask` sends: a required name and an optional colour.
fn ask_form() -> Result<ElicitationSchema, ErrorData> {
    serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name", "description": "Who you are"},
            "color": {"type": "string", "title": "Colour", "enum": ["red", "green"]}
        },
        "required": ["name"]
    }))
    .map_err(|e| ErrorData::internal_error(format!("the form: {e}"), None))
}

/// `ask`: the question goes to the user through the client; the answer comes back as text.
async fn ask(
    args: &Option<Map<String, Value>>,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let message = text_arg(args, "message")
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "What is your name?".to_owned());
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ask_form()?,
    };
    let answer = context
        .peer
        .create_elicitation(params)
        .await
        .map_err(|e| ErrorData::internal_error(format!("elicitation failed: {e}"), None))?;
    let text = match answer.action {
        ElicitationAction::Accept => format!(
            "the user answered: {}",
            answer.content.unwrap_or(Value::Null)
        ),
        ElicitationAction::Decline => "the user declined".to_owned(),
        ElicitationAction::Cancel => "the user cancelled".to_owned(),
        other => format!("an answer of an unknown kind: {other:?}"),
    };
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// `slow`'s wait, a second a step, each step reported as progress and as a log line (what a
/// client shows while a call runs).
#[expect(
    deprecated,
    reason = "logging is deprecated in the SDK, still in use by servers"
)]
async fn steps(secs: u64, context: &RequestContext<RoleServer>) {
    let token = context.meta.get_progress_token();
    for step in 1..=secs {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some(token) = &token {
            let progress = rmcp::model::ProgressNotificationParam::new(token.clone(), step as f64)
                .with_total(secs as f64)
                .with_message(format!("second {step} of {secs}"));
            let _ = context.peer.notify_progress(progress).await;
        }
        let line = rmcp::model::LoggingMessageNotificationParam::new(
            rmcp::model::LoggingLevel::Info,
            Value::String(format!("slow: {step} s done")),
        );
        let _ = context.peer.notify_logging_message(line).await;
    }
}

fn text_arg(args: &Option<Map<String, Value>>, key: &str) -> Option<Value> {
    args.as_ref().and_then(|a| a.get(key)).cloned()
}

impl ServerHandler for MockMcp {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(rmcp::model::Implementation::new(
                "kimi-tui-demo",
                env!("CARGO_PKG_VERSION"),
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = &request.arguments;
        let result = match request.name.as_ref() {
            "echo" => {
                let text = text_arg(args, "text")
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))])
            }
            "add" => {
                let n = |k| text_arg(args, k).and_then(|v| v.as_f64()).unwrap_or(0.0);
                CallToolResult::structured(json!({"sum": n("a") + n("b")}))
            }
            "fail" => CallToolResult::error(vec![ContentBlock::text("it failed on purpose")]),
            "image" => CallToolResult::success(vec![ContentBlock::image(
                "iVBORw0KGgoAAAANSUhEUg==",
                "image/png",
            )]),
            "slow" => {
                let secs = text_arg(args, "secs").and_then(|v| v.as_u64()).unwrap_or(1);
                eprintln!("slow: started");
                tokio::select! {
                    _ = steps(secs, &context) => {}
                    _ = context.ct.cancelled() => {
                        // What the hermetic test looks for: the cancellation arrived.
                        eprintln!("slow: cancelled by the client");
                        return Err(ErrorData::internal_error("cancelled", None));
                    }
                }
                CallToolResult::success(vec![ContentBlock::text(format!("slept {secs} s"))])
            }
            "ask" => ask(args, &context).await?,
            "crash" => {
                eprintln!("crash: exiting mid-call");
                std::process::exit(3);
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// Serve on stdin/stdout until the client goes away.
pub async fn serve_stdio() -> anyhow::Result<()> {
    eprintln!("mock MCP server: ready");
    let service = MockMcp
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("initialize failed: {e}"))?;
    service
        .waiting()
        .await
        .map_err(|e| anyhow::anyhow!("the server task failed: {e}"))?;
    Ok(())
}
