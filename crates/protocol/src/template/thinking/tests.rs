//! The thinking templates' rules one by one; the public golden vectors run in
//! `tests/suite/family.rs`.

use serde_json::json;

use crate::family::Template;
use crate::message::{Message, ToolCall};
use crate::template::{RenderOptions, render};

fn opts(template: Template) -> RenderOptions {
    RenderOptions {
        template,
        add_generation_prompt: true,
        ..Default::default()
    }
}

fn thought(content: &str, reasoning: &str, calls: Vec<ToolCall>) -> Message {
    Message {
        reasoning_content: Some(reasoning.into()),
        ..Message::assistant_with_calls(content, calls)
    }
}

fn call(i: usize) -> Vec<ToolCall> {
    vec![ToolCall::new(format!("functions.f:{i}"), "f", "{}")]
}

const SYS: &str = "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>";

#[test]
fn k2_thinking_default_system_prompt_has_no_newline_and_checks_only_the_role() {
    assert_eq!(
        render(&[], &[], opts(Template::K2Thinking)),
        format!("{SYS}<|im_assistant|>assistant<|im_middle|>")
    );
    let dev = Message::new("developer", "d");
    assert!(render(&[dev], &[], opts(Template::K2Thinking)).starts_with(SYS));
    let mut named = Message::system("s");
    named.name = Some("rules".into());
    assert!(
        render(&[named], &[], opts(Template::K2Thinking))
            .starts_with("<|im_system|>rules<|im_middle|>s<|im_end|>")
    );
    assert_eq!(
        render(&[], &[], opts(Template::K25)),
        "<|im_assistant|>assistant<|im_middle|><think>"
    );
}

#[test]
fn split_point_blanks_reasoning_up_to_the_last_plain_answer() {
    let conv = [
        Message::user("q1"),
        thought("", "r1", call(0)),
        Message::tool_result("functions.f:0", "f", "ok"),
        thought("a1", "r2", vec![]),
        Message::user("q2"),
        thought("", "r3", call(1)),
        Message::user("more"),
        thought("", "r4", call(2)),
    ];
    let p = render(&conv, &[], opts(Template::K25));
    assert!(p.contains("<|im_assistant|>assistant<|im_middle|><think></think><|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"));
    assert!(p.contains("<think></think>a1<|im_end|>"));
    // After the plain answer, tool-call turns keep their reasoning, across user turns.
    assert!(p.contains("<think>r3</think><|tool_calls_section_begin|>"));
    assert!(p.contains("<think>r4</think><|tool_calls_section_begin|>"));
    assert!(!p.contains("r1") && !p.contains("r2"));
    assert!(p.ends_with("<|im_assistant|>assistant<|im_middle|><think>"));
    // `tool_calls: []` is plain; no plain answer at all: everything is suffix.
    let only_calls = [Message::user("q"), thought("", "r", call(0))];
    assert!(render(&only_calls, &[], opts(Template::K2Thinking)).contains("<think>r</think>"));
}

#[test]
fn k25_thinking_false_blanks_everything_and_k2_thinking_ignores_it() {
    let conv = [Message::user("q"), thought("", "r", call(0))];
    let off = |t| RenderOptions {
        thinking: Some(false),
        ..opts(t)
    };
    let p = render(&conv, &[], off(Template::K25));
    assert!(p.contains("<think></think><|tool_calls"));
    assert!(p.ends_with("<|im_middle|><think></think>"));
    assert!(!off(Template::K25).ends_in_reasoning());
    let p = render(&conv, &[], off(Template::K2Thinking));
    assert!(p.contains("<think>r</think><|tool_calls"));
    assert!(p.ends_with("<|im_middle|>"));
    assert!(opts(Template::K25).ends_in_reasoning());
    assert!(opts(Template::K26).ends_in_reasoning());
    assert!(!opts(Template::K2Thinking).ends_in_reasoning());
}

#[test]
fn k26_preserve_thinking_keeps_every_reasoning() {
    let conv = [
        Message::user("q"),
        thought("a", "r", vec![]),
        Message::user("q2"),
    ];
    assert!(render(&conv, &[], opts(Template::K26)).contains("<think></think>a"));
    let keep = RenderOptions {
        preserve_thinking: true,
        ..opts(Template::K26)
    };
    assert!(render(&conv, &[], keep).contains("<think>r</think>a"));
    let k25 = RenderOptions {
        preserve_thinking: true,
        ..opts(Template::K25)
    };
    assert!(
        render(&conv, &[], k25).contains("<think></think>a"),
        "K2.5 has no such keyword"
    );
}

#[test]
fn prefill_is_history_and_ends_its_turn() {
    let conv = [Message::user("q"), thought("Sure", "r", vec![])];
    let p = render(
        &conv,
        &[],
        RenderOptions {
            add_generation_prompt: false,
            ..opts(Template::K25)
        },
    );
    assert_eq!(
        p,
        "<|im_user|>user<|im_middle|>q<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>Sure<|im_end|>"
    );
}

#[test]
fn media_parts_follow_each_template() {
    let m: Message = serde_json::from_value(json!({"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "input_image", "image_url": "y"}, {"type": "video_url"}, {"type": "text", "text": null},
        {"type": "text"}
    ]}))
    .expect("valid");
    let p = render(std::slice::from_ref(&m), &[], opts(Template::K25));
    assert_eq!(
        p,
        "<|im_user|>user<|im_middle|>a<|media_begin|>image<|media_content|><|media_pad|><|media_end|>\n<|kimi_k25_video_placeholder|>\nNone<|im_end|><|im_assistant|>assistant<|im_middle|><think>"
    );
    let p = render(&[m], &[], opts(Template::K2Thinking));
    assert!(p.contains("<|im_middle|>a<|media_start|>image<|media_content|><|media_pad|><|media_end|>\n<|media_start|>image<|media_content|><|media_pad|><|media_end|>\nNone<|im_end|>"), "{p}");
}

#[test]
fn tools_are_sorted_and_k25_declares_typescript_unless_preprocessing_is_off() {
    let tools = vec![
        json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}}),
    ];
    let k2t = render(&[], &tools, opts(Template::K2Thinking));
    assert!(k2t.starts_with(r#"<|im_system|>tool_declare<|im_middle|>[{"function":{"name":"f","parameters":{"properties":{"x":{"type":"string"}},"required":["x"],"type":"object"}},"type":"function"}]<|im_end|>"#), "{k2t}");
    let k25 = render(&[], &tools, opts(Template::K25));
    assert!(k25.starts_with("<|im_system|>tool_declare<|im_middle|># Tools\n\n## functions\nnamespace functions {\ntype f = (_: {\n  x: string\n}) => any;\n}\n<|im_end|>"), "{k25}");
    let alone = RenderOptions {
        preprocess_tools: false,
        ..opts(Template::K25)
    };
    assert!(
        render(&[], &tools, alone)
            .starts_with(r#"<|im_system|>tool_declare<|im_middle|>[{"type":"function","#)
    );
    let given = crate::template::render_with_tools_ts(&[], &tools, alone, Some("TS"));
    assert!(given.starts_with("<|im_system|>tool_declare<|im_middle|>TS<|im_end|>"));
}
