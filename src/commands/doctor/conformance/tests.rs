//! The checks on hand-made records: a correct server's, and one defect at a time.

use serde_json::json;

use kimi_protocol::{Marker, MarkerHit, Mode, StreamEvent, StreamMeta, TokenLogprob, Usage};

use super::checks::{self, CHECKS, CheckResult, Status};
use super::record::{Answer, CallRec, Chunk, Exchange, Expect, Recorded};
use super::{report, requests};

fn usage(prompt: u64) -> Option<Usage> {
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: 20,
        total_tokens: prompt + 20,
        ..Usage::default()
    })
}

fn chunks(n: usize) -> Vec<Chunk> {
    (0..n)
        .map(|i| Chunk {
            at_us: 1000 * (i as u64 + 1),
        })
        .collect()
}

fn call(chunk: usize, name: &str, idx: usize, args: &str) -> CallRec {
    CallRec {
        chunk,
        id: format!("functions.{name}:{idx}"),
        name: name.into(),
        arguments: args.into(),
    }
}

/// A chat answer with `calls` (a structured delta each, at their chunk) and a sentence.
fn calling(calls: Vec<CallRec>, prompt: u64) -> Answer {
    Answer {
        chunks: chunks(6),
        text: vec![(1, "Let me check. ".into())],
        structured: calls.iter().map(|c| (c.chunk, c.id.clone())).collect(),
        calls,
        finish_reason: Some("tool_calls".into()),
        usage: usage(prompt),
        total_us: 7000,
        ..Answer::default()
    }
}

fn talking(text: &str, prompt: u64) -> Answer {
    Answer {
        chunks: chunks(3),
        text: vec![(1, text.into())],
        finish_reason: Some("stop".into()),
        usage: usage(prompt),
        total_us: 4000,
        ..Answer::default()
    }
}

fn exchange(request: &str, expect: Expect, rendered: usize, answer: Answer) -> Exchange {
    Exchange {
        request: request.into(),
        round: 1,
        tools: requests::tools(),
        expect,
        rendered_bytes: rendered,
        plain: Some(answer.clone()),
        streamed: answer,
    }
}

/// What a correct chat server records.
fn correct() -> Recorded {
    let weather = r#"{"city": "Beijing"}"#;
    Recorded {
        mode: Mode::Chat,
        model: "moonshotai/Kimi-K2-Instruct".into(),
        thinks: false,
        asked_token_ids: false,
        exchanges: vec![
            exchange(
                requests::NESTED,
                Expect::Calls,
                900,
                calling(
                    vec![call(
                        2,
                        "book_trip",
                        0,
                        r#"{"traveler": {"name": "Ada", "age": 36}, "legs": [{"from": "Beijing", "to": "Shanghai", "date": "2026-05-01"}]}"#,
                    )],
                    225,
                ),
            ),
            exchange(
                requests::PARALLEL,
                Expect::Parallel,
                880,
                calling(
                    vec![
                        call(2, "get_weather", 0, weather),
                        call(4, "get_weather", 1, r#"{"city": "Shanghai"}"#),
                    ],
                    220,
                ),
            ),
            exchange(
                requests::WEATHER,
                Expect::Calls,
                800,
                calling(vec![call(2, "get_weather", 0, weather)], 200),
            ),
            exchange(
                requests::TOOL_RESULT,
                Expect::Any,
                1000,
                talking("It is 21 °C and clear in Beijing.", 250),
            ),
            exchange(
                requests::NO_TOOL,
                Expect::NoCall,
                780,
                talking("Hello!", 195),
            ),
        ],
    }
}

fn result(rec: &Recorded, name: &str) -> CheckResult {
    checks::run_all(rec)
        .into_iter()
        .find(|r| r.name == name)
        .expect("every check has a result")
}

fn failed(rec: &Recorded) -> Vec<&'static str> {
    checks::run_all(rec)
        .into_iter()
        .filter(|r| r.status == Status::Fail)
        .map(|r| r.name)
        .collect()
}

#[test]
fn a_correct_server_passes_every_check() {
    let results = checks::run_all(&correct());
    let names: Vec<&str> = results.iter().map(|r| r.name).collect();
    let table: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
    assert_eq!(names, table, "one result per check, in table order");
    for r in &results {
        let expected = match r.name {
            checks::REASONING_FIELD | checks::SPECIAL_TOKENS | checks::THINK_CLOSE => Status::Skip,
            _ => Status::Pass,
        };
        assert_eq!(r.status, expected, "{r:?}");
    }
    assert!(report::passed(&results));
    assert_eq!(
        result(&correct(), checks::SCHEMA).evidence,
        "8/8 calls valid (100%)"
    );
}

#[test]
fn a_call_under_finish_reason_stop_fails_finish_reason() {
    let mut rec = correct();
    rec.exchanges[2].streamed.finish_reason = Some("stop".into());
    let r = result(&rec, checks::FINISH_REASON);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(
        r.evidence,
        "request weather (round 1, streamed, chunk 2): 1 call(s) arrived under finish_reason \"stop\""
    );
    assert!(r.hint.expect("a hint").contains("--tool-call-parser"));
    assert_eq!(failed(&rec), [checks::FINISH_REASON]);
    // The other way round: tool_calls with no call.
    let mut rec = correct();
    rec.exchanges[4]
        .plain
        .as_mut()
        .expect("plain")
        .finish_reason = Some("tool_calls".into());
    let r = result(&rec, checks::FINISH_REASON);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence
            .starts_with("request no_tool (round 1, non-streamed, chunk 2)")
    );
}

#[test]
fn arguments_that_are_not_json_fail_the_schema_check() {
    let mut rec = correct();
    rec.exchanges[2].streamed.calls[0].arguments = "{city: Beijing".into();
    let r = result(&rec, checks::SCHEMA);
    assert_eq!(r.status, Status::Fail);
    assert!(r.evidence.starts_with("7/8 calls valid (87.5%); first: request weather (round 1, streamed, chunk 2): call get_weather {city: Beijing: the arguments are not valid JSON"), "{}", r.evidence);
    // Stream and non-stream now differ too; nothing else breaks.
    assert_eq!(failed(&rec), [checks::SCHEMA, checks::STREAM_AGREEMENT]);
}

#[test]
fn arguments_against_the_nested_schema_fail_it() {
    let mut rec = correct();
    let bad = r#"{"traveler": {"name": "Ada", "age": "36"}, "legs": []}"#;
    let x = &mut rec.exchanges[0];
    for a in std::iter::once(&mut x.streamed).chain(x.plain.as_mut()) {
        a.calls[0].arguments = bad.into();
    }
    let r = result(&rec, checks::SCHEMA);
    assert_eq!(r.status, Status::Fail);
    assert!(r.evidence.contains("at /traveler/age"), "{}", r.evidence);
    assert!(
        r.evidence.starts_with("6/8 calls valid (75.0%)"),
        "{}",
        r.evidence
    );
    assert_eq!(failed(&rec), [checks::SCHEMA]);
}

#[test]
fn markers_leaked_into_content_fail_leaked_markers() {
    let mut rec = correct();
    rec.exchanges[2]
        .streamed
        .text
        .push((3, "<|tool_calls_section_begin|>".into()));
    let r = result(&rec, checks::LEAKED_MARKERS);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(
        r.evidence,
        "request weather (round 1, streamed, chunk 3): <|tool_calls_section_begin|> in content"
    );
    assert!(r.hint.expect("hint").contains("--tool-call-parser kimi_k2"));
    // A think tag in content points at the reasoning parser.
    let mut rec = correct();
    rec.exchanges[4].streamed.text[0].1 = "</think>Hello!".into();
    let r = result(&rec, checks::LEAKED_MARKERS);
    assert_eq!(r.status, Status::Fail);
    assert!(r.hint.expect("hint").contains("--reasoning-parser"));
    // Chat mode: markers the client had to parse itself came as text.
    let mut rec = correct();
    rec.exchanges[1].streamed.markers.push((5, Marker::CallEnd));
    let r = result(&rec, checks::LEAKED_MARKERS);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence
            .contains("chunk 5): <|tool_call_end|> arrived as text")
    );
}

#[test]
fn a_non_streamed_answer_that_differs_fails_stream_agreement() {
    let mut rec = correct();
    let plain = rec.exchanges[1].plain.as_mut().expect("plain");
    plain.calls[1].arguments = r#"{"city": "Shenzhen"}"#.into();
    let r = result(&rec, checks::STREAM_AGREEMENT);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence.starts_with("request parallel (round 1, both): streamed get_weather {\"city\": \"Shanghai\"} (chunk 4), non-streamed get_weather {\"city\": \"Shenzhen\"}"),
        "{}",
        r.evidence
    );
    assert_eq!(failed(&rec), [checks::STREAM_AGREEMENT]);
    // Calls only when not streamed (empty tool_calls deltas in the stream).
    let mut rec = correct();
    let s = &mut rec.exchanges[2].streamed;
    s.calls.clear();
    s.structured.clear();
    s.finish_reason = Some("stop".into());
    s.empty_call_deltas = vec![2];
    let r = result(&rec, checks::STREAM_AGREEMENT);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence
            .contains("0 call(s) streamed, 1 non-streamed; empty tool_calls delta at chunk 2"),
        "{}",
        r.evidence
    );
    // Text present on one side only.
    let mut rec = correct();
    rec.exchanges[4].plain.as_mut().expect("plain").text.clear();
    assert_eq!(result(&rec, checks::STREAM_AGREEMENT).status, Status::Fail);
}

#[test]
fn a_call_delivered_twice_fails_duplicate_calls() {
    let mut rec = correct();
    // As a delta and as marker text (the client dropped the copy).
    rec.exchanges[2]
        .streamed
        .markers
        .push((4, Marker::CallBegin));
    let r = result(&rec, checks::DUPLICATE_CALLS);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence.contains(
            "chunk 4): a call came as a tool_calls delta (chunk 2) and again as marker text"
        ),
        "{}",
        r.evidence
    );
    // The same call twice in one answer.
    let mut rec = correct();
    let again = rec.exchanges[2].streamed.calls[0].clone();
    rec.exchanges[2]
        .streamed
        .calls
        .push(CallRec { chunk: 5, ..again });
    let r = result(&rec, checks::DUPLICATE_CALLS);
    assert_eq!(r.status, Status::Fail);
    assert!(r.evidence.contains(
        "chunk 5): call functions.get_weather:0 get_weather repeats the one from chunk 2"
    ));
}

#[test]
fn ids_not_of_the_k2_form_fail_call_ids() {
    let mut rec = correct();
    rec.exchanges[1].streamed.calls[1].id = "call00003".into();
    let r = result(&rec, checks::CALL_IDS);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence
            .contains("chunk 4): id \"call00003\" for get_weather")
    );
    // A number is needed, and the name must be the call's.
    let mut rec = correct();
    rec.exchanges[2].streamed.calls[0].id = "functions.get_time:0".into();
    assert_eq!(result(&rec, checks::CALL_IDS).status, Status::Fail);
    rec.exchanges[2].streamed.calls[0].id = "functions.get_weather:".into();
    assert_eq!(result(&rec, checks::CALL_IDS).status, Status::Fail);
}

#[test]
fn a_call_where_none_may_come_fails_and_a_missing_one_warns() {
    let mut rec = correct();
    rec.exchanges[4].streamed = calling(vec![call(1, "get_weather", 0, "{\"city\": \"X\"}")], 195);
    let r = result(&rec, checks::CALL_EXPECTATIONS);
    assert_eq!(r.status, Status::Fail);
    assert!(
        r.evidence
            .starts_with("request no_tool (round 1, streamed, chunk 1): get_weather called")
    );
    let mut rec = correct();
    rec.exchanges[1].streamed.calls.truncate(1);
    rec.exchanges[1].streamed.structured.truncate(1);
    let r = result(&rec, checks::CALL_EXPECTATIONS);
    assert_eq!(r.status, Status::Warn, "the model may choose one call");
}

#[test]
fn missing_usage_fails_and_odd_growth_only_warns() {
    let mut rec = correct();
    rec.exchanges[3].plain.as_mut().expect("plain").usage = None;
    let r = result(&rec, checks::USAGE);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(
        r.evidence,
        "request tool_result (round 1, non-streamed): no usage"
    );
    // 200 bytes more rendered is about 50 tokens; 2 is far below a third of that.
    let mut rec = correct();
    rec.exchanges[3].streamed.usage = usage(202);
    let r = result(&rec, checks::USAGE_GROWTH);
    assert_eq!(r.status, Status::Warn);
    assert!(
        r.evidence.starts_with(
            "prompt_tokens 200 -> 202 (+2); the local render grew 200 bytes (about 50 tokens)"
        ),
        "{}",
        r.evidence
    );
    assert!(report::passed(&checks::run_all(&rec)));
    // Within the factor: 50 more.
    assert_eq!(
        result(&correct(), checks::USAGE_GROWTH).status,
        Status::Pass
    );
}

#[test]
fn thinking_models_need_reasoning_in_one_field() {
    let mut rec = correct();
    rec.thinks = true;
    let r = result(&rec, checks::REASONING_FIELD);
    assert_eq!(r.status, Status::Fail);
    assert!(r.hint.expect("hint").contains("--reasoning-parser"));
    for x in &mut rec.exchanges {
        for a in std::iter::once(&mut x.streamed).chain(x.plain.as_mut()) {
            a.reasoning = vec![(0, "thinking".into())];
            a.reasoning_fields = vec!["reasoning_content".into()];
        }
    }
    let r = result(&rec, checks::REASONING_FIELD);
    assert_eq!(
        (r.status, r.evidence.as_str()),
        (Status::Pass, "10 answers; field reasoning_content")
    );
}

fn token(text: &str, id: Option<u32>) -> TokenLogprob {
    TokenLogprob {
        id,
        text: text.into(),
        logprob: Some(-0.1),
        top: Vec::new(),
    }
}

#[test]
fn markers_spelled_as_ordinary_tokens_fail_special_tokens() {
    let mut rec = correct();
    rec.mode = Mode::Raw;
    rec.asked_token_ids = true;
    let end = Marker::CallEnd;
    let id = end.token_id();
    for x in rec
        .exchanges
        .iter_mut()
        .filter(|x| x.expect != Expect::NoCall)
    {
        x.streamed.markers = vec![(3, end)];
        x.streamed.tokens = vec![(3, token(end.text(), id))];
    }
    assert_eq!(result(&rec, checks::SPECIAL_TOKENS).status, Status::Pass);
    rec.exchanges[0].streamed.tokens =
        vec![(3, token("<|tool_call", None)), (4, token("_end|>", None))];
    let r = result(&rec, checks::SPECIAL_TOKENS);
    assert_eq!(r.status, Status::Fail);
    assert!(r.evidence.starts_with("request nested (round 1, streamed, chunk 3): <|tool_call_end|> is not one special token"), "{}", r.evidence);
    assert!(r.hint.expect("hint").contains("skip_special_tokens"));
    // No marker at all where calls were asked: stripped.
    rec.exchanges[0].streamed.markers.clear();
    let r = result(&rec, checks::SPECIAL_TOKENS);
    assert_eq!(r.status, Status::Fail);
    assert!(r.evidence.contains("no marker arrived"));
}

#[test]
fn events_become_an_answer_with_chunk_indexes() {
    let events = vec![
        StreamEvent::Chunk { data: r#"{"choices":[{"delta":{"reasoning_content":"hm"}}]}"#.into(), at_us: 10 },
        StreamEvent::Reasoning("hm".into()),
        StreamEvent::Chunk { data: r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"functions.f:0","function":{"name":"f","arguments":""}}]}}]}"#.into(), at_us: 20 },
        StreamEvent::ToolCallBegin { index: 0, id: "functions.f:0".into(), name: "f".into() },
        StreamEvent::Chunk { data: r#"{"choices":[{"delta":{"tool_calls":[]}}]}"#.into(), at_us: 30 },
        StreamEvent::ToolCallArgs { index: 0, delta: "{}".into() },
        StreamEvent::Marker(MarkerHit { marker: Marker::CallEnd, offset: 0, call: Some(0) }),
        StreamEvent::ToolCallEnd { index: 0 },
        StreamEvent::Meta(StreamMeta::FinishReason("tool_calls".into())),
        StreamEvent::Finished { total_us: 40, error: None },
    ];
    let a = Answer::from_events(Mode::Chat, &events);
    assert_eq!(a.chunks.len(), 3);
    assert_eq!(a.reasoning, [(0, "hm".to_owned())]);
    assert_eq!(a.reasoning_fields, ["reasoning_content"]);
    assert_eq!(
        a.calls,
        [CallRec {
            chunk: 1,
            id: "functions.f:0".into(),
            name: "f".into(),
            arguments: "{}".into()
        }]
    );
    assert_eq!(a.structured, [(1, "functions.f:0".to_owned())]);
    assert_eq!(a.empty_call_deltas, [2]);
    assert_eq!(a.markers, [(2, Marker::CallEnd)]);
    assert_eq!(a.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!((a.total_us, a.first_token_us()), (40, Some(10)));
}

#[test]
fn non_streamed_bodies_become_answers() {
    let chat = json!({"choices": [{"message": {"content": "Checking.", "reasoning": "hm",
        "tool_calls": [{"id": "functions.get_weather:0", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Beijing\"}"}}]},
        "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}});
    let a = Answer::from_chat_message(&chat);
    assert_eq!(a.content(), "Checking.");
    assert_eq!(a.reasoning_fields, ["reasoning"]);
    assert_eq!(a.calls[0].arguments, "{\"city\": \"Beijing\"}");
    assert_eq!(a.usage.map(|u| u.prompt_tokens), Some(5));
    let raw = json!({"choices": [{"text": "Ok.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_calls_section_end|>", "finish_reason": "stop"}]});
    let a = Answer::from_completion(&raw, false);
    assert_eq!(a.content(), "Ok.");
    assert_eq!(a.calls.len(), 1);
    assert_eq!(a.calls[0].id, "functions.get_weather:0");
    assert!(a.usage.is_none());
}

#[test]
fn the_report_has_every_check_and_timings() {
    let rec = correct();
    let results = checks::run_all(&rec);
    let t = report::timings(&rec);
    // Every streamed answer's first piece is in chunk 1, at 2 ms.
    assert_eq!(t.ttft_ms_p50, Some(2.0));
    assert_eq!(t.gap_ms_p50, Some(1.0));
    assert_eq!(t.streamed_answers, 5);
    let header = report::Header {
        base_url: "http://h/v1",
        mode: "chat",
        model: "m",
    };
    let v = report::json(&header, &results, &t, 1);
    assert_eq!(v["passed"], true);
    assert_eq!(v["checks"].as_array().map(Vec::len), Some(CHECKS.len()));
    assert_eq!(v["checks"][1]["name"], "finish_reason");
    assert_eq!(v["checks"][1]["status"], "pass");
    let table = report::table(&header, &results, &t, 1);
    assert!(
        table.contains("\nfinish_reason      PASS    10 answers consistent\n"),
        "{table}"
    );
    assert!(table.ends_with("all checks passed\n"));
    let mut bad = rec.clone();
    bad.exchanges[2].streamed.error = Some("\u{1b}[2Jboom".into());
    let results = checks::run_all(&bad);
    let table = report::table(&header, &results, &t, 1);
    assert!(!table.contains('\u{1b}'), "server text is made safe");
    assert!(
        table.contains(
            "\nanswered           FAIL    request weather (round 1, streamed, chunk 5): "
        ),
        "{table}"
    );
    assert!(
        table.contains("boom\n                   fix: look at the server's log"),
        "{table}"
    );
    assert!(table.ends_with("1 check failed\n"));
    assert_eq!(report::json(&header, &results, &t, 1)["passed"], false);
}

#[test]
fn an_answer_with_neither_text_nor_a_call_fails_empty_answer() {
    let mut rec = correct();
    let a = &mut rec.exchanges[3].streamed;
    a.text.clear();
    a.reasoning = vec![(1, "The weather came back.".into())];
    let r = result(&rec, checks::EMPTY_ANSWER);
    assert_eq!(r.status, Status::Fail);
    assert_eq!(
        r.evidence,
        "request tool_result (round 1, streamed, chunk 1): neither text nor a call after the reasoning"
    );
    assert!(r.hint.expect("a hint").contains("</think>"));
}

#[test]
fn raw_reasoning_without_its_close_fails_think_close_and_not_empty_answer() {
    use kimi_protocol::tokens::Marker;
    let mut rec = correct();
    rec.mode = Mode::Raw;
    rec.thinks = true;
    rec.model = "moonshotai/Kimi-K2-Thinking".into();
    for x in &mut rec.exchanges {
        x.streamed.reasoning = vec![(0, "Thinking.".into())];
        x.streamed.markers.push((1, Marker::ThinkEnd));
    }
    assert_eq!(result(&rec, checks::THINK_CLOSE).status, Status::Pass);
    // The close never came: everything stayed in the reasoning.
    let a = &mut rec.exchanges[4].streamed;
    a.markers.clear();
    a.text.clear();
    let r = result(&rec, checks::THINK_CLOSE);
    assert_eq!(r.status, Status::Fail, "{r:?}");
    assert!(
        r.evidence
            .starts_with("request no_tool (round 1, streamed, chunk 0)")
    );
    assert_eq!(result(&rec, checks::EMPTY_ANSWER).status, Status::Pass);
    // Chat mode cannot tell (the server's parser decides): the check does not apply.
    rec.mode = Mode::Chat;
    assert_eq!(result(&rec, checks::THINK_CLOSE).status, Status::Skip);
    assert_eq!(result(&rec, checks::EMPTY_ANSWER).status, Status::Fail);
}
