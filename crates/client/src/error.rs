//! Backend failures, each with one clear message that carries the server's own words.

use serde::{Deserialize, Serialize};

use crate::connect::{ConnectCause, what_failed, what_to_try};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum BackendError {
    /// The request could not be sent (DNS, refused, TLS). One line says what failed and what
    /// to try; `detail`, the HTTP library's whole chain, goes to the inspector and the log.
    #[error("{}. {}", what_failed(url, *cause, detail), what_to_try(*cause))]
    Connect {
        url: String,
        #[serde(default)]
        cause: ConnectCause,
        detail: String,
    },
    /// No headers, no next event, or not the whole body, within the idle timeout (or no
    /// connection within the connect timeout: stage `connecting`).
    #[error("{}", timeout_message(url, *secs, stage, true))]
    Timeout {
        url: String,
        secs: u64,
        stage: String,
    },
    /// A non-success status. `message` is the server's own text.
    #[error("{}", http_message(*status, url, message, *retry_after_secs))]
    Http {
        status: u16,
        url: String,
        message: String,
        retry_after_secs: Option<u64>,
    },
    /// An `{"error": ...}` event inside the stream.
    #[error("the server reported an error mid-stream: {message}")]
    ServerEvent { message: String },
    /// The connection broke before the stream finished.
    #[error("the connection dropped mid-stream after {bytes} bytes: {detail}")]
    Dropped { bytes: u64, detail: String },
    /// The request could not be built (bad base URL, unusable client).
    #[error("{0}")]
    Setup(String),
    /// A success status whose body is not an event stream (a proxy's login page).
    #[error("the server answered {content_type}, not an event stream: {body}")]
    NotEventStream { content_type: String, body: String },
    /// A redirect to another origin, refused before anything was sent there.
    #[error(
        "the server at {from} redirected the request to {to}, another origin: refused, nothing was sent there (set base_url to the new address if the move is genuine)"
    )]
    Redirected { from: String, to: String },
    /// The stream arrived but cannot be read as events (an event too large, not UTF-8).
    #[error("unreadable event stream after {bytes} bytes: {detail}")]
    Unreadable { bytes: u64, detail: String },
}

fn timeout_message(url: &str, secs: u64, stage: &str, advice: bool) -> String {
    if stage == CONNECTING {
        let target = crate::url::host_and_port(url).unwrap_or_else(|| url.to_owned());
        let advice = if advice {
            ". Is the host reachable? Check with `kimi-tui doctor`."
        } else {
            ""
        };
        format!("Cannot connect to {target} (no answer within {secs} s){advice}")
    } else {
        format!("no answer from {url} for {secs} s ({stage})")
    }
}

/// The [`BackendError::Timeout`] stage of a connection never made.
pub(crate) const CONNECTING: &str = "connecting";

fn http_message(status: u16, url: &str, message: &str, retry: Option<u64>) -> String {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let hint = match status {
        401 | 403 => " (check the API key: the profile's api_key_env names the variable)",
        404 => " (check base_url: it should end in /v1, and the model name)",
        _ => "",
    };
    let mut out = format!("HTTP {status} {reason} from {url}: {message}{hint}");
    if let Some(s) = retry {
        out.push_str(&format!("; retry after {s} s"));
    }
    out
}

impl BackendError {
    /// What failed, without the advice [`Display`](std::fmt::Display) adds to a connection
    /// failure (for a caller that gives its own, such as `doctor`).
    pub fn what_failed(&self) -> String {
        match self {
            BackendError::Connect { url, cause, detail } => what_failed(url, *cause, detail),
            BackendError::Timeout { url, secs, stage } => timeout_message(url, *secs, stage, false),
            _ => self.to_string(),
        }
    }

    /// The one line, then the HTTP library's error chain where there is one: for the trace
    /// (the inspector) and the log.
    pub fn with_detail(&self) -> String {
        match self {
            BackendError::Connect { detail, .. } => format!("{self}\ncause: {detail}"),
            _ => self.to_string(),
        }
    }

    /// Whether what arrived before it should be kept as a partial answer.
    pub fn is_mid_stream(&self) -> bool {
        matches!(
            self,
            BackendError::Dropped { .. }
                | BackendError::ServerEvent { .. }
                | BackendError::Timeout { .. }
                | BackendError::Unreadable { .. }
        )
    }
}

/// The server's message in an error body: `{"error": {"message"}}`, `{"error": "..."}`,
/// `{"message": ...}` (vLLM's `{"object": "error", ...}`), `{"detail": ...}`, or the text itself.
/// Escape sequences and control characters are removed: it is shown on a terminal.
pub(crate) fn server_message(body: &str) -> String {
    let text = pick_message(body);
    let clean = kimi_protocol::sanitize::for_terminal(&text);
    // One line: a message is printed as one error line, and a short one.
    const MAX: usize = 1000;
    let one_line = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

fn pick_message(body: &str) -> String {
    let text = body.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let pick = |v: &serde_json::Value| -> Option<String> {
            match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Object(m) => m
                    .get("message")
                    .or_else(|| m.get("detail"))
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)),
                _ => None,
            }
        };
        if let Some(m) = v.get("error").and_then(pick).or_else(|| pick(&v)) {
            return m;
        }
    } else if text.starts_with('{') {
        // JSON cut short (an error body is read up to a cap) or broken: its message if it
        // arrived whole, else a summary, never its raw start.
        return partial_message(text).unwrap_or_else(|| {
            format!(
                "an error body of {} bytes that is not complete JSON, without a message",
                text.len()
            )
        });
    }
    const MAX: usize = 300;
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None if one_line.is_empty() => "(empty body)".to_owned(),
        None => one_line,
    }
}

/// The first `"message"`, `"detail"` or `"error"` string of a JSON text that does not parse
/// as a whole, if that string is complete.
fn partial_message(text: &str) -> Option<String> {
    ["\"message\"", "\"detail\"", "\"error\""]
        .iter()
        .find_map(|key| {
            text.match_indices(key).find_map(|(i, _)| {
                let value = text[i + key.len()..].trim_start().strip_prefix(':')?;
                // The first value only: what follows it may be cut anywhere.
                let mut values = serde_json::Deserializer::from_str(value).into_iter::<String>();
                values.next()?.ok()
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_cut_short_gives_its_message_or_a_summary() {
        let cut = r#"{"error":{"message":"mock failure: HTTP 500","type":"server_error","code":500},"padding":"    "#;
        assert_eq!(server_message(cut), "mock failure: HTTP 500");
        assert_eq!(
            server_message(r#"{"detail": "Not \"here\"", "x": [1, "#),
            "Not \"here\""
        );
        assert_eq!(server_message(r#"{"error": "quota", "#), "quota");
        // The message itself cut: a summary, not the raw start.
        let s = server_message(r#"{"error":{"message":"mock fail"#);
        assert_eq!(
            s,
            "an error body of 30 bytes that is not complete JSON, without a message"
        );
        assert!(!server_message(r#"{"padding": "   "#).contains("padding"));
    }

    #[test]
    fn server_messages_are_found_in_every_shape() {
        assert_eq!(
            server_message(r#"{"error": {"message": "bad key", "code": 401}}"#),
            "bad key"
        );
        assert_eq!(server_message(r#"{"error": "nope"}"#), "nope");
        assert_eq!(
            server_message(r#"{"object": "error", "message": "model not found"}"#),
            "model not found"
        );
        assert_eq!(server_message(r#"{"detail": "Not Found"}"#), "Not Found");
        assert_eq!(
            server_message("<html>\n  bad gateway\n</html>"),
            "<html> bad gateway </html>"
        );
        assert_eq!(server_message(""), "(empty body)");
        assert_eq!(
            server_message("{\"error\": \"a\\u001b[2Jb\"}"),
            "ab",
            "no escape sequence from a server reaches the terminal"
        );
        let long = format!("{{\"error\": \"{}\"}}", "é".repeat(5000));
        assert_eq!(server_message(&long).chars().count(), 1001);
        assert_eq!(server_message("{\"detail\": \"a\\n\\nb\"}"), "a b");
    }

    #[test]
    fn http_errors_read_well() {
        let e = BackendError::Http {
            status: 429,
            url: "http://h/v1/completions".into(),
            message: "slow down".into(),
            retry_after_secs: Some(2),
        };
        assert_eq!(
            e.to_string(),
            "HTTP 429 Too Many Requests from http://h/v1/completions: slow down; retry after 2 s"
        );
        let e = BackendError::Http {
            status: 401,
            url: "u".into(),
            message: "Incorrect API key provided".into(),
            retry_after_secs: None,
        };
        assert!(e.to_string().contains("Incorrect API key provided"));
        assert!(e.to_string().contains("api_key_env"));
    }
}
