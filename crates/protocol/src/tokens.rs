//! The special tokens of Kimi K2 and K3: their exact text and their ids in
//! `tokenizer_config.json`. K3 reuses ids 163586-163589 for other strings, so an id means a K2
//! name for a K2 template and a K3 name for K3 ([`Marker::token_id_in`]).

use serde::{Deserialize, Serialize};

use super::family::Template;

/// A special marker the stream parser recognises in completion text.
///
/// The two singular section spellings are not registered tokens (they carry no id); models emit
/// them in the wild, so the parser accepts them as section markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Marker {
    SectionBegin,
    SectionBeginSingular,
    CallBegin,
    ArgumentBegin,
    CallEnd,
    SectionEnd,
    SectionEndSingular,
    ImEnd,
    ImSystem,
    ImUser,
    ImAssistant,
    ImMiddle,
    /// `<think>`: opens the reasoning, only as the very first thing in a completion.
    ThinkBegin,
    /// `</think>`: ends the reasoning, only while in it.
    ThinkEnd,
    /// K3 `<|open|>`: begins an element's open marker.
    Open,
    /// K3 `<|close|>`: begins an element's close marker.
    Close,
    /// K3 `<|sep|>`: ends an open or close marker.
    Sep,
    /// K3 `<|end_of_msg|>`: the end of the message (the stop token).
    EndOfMsg,
}

pub const TOOL_CALLS_SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
pub const TOOL_CALLS_SECTION_END: &str = "<|tool_calls_section_end|>";
pub const TOOL_CALL_BEGIN: &str = "<|tool_call_begin|>";
pub const TOOL_CALL_ARGUMENT_BEGIN: &str = "<|tool_call_argument_begin|>";
pub const TOOL_CALL_END: &str = "<|tool_call_end|>";
pub const IM_END: &str = "<|im_end|>";
pub const IM_SYSTEM: &str = "<|im_system|>";
pub const IM_USER: &str = "<|im_user|>";
pub const IM_ASSISTANT: &str = "<|im_assistant|>";
pub const IM_MIDDLE: &str = "<|im_middle|>";
pub const THINK_BEGIN: &str = "<think>";
pub const THINK_END: &str = "</think>";
pub const K3_OPEN: &str = "<|open|>";
pub const K3_CLOSE: &str = "<|close|>";
pub const K3_SEP: &str = "<|sep|>";
pub const K3_END_OF_MSG: &str = "<|end_of_msg|>";

/// Image placeholder emitted by the K2-Instruct and K2-Thinking templates. Not a registered
/// token: it tokenizes as text.
pub(crate) const MEDIA_IMAGE: &str =
    "<|media_start|>image<|media_content|><|media_pad|><|media_end|>";
/// K2.5/K2.6's image placeholder: real tokens there (163602-163605).
pub(crate) const MEDIA_IMAGE_K25: &str =
    "<|media_begin|>image<|media_content|><|media_pad|><|media_end|>";
/// K2.5/K2.6's video placeholder, replaced by the server's processor.
pub(crate) const VIDEO_PLACEHOLDER_K25: &str = "<|kimi_k25_video_placeholder|>";

/// The system prompt the template injects when the conversation does not start with one.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are Kimi, an AI assistant created by Moonshot AI.";

impl Marker {
    /// The K3 structural tokens. Not in [`Marker::ALL`]: in a K2 completion they are text.
    pub const K3: [Marker; 4] = [Marker::Open, Marker::Close, Marker::Sep, Marker::EndOfMsg];

    /// Every K2 marker: the twelve `<|...|>` ones first (`at_start` relies on it), then the two
    /// think tags. No marker is a prefix of another (all end in `|>`
    /// or `>` and none contains either earlier), so at most one can match at a position.
    pub const ALL: [Marker; 14] = [
        Marker::SectionBegin,
        Marker::SectionBeginSingular,
        Marker::CallBegin,
        Marker::ArgumentBegin,
        Marker::CallEnd,
        Marker::SectionEnd,
        Marker::SectionEndSingular,
        Marker::ImEnd,
        Marker::ImSystem,
        Marker::ImUser,
        Marker::ImAssistant,
        Marker::ImMiddle,
        Marker::ThinkBegin,
        Marker::ThinkEnd,
    ];

    /// Length in bytes of the longest K2 marker text.
    pub const MAX_LEN: usize = TOOL_CALL_ARGUMENT_BEGIN.len();

    pub const fn text(self) -> &'static str {
        match self {
            Marker::SectionBegin => TOOL_CALLS_SECTION_BEGIN,
            Marker::SectionBeginSingular => "<|tool_call_section_begin|>",
            Marker::CallBegin => TOOL_CALL_BEGIN,
            Marker::ArgumentBegin => TOOL_CALL_ARGUMENT_BEGIN,
            Marker::CallEnd => TOOL_CALL_END,
            Marker::SectionEnd => TOOL_CALLS_SECTION_END,
            Marker::SectionEndSingular => "<|tool_call_section_end|>",
            Marker::ImEnd => IM_END,
            Marker::ImSystem => IM_SYSTEM,
            Marker::ImUser => IM_USER,
            Marker::ImAssistant => IM_ASSISTANT,
            Marker::ImMiddle => IM_MIDDLE,
            Marker::ThinkBegin => THINK_BEGIN,
            Marker::ThinkEnd => THINK_END,
            Marker::Open => K3_OPEN,
            Marker::Close => K3_CLOSE,
            Marker::Sep => K3_SEP,
            Marker::EndOfMsg => K3_END_OF_MSG,
        }
    }

    /// The token id from `added_tokens_decoder`; `None` for spellings that are not registered.
    /// `<think>`/`</think>` get their K2.5/K2.6 ids (163606/163607); for K2-Thinking those ids
    /// are presumed, not confirmed by its tokenizer configuration: ask [`Marker::token_id_in`] when the
    /// template is known.
    pub const fn token_id(self) -> Option<u32> {
        match self {
            Marker::SectionBegin => Some(163595),
            Marker::SectionEnd => Some(163596),
            Marker::CallBegin => Some(163597),
            Marker::ArgumentBegin => Some(163598),
            Marker::CallEnd => Some(163599),
            Marker::ImEnd => Some(163586),
            Marker::ImUser => Some(163587),
            Marker::ImAssistant => Some(163588),
            Marker::ImSystem => Some(163594),
            Marker::ImMiddle => Some(163601),
            Marker::ThinkBegin => Some(163606),
            Marker::ThinkEnd => Some(163607),
            Marker::EndOfMsg => Some(163586),
            Marker::Open => Some(163587),
            Marker::Close => Some(163588),
            Marker::Sep => Some(163589),
            Marker::SectionBeginSingular | Marker::SectionEndSingular => None,
        }
    }

    /// The id as far as it is established for `template`: the think markers of K2-Thinking
    /// have none (no K2-Thinking tokenizer configuration confirms 163606/163607, and a
    /// completions stream does not report ids), so a badge shows only the name there. A marker
    /// of the other protocol has none: K2 markers are plain text in K3 and the other way round,
    /// and the shared ids name other strings there.
    pub const fn token_id_in(self, template: Template) -> Option<u32> {
        match (self, template) {
            (Marker::ThinkBegin | Marker::ThinkEnd, Template::K2Thinking) => None,
            (Marker::Open | Marker::Close | Marker::Sep | Marker::EndOfMsg, Template::K3) => {
                self.token_id()
            }
            (Marker::Open | Marker::Close | Marker::Sep | Marker::EndOfMsg, _) => None,
            (_, Template::K3) => None,
            _ => self.token_id(),
        }
    }

    /// Whether this is one of the K3 structural tokens.
    pub const fn is_k3(self) -> bool {
        matches!(
            self,
            Marker::Open | Marker::Close | Marker::Sep | Marker::EndOfMsg
        )
    }

    /// The marker whose text starts `bytes`, if any.
    pub fn at_start(bytes: &[u8]) -> Option<Marker> {
        // Every marker is longer than 3 bytes.
        if bytes.len() < 3 || bytes[0] != b'<' {
            return None;
        }
        let candidates: &[Marker] = match bytes[1] {
            b'|' => &Marker::ALL[..12],
            b't' => &[Marker::ThinkBegin],
            b'/' => &[Marker::ThinkEnd],
            _ => return None,
        };
        // The third byte first: text such as `<|not a marker|>` in a tool's arguments then
        // costs no comparison of whole markers (they took most of the parser's time).
        candidates.iter().copied().find(|m| {
            let t = m.text().as_bytes();
            t.get(2) == bytes.get(2) && bytes.starts_with(t)
        })
    }

    /// The marker of `template`'s family whose text starts `bytes`: K3's four structural
    /// tokens for K3, [`Marker::at_start`]'s K2 markers otherwise. A marker of the other
    /// family is ordinary text there.
    pub fn at_start_in(bytes: &[u8], template: Template) -> Option<Marker> {
        if template.is_k2() {
            return Marker::at_start(bytes);
        }
        if bytes.get(..2) != Some(b"<|".as_slice()) {
            return None;
        }
        Marker::K3
            .into_iter()
            .find(|m| bytes.starts_with(m.text().as_bytes()))
    }

    /// The marker of `template`'s family that token `id` is, if any: 163587 is `<|open|>`
    /// for K3 and `<|im_user|>` for K2.
    pub fn for_id(id: u32, template: Template) -> Option<Marker> {
        let family: &[Marker] = if template.is_k2() {
            &Marker::ALL
        } else {
            &Marker::K3
        };
        family
            .iter()
            .copied()
            .find(|m| m.token_id_in(template) == Some(id))
    }

    /// True when `bytes` (starting with `<`) is a proper prefix of some marker, so more input
    /// could still complete it.
    pub fn is_proper_prefix(bytes: &[u8]) -> bool {
        Marker::ALL.into_iter().any(|m| {
            let t = m.text().as_bytes();
            bytes.len() < t.len() && t.starts_with(bytes)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_marker_is_a_prefix_of_another() {
        for a in Marker::ALL {
            for b in Marker::ALL {
                if a != b {
                    assert!(!b.text().starts_with(a.text()), "{a:?} prefixes {b:?}");
                }
            }
        }
    }

    #[test]
    fn the_first_twelve_are_the_bar_markers() {
        for (i, m) in Marker::ALL.iter().enumerate() {
            assert_eq!(m.text().starts_with("<|"), i < 12, "{m:?}");
        }
    }

    #[test]
    fn max_len_is_the_longest_marker() {
        let longest = Marker::ALL.iter().map(|m| m.text().len()).max().unwrap();
        assert_eq!(Marker::MAX_LEN, longest);
    }

    #[test]
    fn ids_match_tokenizer_config() {
        assert_eq!(Marker::CallBegin.token_id(), Some(163597));
        assert_eq!(Marker::ImMiddle.token_id(), Some(163601));
        assert_eq!(Marker::SectionBeginSingular.token_id(), None);
        assert_eq!(Marker::ThinkBegin.token_id(), Some(163606));
        assert_eq!(Marker::ThinkEnd.token_id_in(Template::K25), Some(163607));
        assert_eq!(Marker::ThinkEnd.token_id_in(Template::K2Thinking), None);
        assert_eq!(Marker::at_start(b"</think>x"), Some(Marker::ThinkEnd));
        assert!(Marker::is_proper_prefix(b"<thi"));
    }

    #[test]
    fn k3_ids_name_k3_tokens_only_for_k3() {
        let k3 = [
            (Marker::EndOfMsg, "<|end_of_msg|>", 163586),
            (Marker::Open, "<|open|>", 163587),
            (Marker::Close, "<|close|>", 163588),
            (Marker::Sep, "<|sep|>", 163589),
        ];
        for (m, text, id) in k3 {
            assert_eq!(m.text(), text);
            assert!(m.is_k3() && !Marker::ALL.contains(&m));
            assert_eq!(m.token_id_in(Template::K3), Some(id));
            assert_eq!(m.token_id_in(Template::K25), None, "{m:?}");
        }
        // The same ids are K2 names for K2 and nothing for K3.
        assert_eq!(Marker::ImUser.token_id_in(Template::K25), Some(163587));
        assert_eq!(Marker::ImUser.token_id_in(Template::K3), None);
        assert_eq!(Marker::ImEnd.token_id_in(Template::K3), None);
        assert_eq!(Marker::at_start(b"<|open|>think"), None, "text for K2");
        assert_eq!(
            serde_json::to_value(Marker::EndOfMsg).unwrap(),
            serde_json::json!("end_of_msg")
        );
    }

    #[test]
    fn markers_and_ids_are_read_by_family() {
        assert_eq!(
            Marker::at_start_in(b"<|open|>think", Template::K3),
            Some(Marker::Open)
        );
        assert_eq!(
            Marker::at_start_in(b"<|end_of_msg|>", Template::K3),
            Some(Marker::EndOfMsg)
        );
        assert_eq!(Marker::at_start_in(b"<|im_end|>", Template::K3), None);
        assert_eq!(Marker::at_start_in(b"<think>", Template::K3), None);
        assert_eq!(Marker::at_start_in(b"<|open|>", Template::K25), None);
        assert_eq!(
            Marker::at_start_in(b"<|im_end|>", Template::K25),
            Some(Marker::ImEnd)
        );
        assert_eq!(Marker::for_id(163587, Template::K3), Some(Marker::Open));
        assert_eq!(Marker::for_id(163586, Template::K3), Some(Marker::EndOfMsg));
        assert_eq!(Marker::for_id(163589, Template::K3), Some(Marker::Sep));
        assert_eq!(Marker::for_id(163595, Template::K3), None);
        assert_eq!(
            Marker::for_id(163587, Template::K2Instruct),
            Some(Marker::ImUser)
        );
        assert_eq!(Marker::for_id(163589, Template::K25), None);
        assert_eq!(Marker::for_id(163606, Template::K2Thinking), None);
        assert_eq!(
            Marker::for_id(163606, Template::K25),
            Some(Marker::ThinkBegin)
        );
    }

    #[test]
    fn prefix_and_match() {
        assert_eq!(Marker::at_start(b"<|im_end|>rest"), Some(Marker::ImEnd));
        assert_eq!(Marker::at_start(b"<|im_en"), None);
        assert!(Marker::is_proper_prefix(b"<|im_en"));
        assert!(Marker::is_proper_prefix(b"<"));
        assert!(!Marker::is_proper_prefix(b"<|im_x"));
        assert!(!Marker::is_proper_prefix(b"<|im_end|>"));
        for m in Marker::ALL {
            let text = format!("{}more", m.text());
            assert_eq!(Marker::at_start(text.as_bytes()), Some(m));
        }
        for text in ["<|not a marker|>", "<|", "<t", "</b>", "<|tool_call_xyz|>"] {
            assert_eq!(Marker::at_start(text.as_bytes()), None, "{text}");
        }
    }
}
