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
    // Getting text out, themes.
    /// `/copy [N]`, `/copy code [N]`.
    Copy(super::copy::Target),
    /// `/mouse [on|off]`; no argument toggles.
    Mouse(Option<bool>),
    /// `/theme dark|light`; no argument shows the theme in use.
    Theme(Option<crate::ui::theme::Theme>),
    /// `/sessions`: pick a saved session and resume it in place.
    Sessions,
    // Switching without restarting.
    /// `/model [NAME]`: list the server's models, or use NAME from the next request.
    Model(Option<String>),
    /// `/profile [NAME]`: list the config's profiles, or switch to NAME.
    Profile(Option<String>),
    // Token level.
    /// `/logprobs N`: ask for token-level data with N alternatives (0 off) from the next
    /// request; `None` (no argument) shows the setting.
    Logprobs(Option<u8>),
    /// `/mcp`: the MCP servers, their tools, resources, prompts and logs.
    Mcp,
    /// `/mcp__SERVER__PROMPT ARGS`: an MCP prompt into the input; `name` without the slash.
    McpPrompt {
        name: String,
        args: String,
    },
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
        "/sessions",
        "pick a saved session and resume it here (as --session does)",
    ),
    (
        "/model [NAME]",
        "the server's models (no name), or switch to NAME from the next request",
    ),
    (
        "/profile [NAME]",
        "the config's profiles (no name), or switch to NAME without restarting",
    ),
    (
        "/logprobs N",
        "token-level data: ids, logprobs, N alternatives (0 off; the inspector's t view)",
    ),
    (
        "/mcp",
        "MCP servers: tools and approval, resources, prompts, log",
    ),
    (
        "/mcp__S__P [ARGS]",
        "MCP server S's prompt P into the input, to review and send",
    ),
    (
        "@SERVER:URI",
        "in a message: attach that MCP resource's text (read first)",
    ),
    ("/help", "keys and commands (F1)"),
    ("/quit", "leave (Ctrl-D on an empty input)"),
    ("//text", "send a message that starts with / (here /text)"),
    // Getting text out, themes.
    (
        "/copy [N]",
        "copy the last answer (or the Nth from the top) as Markdown, via OSC 52",
    ),
    (
        "/copy code [N]",
        "copy the last (or Nth) code block of the latest answer that has one",
    ),
    (
        "/mouse [on|off]",
        "wheel scrolling (F3); while on, Shift selects text in most terminals",
    ),
    (
        "/theme dark|light",
        "switch the colours (`theme` in the config: dark, light or auto)",
    ),
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
        // Getting text out, themes.
        "copy" => copy_command(arg),
        "mouse" => match arg {
            "" => SlashCommand::Mouse(None),
            "on" => SlashCommand::Mouse(Some(true)),
            "off" => SlashCommand::Mouse(Some(false)),
            _ => SlashCommand::Unknown("usage: /mouse [on|off]".into()),
        },
        "theme" => match arg {
            "" => SlashCommand::Theme(None),
            a => match crate::ui::theme::Theme::parse(a) {
                Some(t) => SlashCommand::Theme(Some(t)),
                None => SlashCommand::Unknown("usage: /theme dark|light".into()),
            },
        },
        "sessions" => SlashCommand::Sessions,
        "model" => SlashCommand::Model((!arg.is_empty()).then(|| arg.to_owned())),
        "profile" => SlashCommand::Profile((!arg.is_empty()).then(|| arg.to_owned())),
        "logprobs" => match arg.parse::<u8>() {
            _ if arg.is_empty() => SlashCommand::Logprobs(None),
            Ok(n) if n <= kimi_client::logprobs::MAX_LOGPROBS => SlashCommand::Logprobs(Some(n)),
            _ => SlashCommand::Unknown(format!(
                "usage: /logprobs N, N from 0 (off) to {} alternatives per token",
                kimi_client::logprobs::MAX_LOGPROBS
            )),
        },
        "mcp" => SlashCommand::Mcp,
        n if n.starts_with("mcp__") => SlashCommand::McpPrompt {
            name: n.to_owned(),
            args: arg.to_owned(),
        },
        "help" => SlashCommand::Help,
        "quit" | "exit" => SlashCommand::Quit,
        other => SlashCommand::Unknown(format!("unknown command /{other}; /help lists them")),
    })
}

/// `/copy [N]`, `/copy code [N]`: N counts from 1.
fn copy_command(arg: &str) -> SlashCommand {
    use super::copy::Target;
    let usage = || SlashCommand::Unknown("usage: /copy [N], or /copy code [N] (N from 1)".into());
    let mut words = arg.split_whitespace();
    let (code, n) = match (words.next(), words.next(), words.next()) {
        (None, ..) => (false, None),
        (Some("code"), None, _) => (true, None),
        (Some("code"), Some(n), None) => (true, Some(n)),
        (Some(n), None, _) => (false, Some(n)),
        _ => return usage(),
    };
    let n = match n.map(str::parse::<usize>) {
        None => None,
        Some(Ok(n)) if n > 0 => Some(n),
        Some(_) => return usage(),
    };
    SlashCommand::Copy(if code {
        Target::Code(n)
    } else {
        Target::Answer(n)
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
        assert_eq!(parse("/sessions"), Some(SlashCommand::Sessions));
        assert_eq!(parse("/model"), Some(SlashCommand::Model(None)));
        assert_eq!(
            parse("/model  kimi-k2.5 "),
            Some(SlashCommand::Model(Some("kimi-k2.5".into())))
        );
        assert_eq!(parse("/profile"), Some(SlashCommand::Profile(None)));
        assert_eq!(
            parse("/profile moonshot"),
            Some(SlashCommand::Profile(Some("moonshot".into())))
        );
        assert_eq!(parse("/tools"), Some(SlashCommand::Tools));
        assert_eq!(parse("/mcp"), Some(SlashCommand::Mcp));
        assert_eq!(
            parse("/mcp__demo__greet name=Ada  x"),
            Some(SlashCommand::McpPrompt {
                name: "mcp__demo__greet".into(),
                args: "name=Ada  x".into()
            })
        );
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

    #[test]
    fn copy_mouse_and_theme_parse() {
        use super::super::copy::Target;
        use crate::ui::theme::Theme;
        let copy = |s| match parse(s) {
            Some(SlashCommand::Copy(t)) => Some(t),
            _ => None,
        };
        assert_eq!(copy("/copy"), Some(Target::Answer(None)));
        assert_eq!(copy("/copy 3"), Some(Target::Answer(Some(3))));
        assert_eq!(copy("/copy code"), Some(Target::Code(None)));
        assert_eq!(copy("/copy  code  2"), Some(Target::Code(Some(2))));
        for bad in [
            "/copy 0",
            "/copy -1",
            "/copy x",
            "/copy code x",
            "/copy 1 2",
            "/copy code 1 2",
        ] {
            assert!(
                matches!(parse(bad), Some(SlashCommand::Unknown(m)) if m.starts_with("usage: /copy")),
                "{bad}"
            );
        }
        assert_eq!(parse("/mouse"), Some(SlashCommand::Mouse(None)));
        assert_eq!(parse("/mouse on"), Some(SlashCommand::Mouse(Some(true))));
        assert_eq!(parse("/mouse off"), Some(SlashCommand::Mouse(Some(false))));
        assert!(matches!(
            parse("/mouse maybe"),
            Some(SlashCommand::Unknown(_))
        ));
        assert_eq!(
            parse("/theme light"),
            Some(SlashCommand::Theme(Some(Theme::Light)))
        );
        assert_eq!(
            parse("/theme dark"),
            Some(SlashCommand::Theme(Some(Theme::Dark)))
        );
        assert_eq!(parse("/theme"), Some(SlashCommand::Theme(None)));
        assert!(matches!(
            parse("/theme auto"),
            Some(SlashCommand::Unknown(_))
        ));
    }
}
