//! An assistant message's tools channel: each call with its typed arguments.

use serde_json::{Map, Value};

use super::attrs::{self, Attr};
use super::content::{kind, py_strip};
use super::error::K3Error;
use crate::{json, python};

/// A call's function object: its `function` if that is an object, else the call itself (a
/// flat `{"name", "arguments"}` call).
pub(crate) fn function_of(call: &Map<String, Value>) -> &Map<String, Value> {
    match call.get("function") {
        Some(Value::Object(f)) => f,
        _ => call,
    }
}

/// Append the tools channel for a truthy `tool_calls` of message `index`. `encoder`: parse
/// arguments given as a JSON string, as Moonshot's encoder does (the Jinja port writes them
/// as a raw `json` element).
pub(crate) fn write_calls(
    out: &mut String,
    tool_calls: &Value,
    index: usize,
    encoder: bool,
) -> Result<(), K3Error> {
    let Value::Array(calls) = tool_calls else {
        return Err(K3Error::at(
            index,
            "R15",
            format!("tool_calls must be a list, not {}", kind(tool_calls)),
        ));
    };
    attrs::open(out, "tools", &[]);
    for (i, call) in calls.iter().enumerate() {
        let Value::Object(call) = call else {
            return Err(K3Error::at(
                index,
                "R9",
                format!("tool_calls[{i}] must be an object, not {}", kind(call)),
            ));
        };
        let f = function_of(call);
        let name = match f.get("name") {
            None | Some(Value::Null) => {
                return Err(K3Error::at(
                    index,
                    "R9",
                    format!("tool_calls[{i}]: a tool call needs a name"),
                ));
            }
            Some(name) => name,
        };
        attrs::open(
            out,
            "call",
            &[("tool", Attr::Value(name)), ("index", Attr::Index(i + 1))],
        );
        write_arguments(out, f, encoder)
            .map_err(|why| K3Error::at(index, "R9", format!("tool_calls[{i}].arguments {why}")))?;
        attrs::close(out, "call");
    }
    attrs::close(out, "tools");
    Ok(())
}

/// Why a call's `arguments` are refused; the text follows `tool_calls[i].arguments `.
#[derive(Debug, thiserror::Error)]
enum ArgumentsError {
    /// A string that parses as JSON, but not as an object.
    #[error("must hold a JSON object, not {kind} ({text:?})")]
    NotAnObject { kind: &'static str, text: String },
    #[error("must be an object or a JSON object string, not {kind}")]
    WrongType { kind: &'static str },
}

/// The arguments of function object `f`; `Err` says why they are refused.
fn write_arguments(
    out: &mut String,
    f: &Map<String, Value>,
    encoder: bool,
) -> Result<(), ArgumentsError> {
    // The port's own escape hatch for text it already decided to show raw; the encoder has
    // no such field.
    if !encoder && let Some(block) = f.get("_xtml_json_block").filter(|b| !b.is_null()) {
        json_element(out, &python::str_of(block));
        return Ok(());
    }
    match f.get("arguments") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(args)) => {
            typed(out, args);
            Ok(())
        }
        Some(Value::String(s)) if py_strip(s).is_empty() => Ok(()),
        Some(Value::String(s)) if !encoder => {
            json_element(out, s);
            Ok(())
        }
        Some(Value::String(s)) => match json::parse(s) {
            Ok((Value::Object(args), wide)) => {
                json::with_wide_ints(&wide, || typed(out, &args));
                Ok(())
            }
            Ok((other, _)) => Err(ArgumentsError::NotAnObject {
                kind: kind(&other),
                text: s.clone(),
            }),
            // What the model wrote, shown back to it as it was.
            Err(_) => {
                json_element(out, s);
                Ok(())
            }
        },
        Some(other) => Err(ArgumentsError::WrongType { kind: kind(other) }),
    }
}

/// One `argument` element per member, in the order given.
fn typed(out: &mut String, args: &Map<String, Value>) {
    for (key, value) in args {
        let ty = match value {
            Value::Bool(_) => "boolean",
            Value::Null => "null",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Object(_) => "object",
            Value::Array(_) => "array",
        };
        attrs::open(
            out,
            "argument",
            &[("key", Attr::Text(key)), ("type", Attr::Text(ty))],
        );
        match value {
            Value::String(s) => out.push_str(s),
            other => json::write_value(out, other, json::PYTHON_DEFAULT),
        }
        attrs::close(out, "argument");
    }
}

fn json_element(out: &mut String, text: &str) {
    attrs::open(out, "json", &[("type", Attr::Text("object"))]);
    out.push_str(text);
    attrs::close(out, "json");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls(v: Value, encoder: bool) -> Result<String, K3Error> {
        let mut out = String::new();
        write_calls(&mut out, &v, 3, encoder).map(|()| out)
    }

    fn one(args: Value, encoder: bool) -> Result<String, K3Error> {
        calls(
            json!([{"function": {"name": "f", "arguments": args}}]),
            encoder,
        )
    }

    const HEAD: &str = "<|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>";
    const TAIL: &str = "<|close|>call<|sep|><|close|>tools<|sep|>";

    #[test]
    fn typed_arguments_keep_their_order_and_python_json() {
        let args: Value = serde_json::from_str(
            r#"{"z": "raw \"s\"", "n": 1e20, "o": {"b": 2, "a": [1, "x"]}, "t": null}"#,
        )
        .unwrap();
        let got = one(args, false).unwrap();
        assert_eq!(
            got,
            format!(
                "{HEAD}<|open|>argument key=\"z\" type=\"string\"<|sep|>raw \"s\"<|close|>argument<|sep|>\
                 <|open|>argument key=\"n\" type=\"number\"<|sep|>1e+20<|close|>argument<|sep|>\
                 <|open|>argument key=\"o\" type=\"object\"<|sep|>{{\"b\": 2, \"a\": [1, \"x\"]}}<|close|>argument<|sep|>\
                 <|open|>argument key=\"t\" type=\"null\"<|sep|>null<|close|>argument<|sep|>{TAIL}"
            )
        );
    }

    #[test]
    fn json_string_arguments_differ_by_layer() {
        let s = json!("{\"b\": 12345678901234567890123, \"a\": -0}");
        assert_eq!(
            one(s.clone(), true).unwrap(),
            format!(
                "{HEAD}<|open|>argument key=\"b\" type=\"number\"<|sep|>12345678901234567890123<|close|>argument<|sep|>\
                 <|open|>argument key=\"a\" type=\"number\"<|sep|>0<|close|>argument<|sep|>{TAIL}"
            )
        );
        assert_eq!(
            one(s, false).unwrap(),
            format!(
                "{HEAD}<|open|>json type=\"object\"<|sep|>{{\"b\": 12345678901234567890123, \"a\": -0}}<|close|>json<|sep|>{TAIL}"
            )
        );
        // Not JSON: shown back verbatim by both layers.
        let bad = "{\"city\": Par";
        for encoder in [true, false] {
            assert_eq!(
                one(json!(bad), encoder).unwrap(),
                format!("{HEAD}<|open|>json type=\"object\"<|sep|>{bad}<|close|>json<|sep|>{TAIL}")
            );
        }
    }

    #[test]
    fn blank_missing_and_null_arguments_write_nothing() {
        for args in [json!(null), json!(""), json!(" \n\u{a0}")] {
            for encoder in [true, false] {
                assert_eq!(one(args.clone(), encoder).unwrap(), format!("{HEAD}{TAIL}"));
            }
        }
        assert_eq!(
            calls(json!([{"function": {"name": "f"}}]), true).unwrap(),
            format!("{HEAD}{TAIL}")
        );
    }

    #[test]
    fn flat_calls_and_ids_never_rendered() {
        let got = calls(
            json!([{"id": "c9", "name": "f", "arguments": {"a": true}}, {"id": "c8", "function": "x", "name": 7}]),
            true,
        )
        .unwrap();
        assert_eq!(
            got,
            format!(
                "{HEAD}<|open|>argument key=\"a\" type=\"boolean\"<|sep|>true<|close|>argument<|sep|><|close|>call<|sep|>\
                 <|open|>call tool=\"7\" index=\"2\"<|sep|>{TAIL}"
            )
        );
    }

    #[test]
    fn refusals_name_the_rule() {
        let r9 = |v: Value, encoder: bool| {
            let e = calls(v.clone(), encoder).unwrap_err();
            assert_eq!((e.message_index, e.rule), (Some(3), "R9"), "{v} {e}");
            e
        };
        let e = r9(json!([{"function": {"arguments": {}}}]), false);
        assert_eq!(
            e.to_string(),
            "messages[3]: tool_calls[0]: a tool call needs a name (R9)"
        );
        r9(json!([{"function": {"name": null}}]), true);
        r9(json!(["f"]), true);
        // Non-object JSON in a string: the encoder refuses, the port shows it raw.
        for s in ["[1]", "7", "\"x\"", "null", "true"] {
            r9(json!([{"function": {"name": "f", "arguments": s}}]), true);
            assert!(
                one(json!(s), false)
                    .unwrap()
                    .contains("<|open|>json type=\"object\"<|sep|>")
            );
        }
        for bad in [json!(7), json!([1]), json!(true)] {
            r9(json!([{"function": {"name": "f", "arguments": bad}}]), true);
            r9(
                json!([{"function": {"name": "f", "arguments": bad}}]),
                false,
            );
        }
        let e = calls(json!({"function": {"name": "f"}}), true).unwrap_err();
        assert_eq!(e.rule, "R15");
    }

    #[test]
    fn the_ports_json_block_is_layer_a_only() {
        let v = json!([{"function": {"name": "f", "arguments": {"a": 1}, "_xtml_json_block": "{oops"}}]);
        assert!(
            calls(v.clone(), false)
                .unwrap()
                .contains("<|open|>json type=\"object\"<|sep|>{oops<|close|>json<|sep|>")
        );
        assert!(calls(v, true).unwrap().contains("key=\"a\""));
    }
}
