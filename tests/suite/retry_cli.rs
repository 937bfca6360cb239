//! Retries through `exec`: a transient failure is retried and each retry is one stderr line;
//! the answer is the retry's alone.

use kimi_mock::MockOptions;

use super::exec_cli::exec;

#[tokio::test]
async fn exec_retries_a_503_says_so_on_stderr_and_prints_one_answer() {
    let opts = MockOptions {
        fail_status: Some(503),
        fail_times: Some(2),
        retry_after: Some("0".into()),
        ..MockOptions::default()
    };
    let o = exec(opts, "chat", "ask", &["Tell me about Rust."]).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let retries: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(retries.len(), 2, "{err}");
    assert!(
        retries[0].starts_with("kimi-tui: HTTP 503 Service Unavailable from ")
            && retries[0].ends_with("; retrying in 0.0 s (attempt 2/4)"),
        "{}",
        retries[0]
    );
    assert!(retries[1].ends_with("(attempt 3/4)"), "{}", retries[1]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Rust"), "{out}");
}
