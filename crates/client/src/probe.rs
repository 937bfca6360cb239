//! One-shot, non-streaming requests, for `kimi-tui doctor`: POST a JSON body, get the JSON
//! answer, with the same client setup, timeouts and error messages as the streaming paths.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;

use super::error::server_message;
use super::http::{self, BodyError};
use super::{BackendError, Endpoint};

/// POST `body` to `{base_url}/{path}` (e.g. `completions`) and decode the JSON answer. The
/// connect timeout and the idle timeout of `ep` apply (the idle timeout to the headers and
/// again to the whole body, which is read up to a cap).
pub async fn post_json(ep: &Endpoint, path: &str, body: &Value) -> Result<Value, BackendError> {
    let client = http::client(ep)?;
    let url = ep.shown_url(path);
    let mut req = client
        .post(ep.request_url(path))
        .header(CONTENT_TYPE, "application/json")
        .json(body);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    let idle = ep.idle_timeout;
    let timeout = |stage: &str| BackendError::Timeout {
        url: url.clone(),
        secs: idle.as_secs(),
        stage: stage.to_owned(),
    };
    let resp = match tokio::time::timeout(idle, req.send()).await {
        Err(_) => return Err(timeout("waiting for response headers")),
        Ok(Err(e)) => return Err(http::send_error(&url, &e, idle)),
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let retry_after_secs = resp
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    if !status.is_success() {
        return Err(BackendError::Http {
            status: status.as_u16(),
            url,
            message: http::error_message(resp, idle).await,
            retry_after_secs,
        });
    }
    let mut text = Vec::new();
    let not_json = |message: String| BackendError::Http {
        status: status.as_u16(),
        url: url.clone(),
        message,
        retry_after_secs: None,
    };
    match http::read_capped(resp, http::JSON_BODY_CAP, idle, &mut text).await {
        Err(BodyError::Timeout) => return Err(timeout("reading the body")),
        Err(BodyError::Transport(e)) => {
            return Err(BackendError::Dropped {
                bytes: text.len() as u64,
                detail: http::chain(&e),
            });
        }
        Ok(true) => {
            return Err(not_json(format!(
                "the answer is larger than {} MiB",
                http::JSON_BODY_CAP >> 20
            )));
        }
        Ok(false) => {}
    }
    serde_json::from_slice(&text).map_err(|e| {
        not_json(format!(
            "the answer is not JSON ({e}): {}",
            server_message(&String::from_utf8_lossy(&text))
        ))
    })
}
