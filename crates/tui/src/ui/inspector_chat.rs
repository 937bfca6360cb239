//! A chat-mode SSE event as one compact line: only what it carries that matters, each field
//! named by its path (`content " Hello"`, `tool_calls[0].function.arguments "{\"ci"`,
//! `finish_reason stop`, `usage prompt 12 · completion 30 · total 42`), the fields every event
//! repeats (id, object, created, model, an empty delta's nulls) left out. Text is shown as a
//! JSON string, between quotes: a token's leading or trailing space stays visible wherever the
//! line wraps, as the bars around a raw chunk keep it. The raw JSON is one key away (`r`).

use serde_json::{Map, Value};

/// What a field holds, as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shown {
    /// Model or server text, as a JSON string literal (quoted, escapes as JSON writes them).
    Text(String),
    /// A value of the protocol (`stop`, `assistant`, counts), as is.
    Plain(String),
}

/// One field of an event: its path and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub(crate) key: String,
    pub(crate) value: Shown,
}

/// Top-level keys every event of a response repeats.
const REPEATED: [&str; 5] = ["id", "object", "created", "model", "system_fingerprint"];

/// The fields of the chat event `payload` that matter, in order; `None` when it is not a JSON
/// object (`[DONE]`, a malformed event): then it is shown as it came.
pub(crate) fn fields(payload: &str) -> Option<Vec<Field>> {
    let Value::Object(event) = serde_json::from_str::<Value>(payload.trim()).ok()? else {
        return None;
    };
    let mut out = Vec::new();
    let choices = event.get("choices").and_then(Value::as_array);
    let several = choices.is_some_and(|c| c.len() > 1);
    for (k, choice) in choices.into_iter().flatten().enumerate() {
        let index = choice
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(k as u64);
        // The first choice is the answer; others (`n` > 1) are named.
        let at = if several || index > 0 {
            format!("choices[{index}].")
        } else {
            String::new()
        };
        if let Value::Object(choice) = choice {
            choice_fields(&at, choice, &mut out);
        }
    }
    for (key, value) in &event {
        if key == "choices" || REPEATED.contains(&key.as_str()) || value.is_null() {
            continue;
        }
        match key.as_str() {
            "usage" => out.push(plain("usage", usage(value))),
            _ => out.push(field(key.clone(), value)),
        }
    }
    Some(out)
}

fn plain(key: impl Into<String>, value: String) -> Field {
    Field {
        key: key.into(),
        value: Shown::Plain(value),
    }
}

/// A field holding `value`: strings as text, anything else as compact JSON.
fn field(key: String, value: &Value) -> Field {
    let value = match value {
        Value::String(s) => Shown::Text(quoted(s)),
        other => Shown::Plain(other.to_string()),
    };
    Field { key, value }
}

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    Value::from(s).to_string()
}

/// A choice's fields, each path starting with `at`.
fn choice_fields(at: &str, choice: &Map<String, Value>, out: &mut Vec<Field>) {
    if let Some(Value::Object(delta)) = choice.get("delta") {
        delta_fields(at, delta, out);
    }
    for (key, value) in choice {
        match (key.as_str(), value) {
            ("index" | "delta", _) | (_, Value::Null) => {}
            ("finish_reason" | "stop_reason", Value::String(s)) => {
                out.push(plain(format!("{at}{key}"), s.clone()))
            }
            ("logprobs", v) => out.push(plain(format!("{at}logprobs"), logprobs(v))),
            ("usage", v) => out.push(plain(format!("{at}usage"), usage(v))),
            // A completions-shaped choice.
            ("text", Value::String(s)) if s.is_empty() => {}
            _ => out.push(field(format!("{at}{key}"), value)),
        }
    }
}

/// A delta's fields: the role, text, reasoning and each call's pieces; empty strings (the
/// first event's `content: ""`, a call's first `arguments: ""`) say nothing and are left out.
fn delta_fields(at: &str, delta: &Map<String, Value>, out: &mut Vec<Field>) {
    for (key, value) in delta {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            (_, Value::String(s)) if s.is_empty() => {}
            ("role", Value::String(s)) => out.push(plain(format!("{at}role"), s.clone())),
            ("tool_calls", Value::Array(calls)) => {
                for (k, call) in calls.iter().enumerate() {
                    call_fields(at, k, call, out);
                }
            }
            _ => out.push(field(format!("{at}{key}"), value)),
        }
    }
}

/// One call's delta: its id, name and argument text (`type: function` says nothing).
fn call_fields(at: &str, k: usize, call: &Value, out: &mut Vec<Field>) {
    let Value::Object(call) = call else {
        return out.push(field(format!("{at}tool_calls[{k}]"), call));
    };
    let index = call
        .get("index")
        .and_then(Value::as_u64)
        .unwrap_or(k as u64);
    let path = format!("{at}tool_calls[{index}]");
    for (key, value) in call {
        match (key.as_str(), value) {
            ("index", _) | (_, Value::Null) => {}
            ("type", Value::String(s)) if s == "function" => {}
            ("function", Value::Object(f)) => {
                for (fk, fv) in f {
                    match fv {
                        Value::Null => {}
                        Value::String(s) if s.is_empty() => {}
                        _ => out.push(field(format!("{path}.function.{fk}"), fv)),
                    }
                }
            }
            _ => out.push(field(format!("{path}.{key}"), value)),
        }
    }
}

/// `prompt 12 · completion 30 · total 42` (other counts by their own names; the counts inside
/// `prompt_tokens_details` and `completion_tokens_details` by theirs: `cached 8 · reasoning 20`).
fn usage(v: &Value) -> String {
    let Value::Object(u) = v else {
        return v.to_string();
    };
    let name =
        |k: &str| kimi_protocol::sanitize::one_line(k.strip_suffix("_tokens").unwrap_or(k), 40);
    let mut out = Vec::new();
    for (k, n) in u.iter().filter(|(_, n)| !n.is_null()) {
        match n {
            Value::Object(details) => out.extend(
                (details.iter())
                    .filter(|(_, d)| !d.is_null())
                    .map(|(dk, d)| format!("{} {d}", name(dk))),
            ),
            _ => out.push(format!("{} {n}", name(k))),
        }
    }
    out.join(" · ")
}

/// `3 tokens`: token-level data is the token view's (`t`), here only counted.
fn logprobs(v: &Value) -> String {
    let n = v
        .get("content")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    crate::ui::count::count(n as u64, "token")
}

/// The fields as one line of text: `key value`, two spaces apart.
#[cfg(test)]
pub(crate) fn line(fields: &[Field]) -> String {
    if fields.is_empty() {
        return EMPTY.to_owned();
    }
    (fields.iter())
        .map(|f| match &f.value {
            Shown::Text(s) | Shown::Plain(s) => format!("{} {s}", f.key),
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// What an event that carries nothing that matters shows.
pub(crate) const EMPTY: &str = "(nothing new)";
