//! JSON written byte for byte the way Python's `json.dumps(x, ensure_ascii=False, ...)` writes it.
//!
//! The official template serializes tool schemas and non-string arguments with Python's `json`
//! module, which differs from serde_json in float formatting (`1e-05`, `1e+16`) and in nothing else
//! that matters here; a hand-written writer is the only way to match it exactly.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// Separators as Python's `json.dumps(separators=(item, key))` takes them.
#[derive(Debug, Clone, Copy)]
pub struct Separators {
    pub item: &'static str,
    pub key: &'static str,
}

/// `separators=(',', ':')`, what the template uses for the tool declaration.
pub(crate) const COMPACT: Separators = Separators {
    item: ",",
    key: ":",
};
/// Python's default `(', ', ': ')`, what `tojson` uses for non-string arguments.
pub const PYTHON_DEFAULT: Separators = Separators {
    item: ", ",
    key: ": ",
};

/// Serialize `value` as Python would.
pub fn to_string(value: &Value, seps: Separators) -> String {
    let mut out = String::new();
    write_value(&mut out, value, seps);
    out
}

/// Append `value` to `out` as Python would serialize it.
pub(crate) fn write_value(out: &mut String, value: &Value, seps: Separators) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else if let Some(f) = n.as_f64() {
                write_number_f64(out, f);
            }
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(seps.item);
                }
                write_value(out, item, seps);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(seps.item);
                }
                write_str(out, k);
                out.push_str(seps.key);
                write_value(out, v, seps);
            }
            out.push('}');
        }
    }
}

/// A float from a parsed JSON number. serde_json reads the literal `-0` as the float `-0.0`
/// (it has no negative integer zero), where Python reads the integer `0` and writes `0`; a
/// literal `-0.0` cannot be told apart after parsing, and `-0` is the form schemas carry, so
/// negative zero is written `0`.
fn write_number_f64(out: &mut String, f: f64) {
    if f == 0.0 && f.is_sign_negative() {
        out.push('0');
    } else {
        write_float(out, f);
    }
}

/// A JSON string literal with Python's escapes for `ensure_ascii=False`: `"` `\` and the C0
/// controls are escaped (short forms where Python has them), everything else is written raw.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Only ASCII bytes reach here, so `start..i` is on char boundaries.
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A float as Python's `repr` writes it: the shortest digits that round-trip, in fixed notation
/// when the decimal exponent is in `-4..16`, otherwise as `d.ddde±XX` (at least two exponent
/// digits); fixed notation always has a fractional part (`1.0`).
pub fn write_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digit count, like Python's repr. When two
    // decimals of that length are equally close, Rust's shortest mode and Python differ; Rust's
    // exact mode rounds half to even like Python, so format again at that precision.
    let shortest = format!("{:e}", f.abs());
    let (m, _) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let precision = m.len().saturating_sub(2); // digits after the point in "d.ddd"
    let sci = format!("{:.precision$e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = f.is_sign_negative();
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // Python's decpt: the value is 0.DIGITS x 10^decpt.
    let decpt = exp + 1;
    if negative {
        out.push('-');
    }
    if decpt > -4 && decpt <= 16 {
        let n = digits.len() as i32;
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(&digits);
        } else if decpt < n {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        } else {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (decpt - n) as usize));
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.unsigned_abs());
    }
}

/// A copy of `value` with every object's keys sorted, recursively (Python's `sort_keys=True`:
/// code point order, which is byte order for UTF-8).
pub fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let sorted: Map<String, Value> = entries
                .into_iter()
                .map(|(k, v)| (k.clone(), sorted_keys(v)))
                .collect();
            Value::Object(sorted)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn float(f: f64) -> String {
        let mut s = String::new();
        write_float(&mut s, f);
        s
    }

    #[test]
    // The tie cases need every written digit: they sit exactly between two shortest decimals.
    #[allow(clippy::excessive_precision)]
    fn floats_follow_python_repr() {
        // Each expectation is what CPython 3 prints for repr(x).
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (1.5e-7, "1.5e-07"),
            (1e20, "1e+20"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1.5e300, "1.5e+300"),
            (-2.5e-300, "-2.5e-300"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123.456, "123.456"),
            (-3.75, "-3.75"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (100.0, "100.0"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            // Ties between two shortest candidates go to the even digit, as in Python.
            (1608882928643910.25, "1608882928643910.2"),
            (-1743746592103460.25, "-1743746592103460.2"),
        ];
        for (f, want) in cases {
            assert_eq!(float(*f), *want, "repr({f:?})");
        }
    }

    #[test]
    fn ints_stay_ints_and_floats_keep_their_point() {
        let v: Value = serde_json::from_str(r#"[1, -7, 1.0, 2.50, 18446744073709551615, 1E2]"#)
            .expect("valid json");
        assert_eq!(
            to_string(&v, COMPACT),
            "[1,-7,1.0,2.5,18446744073709551615,100.0]"
        );
    }

    #[test]
    fn negative_zero_is_written_as_python_reads_minus_zero() {
        let v: Value =
            serde_json::from_str(r#"{"default": -0, "x": [-0, 0, -1, -0.5]}"#).expect("valid json");
        assert_eq!(to_string(&v, COMPACT), r#"{"default":0,"x":[0,0,-1,-0.5]}"#);
    }

    #[test]
    fn strings_escape_like_python() {
        let v = json!("q\"b\\s/ \n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 北京 😀");
        assert_eq!(
            to_string(&v, COMPACT),
            "\"q\\\"b\\\\s/ \\n\\r\\t\\b\\f\\u0001\\u001f\u{7f} é 北京 😀\""
        );
    }

    #[test]
    fn separators_apply_everywhere() {
        let v = json!({"a": [1, {"b": null}], "c": true});
        assert_eq!(to_string(&v, COMPACT), r#"{"a":[1,{"b":null}],"c":true}"#);
        assert_eq!(
            to_string(&v, PYTHON_DEFAULT),
            r#"{"a": [1, {"b": null}], "c": true}"#
        );
        assert_eq!(to_string(&json!({}), PYTHON_DEFAULT), "{}");
        assert_eq!(to_string(&json!([]), PYTHON_DEFAULT), "[]");
    }

    #[test]
    fn key_order_is_preserved_unless_sorted() {
        let v: Value = serde_json::from_str(r#"{"z": {"y": 1, "b": 2}, "a": [{"d": 1, "c": 2}]}"#)
            .expect("valid json");
        assert_eq!(
            to_string(&v, COMPACT),
            r#"{"z":{"y":1,"b":2},"a":[{"d":1,"c":2}]}"#
        );
        assert_eq!(
            to_string(&sorted_keys(&v), COMPACT),
            r#"{"a":[{"c":2,"d":1}],"z":{"b":2,"y":1}}"#
        );
    }
}
