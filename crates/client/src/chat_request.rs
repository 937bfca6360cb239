//! The chat-mode request body: messages with their reasoning under the configured name, the
//! thinking switch, and sampling parameters as the server accepts them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Endpoint;
use kimi_protocol::Message;
use kimi_protocol::family::Template;

/// Under which name an assistant message's reasoning is sent back: servers disagree on it,
/// and one that does not know the name drops the reasoning or rejects the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// Moonshot's API, SGLang, vLLM before its rename.
    #[default]
    ReasoningContent,
    /// Recent vLLM (which renamed the field), OpenRouter.
    Reasoning,
    Both,
    /// Strict OpenAI-compatible servers that reject unknown fields.
    None,
}

impl ReasoningField {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningField::ReasoningContent => "reasoning_content",
            ReasoningField::Reasoning => "reasoning",
            ReasoningField::Both => "both",
            ReasoningField::None => "none",
        }
    }
}

/// Moonshot's hosted API (`api.moonshot.ai`, `api.moonshot.cn`): it has its own thinking switch
/// and fixes the sampling of K2.5/K2.6.
pub fn is_moonshot(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    host == "api.moonshot.ai" || host == "api.moonshot.cn"
}

/// What the request leaves out of what the profile asks for, because the server fixes it:
/// said once per request, never silently dropped.
pub(super) fn notes(ep: &Endpoint) -> Vec<String> {
    let mut notes = Vec::new();
    if ep.template() == Template::K3 && is_moonshot(&ep.base_url) {
        if ep.temperature_set {
            notes.push(format!(
                "temperature = {} is not sent: Moonshot's API fixes Kimi K3's sampling (temperature 1.0, top_p 0.95) and rejects other values",
                ep.temperature
            ));
        }
        if ep.thinking == Some(false) {
            notes.push(
                "thinking = false is not sent: Kimi K3 always thinks on Moonshot's API".to_owned(),
            );
        }
    }
    notes
}

/// The body of one streamed chat request.
pub(super) fn body(ep: &Endpoint, messages: &[Message], tools: &[Value]) -> Value {
    let moonshot = is_moonshot(&ep.base_url);
    let k3 = ep.template() == Template::K3;
    // Moonshot's API fixes the sampling of K2.5, K2.6 and K3 (temperature, top_p, n,
    // penalties) and answers 400 to other values: none is sent.
    let fixed_sampling =
        moonshot && matches!(ep.template(), Template::K25 | Template::K26 | Template::K3);
    let mut body = json!({
        "model": ep.model,
        "messages": messages_json(ep, messages),
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": ep.max_tokens,
    });
    if !fixed_sampling {
        body["temperature"] = json!(ep.temperature);
        // Self-hosted thinking models: the sampling Moonshot recommends for them.
        if ep.thinks() && !moonshot {
            body["top_p"] = json!(0.95);
        }
    }
    if ep.thinking == Some(false) && ep.template().thinks() {
        if moonshot && k3 {
            // K3 always thinks there; `notes` says so.
        } else if moonshot {
            body["thinking"] = json!({"type": "disabled"});
        } else {
            body["chat_template_kwargs"] = json!({"thinking": false});
        }
    }
    if let Some(effort) = ep.thinking_effort.as_deref().filter(|_| k3) {
        if moonshot {
            body["reasoning_effort"] = json!(effort);
        } else {
            // Open-source servers pass it to the K3 encoder as a template keyword.
            let kwargs = body
                .as_object_mut()
                .map(|o| o.entry("chat_template_kwargs").or_insert_with(|| json!({})));
            if let Some(Value::Object(k)) = kwargs {
                k.insert("thinking_effort".into(), json!(effort));
            }
        }
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools.to_vec());
        body["tool_choice"] = json!(ep.tool_choice.as_deref().unwrap_or("auto"));
    }
    if let Some(f) = &ep.response_format {
        body["response_format"] = f.clone();
    }
    body
}

/// Ask the server to continue `prefix`, the edited start of an answer, rather than answer
/// anew: Moonshot's partial mode (the last message an assistant one with `"partial": true`),
/// or vLLM's spelling of it elsewhere (`continue_final_message`, no generation prompt).
pub(super) fn continue_from(ep: &Endpoint, body: &mut Value, prefix: &str) {
    let mut last = json!({"role": "assistant", "content": prefix});
    if is_moonshot(&ep.base_url) {
        last["partial"] = json!(true);
    } else {
        body["continue_final_message"] = json!(true);
        body["add_generation_prompt"] = json!(false);
    }
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        messages.push(last);
    }
}

/// What the request that continues an edited answer is called where it is refused: how each
/// server is asked, for a message that says what the server did not take.
pub fn partial_mode_spelling(base_url: &str) -> &'static str {
    if is_moonshot(base_url) {
        "Moonshot's partial mode: \"partial\": true on the last assistant message"
    } else {
        "partial mode as vLLM spells it: \"continue_final_message\": true, \"add_generation_prompt\": false"
    }
}

/// The messages as sent: each assistant message's reasoning under the configured name(s).
/// Tool-call messages of a thinking model always carry it (Moonshot answers 400 otherwise);
/// K2.5/K2.6 endpoints treat `""` as missing, so an empty one is sent as `" "`.
fn messages_json(ep: &Endpoint, messages: &[Message]) -> Vec<Value> {
    let placeholder = if matches!(ep.template(), Template::K25 | Template::K26) {
        " "
    } else {
        ""
    };
    messages
        .iter()
        .map(|m| {
            let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
            let Value::Object(map) = &mut v else {
                return v;
            };
            map.remove("reasoning_content");
            // Ours, not the API's: the tool message says the edit in its text.
            map.remove("edited_arguments");
            map.remove("edited");
            if m.role != "assistant" {
                return v;
            }
            let reasoning = match m.reasoning_content.as_deref() {
                Some(r) if !r.is_empty() => Some(r),
                _ if !m.tool_calls.is_empty() && ep.thinks() => Some(placeholder),
                Some(r) => Some(r),
                // K3 keeps all thinking: every assistant message goes back with its
                // reasoning, an empty one included.
                None if ep.template() == Template::K3 => Some(""),
                None => None,
            };
            if let Some(r) = reasoning {
                put_reasoning(map, ep.reasoning_field, r);
            }
            v
        })
        .collect()
}

fn put_reasoning(map: &mut Map<String, Value>, field: ReasoningField, text: &str) {
    let names: &[&str] = match field {
        ReasoningField::ReasoningContent => &["reasoning_content"],
        ReasoningField::Reasoning => &["reasoning"],
        ReasoningField::Both => &["reasoning_content", "reasoning"],
        ReasoningField::None => &[],
    };
    for name in names {
        map.insert((*name).to_owned(), Value::String(text.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kimi_protocol::{Mode, ToolCall};

    fn ep(model: &str, base: &str) -> Endpoint {
        Endpoint::new(Mode::Chat, base, model)
    }

    fn history() -> Vec<Message> {
        vec![
            Message::user("weather?"),
            Message::assistant_with_calls("", vec![ToolCall::new("functions.f:0", "f", "{}")]),
            Message::tool_result("functions.f:0", "f", "sunny"),
            Message {
                reasoning_content: Some("done".into()),
                ..Message::assistant("Sunny.")
            },
        ]
    }

    #[test]
    fn a_continued_answer_ends_with_the_edited_text_in_each_servers_spelling() {
        let moonshot = ep("kimi-k2-0905-preview", "https://api.moonshot.ai/v1");
        let mut b = body(&moonshot, &[Message::user("hi")], &[]);
        continue_from(&moonshot, &mut b, "Hel");
        let msgs = b["messages"].as_array().expect("messages");
        assert_eq!(
            msgs.last(),
            Some(&json!({"role": "assistant", "content": "Hel", "partial": true}))
        );
        assert!(b.get("continue_final_message").is_none());
        let vllm = ep("moonshotai/Kimi-K2-Instruct", "http://127.0.0.1:8000/v1");
        let mut b = body(&vllm, &[Message::user("hi")], &[]);
        continue_from(&vllm, &mut b, "Hel");
        assert_eq!(b["continue_final_message"], true);
        assert_eq!(b["add_generation_prompt"], false);
        let last = b["messages"].as_array().and_then(|m| m.last()).cloned();
        assert_eq!(last, Some(json!({"role": "assistant", "content": "Hel"})));
        assert!(partial_mode_spelling("http://h/v1").contains("continue_final_message"));
        assert!(partial_mode_spelling("https://api.moonshot.cn/v1").contains("\"partial\": true"));
    }

    #[test]
    fn an_edited_answer_goes_out_without_its_record() {
        let e = ep("moonshotai/Kimi-K2-Instruct", "http://h/v1");
        let m = Message {
            edited: Some(Box::new(kimi_protocol::AnswerEdit {
                original: "Hel<|tool_call_begin|".into(),
                original_calls: Vec::new(),
                prefix: "Hello".into(),
            })),
            ..Message::assistant("Hello there")
        };
        let b = body(&e, &[Message::user("hi"), m], &[]);
        assert_eq!(
            b["messages"][1],
            json!({"role": "assistant", "content": "Hello there"})
        );
    }

    #[test]
    fn moonshot_is_told_by_host_only() {
        assert!(is_moonshot("https://api.moonshot.ai/v1"));
        assert!(is_moonshot("https://user:pw@API.moonshot.cn:443/v1"));
        assert!(!is_moonshot("https://api.moonshot.ai.evil.example/v1"));
        assert!(!is_moonshot("http://127.0.0.1:8000/v1?x=api.moonshot.ai"));
    }

    #[test]
    fn tool_call_messages_of_thinking_models_always_carry_reasoning() {
        let b = body(
            &ep("kimi-k2.5", "https://api.moonshot.ai/v1"),
            &history(),
            &[],
        );
        let msgs = b["messages"].as_array().expect("messages");
        assert_eq!(
            msgs[1]["reasoning_content"], " ",
            "K2.5: empty sent as a space"
        );
        assert_eq!(msgs[3]["reasoning_content"], "done");
        assert!(msgs[0].get("reasoning_content").is_none());
        // Moonshot fixes K2.5's sampling: none is sent.
        assert!(b.get("temperature").is_none() && b.get("top_p").is_none());

        let b = body(
            &ep("kimi-k2-thinking", "http://127.0.0.1:1/v1"),
            &history(),
            &[],
        );
        assert_eq!(b["messages"][1]["reasoning_content"], "");
        assert_eq!(b["top_p"], 0.95);
    }

    #[test]
    fn the_field_name_is_a_setting() {
        let mut e = ep("kimi-k2-thinking", "http://127.0.0.1:1/v1");
        e.reasoning_field = ReasoningField::Both;
        let b = body(&e, &history(), &[]);
        assert_eq!(b["messages"][3]["reasoning_content"], "done");
        assert_eq!(b["messages"][3]["reasoning"], "done");
        e.reasoning_field = ReasoningField::Reasoning;
        let b = body(&e, &history(), &[]);
        assert!(b["messages"][3].get("reasoning_content").is_none());
        assert_eq!(b["messages"][3]["reasoning"], "done");
        e.reasoning_field = ReasoningField::None;
        let b = body(&e, &history(), &[]);
        assert!(b["messages"][1].get("reasoning_content").is_none());
        assert!(b["messages"][3].get("reasoning").is_none());
    }

    #[test]
    fn k2_instruct_bodies_are_unchanged() {
        let b = body(
            &ep("moonshotai/Kimi-K2-Instruct", "http://h/v1"),
            &history(),
            &[],
        );
        assert!(b["messages"][1].get("reasoning_content").is_none());
        assert_eq!(b["temperature"], 0.6);
        assert!(b.get("top_p").is_none() && b.get("chat_template_kwargs").is_none());
    }

    #[test]
    fn thinking_off_uses_each_servers_switch() {
        let mut e = ep("kimi-k2.5", "https://api.moonshot.cn/v1");
        e.thinking = Some(false);
        let b = body(&e, &[], &[]);
        assert_eq!(b["thinking"], json!({"type": "disabled"}));
        assert!(b.get("chat_template_kwargs").is_none());
        let mut e = ep("moonshotai/Kimi-K2.5", "http://127.0.0.1:8000/v1");
        e.thinking = Some(false);
        let b = body(&e, &[], &[]);
        assert_eq!(b["chat_template_kwargs"], json!({"thinking": false}));
        assert!(b.get("thinking").is_none() && b.get("top_p").is_none());
    }

    #[test]
    fn k3_on_moonshots_api_gets_its_contract() {
        let mut e = ep("kimi-k3", "https://api.moonshot.ai/v1");
        e.temperature = 0.3;
        e.temperature_set = true;
        e.thinking = Some(false);
        e.thinking_effort = Some("high".into());
        e.tool_choice = Some("required".into());
        e.response_format = Some(json!({"type": "json_object"}));
        let tools = [json!({"type": "function", "function": {"name": "f"}})];
        let b = body(&e, &history(), &tools);
        for fixed in [
            "temperature",
            "top_p",
            "n",
            "presence_penalty",
            "frequency_penalty",
        ] {
            assert!(b.get(fixed).is_none(), "{fixed} is fixed by the API");
        }
        assert!(b.get("thinking").is_none(), "thinking is never disabled");
        assert_eq!(b["reasoning_effort"], "high");
        assert_eq!(b["tool_choice"], "required");
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        // Every assistant message carries its reasoning, a plain one without any too.
        let msgs = b["messages"].as_array().expect("messages");
        assert_eq!(msgs[1]["reasoning_content"], "");
        assert_eq!(msgs[3]["reasoning_content"], "done");
        let plain = body(&e, &[Message::user("hi"), Message::assistant("hello")], &[]);
        assert_eq!(plain["messages"][1]["reasoning_content"], "");
        assert!(
            plain.get("tool_choice").is_none(),
            "no tool_choice without tools"
        );
        let notes = notes(&e);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("temperature = 0.3 is not sent"));
        assert!(notes[1].contains("always thinks"));
    }

    #[test]
    fn k3_on_an_open_source_server_passes_the_keywords() {
        let mut e = ep("moonshotai/Kimi-K3", "http://127.0.0.1:1/v1");
        e.thinking = Some(false);
        e.thinking_effort = Some("low".into());
        let b = body(&e, &history(), &[]);
        assert_eq!(
            b["chat_template_kwargs"],
            json!({"thinking": false, "thinking_effort": "low"})
        );
        assert!(b.get("reasoning_effort").is_none());
        assert!(notes(&e).is_empty());
    }
}
