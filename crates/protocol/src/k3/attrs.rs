//! Elements and their attributes: `<|open|>TAG KEY="VALUE"<|sep|>` and `<|close|>TAG<|sep|>`.

use serde_json::Value;

use crate::python;

pub(crate) use super::tokens::{CLOSE, END_OF_MSG, OPEN, SEP};

/// An attribute value: text as given, or a JSON value printed as Python's `str()` prints it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Attr<'a> {
    Text(&'a str),
    Value(&'a Value),
    Index(usize),
}

/// Append `<|open|>TAG` + ` KEY="VALUE"` for each attribute + `<|sep|>`.
pub(crate) fn open(out: &mut String, tag: &str, attrs: &[(&str, Attr<'_>)]) {
    out.push_str(OPEN);
    out.push_str(tag);
    for (key, value) in attrs {
        out.push(' ');
        out.push_str(key);
        out.push_str("=\"");
        match value {
            Attr::Text(s) => escape_into(out, s),
            Attr::Value(Value::String(s)) => escape_into(out, s),
            Attr::Value(v) => escape_into(out, &python::str_of(v)),
            Attr::Index(i) => out.push_str(&i.to_string()),
        }
        out.push('"');
    }
    out.push_str(SEP);
}

/// Append `<|close|>TAG<|sep|>`.
pub(crate) fn close(out: &mut String, tag: &str) {
    out.push_str(CLOSE);
    out.push_str(tag);
    out.push_str(SEP);
}

/// Close a message element and end the message.
pub(crate) fn close_message(out: &mut String) {
    close(out, "message");
    out.push_str(END_OF_MSG);
}

/// `&` becomes `&amp;`, then `"` becomes `&quot;`; nothing else is touched (`<`, `>` and
/// newlines stay), as the encoder escapes attribute values.
pub(crate) fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attributes_escape_only_ampersand_and_quote() {
        let mut out = String::new();
        let v = json!(null);
        open(
            &mut out,
            "call",
            &[
                ("tool", Attr::Text("a&\"b\" <x>\n&amp;")),
                ("n", Attr::Value(&v)),
                ("index", Attr::Index(2)),
            ],
        );
        assert_eq!(
            out,
            "<|open|>call tool=\"a&amp;&quot;b&quot; <x>\n&amp;amp;\" n=\"None\" index=\"2\"<|sep|>"
        );
    }

    #[test]
    fn values_print_as_python_str() {
        let mut out = String::new();
        let (t, f) = (json!(true), json!(1.5e-7));
        open(
            &mut out,
            "m",
            &[("a", Attr::Value(&t)), ("b", Attr::Value(&f))],
        );
        assert_eq!(out, "<|open|>m a=\"True\" b=\"1.5e-07\"<|sep|>");
    }
}
