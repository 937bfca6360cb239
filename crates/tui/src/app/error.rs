//! Why the app could not start or had to stop: a typed error for the binary to print (the
//! binary alone turns errors into text with `anyhow`).

use kimi_core::engine::StartError;
use kimi_core::session::SessionError;
use kimi_core::tools::ToolboxError;

/// What ended [`run`](super::run) with an error. The variants with a `#[source]` leave the
/// cause to the error chain, so that `{:#}` prints each part once.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The caller's setup failed (configuration, the demo server).
    #[error(transparent)]
    Setup(Box<dyn std::error::Error + Send + Sync>),
    /// The profile's settings are not usable (its key, its client).
    #[error(transparent)]
    Start(#[from] StartError),
    /// The configured tools are not valid; `origin` as for `Profile`.
    #[error("{origin}: {error}")]
    Tools { origin: String, error: ToolboxError },
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The project's rules file (`.kimi-tui/rules.toml`) is not valid: file, line, why.
    #[error(transparent)]
    Rules(#[from] kimi_core::config::ConfigError),
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot take over the terminal")]
    Terminal(#[source] std::io::Error),
    #[error("reading the terminal")]
    ReadTerminal(#[source] std::io::Error),
    #[error("drawing the screen")]
    Draw(#[source] std::io::Error),
    #[error("cannot watch for SIGHUP and SIGTERM")]
    Signals(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn each_part_of_the_chain_is_said_once() {
        let e = AppError::Terminal(std::io::Error::other("not a tty"));
        assert_eq!(e.to_string(), "cannot take over the terminal");
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("not a tty")
        );
        let setup: Box<dyn std::error::Error + Send + Sync> = "no such profile `x`".into();
        assert_eq!(AppError::Setup(setup).to_string(), "no such profile `x`");
        let p = AppError::Start(StartError::Profile {
            origin: "profile `local`".into(),
            error: kimi_core::config::ApiKeyError::NotSet { var: "KEY".into() },
        });
        assert_eq!(
            p.to_string(),
            "profile `local`: the environment variable KEY (api_key_env) is not set; export it with your API key"
        );
    }
}
