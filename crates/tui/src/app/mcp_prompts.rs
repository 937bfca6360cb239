//! MCP prompts as slash commands: `/mcp__SERVER__PROMPT ARGS` asks the server for the prompt
//! (off the loop: [`Effect::GetPrompt`]) and puts its text into the input, for the user to read
//! and send. Nothing is sent to the model by the command itself.

use serde_json::{Map, Value};

use super::event::Effect;
use super::mcp_view::{prompt_command, prompt_usage};
use super::state::App;
use kimi_core::tools::mcp::{McpRequestError, PromptInfo, PromptText};
use kimi_protocol::sanitize::{self, one_line};

/// `ARGS` split into words; `"..."` keeps spaces in a value (`topic="two words"`).
pub(crate) fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in args.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The prompt's arguments from `args`: `key=value` for a named argument, other words fill the
/// arguments not named, in the prompt's order. Errors say the usage and what is missing.
pub(crate) fn arguments(
    server: &str,
    p: &PromptInfo,
    args: &str,
) -> Result<Map<String, Value>, PromptArgsError> {
    let usage = || prompt_usage(server, p);
    let mut named = Map::new();
    let mut positional = Vec::new();
    for w in words(args) {
        match w.split_once('=') {
            Some((k, v)) if p.arguments.iter().any(|(n, _)| n == k) => {
                named.insert(k.to_owned(), Value::String(v.to_owned()));
            }
            _ => positional.push(w),
        }
    }
    let mut positional = positional.into_iter();
    for (name, _) in &p.arguments {
        if named.contains_key(name) {
            continue;
        }
        match positional.next() {
            Some(v) => {
                named.insert(name.clone(), Value::String(v));
            }
            None => break,
        }
    }
    if let Some(extra) = positional.next() {
        return Err(PromptArgsError::TooMany {
            command: one_line(&prompt_command(server, &p.name), 200),
            extra: one_line(&extra, 80),
            usage: usage(),
        });
    }
    let missing: Vec<String> = p
        .arguments
        .iter()
        .filter(|(n, required)| *required && !named.contains_key(n))
        .map(|(n, _)| one_line(n, 64))
        .collect();
    if !missing.is_empty() {
        return Err(PromptArgsError::Missing {
            missing,
            usage: usage(),
        });
    }
    Ok(named)
}

/// Why the words after a prompt's command are not its arguments; ends with the usage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PromptArgsError {
    /// `extra` is the first word no argument took.
    #[error("{command}: too many arguments (from {extra:?}); usage: {usage}")]
    TooMany {
        command: String,
        extra: String,
        usage: String,
    },
    #[error(
        "missing required argument{} {}; usage: {usage}",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    )]
    Missing { missing: Vec<String>, usage: String },
}

/// `/mcp__SERVER__PROMPT ARGS`: the prompt of a ready server, asked for off the loop.
pub(crate) fn command(app: &mut App, name: &str, args: &str, fx: &mut Vec<Effect>) {
    let slash = format!("/{name}");
    let found = app
        .mcp
        .prompts
        .iter()
        .find(|(s, p)| prompt_command(s, &p.name) == slash)
        .cloned();
    let Some((server, prompt)) = found else {
        let known: Vec<String> = app
            .mcp
            .prompts
            .iter()
            .map(|(s, p)| one_line(&prompt_command(s, &p.name), 120))
            .collect();
        let list = if known.is_empty() {
            "no ready MCP server offers prompts".to_owned()
        } else {
            format!("prompts: {}", known.join(", "))
        };
        return app.notice(
            format!("No MCP prompt {} ({list}).", one_line(&slash, 120)),
            true,
        );
    };
    match arguments(&server, &prompt, args) {
        Ok(arguments) => fx.push(Effect::GetPrompt {
            server,
            prompt: prompt.name,
            arguments,
        }),
        Err(e) => app.notice(e.to_string(), true),
    }
}

/// The answer to [`Effect::GetPrompt`]: its text in the input (after any draft), or why not.
pub(crate) fn got(
    app: &mut App,
    server: &str,
    prompt: &str,
    result: Result<Vec<PromptText>, McpRequestError>,
) {
    let command = one_line(&prompt_command(server, prompt), 200);
    let messages = match result {
        Ok(m) => m,
        Err(e) => {
            return app.notice(
                format!(
                    "{command}: the server could not give the prompt: {}",
                    one_line(&e.to_string(), 500)
                ),
                true,
            );
        }
    };
    // The server's text, without escape sequences, as a draft the user reads before sending.
    let text = messages
        .iter()
        .map(|m| sanitize::for_terminal(&m.text).into_owned())
        .filter(|t| !t.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    if text.is_empty() {
        return app.notice(format!("{command}: the prompt has no text."), true);
    }
    let draft = app.composer.input.lines().join("\n");
    let full = if draft.trim().is_empty() {
        text
    } else {
        format!("{draft}\n\n{text}")
    };
    app.composer.input = super::composer::new_input();
    app.composer.input.insert_str(&full);
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    let note = if roles.iter().any(|r| *r != "user") {
        " (its assistant messages too, as text)"
    } else {
        ""
    };
    app.notice(
        format!("{command}: the prompt is in the input{note}. Review it, then Enter sends it."),
        false,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt() -> PromptInfo {
        PromptInfo {
            name: "review".into(),
            description: None,
            arguments: vec![("file".into(), true), ("focus".into(), false)],
        }
    }

    #[test]
    fn named_and_positional_arguments() {
        let p = prompt();
        let a = arguments("s", &p, "main.rs").expect("ok");
        assert_eq!(Value::Object(a), serde_json::json!({"file": "main.rs"}));
        let a = arguments("s", &p, r#"focus="error handling" lib.rs"#).expect("ok");
        assert_eq!(
            Value::Object(a),
            serde_json::json!({"file": "lib.rs", "focus": "error handling"})
        );
        let e = arguments("s", &p, "focus=x")
            .expect_err("missing")
            .to_string();
        assert!(e.contains("missing required argument file"), "{e}");
        assert!(e.contains("usage: /mcp__s__review file=… [focus=…]"), "{e}");
        let e = arguments("s", &p, "a b c").expect_err("extra").to_string();
        assert!(e.contains("too many arguments"), "{e}");
    }
}
