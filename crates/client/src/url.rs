//! URLs as shown and saved: never with the `user:password@` of a base URL, and the origin
//! check that keeps a conversation from following a redirect to another server.

/// `url` without its userinfo (`http://user:pw@host/v1` -> `http://host/v1`), otherwise
/// unchanged, byte for byte. Works on text that is not a valid URL too (a config error shows
/// what was written), so nothing between `//` and the host is ever displayed.
pub fn redact_url(url: &str) -> String {
    let auth_start = url.find("//").map_or(0, |i| i + 2);
    let rest = &url[auth_start..];
    let auth_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..auth_len].rfind('@') {
        Some(at) => format!("{}{}", &url[..auth_start], &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// `host` or `host:port` (as written) of a URL, for the status line; `None` when `url` is not
/// a URL with a host.
pub fn host_and_port(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?;
    Some(match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    })
}

/// `scheme://host:port` of `url`, the port always written.
pub(crate) fn origin(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(p) => format!("{}://{host}:{p}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// A redirect refused because it leads to another origin.
#[derive(Debug)]
pub(crate) struct CrossOrigin {
    pub from: String,
    pub to: String,
}

impl std::fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "redirect from {} to {} refused", self.from, self.to)
    }
}

impl std::error::Error for CrossOrigin {}

/// Follow redirects within the origin of the first request (a server moving its routes), at
/// most 10; refuse any to another origin, so that neither the key nor the conversation
/// reaches a server the user did not configure.
pub(crate) fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        let (from, to) = (origin(first), origin(attempt.url()));
        if from != to {
            attempt.error(CrossOrigin { from, to })
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_stripped_and_nothing_else_changes() {
        assert_eq!(
            redact_url("http://user:pw@host:8000/v1"),
            "http://host:8000/v1"
        );
        assert_eq!(redact_url("https://tok@h/v1?x=a@b"), "https://h/v1?x=a@b");
        assert_eq!(redact_url("http://a@b:c@h"), "http://h");
        assert_eq!(redact_url("user:pw@localhost:8000/v1"), "localhost:8000/v1");
        assert_eq!(redact_url("http://h/v1/@x"), "http://h/v1/@x");
        assert_eq!(redact_url("HTTP://H:1/V1/"), "HTTP://H:1/V1/");
        assert_eq!(redact_url(""), "");
    }

    #[test]
    fn host_and_port_as_written_without_userinfo() {
        assert_eq!(
            host_and_port("http://u:p@127.0.0.1:8000/v1").as_deref(),
            Some("127.0.0.1:8000")
        );
        assert_eq!(
            host_and_port("https://api.moonshot.ai/v1").as_deref(),
            Some("api.moonshot.ai")
        );
        assert_eq!(host_and_port("https://h:443/v1").as_deref(), Some("h"));
        assert_eq!(host_and_port("localhost:8000/v1"), None);
        assert_eq!(host_and_port("not a url"), None);
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let u = |s: &str| reqwest::Url::parse(s).expect("url");
        assert_eq!(origin(&u("http://h/v1")), origin(&u("http://h:80/x")));
        assert_ne!(origin(&u("http://h/v1")), origin(&u("https://h/v1")));
        assert_ne!(origin(&u("http://h:1/v1")), origin(&u("http://h:2/v1")));
        assert_eq!(origin(&u("http://u:p@h:1/v1")), "http://h:1");
    }
}
