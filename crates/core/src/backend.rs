//! The few things of the HTTP client that a screen shows or checks against, reached through
//! the core so that a front end needs no HTTP client of its own: the error a request failed
//! with (shown as text), a listed model, the cap on token-level data, URLs as shown, a
//! recorded stream written as a reproducer, and an A/B comparison's variants and result.

pub use kimi_client::ab;
pub use kimi_client::logprobs::MAX_LOGPROBS;
pub use kimi_client::repro;
pub use kimi_client::{
    BackendError, ConnectCause, ModelInfo, ModelList, host_and_port, redact_url,
};

/// `host` or `host:port` of a base URL as the status bar shows it: the URL itself (without
/// userinfo) when it has no host.
pub fn shown_host(base_url: &str) -> String {
    host_and_port(base_url).unwrap_or_else(|| redact_url(base_url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_host_never_carries_credentials() {
        assert_eq!(shown_host("http://u:pw@10.0.0.2:9000/v1"), "10.0.0.2:9000");
        assert_eq!(shown_host("https://api.example/v1"), "api.example");
        assert_eq!(shown_host("//u:pw@host"), "//host");
    }
}
