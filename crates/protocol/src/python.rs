//! Python's `str()` and `repr()` of JSON values, as the family templates and Moonshot's
//! TypeScript tool encoder print them.

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};

use super::json;

/// Python truthiness (`bool(value)`): null, false, 0, and empty strings, lists and objects are
/// false.
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `str(value)`: a string is itself, everything else is its `repr()`.
pub(crate) fn str_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// `repr(value)` of the Python object `json.loads` makes of `value`.
pub(crate) fn repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        // Integers and floats print as the JSON writer prints them (shared float repr, `-0`).
        Value::Number(_) => json::write_value(out, value, json::COMPACT),
        Value::String(s) => repr_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_str(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
    }
}

/// A string's `repr()`: single quotes unless it holds `'` and no `"`; `\\`, the quote, `\n`,
/// `\r`, `\t` escaped; other non-printable characters as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
fn repr_str(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !printable(c) => {
                let n = c as u32;
                let esc = if n < 0x100 {
                    format!("\\x{n:02x}")
                } else if n < 0x10000 {
                    format!("\\u{n:04x}")
                } else {
                    format!("\\U{n:08x}")
                };
                out.push_str(&esc);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable()` for one character: not in Cc, Cf, Cs, Co, Cn, Zl, Zp, or Zs
/// other than the space.
fn printable(c: char) -> bool {
    use GeneralCategory::*;
    if c == ' ' {
        return true;
    }
    !matches!(
        get_general_category(c),
        Control
            | Format
            | Surrogate
            | PrivateUse
            | Unassigned
            | LineSeparator
            | ParagraphSeparator
            | SpaceSeparator
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_print_as_python() {
        assert_eq!(str_of(&json!(null)), "None");
        assert_eq!(str_of(&json!(true)), "True");
        assert_eq!(str_of(&json!(false)), "False");
        assert_eq!(str_of(&json!(10)), "10");
        assert_eq!(str_of(&json!(1e-5)), "1e-05");
        assert_eq!(str_of(&json!(2.0)), "2.0");
        assert_eq!(str_of(&json!("a'b")), "a'b");
    }

    #[test]
    fn containers_use_repr_of_their_items() {
        assert_eq!(
            str_of(&json!(["a", 1, null, {"k": "it's"}])),
            r#"['a', 1, None, {'k': "it's"}]"#
        );
        assert_eq!(repr(&json!("both ' and \"")), r#"'both \' and "'"#);
        assert_eq!(
            repr(&json!("a\\b\n\t\u{1}\u{a0}é\u{200b}\u{10ffff}")),
            r"'a\\b\n\t\x01\xa0é\u200b\U0010ffff'"
        );
    }
}
