//! Why a request never reached the server, told in one line with what to try: the HTTP
//! library's error chain (kept whole for the inspector and the log) names the URL twice per
//! level and buries the cause at its end.

use std::error::Error;

use serde::{Deserialize, Serialize};

use crate::url::host_and_port;

/// The cause of a failed connection, read from the error chain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectCause {
    /// Nothing listens on the port.
    Refused,
    /// The server closed or reset the connection before answering.
    Reset,
    /// The host name does not resolve.
    Dns,
    /// `https://` to a server that answered in plain HTTP.
    TlsToPlainHttp,
    /// Another TLS failure (an untrusted certificate, a protocol mismatch).
    Tls,
    #[default]
    Other,
}

impl ConnectCause {
    /// The cause of `e`, from the first source that tells it.
    pub(crate) fn of(e: &(dyn Error + 'static)) -> ConnectCause {
        let mut src = Some(e);
        while let Some(s) = src {
            if let Some(io) = s.downcast_ref::<std::io::Error>() {
                use std::io::ErrorKind as K;
                match io.kind() {
                    K::ConnectionRefused => return ConnectCause::Refused,
                    K::ConnectionReset | K::ConnectionAborted => return ConnectCause::Reset,
                    _ => {}
                }
            }
            if let Some(tls) = s.downcast_ref::<rustls::Error>() {
                return Self::of_tls(tls);
            }
            // hyper-util's resolver failure has no type of its own to test.
            if s.to_string().starts_with("dns error") {
                return ConnectCause::Dns;
            }
            // An io::Error's source skips the error it wraps (rustls's is only there).
            src = match s
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(inner) => Some(inner as &(dyn Error + 'static)),
                None => s.source(),
            };
        }
        ConnectCause::Other
    }

    fn of_tls(e: &rustls::Error) -> ConnectCause {
        match e {
            // The first bytes back were not a TLS record: an HTTP answer to a ClientHello.
            rustls::Error::InvalidMessage(_) => ConnectCause::TlsToPlainHttp,
            _ => ConnectCause::Tls,
        }
    }
}

/// What failed, for a connection to `url` that failed with `cause` (`detail`: the chain, whose
/// last part names an unclassified cause).
pub(crate) fn what_failed(url: &str, cause: ConnectCause, detail: &str) -> String {
    let target = host_and_port(url).unwrap_or_else(|| url.to_owned());
    let why = match cause {
        ConnectCause::Refused => "connection refused".to_owned(),
        ConnectCause::Reset => "connection reset by the server".to_owned(),
        ConnectCause::Dns => "unknown host: the name does not resolve".to_owned(),
        ConnectCause::TlsToPlainHttp => {
            "TLS handshake failed: the server answered in plain HTTP".to_owned()
        }
        ConnectCause::Tls => format!("TLS handshake failed: {}", last_part(detail)),
        ConnectCause::Other => last_part(detail),
    };
    format!("Cannot connect to {target} ({why})")
}

/// What to try about a failed connection.
pub(crate) fn what_to_try(cause: ConnectCause) -> &'static str {
    match cause {
        ConnectCause::Refused => "Is the server running? Check with `kimi-tui doctor`.",
        ConnectCause::Dns => "Check the host in base_url, or run `kimi-tui doctor`.",
        ConnectCause::TlsToPlainHttp => "Use http:// instead of https:// in base_url.",
        ConnectCause::Tls => "Check the server's certificate and base_url's scheme.",
        ConnectCause::Reset | ConnectCause::Other => "Check with `kimi-tui doctor`.",
    }
}

/// The innermost part of a `a: b: c` chain, short: the cause itself.
fn last_part(detail: &str) -> String {
    let last = detail.rsplit(": ").next().unwrap_or(detail).trim();
    kimi_protocol::sanitize::one_line(last, 120)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_kinds_and_resolver_errors_are_classified() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(ConnectCause::of(&refused), ConnectCause::Refused);
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
        );
        assert_eq!(ConnectCause::of(&tls), ConnectCause::TlsToPlainHttp);
        let cert = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::Expired),
        );
        assert_eq!(ConnectCause::of(&cert), ConnectCause::Tls);
        let other = std::io::Error::other("dns error: failed to lookup address information");
        assert_eq!(ConnectCause::of(&other), ConnectCause::Dns);
        assert_eq!(
            ConnectCause::of(&std::io::Error::other("something else")),
            ConnectCause::Other
        );
    }

    #[test]
    fn the_line_names_the_host_and_the_cause_only() {
        let detail = "error sending request for url (http://127.0.0.1:9/v1/x): client error \
                      (Connect): tcp connect error: Connection refused (os error 111)";
        let url = "http://127.0.0.1:9/v1/x";
        assert_eq!(
            what_failed(url, ConnectCause::Refused, detail),
            "Cannot connect to 127.0.0.1:9 (connection refused)"
        );
        assert_eq!(
            what_failed(url, ConnectCause::Other, "a: b: the cause"),
            "Cannot connect to 127.0.0.1:9 (the cause)"
        );
    }

    /// The error of listing the models of `base_url`.
    async fn listing_error(base_url: &str) -> crate::BackendError {
        let ep = crate::Endpoint::new(kimi_protocol::Mode::Chat, base_url, "m");
        let backend = crate::Backend::new(ep).expect("backend");
        backend.list_models(&[]).await.expect_err("no listing")
    }

    #[tokio::test]
    async fn real_loopback_failures_are_classified() {
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        };
        let e = listing_error(&format!("http://127.0.0.1:{closed}/v1")).await;
        assert!(
            matches!(&e, crate::BackendError::Connect { cause: ConnectCause::Refused, detail, .. }
                if detail.contains("onnection refused")),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "Cannot connect to 127.0.0.1:{closed} (connection refused). Is the server running? Check with `kimi-tui doctor`."
            )
        );
        assert!(e.with_detail().contains("\ncause: error sending request"));

        // https:// to the mock's plain HTTP port.
        let mock = kimi_mock::MockServer::start(kimi_mock::MockOptions::default(), 0)
            .await
            .expect("mock");
        let https = mock.base_url().replacen("http://", "https://", 1);
        let e = listing_error(&https).await;
        mock.shutdown().await;
        assert!(
            matches!(
                &e,
                crate::BackendError::Connect {
                    cause: ConnectCause::TlsToPlainHttp,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("Use http:// instead of https://"),
            "{e}"
        );
        assert!(!e.is_transient(), "a scheme mismatch is not retried");
    }
}
