//! Transient failures: which errors are worth another attempt, how long to wait
//! before it (exponential backoff with jitter, or the server's `Retry-After`), and within which
//! bounds. The agent runs the loop; this module only decides.

use std::time::{Duration, SystemTime};

use super::{BackendError, ConnectCause};

/// How a profile retries a request that failed before any of its answer arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first; 0 turns retrying off.
    pub retries: u32,
    /// The longest wait before one attempt: a longer `Retry-After` is not waited (the error is
    /// shown), and backoff is capped here.
    pub max_wait: Duration,
    /// The first backoff step; each retry doubles it.
    pub base: Duration,
}

impl RetryPolicy {
    /// No retries: what [`Endpoint::new`](crate::Endpoint::new) starts with (profiles set theirs).
    pub const NONE: RetryPolicy = RetryPolicy {
        retries: 0,
        max_wait: Duration::from_secs(60),
        base: Duration::from_secs(1),
    };

    /// `retries` more attempts, waiting at most `max_wait_secs` before one.
    pub fn new(retries: u32, max_wait_secs: u64) -> Self {
        RetryPolicy {
            retries,
            max_wait: Duration::from_secs(max_wait_secs),
            ..Self::NONE
        }
    }

    /// The wait before retry number `retry` (1 for the second attempt) after `error`, or why
    /// there is none. `Err(None)`: not retried (not transient, or retries used up);
    /// `Err(Some(text))`: the server asked for a wait above `max_wait`.
    pub fn wait(&self, error: &BackendError, retry: u32) -> Result<Duration, Option<String>> {
        if retry > self.retries || !error.is_transient() {
            return Err(None);
        }
        if let BackendError::Http {
            retry_after_secs: Some(secs),
            ..
        } = error
        {
            let asked = Duration::from_secs(*secs);
            return if asked > self.max_wait {
                Err(Some(format!(
                    "the server asks to wait {secs} s, more than retry_max_wait_secs ({} s): not retried",
                    self.max_wait.as_secs()
                )))
            } else {
                Ok(asked)
            };
        }
        Ok(self.backoff(retry, fastrand::f64()))
    }

    /// `base * 2^(retry-1)` capped at `max_wait`, of which the upper half is scaled by `jitter`
    /// (in 0..1): clients that failed together do not all come back at the same instant.
    pub fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let step = self
            .base
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20))
            .min(self.max_wait);
        step / 2 + step.div_f64(2.0).mul_f64(jitter.clamp(0.0, 1.0))
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::NONE
    }
}

impl BackendError {
    /// A failure another attempt may not meet: HTTP 429 and 5xx (not 501/505, which say the
    /// server never does this), and a connection refused or reset before any answer (a server
    /// restarting). Nothing of the answer has arrived with any of them.
    pub fn is_transient(&self) -> bool {
        match self {
            BackendError::Http { status, .. } => {
                *status == 429 || ((500..600).contains(status) && !matches!(status, 501 | 505))
            }
            BackendError::Connect { cause, .. } => {
                matches!(cause, ConnectCause::Refused | ConnectCause::Reset)
            }
            _ => false,
        }
    }
}

/// A `Retry-After` value: delay seconds, or an HTTP-date (seconds from now, 0 when past).
pub fn parse_retry_after(value: &str) -> Option<u64> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(secs);
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(SystemTime::now()).map_or(0, |d| {
        // A date a fraction of a second ahead still means "wait": round up.
        d.as_secs() + u64::from(d.subsec_nanos() > 0)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16, retry_after_secs: Option<u64>) -> BackendError {
        BackendError::Http {
            status,
            url: "u".into(),
            message: "m".into(),
            retry_after_secs,
        }
    }

    #[test]
    fn transient_errors_are_429_5xx_and_refused_connections() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(http(s, None).is_transient(), "{s}");
        }
        for s in [400, 401, 403, 404, 422, 501, 505] {
            assert!(!http(s, None).is_transient(), "{s}");
        }
        let refused = BackendError::Connect {
            url: "u".into(),
            cause: ConnectCause::Refused,
            detail: "error sending request: tcp connect error: Connection refused (os error 111)"
                .into(),
        };
        assert!(refused.is_transient());
        let dns = BackendError::Connect {
            url: "u".into(),
            cause: ConnectCause::Dns,
            detail: "dns error: failed to lookup address".into(),
        };
        assert!(!dns.is_transient());
        let dropped = BackendError::Dropped {
            bytes: 10,
            detail: "x".into(),
        };
        assert!(
            !dropped.is_transient(),
            "a stream that began is never retried"
        );
    }

    #[test]
    fn waits_follow_retry_after_backoff_and_the_bounds() {
        let p = RetryPolicy::new(3, 60);
        assert_eq!(p.wait(&http(429, Some(2)), 1), Ok(Duration::from_secs(2)));
        let too_long = p.wait(&http(429, Some(120)), 1);
        assert!(
            matches!(&too_long, Err(Some(t)) if t.contains("120 s")),
            "{too_long:?}"
        );
        assert_eq!(p.wait(&http(503, None), 4), Err(None), "retries used up");
        assert_eq!(p.wait(&http(400, None), 1), Err(None), "not transient");
        assert_eq!(RetryPolicy::NONE.wait(&http(503, None), 1), Err(None));
        // Doubling, half of each step jittered, capped at max_wait.
        assert_eq!(p.backoff(1, 0.0), Duration::from_millis(500));
        assert_eq!(p.backoff(1, 1.0), Duration::from_secs(1));
        assert_eq!(p.backoff(3, 1.0), Duration::from_secs(4));
        assert_eq!(p.backoff(3, 0.5), Duration::from_secs(3));
        assert_eq!(p.backoff(30, 1.0), Duration::from_secs(60));
        let w = p.wait(&http(503, None), 2).expect("a wait");
        assert!(
            w >= Duration::from_secs(1) && w <= Duration::from_secs(2),
            "{w:?}"
        );
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 7 "), Some(7));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(0),
            "a date in the past: no wait"
        );
        let ahead = SystemTime::now() + Duration::from_secs(30);
        let secs = parse_retry_after(&httpdate::fmt_http_date(ahead)).expect("a date");
        assert!((29..=31).contains(&secs), "{secs}");
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }
}
