//! Kimi K3's public golden vectors (`tests/fixtures/family/k3/` and `live/k3/`, copied from
//! the shared fixtures), rendered from the request JSON as `kimi-tui render` reads it, plus
//! the encoder's refusals and its differences from the Jinja port.

use std::fs;
use std::path::{Path, PathBuf};

use kimi_protocol::k3::{K3Options, render, render_messages, render_request};
use kimi_protocol::{Message, ToolCall, json as pyjson};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn vectors(rel: &str) -> Vec<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/family")
        .join(rel);
    let mut files: Vec<PathBuf> = fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The request read as Python reads numbers, rendered with `encoder`.
fn render_file(path: &Path, encoder: bool) -> String {
    let (value, wide) = pyjson::parse(&fs::read_to_string(path).unwrap()).unwrap();
    pyjson::with_wide_ints(&wide, || render_request(&value, encoder))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn golden(path: &Path) -> String {
    String::from_utf8(fs::read(path.with_extension("txt")).unwrap()).unwrap()
}

#[test]
fn template_vectors_render_identically_in_both_layers() {
    let files = vectors("k3");
    assert_eq!(files.len(), 8);
    for path in &files {
        for encoder in [true, false] {
            assert_eq!(
                render_file(path, encoder),
                golden(path),
                "{} encoder={encoder}",
                path.display()
            );
        }
    }
}

#[test]
fn live_vectors_are_the_encoders_and_differ_from_the_port() {
    let files = vectors("live/k3");
    assert_eq!(files.len(), 2);
    for path in &files {
        assert_eq!(render_file(path, true), golden(path), "{}", path.display());
        assert_ne!(render_file(path, false), golden(path), "{}", path.display());
    }
}

fn req(messages: Value) -> Value {
    json!({"messages": messages, "add_generation_prompt": false, "thinking_effort": null})
}

fn refusal(request: &Value, encoder: bool) -> (Option<usize>, &'static str, String) {
    let e = render_request(request, encoder).expect_err("refused");
    (e.message_index, e.rule, e.to_string())
}

#[test]
fn thinking_effort_default_null_and_validation() {
    let base = |extra: Value| {
        let mut r = json!({"messages": [], "add_generation_prompt": true});
        r.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        r
    };
    let max = render_request(&base(json!({})), true).unwrap();
    assert!(max.contains("`thinking_effort=max`.<|close|>message"));
    assert!(max.ends_with("<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"));
    let none = render_request(&base(json!({"thinking_effort": null})), true).unwrap();
    assert_eq!(
        none,
        "<|open|>message role=\"assistant\"<|sep|><|open|>think<|sep|>"
    );
    // Medium: named in the text, refused by the encoder, accepted by the port.
    let medium = base(json!({"thinking_effort": "medium"}));
    let (i, rule, msg) = refusal(&medium, true);
    assert_eq!((i, rule), (None, "R4"));
    assert!(
        msg.contains("thinking_effort=medium") && msg.ends_with("(R4)"),
        "{msg}"
    );
    assert!(
        render_request(&medium, false)
            .unwrap()
            .contains("`thinking_effort=medium`.")
    );
    for bad in [json!("MAX"), json!("none"), json!(3), json!(true)] {
        for encoder in [true, false] {
            assert_eq!(
                refusal(&base(json!({"thinking_effort": bad})), encoder).1,
                "R4"
            );
        }
    }
    // Thinking off: neither checked nor rendered; the generation prompt opens the response.
    for off in [json!(false), json!(null), json!(0), json!("")] {
        let got = render_request(
            &base(json!({"thinking": off, "thinking_effort": "bogus"})),
            true,
        )
        .unwrap();
        assert_eq!(
            got,
            "<|open|>message role=\"assistant\"<|sep|><|open|>response<|sep|>"
        );
    }
}

#[test]
fn refusals_name_the_message_and_the_rule() {
    let (i, rule, msg) = refusal(
        &req(json!([{"role": "user", "content": "hi"}, {"content": "x"}])),
        true,
    );
    assert_eq!((i, rule), (Some(1), "R5"));
    assert_eq!(msg, "messages[1]: a message needs a role (R5)");
    let no_name = req(
        json!([{"role": "user", "content": "q"}, {"role": "user", "content": "q"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}]),
    );
    assert_eq!(
        refusal(&no_name, true).2,
        "messages[3]: tool_calls[0]: a tool call needs a name (R9)"
    );
    let args = |a: Value| {
        req(
            json!([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": a}}]}]),
        )
    };
    for s in ["[1]", "7", "\"x\"", "null"] {
        assert_eq!(refusal(&args(json!(s)), true).1, "R9", "{s}");
        assert!(render_request(&args(json!(s)), false).is_ok(), "{s}");
    }
    assert_eq!(refusal(&args(json!(7)), true).1, "R9");
    assert_eq!(refusal(&args(json!(2.5)), false).1, "R9");
    // A result with nothing to name it by.
    let (i, rule, _) = refusal(
        &req(json!([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}])),
        true,
    );
    assert_eq!((i, rule), (Some(1), "R10"));
    let beyond = req(
        json!([{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f"}}]},
        {"role": "tool", "content": "1"}, {"role": "tool", "content": "2"}]),
    );
    assert_eq!(refusal(&beyond, true).0, Some(2));
    for content in [
        json!(5),
        json!({"text": "x"}),
        json!([1]),
        json!([{"type": "text"}]),
    ] {
        let (i, rule, _) = refusal(&req(json!([{"role": "user", "content": content}])), true);
        assert_eq!((i, rule), (Some(0), "R11"), "{content}");
    }
    for messages in [json!({"role": "user"}), json!("hi"), json!(null)] {
        assert_eq!(refusal(&json!({"messages": messages}), true).1, "R15");
    }
    assert_eq!(refusal(&json!({}), true).1, "R15");
    assert_eq!(
        refusal(
            &req(json!([{"role": "assistant", "tool_calls": {"id": "x"}}])),
            false
        )
        .1,
        "R15"
    );
}

#[test]
fn skipped_messages_other_roles_and_names() {
    let got = render_request(
        &req(json!([
            "not an object", 7,
            {"role": "developer", "content": "dropped"},
            {"role": "system", "content": "S", "name": "a&\"b"},
            {"role": "user", "content": "U", "name": ""},
            {"role": "assistant", "content": null, "name": "k", "reasoning": "r", "thinking": "no"}
        ])),
        true,
    )
    .unwrap();
    assert_eq!(
        got,
        "<|open|>message role=\"system\" name=\"a&amp;&quot;b\"<|sep|>S<|close|>message<|sep|><|end_of_msg|>\
         <|open|>message role=\"user\"<|sep|>U<|close|>message<|sep|><|end_of_msg|>\
         <|open|>message role=\"assistant\" name=\"k\"<|sep|><|open|>think<|sep|>r<|close|>think<|sep|>\
         <|open|>response<|sep|><|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>"
    );
}

#[test]
fn dynamic_tools_render_only_the_declaration() {
    let got = render_request(
        &req(json!([{"role": "system", "content": "ignored", "name": "n", "tools": [{"b": 1, "B": 2, "a": 3}]},
            {"role": "system", "content": "kept", "tools": []}])),
        true,
    )
    .unwrap();
    assert!(got.starts_with(
        "<|open|>message role=\"system\" type=\"tool-declare\"<|sep|>## New Tools Available\n"
    ));
    assert!(got.contains(
        "```json\n[{\"B\":2,\"a\":3,\"b\":1}]\n```<|close|>message<|sep|><|end_of_msg|>"
    ));
    assert!(got.ends_with(
        "<|open|>message role=\"system\"<|sep|>kept<|close|>message<|sep|><|end_of_msg|>"
    ));
    assert!(!got.contains("ignored"));
    let port = render_request(
        &req(json!([{"role": "system", "tools": [{"b": 1, "B": 2, "a": 3}]}])),
        false,
    )
    .unwrap();
    assert!(port.contains("[{\"a\":3,\"b\":1,\"B\":2}]"), "{port}");
}

#[test]
fn tool_results_bind_by_id_else_by_position() {
    let calls = json!({"role": "assistant", "tool_calls": [
        {"id": "x", "function": {"name": "fx", "arguments": "{}"}},
        {"id": "y", "function": {"name": "fy", "arguments": {}}}]});
    let tool = |id: Value, extra: Value| {
        let mut m = json!({"role": "tool", "content": id.to_string()});
        m.as_object_mut().unwrap().insert("tool_call_id".into(), id);
        m.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        m
    };
    let headers = |got: &str| -> Vec<String> {
        got.split("<|open|>message role=\"tool\" ")
            .skip(1)
            .map(|s| s.split("<|close|>").next().unwrap().to_owned())
            .collect()
    };
    let got = render_request(
        &req(json!([
            calls,
            tool(json!("y"), json!({"name": "wrong"})),
            tool(json!("x"), json!({}))
        ])),
        true,
    )
    .unwrap();
    assert_eq!(
        headers(&got),
        [
            "tool=\"fx\" index=\"1\"<|sep|>\"x\"",
            "tool=\"fy\" index=\"2\"<|sep|>\"y\""
        ]
    );
    // One unknown id: as given, names from the messages or by position.
    let got = render_request(
        &req(json!([
            calls,
            tool(json!("y"), json!({"tool": "t"})),
            tool(json!("zz"), json!({}))
        ])),
        true,
    )
    .unwrap();
    assert_eq!(
        headers(&got),
        [
            "tool=\"t\" index=\"1\"<|sep|>\"y\"",
            "tool=\"fy\" index=\"2\"<|sep|>\"zz\""
        ]
    );
    // A `tool` key wins over `name` even when null (then the position names it).
    let got = render_request(
        &req(json!([
            calls,
            tool(json!(null), json!({"tool": null, "name": "n"}))
        ])),
        true,
    )
    .unwrap();
    assert_eq!(headers(&got), ["tool=\"fx\" index=\"1\"<|sep|>null"]);
    // Numbering continues across a user message until the next assistant message.
    let got = render_request(&req(json!([calls, tool(json!("q"), json!({})), {"role": "user", "content": "u"}, tool(json!("q"), json!({}))])), true).unwrap();
    assert_eq!(
        headers(&got),
        [
            "tool=\"fx\" index=\"1\"<|sep|>\"q\"",
            "tool=\"fy\" index=\"2\"<|sep|>\"q\""
        ]
    );
}

#[test]
fn tool_choice_and_response_format() {
    let with = |extra: Value| {
        let mut r = req(json!([]));
        r.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        render_request(&r, true).unwrap()
    };
    assert!(with(json!({"tool_choice": "none"})).contains("type=\"tool-choice\"<|sep|>The system is invoked with `tool_choice=none`.\nYou MUST NOT call any tools in the next message.<|close|>"));
    assert_eq!(with(json!({"tool_choice": "auto"})), "");
    assert_eq!(
        with(json!({"tool_choice": {"type": "function", "function": {"name": "f"}}})),
        ""
    );
    assert_eq!(with(json!({"response_format": {"type": "text"}})), "");
    let schema = |extra: Value| {
        let got = with(extra);
        got.split("```json\n")
            .nth(1)
            .unwrap_or("")
            .split("\n```")
            .next()
            .unwrap()
            .to_owned()
    };
    let s = json!({"b": 1, "A": [{"z": 0, "Y": 1.0}]});
    assert_eq!(
        schema(
            json!({"response_format": {"type": "json_schema", "json_schema": {"name": "n", "strict": true, "schema": s}}})
        ),
        r#"{"A":[{"Y":1.0,"z":0}],"b":1}"#
    );
    assert_eq!(
        schema(
            json!({"response_format": {"type": "json_schema", "json_schema": {"json_schema": {"q": 1}}}})
        ),
        r#"{"q":1}"#
    );
    assert_eq!(
        schema(json!({"response_format": {"type": "json_schema", "json_schema": {"q": 1}}})),
        r#"{"q":1}"#
    );
    assert_eq!(
        schema(json!({"response_format": {"type": "json_schema"}})),
        "null"
    );
    assert_eq!(
        schema(json!({"response_format": "json_schema", "response_schema": {"r": 2}})),
        r#"{"r":2}"#
    );
    assert_eq!(
        schema(
            json!({"response_format": {"type": "json_schema", "json_schema": {"q": 1}}, "response_schema": {"r": 2}})
        ),
        r#"{"r":2}"#
    );
    assert!(with(json!({"response_format": "json_object"})).starts_with("<|open|>message role=\"system\" type=\"response-format\"<|sep|>The system is invoked with `response_format=json_object`."));
}

#[test]
fn typed_messages_render_as_their_json() {
    let msgs = vec![
        Message::user("Weather?"),
        Message::assistant_with_calls(
            "",
            vec![ToolCall::new("c1", "get_weather", "{\"city\": \"Paris\"}")],
        ),
        Message::tool_result("c1", "get_weather", "sunny"),
    ];
    let tools = vec![json!({"type": "function", "function": {"name": "get_weather"}})];
    let got = render_messages(&msgs, &tools, &K3Options::default()).unwrap();
    let as_json: Vec<Value> = msgs
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    let want = render(
        &as_json,
        Some(&Value::Array(tools.clone())),
        &K3Options::default(),
    )
    .unwrap();
    assert_eq!(got, want);
    assert!(got.contains("<|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>"));
    assert!(
        got.contains("<|open|>message role=\"tool\" tool=\"get_weather\" index=\"1\"<|sep|>sunny")
    );
    assert!(got.starts_with("<|open|>message role=\"system\" type=\"tool-declare\""));
}
