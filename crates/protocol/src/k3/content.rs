//! Message text: content strings and parts, reasoning, and Python's whitespace.

use serde_json::Value;

use super::error::K3Error;
use crate::python;

/// What an image part prints: plain text the server's image processor expands, not a token.
pub(crate) const IMAGE_PLACEHOLDER: &str = "<|kimi_image_placeholder|>";

/// Python's `str.isspace()` for one character: Rust's whitespace plus the four information
/// separators U+001C..U+001F, which Python counts and Unicode's White_Space does not.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Append a message's `content`: a string verbatim, null or missing nothing, a list part by
/// part; anything else is refused.
pub(crate) fn write(
    out: &mut String,
    content: Option<&Value>,
    index: usize,
) -> Result<(), K3Error> {
    match content {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(s)) => {
            out.push_str(s);
            Ok(())
        }
        Some(Value::Array(parts)) => {
            for (p, part) in parts.iter().enumerate() {
                write_part(out, part, index, p)?;
            }
            Ok(())
        }
        Some(other) => Err(K3Error::at(
            index,
            "R11",
            format!(
                "content must be a string, a list of parts or null, not {}",
                kind(other)
            ),
        )),
    }
}

fn write_part(out: &mut String, part: &Value, index: usize, p: usize) -> Result<(), K3Error> {
    let Value::Object(part) = part else {
        return Err(K3Error::at(
            index,
            "R11",
            format!("content[{p}] must be an object, not {}", kind(part)),
        ));
    };
    let Some(ty) = part.get("type") else {
        return Err(K3Error::at(
            index,
            "R11",
            format!("content[{p}] has no \"type\""),
        ));
    };
    if matches!(ty.as_str(), Some("image" | "image_url")) {
        out.push_str(IMAGE_PLACEHOLDER);
        return Ok(());
    }
    match part.get("text") {
        Some(Value::String(s)) => out.push_str(s),
        Some(text) => out.push_str(&python::str_of(text)),
        None => {
            return Err(K3Error::at(
                index,
                "R11",
                format!("content[{p}] is not an image and has no \"text\""),
            ));
        }
    }
    Ok(())
}

/// The think channel's text: `reasoning_content` if truthy, else `reasoning`, printed as
/// Python's `str()`; nothing when that is missing, null or only whitespace.
pub(crate) fn reasoning(message: &serde_json::Map<String, Value>) -> Option<String> {
    let r = message
        .get("reasoning_content")
        .filter(|v| python::truthy(v))
        .or_else(|| message.get("reasoning"))?;
    if r.is_null() {
        return None;
    }
    let text = python::str_of(r);
    (!py_strip(&text).is_empty()).then_some(text)
}

pub(crate) use crate::request::kind;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(content: Value) -> Result<String, K3Error> {
        let mut out = String::new();
        write(&mut out, Some(&content), 4).map(|()| out)
    }

    #[test]
    fn python_whitespace_includes_the_information_separators() {
        assert_eq!(py_strip("\u{1c}\u{a0} x \u{3000}\u{1f}"), "x");
        assert_eq!(py_strip("\u{200b}x"), "\u{200b}x");
    }

    #[test]
    fn parts_print_text_and_image_placeholders() {
        let got = render(json!([
            {"type": "text", "text": "a "},
            {"type": "image_url", "image_url": {"url": "x"}},
            {"type": "image"},
            {"type": "text", "text": null},
            {"type": "input_text", "text": 7}
        ]))
        .unwrap();
        assert_eq!(
            got,
            "a <|kimi_image_placeholder|><|kimi_image_placeholder|>None7"
        );
        assert_eq!(render(json!(null)).unwrap(), "");
        assert_eq!(render(json!([])).unwrap(), "");
    }

    #[test]
    fn bad_content_shapes_are_refused() {
        for bad in [
            json!(5),
            json!(true),
            json!({"type": "text", "text": "x"}),
            json!(["text"]),
            json!([{"text": "no type"}]),
            json!([{"type": "text"}]),
        ] {
            let e = render(bad.clone()).unwrap_err();
            assert_eq!((e.message_index, e.rule), (Some(4), "R11"), "{bad}");
        }
    }

    #[test]
    fn reasoning_falls_back_and_blank_is_empty() {
        let m = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            reasoning(&m(json!({"reasoning_content": "a"}))).as_deref(),
            Some("a")
        );
        assert_eq!(
            reasoning(&m(json!({"reasoning_content": "", "reasoning": " b\n"}))).as_deref(),
            Some(" b\n")
        );
        assert_eq!(reasoning(&m(json!({"reasoning_content": " \n\t"}))), None);
        assert_eq!(reasoning(&m(json!({"reasoning": null}))), None);
        assert_eq!(reasoning(&m(json!({"thinking": "not read"}))), None);
        assert_eq!(
            reasoning(&m(json!({"reasoning_content": 0, "reasoning": false}))).as_deref(),
            Some("False")
        );
    }
}
