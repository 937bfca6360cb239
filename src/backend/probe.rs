//! One-shot, non-streaming requests, for `kimi-tui doctor`: POST a JSON body, get the JSON
//! answer, with the same client setup, timeouts and error messages as the streaming paths.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;

use super::error::server_message;
use super::{BackendError, Endpoint};

/// POST `body` to `{base_url}/{path}` (e.g. `completions`) and decode the JSON answer. The
/// connect timeout and the idle timeout of `ep` apply (the idle timeout to the headers and
/// again to the body).
pub async fn post_json(ep: &Endpoint, path: &str, body: &Value) -> Result<Value, BackendError> {
    let client = super::http::client(ep)?;
    let url = format!("{}/{path}", ep.base_url);
    let mut req = client
        .post(&url)
        .header(CONTENT_TYPE, "application/json")
        .json(body);
    if let Some(key) = &ep.api_key {
        req = req.header(AUTHORIZATION, format!("Bearer {key}"));
    }
    let timeout = |stage: &str| BackendError::Timeout {
        url: url.clone(),
        secs: ep.idle_timeout.as_secs(),
        stage: stage.to_owned(),
    };
    let resp = match tokio::time::timeout(ep.idle_timeout, req.send()).await {
        Err(_) => return Err(timeout("waiting for response headers")),
        Ok(Err(e)) if e.is_timeout() => return Err(timeout("connecting")),
        Ok(Err(e)) => {
            return Err(BackendError::Connect {
                url: url.clone(),
                detail: chain(&e),
            });
        }
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    let retry_after_secs = resp
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let text = match tokio::time::timeout(ep.idle_timeout, resp.text()).await {
        Err(_) => return Err(timeout("reading the body")),
        Ok(Err(e)) => {
            return Err(BackendError::Dropped {
                bytes: 0,
                detail: chain(&e),
            });
        }
        Ok(Ok(t)) => t,
    };
    if !status.is_success() {
        return Err(BackendError::Http {
            status: status.as_u16(),
            url,
            message: server_message(&text),
            retry_after_secs,
        });
    }
    serde_json::from_str(&text).map_err(|e| BackendError::Http {
        status: status.as_u16(),
        url: url.clone(),
        message: format!("the answer is not JSON ({e}): {}", server_message(&text)),
        retry_after_secs: None,
    })
}

/// An error with its sources, on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        src = s.source();
    }
    out
}
