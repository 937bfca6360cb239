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
    /// `/rules`: every argument rule in force, where it comes from, how often it matched.
    Rules,
    /// `/rules remove N`: drop session rule N of the listing.
    RemoveRule(usize),
    Inspector,
    /// `/usage`: per turn, the tokens reported, the cache hit and the reasoning re-sent.
    Usage,
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

/// One form of a command in the help: its usage, what it does, and an input that parses as
/// this form (checked by a test, so the usage cannot drift from the parser).
#[derive(Debug)]
pub(crate) struct Form {
    pub(crate) usage: &'static str,
    pub(crate) help: &'static str,
    // Read by the tests only: they are what keeps usage and parser together.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) example: &'static str,
}

/// A slash command: the one place its name, aliases, help and argument parser live. Parsing,
/// the help overlay, the README's command list and "did you mean" all read [`COMMANDS`].
#[derive(Debug)]
pub(crate) struct Command {
    /// Without the slash.
    pub(crate) name: &'static str,
    pub(crate) aliases: &'static [&'static str],
    /// The first form is the command's own; more forms are sub-commands (`/tools revoke`).
    pub(crate) forms: &'static [Form],
    /// The arguments (trimmed) to the command, or `Unknown` with the usage message.
    pub(crate) parse: fn(&str) -> SlashCommand,
}

const fn form(usage: &'static str, help: &'static str, example: &'static str) -> Form {
    Form {
        usage,
        help,
        example,
    }
}

/// `Some(arg)` unless the argument is empty.
fn optional(arg: &str) -> Option<String> {
    (!arg.is_empty()).then(|| arg.to_owned())
}

/// Every slash command, in the order of the help.
pub(crate) static COMMANDS: &[Command] = &[
    Command {
        name: "mode",
        aliases: &[],
        forms: &[form(
            "/mode raw|chat",
            "switch between raw completions and the chat endpoint",
            "/mode raw",
        )],
        parse: |arg| match arg {
            "raw" => SlashCommand::Mode(Mode::Raw),
            "chat" => SlashCommand::Mode(Mode::Chat),
            _ => SlashCommand::Unknown("usage: /mode raw|chat".into()),
        },
    },
    Command {
        name: "thinking",
        aliases: &[],
        forms: &[form(
            "/thinking on|off",
            "thinking models (K2.5/K2.6): think or not, from the next request",
            "/thinking off",
        )],
        parse: |arg| match arg {
            "on" => SlashCommand::Thinking(true),
            "off" => SlashCommand::Thinking(false),
            _ => SlashCommand::Unknown("usage: /thinking on|off".into()),
        },
    },
    Command {
        name: "clear",
        aliases: &[],
        forms: &[form("/clear", "start a new conversation", "/clear")],
        parse: |_| SlashCommand::Clear,
    },
    Command {
        name: "system",
        aliases: &[],
        forms: &[form(
            "/system TEXT",
            "set the system prompt (no text: show it)",
            "/system Be brief.",
        )],
        parse: |arg| SlashCommand::System(optional(arg)),
    },
    Command {
        name: "tools",
        aliases: &[],
        forms: &[
            form(
                "/tools",
                "list the configured tools and their approval policy",
                "/tools",
            ),
            form(
                "/tools revoke [NAME]",
                "ask again for a tool (or all) you always allowed",
                "/tools revoke get_weather",
            ),
        ],
        parse: |arg| match arg.split_once(char::is_whitespace).unwrap_or((arg, "")) {
            ("", _) => SlashCommand::Tools,
            ("revoke", name) => SlashCommand::Revoke(optional(name.trim())),
            _ => SlashCommand::Unknown("usage: /tools, or /tools revoke [NAME]".into()),
        },
    },
    Command {
        name: "rules",
        aliases: &[],
        forms: &[
            form(
                "/rules",
                "list the argument rules in force, where each comes from and its matches",
                "/rules",
            ),
            form(
                "/rules remove N",
                "remove session rule N of the listing",
                "/rules remove 1",
            ),
        ],
        parse: |arg| match arg.split_once(char::is_whitespace).unwrap_or((arg, "")) {
            ("", _) => SlashCommand::Rules,
            ("remove", n) => match n.trim().parse::<usize>() {
                Ok(n) if n > 0 => SlashCommand::RemoveRule(n),
                _ => SlashCommand::Unknown("usage: /rules remove N (N from /rules)".into()),
            },
            _ => SlashCommand::Unknown("usage: /rules, or /rules remove N".into()),
        },
    },
    Command {
        name: "inspector",
        aliases: &[],
        forms: &[form(
            "/inspector",
            "open the raw-stream inspector (Ctrl-T)",
            "/inspector",
        )],
        parse: |_| SlashCommand::Inspector,
    },
    Command {
        name: "usage",
        aliases: &[],
        forms: &[form(
            "/usage",
            "per turn: tokens, prompt-cache hits, reasoning tokens and reasoning re-sent",
            "/usage",
        )],
        parse: |_| SlashCommand::Usage,
    },
    Command {
        name: "retry",
        aliases: &[],
        forms: &[form("/retry", "send the last user message again", "/retry")],
        parse: |_| SlashCommand::Retry,
    },
    Command {
        name: "export",
        aliases: &[],
        forms: &[form(
            "/export [md|json] [PATH]",
            "write the conversation as Markdown or OpenAI-shape JSON (no path: ./kimi-SESSION.md)",
            "/export json /tmp/a.json",
        )],
        parse: |arg| {
            let (fmt, path) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
            let path = optional(path.trim());
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
        },
    },
    Command {
        name: "sessions",
        aliases: &[],
        forms: &[form(
            "/sessions",
            "pick a saved session and resume it here (as --session does)",
            "/sessions",
        )],
        parse: |_| SlashCommand::Sessions,
    },
    Command {
        name: "model",
        aliases: &[],
        forms: &[form(
            "/model [NAME]",
            "the server's models (no name), or switch to NAME from the next request",
            "/model kimi-k2.5",
        )],
        parse: |arg| SlashCommand::Model(optional(arg)),
    },
    Command {
        name: "profile",
        aliases: &[],
        forms: &[form(
            "/profile [NAME]",
            "the config's profiles (no name), or switch to NAME without restarting",
            "/profile moonshot",
        )],
        parse: |arg| SlashCommand::Profile(optional(arg)),
    },
    Command {
        name: "logprobs",
        aliases: &[],
        forms: &[form(
            "/logprobs N",
            "token-level data: ids, logprobs, N alternatives (0 off; the inspector's t view)",
            "/logprobs 5",
        )],
        parse: |arg| match arg.parse::<u8>() {
            _ if arg.is_empty() => SlashCommand::Logprobs(None),
            Ok(n) if n <= kimi_core::backend::MAX_LOGPROBS => SlashCommand::Logprobs(Some(n)),
            _ => SlashCommand::Unknown(format!(
                "usage: /logprobs N, N from 0 (off) to {} alternatives per token",
                kimi_core::backend::MAX_LOGPROBS
            )),
        },
    },
    Command {
        name: "mcp",
        aliases: &[],
        forms: &[form(
            "/mcp",
            "MCP servers: tools and approval, resources, prompts, log",
            "/mcp",
        )],
        parse: |_| SlashCommand::Mcp,
    },
    Command {
        name: "help",
        aliases: &[],
        forms: &[form("/help", "keys and commands (F1)", "/help")],
        parse: |_| SlashCommand::Help,
    },
    Command {
        name: "quit",
        aliases: &["exit"],
        forms: &[form(
            "/quit",
            "leave (Ctrl-D twice on an empty input)",
            "/quit",
        )],
        parse: |_| SlashCommand::Quit,
    },
    // Getting text out, themes.
    Command {
        name: "copy",
        aliases: &[],
        forms: &[
            form(
                "/copy [N]",
                "copy the last answer (or the Nth from the top) as Markdown, via OSC 52",
                "/copy 2",
            ),
            form(
                "/copy code [N]",
                "copy the last (or Nth) code block of the latest answer that has one",
                "/copy code 1",
            ),
        ],
        parse: copy_command,
    },
    Command {
        name: "mouse",
        aliases: &[],
        forms: &[form(
            "/mouse [on|off]",
            "wheel scrolling (F3); while on, Shift selects text in most terminals",
            "/mouse on",
        )],
        parse: |arg| match arg {
            "" => SlashCommand::Mouse(None),
            "on" => SlashCommand::Mouse(Some(true)),
            "off" => SlashCommand::Mouse(Some(false)),
            _ => SlashCommand::Unknown("usage: /mouse [on|off]".into()),
        },
    },
    Command {
        name: "theme",
        aliases: &[],
        forms: &[form(
            "/theme dark|light",
            "switch the colours (`theme` in the config: dark, light or auto)",
            "/theme light",
        )],
        parse: |arg| match arg {
            "" => SlashCommand::Theme(None),
            a => match crate::ui::theme::Theme::parse(a) {
                Some(t) => SlashCommand::Theme(Some(t)),
                None => SlashCommand::Unknown("usage: /theme dark|light".into()),
            },
        },
    },
];

/// MCP prompt commands: `/mcp__SERVER__PROMPT`, named by the servers at run time.
pub(crate) const MCP_PROMPT_PREFIX: &str = "mcp__";

/// Help rows that are not commands of the table: the dynamic MCP prompts and the two ways to
/// write a message that the input would otherwise read differently.
pub(crate) const OTHER_FORMS: &[(&str, &str)] = &[
    (
        "/mcp__S__P [ARGS]",
        "MCP server S's prompt P into the input, to review and send",
    ),
    (
        "@SERVER:URI",
        "in a message: attach that MCP resource's text (read first)",
    ),
    ("//text", "send a message that starts with / (here /text)"),
];

/// The help's command list, `(usage, what it does)`: every form of every command (aliases
/// next to the command's own usage), then [`OTHER_FORMS`].
pub(crate) fn help_rows() -> Vec<(String, &'static str)> {
    let mut rows = Vec::new();
    for c in COMMANDS {
        for (i, f) in c.forms.iter().enumerate() {
            let mut usage = f.usage.to_owned();
            if i == 0 {
                for a in c.aliases {
                    usage.push_str(&format!(", /{a}"));
                }
            }
            rows.push((usage, f.help));
        }
    }
    rows.extend(OTHER_FORMS.iter().map(|&(u, h)| (u.to_owned(), h)));
    rows
}

/// The command named `name` (or one of its aliases).
fn find(name: &str) -> Option<&'static Command> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// Every name a command answers to, with its command: the name, then its aliases.
pub(crate) fn names() -> impl Iterator<Item = (&'static str, &'static Command)> {
    COMMANDS.iter().flat_map(|c| {
        std::iter::once(c.name)
            .chain(c.aliases.iter().copied())
            .map(move |n| (n, c))
    })
}

/// The command that `name` was probably meant to be: one that starts with it, or one a typo
/// or two away (Levenshtein distance). `None` when nothing is close (a path like `/etc/hosts`).
pub(crate) fn suggestion(name: &str) -> Option<&'static str> {
    if name.chars().count() < 2 {
        return None;
    }
    if let Some((n, _)) = names().find(|(n, _)| n.starts_with(name)) {
        return Some(n);
    }
    let limit = if name.chars().count() <= 4 { 1 } else { 2 };
    names()
        .map(|(n, _)| (strsim::levenshtein(name, n), n))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// `Some(message)` when `input` is `//text`: the message `/text`, one slash taken off, so a
/// message can start with `/` (as in Claude Code). Leading blanks before `//` go too.
pub(crate) fn unescape(input: &str) -> Option<String> {
    let rest = input.trim_start().strip_prefix("//")?;
    Some(format!("/{rest}"))
}

/// `Some` when `input` is a slash command (a single leading `/` followed by a word).
pub(crate) fn parse(input: &str) -> Option<SlashCommand> {
    let rest = input.strip_prefix('/')?;
    // Anything unknown is reported, not sent to the model by accident: a message starting
    // with `/` is typed `//` (see `unescape`).
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    if let Some(c) = find(name) {
        return Some((c.parse)(arg));
    }
    if name.starts_with(MCP_PROMPT_PREFIX) {
        return Some(SlashCommand::McpPrompt {
            name: name.to_owned(),
            args: arg.to_owned(),
        });
    }
    Some(SlashCommand::Unknown(match suggestion(name) {
        Some(near) => format!("unknown command /{name}; did you mean /{near}? /help lists them"),
        None => format!("unknown command /{name}; /help lists them"),
    }))
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
        assert_eq!(parse("/rules"), Some(SlashCommand::Rules));
        assert_eq!(parse("/rules remove 2"), Some(SlashCommand::RemoveRule(2)));
        for bad in [
            "/rules remove",
            "/rules remove 0",
            "/rules remove x",
            "/rules drop 1",
        ] {
            assert!(
                matches!(parse(bad), Some(SlashCommand::Unknown(m)) if m.starts_with("usage: /rules")),
                "{bad}"
            );
        }
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

    /// The table entry a parsed command comes from; exhaustive, so that a new variant must
    /// name its entry here.
    fn entry_of(cmd: &SlashCommand) -> Option<&'static str> {
        Some(match cmd {
            SlashCommand::Mode(_) => "mode",
            SlashCommand::Thinking(_) => "thinking",
            SlashCommand::Clear => "clear",
            SlashCommand::System(_) => "system",
            SlashCommand::Tools | SlashCommand::Revoke(_) => "tools",
            SlashCommand::Rules | SlashCommand::RemoveRule(_) => "rules",
            SlashCommand::Inspector => "inspector",
            SlashCommand::Usage => "usage",
            SlashCommand::Retry => "retry",
            SlashCommand::Export { .. } => "export",
            SlashCommand::Help => "help",
            SlashCommand::Quit => "quit",
            SlashCommand::Copy(_) => "copy",
            SlashCommand::Mouse(_) => "mouse",
            SlashCommand::Theme(_) => "theme",
            SlashCommand::Sessions => "sessions",
            SlashCommand::Model(_) => "model",
            SlashCommand::Profile(_) => "profile",
            SlashCommand::Logprobs(_) => "logprobs",
            SlashCommand::Mcp => "mcp",
            SlashCommand::McpPrompt { .. } | SlashCommand::Unknown(_) => return None,
        })
    }

    #[test]
    fn every_entry_parses_its_examples_and_is_in_the_help() {
        // Compared without blanks: the help wraps its lines.
        let flat = |s: &str| s.split_whitespace().collect::<String>();
        let text: String = crate::ui::help::lines(200, true)
            .iter()
            .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
            .collect();
        let text = flat(&text);
        let help = |s: &str| text.contains(&flat(s));
        let mut names = std::collections::HashSet::new();
        for c in COMMANDS {
            assert!(names.insert(c.name), "/{} twice", c.name);
            for a in c.aliases {
                assert!(names.insert(a), "/{a} twice");
                let alias = parse(&format!("/{a}")).expect("a command");
                assert_eq!(entry_of(&alias), Some(c.name), "/{a}");
            }
            assert!(!c.forms.is_empty(), "/{}", c.name);
            for f in c.forms {
                let cmd = parse(f.example).expect("a command");
                assert_eq!(entry_of(&cmd), Some(c.name), "{}: {cmd:?}", f.example);
                assert!(f.usage.starts_with(&format!("/{}", c.name)), "{}", f.usage);
                assert!(help(f.usage), "{} not in the help", f.usage);
                assert!(help(f.help), "{} not in the help", f.help);
            }
            for a in c.aliases {
                assert!(help(&format!("/{a}")), "/{a} not in the help");
            }
        }
        for (usage, what) in OTHER_FORMS {
            assert!(help(usage) && help(what), "{usage}");
        }
    }

    #[test]
    fn the_parser_accepts_no_command_outside_the_table() {
        // Every variant the parser can produce comes from some entry's example (or is dynamic).
        let produced: Vec<_> = COMMANDS
            .iter()
            .flat_map(|c| c.forms)
            .filter_map(|f| parse(f.example))
            .map(|c| std::mem::discriminant(&c))
            .collect();
        let every = [
            SlashCommand::Mode(Mode::Raw),
            SlashCommand::Thinking(true),
            SlashCommand::Clear,
            SlashCommand::System(None),
            SlashCommand::Tools,
            SlashCommand::Revoke(None),
            SlashCommand::Rules,
            SlashCommand::RemoveRule(1),
            SlashCommand::Inspector,
            SlashCommand::Usage,
            SlashCommand::Retry,
            SlashCommand::Export {
                markdown: true,
                path: None,
            },
            SlashCommand::Help,
            SlashCommand::Quit,
            SlashCommand::Copy(super::super::copy::Target::Answer(None)),
            SlashCommand::Mouse(None),
            SlashCommand::Theme(None),
            SlashCommand::Sessions,
            SlashCommand::Model(None),
            SlashCommand::Profile(None),
            SlashCommand::Logprobs(None),
            SlashCommand::Mcp,
        ];
        for cmd in &every {
            assert!(entry_of(cmd).is_some());
            assert!(
                produced.contains(&std::mem::discriminant(cmd)),
                "{cmd:?}: no example"
            );
        }
        // Names that are not in the table are unknown, whatever they look like; only the
        // dynamic MCP prompts pass.
        for name in [
            "revoke", "code", "md", "json", "on", "raw", "q", "h", "?", "exit_", "quit!", "Help",
            "MODE", "mcp_", "mcpx", "prompt", "", "session", "models",
        ] {
            assert!(find(name).is_none());
            assert!(
                matches!(parse(&format!("/{name} x")), Some(SlashCommand::Unknown(m)) if m.starts_with("unknown command")),
                "/{name}"
            );
        }
        assert!(matches!(
            parse("/mcp__s__p"),
            Some(SlashCommand::McpPrompt { .. })
        ));
    }

    #[test]
    fn unknown_commands_suggest_a_near_one_from_the_table() {
        let unknown = |s| match parse(s) {
            Some(SlashCommand::Unknown(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            unknown("/profle x"),
            "unknown command /profle; did you mean /profile? /help lists them"
        );
        assert_eq!(
            unknown("/ex"),
            "unknown command /ex; did you mean /export? /help lists them"
        );
        assert_eq!(
            unknown("/exi"),
            "unknown command /exi; did you mean /exit? /help lists them"
        );
        assert_eq!(
            unknown("/xyzzy"),
            "unknown command /xyzzy; /help lists them"
        );
        assert_eq!(
            unknown("/exprt foo"),
            "unknown command /exprt; did you mean /export? /help lists them"
        );
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
