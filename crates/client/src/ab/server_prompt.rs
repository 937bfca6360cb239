//! The prompt a server renders from a chat request, where it shows it: vLLM's (and the mock's)
//! `POST /tokenize` with the messages gives the token ids, `POST /detokenize` the text. Servers
//! without them are said to be so; the comparison then rests on `prompt_tokens`.

use serde_json::{Map, Value, json};

use crate::{Endpoint, probe};

/// The server's prompt for `chat_body` (a chat request as sent), or why it is not known.
pub(super) async fn fetch(ep: &Endpoint, chat_body: &Value) -> Result<String, String> {
    let root = at_root(ep);
    let mut ask = Map::new();
    for key in ["model", "messages", "tools", "chat_template_kwargs"] {
        if let Some(v) = chat_body.get(key) {
            ask.insert(key.into(), v.clone());
        }
    }
    ask.insert("add_generation_prompt".into(), Value::Bool(true));
    let unshown = |e: crate::BackendError| {
        format!(
            "the server does not show its rendered prompt (POST /tokenize and /detokenize, as vLLM serves them): {e}"
        )
    };
    let tokens = probe::post_json(&root, "tokenize", &Value::Object(ask))
        .await
        .map_err(unshown)?;
    let Some(ids) = tokens.get("tokens").filter(|t| t.is_array()) else {
        return Err("the server's /tokenize answer has no \"tokens\" list".into());
    };
    let text = probe::post_json(
        &root,
        "detokenize",
        &json!({"model": chat_body.get("model"), "tokens": ids}),
    )
    .await
    .map_err(unshown)?;
    text.get("prompt")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "the server's /detokenize answer has no \"prompt\" text".into())
}

/// vLLM serves `/tokenize` beside `/v1`, not under it.
fn at_root(ep: &Endpoint) -> Endpoint {
    let mut root = ep.clone();
    if let (Some(shown), Some(sent)) = (
        ep.base_url.strip_suffix("/v1"),
        ep.request_base.strip_suffix("/v1"),
    ) {
        root.base_url = shown.to_owned();
        root.request_base = sent.to_owned();
    }
    root
}
