//! A rendered Kimi K2 prompt read back into the conversation it came from, so that raw mode answers
//! what the client actually sent (a template bug shows up as a wrong answer).

use serde_json::Value;

use kimi_protocol::message::Message;
use kimi_protocol::parse_completion;
use kimi_protocol::tokens::*;

/// The conversation held by a prompt.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    pub messages: Vec<Message>,
    /// The tools of the `tool_declare` turn.
    pub tools: Vec<Value>,
}

/// Split `prompt` into turns. Text between turns is ignored, as is an unterminated last turn (the
/// generation prompt). A prompt without any turn marker is taken as one user message.
pub fn parse(prompt: &str) -> Conversation {
    let mut conv = Conversation::default();
    let mut rest = prompt;
    let mut saw_turn = false;
    while let Some((start, marker)) = next_turn(rest) {
        saw_turn = true;
        let after = &rest[start + marker.len()..];
        let Some(mid) = after.find(IM_MIDDLE) else {
            break;
        };
        let header = &after[..mid];
        let body_and_rest = &after[mid + IM_MIDDLE.len()..];
        let Some(end) = body_and_rest.find(IM_END) else {
            break; // the generation prompt, or a cut-off turn
        };
        let body = &body_and_rest[..end];
        rest = &body_and_rest[end + IM_END.len()..];
        if marker == IM_SYSTEM && header == "tool_declare" {
            conv.tools = serde_json::from_str(body).unwrap_or_else(|_| typescript_tools(body));
            continue;
        }
        conv.messages.push(turn(marker, header, body));
    }
    if !saw_turn && !prompt.trim().is_empty() {
        conv.messages.push(Message::user(prompt));
    }
    conv
}

/// The tools of a K2.5/K2.6 TypeScript declaration (`type NAME = (_: {...}) => any;` inside
/// `namespace functions`), by name only: what the script needs to decide which to call.
fn typescript_tools(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.trim_start().strip_prefix("type "))
        .filter_map(|rest| rest.split_once(" = ("))
        .map(|(name, _)| serde_json::json!({"type": "function", "function": {"name": name}}))
        .collect()
}

/// Whether `prompt` ends inside an open tool call of an unterminated assistant turn: after the
/// last `<|im_assistant|>` there is no `<|im_end|>`, and the last `<|tool_call_begin|>` has its
/// `<|tool_call_argument_begin|>` but no `<|tool_call_end|>` (a client prefilled the start of a
/// call). Kimi K2 answers such a prompt by closing the call.
pub fn ends_inside_call(prompt: &str) -> bool {
    let Some(turn) = prompt.rfind(IM_ASSISTANT).map(|i| &prompt[i..]) else {
        return false;
    };
    if turn.contains(IM_END) {
        return false;
    }
    let Some(call) = turn.rfind(TOOL_CALL_BEGIN).map(|i| &turn[i..]) else {
        return false;
    };
    call.contains(TOOL_CALL_ARGUMENT_BEGIN) && !call.contains(TOOL_CALL_END)
}

/// The position and text of the next turn-start marker.
fn next_turn(s: &str) -> Option<(usize, &'static str)> {
    let mut from = 0;
    while let Some(off) = s[from..].find("<|im_") {
        let at = from + off;
        for m in [IM_SYSTEM, IM_USER, IM_ASSISTANT] {
            if s[at..].starts_with(m) {
                return Some((at, m));
            }
        }
        from = at + 1;
    }
    None
}

fn turn(marker: &str, header: &str, body: &str) -> Message {
    match marker {
        IM_USER => named(Message::user(body), header, "user"),
        IM_ASSISTANT => {
            let m = if body.contains("<|tool_call") {
                let parsed = parse_completion(body);
                Message::assistant_with_calls(parsed.content, parsed.tool_calls)
            } else {
                Message::assistant(body)
            };
            named(m, header, "assistant")
        }
        _ => match body.strip_prefix("## Return of ") {
            Some(result) => {
                let (id, content) = result.split_once('\n').unwrap_or((result, ""));
                let mut m = Message::tool_result(id, header, content);
                if header == "tool" || header.is_empty() {
                    m.name = None;
                }
                m
            }
            None if header == "system" => Message::system(body),
            None => Message::new(header, body),
        },
    }
}

fn named(mut m: Message, header: &str, role: &str) -> Message {
    if header != role && !header.is_empty() {
        m.name = Some(header.to_owned());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::message::ToolCall;
    use kimi_protocol::{RenderOptions, render};
    use serde_json::json;

    fn weather_tool() -> Value {
        json!({"type": "function", "function": {"name": "get_weather", "description": "d",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})
    }

    fn with_gen_prompt() -> RenderOptions {
        RenderOptions {
            add_generation_prompt: true,
            ..Default::default()
        }
    }

    #[test]
    fn round_trips_a_rendered_conversation() {
        let mut dev = Message::new("developer", "rules");
        dev.name = None;
        let mut anon = Message::tool_result("functions.f:1", "f", "two\nlines");
        anon.name = None;
        let messages = vec![
            Message::system("Be brief."),
            dev,
            Message::user("What's the weather in Beijing?"),
            Message::assistant_with_calls(
                "Checking. ",
                vec![
                    ToolCall::new(
                        "functions.get_weather:0",
                        "get_weather",
                        "{\"city\": \"Beijing\"}",
                    ),
                    ToolCall::new("functions.f:1", "f", "{}"),
                ],
            ),
            Message::tool_result(
                "functions.get_weather:0",
                "get_weather",
                "{\"weather\": \"Sunny\"}",
            ),
            anon,
            Message::assistant("It's sunny."),
            Message::user("你好"),
        ];
        let tools = vec![weather_tool()];
        let prompt = render(&messages, &tools, with_gen_prompt());
        let conv = parse(&prompt);
        assert_eq!(conv.tools, tools);
        assert_eq!(conv.messages, messages);
    }

    #[test]
    fn default_system_prompt_and_no_tools() {
        let prompt = render(&[Message::user("hi")], &[], with_gen_prompt());
        let conv = parse(&prompt);
        assert!(conv.tools.is_empty());
        assert_eq!(
            conv.messages,
            vec![Message::system(DEFAULT_SYSTEM_PROMPT), Message::user("hi")]
        );
    }

    #[test]
    fn a_prompt_ending_inside_a_call_is_recognised() {
        let base = render(&[Message::user("hi")], &[weather_tool()], with_gen_prompt());
        let open = format!(
            "{base}<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{{\"city\": \"Beijing\"}}"
        );
        assert!(ends_inside_call(&open));
        assert!(!ends_inside_call(&base), "a generation prompt alone");
        assert!(!ends_inside_call(&format!("{open}<|tool_call_end|>")));
        assert!(!ends_inside_call(&format!("{open}<|im_end|>")));
        assert!(
            !ends_inside_call(&format!(
                "{base}<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
            )),
            "still inside the id"
        );
        assert!(!ends_inside_call(
            "<|tool_call_begin|>x<|tool_call_argument_begin|>{"
        ));
    }

    #[test]
    fn plain_text_prompt_is_a_user_message() {
        assert_eq!(parse("Say hi").messages, vec![Message::user("Say hi")]);
        assert!(parse("").messages.is_empty());
    }

    #[test]
    fn malformed_prompts_do_not_panic() {
        for p in [
            "<|im_user|>",
            "<|im_user|>user<|im_middle|>unterminated",
            "<|im_system|>tool_declare<|im_middle|>not json<|im_end|>",
            "<|im_x|><|im_assistant|>a<|im_middle|><|tool_call_begin|><|im_end|>",
            "<|im_system|>get_weather<|im_middle|>## Return of <|im_end|>",
        ] {
            let _ = parse(p);
        }
        let c = parse("<|im_system|>tool_declare<|im_middle|>not json<|im_end|>");
        assert!(c.tools.is_empty() && c.messages.is_empty());
    }
}

#[cfg(test)]
mod typescript_tests {
    #[test]
    fn a_typescript_declaration_names_its_tools() {
        let body = "# Tools\n\n## functions\nnamespace functions {\n// w\ntype get_weather = (_: {\n  city: string\n}) => any;\ntype get_time = (_: {}) => any;\n}\n";
        let prompt = format!(
            "<|im_system|>tool_declare<|im_middle|>{body}<|im_end|><|im_user|>user<|im_middle|>hi<|im_end|>"
        );
        let conv = super::parse(&prompt);
        let names: Vec<&str> = conv
            .tools
            .iter()
            .filter_map(|t| t.pointer("/function/name").and_then(|n| n.as_str()))
            .collect();
        assert_eq!(names, ["get_weather", "get_time"]);
    }
}
