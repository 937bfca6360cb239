//! The saved trace: one request as a replayable JSON file (`s` in the inspector, read by
//! `kimi-tui replay` and `kimi-tui parse --trace`). Documented in the README ("Inspecting a
//! server"); every change to its shape bumps [`VERSION`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Mode;
use crate::trace::{MASKED, Trace};

/// The `format` field of every saved trace.
pub const FORMAT: &str = "kimi-tui-trace";
/// The version this build writes and the newest it reads.
pub const VERSION: u32 = 1;

/// A saved trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceFile {
    /// Always [`FORMAT`].
    pub format: String,
    pub version: u32,
    /// Milliseconds since the Unix epoch.
    pub saved_unix_ms: u64,
    /// The path under the server's base URL (`completions` or `chat/completions`): where
    /// `replay` sends the body.
    pub endpoint: String,
    /// The request and the stream as it arrived, with timings.
    pub trace: Trace,
}

/// Why a file is not a trace this build can read.
#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a kimi-tui trace (its \"format\" is {0:?}, expected {FORMAT:?})")]
    Format(String),
    #[error("trace format version {0} is newer than this build reads ({VERSION}): update kimi-tui")]
    Newer(u32),
    #[error("damaged trace: {0}")]
    Damaged(String),
}

/// JSON `text` with every occurrence of each of `secrets` replaced by `[redacted]`, as written
/// and as escaped in a JSON string.
pub fn mask_secrets(mut text: String, secrets: &[&str]) -> String {
    for s in secrets.iter().filter(|s| s.len() >= 4) {
        // As written in JSON too: a key with a quote or backslash is escaped there.
        let escaped = serde_json::to_string(s).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        for needle in [*s, escaped] {
            if text.contains(needle) {
                text = text.replace(needle, MASKED);
            }
        }
    }
    text
}

/// The endpoint path of a mode.
pub fn endpoint_of(mode: Mode) -> &'static str {
    match mode {
        Mode::Raw => "completions",
        Mode::Chat => "chat/completions",
    }
}

impl TraceFile {
    pub fn new(trace: Trace, saved_unix_ms: u64) -> TraceFile {
        TraceFile {
            format: FORMAT.to_owned(),
            version: VERSION,
            saved_unix_ms,
            endpoint: endpoint_of(trace.mode).to_owned(),
            trace,
        }
    }

    /// The file's text: pretty JSON, with every occurrence of each of `secrets` (the API
    /// key) replaced by `[redacted]`, wherever it hid (a header, an echoed body, an error).
    pub fn to_json(&self, secrets: &[&str]) -> String {
        let mut text = mask_secrets(
            serde_json::to_string_pretty(self).unwrap_or_default(),
            secrets,
        );
        text.push('\n');
        text
    }

    /// Read a saved trace, checking what the inspector and the parser rely on.
    pub fn parse(text: &str) -> Result<TraceFile, TraceFileError> {
        let value: Value = serde_json::from_str(text)?;
        let format = value.get("format").and_then(Value::as_str).unwrap_or("");
        if format != FORMAT {
            return Err(TraceFileError::Format(format.to_owned()));
        }
        let version = value.get("version").and_then(Value::as_u64).unwrap_or(0);
        if version > u64::from(VERSION) {
            return Err(TraceFileError::Newer(
                u32::try_from(version).unwrap_or(u32::MAX),
            ));
        }
        let file: TraceFile = serde_json::from_value(value)?;
        file.check()?;
        Ok(file)
    }

    /// Chunk bounds that fit the data, in order, at character boundaries.
    fn check(&self) -> Result<(), TraceFileError> {
        let t = &self.trace;
        let mut start = 0;
        for (n, c) in t.chunks.iter().enumerate() {
            if c.end < start || c.end > t.data.len() || !t.data.is_char_boundary(c.end) {
                return Err(TraceFileError::Damaged(format!(
                    "chunk {n} ends at byte {} (data is {} bytes, the chunk before ends at {start})",
                    c.end,
                    t.data.len()
                )));
            }
            start = c.end;
        }
        if self.endpoint != endpoint_of(t.mode) {
            return Err(TraceFileError::Damaged(format!(
                "endpoint {:?} does not match mode {}",
                self.endpoint,
                t.mode.as_str()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> TraceFile {
        let mut t = Trace {
            mode: Mode::Chat,
            url: "http://h/v1/chat/completions".into(),
            request: serde_json::json!({"model": "m", "messages": []}),
            ..Trace::default()
        };
        t.push_chunk("{\"a\":1}", 5);
        t.push_chunk("北京", 9);
        TraceFile::new(t, 42)
    }

    #[test]
    fn a_saved_trace_reads_back_the_same() {
        let f = file();
        let text = f.to_json(&[]);
        assert!(text.contains("\"format\": \"kimi-tui-trace\""), "{text}");
        assert!(text.contains("\"version\": 1"), "{text}");
        assert!(
            text.contains("\"endpoint\": \"chat/completions\""),
            "{text}"
        );
        assert_eq!(TraceFile::parse(&text).expect("reads"), f);
    }

    #[test]
    fn secrets_are_masked_wherever_they_are() {
        let mut f = file();
        f.trace.error = Some("401: bad key sk-secret-\"1\"".into());
        f.trace.response_headers = vec![("x-echo".into(), "sk-secret-\"1\"".into())];
        let text = f.to_json(&["sk-secret-\"1\""]);
        assert!(!text.contains("sk-secret"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn other_files_newer_versions_and_damaged_bounds_are_refused() {
        let f = file();
        let mut v: Value = serde_json::from_str(&f.to_json(&[])).expect("json");
        let err = |v: &Value| {
            TraceFile::parse(&v.to_string())
                .expect_err("refused")
                .to_string()
        };
        v["version"] = 2.into();
        assert!(err(&v).contains("newer"), "{}", err(&v));
        v["version"] = 1.into();
        v["format"] = "other".into();
        assert!(err(&v).contains("not a kimi-tui trace"), "{}", err(&v));
        v["format"] = FORMAT.into();
        // Inside 北 (bytes 7..10).
        v["trace"]["chunks"][1]["end"] = 8.into();
        assert!(err(&v).contains("chunk 1 ends at byte 8"), "{}", err(&v));
        assert!(TraceFile::parse("{").is_err());
    }
}
