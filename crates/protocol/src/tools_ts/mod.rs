//! Moonshot's K2.5 TypeScript-style tool declaration (`tools_ts_str`), ported rule by rule
//! from Moonshot's encoder. Also what K2.6 is said to use.

mod render;
mod schema;

use serde_json::Value;

use crate::python::truthy;
pub use schema::Fail;
use schema::{Registry, parse, parse_object};

/// The declaration of `tools` (already deep key-sorted by the tokenizer), or `Err(Fail)` when
/// the encoder gives up or no tool makes a block: the template then declares the JSON instead.
pub fn encode(tools: &[Value]) -> Result<String, Fail> {
    let mut blocks = Vec::new();
    for entry in tools {
        let entry = entry.as_object().ok_or(Fail)?;
        let function = match entry.get("function") {
            Some(f)
                if entry.get("type").and_then(Value::as_str) == Some("function") && truthy(f) =>
            {
                f
            }
            _ => continue,
        };
        blocks.push(function_block(function)?);
    }
    if blocks.is_empty() {
        return Err(Fail);
    }
    Ok(format!(
        "# Tools\n\n## functions\nnamespace functions {{\n{}\n}}\n",
        blocks.join("\n")
    ))
}

/// One function's block: interfaces, the description, `type NAME = (_: P) => any;`.
fn function_block(function: &Value) -> Result<String, Fail> {
    let function = function.as_object().ok_or(Fail)?;
    let empty = serde_json::Map::new();
    let parameters = match function.get("parameters") {
        Some(p) if truthy(p) => p.as_object().ok_or(Fail)?,
        _ => &empty,
    };
    let mut reg = Registry::default();
    let root = parse_object(parameters, &mut reg)?;
    // Parsing the definitions below may meet `#` too; only the parameters' own count.
    let self_ref = reg.self_ref;
    let mut pieces = Vec::new();
    // The self-referencing root first (fields in declaration order), then the
    // definitions registered so far, each parsed now.
    if self_ref {
        let fields = root
            .fields
            .iter()
            .map(|f| render::field(f, "  "))
            .collect::<Result<Vec<_>, _>>()?;
        let body = if fields.is_empty() {
            String::new()
        } else {
            format!("\n{}\n", fields.join(",\n"))
        };
        pieces.push(format!("interface parameters {{{body}}}"));
    }
    let defs = reg.defs.clone();
    for (name, schema) in defs {
        if schema.is_boolean() {
            return Err(Fail);
        }
        let node = parse(schema, &mut reg)?;
        let mut text = String::new();
        if let Some(d) = schema.get("description").filter(|d| truthy(d)) {
            text.push_str(&render::comment(d, "")?);
            text.push('\n');
        }
        text.push_str(&format!("interface {name} {}", render::kind(&node, "")?));
        pieces.push(text);
    }
    if let Some(d) = function.get("description").filter(|d| truthy(d)) {
        pieces.push(render::comment(d, "")?);
    }
    let name = match function.get("name") {
        None => "function".to_owned(),
        Some(n) => crate::python::str_of(n),
    };
    let params = if self_ref {
        "parameters".to_owned()
    } else {
        render::object(&root, "")?
    };
    pieces.push(format!("type {name} = (_: {params}) => any;"));
    pieces.retain(|p| !p.is_empty());
    Ok(pieces.join("\n"))
}

#[cfg(test)]
mod tests;
