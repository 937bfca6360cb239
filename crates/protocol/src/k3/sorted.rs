//! Compact JSON with every object's keys sorted, as the tool declarations and the response
//! schema are written.

use serde_json::Value;

use crate::json;

/// How object keys are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyOrder {
    /// By code point, as Python's `sort_keys=True` (Moonshot's encoder).
    CodePoint,
    /// By lowercased key, ties in the given order, as Jinja's `dictsort` (the Jinja port).
    CaseInsensitive,
}

/// `value` as compact JSON (`,` and `:`), keys sorted by `order` at every level.
pub(crate) fn compact(value: &Value, order: KeyOrder) -> String {
    let mut out = String::new();
    write(&mut out, value, order);
    out
}

fn write(out: &mut String, value: &Value, order: KeyOrder) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            match order {
                KeyOrder::CodePoint => entries.sort_by(|a, b| a.0.cmp(b.0)),
                // A stable sort keeps keys equal but for case in the order given, as
                // Python's `sorted` does.
                KeyOrder::CaseInsensitive => entries.sort_by_cached_key(|e| e.0.to_lowercase()),
            }
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json::write_str(out, k);
                out.push(':');
                write(out, v, order);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, order);
            }
            out.push(']');
        }
        scalar => json::write_value(out, scalar, json::COMPACT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn code_point_puts_uppercase_first_and_jinja_ignores_case() {
        let v: Value = serde_json::from_str(
            r#"{"age": 1, "Name": {"b": [{"Z": 1, "a": 2}], "A": null}, "ZIP": 2.0}"#,
        )
        .unwrap();
        assert_eq!(
            compact(&v, KeyOrder::CodePoint),
            r#"{"Name":{"A":null,"b":[{"Z":1,"a":2}]},"ZIP":2.0,"age":1}"#
        );
        assert_eq!(
            compact(&v, KeyOrder::CaseInsensitive),
            r#"{"age":1,"Name":{"A":null,"b":[{"a":2,"Z":1}]},"ZIP":2.0}"#
        );
    }

    #[test]
    fn case_ties_keep_their_order() {
        let v: Value = serde_json::from_str(r#"{"b": 1, "a": 2, "A": 3}"#).unwrap();
        assert_eq!(
            compact(&v, KeyOrder::CaseInsensitive),
            r#"{"a":2,"A":3,"b":1}"#
        );
        let v: Value = serde_json::from_str(r#"{"A": 3, "a": 2}"#).unwrap();
        assert_eq!(compact(&v, KeyOrder::CaseInsensitive), r#"{"A":3,"a":2}"#);
        assert_eq!(compact(&json!("x"), KeyOrder::CodePoint), r#""x""#);
    }
}
