//! The HTTP surface: routes shaped like vLLM's OpenAI server, the API-key check, and delivery of
//! response bodies (delays, batching, dropped connections).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::{Bytes, BytesMut};
use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};

use super::MockOptions;
use super::chat_prompt;
use super::deltas::{Deltas, Mode};
use super::faults::{self, Inject};
use super::k3;
use super::logprobs;
use super::partial;
use super::prompt;
use super::quirks;
use super::request::{self, Common};
use super::script::{self, Reply};
use super::sse::{self, Events, Header};
use super::thinking;
use super::tokens::Tokens;
use kimi_protocol::family::Template;
use kimi_protocol::message::Message;

/// Requests carry whole conversations (file contents in tool results): allow large bodies.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// Without a delay, events are sent in batches of about this many bytes, not one write each.
const BATCH: usize = 16 * 1024;

#[derive(Clone)]
pub(super) struct AppState {
    pub opts: Arc<MockOptions>,
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Generation requests failed so far with `fail_status` (for `fail_times`).
    pub failed: Arc<std::sync::atomic::AtomicU32>,
    /// The prompt served last: the prefix cache's content.
    pub last_prompt: Arc<Mutex<Option<String>>>,
}

pub(super) fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        // vLLM serves these beside `/v1`.
        .route("/tokenize", post(tokenize))
        .route("/detokenize", post(detokenize))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(state.clone(), require_key))
        .layer(middleware::from_fn_with_state(state.clone(), redirect))
        .layer(middleware::from_fn_with_state(state.clone(), slow_body))
        .with_state(state)
}

/// `--redirect-to`: every `/v1` request is sent elsewhere, before anything else is checked.
async fn redirect(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    match &st.opts.redirect_to {
        Some(base) if path == "/v1" || path.starts_with("/v1/") => {
            faults::redirect_response(base, path, st.opts.redirect_status)
        }
        _ => next.run(req).await,
    }
}

/// `--slow-body-bps`: every response body trickles.
async fn slow_body(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    match st.opts.slow_body_bps {
        Some(bps) => resp
            .map(|body| Body::from_stream(faults::throttle(body.into_data_stream().boxed(), bps))),
        None => resp,
    }
}

async fn require_key(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let guarded = path == "/v1" || path.starts_with("/v1/");
    if let Some(key) = st.opts.api_key.as_deref()
        && guarded
    {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            });
        if given.map(str::trim) != Some(key) {
            return faults::error_response(
                StatusCode::UNAUTHORIZED,
                "authentication_error",
                "Incorrect API key provided",
            );
        }
    }
    next.run(req).await
}

async fn not_found(method: Method, uri: Uri) -> Response {
    faults::error_response(
        StatusCode::NOT_FOUND,
        "not_found_error",
        &format!("Not found: {method} {}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    faults::error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        &format!("Method {method} not allowed on {}", uri.path()),
    )
}

async fn models(State(st): State<AppState>) -> Response {
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let data: Vec<Value> = std::iter::once(&st.opts.model)
        .chain(&st.opts.extra_models)
        .map(|id| {
            let mut m = json!({
                "id": id,
                "object": "model",
                "created": created,
                "owned_by": "kimi-tui-mock",
                "root": id,
                "parent": null,
            });
            if let Some(len) = st.opts.max_model_len {
                m["max_model_len"] = json!(len);
            }
            m
        })
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

async fn completions(State(st): State<AppState>, body: Bytes) -> Response {
    let value = match st.accept(&body) {
        Ok(v) => v,
        Err(resp) => return *resp,
    };
    let req = match request::raw(&value) {
        Ok(r) => r,
        Err(e) => return bad_request(&e.to_string()),
    };
    if let Some(refusal) = st.refuse_logprobs(&value) {
        return refusal;
    }
    let mut level = st.token_level(&value, false);
    let k3 = Template::for_model(&st.opts.model) == Template::K3;
    // A prompt that ends with the start of an answer (partial mode) is answered with the
    // rest of the scripted answer, when the scripted answer begins with it.
    let prefix = partial::raw_prefix(&req.prompt).filter(|_| !k3);
    let base = prefix.map_or(req.prompt.as_str(), |p| {
        &req.prompt[..req.prompt.len() - p.len()]
    });
    let continued = prefix.and_then(|p| {
        let conv = prompt::parse(base);
        let mut reply = st.script(&conv.messages, &conv.tools);
        if thinking::thinks(&st.opts, &value) {
            reply = quirks::after_tool_result(&st.opts, reply, &conv.messages);
            thinking::raw(&st.opts, &mut reply, base);
        }
        let full = partial::raw_text(&reply, &st.call_ids(&reply));
        full.starts_with(p).then(|| partial::raw_rest(&full, p))
    });
    let reply = if let Some(reply) = continued {
        reply
    } else if k3 {
        // K3 reads its XTML prompt and answers in XTML, calls included, as one text.
        let conv = k3::parse_prompt(&req.prompt);
        level.split |= logprobs::split_requested(&conv.messages);
        let reply = st.script(&conv.messages, &conv.tools);
        st.k3_text(&reply, k3::prompt_thinks(&req.prompt))
    } else if prompt::ends_inside_call(&req.prompt) {
        Reply::close_open_call()
    } else {
        let conv = prompt::parse(&req.prompt);
        level.split |= logprobs::split_requested(&conv.messages);
        let mut reply = st.script(&conv.messages, &conv.tools);
        if thinking::thinks(&st.opts, &value) {
            reply = quirks::after_tool_result(&st.opts, reply, &conv.messages);
            thinking::raw(&st.opts, &mut reply, &req.prompt);
        }
        if st.opts.broken_marker && prefix.is_none() {
            let ids = st.call_ids(&reply);
            reply = partial::broken(reply, &ids);
        }
        reply
    };
    let mode = Mode::Raw {
        strip_special: req.skip_special_tokens || st.opts.strip_special_tokens,
    };
    let counts = st.prompt_counts(&req.prompt);
    st.respond(reply, mode, &req.common, counts, None, level)
}

async fn chat_completions(State(st): State<AppState>, body: Bytes) -> Response {
    let value = match st.accept(&body) {
        Ok(v) => v,
        Err(resp) => return *resp,
    };
    let req = match request::chat(&value) {
        Ok(r) => r,
        Err(e) => return bad_request(&e.to_string()),
    };
    if let Some(refusal) = st.refuse_logprobs(&value) {
        return refusal;
    }
    let mut level = st.token_level(&value, true);
    level.split |= logprobs::split_requested(&req.messages);
    // Partial mode: the last message is the start of the answer, not part of the question.
    let asked_partial = partial::ChatPartial::of(&value);
    if let Some(spelling) = asked_partial {
        if st.opts.refuse_partial {
            return bad_request(&format!(
                "Unrecognized request argument supplied: {}",
                spelling.field()
            ));
        }
        if let Some(why) = spelling.problem(&value) {
            return bad_request(&why);
        }
    }
    let mut req = req;
    let prefix = asked_partial
        .and_then(|_| req.messages.pop())
        .map(|m| m.text());
    let thinks = thinking::thinks(&st.opts, &value);
    if thinks
        && st.opts.require_reasoning
        && let Some(msg) = thinking::missing_reasoning(&st.opts, &req.messages)
    {
        return bad_request(&msg);
    }
    let mut reply = st.script(&req.messages, &req.tools);
    if thinks {
        reply = quirks::after_tool_result(&st.opts, reply, &req.messages);
    }
    match &prefix {
        Some(p) => reply = partial::chat_rest(reply, p),
        None if st.opts.broken_marker => {
            let ids = st.call_ids(&reply);
            reply = partial::broken(reply, &ids);
        }
        None => {}
    }
    let k3 = Template::for_model(&st.opts.model) == Template::K3;
    // Markers spelled from text reach content as no parser sees them (`level.split`).
    let plan = if k3 && (st.opts.markers_in_content || level.split) {
        // A server without the K3 parsers: the model's XTML arrives as content.
        reply = st.k3_text(&reply, thinks);
        None
    } else if thinks {
        thinking::chat(&st.opts, &mut reply, &st.scripted_ids())
    } else {
        None
    };
    let mode = Mode::Chat {
        // Split markers are no special tokens: no tool parser sees them.
        markers_in_content: st.opts.markers_in_content || level.split,
    };
    // Counted as raw mode counts its prompt: the same request costs the same in both modes,
    // and the prefix cache sees what the template rendered.
    let prompt = chat_prompt::render(&st.opts.model, &value, st.opts.stale_chat_template)
        .unwrap_or_else(|| {
            value
                .get("messages")
                .map(Value::to_string)
                .unwrap_or_default()
        });
    let counts = sse::Counts {
        // Counted by the reasoning parser, which the deltas do not see.
        reasoning: plan.as_ref().map(|p| tokens_of(&p.reasoning)),
        ..st.prompt_counts(&prompt)
    };
    st.respond(reply, mode, &req.common, counts, plan, level)
}

/// The mock's token count of a text: a token per 4 bytes, as for prompts.
fn tokens_of(text: &str) -> u64 {
    text.len().div_ceil(4) as u64
}

/// vLLM's `POST /tokenize` of a chat request: the ids of the prompt the chat endpoint renders.
async fn tokenize(State(st): State<AppState>, body: Bytes) -> Response {
    let Ok(value) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("invalid JSON in the request body");
    };
    let prompt = match value.get("prompt").and_then(Value::as_str) {
        Some(p) => Some(p.to_owned()),
        None => chat_prompt::render(&st.opts.model, &value, st.opts.stale_chat_template),
    };
    let Some(prompt) = prompt else {
        return bad_request("expected \"prompt\" or \"messages\" that the chat template renders");
    };
    let tokens = chat_prompt::tokenize(&prompt);
    axum::Json(json!({"count": tokens.len(), "max_model_len": 262_144, "tokens": tokens}))
        .into_response()
}

/// vLLM's `POST /detokenize`: `{"tokens": [...]}` to `{"prompt": text}`.
async fn detokenize(body: Bytes) -> Response {
    let ids = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        v.get("tokens")?
            .as_array()?
            .iter()
            .map(Value::as_u64)
            .collect::<Option<Vec<u64>>>()
    });
    match ids.as_deref().and_then(chat_prompt::detokenize) {
        Some(prompt) => axum::Json(json!({"prompt": prompt})).into_response(),
        None => bad_request("expected {\"tokens\": [ids]} of this tokenizer"),
    }
}

fn bad_request(msg: &str) -> Response {
    faults::error_response(StatusCode::BAD_REQUEST, "invalid_request_error", msg)
}

/// What one answer does at the token level.
#[derive(Debug, Clone, Copy, Default)]
struct TokenLevel {
    asked: Option<logprobs::Asked>,
    split: bool,
}

impl AppState {
    /// The prompt's tokens, and those a prefix cache holding only the prompt served last
    /// would serve: its common prefix with this one. This prompt is then the one cached.
    fn prompt_counts(&self, prompt: &str) -> sse::Counts {
        let mut last = self
            .last_prompt
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let common = last.as_deref().map_or(0, |old| {
            kimi_protocol::prompt_diff::common_prefix(old, prompt)
        });
        *last = Some(prompt.to_owned());
        sse::Counts {
            prompt: prompt.len() as u64 / 4,
            cached: Some(common as u64 / 4),
            reasoning: None,
        }
    }

    /// `--refuse-logprobs`: a strict server's 400 for a request with token-level fields.
    fn refuse_logprobs(&self, body: &Value) -> Option<Response> {
        (self.opts.refuse_logprobs && logprobs::mentioned(body)).then(|| {
            let field = ["return_tokens_as_token_ids", "top_logprobs", "logprobs"]
                .into_iter()
                .find(|k| body.get(*k).is_some())
                .unwrap_or("logprobs");
            bad_request(&format!("Unrecognized request argument supplied: {field}"))
        })
    }

    /// The token-level data an answer carries: as asked, except when `--chunk-bytes` cuts the
    /// stream across tokens (no event then holds whole tokens to report).
    fn token_level(&self, body: &Value, chat: bool) -> TokenLevel {
        TokenLevel {
            asked: logprobs::asked(body, chat, Template::for_model(&self.opts.model))
                .filter(|_| self.opts.chunk_bytes.is_none()),
            split: self.opts.split_markers,
        }
    }

    /// Parse and record a generation request body; an error response when it must not be served.
    fn accept(&self, body: &[u8]) -> Result<Value, Box<Response>> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            Box::new(bad_request(&format!(
                "invalid JSON in the request body: {e}"
            )))
        })?;
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(value.clone());
        // `fail_times`: the first N fail, the rest are served.
        let fail = self
            .opts
            .fail_status
            .filter(|_| match self.opts.fail_times {
                None => true,
                Some(n) => self.failed.fetch_add(1, Ordering::SeqCst) < n,
            });
        let retry_after = self.opts.retry_after.as_deref();
        match (fail, self.opts.error_body_bytes) {
            (Some(code), Some(n)) => Err(Box::new(faults::huge_error(code, n))),
            (Some(code), None) => Err(Box::new(faults::fail_response_after(code, retry_after))),
            (None, _) => Ok(value),
        }
    }

    /// What the scripted model answers: the calls given by flags, if any, else the script.
    fn script(&self, messages: &[Message], tools: &[Value]) -> Reply {
        let forced: Vec<script::Call> = self
            .opts
            .tool_calls
            .iter()
            .map(|c| script::Call {
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        script::forced_reply(messages, &forced)
            .unwrap_or_else(|| script::reply(messages, &script::declared_names(tools)))
    }

    /// The ids `--tool-call-id` and friends give the calls.
    fn scripted_ids(&self) -> Vec<Option<String>> {
        self.opts.tool_calls.iter().map(|c| c.id.clone()).collect()
    }

    /// A K3 answer as the XTML text the model writes (reasoning first when it thinks), in the
    /// `--k3-shape` asked for.
    fn k3_text(&self, reply: &Reply, thinks: bool) -> Reply {
        let reasoning = thinking::reasoning_for(reply);
        let text = k3::completion(reply, &reasoning, thinks, self.opts.k3_shape.as_deref());
        Reply {
            content: script::Text::Plain(text),
            calls: Vec::new(),
        }
    }

    /// The ids of `reply`'s calls: as scripted, else K3's `NAME_n` for a K3 model (what
    /// Moonshot's API returns), else the K2 form the tokens write.
    fn call_ids(&self, reply: &Reply) -> Vec<Option<String>> {
        let scripted = self.scripted_ids();
        if self.opts.numbered_call_ids {
            return (0..reply.calls.len())
                .map(|i| Some(quirks::numbered_id(i)))
                .collect();
        }
        if Template::for_model(&self.opts.model) != Template::K3 {
            return scripted;
        }
        reply
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                scripted
                    .get(i)
                    .cloned()
                    .flatten()
                    .or_else(|| Some(format!("{}_{i}", c.name)))
            })
            .collect()
    }

    fn respond(
        &self,
        reply: Reply,
        mode: Mode,
        common: &Common,
        counts: sse::Counts,
        plan: Option<thinking::Plan>,
        level: TokenLevel,
    ) -> Response {
        // The leaked markers carry the ids the model wrote (`functions.NAME:IDX`), whatever id
        // the structured copy was given.
        let streaming = common.stream || self.opts.always_stream;
        let reply = if streaming {
            reply
        } else {
            quirks::non_streamed(&self.opts, reply)
        };
        let leak = (self.opts.duplicate_calls && !reply.calls.is_empty())
            .then(|| thinking::markers(&reply, &[]));
        let ids = self.call_ids(&reply);
        let reply = Arc::new(reply);
        let header = Header::new(mode, &self.opts.model, streaming);
        let deltas = |chunk_bytes| {
            Deltas::new(
                Tokens::with_ids(reply.clone(), &ids),
                mode,
                common.max_tokens,
                chunk_bytes,
            )
            .split_markers(level.split)
            .repeat_calls(self.opts.repeat_calls)
            .stop_with_calls(self.opts.stop_with_tool_calls)
        };
        if !streaming {
            let mut value = sse::complete(&header, mode, deltas(None), counts);
            if let Some(plan) = &plan
                && let Some(m) = value.pointer_mut("/choices/0/message")
            {
                m[self.opts.reasoning_key.as_str()] = Value::String(plan.reasoning.clone());
            }
            let body = Bytes::from(value.to_string());
            return self.deliver(
                Box::new(std::iter::once(body)),
                Some(HeaderValue::from_static("application/json")),
                0,
            );
        }
        let events = || -> Box<dyn Iterator<Item = Bytes> + Send> {
            let mut events = Events::new(
                header.clone(),
                mode,
                deltas(self.opts.chunk_bytes),
                common.include_usage,
                counts,
            )
            .with_logprobs(level.asked)
            .with_usage_in_choice(Template::for_model(&self.opts.model) == Template::K3)
            .with_empty_call_deltas(self.opts.empty_tool_call_deltas);
            if plan.is_none() && leak.is_none() {
                return Box::new(events);
            }
            // Thinking: the role chunk, the reasoning deltas, then the answer.
            let mut all: Vec<Bytes> = events.next().into_iter().collect();
            if let Some(plan) = &plan {
                all.extend(thinking::reasoning_events(
                    &header,
                    &self.opts.reasoning_key,
                    plan,
                ));
            }
            all.extend(events);
            if let Some(text) = &leak {
                all = thinking::leak_markers(all, &header, text);
            }
            Box::new(all.into_iter())
        };
        // The events that carry the reasoning lead the stream (after chat's role chunk); counted
        // only when they are paced.
        let reasoning_events = match &plan {
            _ if self.opts.reasoning_ms == 0 => 0,
            Some(plan) => {
                1 + thinking::reasoning_events(&header, &self.opts.reasoning_key, plan).len()
            }
            None => {
                let role = usize::from(matches!(mode, Mode::Chat { .. }));
                role + thinking::deltas_in_reasoning(deltas(self.opts.chunk_bytes))
            }
        };
        let (malformed, error) = (self.opts.malformed_sse, self.opts.error_event);
        let mut events: Box<dyn Iterator<Item = Bytes> + Send> = if malformed || error {
            let at = faults::inject_point(events().count());
            Box::new(Inject::new(events(), at, malformed, error))
        } else {
            Box::new(events())
        };
        if let Some(n) = self.opts.long_line_bytes {
            let chat = matches!(mode, Mode::Chat { .. });
            events = Box::new(std::iter::once(faults::long_event(chat, n)).chain(events));
        }
        let mut content_type = Some(HeaderValue::from_static("text/event-stream; charset=utf-8"));
        if let Some(ct) = &self.opts.content_type {
            content_type = HeaderValue::from_str(ct).ok().filter(|_| !ct.is_empty());
            if ct.contains("html") {
                events = Box::new(std::iter::once(Bytes::from_static(
                    faults::LOGIN_PAGE.as_bytes(),
                )));
            }
        }
        if self.opts.bom {
            events = Box::new(std::iter::once(Bytes::from_static(faults::BOM)).chain(events));
        }
        self.deliver(events, content_type, reasoning_events)
    }

    /// Send `chunks` as the body, with the configured delay between them and the configured drop;
    /// the first `reasoning` chunks share the reasoning's pacing.
    fn deliver(
        &self,
        chunks: Box<dyn Iterator<Item = Bytes> + Send>,
        content_type: Option<HeaderValue>,
        reasoning: usize,
    ) -> Response {
        let (delay, reasoning_ms) = (self.opts.delay_ms, self.opts.reasoning_ms);
        let stream: BoxStream<'static, Bytes> =
            if delay == 0 && (reasoning_ms == 0 || reasoning == 0) {
                stream::iter(Batched {
                    inner: chunks,
                    next: None,
                })
                .boxed()
            } else {
                let base = Duration::from_millis(delay);
                let paced = Duration::from_millis(reasoning_ms) / reasoning.max(1) as u32;
                stream::unfold((chunks, 0usize), move |(mut it, k)| async move {
                    if k > 0 {
                        let extra = if k < reasoning { paced } else { Duration::ZERO };
                        tokio::time::sleep(base + extra).await;
                    }
                    it.next().map(|b| (b, (it, k + 1)))
                })
                .boxed()
            };
        let body = match self.opts.drop_after_bytes {
            Some(limit) => Body::from_stream(faults::drop_after(stream, limit)),
            None => Body::from_stream(stream.map(Ok::<_, std::io::Error>)),
        };
        let mut resp = (StatusCode::OK, body).into_response();
        let headers = resp.headers_mut();
        if let Some(ct) = content_type {
            headers.insert(header::CONTENT_TYPE, ct);
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        resp
    }
}

/// Joins consecutive events into writes of about [`BATCH`] bytes.
struct Batched {
    inner: Box<dyn Iterator<Item = Bytes> + Send>,
    next: Option<Bytes>,
}

impl Iterator for Batched {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let first = self.next.take().or_else(|| self.inner.next())?;
        if first.len() >= BATCH {
            return Some(first);
        }
        let mut buf = BytesMut::with_capacity(BATCH);
        buf.extend_from_slice(&first);
        while buf.len() < BATCH {
            match self.inner.next() {
                Some(b) if buf.len() + b.len() <= BATCH => buf.extend_from_slice(&b),
                Some(b) => {
                    self.next = Some(b);
                    break;
                }
                None => break,
            }
        }
        Some(buf.freeze())
    }
}
