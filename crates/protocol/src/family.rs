//! The members of the Kimi K2 family as the client tells them apart: which chat template raw mode
//! renders, and whether the model thinks.

use serde::{Deserialize, Serialize};

/// The chat template raw mode renders (and the parser's expectations that go with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub enum Template {
    #[default]
    #[serde(rename = "k2-instruct")]
    K2Instruct,
    #[serde(rename = "k2-thinking")]
    K2Thinking,
    #[serde(rename = "k2.5")]
    K25,
    /// Secondhand rules: the template text itself was not available.
    #[serde(rename = "k2.6")]
    K26,
    /// Kimi K3: the XTML prompt format, whose structural tokens reuse K2's ids for other
    /// strings. Rendered and parsed by [`crate::k3`], never by the K2 code.
    #[serde(rename = "k3")]
    K3,
}

impl Template {
    pub const ALL: [Template; 5] = [
        Template::K2Instruct,
        Template::K2Thinking,
        Template::K25,
        Template::K26,
        Template::K3,
    ];

    /// The name used in the config file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Template::K2Instruct => "k2-instruct",
            Template::K2Thinking => "k2-thinking",
            Template::K25 => "k2.5",
            Template::K26 => "k2.6",
            Template::K3 => "k3",
        }
    }

    /// A config or command-line name, or a request file's `"template"` value (the template file
    /// names `Kimi-K2-Thinking`, `Kimi-K2.5`), case-insensitively.
    pub fn parse(name: &str) -> Option<Template> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_prefix("kimi-").unwrap_or(&n);
        Template::ALL.into_iter().find(|t| t.as_str() == n)
    }

    /// The template a model name implies.
    pub fn for_model(model: &str) -> Template {
        match Model::classify(model) {
            Model::K2(t) => t,
            Model::K3 => Template::K3,
        }
    }

    /// Whether this is a K2 template (the `<|im_*|>` protocol); K3 speaks XTML.
    pub fn is_k2(self) -> bool {
        self != Template::K3
    }

    /// Whether completions of this template carry a reasoning channel.
    pub fn thinks(self) -> bool {
        !matches!(self, Template::K2Instruct)
    }
}

/// What a model name says about the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    K2(Template),
    /// Kimi K3: the XTML protocol ([`Template::K3`]).
    K3,
}

impl Model {
    /// The rule, on the lowercased name with `_` read as `-`: `k3` as a word -> K3; `k2.6`,
    /// `k2-6` or `k2p6` -> K2.6; `k2.5`, `k2-5` or `k2p5` -> K2.5; `k2` with `thinking` ->
    /// K2-Thinking; anything else -> K2-Instruct.
    pub fn classify(model: &str) -> Model {
        let n = model.to_ascii_lowercase().replace('_', "-");
        let has_word = |w: &str| {
            n.match_indices(w).any(|(i, _)| {
                let before = n[..i].chars().next_back();
                let after = n[i + w.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !after.is_some_and(|c| c.is_ascii_digit())
            })
        };
        if has_word("k3") {
            Model::K3
        } else if ["k2.6", "k2-6", "k2p6"].iter().any(|p| n.contains(p)) {
            Model::K2(Template::K26)
        } else if ["k2.5", "k2-5", "k2p5"].iter().any(|p| n.contains(p)) {
            Model::K2(Template::K25)
        } else if n.contains("k2") && n.contains("thinking") {
            Model::K2(Template::K2Thinking)
        } else {
            Model::K2(Template::K2Instruct)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_pick_their_template() {
        for (name, want) in [
            (
                "moonshotai/Kimi-K2-Instruct",
                Model::K2(Template::K2Instruct),
            ),
            ("kimi-k2-0905-preview", Model::K2(Template::K2Instruct)),
            (
                "moonshotai/Kimi-K2-Thinking",
                Model::K2(Template::K2Thinking),
            ),
            ("kimi-k2-thinking-turbo", Model::K2(Template::K2Thinking)),
            ("moonshotai/Kimi-K2.5", Model::K2(Template::K25)),
            ("kimi_k2_5", Model::K2(Template::K25)),
            (
                "accounts/fireworks/models/kimi-k2p5",
                Model::K2(Template::K25),
            ),
            ("kimi-k2.6", Model::K2(Template::K26)),
            ("moonshotai/Kimi-K3", Model::K3),
            ("kimi-k3-preview", Model::K3),
            ("kimi-k30", Model::K2(Template::K2Instruct)),
        ] {
            assert_eq!(Model::classify(name), want, "{name}");
        }
    }

    #[test]
    fn names_parse_in_both_spellings() {
        assert_eq!(Template::parse("k2.5"), Some(Template::K25));
        assert_eq!(Template::parse("Kimi-K2.5"), Some(Template::K25));
        assert_eq!(
            Template::parse("Kimi-K2-Thinking"),
            Some(Template::K2Thinking)
        );
        assert_eq!(Template::parse("k2-instruct"), Some(Template::K2Instruct));
        assert_eq!(Template::parse("k2.7"), None);
        for t in Template::ALL {
            assert_eq!(Template::parse(t.as_str()), Some(t));
        }
    }
}
