//! Worked examples of the encoder's output and the edge rules around them. The
//! official golden pairs are checked in `tests/suite/family.rs` of this crate.

use serde_json::{Value, json};

use super::{Fail, encode};
use crate::json::sorted_keys;

fn ts(tools: Value) -> Result<String, Fail> {
    let sorted = sorted_keys(&tools);
    encode(sorted.as_array().expect("a list"))
}

fn wrap(body: &str) -> String {
    format!("# Tools\n\n## functions\nnamespace functions {{\n{body}\n}}\n")
}

#[test]
fn required_first_constraints_defaults_enum() {
    let tools = json!([{"type":"function","function":{"name":"search_docs","description":"Search the documentation.\nReturns at most `limit` hits.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"Free text.","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10},"lang":{"enum":["en","de"],"default":"en"},"exact":{"type":"boolean","default":false}},"required":["query"]}}}]);
    assert_eq!(
        ts(tools),
        Ok(wrap(
            "// Search the documentation.\n// Returns at most `limit` hits.\ntype search_docs = (_: {\n  // Free text.\n  // minLength: 1\n  query: string,\n  // Default: False\n  exact?: boolean,\n  // Default: \"en\"\n  lang?: \"en\" | \"de\",\n  // maximum: 50, minimum: 1\n  // Default: 10\n  limit?: number\n}) => any;"
        ))
    );
}

#[test]
fn arrays_nested_objects_unions_type_lists() {
    let tools = json!([{"type":"function","function":{"name":"create_event","parameters":{"type":"object","properties":{"title":{"type":"string"},"attendees":{"type":"array","items":{"type":"object","properties":{"email":{"type":"string"},"optional":{"type":"boolean"}},"required":["email"]},"maxItems":20},"tags":{"type":"array","items":{"type":"string","description":"Lower-case tag."}},"when":{"anyOf":[{"type":"string","description":"ISO 8601"},{"type":"integer"}]},"notes":{"type":["string","null"]}},"required":["title","when"],"additionalProperties":false}}}]);
    assert_eq!(
        ts(tools),
        Ok(wrap(
            "type create_event = (_: {\n  title: string,\n  when: string | number,\n  // maxItems: 20\n  attendees?: Array<{\n    email: string,\n    optional?: boolean\n  }>,\n  notes?: string | null,\n  tags?: Array<\n    // Lower-case tag.\n    string\n  >,\n  [k: string]: never\n}) => any;"
        ))
    );
}

#[test]
fn self_reference_and_definitions() {
    let tools = json!([{"function":{"description":"Store a tree.","name":"save_tree","parameters":{"$defs":{"Leaf":{"description":"A leaf.","properties":{"value":{"type":"number"}},"required":["value"],"type":"object"}},"properties":{"children":{"items":{"$ref":"#"},"type":"array"},"label":{"type":"string"},"leaf":{"$ref":"#/$defs/Leaf"}},"required":["label"],"type":"object"}},"type":"function"}]);
    assert_eq!(
        ts(tools),
        Ok(wrap(
            "interface parameters {\n  children?: Array<parameters>,\n  label: string,\n  leaf?: Leaf\n}\n// A leaf.\ninterface Leaf {\n  value: number\n}\n// Store a tree.\ntype save_tree = (_: parameters) => any;"
        ))
    );
}

#[test]
fn description_only_property_fails() {
    let tools = json!([{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"description":"anything"}}}}}]);
    assert_eq!(ts(tools), Err(Fail));
}

#[test]
fn failures_abort_everything() {
    for bad in [
        json!({"$ref": "#/definitions/X"}),
        json!({"$ref": "#/$defs/Missing"}),
        json!({"oneOf": [{"type": "string"}]}),
        json!({"type": ["string", "date"]}),
        json!({"enum": ["a", 1], "type": "string"}),
        json!({"enum": [1.5], "type": "integer"}),
        json!({"enum": ["a"], "type": ["string", "number"]}),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"type": "object", "additionalProperties": 3}),
        json!({"type": "string", "description": 5}),
        json!(3),
    ] {
        let tools = json!([
            {"type": "function", "function": {"name": "ok", "parameters": {}}},
            {"type": "function", "function": {"name": "f", "parameters": {"properties": {"x": bad.clone()}}}}
        ]);
        assert_eq!(ts(tools), Err(Fail), "{bad}");
    }
}

#[test]
fn small_rules() {
    let tools = json!([
        {"type": "function", "function": {"name": "web.search", "parameters": {"type": "string",
            "properties": {
                "any": true, "none": false, "empty": {},
                "e": {"enum": ["x", 2, null, true], "description": "Mixed."},
                "f": {"enum": ["a", null], "type": ["string", "null"]},
                "u": {"type": "uuid"}, "n": {"type": null},
                "list": {"type": "array", "items": {}, "minItems": 1},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}, "default": {"k": "é"}},
                "s": {"type": "string", "pattern": "^a'b$", "format": "date", "default": "d"}
            }, "required": ["s"]}}},
        {"type": "other"},
        {"function": {"name": "skipped"}},
        {"type": "function", "function": {"description": "No name.\n\nTwo paragraphs."}}
    ]);
    let want = wrap(concat!(
        "type web.search = (_: {\n",
        "  // pattern: ^a'b$\n  // Default: \"d\"\n  s: string,\n",
        "  any?: any,\n",
        "  // Mixed.\n  e?: \"x\" | 2 | None | True,\n",
        "  empty?: any,\n",
        "  f?: \"a\" | None,\n",
        "  // minItems: 1\n  list?: Array<any>,\n",
        "  // Default: {\"k\": \"é\"}\n  map?: {\n    [k: string]: number\n  },\n",
        "  n?: None,\n",
        "  none?: null,\n",
        "  u?: uuid\n",
        "}) => any;\n",
        "// No name.\n\n// Two paragraphs.\n",
        "type function = (_: {}) => any;"
    ));
    assert_eq!(ts(tools), Ok(want));
    assert_eq!(ts(json!([{"type": "other"}])), Err(Fail), "no block");
    assert_eq!(ts(json!([1])), Err(Fail), "an entry that is not an object");
}

#[test]
fn definitions_keep_first_position_and_last_schema() {
    let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {
        "$defs": {"A": {"type": "string"}, "B": {"type": "number"}},
        "properties": {"x": {"type": "object", "$defs": {"A": {"type": "boolean"}},
            "properties": {"a": {"$ref": "#/$defs/A"}}}, "y": {"$ref": "#/$defs/B"}}
    }}}]);
    let got = ts(tools).expect("encodes");
    assert!(
        got.contains("interface A boolean\ninterface B number\ntype f"),
        "{got}"
    );
}
