//! `kimi-tui doctor --conformance` as a user runs it: the real binary against the mock server on
//! loopback, in both modes. The well-behaved mock passes every check; each of its fault flags
//! fails the check that names the fault, with exit status 1.

use kimi_mock::{MockOptions, MockServer, ScriptedCall};
use kimi_tui::commands::doctor::conformance::checks::{self, CHECKS};
use serde_json::Value;

use super::doctor::{Run, doctor, write_config};

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
        let expected_skips: Vec<&str> = match (mode, model) {
            ("chat", INSTRUCT) => vec![checks::REASONING_FIELD, checks::SPECIAL_TOKENS],
            ("chat", _) => vec![checks::SPECIAL_TOKENS],
            ("raw", INSTRUCT) => vec![checks::REASONING_FIELD],
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
