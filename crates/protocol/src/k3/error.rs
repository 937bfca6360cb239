//! Why the K3 renderer refused a request.

use std::fmt;

/// A refusal: the request has a shape the K3 encoder rejects, so nothing is guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K3Error {
    /// The index in `messages` of the message at fault, when one is.
    pub message_index: Option<usize>,
    /// A short code naming the rendering rule that refuses (`"R9"`, ...); the error line ends
    /// with it, so scripts and tests can tell refusals apart.
    pub rule: &'static str,
    pub message: String,
}

impl K3Error {
    pub(crate) fn at(index: usize, rule: &'static str, message: impl Into<String>) -> Self {
        K3Error {
            message_index: Some(index),
            rule,
            message: message.into(),
        }
    }

    pub(crate) fn request(rule: &'static str, message: impl Into<String>) -> Self {
        K3Error {
            message_index: None,
            rule,
            message: message.into(),
        }
    }
}

impl fmt::Display for K3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(i) = self.message_index {
            write!(f, "messages[{i}]: ")?;
        }
        write!(f, "{} ({})", self.message, self.rule)
    }
}

impl std::error::Error for K3Error {}
