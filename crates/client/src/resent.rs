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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReasoningField;
    use kimi_protocol::{Mode, ToolCall};

    const THOUGHT: &str = "Call the weather tool.";

    /// A question, a call with its reasoning, its result.
    fn round() -> Vec<Message> {
        let mut call =
            Message::assistant_with_calls("", vec![ToolCall::new("functions.f:0", "f", "{}")]);
        call.reasoning_content = Some(THOUGHT.into());
        vec![
            Message::user("q"),
            call,
            Message::tool_result("functions.f:0", "f", "ok"),
        ]
    }

    fn chat_measure(ep: &Endpoint) -> Option<ReasoningResent> {
        let body = crate::chat_request::body(ep, &round(), &[]);
        chat(ep, &body, &[])
    }

    #[test]
    fn chat_mode_measures_the_messages_as_sent_on_this_clients_render() {
        let mut ep = Endpoint::new(Mode::Chat, "http://h/v1", "moonshotai/Kimi-K2-Thinking");
        for field in [ReasoningField::ReasoningContent, ReasoningField::Reasoning] {
            ep.reasoning_field = field;
            let r = chat_measure(&ep).expect("measured");
            assert_eq!(r.carried, [1], "{field:?}");
            assert_eq!(r.bytes, THOUGHT.len() as u64);
            assert_eq!(r.measured, Measured::ClientRender);
        }
        // Sent without its reasoning: none goes back, whatever the conversation holds.
        ep.reasoning_field = ReasoningField::None;
        let r = chat_measure(&ep).expect("measured");
        assert_eq!((r.bytes, r.carried.len()), (0, 0));
    }

    #[test]
    fn raw_mode_measures_the_prompt_sent_and_a_k2_template_is_never_measured_for_k3() {
        let ep = Endpoint::new(Mode::Raw, "http://h/v1", "moonshotai/Kimi-K2-Thinking");
        let messages = round();
        let prompt = render(&messages, &[], ep.raw_render_options());
        let r = raw(&ep, &messages, &[], &prompt).expect("measured");
        assert_eq!(
            (r.carried.as_slice(), r.measured),
            (&[1][..], Measured::Sent)
        );
        let mut k3 = Endpoint::new(Mode::Chat, "http://h/v1", "moonshotai/Kimi-K3");
        k3.template = Some(Template::K2Thinking);
        assert_eq!(chat_measure(&k3), None);
        k3.template = None;
        assert_eq!(chat_measure(&k3).map(|r| r.carried), Some(vec![1]));
    }
}
