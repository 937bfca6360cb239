//! JSON written byte for byte the way Python's `json.dumps(x, ensure_ascii=False, ...)` writes it.
//!
//! The official template serializes tool schemas and non-string arguments with Python's `json`
//! module, which differs from serde_json in float formatting (`1e-05`, `1e+16`) and in nothing else
//! that matters here; a hand-written writer is the only way to match it exactly.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
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
                match wide_int(f) {
                    Some(digits) => out.push_str(&digits),
                    None => write_float(out, f),
                }
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

/// Integer literals wider than 64 bits, by the stand-in float [`parse`] put in their place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WideInts(HashMap<u64, String>);

thread_local! {
    /// The wide integers the writer prints on this thread (see [`with_wide_ints`]).
    static WIDE_INTS: RefCell<Option<WideInts>> = const { RefCell::new(None) };
}

/// The digits of the wide integer `f` stands in for, while [`with_wide_ints`] runs.
fn wide_int(f: f64) -> Option<String> {
    WIDE_INTS.with(|w| w.borrow().as_ref()?.0.get(&f.to_bits()).cloned())
}

/// Run `f` with the writer printing each stand-in of `ints` as its integer's digits.
pub fn with_wide_ints<R>(ints: &WideInts, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<WideInts>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            WIDE_INTS.with(|w| *w.borrow_mut() = before);
        }
    }
    let _restore = Restore(WIDE_INTS.with(|w| w.replace(Some(ints.clone()))));
    f()
}

/// Parse JSON text as Python's `json.loads` reads its numbers, as far as a [`Value`] holds
/// them. serde_json reads the integer `-0` as the float `-0.0` (Python: the integer `0`), and
/// an integer wider than 64 bits as the nearest float (Python keeps every digit). Here `-0`
/// is the integer 0, and each wide integer becomes a distinct stand-in float (a subnormal of
/// its sign, no other number of the text) that the writer, inside [`with_wide_ints`], prints
/// as the integer's digits. Anything else parses exactly as serde_json parses it.
pub fn parse(text: &str) -> Result<(Value, WideInts), serde_json::Error> {
    let numbers = number_literals(text);
    let taken: HashSet<u64> = numbers
        .iter()
        .filter_map(|r| text[r.clone()].parse::<f64>().ok())
        .map(f64::to_bits)
        .collect();
    let mut ints = WideInts::default();
    let mut rewritten = String::new();
    let mut done = 0;
    let mut next_bits = 1u64;
    for r in numbers {
        let literal = &text[r.clone()];
        let integer = !literal.contains(['.', 'e', 'E']);
        let replacement = if !integer {
            continue;
        } else if literal == "-0" {
            "0".to_owned()
        } else if literal.parse::<i64>().is_ok() || literal.parse::<u64>().is_ok() {
            continue;
        } else {
            let negative = literal.starts_with('-');
            let sign = if negative { 1u64 << 63 } else { 0 };
            while taken.contains(&(sign | next_bits)) {
                next_bits += 1;
            }
            let stand_in = f64::from_bits(sign | next_bits);
            next_bits += 1;
            ints.0.insert(stand_in.to_bits(), literal.to_owned());
            format!("{stand_in:e}")
        };
        rewritten.push_str(&text[done..r.start]);
        rewritten.push_str(&replacement);
        done = r.end;
    }
    if done == 0 {
        return Ok((serde_json::from_str(text)?, ints));
    }
    rewritten.push_str(&text[done..]);
    Ok((serde_json::from_str(&rewritten)?, ints))
}

/// Where the number literals of JSON text are (outside strings). Malformed text is left to
/// the parser to report.
fn number_literals(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                out.push(start..i);
            }
            _ => i += 1,
        }
    }
    out
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
    fn negative_zero_is_a_float_and_the_integer_minus_zero_is_zero() {
        let text = r#"{"default": -0, "x": [-0, 0, -1, -0.5, -0.0, -0e0, "-0"]}"#;
        let want = r#"{"default":0,"x":[0,0,-1,-0.5,-0.0,-0.0,"-0"]}"#;
        let (v, ints) = parse(text).expect("valid json");
        assert_eq!(with_wide_ints(&ints, || to_string(&v, COMPACT)), want);
        // A float parsed anywhere keeps its sign, as Python's repr does.
        assert_eq!(to_string(&json!([-0.0, 0.0]), COMPACT), "[-0.0,0.0]");
    }

    #[test]
    fn wide_integers_keep_every_digit() {
        let text = r#"{"a": 123456789012345678901234567890, "b": [-98765432109876543210, 18446744073709551616, 1.0e30, 5e-324], "s": "12345678901234567890123 \" -0"}"#;
        let (v, ints) = parse(text).expect("valid json");
        let got = with_wide_ints(&ints, || to_string(&v, PYTHON_DEFAULT));
        assert_eq!(
            got,
            r#"{"a": 123456789012345678901234567890, "b": [-98765432109876543210, 18446744073709551616, 1e+30, 5e-324], "s": "12345678901234567890123 \" -0"}"#
        );
        // Outside `with_wide_ints` the stand-ins are floats: the writer says so, not digits.
        assert!(!to_string(&v, COMPACT).contains("123456789012345678901234567890"));
        assert_eq!(ints.0.len(), 3);
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
