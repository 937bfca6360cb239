//! The earlier reasoning a request's prompt carries, measured as it goes out: raw mode on the
//! prompt it sends, chat mode on this client's render of the messages it sends (the server
//! renders its own, with its own template).

use serde_json::Value;

use super::Endpoint;
use kimi_protocol::family::Template;
use kimi_protocol::reasoning_resent::{self, Measured, ReasoningResent};
use kimi_protocol::{Message, k3, render};

/// Raw mode: `prompt` is what `messages` rendered to with the endpoint's template.
pub(super) fn raw(
    ep: &Endpoint,
    messages: &[Message],
    tools: &[Value],
    prompt: &str,
) -> Option<ReasoningResent> {
    measure(ep, messages, tools, Some(prompt), Measured::Sent)
}

/// Chat mode: the messages of `body`, as sent, rendered by this client.
pub(super) fn chat(ep: &Endpoint, body: &Value, tools: &[Value]) -> Option<ReasoningResent> {
    let messages: Vec<Message> = serde_json::from_value(body.get("messages")?.clone()).ok()?;
    // A K2 template is never rendered for a K3 model, not even to measure.
    if ep.raw_mode_refusal().is_some() {
        return None;
    }
    measure(ep, &messages, tools, None, Measured::ClientRender)
}

fn measure(
    ep: &Endpoint,
    messages: &[Message],
    tools: &[Value],
    sent: Option<&str>,
    measured: Measured,
) -> Option<ReasoningResent> {
    if ep.template() == Template::K3 {
        let opts = ep.k3_render_options();
        reasoning_resent::measure(messages, sent, measured, |m| {
            k3::render_messages(m, tools, &opts).ok()
        })
    } else {
        let opts = ep.raw_render_options();
        reasoning_resent::measure(messages, sent, measured, |m| Some(render(m, tools, opts)))
    }
}
