//! A server on the official Python MCP SDK (`tests/fixtures/mcp/python_server.py`, `mcp` 1.x
//! from PyPI: `.ci/run` installs it, and the first test run installs it when missing), over
//! stdio and Streamable HTTP: what the client says it is, what it keeps from the model (stderr,
//! image bytes), tools listed again after `list_changed`, progress and log notes, a question
//! answered by the user (not by the library), roots, a resource, a prompt, instructions, a
//! wrong token said in words, and the HTTP session closed with DELETE.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::Duration;

use kimi_core::tools::mcp::{ElicitReply, McpHub, McpServerConfig, ServerStatus, ToolNote};
use kimi_core::tools::{ToolResult, ToolStatus, Toolbox};
use tokio_util::sync::CancellationToken;

/// The SDK version the fixture is written for; `.ci/run` installs the same.
const SDK: &str = "mcp==1.30.0";

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp/python_server.py")
        .display()
        .to_string()
}

/// The SDK importable, installed from PyPI once when it is not.
fn sdk() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let present = Command::new("python3")
            .args(["-c", "import mcp.server.fastmcp, uvicorn"])
            .status()
            .is_ok_and(|s| s.success());
        if !present {
            let ok = Command::new("python3")
                .args(["-m", "pip", "install", "--quiet", SDK])
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "pip install {SDK} failed");
        }
    });
}

fn stdio(name: &str) -> McpServerConfig {
    let mut c = McpServerConfig::stdio(
        name,
        vec!["python3".to_owned(), script(), "stdio".to_owned()],
    );
    c.roots = vec!["/srv/project".to_owned()];
    c.instructions = true;
    c
}

async fn started(config: McpServerConfig, media: Option<PathBuf>) -> (Toolbox, McpHub) {
    sdk();
    let hub = McpHub::new(vec![config], Vec::<String>::new()).with_media_dir(media);
    hub.start();
    hub.wait_started(Duration::from_secs(60)).await;
    let tb = Toolbox::new(Vec::new())
        .expect("no local tools")
        .with_mcp(hub.clone());
    (tb, hub)
}

async fn call(
    tb: &Toolbox,
    name: &str,
    notes: Option<tokio::sync::mpsc::UnboundedSender<ToolNote>>,
) -> (ToolResult, String) {
    let spec = tb.find(name).unwrap_or_else(|| panic!("{name} is offered"));
    let result = tb
        .run_call(
            &spec,
            "functions.x:0",
            "{}",
            CancellationToken::new(),
            notes,
        )
        .await;
    let content = result.content.clone();
    (result, content)
}

#[tokio::test]
async fn a_python_sdk_server_over_stdio_gets_what_it_may_and_nothing_more() {
    let media = tempfile::tempdir().expect("tmp");
    let (tb, hub) = started(stdio("py"), Some(media.path().to_owned())).await;
    let report = &hub.reports()[0];
    assert_eq!(report.status, ServerStatus::Ready, "{report:?}");
    assert_eq!(report.version.as_deref(), Some("py-hostile 1.30.0"));
    assert_eq!(report.instructions.as_deref(), Some("Answer in French."));
    assert_eq!(
        hub.instructions(),
        [("py".to_owned(), "Answer in French.".to_owned())]
    );
    assert_eq!(report.resources[0].uri, "note://hello");
    assert_eq!(report.prompts[0].name, "review");
    assert_eq!(report.prompts[0].arguments, [("code".to_owned(), true)]);

    // The client names itself, asks the user (elicitation), lends no model (sampling), and
    // lists the configured roots.
    let (_, who) = call(&tb, "mcp__py__who", None).await;
    assert_eq!(
        who,
        format!(
            "kimi-tui {} elicitation=True sampling=False roots=True",
            env!("CARGO_PKG_VERSION")
        )
    );
    let (_, roots) = call(&tb, "mcp__py__roots", None).await;
    assert_eq!(roots, "file:///srv/project");

    // An image is described for the model and saved for the user.
    let (outcome, content) = call(&tb, "mcp__py__picture", None).await;
    assert_eq!(
        content,
        "[image: image/png, 3000 bytes; not sent to the model]"
    );
    let saved = media.path().join("mcp.png");
    assert!(
        outcome.output.contains(&saved.display().to_string()),
        "{}",
        outcome.output
    );
    assert_eq!(std::fs::read(&saved).expect("saved image").len(), 3000);

    // Progress and log lines of the call reach its notes, in order.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (_, done) = call(&tb, "mcp__py__slow", Some(tx)).await;
    assert_eq!(done, "done");
    let mut lines = Vec::new();
    while let Ok(n) = rx.try_recv() {
        lines.push(n.line());
    }
    assert!(
        lines.contains(&"progress 3/3 (100%): step 3".to_owned()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"[info] working on step 2".to_owned()),
        "{lines:?}"
    );

    // A resource's text, a prompt's messages.
    let text = hub.read_resource("py", "note://hello").await;
    assert_eq!(text.as_deref(), Ok("Hello from a resource"));
    let mut args = serde_json::Map::new();
    args.insert("code".into(), "x = 1".into());
    let prompt = hub.get_prompt("py", "review", args).await.expect("prompt");
    assert_eq!(prompt[0].role, "user");
    assert_eq!(prompt[0].text, "Please review: x = 1");
}

#[tokio::test]
async fn a_question_waits_for_the_user_and_a_dropped_one_is_cancelled() {
    let (tb, hub) = started(stdio("ask"), None).await;
    let mut questions = hub.questions();
    let answer = tokio::spawn(async move {
        let ask = questions.recv().await.expect("a question");
        assert_eq!(ask.server, "ask");
        assert_eq!(ask.message, "What is your name?");
        assert_eq!(ask.fields[0].name, "name");
        assert!(ask.fields[0].required);
        // The library does not answer meanwhile: the question is still open.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(ask.is_waiting());
        let mut values = serde_json::Map::new();
        values.insert("name".into(), "Ada".into());
        ask.answer(ElicitReply::Accept(values)).expect("valid");
        let ask = questions.recv().await.expect("a second question");
        drop(ask);
    });
    let (_, first) = call(&tb, "mcp__ask__ask", None).await;
    assert_eq!(first, "accept:Ada");
    let (_, second) = call(&tb, "mcp__ask__ask", None).await;
    assert_eq!(second, "cancel:");
    answer.await.expect("the answering task");
}

#[tokio::test]
async fn stderr_never_reaches_the_model_and_a_new_tool_is_callable_after_list_changed() {
    let (tb, hub) = started(stdio("grow"), None).await;
    assert!(tb.find("mcp__grow__added").is_none());
    let mut changes = hub.subscribe();
    let (_, grew) = call(&tb, "mcp__grow__grow", None).await;
    assert_eq!(grew, "grew");
    let mut notices = Vec::new();
    let listed = tokio::time::timeout(Duration::from_secs(10), async {
        while tb.find("mcp__grow__added").is_none() {
            changes.changed().await.expect("hub alive");
            notices.extend(hub.take_notices());
        }
    })
    .await;
    assert!(listed.is_ok(), "the new tool is offered after list_changed");
    notices.extend(hub.take_notices());
    assert!(
        notices
            .iter()
            .any(|n| n.text.contains("added mcp__grow__added")),
        "{notices:?}"
    );
    let (_, ran) = call(&tb, "mcp__grow__added", None).await;
    assert_eq!(ran, "the new tool ran");

    let (outcome, content) = call(&tb, "mcp__grow__crash", None).await;
    assert!(
        matches!(outcome.status, ToolStatus::CouldNotStart(_)),
        "{outcome:?}"
    );
    assert!(!content.contains("SECRET"), "{content}");
    assert!(
        content.starts_with("[the MCP server `grow` failed the call"),
        "{content}"
    );
    // The user still sees it, in the pane.
    let tail_has_secret = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if hub.reports()[0].stderr_tail.contains("SECRET_IN_STDERR") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        tail_has_secret.is_ok(),
        "the stderr tail is kept for the user"
    );
}

/// The HTTP server's process, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

async fn http_server(events: &std::path::Path) -> (Server, String) {
    http_server_on(free_port(), events).await
}

async fn http_server_on(port: u16, events: &std::path::Path) -> (Server, String) {
    sdk();
    let child = Command::new("python3")
        .args([
            &script(),
            "http",
            &port.to_string(),
            "right-token",
            &events.display().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let server = Server(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

fn http(name: &str, url: &str, token_var: &str) -> McpServerConfig {
    let mut c = McpServerConfig::stdio(name, Vec::new());
    c.command = None;
    c.url = Some(url.to_owned());
    c.bearer_token_env = Some(token_var.to_owned());
    c
}

#[tokio::test]
async fn over_http_a_wrong_token_is_said_in_words_and_the_session_is_closed_on_exit() {
    let dir = tempfile::tempdir().expect("tmp");
    let events = dir.path().join("events");
    let (_server, url) = http_server(&events).await;
    // SAFETY: these variables are only read by the hubs of this test.
    unsafe {
        std::env::set_var("KIMI_TEST_PY_WRONG_TOKEN", "wrong-token");
        std::env::set_var("KIMI_TEST_PY_RIGHT_TOKEN", "right-token");
    }
    let (_, hub) = started(http("bad", &url, "KIMI_TEST_PY_WRONG_TOKEN"), None).await;
    let ServerStatus::Failed(why) = &hub.reports()[0].status else {
        panic!("a wrong token fails: {:?}", hub.reports()[0].status);
    };
    assert!(
        why.contains("authentication failed (HTTP 401/403)")
            && why.contains("KIMI_TEST_PY_WRONG_TOKEN"),
        "{why}"
    );
    assert!(!why.contains("rmcp::"), "{why}");

    let (tb, hub) = started(http("good", &url, "KIMI_TEST_PY_RIGHT_TOKEN"), None).await;
    assert_eq!(hub.reports()[0].status, ServerStatus::Ready);
    let (_, who) = call(&tb, "mcp__good__who", None).await;
    assert!(who.starts_with("kimi-tui "), "{who}");
    hub.close(Duration::from_secs(5)).await;
    let seen = std::fs::read_to_string(&events).unwrap_or_default();
    assert_eq!(seen, "DELETE\n", "the session was terminated once");
}

#[tokio::test]
async fn an_http_session_the_server_forgot_is_initialized_again() {
    let dir = tempfile::tempdir().expect("tmp");
    let events = dir.path().join("events");
    let port = free_port();
    let (server, url) = http_server_on(port, &events).await;
    // SAFETY: read only by this test's hub.
    unsafe { std::env::set_var("KIMI_TEST_PY_RESTART_TOKEN", "right-token") };
    let (tb, hub) = started(http("again", &url, "KIMI_TEST_PY_RESTART_TOKEN"), None).await;
    let (_, who) = call(&tb, "mcp__again__who", None).await;
    assert!(who.starts_with("kimi-tui "), "{who}");
    // A restarted server knows no session: it answers 404, and the client starts a new one.
    drop(server);
    let (_server, _) = http_server_on(port, &events).await;
    let (outcome, who) = call(&tb, "mcp__again__who", None).await;
    assert!(who.starts_with("kimi-tui "), "{who} {outcome:?}");
    hub.close(Duration::from_secs(5)).await;
}

/// `exec` as the outside check drives it: the model calls the Python server's image tool, its
/// question tool and the tool that logs a secret and dies. No request the model's server gets
/// holds the image's base64 or the secret; the question is cancelled (exec cannot ask) and stderr
/// says which server asked what.
#[tokio::test]
async fn exec_keeps_secrets_and_bytes_from_the_model_and_cancels_questions_out_loud() {
    sdk();
    let calls = ["mcp__py__picture", "mcp__py__ask", "mcp__py__crash"]
        .into_iter()
        .map(|name| kimi_mock::ScriptedCall {
            id: None,
            name: name.to_owned(),
            arguments: "{}".to_owned(),
        })
        .collect();
    let server = kimi_mock::MockServer::start(
        kimi_mock::MockOptions {
            tool_calls: calls,
            ..kimi_mock::MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.t]\nmode = \"chat\"\nbase_url = \"{}\"\n\n[[mcp_servers]]\nname = \"py\"\ncommand = [\"python3\", \"{}\", \"stdio\"]\n",
            server.base_url(),
            script()
        ),
    )
    .expect("config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args(["exec", "--yes", "--config"])
        .arg(&cfg)
        .arg("Use the tools.");
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("runs"))
        .await
        .expect("join");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let requests = server.requests();
    server.shutdown().await;
    assert!(
        stderr.contains("MCP server `py` asked: \"What is your name?\" (fields: name); answered cancel: exec cannot ask the user"),
        "{stderr}"
    );
    assert_eq!(requests.len(), 2, "{stderr}");
    let sent = requests[1].to_string();
    assert!(
        !sent.contains("SECRET_IN_STDERR"),
        "the stderr secret reached the model"
    );
    assert!(
        sent.contains("[image: image/png, 3000 bytes; not sent to the model]"),
        "{sent}"
    );
    assert!(
        sent.contains("cancel:"),
        "the question's answer went back: {sent}"
    );
    let longest_base64 = sent
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '/' || c == '='))
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(
        longest_base64 < 200,
        "no image bytes in the request ({longest_base64} chars)"
    );
}

#[tokio::test]
async fn a_server_that_prints_non_json_at_startup_is_quoted() {
    let mut config = McpServerConfig::stdio(
        "chatty",
        vec![
            "python3".to_owned(),
            "-c".to_owned(),
            "import sys, time; print('Starting the server on stdout...'); sys.stdout.flush(); time.sleep(30)".to_owned(),
        ],
    );
    config.startup_timeout_secs = 2;
    let hub = McpHub::new(vec![config], Vec::<String>::new());
    hub.start();
    hub.wait_started(Duration::from_secs(10)).await;
    let ServerStatus::Failed(why) = &hub.reports()[0].status else {
        panic!("it cannot start: {:?}", hub.reports()[0].status);
    };
    assert!(
        why.contains("the server printed non-JSON on stdout at startup")
            && why.contains("\"Starting the server on stdout...\""),
        "{why}"
    );
    hub.close(Duration::from_secs(1)).await;
}
