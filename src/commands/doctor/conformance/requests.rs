//! The built-in requests of the conformance check: their tools and conversations.

use serde_json::{Value, json};

use kimi_protocol::{Message, ToolCall};

use super::record::Expect;

pub const NESTED: &str = "nested";
pub const PARALLEL: &str = "parallel";
pub const WEATHER: &str = "weather";
pub const TOOL_RESULT: &str = "tool_result";
pub const REASONING_HISTORY: &str = "reasoning_history";
pub const NO_TOOL: &str = "no_tool";

/// The question of the first round; the second round answers its call.
pub const WEATHER_QUESTION: &str = "What's the weather in Beijing? Use the tool.";

/// What the weather tool answers in the second round.
pub const WEATHER_RESULT: &str = r#"{"city": "Beijing", "temp_c": 21, "sky": "clear"}"#;

/// One request of the set, before it is sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: &'static str,
    pub messages: Vec<Message>,
    pub expect: Expect,
}

/// The tools every request offers: a flat one and one with nested objects and arrays.
pub fn tools() -> Vec<Value> {
    vec![
        json!({
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": false
                }
            }
        }),
        json!({
            "type": "function",
            "function": {
                "name": "book_trip",
                "description": "Book a trip of one or more legs for a traveler",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "traveler": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "age": {"type": "integer", "minimum": 0}
                            },
                            "required": ["name", "age"],
                            "additionalProperties": false
                        },
                        "legs": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "from": {"type": "string"},
                                    "to": {"type": "string"},
                                    "date": {"type": "string"}
                                },
                                "required": ["from", "to", "date"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["traveler", "legs"],
                    "additionalProperties": false
                }
            }
        }),
    ]
}

/// The first round's requests, in order; `thinks` adds the one with reasoning in its history.
pub fn first_round(thinks: bool) -> Vec<Request> {
    let mut set = vec![
        Request {
            name: NESTED,
            messages: vec![Message::user(
                "Book a trip for Ada, 36: call book_trip with {\"traveler\": {\"name\": \"Ada\", \"age\": 36}, \"legs\": [{\"from\": \"Beijing\", \"to\": \"Shanghai\", \"date\": \"2026-05-01\"}]}",
            )],
            expect: Expect::Calls,
        },
        Request {
            name: PARALLEL,
            messages: vec![Message::user(
                "What's the weather in Beijing and in Shanghai? Call get_weather for both cities in parallel.",
            )],
            expect: Expect::Parallel,
        },
        Request {
            name: WEATHER,
            messages: vec![Message::user(WEATHER_QUESTION)],
            expect: Expect::Calls,
        },
    ];
    if thinks {
        set.push(reasoning_history());
    }
    set.push(Request {
        name: NO_TOOL,
        messages: vec![Message::user(
            "Say hello in one short sentence. Do not use any tool.",
        )],
        expect: Expect::NoCall,
    });
    set
}

/// The second round: the weather question, the calls the server made (as this client keeps
/// them, reasoning included) and a result for each.
pub fn tool_result_round(first: &[Message], answer: Message) -> Request {
    let results: Vec<Message> = answer
        .tool_calls
        .iter()
        .map(|c| Message::tool_result(&c.id, &c.function.name, WEATHER_RESULT))
        .collect();
    let mut messages = first.to_vec();
    messages.push(answer);
    messages.extend(results);
    Request {
        name: TOOL_RESULT,
        messages,
        expect: Expect::Any,
    }
}

/// A thinking model's earlier turn (reasoning, a call, its result) and a new question.
fn reasoning_history() -> Request {
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Beijing"}"#,
    );
    let mut earlier = Message::assistant_with_calls("", vec![call]);
    earlier.reasoning_content =
        Some("The user wants the weather in Beijing; I will call get_weather.".into());
    Request {
        name: REASONING_HISTORY,
        messages: vec![
            Message::user(WEATHER_QUESTION),
            earlier,
            Message::tool_result("functions.get_weather:0", "get_weather", WEATHER_RESULT),
            Message::user("And the weather in Shanghai? Use the tool."),
        ],
        expect: Expect::Calls,
    }
}
