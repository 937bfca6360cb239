//! One K3 tool call as its elements arrive: the call's attributes, its typed `argument` values
//! and `json` values, and the arguments string written as Python's `json.dumps` writes it.

use std::collections::HashMap;

use crate::json::{self, PYTHON_DEFAULT};
use crate::warning::K3Note;

/// Which value element is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ValueKind {
    Argument,
    Json,
}

impl ValueKind {
    /// The only marker that ends the value: everything before it is the raw value.
    pub(super) const fn closer(self) -> &'static str {
        match self {
            ValueKind::Argument => "<|close|>argument<|sep|>",
            ValueKind::Json => "<|close|>json<|sep|>",
        }
    }
}

#[derive(Debug)]
struct Value {
    kind: ValueKind,
    attrs: String,
    raw: String,
}

/// The arguments so far: members in first-seen order, each value already written as JSON.
#[derive(Debug, Default)]
enum Args {
    #[default]
    Empty,
    Members {
        members: Vec<(String, String)>,
        at: HashMap<String, usize>,
    },
    /// A `json` value that was not an object: the arguments are its text, exactly.
    Raw(String),
}

/// A call between `<|open|>call ...<|sep|>` and `<|close|>call<|sep|>`.
#[derive(Debug)]
pub(super) struct Call {
    name: String,
    args: Args,
    value: Option<Value>,
}

/// A completed call.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Done {
    pub name: String,
    pub arguments: String,
}

impl Call {
    pub(super) fn new(attrs: &str) -> Call {
        Call {
            name: attribute(attrs, "tool").unwrap_or_default(),
            args: Args::Empty,
            value: None,
        }
    }

    pub(super) fn begin_value(&mut self, kind: ValueKind, attrs: &str) {
        self.value = Some(Value {
            kind,
            attrs: attrs.to_owned(),
            raw: String::new(),
        });
    }

    /// The open value's kind, if one is open.
    pub(super) fn value_kind(&self) -> Option<ValueKind> {
        self.value.as_ref().map(|v| v.kind)
    }

    pub(super) fn push_raw(&mut self, text: &str) {
        if let Some(v) = &mut self.value {
            v.raw.push_str(text);
        }
    }

    /// The open value is complete: add it to the arguments. A note says what was irregular.
    pub(super) fn end_value(&mut self) -> Option<K3Note> {
        let v = self.value.take()?;
        if matches!(self.args, Args::Raw(_)) {
            // The arguments are already invalid text; later values cannot repair them.
            return None;
        }
        match v.kind {
            ValueKind::Argument => {
                let key = attribute(&v.attrs, "key").unwrap_or_default();
                let kind = attribute(&v.attrs, "type").unwrap_or_else(|| "string".to_owned());
                if kind == "string" {
                    self.insert(key, quoted(&v.raw));
                    return None;
                }
                match json_text(&v.raw) {
                    Some(text) => {
                        self.insert(key, text);
                        None
                    }
                    None => {
                        self.insert(key.clone(), quoted(&v.raw));
                        Some(K3Note::ValueNotJson { key, kind })
                    }
                }
            }
            ValueKind::Json => match json::parse(&v.raw) {
                Ok((serde_json::Value::Object(map), wide)) => {
                    for (k, value) in map {
                        let text =
                            json::with_wide_ints(&wide, || json::to_string(&value, PYTHON_DEFAULT));
                        self.insert(k, text);
                    }
                    None
                }
                _ => {
                    self.args = Args::Raw(v.raw);
                    Some(K3Note::JsonNotObject)
                }
            },
        }
    }

    /// A repeated key keeps its first position and takes the last value.
    fn insert(&mut self, key: String, text: String) {
        if matches!(self.args, Args::Empty) {
            self.args = Args::Members {
                members: Vec::new(),
                at: HashMap::new(),
            };
        }
        if let Args::Members { members, at } = &mut self.args {
            match at.get(&key) {
                Some(&i) => members[i].1 = text,
                None => {
                    at.insert(key.clone(), members.len());
                    members.push((key, text));
                }
            }
        }
    }

    /// `<|close|>call<|sep|>`: the call as it will be reported, or `None` when it has no name.
    pub(super) fn finish(self) -> Option<Done> {
        if self.name.is_empty() {
            return None;
        }
        let arguments = match self.args {
            Args::Empty => "{}".to_owned(),
            Args::Raw(text) => text,
            Args::Members { members, .. } => {
                let mut out = String::from("{");
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(PYTHON_DEFAULT.item);
                    }
                    json::write_str(&mut out, k);
                    out.push_str(PYTHON_DEFAULT.key);
                    out.push_str(v);
                }
                out.push('}');
                out
            }
        };
        Some(Done {
            name: self.name,
            arguments,
        })
    }
}

fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    json::write_str(&mut out, s);
    out
}

/// Strict JSON text rewritten with default separators and Python's numbers.
fn json_text(raw: &str) -> Option<String> {
    let (value, wide) = json::parse(raw).ok()?;
    Some(json::with_wide_ints(&wide, || {
        json::to_string(&value, PYTHON_DEFAULT)
    }))
}

/// The decoded value of attribute `key` in `attrs` (`KEY="VALUE"` pairs, KEY word characters,
/// VALUE without `"`); the last one when it is repeated.
pub(super) fn attribute(attrs: &str, key: &str) -> Option<String> {
    let mut found = None;
    for (k, v) in pairs(attrs) {
        if k == key {
            found = Some(v);
        }
    }
    found.map(decode)
}

/// Every `KEY="VALUE"` match, left to right, as a regex `(\w+)="([^"]*)"` finds them.
fn pairs(attrs: &str) -> Vec<(&str, &str)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < attrs.len() {
        let rest = &attrs[i..];
        let word = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        if word == 0 {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        // A word that fails to match fails from every start inside it too: skip it whole.
        let after = &rest[word..];
        if let Some(body) = after.strip_prefix("=\"") {
            match body.find('"') {
                Some(end) => {
                    out.push((&rest[..word], &body[..end]));
                    i += word + 2 + end + 1;
                    continue;
                }
                // No closing quote anywhere: no later pair can close either.
                None => break,
            }
        }
        i += word;
    }
    out
}

/// `&quot;` -> `"` and `&amp;` -> `&` in one pass; no other entity.
fn decode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(r) = tail.strip_prefix("&quot;") {
            out.push('"');
            rest = r;
        } else if let Some(r) = tail.strip_prefix("&amp;") {
            out.push('&');
            rest = r;
        } else {
            out.push('&');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(attrs: &str, values: &[(ValueKind, &str, &str)]) -> (Option<Done>, Vec<K3Note>) {
        let mut c = Call::new(attrs);
        let mut notes = Vec::new();
        for (kind, attrs, raw) in values {
            c.begin_value(*kind, attrs);
            c.push_raw(raw);
            notes.extend(c.end_value());
        }
        (c.finish(), notes)
    }

    fn args(values: &[(ValueKind, &str, &str)]) -> String {
        call(r#"tool="f""#, values).0.unwrap().arguments
    }

    use ValueKind::{Argument as A, Json as J};

    #[test]
    fn attributes_decode_in_one_pass() {
        assert_eq!(decode("a &amp;quot; &quot; &lt; &"), "a &quot; \" &lt; &");
        let attrs = r#"tool="a&amp;b" index="1" tool="c&quot;d" x=y"#;
        assert_eq!(attribute(attrs, "tool").as_deref(), Some("c\"d"));
        assert_eq!(attribute(attrs, "index").as_deref(), Some("1"));
        assert_eq!(attribute(attrs, "x"), None);
        assert_eq!(attribute(r#"junk key="k" "#, "key").as_deref(), Some("k"));
        assert_eq!(attribute(r#"mykey="k""#, "key"), None);
        assert_eq!(attribute(r#"ключ="v""#, "ключ").as_deref(), Some("v"));
        assert_eq!(attribute(r#"key="open"#, "key"), None);
    }

    #[test]
    fn typed_values_follow_python() {
        let got = args(&[
            (A, r#"key="s" type="string""#, " raw \"x\" "),
            (A, r#"key="n" type="number""#, "1e5"),
            (A, r#"key="m" type="number""#, "2.50"),
            (A, r#"key="b" type="boolean""#, "true"),
            (A, r#"key="z" type="null""#, "null"),
            (A, r#"key="o" type="object""#, r#"{"b":2,"a":[1,"x"]}"#),
            (
                A,
                r#"key="big" type="number""#,
                "123456789012345678901234567890",
            ),
            (A, r#"key="u""#, "no type: a string"),
        ]);
        assert_eq!(
            got,
            r#"{"s": " raw \"x\" ", "n": 100000.0, "m": 2.5, "b": true, "z": null, "o": {"b": 2, "a": [1, "x"]}, "big": 123456789012345678901234567890, "u": "no type: a string"}"#
        );
    }

    #[test]
    fn not_json_is_a_string_and_noted() {
        let (done, notes) = call(
            r#"tool="f""#,
            &[
                (A, r#"key="n" type="number""#, "NaN"),
                (A, r#"key="e" type="number""#, ""),
            ],
        );
        assert_eq!(done.unwrap().arguments, r#"{"n": "NaN", "e": ""}"#);
        assert_eq!(notes.len(), 2);
        assert_eq!(
            notes[0],
            K3Note::ValueNotJson {
                key: "n".into(),
                kind: "number".into()
            }
        );
    }

    #[test]
    fn repeated_keys_keep_the_first_place_and_the_last_value() {
        let got = args(&[
            (A, r#"key="a""#, "1"),
            (A, r#"key="b""#, "2"),
            (A, r#"key="a" type="number""#, "3"),
        ]);
        assert_eq!(got, r#"{"a": 3, "b": "2"}"#);
        assert_eq!(
            args(&[(A, "", "v")]),
            r#"{"": "v"}"#,
            "missing key is empty"
        );
    }

    #[test]
    fn json_values_merge_or_replace() {
        let got = args(&[
            (A, r#"key="a""#, "x"),
            (J, r#"type="object""#, r#"{"b": 1e-5, "a": [true]}"#),
        ]);
        assert_eq!(got, r#"{"a": [true], "b": 1e-05}"#);
        let (done, notes) = call(
            r#"tool="f""#,
            &[(J, r#"type="object""#, "{not json"), (A, r#"key="a""#, "x")],
        );
        assert_eq!(done.unwrap().arguments, "{not json");
        assert_eq!(notes, vec![K3Note::JsonNotObject]);
        assert_eq!(args(&[(J, "", "[1]")]), "[1]");
        assert_eq!(args(&[]), "{}");
    }

    #[test]
    fn a_call_without_a_name_is_dropped() {
        assert_eq!(call("", &[]).0, None);
        assert_eq!(call(r#"tool="""#, &[]).0, None);
        assert_eq!(call(r#"index="1""#, &[]).0, None);
    }
}
