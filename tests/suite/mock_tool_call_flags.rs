//! `kimi-tui mock-server --tool-call-*`: the real binary emits exactly the call it was given, id,
//! name and argument text verbatim, in chat mode (`tool_calls`) and raw mode (markers); bad
//! flags fail with one clear line.

use std::process::Command;

use serde_json::{Value, json};

use super::mock_process::MockProcess;

/// The real mock server, with the calls it answers through.
struct Server(MockProcess);

impl Server {
    fn start(args: &[&str]) -> Server {
        Server(MockProcess::start(args))
    }

    /// A non-streamed request to `path`, as a blocking call on a small runtime.
    fn post(&self, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.0.url);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::new()
                .post(url)
                .json(&body)
                .send()
                .await
                .expect("sent")
                .json::<Value>()
                .await
                .expect("json")
        })
    }
}

const ID: &str = "call_0\ncommand: ls\n\u{1b}[2J";
const ARGS: &str = "{\"command\": \"ls\u{200b}; rm -rf ~\", \"pad\": \"      \"}";

#[test]
fn flags_emit_the_given_call_verbatim_in_chat_mode() {
    let s = Server::start(&[
        "--tool-call-name",
        "run_command",
        "--tool-call-id",
        ID,
        "--tool-call-args",
        ARGS,
    ]);
    let r = s.post(
        "/chat/completions",
        json!({"model": "m", "stream": false,
               "messages": [{"role": "user", "content": "hi"}]}),
    );
    let call = &r["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["id"], ID, "{r}");
    assert_eq!(call["function"]["name"], "run_command", "{r}");
    assert_eq!(call["function"]["arguments"], ARGS, "{r}");
    // Tool results are still answered by quoting them.
    let r = s.post(
        "/chat/completions",
        json!({"model": "m", "stream": false, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": ID, "type": "function",
                "function": {"name": "run_command", "arguments": ARGS}}]},
            {"role": "tool", "tool_call_id": ID, "name": "run_command", "content": "done"}
        ]}),
    );
    let text = r["choices"][0]["message"]["content"].as_str().unwrap_or("");
    assert!(text.contains("returned: done"), "{r}");
}

#[test]
fn a_call_file_is_emitted_between_markers_in_raw_mode() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("call.json");
    std::fs::write(
        &file,
        json!([{"id": "functions.run_command:0", "name": "run_command", "arguments": ARGS}])
            .to_string(),
    )
    .expect("write");
    let s = Server::start(&["--tool-call-file", &file.display().to_string()]);
    let r = s.post(
        "/completions",
        json!({"model": "m", "stream": false, "skip_special_tokens": false,
               "prompt": "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>"}),
    );
    let text = r["choices"][0]["text"].as_str().unwrap_or("");
    assert!(
        text.contains(&format!(
            "<|tool_call_begin|>functions.run_command:0<|tool_call_argument_begin|>{ARGS}<|tool_call_end|>"
        )),
        "{r}"
    );
}

#[test]
fn bad_tool_call_flags_fail_with_one_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("call.json");
    std::fs::write(&file, r#"{"name": "x"}"#).expect("write");
    for args in [
        vec!["--tool-call-file".to_owned(), file.display().to_string()],
        vec![
            "--tool-call-file".to_owned(),
            "/nonexistent/call.json".into(),
        ],
        vec!["--tool-call-id".to_owned(), "x".into()],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
            .args(["mock-server", "--port", "0"])
            .args(&args)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
