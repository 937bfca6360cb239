//! The measure on the real templates: each test fails if a template's rule for history
//! reasoning is not what the measure reports.

use super::*;
use crate::family::Template;
use crate::k3::{self, K3Options};
use crate::message::ToolCall;
use crate::prompt_diff::{PromptDiff, diff};
use crate::template::{RenderOptions, render};

const R1: &str = "I should look the weather up first.";
const R2: &str = "The tool said sunny; answer briefly.";
const R3: &str = "Now the time: another call.";

fn thought(content: &str, reasoning: &str, calls: Vec<ToolCall>) -> Message {
    Message {
        reasoning_content: Some(reasoning.into()),
        ..Message::assistant_with_calls(content, calls)
    }
}

fn call(name: &str, i: usize) -> Vec<ToolCall> {
    vec![ToolCall::new(format!("functions.{name}:{i}"), name, "{}")]
}

/// Two user turns: a call and its result, a plain answer, then another call and its result.
fn conversation() -> Vec<Message> {
    vec![
        Message::user("Weather in Paris?"),
        thought("", R1, call("weather", 0)),
        Message::tool_result("functions.weather:0", "weather", "sunny"),
        thought("Sunny.", R2, vec![]),
        Message::user("And the time?"),
        thought("", R3, call("time", 1)),
        Message::tool_result("functions.time:1", "time", "12:00"),
    ]
}

fn k2(template: Template, preserve_thinking: bool) -> impl Fn(&[Message]) -> Option<String> {
    move |m: &[Message]| {
        let opts = RenderOptions {
            template,
            add_generation_prompt: true,
            preserve_thinking,
            ..RenderOptions::default()
        };
        Some(render(m, &[], opts))
    }
}

fn k3_render(thinking: bool) -> impl Fn(&[Message]) -> Option<String> {
    move |m: &[Message]| {
        let opts = K3Options {
            thinking,
            ..K3Options::default()
        };
        k3::render_messages(m, &[], &opts).ok()
    }
}

fn measured(m: &[Message], render: impl Fn(&[Message]) -> Option<String>) -> ReasoningResent {
    measure(m, None, Measured::Sent, render).expect("renders")
}

#[test]
fn k2_thinking_carries_only_what_follows_the_last_plain_answer() {
    let conv = conversation();
    let r = measured(&conv, k2(Template::K2Thinking, false));
    assert_eq!(
        r.carried,
        [5],
        "the answers up to the plain one are history"
    );
    assert_eq!(r.bytes, R3.len() as u64);
    assert_eq!(r.messages, 7);
    // Before any plain answer, every reasoning is carried: the tool round of the first turn.
    let round = measured(&conv[..3], k2(Template::K2Thinking, false));
    assert_eq!(
        (round.carried.as_slice(), round.bytes),
        (&[1][..], R1.len() as u64)
    );
}

#[test]
fn k2_thinking_drops_an_earlier_reasoning_and_the_prompt_stops_extending() {
    let conv = conversation();
    let render = k2(Template::K2Thinking, false);
    // The first turn's tool round, then the second turn's first request.
    let (old, new) = (&conv[..3], &conv[..5]);
    let (a, b) = (measured(old, &render), measured(new, &render));
    assert_eq!(dropped(&a, &b), [1]);
    let (pa, pb) = (render(old).expect("a"), render(new).expect("b"));
    let PromptDiff::Changed(c) = diff(&pa, &pb) else {
        panic!("the dropped reasoning makes the prompt no append");
    };
    assert_eq!(
        c.offset,
        pa.find(R1).expect("carried"),
        "the change is where it was"
    );
}

#[test]
fn k2_6_with_preserve_thinking_carries_every_answers_reasoning() {
    let conv = conversation();
    let all = measured(&conv, k2(Template::K26, true));
    assert_eq!(all.carried, [1, 3, 5]);
    assert_eq!(all.bytes, (R1.len() + R2.len() + R3.len()) as u64);
    // Without it K2.6 is K2.5: only after the last plain answer.
    let default = measured(&conv, k2(Template::K26, false));
    assert_eq!(default.carried, [5]);
    // Nothing is dropped from one request to the next: the prompt extends.
    let (a, b) = (
        measured(&conv[..3], k2(Template::K26, true)),
        measured(&conv[..5], k2(Template::K26, true)),
    );
    assert!(dropped(&a, &b).is_empty());
}

#[test]
fn k3_carries_every_reasoning_but_a_blank_one_and_none_with_thinking_off() {
    let mut conv = conversation();
    let r = measured(&conv, k3_render(true));
    assert_eq!(r.carried, [1, 3, 5]);
    assert_eq!(r.bytes, (R1.len() + R2.len() + R3.len()) as u64);
    // K3 writes no blank reasoning: the stand-in would say otherwise, the measure does not.
    conv[3].reasoning_content = Some("  \n".into());
    let blank = measured(&conv, k3_render(true));
    assert_eq!(blank.carried, [1, 5]);
    assert_eq!(blank.bytes, (R1.len() + R3.len()) as u64);
    let off = measured(&conv, k3_render(false));
    assert_eq!((off.bytes, off.carried.len()), (0, 0));
}

#[test]
fn the_prompt_sent_is_measured_as_rendered_and_no_reasoning_is_zero_bytes() {
    let conv = conversation();
    let render = k2(Template::K26, true);
    let prompt = render(&conv).expect("renders");
    assert_eq!(
        measure(&conv, Some(&prompt), Measured::ClientRender, &render),
        Some(ReasoningResent {
            measured: Measured::ClientRender,
            ..measured(&conv, &render)
        })
    );
    let plain = [Message::user("hi"), Message::assistant("hello")];
    let none = measured(&plain, &render);
    assert_eq!((none.bytes, none.carried.len(), none.messages), (0, 0, 2));
    // A renderer that refuses the messages measures nothing.
    assert_eq!(measure(&conv, None, Measured::Sent, |_| None), None);
}

#[test]
fn tokens_are_known_only_when_every_carried_answer_reported_them() {
    let reported = |m: u32| {
        [(1, 9), (3, 7)]
            .iter()
            .find(|(i, _)| *i == m)
            .map(|(_, t)| *t)
    };
    assert_eq!(tokens(&[1, 3], reported), Some(16));
    assert_eq!(tokens(&[1, 5], reported), None);
    assert_eq!(tokens(&[], reported), Some(0));
}

#[test]
fn only_messages_both_requests_have_can_be_dropped() {
    let prev = ReasoningResent {
        bytes: 10,
        carried: vec![1, 5],
        messages: 7,
        measured: Measured::Sent,
    };
    // Rewound to four messages: message 5 is gone, not dropped; message 1 is dropped.
    let cur = ReasoningResent {
        messages: 4,
        ..ReasoningResent::default()
    };
    assert_eq!(dropped(&prev, &cur), [1]);
}
