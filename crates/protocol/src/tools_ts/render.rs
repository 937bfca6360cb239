//! Parsed schemas printed as TypeScript-style text.

use serde_json::Value;

use super::schema::{Additional, Constraints, Fail, Field, Kind, Node, Object, Parsed};
use crate::{json, python};

const INDENT: &str = "  ";

/// Each non-empty line of a description as `indent// line`; empty lines stay empty.
pub(super) fn comment(description: &Value, indent: &str) -> Parsed<String> {
    let text = description.as_str().ok_or(Fail)?;
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{indent}// {l}")
            }
        })
        .collect();
    Ok(lines.join("\n"))
}

/// A parsed schema at indent `indent`.
pub(super) fn kind(node: &Node<'_>, indent: &str) -> Parsed<String> {
    Ok(match &node.kind {
        Kind::Any => "any".to_owned(),
        Kind::Null => "null".to_owned(),
        Kind::Ref(name) => name.clone(),
        Kind::Scalar(printed, _) => printed.clone(),
        Kind::TypeList(types) => types.join(" | "),
        Kind::Enum(values) => values
            .iter()
            .map(|v| match v {
                Value::String(s) => format!("\"{s}\""),
                other => python::str_of(other),
            })
            .collect::<Vec<_>>()
            .join(" | "),
        Kind::Union(branches) => branches
            .iter()
            .map(|b| kind(b, indent))
            .collect::<Parsed<Vec<_>>>()?
            .join(" | "),
        Kind::Object(object) => self::object(object, indent)?,
        Kind::Array(item) => {
            let inner = format!("{indent}{INDENT}");
            let doc = docstring(item, &inner)?;
            if doc.is_empty() {
                format!("Array<{}>", kind(item, indent)?)
            } else {
                format!("Array<\n{doc}{inner}{}\n{indent}>", kind(item, &inner)?)
            }
        }
    })
}

/// Required fields by name, then optional ones by name, then `[k: string]`.
pub(super) fn object(object: &Object<'_>, indent: &str) -> Parsed<String> {
    let inner = format!("{indent}{INDENT}");
    let mut order: Vec<&Field<'_>> = object.fields.iter().collect();
    order.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(b.name)));
    let mut lines = order
        .into_iter()
        .map(|f| field(f, &inner))
        .collect::<Parsed<Vec<_>>>()?;
    match &object.additional {
        None => {}
        Some(Additional::Any) => lines.push(format!("{inner}[k: string]: any")),
        Some(Additional::Never) => lines.push(format!("{inner}[k: string]: never")),
        Some(Additional::Schema(node)) => {
            lines.push(format!("{inner}[k: string]: {}", kind(node, &inner)?))
        }
    }
    Ok(if lines.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{\n{}\n{indent}}}", lines.join(",\n"))
    })
}

/// Docstring, default, then `name?: type`, all at `indent`.
pub(super) fn field(field: &Field<'_>, indent: &str) -> Parsed<String> {
    let mut out = docstring(&field.node, indent)?;
    if let Some(default) = field.node.schema.get("default").filter(|d| !d.is_null()) {
        let shown = match default {
            Value::Bool(_) | Value::Number(_) => python::repr(default),
            other => json::to_string(other, json::PYTHON_DEFAULT),
        };
        out.push_str(&format!("{indent}// Default: {shown}\n"));
    }
    let optional = if field.required { "" } else { "?" };
    out.push_str(&format!(
        "{indent}{}{optional}: {}",
        field.name,
        kind(&field.node, indent)?
    ));
    Ok(out)
}

/// The description's comment and the constraints line, each ending in `\n`; may be empty.
fn docstring(node: &Node<'_>, indent: &str) -> Parsed<String> {
    let mut out = String::new();
    let Some(map) = node.schema.as_object() else {
        return Ok(out);
    };
    if let Some(description) = map.get("description") {
        let text = description.as_str().ok_or(Fail)?;
        if !text.is_empty() {
            out.push_str(&comment(description, indent)?);
            out.push('\n');
        }
    }
    let keys: &[&str] = match &node.kind {
        Kind::Scalar(_, Constraints::Text) => &["maxLength", "minLength", "pattern"],
        Kind::Scalar(_, Constraints::Number) => &["maximum", "minimum"],
        Kind::Array(_) => &["maxItems", "minItems"],
        _ => &[],
    };
    let shown: Vec<String> = keys
        .iter()
        .filter_map(|k| map.get(*k).map(|v| format!("{k}: {}", python::str_of(v))))
        .collect();
    if !shown.is_empty() {
        out.push_str(&format!("{indent}// {}\n", shown.join(", ")));
    }
    Ok(out)
}
