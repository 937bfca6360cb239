//! Servers that misbehave on purpose, through the mock server's fault flags, against the real
//! binary (`exec`, `doctor`) and the real backend: a BOM, a 16 MB line, an endless event, a
//! 200 MB error page, a proxy's login page, a body trickled a byte a second, a redirect to
//! another server, a password in base_url, a key with a newline in it. Nothing panics, hangs
//! or grows without bound, and every failure is one clear line that leaks no secret.
//!
//! A test binary of its own, not a module of `all.rs`: it reads the peak RSS of the children it
//! runs, which on Linux starts from the parent's at fork time, so the parent must not be the
//! one process that also runs every other suite (and their mock servers).

// A test binary: a failed unwrap in a helper is a failed test, as in the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kimi_protocol::{Mode, StreamEvent};

use kimi_client::{Backend, Endpoint};
use kimi_core::session::{Session, SessionView};
use kimi_mock::{MockOptions, MockServer};
use kimi_protocol::Message;
use tokio_util::sync::CancellationToken;

const KEY_VAR: &str = "KIMI_HOSTILE_TEST_KEY";

fn config(dir: &Path, base_url: &str, mode: &str, extra: &str) -> PathBuf {
    let path = dir.join("config.toml");
    let text = format!(
        "default_profile = \"test\"\n\n[profiles.test]\nmode = \"{mode}\"\nbase_url = \"{base_url}\"\nmax_tokens = 2048\n{extra}\n"
    );
    std::fs::write(&path, text).expect("write config");
    path
}

/// What a child run left behind.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
    elapsed: Duration,
    /// Peak resident set of the child, in KiB (Linux `ru_maxrss`).
    max_rss_kib: i64,
}

/// Run the binary with `args` and `env`, killed after `limit` (a hang is a failure, not a
/// stuck test run). Its peak memory comes from `wait4` on its own pid.
// Reaped by `wait4` (which `Child::wait` cannot do: it drops the rusage).
#[allow(clippy::zombie_processes)]
fn run_bin(args: &[&str], env: &[(&str, &str)], limit: Duration) -> Run {
    let dir = tempfile::tempdir().expect("tmp");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kimi-tui"));
    cmd.args(args)
        .env_remove(KEY_VAR)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::from(
            std::fs::File::create(dir.path().join("out")).expect("out"),
        ))
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("err")).expect("err"),
        ));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawns");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped; the pointers are valid locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed");
        if started.elapsed() > limit {
            let _ = child.kill();
            // SAFETY: as above; this reaps the killed child.
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            let err = std::fs::read_to_string(dir.path().join("err")).unwrap_or_default();
            panic!("{args:?} still running after {limit:?} (killed); stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let read = |name: &str| {
        String::from_utf8_lossy(&std::fs::read(dir.path().join(name)).unwrap_or_default())
            .into_owned()
    };
    Run {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        out: read("out"),
        err: read("err"),
        elapsed: started.elapsed(),
        max_rss_kib: usage.ru_maxrss,
    }
}

/// `kimi-tui exec PROMPT` against `base_url`, off the async runtime that serves the mock.
async fn exec_at(
    base_url: &str,
    mode: &str,
    extra: &str,
    env: Vec<(&'static str, String)>,
    limit: Duration,
) -> Run {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), base_url, mode, extra);
    tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let cfg = cfg.display().to_string();
        run_bin(
            &["exec", "--config", &cfg, "Tell me about Rust."],
            &env,
            limit,
        )
    })
    .await
    .expect("join")
}

async fn exec(opts: MockOptions, mode: &str, extra: &str, limit: Duration) -> Run {
    let server = MockServer::start(opts, 0).await.expect("mock");
    let run = exec_at(&server.base_url(), mode, extra, Vec::new(), limit).await;
    server.shutdown().await;
    run
}

fn one_error_line(run: &Run) -> &str {
    let lines: Vec<&str> = run.err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one error line, got:\n{}", run.err);
    lines[0]
}

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_bom_before_the_first_event_does_not_panic() {
    for mode in ["raw", "chat"] {
        let opts = MockOptions {
            bom: true,
            chunk_bytes: Some(2),
            ..MockOptions::default()
        };
        let run = exec(opts, mode, "", MINUTE).await;
        assert_eq!(run.code, Some(0), "{mode}: {}", run.err);
        assert!(run.out.contains("```rust"), "{mode}: {}", run.out);
        assert!(!run.err.contains("panicked"), "{mode}: {}", run.err);
    }
}

#[tokio::test]
async fn a_16_mb_data_line_is_read_in_linear_time() {
    const N: usize = 16 << 20;
    for mode in ["raw", "chat"] {
        let opts = MockOptions {
            long_line_bytes: Some(N),
            ..MockOptions::default()
        };
        // eventsource-stream 0.2.3 rescanned the line per chunk: about a minute of CPU in a
        // release build for this one line.
        let run = exec(opts, mode, "idle_timeout_secs = 30", MINUTE).await;
        assert_eq!(run.code, Some(0), "{mode}: {}", run.err);
        let xs = run.out.bytes().filter(|&b| b == b'x').count();
        assert!(xs >= N, "{mode}: the whole line arrived ({xs} bytes of it)");
        assert!(run.out.contains("```rust"), "{mode}: and the rest after it");
        assert!(
            run.elapsed < Duration::from_secs(30),
            "{mode}: took {:?}",
            run.elapsed
        );
    }
}

#[tokio::test]
async fn an_event_past_32_mib_is_one_clear_error() {
    let opts = MockOptions {
        long_line_bytes: Some((32 << 20) + 1024),
        ..MockOptions::default()
    };
    let run = exec(opts, "chat", "", MINUTE).await;
    assert_eq!(run.code, Some(1), "{}", run.err);
    let line = one_error_line(&run);
    assert!(
        line.contains("one event is larger than 32 MiB"),
        "the limit is named: {line}"
    );
    assert!(line.contains("unreadable event stream"), "{line}");
    assert!(
        run.max_rss_kib < 400 * 1024,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
}

#[tokio::test]
async fn a_200_mb_error_body_is_read_only_to_64_kib() {
    let opts = MockOptions {
        fail_status: Some(500),
        error_body_bytes: Some(200 << 20),
        ..MockOptions::default()
    };
    // Not retried: the one error line is what this test reads.
    let run = exec(opts, "raw", "retries = 0", MINUTE).await;
    assert_eq!(run.code, Some(1), "{}", run.err);
    let line = one_error_line(&run);
    assert!(line.contains("HTTP 500"), "{line}");
    assert!(line.contains("mock failure: HTTP 500"), "{line}");
    // The body cut at 64 KiB is not JSON any more: its message, not its raw start.
    assert!(
        !line.contains("{\"error\"") && !line.contains("padding"),
        "{line}"
    );
    assert!(line.len() < 600, "a short line: {line}");
    // Reading it whole took 409 MB.
    assert!(
        run.max_rss_kib < 80 * 1024,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
}

#[tokio::test]
async fn a_proxy_login_page_is_named_as_such() {
    for mode in ["raw", "chat"] {
        let opts = MockOptions {
            content_type: Some("text/html; charset=utf-8".into()),
            ..MockOptions::default()
        };
        let run = exec(opts, mode, "", MINUTE).await;
        assert_eq!(run.code, Some(1), "{mode}: {}", run.err);
        let line = one_error_line(&run);
        assert!(
            line.contains(
                "the server answered text/html; charset=utf-8, not an event stream: <!DOCTYPE html> <html><head><title>Sign in</title>"
            ),
            "{mode}: {line}"
        );
        assert!(!line.contains("dropped"), "{mode}: {line}");
    }
}

#[tokio::test]
async fn event_streams_are_accepted_with_or_without_parameters_or_type() {
    for ct in ["text/event-stream", "Text/Event-Stream;charset=UTF-8", ""] {
        let opts = MockOptions {
            content_type: Some(ct.into()),
            ..MockOptions::default()
        };
        let run = exec(opts, "chat", "", MINUTE).await;
        assert_eq!(run.code, Some(0), "{ct:?}: {}", run.err);
        assert!(run.out.contains("```rust"), "{ct:?}");
    }
    // A JSON answer where a stream was asked for is not taken as one.
    let opts = MockOptions {
        content_type: Some("application/json".into()),
        ..MockOptions::default()
    };
    let run = exec(opts, "raw", "", MINUTE).await;
    assert!(
        one_error_line(&run).contains("the server answered application/json, not an event stream"),
        "{}",
        run.err
    );
}

#[tokio::test]
async fn doctor_gives_up_on_a_trickled_model_list() {
    let server = MockServer::start(
        MockOptions {
            slow_body_bps: Some(1),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(
        dir.path(),
        &server.base_url(),
        "raw",
        "idle_timeout_secs = 2",
    );
    let run = tokio::task::spawn_blocking(move || {
        run_bin(
            &["doctor", "--config", &cfg.display().to_string()],
            &[],
            Duration::from_secs(30),
        )
    })
    .await
    .expect("join");
    server.shutdown().await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.out, run.err);
    let server_line = run
        .out
        .lines()
        .find(|l| l.starts_with("✗ server"))
        .unwrap_or_else(|| panic!("no server check in:\n{}", run.out));
    assert!(
        server_line.contains("no answer from") && server_line.contains("reading the model list"),
        "{server_line}"
    );
    assert!(run.elapsed < Duration::from_secs(15), "{:?}", run.elapsed);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_nothing_reaches_it() {
    let other = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    for status in [307, 308, 302] {
        let first = MockServer::start(
            MockOptions {
                redirect_to: Some(other.base_url()),
                redirect_status: status,
                ..MockOptions::default()
            },
            0,
        )
        .await
        .expect("mock");
        let env = vec![(KEY_VAR, "sk-redirect-secret".to_owned())];
        let extra = format!("api_key_env = \"{KEY_VAR}\"");
        for mode in ["raw", "chat"] {
            let run = exec_at(&first.base_url(), mode, &extra, env.clone(), MINUTE).await;
            assert_eq!(run.code, Some(1), "{status} {mode}: {}", run.err);
            let line = one_error_line(&run);
            let want = format!(
                "the server at http://{} redirected the request to http://{}, another origin: refused",
                first.addr(),
                other.addr()
            );
            assert!(line.contains(&want), "{status} {mode}: {line}");
            assert!(!line.contains("sk-redirect-secret"));
        }
        first.shutdown().await;
    }
    assert!(
        other.requests().is_empty(),
        "the other server got a conversation: {:?}",
        other.requests()
    );
    other.shutdown().await;
}

#[tokio::test]
async fn a_password_in_base_url_is_never_shown_or_saved() {
    let server = MockServer::start(
        MockOptions {
            fail_status: Some(503),
            ..MockOptions::default()
        },
        0,
    )
    .await
    .expect("mock");
    let with_password = format!("http://alice:s3cret-pw@{}/v1", server.addr());
    let shown = format!("http://{}/v1", server.addr());

    // exec's error line.
    // Not retried: the one error line is what this test reads.
    let run = exec_at(&with_password, "raw", "retries = 0", Vec::new(), MINUTE).await;
    let line = one_error_line(&run);
    assert!(line.contains(&format!("{shown}/completions")), "{line}");
    assert!(
        !line.contains("s3cret") && !line.contains("alice"),
        "{line}"
    );

    // doctor's report.
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = config(dir.path(), &with_password, "raw", "");
    let doc = tokio::task::spawn_blocking(move || {
        run_bin(
            &["doctor", "--config", &cfg.display().to_string()],
            &[],
            MINUTE,
        )
    })
    .await
    .expect("join");
    assert!(doc.out.contains(&shown), "{}", doc.out);
    assert!(
        !doc.out.contains("s3cret") && !doc.err.contains("s3cret"),
        "{}{}",
        doc.out,
        doc.err
    );

    // The inspector's trace, the request announcement, the error and the saved session.
    let ep = Endpoint::new(Mode::Chat, &with_password, "m");
    assert_eq!(ep.base_url, shown);
    assert!(!format!("{ep:?}").contains("s3cret"));
    let session = Session::for_endpoint("p", &ep);
    assert!(
        !serde_json::to_string(&session)
            .expect("json")
            .contains("s3cret")
    );
    let mut older = Session::new("p", Mode::Raw, "m", &with_password);
    assert_eq!(older.base_url, shown);
    // A session saved before the fix, loaded and saved again (as the store writes it).
    older.base_url = with_password.clone();
    assert!(
        !serde_json::to_string(&SessionView::of(&older))
            .expect("json")
            .contains("s3cret")
    );
    let backend = Backend::new(ep).expect("client");
    let mut announced = Vec::new();
    let mut trace = kimi_protocol::Trace::default();
    let (events, result) = backend
        .stream_turn(&[Message::user("hi")], &[], &CancellationToken::new())
        .events_and_result()
        .await;
    for e in events {
        trace.record(&e);
        if let StreamEvent::Request(r) = e {
            announced.push(r.url);
        }
    }
    assert_eq!(announced, vec![format!("{shown}/chat/completions")]);
    assert_eq!(trace.url, format!("{shown}/chat/completions"));
    assert_eq!(trace.status, Some(503));
    let error = result.error.expect("503").to_string();
    assert!(
        error.contains("HTTP 503") && !error.contains("s3cret"),
        "{error}"
    );
    assert!(
        !serde_json::to_string(&trace)
            .expect("json")
            .contains("s3cret")
    );
    // The userinfo is still what authenticates the request (reqwest sends it as Basic auth).
    assert_eq!(
        server.requests().len(),
        2 + 1,
        "exec, doctor's probe, the turn"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_newline_in_the_api_key_names_the_variable_never_the_value() {
    let server = MockServer::start(MockOptions::default(), 0)
        .await
        .expect("mock");
    let extra = format!("api_key_env = \"{KEY_VAR}\"");
    let env = vec![(KEY_VAR, "sk-abcdef\nghijkl".to_owned())];
    let run = exec_at(&server.base_url(), "chat", &extra, env, MINUTE).await;
    assert_eq!(run.code, Some(1), "{}", run.err);
    let line = one_error_line(&run);
    assert!(
        line.contains(&format!(
            "{KEY_VAR} contains a newline (at byte 9); an API key is visible ASCII only"
        )),
        "{line}"
    );
    assert!(!line.contains("sk-abc") && !line.contains("ghij"), "{line}");
    assert!(server.requests().is_empty(), "nothing was sent");
    server.shutdown().await;
}

#[tokio::test]
async fn same_origin_redirects_are_followed_but_not_forever() {
    // A server redirecting to itself: followed (same origin), ten times, then one error.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}/v1");
    let server = MockServer::start(
        MockOptions {
            redirect_to: Some(base.clone()),
            redirect_status: 308,
            ..MockOptions::default()
        },
        port,
    )
    .await
    .expect("mock");
    let run = exec_at(&base, "chat", "", Vec::new(), MINUTE).await;
    server.shutdown().await;
    let line = one_error_line(&run);
    assert!(line.contains("more than 10 redirects"), "{line}");
    assert!(!line.contains("another origin"), "{line}");
}
