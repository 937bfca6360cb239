//! `@SERVER:URI` in a message: the resource of a ready MCP server is read off the loop
//! ([`Effect::ReadResources`]) and its text goes after the message. The message waits in the
//! input until every read succeeded; a failed read sends nothing.

use super::event::Effect;
use super::state::App;
use kimi_protocol::sanitize::one_line;

/// A resource a message names: `(server, uri)`.
pub(crate) type Ref = (String, String);

/// The `@SERVER:URI` words of `text` whose SERVER is one of `ready`, each once, in order.
/// Punctuation that ends a sentence is not part of the URI.
pub(crate) fn find(text: &str, ready: &[String]) -> Vec<Ref> {
    let mut out: Vec<Ref> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some((server, uri)) = rest.split_once(':') else {
            continue;
        };
        let uri = uri.trim_end_matches(['.', ',', ';', '!', '?', ')']);
        if uri.is_empty() || !ready.iter().any(|r| r == server) {
            continue;
        }
        let r = (server.to_owned(), uri.to_owned());
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// The message as sent: each resource's text after it.
pub(crate) fn attached(message: &str, resources: &[(String, String, String)]) -> String {
    let mut s = message.to_owned();
    for (server, uri, text) in resources {
        s.push_str(&format!("\n\n[resource {server}:{uri}]\n{text}"));
    }
    s
}

/// Enter on `message`: when it names resources, they are read first (the message stays in the
/// input meanwhile) and `true` is returned; `false` when there is nothing to attach.
pub(crate) fn submit(app: &mut App, message: &str, fx: &mut Vec<Effect>) -> bool {
    let refs = find(message, &app.mcp.servers);
    if refs.is_empty() {
        return false;
    }
    let names: Vec<String> = refs
        .iter()
        .map(|(s, u)| format!("{}:{}", one_line(s, 64), one_line(u, 200)))
        .collect();
    app.notice(
        format!("Reading {} to attach to your message…", names.join(", ")),
        false,
    );
    fx.push(Effect::ReadResources {
        message: message.to_owned(),
        refs,
    });
    true
}

/// The reads for `message` ended: it is sent with the texts attached (taken out of the input
/// if it is still there), or it stays and the failure is a notice.
pub(crate) fn read(
    app: &mut App,
    message: String,
    result: Result<Vec<(String, String, String)>, String>,
    fx: &mut Vec<Effect>,
) {
    let resources = match result {
        Ok(r) => r,
        Err(e) => {
            return app.notice(
                format!(
                    "Not sent: {}. Your message is still in the input.",
                    one_line(&e, 500)
                ),
                true,
            );
        }
    };
    if app.composer.input.lines().join("\n") == message {
        app.composer.input = super::composer::new_input();
    }
    let names: Vec<String> = resources
        .iter()
        .map(|(s, u, t)| {
            format!(
                "{}:{} ({} bytes)",
                one_line(s, 64),
                one_line(u, 200),
                t.len()
            )
        })
        .collect();
    app.notice(format!("Attached {}.", names.join(", ")), false);
    let text = attached(&message, &resources);
    super::update::send_or_queue(app, text, fx);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ready_servers_are_read() {
        let ready = vec!["docs".to_owned()];
        assert_eq!(
            find(
                "see @docs:file:///a.md, and @other:x and me@docs:y and @docs:file:///a.md.",
                &ready
            ),
            [("docs".to_owned(), "file:///a.md".to_owned())]
        );
        assert!(find("mail me @docs: or @docs", &ready).is_empty());
        assert_eq!(
            attached("hi", &[("d".into(), "u".into(), "text".into())]),
            "hi\n\n[resource d:u]\ntext"
        );
    }
}
