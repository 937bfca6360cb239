//! Slash commands typed in the input box.

use kimi_protocol::Mode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Mode(Mode),
    /// `/thinking on|off`: the `thinking` switch of K2.5/K2.6 for the next request.
    Thinking(bool),
    Clear,
    /// `None` shows the current prompt.
    System(Option<String>),
    Tools,
    Inspector,
    Retry,
    /// `/export md PATH` or `/export json PATH`.
    Export {
        markdown: bool,
        path: String,
    },
    Help,
    Quit,
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
    ("/inspector", "open the raw-stream inspector (Ctrl-T)"),
    ("/retry", "send the last user message again"),
    (
        "/export md|json PATH",
        "write the conversation as Markdown or OpenAI-shape JSON",
    ),
    ("/help", "keys and commands (F1)"),
    ("/quit", "leave (Ctrl-D on an empty input)"),
];

/// `Some` when `input` is a slash command (a single leading `/` followed by a word).
pub fn parse(input: &str) -> Option<SlashCommand> {
    let rest = input.strip_prefix('/')?;
    // `//text` and paths like `/usr/bin` with a space-free tail are still commands only if
    // they name one; anything unknown is reported, not sent to the model by accident.
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
        "tools" => SlashCommand::Tools,
        "inspector" => SlashCommand::Inspector,
        "retry" => SlashCommand::Retry,
        "export" => match arg.split_once(char::is_whitespace) {
            Some((fmt @ ("md" | "json"), path)) if !path.trim().is_empty() => {
                SlashCommand::Export {
                    markdown: fmt == "md",
                    path: path.trim().to_owned(),
                }
            }
            _ => SlashCommand::Unknown("usage: /export md|json PATH".into()),
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
        assert!(matches!(parse("/nope"), Some(SlashCommand::Unknown(m)) if m.contains("/nope")));
        assert_eq!(parse("hello /mode chat"), None);
        assert_eq!(
            parse("/export md  /tmp/a b.md"),
            Some(SlashCommand::Export {
                markdown: true,
                path: "/tmp/a b.md".into()
            })
        );
        assert!(matches!(
            parse("/export pdf x"),
            Some(SlashCommand::Unknown(_))
        ));
    }
}
