//! A JSON schema parsed into the kinds the encoder prints,
//! with `$defs` registered and `$ref`s resolved as they are met.

use serde_json::{Map, Value};

use crate::python;

/// The encoding was aborted: the tokenizer then declares the tools as JSON instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fail;

pub(super) type Parsed<T> = Result<T, Fail>;

/// A parsed schema and the JSON it came from (for its description, constraints and default).
pub(super) struct Node<'a> {
    pub kind: Kind<'a>,
    pub schema: &'a Value,
}

pub(super) enum Kind<'a> {
    Any,
    /// The `false` schema.
    Null,
    Ref(String),
    Union(Vec<Node<'a>>),
    Enum(&'a [Value]),
    TypeList(Vec<&'static str>),
    Object(Object<'a>),
    Array(Box<Node<'a>>),
    /// The printed type, and which constraints it shows.
    Scalar(String, Constraints),
}

/// Which constraint keys a kind shows in its docstring, already in sorted order.
#[derive(Clone, Copy)]
pub(super) enum Constraints {
    None,
    Text,
    Number,
}

pub(super) struct Object<'a> {
    /// In declaration order; rendering sorts them.
    pub fields: Vec<Field<'a>>,
    pub additional: Option<Additional<'a>>,
}

pub(super) struct Field<'a> {
    pub name: &'a str,
    pub required: bool,
    pub node: Node<'a>,
}

pub(super) enum Additional<'a> {
    Any,
    Never,
    Schema(Box<Node<'a>>),
}

/// One function's `$defs`: first registration keeps the position, the last the schema.
#[derive(Default)]
pub(super) struct Registry<'a> {
    pub defs: Vec<(&'a str, &'a Value)>,
    /// A `{"$ref": "#"}` was parsed.
    pub self_ref: bool,
}

impl<'a> Registry<'a> {
    fn register(&mut self, defs: &'a Map<String, Value>) {
        for (name, schema) in defs {
            match self.defs.iter_mut().find(|(n, _)| *n == name.as_str()) {
                Some(entry) => entry.1 = schema,
                None => self.defs.push((name, schema)),
            }
        }
    }

    fn resolve(&mut self, reference: &Value) -> Parsed<String> {
        let reference = reference.as_str().ok_or(Fail)?;
        if reference == "#" {
            self.self_ref = true;
            return Ok("parameters".to_owned());
        }
        if !reference.starts_with("#/$defs/") {
            return Err(Fail);
        }
        let name = reference.rsplit('/').next().unwrap_or_default();
        if self.defs.iter().any(|(n, _)| *n == name) {
            Ok(name.to_owned())
        } else {
            Err(Fail)
        }
    }
}

/// Classify and parse any schema.
pub(super) fn parse<'a>(schema: &'a Value, reg: &mut Registry<'a>) -> Parsed<Node<'a>> {
    let node = |kind| Ok(Node { kind, schema });
    let map = match schema {
        Value::Bool(true) => return node(Kind::Any),
        Value::Bool(false) => return node(Kind::Null),
        Value::Object(map) => map,
        _ => return Err(Fail),
    };
    if let Some(reference) = map.get("$ref") {
        return node(Kind::Ref(reg.resolve(reference)?));
    }
    if let Some(branches) = map.get("anyOf") {
        let branches = branches.as_array().ok_or(Fail)?;
        let parsed = branches
            .iter()
            .map(|b| parse(b, reg))
            .collect::<Parsed<Vec<_>>>()?;
        return node(Kind::Union(parsed));
    }
    if let Some(values) = map.get("enum") {
        let values = values.as_array().ok_or(Fail)?;
        check_enum(map.get("type"), values)?;
        return node(Kind::Enum(values));
    }
    match map.get("type") {
        Some(Value::Array(types)) => {
            let mapped = types
                .iter()
                .map(|t| match t.as_str() {
                    Some("string") => Ok("string"),
                    Some("number" | "integer") => Ok("number"),
                    Some("boolean") => Ok("boolean"),
                    Some("null") => Ok("null"),
                    Some("object") => Ok("{}"),
                    Some("array") => Ok("Array<any>"),
                    _ => Err(Fail),
                })
                .collect::<Parsed<Vec<_>>>()?;
            node(Kind::TypeList(mapped))
        }
        Some(Value::String(t)) if t == "object" => node(Kind::Object(parse_object(map, reg)?)),
        Some(Value::String(t)) if t == "array" => {
            let item = match map.get("items") {
                Some(items) if python::truthy(items) => {
                    if items.is_array() {
                        return Err(Fail);
                    }
                    parse(items, reg)?
                }
                _ => Node {
                    kind: Kind::Any,
                    schema: &Value::Null,
                },
            };
            node(Kind::Array(Box::new(item)))
        }
        Some(t) => {
            let constraints = match t.as_str() {
                Some("string") => Constraints::Text,
                Some("number" | "integer") => Constraints::Number,
                _ => Constraints::None,
            };
            let printed = match t.as_str() {
                Some("integer") => "number".to_owned(),
                _ => python::str_of(t),
            };
            node(Kind::Scalar(printed, constraints))
        }
        None if map.is_empty() => node(Kind::Any),
        None => Err(Fail),
    }
}

/// An object schema, whatever its `type` says; its `$defs` first, then its properties
/// in their order, then `additionalProperties`.
pub(super) fn parse_object<'a>(
    map: &'a Map<String, Value>,
    reg: &mut Registry<'a>,
) -> Parsed<Object<'a>> {
    if let Some(defs) = map.get("$defs") {
        reg.register(defs.as_object().ok_or(Fail)?);
    }
    let required: &[Value] = match map.get("required") {
        None => &[],
        Some(r) => r.as_array().ok_or(Fail)?,
    };
    let mut fields = Vec::new();
    if let Some(props) = map.get("properties") {
        for (name, schema) in props.as_object().ok_or(Fail)? {
            fields.push(Field {
                name,
                required: required.iter().any(|r| r.as_str() == Some(name)),
                node: parse(schema, reg)?,
            });
        }
    }
    let additional = match map.get("additionalProperties") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(true)) => Some(Additional::Any),
        Some(Value::Bool(false)) => Some(Additional::Never),
        Some(schema @ Value::Object(_)) => Some(Additional::Schema(Box::new(parse(schema, reg)?))),
        Some(_) => return Err(Fail),
    };
    Ok(Object { fields, additional })
}

/// An enum's values must match its `type`, or the encoder gives up.
fn check_enum(ty: Option<&Value>, values: &[Value]) -> Parsed<()> {
    let ty = match ty {
        Some(Value::Array(list)) => {
            let is_null = |v: &Value| v.is_null() || v.as_str() == Some("null");
            match list.as_slice() {
                [one] => Some(one),
                [a, b] if is_null(b) => Some(a),
                [a, b] if is_null(a) => Some(b),
                _ => return Err(Fail),
            }
        }
        other => other,
    };
    let Some(ty) = ty.and_then(Value::as_str) else {
        return Ok(());
    };
    let fits = |v: &Value| match ty {
        "string" => v.is_string(),
        "number" => v.is_number() || v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64() || v.is_boolean(),
        "boolean" => v.is_boolean(),
        _ => true,
    };
    if values.iter().filter(|v| !v.is_null()).all(fits) {
        Ok(())
    } else {
        Err(Fail)
    }
}
