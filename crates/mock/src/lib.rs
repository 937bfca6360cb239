//! The scripted mock Kimi server: real HTTP on loopback (axum), shaped like vLLM's OpenAI server,
//! behind `--demo`, `kimi-tui mock-server` and the tests.
//!
//! - `routes`: endpoints, API-key check, body delivery (delay, batching, drop).
//! - `request`: request bodies of the two generation endpoints.
//! - `prompt`: a rendered raw prompt read back into the conversation.
//! - `script`: the scripted model (conversation -> content and calls).
//! - `tokens`: a reply cut into tokens; `deltas`: tokens -> per-event payloads.
//! - `sse`: event and response shapes; `faults`: deliberate failures.
//! - `chat_prompt`: the prompt a chat request stands for (its `prompt_tokens`, `/tokenize`).
//! - `server_bugs`: known server failures by name; `quirks`: what they do to an answer.

pub(crate) mod chat_prompt;
pub(crate) mod deltas;
pub(crate) mod faults;
pub mod k3;
pub mod logprobs;
mod partial;
pub mod prompt;
pub(crate) mod quirks;
pub(crate) mod request;
mod routes;
pub mod script;
pub mod server_bugs;
pub(crate) mod sse;
pub mod thinking;
pub mod tokens;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

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
    /// A thinking model's reasoning streams over about this many milliseconds in all, paced
    /// evenly over its events (on top of `delay_ms`): the demo's, so that it is seen
    /// streaming. 0 (the default): no pacing.
    pub reasoning_ms: u64,
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
    /// Stream every generation answer, even when the request says `stream: false` (some
    /// gateways always stream).
    pub always_stream: bool,
    // The thinking model: on when `model` names a thinking member of the family.
    /// Chat: the delta field reasoning streams in (`reasoning_content`, or `reasoning` as
    /// recent vLLM and OpenRouter send it).
    pub reasoning_key: String,
    /// Chat: no reasoning parser on the server, so the reasoning arrives in `content`
    /// (`<think>…</think>` for K2-Thinking, `…</think>` for K2.5/K2.6).
    pub reasoning_in_content: bool,
    /// The calls arrive inside the reasoning as marker text (chat), or the tool section opens
    /// before `</think>` (raw), as K2-Thinking does.
    pub call_in_reasoning: bool,
    /// Chat: the calls come as `tool_calls` deltas and their markers leak into `content` too.
    pub duplicate_calls: bool,
    /// Chat: answer 400 like Moonshot's API when an assistant tool-call message in the history
    /// lacks its reasoning.
    pub require_reasoning: bool,
    // Retries and model switching.
    /// With `fail_status`: only the first N generation requests fail, the later ones are
    /// answered ("fail twice, then succeed"); `None`: every one fails.
    pub fail_times: Option<u32>,
    /// The `Retry-After` header of `fail_status` answers, as sent (seconds or an HTTP-date);
    /// `None`: `2` on a 429, none otherwise.
    pub retry_after: Option<String>,
    /// More models `/v1/models` lists after `model` (all answered alike).
    pub extra_models: Vec<String>,
    /// The `max_model_len` of every listed model, as vLLM reports it; `None`: not sent.
    pub max_model_len: Option<u64>,
    // Token level.
    /// Every special marker is emitted as several ordinary tokens (a server whose tokenizer
    /// does not know them); also on for one answer whose user message says "split markers".
    /// In chat mode the markers then land in `content`, as no tool parser sees them.
    pub split_markers: bool,
    /// Answer 400 to a request with any token-level field (`logprobs`, `top_logprobs`,
    /// `return_tokens_as_token_ids`), as a strict OpenAI-compatible server does.
    pub refuse_logprobs: bool,
    /// A Kimi K3 model answers in this broken shape ([`k3::SHAPES`]) instead of the trained one.
    pub k3_shape: Option<String>,
    // Known server bugs ([`server_bugs`] names them).
    /// Chat, streamed: every `tool_calls` delta goes out empty (`"tool_calls": []`); the
    /// finish reason and a non-streamed answer are unchanged.
    pub empty_tool_call_deltas: bool,
    /// Chat: each finished call is delivered a second time under a new index, same id, name
    /// and arguments.
    pub repeat_calls: bool,
    /// A thinking model never writes `</think>`: raw text and content lack it, and a server's
    /// reasoning parser leaves the answer text in the reasoning.
    pub omit_think_close: bool,
    /// A thinking model answering a tool result stops right after `</think>` (`<|im_end|>`
    /// there): the reasoning, then nothing.
    pub im_end_after_think: bool,
    /// Call ids `call00000`, `call00001`, ... instead of the family's own form.
    pub numbered_call_ids: bool,
    /// Finish reason `stop` even when calls arrive.
    pub stop_with_tool_calls: bool,
    /// A non-streamed answer differs from the streamed one: its calls dropped, or (no calls)
    /// its answer text after the reasoning.
    pub nonstream_differs: bool,
    /// The chat endpoint renders with an older chat template than the official one (no
    /// default system message): its `prompt_tokens` and `/tokenize` differ from raw mode's.
    pub stale_chat_template: bool,
    /// An answer with calls stops on its first `<|tool_call_argument_begin|>`, written without
    /// its closing `>` (as text, in both modes): a broken marker for the user to repair.
    pub broken_marker: bool,
    /// Answer 400 to partial mode (`"partial": true`, `continue_final_message`), as a server
    /// without it does.
    pub refuse_partial: bool,
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

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            model: "moonshotai/Kimi-K2-Instruct".to_owned(),
            chunk_bytes: None,
            delay_ms: 0,
            reasoning_ms: 0,
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
            always_stream: false,
            reasoning_key: "reasoning_content".to_owned(),
            reasoning_in_content: false,
            call_in_reasoning: false,
            duplicate_calls: false,
            require_reasoning: false,
            fail_times: None,
            retry_after: None,
            extra_models: Vec::new(),
            max_model_len: Some(131072),
            split_markers: false,
            refuse_logprobs: false,
            k3_shape: None,
            empty_tool_call_deltas: false,
            repeat_calls: false,
            omit_think_close: false,
            im_end_after_think: false,
            numbered_call_ids: false,
            stop_with_tool_calls: false,
            nonstream_differs: false,
            stale_chat_template: false,
            broken_marker: false,
            refuse_partial: false,
        }
    }
}

/// The mock could not listen on its port.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on 127.0.0.1:{port}")]
pub struct StartError {
    pub port: u16,
    #[source]
    pub source: std::io::Error,
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
    pub async fn start(opts: MockOptions, port: u16) -> Result<MockServer, StartError> {
        let listen = |source| StartError { port, source };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(listen)?;
        let addr = listener.local_addr().map_err(listen)?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let app = routes::router(routes::AppState {
            opts: Arc::new(opts),
            requests: requests.clone(),
            failed: Arc::default(),
            last_prompt: Arc::default(),
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
