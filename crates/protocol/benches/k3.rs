//! Rendering a 1,000-message Kimi K3 conversation with tools, in both layers.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use kimi_protocol::k3::{K3Options, render};
use serde_json::{Value, json};

fn conversation(n: usize) -> Vec<Value> {
    let mut msgs = vec![
        json!({"role": "system", "content": "You are Kimi, an AI assistant created by Moonshot AI."}),
    ];
    let mut i = 0;
    while msgs.len() < n {
        msgs.push(json!({"role": "user", "content": format!(
            "Question {i}: what is the weather in 北京 and in Paris today? Explain in detail.")}));
        msgs.push(json!({"role": "assistant", "content": "Let me check.",
            "reasoning_content": "The user wants the weather; call the tool. ".repeat(4),
            "tool_calls": [
                {"id": format!("c{i}a"), "type": "function", "function": {"name": "get_weather",
                    "arguments": "{\"city\": \"Beijing\", \"days\": 3, \"units\": {\"temp\": \"C\"}}"}},
                {"id": format!("c{i}b"), "type": "function", "function": {"name": "get_weather",
                    "arguments": {"city": "Paris", "days": 3}}}]}));
        msgs.push(json!({"role": "tool", "tool_call_id": format!("c{i}b"),
            "content": "{\"weather\": \"Cloudy\", \"temp\": 18.5}"}));
        msgs.push(json!({"role": "tool", "tool_call_id": format!("c{i}a"),
            "content": "{\"weather\": \"Sunny\", \"temp\": 25.5}"}));
        msgs.push(
            json!({"role": "assistant", "content": "It is sunny in Beijing, 25.5 °C. ".repeat(8),
            "reasoning_content": "Summarise both cities."}),
        );
        i += 1;
    }
    msgs.truncate(n);
    msgs
}

fn tools() -> Value {
    (0..8)
        .map(|k| {
            json!({"type": "function", "function": {
                "name": format!("tool_{k}"),
                "description": "Get weather information. Call this tool when the user needs to get weather information",
                "parameters": {"type": "object", "required": ["city"], "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
                    "Scale": {"type": "number", "default": 0.5}
                }}
            }})
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let msgs = conversation(1000);
    let tools = tools();
    let encoder = K3Options::default();
    c.bench_function("k3/1000 messages + 8 tools, encoder", |b| {
        b.iter(|| {
            render(black_box(&msgs), Some(black_box(&tools)), &encoder)
                .map(|p| p.len())
                .unwrap_or(0)
        })
    });
    let port = K3Options {
        encoder: false,
        ..K3Options::default()
    };
    c.bench_function("k3/1000 messages + 8 tools, Jinja port", |b| {
        b.iter(|| {
            render(black_box(&msgs), Some(black_box(&tools)), &port)
                .map(|p| p.len())
                .unwrap_or(0)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
