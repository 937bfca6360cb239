//! Slash commands typed in the input box.

use kimi_protocol::Mode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SlashCommand {
    Mode(Mode),
    /// `/thinking on|off`: the `thinking` switch of K2.5/K2.6 for the next request.
    Thinking(bool),
    Clear,
    /// `None` shows the current prompt.
    System(Option<String>),
    Tools,
    /// `/tools revoke [NAME]`: take back "always allow" from one tool, or from all.
    Revoke(Option<String>),
    Inspector,
    Retry,
    /// `/export [md|json] [PATH]`: Markdown unless `json`; no path: the default file.
    Export {
        markdown: bool,
        path: Option<String>,
    },
    Help,
    Quit,
    // Issue 12: token level.
    /// `/logprobs N`: ask for token-level data with N alternatives (0 off) from the next
    /// request; `None` (no argument) shows the setting.
    Logprobs(Option<u8>),
    /// Not a known command, or bad arguments: the message to show.
    Unknown(String),
}

pub(crate) const HELP: &[(&str, &str)] = &[
    (
        "/mode raw|chat",
        "switch between raw completions and the chat endpoint",
    ),
    (
        "/thinking on|off",
        "thinking models (K2.5/K2.6): think or not, from the next request",
    ),
    ("/clear", "start a new conversation"),
    ("/system TEXT", "set the system prompt (no text: show it)"),
    (
        "/tools",
        "list the configured tools and their approval policy",
    ),
    (
        "/tools revoke [NAME]",
        "ask again for a tool (or all) you always allowed",
    ),
    ("/inspector", "open the raw-stream inspector (Ctrl-T)"),
    ("/retry", "send the last user message again"),
    (
        "/export [md|json] [PATH]",
        "write the conversation as Markdown or OpenAI-shape JSON (no path: ./kimi-SESSION.md)",
    ),
    (
        "/logprobs N",
        "token-level data: ids, logprobs, N alternatives (0 off; the inspector's t view)",
    ),
    ("/help", "keys and commands (F1)"),
    ("/quit", "leave (Ctrl-D on an empty input)"),
    ("//text", "send a message that starts with / (here /text)"),
];

/// `Some(message)` when `input` is `//text`: the message `/text`, one slash taken off, so a
/// message can start with `/` (as in Claude Code). Leading blanks before `//` go too.
pub fn unescape(input: &str) -> Option<String> {
    let rest = input.trim_start().strip_prefix("//")?;
    Some(format!("/{rest}"))
}

/// `Some` when `input` is a slash command (a single leading `/` followed by a word).
pub fn parse(input: &str) -> Option<SlashCommand> {
    let rest = input.strip_prefix('/')?;
    // Anything unknown is reported, not sent to the model by accident: a message starting
    // with `/` is typed `//` (see `unescape`).
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    Some(match name {
        "mode" => match arg {
            "raw" => SlashCommand::Mode(Mode::Raw),
            "chat" => SlashCommand::Mode(Mode::Chat),
            _ => SlashCommand::Unknown("usage: /mode raw|chat".into()),
        },
        "thinking" => match arg {
            "on" => SlashCommand::Thinking(true),
            "off" => SlashCommand::Thinking(false),
            _ => SlashCommand::Unknown("usage: /thinking on|off".into()),
        },
        "clear" => SlashCommand::Clear,
        "system" => SlashCommand::System((!arg.is_empty()).then(|| arg.to_owned())),
        "tools" => match arg.split_once(char::is_whitespace).unwrap_or((arg, "")) {
            ("", _) => SlashCommand::Tools,
            ("revoke", name) => {
                SlashCommand::Revoke((!name.trim().is_empty()).then(|| name.trim().to_owned()))
            }
            _ => SlashCommand::Unknown("usage: /tools, or /tools revoke [NAME]".into()),
        },
        "inspector" => SlashCommand::Inspector,
        "retry" => SlashCommand::Retry,
        "export" => {
            let (fmt, path) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
            let path = (!path.trim().is_empty()).then(|| path.trim().to_owned());
            match fmt {
                "" | "md" => SlashCommand::Export {
                    markdown: true,
                    path,
                },
                "json" => SlashCommand::Export {
                    markdown: false,
                    path,
                },
                _ => SlashCommand::Unknown("usage: /export [md|json] [PATH]".into()),
            }
        }
        "logprobs" => match arg.parse::<u8>() {
            _ if arg.is_empty() => SlashCommand::Logprobs(None),
            Ok(n) if n <= kimi_client::logprobs::MAX_LOGPROBS => SlashCommand::Logprobs(Some(n)),
            _ => SlashCommand::Unknown(format!(
                "usage: /logprobs N, N from 0 (off) to {} alternatives per token",
                kimi_client::logprobs::MAX_LOGPROBS
            )),
        },
        "help" => SlashCommand::Help,
        "quit" | "exit" => SlashCommand::Quit,
        other => SlashCommand::Unknown(format!("unknown command /{other}; /help lists them")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        assert_eq!(parse("/mode chat"), Some(SlashCommand::Mode(Mode::Chat)));
        assert_eq!(parse("/thinking off"), Some(SlashCommand::Thinking(false)));
        assert_eq!(parse("/thinking on"), Some(SlashCommand::Thinking(true)));
        assert!(matches!(parse("/thinking"), Some(SlashCommand::Unknown(_))));
        assert!(matches!(
            parse("/mode fast"),
            Some(SlashCommand::Unknown(_))
        ));
        assert_eq!(
            parse("/system  Be brief. "),
            Some(SlashCommand::System(Some("Be brief.".into())))
        );
        assert_eq!(parse("/system"), Some(SlashCommand::System(None)));
        assert_eq!(parse("/retry"), Some(SlashCommand::Retry));
        assert_eq!(parse("/tools"), Some(SlashCommand::Tools));
        assert_eq!(
            parse("/tools revoke get_weather"),
            Some(SlashCommand::Revoke(Some("get_weather".into())))
        );
        assert_eq!(parse("/tools revoke"), Some(SlashCommand::Revoke(None)));
        assert!(matches!(parse("/nope"), Some(SlashCommand::Unknown(m)) if m.contains("/nope")));
        assert_eq!(parse("hello /mode chat"), None);
        assert_eq!(
            parse("/export md  /tmp/a b.md"),
            Some(SlashCommand::Export {
                markdown: true,
                path: Some("/tmp/a b.md".into())
            })
        );
        assert_eq!(
            parse("/export"),
            Some(SlashCommand::Export {
                markdown: true,
                path: None
            })
        );
        assert_eq!(
            parse("/export json"),
            Some(SlashCommand::Export {
                markdown: false,
                path: None
            })
        );
        assert_eq!(
            parse("//etc/hosts is a file"),
            Some(SlashCommand::Unknown(
                "unknown command //etc/hosts; /help lists them".into()
            ))
        );
        assert_eq!(
            unescape("//etc/hosts is a file").as_deref(),
            Some("/etc/hosts is a file")
        );
        assert_eq!(unescape("/etc"), None);
        assert!(matches!(
            parse("/export pdf x"),
            Some(SlashCommand::Unknown(_))
        ));
    }
}
