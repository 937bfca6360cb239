//! Kimi K3's XTML in the inspector: each marker is three tokens (`<|open|>`, the element's
//! name and attributes as text, `<|sep|>`), so the inspector names the element they make
//! (`⟨think⟩`, `⟨/response⟩`, `⟨call tool="get_weather" index="1"⟩`) where its `<|sep|>`
//! ends, and says what a chunk produced in K3's words (reasoning, content, elements).

use kimi_protocol::{Marker, Trace, sanitize};

/// K3's generation prompts: a prompt that ends with one was rendered for K3.
const GENERATION_PROMPTS: [&str; 2] = ["<|open|>think<|sep|>", "<|open|>response<|sep|>"];

/// Longest element label shown; attributes past it are cut (a call's attributes are short).
const LABEL_MAX: usize = 80;

/// Whether `prompt` ends with K3's generation prompt (thinking on or off).
pub(crate) fn ends_with_generation_prompt(prompt: &str) -> bool {
    GENERATION_PROMPTS.iter().any(|g| prompt.ends_with(g))
}

/// The label of the element whose marker holds `name` between its first token and its
/// `<|sep|>`: `⟨think⟩`, `⟨/think⟩`, `⟨argument key="city" type="string"⟩`. `None` when
/// `name` is not an element's name (empty, or holding another marker: then the tokens around
/// it are strays, badged alone).
pub(crate) fn element_label(close: bool, name: &str) -> Option<String> {
    let word = name.split(' ').next().unwrap_or_default();
    if word.is_empty()
        || name.contains("<|")
        || !word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    let shown = sanitize::one_line(name, LABEL_MAX);
    Some(if close {
        format!("⟨/{shown}⟩")
    } else {
        format!("⟨{shown}⟩")
    })
}

/// The element K3 markers `first` (an `<|open|>` or `<|close|>` spanning `first_range`) and
/// `sep` (a `<|sep|>` starting at `sep_start`) make in `text`, whose byte 0 is at `base`: the
/// range of its name text and its label.
pub(crate) fn element(
    text: &str,
    base: usize,
    first: Marker,
    first_end: usize,
    sep_start: usize,
) -> Option<(std::ops::Range<usize>, String)> {
    let close = match first {
        Marker::Open => false,
        Marker::Close => true,
        _ => return None,
    };
    if sep_start <= first_end {
        return None;
    }
    let name = text.get(first_end.checked_sub(base)?..sep_start.checked_sub(base)?)?;
    Some((first_end..sep_start, element_label(close, name)?))
}

/// How hit `i` of a raw K3 trace is told in the chunk's "made" list: an `<|open|>` or
/// `<|close|>` that begins an element as the element; the `<|sep|>` that ends one as nothing
/// (the element said it); any other as the token.
pub(crate) enum MadeMarker {
    Element(String),
    Skip,
    Token,
}

pub(crate) fn made_marker(trace: &Trace, i: usize) -> MadeMarker {
    let of = |k: usize| -> Option<String> {
        let (a, b) = (trace.markers.get(k)?, trace.markers.get(k + 1)?);
        if b.marker != Marker::Sep {
            return None;
        }
        let start = usize::try_from(a.offset).ok()?;
        let sep = usize::try_from(b.offset).ok()?;
        element(&trace.data, 0, a.marker, start + a.marker.text().len(), sep).map(|e| e.1)
    };
    match trace.markers.get(i).map(|h| h.marker) {
        Some(Marker::Open | Marker::Close) => of(i).map_or(MadeMarker::Token, MadeMarker::Element),
        Some(Marker::Sep) if i.checked_sub(1).and_then(of).is_some() => MadeMarker::Skip,
        _ => MadeMarker::Token,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::MarkerHit;

    #[test]
    fn elements_are_named_with_their_attributes() {
        assert_eq!(element_label(false, "think").as_deref(), Some("⟨think⟩"));
        assert_eq!(
            element_label(true, "response").as_deref(),
            Some("⟨/response⟩")
        );
        assert_eq!(
            element_label(false, "call tool=\"get_weather\" index=\"1\"").as_deref(),
            Some("⟨call tool=\"get_weather\" index=\"1\"⟩")
        );
        assert_eq!(element_label(false, ""), None);
        assert_eq!(element_label(false, "x<|open|>y"), None);
        assert_eq!(element_label(false, " think"), None);
        assert!(ends_with_generation_prompt(
            "…<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"
        ));
        assert!(ends_with_generation_prompt("<|open|>response<|sep|>"));
        assert!(!ends_with_generation_prompt(
            "<|im_assistant|>assistant<|im_middle|>"
        ));
    }

    #[test]
    fn an_element_is_told_once_in_what_a_chunk_made() {
        let mut t = Trace::default();
        t.push_chunk("<|open|>think<|sep|>hm<|sep|>", 1);
        for (marker, offset) in [(Marker::Open, 0), (Marker::Sep, 13), (Marker::Sep, 22)] {
            t.markers.push(MarkerHit {
                marker,
                offset,
                call: None,
            });
        }
        assert!(matches!(made_marker(&t, 0), MadeMarker::Element(e) if e == "⟨think⟩"));
        assert!(matches!(made_marker(&t, 1), MadeMarker::Skip));
        // A stray `<|sep|>` is a token of its own.
        assert!(matches!(made_marker(&t, 2), MadeMarker::Token));
    }
}
