//! `kimi-tui doctor --conformance` as a user runs it: the real binary against the mock server on
//! loopback, in both modes. The well-behaved mock passes every check; each of its fault flags
//! fails the check that names the fault, with exit status 1.

use kimi_mock::{MockOptions, MockServer, ScriptedCall};
use kimi_tui::commands::doctor::conformance::checks::{self, CHECKS};
use serde_json::Value;

use super::doctor::{Run, doctor, serve, write_config};

const INSTRUCT: &str = "moonshotai/Kimi-K2-Instruct";
const THINKING: &str = "moonshotai/Kimi-K2-Thinking";

/// `doctor --conformance` (with `extra` flags) against a mock started with `opts`; the run and
/// the request bodies the mock received.
async fn conformance(opts: MockOptions, mode: &str, extra: &[&str]) -> (Run, Vec<Value>) {
    let model = opts.model.clone();
    let server = MockServer::start(opts, 0).await.expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let url = server.base_url();
    let mut args = vec![
        "--conformance",
        "--base-url",
        &url,
        "--mode",
        mode,
        "--model",
        &model,
    ];
    args.extend_from_slice(extra);
    let run = doctor(dir.path(), &args, &[]).await;
    let requests = server.requests();
    server.shutdown().await;
    (run, requests)
}

/// The `--json` object of a run.
fn json(run: &Run) -> Value {
    serde_json::from_str(&run.out)
        .unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{}\n{}", run.out, run.err))
}

/// The names of the checks with `status`.
fn with_status(v: &Value, status: &str) -> Vec<String> {
    v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect()
}

fn opts(model: &str) -> MockOptions {
    MockOptions {
        model: model.into(),
        ..MockOptions::default()
    }
}

#[tokio::test]
async fn the_correct_mock_passes_every_check_in_both_modes() {
    for (mode, model, requests) in [
        ("chat", INSTRUCT, 10),
        ("raw", INSTRUCT, 10),
        ("chat", THINKING, 12),
        ("raw", THINKING, 12),
    ] {
        let (run, bodies) = conformance(opts(model), mode, &["--json"]).await;
        assert_eq!(
            run.code,
            Some(0),
            "{mode} {model}:\n{}\n{}",
            run.out,
            run.err
        );
        let v = json(&run);
        assert_eq!(v["passed"], true);
        assert_eq!(v["endpoint"]["mode"], mode);
        let names: Vec<&str> = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .map(|c| c["name"].as_str().expect("name"))
            .collect();
        let table: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        assert_eq!(names, table);
        assert_eq!(with_status(&v, "fail"), Vec::<String>::new());
        assert_eq!(with_status(&v, "warn"), Vec::<String>::new(), "{}", run.out);
        let skipped = with_status(&v, "skip");
        // Skipped: what does not apply (the order is the table's).
        let expected_skips: Vec<&str> = match (mode, model) {
            ("chat", INSTRUCT) => vec![
                checks::THINK_CLOSE,
                checks::REASONING_FIELD,
                checks::SPECIAL_TOKENS,
            ],
            ("chat", _) => vec![checks::THINK_CLOSE, checks::SPECIAL_TOKENS],
            ("raw", INSTRUCT) => vec![checks::THINK_CLOSE, checks::REASONING_FIELD],
            _ => vec![],
        };
        assert_eq!(skipped, expected_skips, "{mode} {model}");
        assert!(v["timings"]["ttft_ms_p50"].as_f64().is_some(), "{v}");
        // Each request went streamed and again non-streamed, the same body otherwise.
        assert_eq!(bodies.len(), requests, "{mode} {model}");
        assert_eq!(bodies[0]["stream"], true);
        assert_eq!(bodies[1]["stream"], false);
        assert_eq!(bodies[0]["temperature"], 0.0);
        let key = if mode == "raw" { "prompt" } else { "messages" };
        assert_eq!(bodies[0][key], bodies[1][key]);
        if mode == "raw" {
            assert_eq!(bodies[0]["return_tokens_as_token_ids"], true);
        }
        // The tool-result round carries the first round's call back with its result.
        let round_two = bodies
            .iter()
            .find(|b| b.to_string().contains("temp_c"))
            .expect("a second round");
        assert!(round_two.to_string().contains("functions.get_weather:0"));
    }
}

#[tokio::test]
async fn the_table_says_each_check_and_the_timings() {
    let (run, _) = conformance(opts(INSTRUCT), "chat", &[]).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.out, run.err);
    assert!(run.out.starts_with("conformance of http://127.0.0.1:"));
    assert!(
        run.has("schema             PASS    8/8 calls valid (100%)"),
        "{}",
        run.out
    );
    assert!(run.has("special_tokens     SKIP    chat mode"));
    assert!(
        run.line("timing: TTFT p50 ")
            .contains("inter-token gap p50 ")
    );
    assert!(run.out.ends_with("all checks passed\n"));
    // Two rounds send the set twice.
    let (run, bodies) = conformance(opts(INSTRUCT), "raw", &["--rounds", "2", "--json"]).await;
    assert_eq!(run.code, Some(0), "{}", run.out);
    assert_eq!(json(&run)["rounds"], 2);
    assert_eq!(bodies.len(), 20);
}

/// Each fault of the mock fails its check (and only the checks it breaks).
#[tokio::test]
async fn each_fault_fails_its_check() {
    let call = |id: Option<&str>, args: &str| {
        vec![ScriptedCall {
            id: id.map(str::to_owned),
            name: "get_weather".into(),
            arguments: args.into(),
        }]
    };
    let cases: Vec<(&str, MockOptions, Vec<&str>)> = vec![
        (
            "chat",
            MockOptions {
                markers_in_content: true,
                ..opts(INSTRUCT)
            },
            vec![checks::FINISH_REASON, checks::LEAKED_MARKERS],
        ),
        (
            "chat",
            MockOptions {
                duplicate_calls: true,
                ..opts(INSTRUCT)
            },
            vec![checks::LEAKED_MARKERS, checks::DUPLICATE_CALLS],
        ),
        (
            "raw",
            MockOptions {
                split_markers: true,
                ..opts(INSTRUCT)
            },
            vec![checks::SPECIAL_TOKENS],
        ),
        (
            "raw",
            MockOptions {
                strip_special_tokens: true,
                ..opts(INSTRUCT)
            },
            vec![checks::SPECIAL_TOKENS],
        ),
        // Forced calls come for every question, the one that needs no tool too.
        (
            "chat",
            MockOptions {
                tool_calls: call(None, "{city: Beijing"),
                ..opts(INSTRUCT)
            },
            vec![checks::SCHEMA, checks::CALL_EXPECTATIONS],
        ),
        (
            "raw",
            MockOptions {
                tool_calls: call(None, "{city: Beijing"),
                ..opts(INSTRUCT)
            },
            vec![checks::SCHEMA, checks::CALL_EXPECTATIONS],
        ),
        (
            "chat",
            MockOptions {
                tool_calls: call(Some("call00003"), r#"{"city": "Beijing"}"#),
                ..opts(INSTRUCT)
            },
            vec![checks::CALL_IDS, checks::CALL_EXPECTATIONS],
        ),
        (
            "chat",
            MockOptions {
                reasoning_in_content: true,
                ..opts(THINKING)
            },
            vec![checks::LEAKED_MARKERS, checks::REASONING_FIELD],
        ),
        (
            "chat",
            MockOptions {
                fail_status: Some(500),
                ..opts(INSTRUCT)
            },
            vec![checks::ANSWERED],
        ),
    ];
    for (mode, o, expected) in cases {
        let what = format!("{mode} {o:?}");
        let (run, _) = conformance(o, mode, &["--json"]).await;
        assert_eq!(run.code, Some(1), "{what}:\n{}\n{}", run.out, run.err);
        let v = json(&run);
        assert_eq!(v["passed"], false, "{what}");
        assert_eq!(with_status(&v, "fail"), expected, "{what}:\n{v:#}");
        for c in v["checks"].as_array().expect("checks") {
            if c["status"] == "fail" {
                let evidence = c["evidence"].as_str().expect("evidence");
                assert!(
                    evidence.contains("request ") || c["name"] == checks::SCHEMA,
                    "{what}: {c}"
                );
                assert!(c["hint"].as_str().is_some_and(|h| !h.is_empty()), "{c}");
            }
        }
        assert!(run.err.contains("conformance check"), "{}", run.err);
    }
}

/// The split markers' evidence names the request and the chunk; the hint the server setting.
#[tokio::test]
async fn a_failure_names_its_evidence_and_the_setting_to_fix() {
    let o = MockOptions {
        split_markers: true,
        ..opts(INSTRUCT)
    };
    let (run, _) = conformance(o, "raw", &[]).await;
    assert_eq!(run.code, Some(1));
    let line = run.line("special_tokens     FAIL    ");
    assert!(
        line.contains("request nested (round 1, streamed, chunk ")
            && line.ends_with("<|tool_calls_section_begin|> is not one special token (spelled as ordinary tokens, or with another id)"),
        "{line}"
    );
    assert!(
        run.out
            .contains("fix: the server must honour skip_special_tokens: false")
    );
    assert!(run.out.ends_with("1 check failed\n"));
    // A server refusing token data leaves the check unchecked: a warning, exit 0.
    let o = MockOptions {
        refuse_logprobs: true,
        ..opts(INSTRUCT)
    };
    let (run, _) = conformance(o, "raw", &["--json"]).await;
    assert_eq!(run.code, Some(0), "{}", run.out);
    assert_eq!(with_status(&json(&run), "warn"), [checks::SPECIAL_TOKENS]);
}

/// The profile's endpoint and mode, from the config file (`--profile` given to doctor).
#[tokio::test]
async fn the_profile_gives_the_endpoint_and_mode() {
    let server = MockServer::start(opts(INSTRUCT), 0).await.expect("mock");
    let url = server.base_url();
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = write_config(dir.path(), &url, "raw", "");
    let cfg = cfg.display().to_string();
    let run = doctor(
        dir.path(),
        &[
            "--config",
            &cfg,
            "--profile",
            "test",
            "--conformance",
            "--json",
        ],
        &[],
    )
    .await;
    let bodies = server.requests();
    server.shutdown().await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.out, run.err);
    let v = json(&run);
    assert_eq!(v["endpoint"]["mode"], "raw");
    assert_eq!(v["endpoint"]["base_url"], url.trim_end_matches('/'));
    assert_eq!(bodies.len(), 10);
    assert!(
        bodies.iter().all(|b| b.get("prompt").is_some()),
        "raw mode sends prompts"
    );
}

#[tokio::test]
async fn rounds_and_json_need_conformance() {
    let dir = tempfile::tempdir().expect("tmp");
    let run = doctor(dir.path(), &["--json"], &[]).await;
    assert_eq!(run.code, Some(2), "{}", run.err);
    assert!(run.err.contains("--conformance"), "{}", run.err);
    let run = doctor(dir.path(), &["--conformance", "--rounds", "0"], &[]).await;
    assert_eq!(run.code, Some(2), "{}", run.err);
}

/// A server written apart from the mock, in chat mode: calls as the questions ask (ids
/// `functions.NAME:IDX`), text otherwise, usage when asked. With `differ`, its non-streamed
/// answer to the weather question names another city than its streamed one.
async fn foreign_server(differ: bool) -> (String, tokio::task::JoinHandle<()>) {
    use axum::response::IntoResponse;
    use axum::routing::{get, post};
    use serde_json::json;

    fn plan(body: &Value) -> (&'static str, Vec<(&'static str, String)>) {
        let last = &body["messages"]
            .as_array()
            .expect("messages")
            .last()
            .expect("a message");
        if last["role"] == "tool" {
            return ("It is 21 C and clear in Beijing.", vec![]);
        }
        let q = last["content"].as_str().unwrap_or_default();
        if let Some((_, args)) = q.split_once("book_trip with ") {
            return ("Booking.", vec![("book_trip", args.to_owned())]);
        }
        let city = |c: &str| format!("{{\"city\": \"{c}\"}}");
        if q.contains("parallel") {
            return (
                "Checking both.",
                vec![
                    ("get_weather", city("Beijing")),
                    ("get_weather", city("Shanghai")),
                ],
            );
        }
        if q.contains("weather") {
            return ("Checking.", vec![("get_weather", city("Beijing"))]);
        }
        ("Hello there!", vec![])
    }

    let handler = move |axum::Json(body): axum::Json<Value>| async move {
        let (text, calls) = plan(&body);
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let usage = json!({"prompt_tokens": body["messages"].to_string().len() / 4,
            "completion_tokens": 12, "total_tokens": 0});
        let mut tool_calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                json!({"id": format!("functions.{name}:{i}"), "type": "function",
                "function": {"name": name, "arguments": args}})
            })
            .collect();
        if body["stream"] != true {
            if differ && text == "Checking." {
                tool_calls[0]["function"]["arguments"] = json!("{\"city\": \"Paris\"}");
            }
            let mut message = json!({"role": "assistant", "content": text});
            if !tool_calls.is_empty() {
                message["tool_calls"] = Value::Array(tool_calls);
            }
            let answer = json!({"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage});
            return axum::Json(answer).into_response();
        }
        let mut events =
            vec![json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})];
        for word in text.split_inclusive(' ') {
            events.push(json!({"choices": [{"index": 0, "delta": {"content": word}}]}));
        }
        for (i, c) in tool_calls.iter().enumerate() {
            let args = c["function"]["arguments"]
                .as_str()
                .expect("args")
                .to_owned();
            events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": c["id"],
                "type": "function", "function": {"name": c["function"]["name"], "arguments": ""}}]}}]}));
            for piece in args.as_bytes().chunks(7) {
                let piece = String::from_utf8_lossy(piece).into_owned();
                events.push(
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i,
                    "function": {"arguments": piece}}]}}]}),
                );
            }
        }
        events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
        if body["stream_options"]["include_usage"] == true {
            events.push(json!({"choices": [], "usage": usage}));
        }
        let mut sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        sse.push_str("data: [DONE]\n\n");
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            sse,
        )
            .into_response()
    };
    let app = axum::Router::new()
        .route(
            "/v1/models",
            get(|| async { axum::Json(json!({"data": [{"id": INSTRUCT}]})) }),
        )
        .route("/v1/chat/completions", post(handler));
    serve(app).await
}

/// Not only the mock: a server written apart passes, and its non-streamed answer that differs
/// from the streamed one fails `stream_agreement` alone.
#[tokio::test]
async fn a_foreign_server_passes_and_its_differing_answer_fails_stream_agreement() {
    for (differ, code, failed) in [
        (false, 0, vec![]),
        (true, 1, vec![checks::STREAM_AGREEMENT]),
    ] {
        let (url, task) = foreign_server(differ).await;
        let dir = tempfile::tempdir().expect("tmp");
        let args = [
            "--conformance",
            "--base-url",
            &url,
            "--mode",
            "chat",
            "--model",
            INSTRUCT,
            "--json",
        ];
        let run = doctor(dir.path(), &args, &[]).await;
        task.abort();
        assert_eq!(run.code, Some(code), "{}\n{}", run.out, run.err);
        let v = json(&run);
        assert_eq!(with_status(&v, "fail"), failed, "{v:#}");
        assert_eq!(with_status(&v, "warn"), Vec::<String>::new(), "{v:#}");
        if differ {
            let c = &v["checks"].as_array().expect("checks")[CHECKS.len() - 1];
            assert_eq!(
                c["evidence"],
                "request weather (round 1, both): streamed get_weather {\"city\": \"Beijing\"} (chunk 2), non-streamed get_weather {\"city\": \"Paris\"}"
            );
        }
    }
}

/// Every known server bug of the mock, in each mode it shows in, fails exactly the checks its
/// scenario names, with exit status 1.
#[tokio::test]
async fn each_server_bug_fails_exactly_the_checks_its_scenario_names() {
    for bug in kimi_mock::server_bugs::SERVER_BUGS.iter() {
        for (mode, want) in [("raw", bug.raw), ("chat", bug.chat)] {
            if want.is_empty() {
                continue;
            }
            let mut o = MockOptions::default();
            bug.apply(&mut o);
            let (run, _) = conformance(o, mode, &["--json"]).await;
            assert_eq!(run.code, Some(1), "{} {mode}:\n{}", bug.name, run.out);
            let mut failed = with_status(&json(&run), "fail");
            failed.sort();
            let mut want: Vec<String> = want.iter().map(|c| (*c).to_owned()).collect();
            want.sort();
            assert_eq!(failed, want, "{} in {mode} mode:\n{}", bug.name, run.out);
            for name in &want {
                assert!(
                    CHECKS.iter().any(|c| c.name == name),
                    "{}: no check {name}",
                    bug.name
                );
            }
        }
    }
}

/// The correct mock passes with the other families too: K2.6 (its think tags special tokens
/// with ids) and K3 (XTML), in both modes.
#[tokio::test]
async fn the_correct_mock_passes_as_k2_6_and_k3_in_both_modes() {
    for model in ["moonshotai/Kimi-K2.6", "kimi-k3"] {
        for mode in ["raw", "chat"] {
            let (run, _) = conformance(opts(model), mode, &["--json"]).await;
            assert_eq!(
                run.code,
                Some(0),
                "{model} {mode}:\n{}\n{}",
                run.out,
                run.err
            );
            assert!(with_status(&json(&run), "fail").is_empty(), "{}", run.out);
        }
    }
}
