//! Session exports: Markdown for people, an OpenAI-shape JSON array for other tools.

use std::fmt::Write as _;

use serde_json::Value;

use super::time::format_utc_minute;
use super::{PartialAnswer, Session};
use kimi_protocol::{Content, Message, ToolCall, call_id};

/// The conversation as Markdown: a title with the date, profile and model, then one `###`
/// section per message in order (the system prompt first when there is one). Tool calls are
/// fenced `json` blocks with the arguments pretty-printed; tool results are fenced as they are.
pub fn to_markdown(session: &Session) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Kimi session {} UTC: {}, {}\n",
        format_utc_minute(session.created_unix_ms),
        session.profile,
        session.model
    );
    let _ = writeln!(out, "- Session: `{}`", session.id);
    let _ = writeln!(
        out,
        "- Profile: `{}` ({} mode)",
        session.profile,
        session.mode.as_str()
    );
    let _ = writeln!(out, "- Model: `{}` at {}", session.model, session.base_url);
    let _ = writeln!(
        out,
        "- Updated: {} UTC",
        format_utc_minute(session.updated_unix_ms)
    );
    let mut partial = session.partial.iter().peekable();
    for (i, m) in session.messages.iter().enumerate() {
        while let Some(p) = partial.next_if(|p| p.after_message <= i) {
            interrupted(&mut out, p);
        }
        out.push('\n');
        match m.role.as_str() {
            "user" => section(&mut out, "User", m.name.as_deref()),
            "assistant" if m.edited.is_some() => {
                section(&mut out, "Assistant (edited)", m.name.as_deref());
            }
            "assistant" => section(&mut out, "Assistant", m.name.as_deref()),
            "system" => section(&mut out, "System", m.name.as_deref()),
            "tool" => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let name = tool_name(&session.messages[..i], m, id);
                let _ = writeln!(out, "### Tool result: {name} ({id})\n");
                fenced(&mut out, "", &m.text());
                continue;
            }
            other => section(&mut out, &capitalized(other), m.name.as_deref()),
        }
        if let Some(r) = m.reasoning_content.as_deref() {
            reasoning(&mut out, r);
        }
        if let Some(edit) = &m.edited {
            edited(&mut out, edit);
        }
        let body = content_markdown(m.content.as_ref());
        body_and_calls(&mut out, &body, &m.tool_calls);
    }
    for p in partial {
        interrupted(&mut out, p);
    }
    out
}

/// A thinking model's reasoning: collapsed, apart from the answer. Escaped as HTML text, so
/// a `</details>` in it cannot close the block.
fn reasoning(out: &mut String, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let _ = write!(
        out,
        "<details>\n<summary>Reasoning</summary>\n\n{escaped}\n\n</details>\n\n"
    );
}

/// An answer the user edited before the model continued it: what the model had written and
/// the edit, collapsed before the answer.
fn edited(out: &mut String, edit: &kimi_protocol::AnswerEdit) {
    out.push_str(
        "<details>\n<summary>Edited from the model's output</summary>\n\nThe model wrote:\n\n",
    );
    fenced(out, "", &edit.original);
    if !edit.original_calls.is_empty() {
        out.push('\n');
        body_and_calls(out, "", &edit.original_calls);
    }
    out.push_str("\nThe answer goes on from this edit of it:\n\n");
    fenced(out, "", &edit.prefix);
    out.push_str("\n</details>\n\n");
}

/// An answer that never finished (see [`PartialAnswer`]): shown, marked as such.
fn interrupted(out: &mut String, p: &PartialAnswer) {
    out.push('\n');
    section(out, "Assistant (interrupted)", None);
    out.push_str(
        "*(kimi-tui stopped while this answer streamed: this is what had arrived; it was not \
         sent back to the model)*\n\n",
    );
    reasoning(out, &p.reasoning_content);
    body_and_calls(out, &p.content, &p.tool_calls);
}

/// A message's text, then its tool calls as fenced JSON.
fn body_and_calls(out: &mut String, body: &str, calls: &[ToolCall]) {
    let body = body.trim_end();
    if !body.is_empty() {
        out.push_str(body);
        out.push('\n');
    } else if calls.is_empty() {
        out.push_str("*(no content)*\n");
    }
    for (k, call) in calls.iter().enumerate() {
        if !body.is_empty() || k > 0 {
            out.push('\n');
        }
        let _ = writeln!(out, "Tool call `{}` (`{}`):\n", call.function.name, call.id);
        match serde_json::from_str::<Value>(&call.function.arguments) {
            Ok(v) => {
                let pretty = serde_json::to_string_pretty(&v)
                    .unwrap_or_else(|_| call.function.arguments.clone());
                fenced(out, "json", &pretty);
            }
            Err(_) => {
                fenced(out, "", &call.function.arguments);
                out.push_str("\n*(the arguments are not valid JSON)*\n");
            }
        }
    }
}

/// The messages as a pretty JSON array in the OpenAI chat shape (what `messages` of a
/// `/v1/chat/completions` request takes), with control and invisible characters escaped (see
/// [`crate::json_out`]).
pub fn to_openai_json(session: &Session) -> String {
    // Messages hold only strings and JSON values: serializing them cannot fail.
    crate::json_out::to_string_pretty(&session.messages).unwrap_or_else(|_| "[]".to_owned())
}

fn section(out: &mut String, title: &str, name: Option<&str>) {
    match name {
        Some(n) if !n.is_empty() => {
            let _ = writeln!(out, "### {title} ({n})\n");
        }
        _ => {
            let _ = writeln!(out, "### {title}\n");
        }
    }
}

fn capitalized(role: &str) -> String {
    let mut chars = role.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => "Message".to_owned(),
    }
}

/// The tool a result answers: its `name`, else the call with its id, else the name in the id.
fn tool_name(before: &[Message], result: &Message, id: &str) -> String {
    if let Some(n) = result.name.as_deref().filter(|n| !n.is_empty()) {
        return n.to_owned();
    }
    before
        .iter()
        .rev()
        .flat_map(|m| m.tool_calls.iter())
        .find(|c| c.id == id && !c.function.name.is_empty())
        .map(|c| c.function.name.clone())
        .unwrap_or_else(|| match call_id::function_name(id) {
            "" => "tool".to_owned(),
            n => n.to_owned(),
        })
}

fn content_markdown(content: Option<&Content>) -> String {
    match content {
        None => String::new(),
        Some(Content::Text(s)) => String::clone(s),
        Some(Content::Parts(parts)) => {
            let mut out = String::new();
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                } else if p.get("image_url").is_some()
                    || p.get("image").is_some()
                    || matches!(
                        p.get("type").and_then(Value::as_str),
                        Some("image" | "image_url")
                    )
                {
                    out.push_str("\n*[image]*\n");
                }
            }
            out
        }
    }
}

/// `text` in a code fence longer than any backtick run inside it.
fn fenced(out: &mut String, lang: &str, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(out, "{fence}{lang}");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::Mode;
    use kimi_protocol::ToolCall;

    fn session() -> Session {
        let mut s = Session::new("local", Mode::Raw, "kimi-k2", "http://h/v1");
        s.created_unix_ms = 1_796_040_062_345;
        s.updated_unix_ms = 1_796_040_062_345;
        let mut anon = Message::tool_result("functions.list_dir:1", "x", "a\n```\nb");
        anon.name = None;
        s.messages = vec![
            Message::system("Be brief."),
            Message::user("Weather in Beijing? And files."),
            Message::assistant_with_calls(
                "Checking. ",
                vec![
                    ToolCall::new(
                        "functions.get_weather:0",
                        "get_weather",
                        "{\"city\": \"北京\", \"days\": [1, 2]}",
                    ),
                    ToolCall::new("functions.list_dir:1", "list_dir", "{not json"),
                ],
            ),
            Message::tool_result("functions.get_weather:0", "get_weather", "Sunny"),
            anon,
            Message::assistant("It is **sunny**."),
        ];
        s
    }

    #[test]
    fn an_edited_answer_says_so_with_the_original() {
        let mut s = session();
        s.messages.push(Message {
            edited: Some(Box::new(kimi_protocol::AnswerEdit {
                original: "Sure<|tool_call_begin|".into(),
                original_calls: Vec::new(),
                prefix: "Sure, here".into(),
            })),
            ..Message::assistant("Sure, here it is.")
        });
        let md = to_markdown(&s);
        let at = md.find("### Assistant (edited)").expect("edited section");
        let tail = &md[at..];
        assert!(tail.contains("Sure<|tool_call_begin|"), "{tail}");
        assert!(tail.contains("Sure, here it is."), "{tail}");
        assert!(to_openai_json(&s).contains("\"original\": \"Sure<|tool_call_begin|\""));
    }

    #[test]
    fn markdown_has_every_section_in_order() {
        let md = to_markdown(&session());
        assert!(
            md.starts_with("# Kimi session 2026-11-30 12:01 UTC: local, kimi-k2\n"),
            "{md}"
        );
        let order = [
            "### System\n\nBe brief.\n",
            "### User\n\nWeather in Beijing? And files.\n",
            "### Assistant\n\nChecking.\n",
            "Tool call `get_weather` (`functions.get_weather:0`):\n\n```json\n{\n  \"city\": \"北京\",\n  \"days\": [\n    1,\n    2\n  ]\n}\n```\n",
            "Tool call `list_dir` (`functions.list_dir:1`):\n\n```\n{not json\n```\n\n*(the arguments are not valid JSON)*",
            "### Tool result: get_weather (functions.get_weather:0)\n\n```\nSunny\n```\n",
            "### Tool result: list_dir (functions.list_dir:1)\n\n````\na\n```\nb\n````\n",
            "### Assistant\n\nIt is **sunny**.\n",
        ];
        let mut at = 0;
        for part in order {
            match md[at..].find(part) {
                Some(i) => at += i + part.len(),
                None => panic!("missing or out of order: {part:?}\n---\n{md}"),
            }
        }
    }

    #[test]
    fn reasoning_is_a_collapsed_block_before_the_answer() {
        let mut s = session();
        s.messages.push(Message {
            reasoning_content: Some("Think </details> <b>twice</b> & answer.".into()),
            ..Message::assistant("Done.")
        });
        let md = to_markdown(&s);
        let want = "### Assistant\n\n<details>\n<summary>Reasoning</summary>\n\n\
                    Think &lt;/details&gt; &lt;b&gt;twice&lt;/b&gt; &amp; answer.\n\n\
                    </details>\n\nDone.\n";
        assert!(md.ends_with(want), "{md}");
        // JSON keeps it under its own field.
        let v: Value = serde_json::from_str(&to_openai_json(&s)).expect("json");
        let last = v.as_array().and_then(|a| a.last()).expect("a message");
        assert_eq!(
            last["reasoning_content"],
            "Think </details> <b>twice</b> & answer."
        );
    }

    #[test]
    fn openai_json_round_trips() {
        let s = session();
        let text = to_openai_json(&s);
        let back: Vec<Message> = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, s.messages);
        let v: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v[2]["tool_calls"][0]["type"], "function");
        assert_eq!(v[3]["tool_call_id"], "functions.get_weather:0");
    }
}
