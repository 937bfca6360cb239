//! The secrets a screen must keep out of what it writes (the profiles' API keys), behind a
//! type that can only check text for them and mask them: the UI holds one of these, never
//! the keys themselves.

use std::sync::Arc;

use kimi_protocol::trace_file::TraceFile;

/// The API keys of every profile, to be kept out of saved files. Its `Debug` never shows them.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Arc<[String]>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut kept: Vec<String> = Vec::new();
        for s in secrets {
            if !s.is_empty() && !kept.contains(&s) {
                kept.push(s);
            }
        }
        Redactor {
            secrets: kept.into(),
        }
    }

    /// `text` holds one of the secrets.
    pub fn found_in(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
    }

    /// JSON `text` with every secret masked.
    pub fn mask_json(&self, text: String) -> String {
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        kimi_protocol::trace_file::mask_secrets(text, &secrets)
    }

    /// `file` as JSON, every secret masked.
    pub fn trace_json(&self, file: &TraceFile) -> String {
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        file.to_json(&secrets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::Trace;

    #[test]
    fn it_finds_and_masks_its_secrets_and_never_prints_them() {
        let r = Redactor::new(["sk-live-123456".to_owned(), String::new()]);
        assert!(r.found_in("key sk-live-123456 here"));
        assert!(!r.found_in("nothing secret"));
        assert_eq!(format!("{r:?}"), "Redactor(1 secrets)");
        let trace = Trace {
            url: "http://h/v1?key=sk-live-123456".into(),
            ..Trace::default()
        };
        let json = r.trace_json(&TraceFile::new(trace, 0));
        assert!(!json.contains("sk-live-123456"), "{json}");
        assert!(!Redactor::default().found_in("sk-live-123456"));
        let masked = r.mask_json(r#"{"a": "sk-live-123456"}"#.to_owned());
        assert_eq!(masked, r#"{"a": "[redacted]"}"#);
    }
}
