//! An MCP `CallToolResult` as the `tool` message the model gets: text as it is, structured
//! content as JSON only when no content block carries it, images, audio and blobs described
//! (type, size) and saved to a file for the user, never sent as text; capped like a local
//! tool's stdout.

use std::path::Path;

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// The text for the model and what the UI shows of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// At most the cap (a character cut by it is dropped whole), plus the notes.
    pub content: String,
    /// What the pane shows: the text as kept, with where each binary block was saved.
    pub text: String,
    /// Bytes of text before the cap.
    pub total_bytes: u64,
    pub truncated: bool,
    /// `isError` was set.
    pub is_error: bool,
}

/// Strings at least this long made only of base64 characters are taken for binary data.
const BASE64_RUN: usize = 512;

/// Convert `result`, keeping at most `cap` bytes of its text; binary blocks are saved under
/// `media` (when given) for the user.
pub fn convert(result: &CallToolResult, cap: usize, media: Option<&Path>) -> Converted {
    let mut model: Vec<String> = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for block in &result.content {
        let (for_model, for_user) = block_text(block, media);
        model.push(for_model);
        shown.push(for_user);
    }
    // Structured content duplicates the content blocks when there are any (the spec asks
    // servers to send both): it goes to the model only when it is all there is.
    if let Some(structured) = &result.structured_content
        && result.content.is_empty()
    {
        let mut v = structured.clone();
        strip_binary(&mut v);
        let text = serde_json::to_string(&v).unwrap_or_default();
        model.push(text.clone());
        shown.push(text);
    }
    let full = model.join("\n");
    let total_bytes = full.len() as u64;
    let truncated = full.len() > cap;
    let kept = cut(&full, cap);
    let is_error = result.is_error == Some(true);
    let mut notes = Vec::new();
    if truncated {
        notes.push(format!(
            "[output truncated: showed {} of {total_bytes} bytes]",
            kept.len()
        ));
    }
    if is_error {
        notes.push("[the tool reported an error]".to_owned());
    }
    let content = if notes.is_empty() && kept.is_empty() {
        "[no output]".to_owned()
    } else if notes.is_empty() {
        kept.to_owned()
    } else if kept.is_empty() {
        notes.join("\n")
    } else {
        format!("{kept}\n{}", notes.join("\n"))
    };
    let shown = shown.join("\n");
    Converted {
        content,
        text: cut(&shown, cap).to_owned(),
        total_bytes,
        truncated,
        is_error,
    }
}

/// At most `cap` bytes of `s`, a character cut by the cap dropped whole.
fn cut(s: &str, cap: usize) -> &str {
    let mut end = cap.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A block's text for the model, and for the user.
fn block_text(block: &ContentBlock, media: Option<&Path>) -> (String, String) {
    let same = |s: String| (s.clone(), s);
    match block {
        ContentBlock::Text(t) => same(text_without_binary(&t.text)),
        ContentBlock::Image(i) => binary("image", &i.mime_type, &i.data, media),
        ContentBlock::Audio(a) => binary("audio", &a.mime_type, &a.data, media),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                same(format!("[resource {uri}]\n{}", text_without_binary(text)))
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => binary(
                &format!("resource {uri}"),
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                blob,
                media,
            ),
            // A kind newer than this client (the enums are non-exhaustive): name it, never dump it.
            _ => same("[a resource of an unknown kind]".to_owned()),
        },
        ContentBlock::ResourceLink(link) => same(format!("[resource link: {}]", link.uri)),
        _ => same("[content of an unknown kind]".to_owned()),
    }
}

/// `[image: image/png, 1234 bytes]` for the model; the user's copy also says where the bytes
/// were saved (or why they were not).
fn binary(what: &str, mime: &str, base64: &str, media: Option<&Path>) -> (String, String) {
    let mime: String = mime.chars().filter(|c| !c.is_control()).take(100).collect();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .ok();
    let bytes = decoded
        .as_ref()
        .map_or(base64.trim_end_matches('=').len() * 3 / 4, Vec::len);
    let note = format!("[{what}: {mime}, {bytes} bytes; not sent to the model]");
    let saved = match (media, decoded) {
        (Some(dir), Some(data)) => {
            match crate::private_fs::create_numbered(dir, "mcp", extension(&mime), &data) {
                Ok(path) => format!("{note} saved to {}", path.display()),
                Err(e) => format!("{note} (could not be saved: {e})"),
            }
        }
        (_, None) => format!("{note} (not valid base64)"),
        (None, Some(_)) => note.clone(),
    };
    (note, saved)
}

fn extension(mime: &str) -> &'static str {
    match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/gzip" => "gz",
        _ => "bin",
    }
}

fn is_base64_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// Long runs of base64 (a `data:` URI's payload, or bytes a server put in a text) replaced
/// with a note of their size.
fn text_without_binary(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        if is_base64_byte(bytes[i]) {
            let start = i;
            while i < bytes.len() && (is_base64_byte(bytes[i]) || bytes[i] == b'\n') {
                i += 1;
            }
            let run = &text[start..i];
            // Words and identifiers are not binary: a long run must mix cases and digits.
            if run.len() >= BASE64_RUN && looks_encoded(run) {
                out.push_str(&text[last..start]);
                out.push_str(&format!(
                    "[binary data: about {} bytes; not sent to the model]",
                    run.len() * 3 / 4
                ));
                last = i;
            }
        } else {
            i += 1;
        }
    }
    if last == 0 {
        return text.to_owned();
    }
    out.push_str(&text[last..]);
    out
}

fn looks_encoded(run: &str) -> bool {
    let b = run.as_bytes();
    b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_digit)
}

/// The same, for every string inside structured content.
fn strip_binary(v: &mut Value) {
    match v {
        Value::String(s) if s.len() >= BASE64_RUN => *s = text_without_binary(s),
        Value::Array(items) => items.iter_mut().for_each(strip_binary),
        Value::Object(map) => map.values_mut().for_each(strip_binary),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_structured_and_binary() {
        let r = CallToolResult::success(vec![
            ContentBlock::text("hello"),
            ContentBlock::image("aGVsbG8gd29ybGQ=", "image/png"),
        ]);
        let c = convert(&r, 1000, None);
        assert_eq!(
            c.content,
            "hello\n[image: image/png, 11 bytes; not sent to the model]"
        );
        assert!(!c.is_error);
        let s = CallToolResult::structured(json!({"t": 22.5}));
        let c = convert(&s, 1000, None);
        assert_eq!(c.content, r#"{"t":22.5}"#, "the text copy is not repeated");
        let mut only = CallToolResult::success(vec![]);
        only.structured_content = Some(json!({"sum": 3}));
        assert_eq!(convert(&only, 1000, None).content, r#"{"sum":3}"#);
        let mut both = CallToolResult::success(vec![ContentBlock::text("file text")]);
        both.structured_content = Some(json!({"content": "file text"}));
        assert_eq!(convert(&both, 1000, None).content, "file text");
    }

    #[test]
    fn errors_caps_and_empty() {
        let r = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        let c = convert(&r, 1000, None);
        assert!(c.is_error);
        assert_eq!(c.content, "no such file\n[the tool reported an error]");
        let r = CallToolResult::success(vec![ContentBlock::text("é".repeat(10))]);
        let c = convert(&r, 5, None);
        assert_eq!(c.text, "éé");
        assert!(c.truncated);
        assert_eq!(c.content, "éé\n[output truncated: showed 4 of 20 bytes]");
        let c = convert(&CallToolResult::success(vec![]), 10, None);
        assert_eq!(c.content, "[no output]");
    }

    /// A PNG-sized payload: long enough, with both cases and digits, as base64 always is.
    fn png_base64() -> String {
        let bytes: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn binary_is_saved_for_the_user_and_never_sent() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = png_base64();
        let mut r = CallToolResult::success(vec![ContentBlock::image(data.clone(), "image/png")]);
        // A server that also puts the bytes in structured content (as read_media_file does).
        r.structured_content = Some(json!({"content": [{"type": "image", "data": data}]}));
        let c = convert(&r, 1 << 20, Some(dir.path()));
        assert_eq!(
            c.content,
            "[image: image/png, 3000 bytes; not sent to the model]"
        );
        let saved = dir.path().join("mcp.png");
        assert!(
            c.text.ends_with(&format!("saved to {}", saved.display())),
            "{}",
            c.text
        );
        assert_eq!(std::fs::read(&saved).expect("saved").len(), 3000);
        // Structured content alone: its base64 strings are described, not sent.
        let mut only = CallToolResult::success(vec![]);
        only.structured_content = Some(json!({"name": "a.png", "blob": data}));
        let c = convert(&only, 1 << 20, None);
        assert_eq!(
            c.content,
            r#"{"name":"a.png","blob":"[binary data: about 3000 bytes; not sent to the model]"}"#
        );
        // A data: URI inside a text block, and a long word that is not binary.
        let text = format!("see data:image/png;base64,{data} done {}", "a".repeat(600));
        let c = convert(
            &CallToolResult::success(vec![ContentBlock::text(text)]),
            1 << 20,
            None,
        );
        assert!(
            c.content
                .starts_with("see data:image/png;base64,[binary data: about 3000 bytes"),
            "{}",
            c.content
        );
        assert!(c.content.ends_with(&"a".repeat(600)));
        assert!(c.content.len() < 800);
    }
}
