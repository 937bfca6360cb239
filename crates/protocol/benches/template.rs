//! Rendering a 1,000-message conversation with tools, with each family template, and measuring
//! the reasoning a thinking model's prompt re-sends.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kimi_protocol::reasoning_resent::{Measured, measure};
use kimi_protocol::{Message, RenderOptions, Template, ToolCall, render};
use serde_json::json;

fn conversation(n: usize) -> Vec<Message> {
    let mut msgs = vec![Message::system(
        "You are Kimi, an AI assistant created by Moonshot AI.",
    )];
    let mut i = 0;
    while msgs.len() < n {
        msgs.push(Message::user(format!(
            "Question {i}: what is the weather in 北京 and in Paris today? Explain in detail."
        )));
        let id = format!("functions.get_weather:{}", i % 3);
        msgs.push(Message::assistant_with_calls(
            "Let me check.",
            vec![ToolCall::new(&id, "get_weather", "{\"city\": \"Beijing\"}")],
        ));
        msgs.push(Message::tool_result(
            &id,
            "get_weather",
            "{\"weather\": \"Sunny\", \"temp\": 25.5}",
        ));
        msgs.push(Message::assistant(
            "It is sunny in Beijing, 25.5 °C. ".repeat(8),
        ));
        i += 1;
    }
    msgs.truncate(n);
    msgs
}

fn tools() -> Vec<serde_json::Value> {
    (0..8)
        .map(|k| {
            json!({"type": "function", "function": {
                "name": format!("tool_{k}"),
                "description": "Get weather information. Call this tool when the user needs to get weather information",
                "parameters": {"type": "object", "required": ["city"], "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
                    "scale": {"type": "number", "default": 0.5}
                }}
            }})
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let msgs = conversation(1000);
    let tools = tools();
    let opts = RenderOptions {
        add_generation_prompt: true,
        sort_tool_keys: false,
        ..Default::default()
    };
    c.bench_function("template/1000 messages + 8 tools", |b| {
        b.iter(|| render(black_box(&msgs), black_box(&tools), opts).len())
    });
    let sorted = RenderOptions {
        sort_tool_keys: true,
        ..opts
    };
    c.bench_function("template/1000 messages + 8 tools, sorted keys", |b| {
        b.iter(|| render(black_box(&msgs), black_box(&tools), sorted).len())
    });
    // The thinking members: the split point, reasoning in the suffix, and the tokenizer's
    // preprocessing (K2.5: the TypeScript declaration of the sorted tools).
    let thinking: Vec<Message> = msgs
        .iter()
        .cloned()
        .map(|mut m| {
            if m.role == "assistant" {
                m.reasoning_content = Some("Thinking about the weather. ".repeat(4));
            }
            m
        })
        .collect();
    for template in [Template::K2Thinking, Template::K25] {
        let family = RenderOptions { template, ..opts };
        c.bench_function(
            &format!("template/1000 messages + 8 tools, {}", template.as_str()),
            |b| b.iter(|| render(black_box(&thinking), black_box(&tools), family).len()),
        );
    }
    // What a request of a thinking model costs besides its render: measuring the reasoning
    // its prompt re-sends renders the messages again (without reasoning, with stand-ins).
    for (template, preserve) in [(Template::K2Thinking, false), (Template::K26, true)] {
        let family = RenderOptions {
            template,
            preserve_thinking: preserve,
            ..opts
        };
        let sent = render(&thinking, &tools, family);
        c.bench_function(
            &format!(
                "reasoning re-sent/1000 messages + 8 tools, {}{}",
                template.as_str(),
                if preserve { " preserve_thinking" } else { "" }
            ),
            |b| {
                b.iter(|| {
                    measure(black_box(&thinking), Some(&sent), Measured::Sent, |m| {
                        Some(render(m, &tools, family))
                    })
                    .map(|r| r.bytes)
                })
            },
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
