//! What both modes share: the HTTP client, one streamed POST up to its headers (the body is
//! `reader.rs`'s), payload decoding, and turning failures into [`BackendError`]s.

use std::sync::Once;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::connect::ConnectCause;
use super::error::{CONNECTING, server_message};
use super::events::Events;
use super::url::{CrossOrigin, redirect_policy};
use super::{BackendError, Endpoint, ModelInfo, ModelList};
use kimi_protocol::reasoning_resent::ReasoningResent;
use kimi_protocol::trace::REDACTED;
use kimi_protocol::{RequestSent, StreamEvent, StreamMeta, Usage};

/// Most bytes read of an error body (or of a body that is not the expected stream): the
/// server's message is at the start, and a 200 MB error page must not be held in memory.
pub(super) const ERROR_BODY_CAP: usize = 64 << 10;
/// Most bytes read of a JSON answer (the model list, a non-streamed completion).
pub(super) const JSON_BODY_CAP: usize = 16 << 20;

/// One request's context.
pub(super) struct Call<'a> {
    pub client: &'a reqwest::Client,
    pub endpoint: &'a Endpoint,
    pub cancel: &'a CancellationToken,
}

/// How a stream ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// `data: [DONE]`.
    Done,
    /// The body ended cleanly without `[DONE]`.
    Eof,
    /// The user cancelled; reading stopped.
    Cancelled,
}

pub(super) fn client(ep: &Endpoint) -> Result<reqwest::Client, BackendError> {
    http_client(ep.connect_timeout)
}

/// An HTTP client with the project's TLS provider and redirect policy (cross-origin redirects
/// refused), for every HTTP peer: the model server, and MCP servers over Streamable HTTP.
pub fn http_client(connect_timeout: Duration) -> Result<reqwest::Client, BackendError> {
    static PROVIDER: Once = Once::new();
    // reqwest is built without a bundled crypto provider; ring is installed once for the process.
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(redirect_policy())
        .build()
        .map_err(|e| BackendError::Setup(format!("cannot create the HTTP client: {}", chain(&e))))
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An error with its sources, on one line.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let s_text = s.to_string();
        if !out.contains(&s_text) {
            out.push_str(": ");
            out.push_str(&s_text);
        }
        src = s.source();
    }
    out
}

/// Why `e`, from sending a request to `url`, sent nothing: `connect` is the connect timeout (the
/// only timeout the client itself enforces; the idle one is the caller's).
pub(super) fn send_error(url: &str, e: &reqwest::Error, connect: Duration) -> BackendError {
    if let Some(refused) = cross_origin(e) {
        return BackendError::Redirected {
            from: refused.from.clone(),
            to: refused.to.clone(),
        };
    }
    if e.is_builder() {
        // A URL reqwest will not send to: most often a base_url without its scheme.
        return BackendError::Setup(format!(
            "cannot send to {url}: base_url needs http:// or https:// in front ({})",
            chain(e)
        ));
    }
    if e.is_timeout() {
        BackendError::Timeout {
            url: url.to_owned(),
            secs: connect.as_secs(),
            stage: CONNECTING.to_owned(),
        }
    } else {
        BackendError::Connect {
            url: url.to_owned(),
            cause: ConnectCause::of(e),
            detail: chain(e),
        }
    }
}

/// The redirect our policy refused, if that is what `e` is.
fn cross_origin(e: &reqwest::Error) -> Option<&CrossOrigin> {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(c) = s.downcast_ref::<CrossOrigin>() {
            return Some(c);
        }
        src = s.source();
    }
    None
}

/// Why a capped body read stopped early.
pub(super) enum BodyError {
    Timeout,
    Transport(reqwest::Error),
}

/// Read `resp`'s body into `out`, at most `cap` bytes (the rest is never read), all of it
/// within `deadline`: a body trickled a byte a second cannot hold a command forever. `out`
/// keeps what arrived even when this fails. `Ok(true)` when the body was longer than `cap`.
pub(super) async fn read_capped(
    resp: reqwest::Response,
    cap: usize,
    deadline: Duration,
    out: &mut Vec<u8>,
) -> Result<bool, BodyError> {
    let mut body = resp.bytes_stream();
    let read = async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(BodyError::Transport)?;
            let room = cap - out.len();
            if chunk.len() > room {
                out.extend_from_slice(&chunk[..room]);
                return Ok(true);
            }
            out.extend_from_slice(&chunk);
        }
        Ok(false)
    };
    tokio::time::timeout(deadline, read)
        .await
        .unwrap_or(Err(BodyError::Timeout))
}

/// The server's message in an error body: at most [`ERROR_BODY_CAP`] bytes read, within the
/// idle timeout; what arrived before a timeout still counts.
pub(super) async fn error_message(resp: reqwest::Response, idle: Duration) -> String {
    let mut body = Vec::new();
    let result = read_capped(resp, ERROR_BODY_CAP, idle, &mut body).await;
    if body.is_empty() && matches!(result, Err(BodyError::Timeout)) {
        return format!("(no error body within {} s)", idle.as_secs());
    }
    server_message(&String::from_utf8_lossy(&body))
}

/// Whether a Content-Type names an event stream (parameters such as `charset` allowed).
fn is_event_stream(content_type: &str) -> bool {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    mime.eq_ignore_ascii_case("text/event-stream")
}

/// What a raw-mode request sends besides its body: the rendered prompt, and where in it
/// special-token strings came from text rather than from the template.
pub(super) struct Prompt {
    pub text: String,
    pub(crate) text_markers: Vec<(usize, usize)>,
    /// What it was rendered from (see [`RequestSent::source`]).
    pub(crate) source: Option<Value>,
    /// The edited start of the answer that ends `text` (see [`RequestSent::prefix`]).
    pub(crate) prefix: Option<String>,
}

/// A streamed POST ready to go, and the [`RequestSent`] that reports it: the body as sent, the
/// headers with the key masked.
pub(super) fn request(
    call: &Call<'_>,
    path: &str,
    body: Value,
    prompt: Option<Prompt>,
    reasoning_resent: Option<ReasoningResent>,
) -> (reqwest::RequestBuilder, RequestSent) {
    let ep = call.endpoint;
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("Accept".to_owned(), "text/event-stream".to_owned()),
    ];
    let mut req = call
        .client
        .post(ep.request_url(path))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .json(&body);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
        headers.push(("Authorization".into(), REDACTED.into()));
    }
    let (prompt, prompt_text_markers, source, prefix) = match prompt {
        Some(p) => (Some(p.text), p.text_markers, p.source, p.prefix),
        None => (None, Vec::new(), None, None),
    };
    let sent = RequestSent {
        mode: ep.mode,
        url: ep.shown_url(path),
        headers,
        body,
        prompt,
        prompt_text_markers,
        source,
        prefix,
        started_unix_ms: unix_ms(),
        reasoning_resent,
    };
    (req, sent)
}

/// What waiting for the answer's headers came to: the events that report them, and the body
/// to read as SSE, or how the request ended without one.
pub(super) struct Opened {
    pub events: Vec<StreamEvent>,
    pub body: Result<reqwest::Response, Result<End, BackendError>>,
}

/// What [`open`] needs of the request, owned: it runs as the turn's stream polls it.
pub(super) struct Opening {
    pub url: String,
    pub idle: Duration,
    pub connect: Duration,
    pub api_key: Option<String>,
    pub cancel: CancellationToken,
}

/// Send `req` and wait for the headers (within the idle timeout; a cancel stops the wait). A
/// failure status reads the server's message; a body that is not an event stream says what
/// came instead.
pub(super) async fn open(req: reqwest::RequestBuilder, o: Opening) -> Opened {
    let mut events = Vec::new();
    let body = open_inner(req, &o, &mut events).await;
    Opened { events, body }
}

async fn open_inner(
    req: reqwest::RequestBuilder,
    o: &Opening,
    events: &mut Vec<StreamEvent>,
) -> Result<reqwest::Response, Result<End, BackendError>> {
    let (url, idle) = (&o.url, o.idle);
    let resp = tokio::select! {
        _ = o.cancel.cancelled() => return Err(Ok(End::Cancelled)),
        r = tokio::time::timeout(idle, req.send()) => match r {
            Err(_) => {
                return Err(Err(BackendError::Timeout {
                    url: url.clone(),
                    secs: idle.as_secs(),
                    stage: "waiting for response headers".to_owned(),
                }));
            }
            Ok(Err(e)) => return Err(Err(send_error(url, &e, o.connect))),
            Ok(Ok(resp)) => resp,
        },
    };
    let status = resp.status();
    events.push(StreamEvent::Response {
        status: status.as_u16(),
    });
    // For the inspector: as received, secrets masked before they reach any trace.
    let received = resp.headers().iter().map(|(k, v)| {
        (
            k.as_str().to_owned(),
            String::from_utf8_lossy(v.as_bytes()).into_owned(),
        )
    });
    events.push(StreamEvent::Meta(StreamMeta::Headers(
        kimi_protocol::trace::redact_headers(received, o.api_key.as_deref()),
    )));
    if !status.is_success() {
        let retry_after_secs = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(super::retry::parse_retry_after);
        return Err(Err(BackendError::Http {
            status: status.as_u16(),
            url: url.clone(),
            message: error_message(resp, idle).await,
            retry_after_secs,
        }));
    }
    // A missing Content-Type is let through (the events decide); any other type than an event
    // stream is a proxy's page or a server ignoring `stream: true`: say what came instead.
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    if let Some(ct) = content_type.filter(|ct| !is_event_stream(ct)) {
        let mut body = Vec::new();
        let _ = read_capped(resp, ERROR_BODY_CAP, idle, &mut body).await;
        let start: String = server_message(&String::from_utf8_lossy(&body))
            .chars()
            .take(200)
            .collect();
        return Err(Err(BackendError::NotEventStream {
            content_type: kimi_protocol::sanitize::for_terminal(&ct).into_owned(),
            body: start,
        }));
    }
    Ok(resp)
}

/// The parts of an SSE payload both endpoints share, around each endpoint's own `choices`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub(super) struct Payload<C> {
    #[serde(default = "Vec::new")]
    pub choices: Vec<C>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    object: Option<String>,
}

/// A choice of either endpoint: where it keeps the finish reason and (Moonshot) the usage.
pub(super) trait StreamChoice {
    fn take_finish_reason(&mut self) -> Option<String>;
    fn usage(&self) -> Option<Usage>;
}

/// What both modes learn from every payload besides their own content.
#[derive(Debug, Default)]
pub(super) struct Progress {
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    pub warnings: Vec<String>,
}

impl Progress {
    /// Decode one payload (once), record its usage and finish reason, and return its first
    /// choice; `None` for a malformed payload (skipped with a warning) or one without choices.
    pub(crate) fn accept<'a, C: Deserialize<'a> + StreamChoice>(
        &mut self,
        data: &'a str,
        out: &mut Events,
    ) -> Result<Option<C>, BackendError> {
        let Some(payload) = decode::<C>(data, &mut self.warnings, out)? else {
            return Ok(None);
        };
        let mut choice = payload.choices.into_iter().next();
        // Usage sits at the top level, or inside the choice (Moonshot's API).
        if let Some(u) = payload.usage.or_else(|| choice.as_ref().and_then(C::usage)) {
            self.usage = Some(u);
            out.push(StreamEvent::Usage(u));
        }
        if let Some(r) = choice.as_mut().and_then(C::take_finish_reason) {
            out.push(StreamEvent::Meta(StreamMeta::FinishReason(r.clone())));
            self.finish_reason = Some(r);
        }
        Ok(choice)
    }
}

/// Decode one SSE payload, once. A malformed one is skipped with a warning (`Ok(None)`); an
/// `{"error": ...}` event (or vLLM's `{"object": "error"}`) ends the stream (`Err`).
fn decode<'a, C: Deserialize<'a>>(
    data: &'a str,
    warnings: &mut Vec<String>,
    out: &mut Events,
) -> Result<Option<Payload<C>>, BackendError> {
    match serde_json::from_str::<Payload<C>>(data) {
        Err(e) => {
            let w = format!("malformed SSE event skipped ({e}): {}", preview(data));
            out.push(StreamEvent::Warning(w.clone()));
            warnings.push(w);
            Ok(None)
        }
        Ok(p)
            if p.error.as_ref().is_some_and(|e| !e.is_null())
                || p.object.as_deref() == Some("error") =>
        {
            Err(BackendError::ServerEvent {
                message: server_message(data),
            })
        }
        Ok(p) => Ok(Some(p)),
    }
}

/// The start of a payload, for a one-line warning.
fn preview(data: &str) -> String {
    const MAX: usize = 120;
    match data.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &data[..i]),
        None => data.to_owned(),
    }
}

/// How the stream ended: the turn's error (a clean end of the body before the answer finished
/// counts as a drop, after `bytes` of chunks) and whether the user cancelled. Reported to the
/// listener as `StreamEvent::Finished`.
pub(super) fn outcome(
    end: Result<End, BackendError>,
    finished: bool,
    bytes: u64,
    started: Instant,
    out: &mut Events,
) -> (Option<BackendError>, bool) {
    let (error, cancelled) = match end {
        Ok(End::Cancelled) => (None, true),
        Ok(End::Eof) if !finished => (
            Some(BackendError::Dropped {
                bytes,
                detail: "the server closed the stream before it finished".into(),
            }),
            false,
        ),
        Ok(_) => (None, false),
        Err(e) => (Some(e), false),
    };
    if cancelled {
        out.push(StreamEvent::Meta(StreamMeta::Cancelled));
    }
    out.push(StreamEvent::Finished {
        total_us: started.elapsed().as_micros() as u64,
        error: error.as_ref().map(BackendError::with_detail),
    });
    (error, cancelled)
}

/// GET `{base_url}/models`: headers and the whole body within the idle timeout each. The
/// list is bounded as [`parse_models`] says, keeping the endpoint's model and `wanted`.
pub(super) async fn list_models(
    client: &reqwest::Client,
    ep: &Endpoint,
    wanted: &[&str],
) -> Result<ModelList, BackendError> {
    let url = ep.shown_url("models");
    let idle = ep.idle_timeout;
    let timeout = |stage: &str| BackendError::Timeout {
        url: url.clone(),
        secs: idle.as_secs(),
        stage: stage.to_owned(),
    };
    let mut req = client.get(ep.request_url("models"));
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    let resp = tokio::time::timeout(idle, req.send())
        .await
        .map_err(|_| timeout("listing models"))?
        .map_err(|e| send_error(&url, &e, ep.connect_timeout))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(BackendError::Http {
            status: status.as_u16(),
            url: url.clone(),
            message: error_message(resp, idle).await,
            retry_after_secs: None,
        });
    }
    let mut body = Vec::new();
    let not_json = |message: String| BackendError::Http {
        status: status.as_u16(),
        url: url.clone(),
        message,
        retry_after_secs: None,
    };
    match read_capped(resp, JSON_BODY_CAP, idle, &mut body).await {
        Err(BodyError::Timeout) => return Err(timeout("reading the model list")),
        Err(BodyError::Transport(e)) => {
            return Err(BackendError::Dropped {
                bytes: body.len() as u64,
                detail: chain(&e),
            });
        }
        Ok(true) => {
            return Err(not_json(format!(
                "the model list is larger than {} MiB",
                JSON_BODY_CAP >> 20
            )));
        }
        Ok(false) => {}
    }
    parse_models(&body, &ep.model, wanted)
        .map_err(|e| not_json(format!("the model list is not JSON: {e}")))
}

/// Most `/models` entries kept: a server may list hundreds of thousands (a 16 MiB body holds
/// 600,000), which are counted, not held.
pub const MODELS_KEPT: usize = 1000;

/// The model list in a `/models` body: the first [`MODELS_KEPT`] entries with an id, plus any
/// later one named `model` or one of `wanted` (so that checking a name never depends on where
/// the server lists it); the rest counted. Read entry by entry: no tree of the whole body is
/// built. A body that is JSON but not `{"data": [...]}` lists nothing.
pub(super) fn parse_models(
    body: &[u8],
    model: &str,
    wanted: &[&str],
) -> Result<ModelList, serde_json::Error> {
    use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::fmt;

    /// One entry as read: its id and the lengths it names; `None` for one without an id.
    struct Entry(Option<ModelInfo>);
    impl<'de> Deserialize<'de> for Entry {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Entry;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a model")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
                    let mut id = None;
                    // max_model_len (vLLM), context_length, context_window: the first present.
                    let mut lengths: [Option<Option<u64>>; 3] = [None; 3];
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        let slot = match key.as_ref() {
                            "id" => {
                                id = map.next_value::<Value>()?.as_str().map(str::to_owned);
                                continue;
                            }
                            "max_model_len" => 0,
                            "context_length" => 1,
                            "context_window" => 2,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                                continue;
                            }
                        };
                        lengths[slot] = Some(map.next_value::<Value>()?.as_u64());
                    }
                    let context_length = lengths.into_iter().find_map(|l| l.flatten());
                    Ok(Entry(id.map(|id| ModelInfo {
                        id,
                        context_length: context_length.filter(|n| *n > 0),
                    })))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entry, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_str<E>(self, _: &str) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_unit<E>(self) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// The `data` array, kept as [`parse_models`] says; anything else lists nothing.
    struct Data<'a> {
        model: &'a str,
        wanted: &'a [&'a str],
    }
    impl<'de> Visitor<'de> for Data<'_> {
        type Value = ModelList;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of models")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ModelList, A::Error> {
            let mut list = ModelList::default();
            while let Some(Entry(entry)) = seq.next_element::<Entry>()? {
                let Some(m) = entry else { continue };
                if list.models.len() < MODELS_KEPT
                    || m.id == self.model
                    || self.wanted.contains(&m.id.as_str())
                {
                    list.models.push(m);
                } else {
                    list.unlisted += 1;
                }
            }
            Ok(list)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelList, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(ModelList::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_unit<E>(self) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
    }
    struct DataSeed<'a>(Data<'a>);
    impl<'de> de::DeserializeSeed<'de> for DataSeed<'_> {
        type Value = ModelList;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<ModelList, D::Error> {
            d.deserialize_any(self.0)
        }
    }

    /// The body: `data` read as above, every other member skipped.
    struct Body<'a> {
        model: &'a str,
        wanted: &'a [&'a str],
    }
    impl<'de> Visitor<'de> for Body<'_> {
        type Value = ModelList;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelList, A::Error> {
            let mut list = ModelList::default();
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "data" {
                    list = map.next_value_seed(DataSeed(Data {
                        model: self.model,
                        wanted: self.wanted,
                    }))?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(list)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ModelList, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(ModelList::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
        fn visit_unit<E>(self) -> Result<ModelList, E> {
            Ok(ModelList::default())
        }
    }

    let mut de = serde_json::Deserializer::from_slice(body);
    let list = (&mut de).deserialize_any(Body { model, wanted })?;
    de.end()?;
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Choice {
        #[serde(default)]
        text: String,
        #[serde(default)]
        finish_reason: Option<String>,
        #[serde(default)]
        usage: Option<Usage>,
    }

    impl StreamChoice for Choice {
        fn take_finish_reason(&mut self) -> Option<String> {
            self.finish_reason.take()
        }
        fn usage(&self) -> Option<Usage> {
            self.usage
        }
    }

    #[test]
    fn a_huge_model_list_is_counted_not_kept_and_named_models_are_found_anywhere() {
        const LISTED: usize = 600_000;
        let mut body = String::from(r#"{"object":"list","data":["#);
        for i in 0..LISTED {
            if i > 0 {
                body.push(',');
            }
            body.push_str(&format!(
                r#"{{"id":"m{i}","object":"model","max_model_len":{}}}"#,
                i + 1
            ));
        }
        body.push_str(r#",{"object":"model"},7]}"#);
        let list = parse_models(body.as_bytes(), "m599999", &["m400000"]).expect("parses");
        assert_eq!(list.models.len(), MODELS_KEPT + 2);
        assert_eq!(list.unlisted, LISTED - MODELS_KEPT - 2);
        assert_eq!(list.total(), LISTED);
        assert_eq!(list.models[0].id, "m0");
        assert_eq!(list.models[0].context_length, Some(1));
        let found: Vec<&str> = list.models[MODELS_KEPT..]
            .iter()
            .map(|m| m.id.as_str())
            .collect();
        assert_eq!(found, ["m400000", "m599999"]);
        // The shapes the old reader accepted still read the same.
        let small = r#"{"data":[{"id":"a","context_length":0,"context_window":9},{"id":"b","max_model_len":0,"context_length":5},{"id":"c","context_window":7}]}"#;
        let list = parse_models(small.as_bytes(), "a", &[]).expect("parses");
        let got: Vec<(&str, Option<u64>)> = list
            .models
            .iter()
            .map(|m| (m.id.as_str(), m.context_length))
            .collect();
        assert_eq!(got, [("a", None), ("b", None), ("c", Some(7))]);
        assert_eq!(parse_models(b"[1,2]", "a", &[]).expect("json").total(), 0);
        assert_eq!(
            parse_models(br#"{"data":{"id":"x"}}"#, "a", &[])
                .expect("json")
                .total(),
            0
        );
        assert!(parse_models(b"{\"data\": [", "a", &[]).is_err());
        assert!(parse_models(b"{} x", "a", &[]).is_err());
    }

    #[test]
    fn progress_reads_usage_from_either_place_and_the_finish_reason() {
        let mut p = Progress::default();
        let mut sink = Events::default();
        let c = p
            .accept::<Choice>(r#"{"choices":[{"text":"hi"}],"usage":null}"#, &mut sink)
            .expect("ok")
            .expect("a choice");
        assert_eq!(c.text, "hi");
        // Moonshot: usage inside the choice, with the finish reason.
        let moonshot = r#"{"choices":[{"text":"","finish_reason":"stop","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}]}"#;
        p.accept::<Choice>(moonshot, &mut sink).expect("ok");
        assert_eq!(p.finish_reason.as_deref(), Some("stop"));
        assert_eq!(p.usage.map(|u| u.total_tokens), Some(5));
        // vLLM: usage at the top level, no choices.
        let vllm =
            r#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}}"#;
        assert!(p.accept::<Choice>(vllm, &mut sink).expect("ok").is_none());
        assert_eq!(p.usage.map(|u| u.total_tokens), Some(10));
        assert!(
            p.accept::<Choice>("{\"choices\": [", &mut sink)
                .expect("skipped")
                .is_none()
        );
        assert_eq!(p.warnings.len(), 1);
        let err = p.accept::<Choice>(r#"{"object":"error","message":"boom"}"#, &mut sink);
        assert!(matches!(err, Err(BackendError::ServerEvent { message }) if message == "boom"));
        assert_eq!(
            sink.into_vec()
                .iter()
                .filter(|e| matches!(e, StreamEvent::Usage(_)))
                .count(),
            2
        );
    }
}
