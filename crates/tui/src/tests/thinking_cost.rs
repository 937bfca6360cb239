//! What thinking costs, through `update` as the agent reports it: two user turns of a thinking
//! model, the first with a tool round. The second turn's prompt drops the first answer's
//! reasoning (as K2-Thinking's template does), so it no longer extends the request before it.
//! `/usage` and the inspector show the same figures; one the server did not report is `-`.

use crossterm::event::KeyCode;

use super::app_update::{app, key, notices, screen, typed};
use super::update;
use crate::app::event::AppEvent;
use crate::app::state::App;
use kimi_core::engine::{EngineEvent, SharedTrace};
use kimi_protocol::reasoning_resent::{Measured, ReasoningResent};
use kimi_protocol::{Message, Mode, RequestSent, StreamEvent, ToolCall, Trace, Usage};

const R1: &str = "The user wants the weather: call the tool.";
const GEN: &str = "<|im_assistant|>assistant<|im_middle|>";

/// A raw request with `prompt`, the reasoning it carries, and the usage reported (if any).
fn request(prompt: &str, resent: ReasoningResent, usage: Option<Usage>) -> Trace {
    let mut t = Trace::default();
    t.record(&StreamEvent::Request(Box::new(RequestSent {
        mode: Mode::Raw,
        url: "http://127.0.0.1:8000/v1/completions".into(),
        body: serde_json::json!({"model": "moonshotai/Kimi-K2-Thinking", "prompt": prompt}),
        prompt: Some(prompt.into()),
        started_unix_ms: 1,
        reasoning_resent: Some(resent),
        ..RequestSent::default()
    })));
    t.record(&StreamEvent::Response { status: 200 });
    if let Some(u) = usage {
        t.record(&StreamEvent::Usage(u));
    }
    t.record(&StreamEvent::Finished {
        total_us: 1_000,
        error: None,
    });
    t
}

fn resent(bytes: u64, carried: &[u32], messages: u32) -> ReasoningResent {
    ReasoningResent {
        bytes,
        carried: carried.to_vec(),
        messages,
        measured: Measured::Sent,
    }
}

fn usage(prompt: u64, cached: Option<u64>, completion: u64, reasoning: Option<u64>) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        cached_tokens: cached,
        reasoning_tokens: reasoning,
    }
}

fn engine(app: &mut App, e: EngineEvent) {
    update(app, AppEvent::Engine(e));
}

fn append(app: &mut App, index: usize, message: Message) {
    engine(
        app,
        EngineEvent::MessageAppended {
            index,
            message: Box::new(message),
        },
    );
}

/// One request: its trace starts, its answer (message `index`) is appended, it ends.
fn round(app: &mut App, trace: usize, trace_data: Trace, index: usize, answer: Message) {
    engine(
        app,
        EngineEvent::TraceStarted {
            index: trace,
            trace: SharedTrace::new(trace_data),
        },
    );
    append(app, index, answer);
    engine(
        app,
        EngineEvent::TraceFinished {
            index: trace,
            message_index: index,
        },
    );
    super::round_finished(app);
}

/// Two turns: the weather call and its answer (two requests), then the time (one request,
/// whose prompt no longer carries the call's reasoning).
fn two_turns() -> App {
    let mut a = app();
    let user1 = "<|im_user|>user<|im_middle|>Weather in Paris?<|im_end|>";
    let call = "<|tool_calls_section_begin|>…<|tool_calls_section_end|><|im_end|><|im_system|>get_weather<|im_middle|>sunny<|im_end|>";
    let p1 = format!("{user1}{GEN}");
    let p2 = format!("{user1}{GEN}<think>{R1}</think>{call}{GEN}");
    let p3 = format!(
        "{user1}{GEN}<think></think>{call}{GEN}<think></think>Sunny.<|im_end|><|im_user|>user<|im_middle|>And the time?<|im_end|>{GEN}"
    );
    append(&mut a, 0, Message::user("Weather in Paris?"));
    let mut first = Message::assistant_with_calls(
        "",
        vec![ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            "{\"city\": \"Paris\"}",
        )],
    );
    first.reasoning_content = Some(R1.into());
    round(
        &mut a,
        0,
        request(
            &p1,
            resent(0, &[], 1),
            Some(usage(100, Some(0), 30, Some(11))),
        ),
        1,
        first,
    );
    append(
        &mut a,
        2,
        Message::tool_result("functions.get_weather:0", "get_weather", "sunny"),
    );
    let mut answer = Message::assistant("Sunny.");
    answer.reasoning_content = Some("Answer from the result.".into());
    round(
        &mut a,
        1,
        request(
            &p2,
            resent(R1.len() as u64, &[1], 3),
            Some(usage(140, Some(100), 12, Some(6))),
        ),
        3,
        answer,
    );
    append(&mut a, 4, Message::user("And the time?"));
    // This server reports no cache hit and no reasoning tokens for this request.
    round(
        &mut a,
        2,
        request(&p3, resent(0, &[], 5), Some(usage(160, None, 9, None))),
        5,
        Message::assistant("Noon."),
    );
    a
}

#[test]
fn usage_lists_each_turn_with_its_cache_hits_reasoning_and_the_prompt_that_broke_the_cache() {
    let mut a = two_turns();
    typed(&mut a, "/usage");
    key(&mut a, KeyCode::Enter);
    let shown = notices(&a);
    let (report, error) = shown.last().expect("the report");
    assert!(!error);
    for want in [
        // Turn 1: two requests, 100 of 240 prompt tokens cached, the call's reasoning
        // (11 tokens when the server generated it) re-sent once.
        "1             2     240    100 (41%)          42         17             42              11",
        // Turn 2: no cache hit or reasoning tokens reported: `-`, not 0.
        "2             1     160            -           9          -              0               0",
        "total         3     400  100+? (41%)          51       17+?             42              11",
        "  ! request 3 no longer extends request 2's prompt from byte 100 of 307:",
        "the reasoning of an earlier answer (message 1) is no longer in the prompt; the prefix cache cannot hit past it",
    ] {
        assert!(report.contains(want), "{want}\n{report}");
    }
    insta::assert_snapshot!(report);
}

#[test]
fn the_inspector_shows_a_requests_cost_and_why_its_prompt_broke_the_cache() {
    let mut a = two_turns();
    a.layers.inspector.open = true;
    // The second request: the call's reasoning re-sent, 11 tokens as the server counted it.
    a.layers.inspector.selected = Some(1);
    let second = screen(&mut a, 130, 40);
    for want in [
        "append +",
        &format!(
            "reasoning re-sent: {} bytes of an earlier answer (message 1) in the prompt sent · 11 tokens as the server counted them",
            R1.len()
        ),
        "prompt cache: 100 of 140 prompt tokens cached (71%)",
        "reasoning tokens of this answer: 6",
    ] {
        assert!(second.contains(want), "{want}\n{second}");
    }
    // The third: not an append, and why.
    a.layers.inspector.selected = Some(2);
    let third = screen(&mut a, 130, 40);
    for want in [
        " NOT AN APPEND ",
        "why:    the reasoning of an earlier answer (message 1) is no longer in the prompt",
        "reasoning re-sent: 0 bytes in the prompt sent",
        "prompt cache: cached tokens - (not reported)",
        "reasoning tokens of this answer: - (not reported)",
    ] {
        assert!(third.contains(want), "{want}\n{third}");
    }
    insta::assert_snapshot!(format!("{second}\n{third}"));
}

#[test]
fn usage_before_any_request_says_so() {
    let mut a = app();
    typed(&mut a, "/usage");
    key(&mut a, KeyCode::Enter);
    let shown = notices(&a);
    assert_eq!(
        shown.last().map(|(t, _)| t.as_str()),
        Some("No requests yet: /usage lists each turn's tokens once a request was sent.")
    );
}
