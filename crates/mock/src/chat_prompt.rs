//! The prompt the mock's chat endpoint stands for: the chat request rendered with the served
//! model's template, as a real server renders it before tokenizing. It counts the chat
//! request's `prompt_tokens` (as raw mode counts the prompt it is given) and answers vLLM's
//! `/tokenize` and `/detokenize`, with a toy tokenizer: one id per character.

use serde_json::{Map, Value};

use kimi_protocol::family::Template;
use kimi_protocol::request::RenderRequest;

/// `body`'s messages and tools rendered for `model`, the template's keyword arguments taken
/// from `chat_template_kwargs`; `None` when the request cannot be rendered. `stale` renders as
/// a server with an older chat template would: without the default system message.
pub(crate) fn render(model: &str, body: &Value, stale: bool) -> Option<String> {
    let mut req = Map::new();
    for key in ["messages", "tools"] {
        if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
            req.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Object(kwargs)) = body.get("chat_template_kwargs") {
        req.extend(kwargs.clone());
    }
    let add = body
        .get("add_generation_prompt")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    req.insert("add_generation_prompt".into(), Value::Bool(add));
    let template = Template::for_model(model);
    if template == Template::K3 {
        return kimi_protocol::k3::render_request(&Value::Object(req), true).ok();
    }
    let req = RenderRequest::try_from(Value::Object(req)).ok()?;
    let prompt = req.render(req.options(template, true));
    if !stale {
        return Some(prompt);
    }
    // After the tool declaration, when there is one.
    Some(prompt.replacen(&format!("{DEFAULT_SYSTEM}\n"), "", 1))
}

/// What the K2 templates add when the conversation has no system message.
const DEFAULT_SYSTEM: &str = "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>";

/// The toy tokenizer: one id per character (its code point).
pub(crate) fn tokenize(text: &str) -> Vec<u32> {
    text.chars().map(u32::from).collect()
}

/// Back from ids; `None` for an id that is no character.
pub(crate) fn detokenize(ids: &[u64]) -> Option<String> {
    ids.iter()
        .map(|&id| u32::try_from(id).ok().and_then(char::from_u32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chat_request_renders_as_raw_mode_renders_its_messages() {
        let body = json!({"messages": [{"role": "user", "content": "hi"}]});
        let prompt = render("moonshotai/Kimi-K2-Instruct", &body, false).expect("renders");
        assert_eq!(
            prompt,
            kimi_protocol::render(
                &[kimi_protocol::Message::user("hi")],
                &[],
                kimi_protocol::RenderOptions {
                    add_generation_prompt: true,
                    ..kimi_protocol::RenderOptions::default()
                }
            )
        );
        let stale = render("moonshotai/Kimi-K2-Instruct", &body, true).expect("renders");
        assert_eq!(format!("{DEFAULT_SYSTEM}\n{stale}"), prompt);
        let ids = tokenize(&prompt);
        let wide: Vec<u64> = ids.iter().map(|&i| u64::from(i)).collect();
        assert_eq!(detokenize(&wide).as_deref(), Some(prompt.as_str()));
        assert_eq!(detokenize(&[0xD800]), None);
        assert_eq!(render("m", &json!({"messages": 3}), false), None);
    }
}
