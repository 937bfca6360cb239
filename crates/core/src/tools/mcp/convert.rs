//! An MCP `CallToolResult` as the `tool` message the model gets: text as it is, structured
//! content as JSON, images, audio and blobs as a short note (never their bytes), capped like a
//! local tool's stdout.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The text for the model and what the UI shows of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// At most the cap (a character cut by it is dropped whole), plus the notes.
    pub content: String,
    /// The text before the notes, as kept.
    pub text: String,
    /// Bytes of text before the cap.
    pub total_bytes: u64,
    pub truncated: bool,
    /// `isError` was set.
    pub is_error: bool,
}

/// Convert `result`, keeping at most `cap` bytes of its text.
pub fn convert(result: &CallToolResult, cap: usize) -> Converted {
    let mut parts: Vec<String> = Vec::new();
    for block in &result.content {
        parts.push(block_text(block));
    }
    // The spec asks servers to send structured content as text too (as JSON, or as the text
    // it holds, as the filesystem server does): it goes to the model only when no text did.
    let has_text = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Text(_) | ContentBlock::Resource(_)));
    if let Some(structured) = &result.structured_content
        && !has_text
    {
        parts.push(serde_json::to_string(structured).unwrap_or_default());
    }
    let full = parts.join("\n");
    let total_bytes = full.len() as u64;
    let truncated = full.len() > cap;
    let text = if truncated {
        let mut end = cap;
        while !full.is_char_boundary(end) {
            end -= 1;
        }
        full[..end].to_owned()
    } else {
        full
    };
    let is_error = result.is_error == Some(true);
    let mut notes = Vec::new();
    if truncated {
        notes.push(format!(
            "[output truncated: showed {} of {total_bytes} bytes]",
            text.len()
        ));
    }
    if is_error {
        notes.push("[the tool reported an error]".to_owned());
    }
    let content = if notes.is_empty() && text.is_empty() {
        "[no output]".to_owned()
    } else if notes.is_empty() {
        text.clone()
    } else if text.is_empty() {
        notes.join("\n")
    } else {
        format!("{text}\n{}", notes.join("\n"))
    };
    Converted {
        content,
        text,
        total_bytes,
        truncated,
        is_error,
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => binary_note("image", &i.mime_type, &i.data),
        ContentBlock::Audio(a) => binary_note("audio", &a.mime_type, &a.data),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => binary_note(
                &format!("resource {uri}"),
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                blob,
            ),
            // A kind newer than this client (the enums are non-exhaustive): name it, never dump it.
            _ => "[a resource of an unknown kind]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        _ => "[content of an unknown kind]".to_owned(),
    }
}

/// `[image: image/png, 1234 bytes]`: the size decoded from the base64 length.
fn binary_note(what: &str, mime: &str, base64: &str) -> String {
    let len = base64.trim_end_matches('=').len();
    let bytes = len * 3 / 4;
    let mime: String = mime.chars().filter(|c| !c.is_control()).take(100).collect();
    format!("[{what}: {mime}, {bytes} bytes]")
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
        let c = convert(&r, 1000);
        assert_eq!(c.content, "hello\n[image: image/png, 11 bytes]");
        assert!(!c.is_error);
        let s = CallToolResult::structured(json!({"t": 22.5}));
        let c = convert(&s, 1000);
        assert_eq!(c.content, r#"{"t":22.5}"#, "the text copy is not repeated");
        let mut only = CallToolResult::success(vec![]);
        only.structured_content = Some(json!({"sum": 3}));
        assert_eq!(convert(&only, 1000).content, r#"{"sum":3}"#);
        let mut both = CallToolResult::success(vec![ContentBlock::text("file text")]);
        both.structured_content = Some(json!({"content": "file text"}));
        assert_eq!(convert(&both, 1000).content, "file text");
    }

    #[test]
    fn errors_caps_and_empty() {
        let r = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        let c = convert(&r, 1000);
        assert!(c.is_error);
        assert_eq!(c.content, "no such file\n[the tool reported an error]");
        let r = CallToolResult::success(vec![ContentBlock::text("é".repeat(10))]);
        let c = convert(&r, 5);
        assert_eq!(c.text, "éé");
        assert!(c.truncated);
        assert_eq!(c.content, "éé\n[output truncated: showed 4 of 20 bytes]");
        let c = convert(&CallToolResult::success(vec![]), 10);
        assert_eq!(c.content, "[no output]");
    }
}
