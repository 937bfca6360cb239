//! The tool runner with real child processes: stdin and environment, exit codes and stderr,
//! timeouts and cancellation that kill the whole process group, capped output, start failures,
//! and arguments that must stay data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kimi_core::tools::{ExitKind, ToolOutcome, ToolSpec, Toolbox, run};
use tokio_util::sync::CancellationToken;

fn script(name: &str) -> String {
    kimi_test_support::tool_script(name)
}

fn spec(name: &str, command: &[&str]) -> ToolSpec {
    ToolSpec::new(name, command.iter().map(|s| s.to_string()).collect())
}

async fn run_now(spec: &ToolSpec, arguments: &str) -> ToolOutcome {
    run(
        spec,
        "functions.test:0",
        arguments,
        CancellationToken::new(),
    )
    .await
}

/// Whether `pid` is a live process: `kill(pid, 0)` succeeds and, where /proc shows it, the
/// process is not a zombie waiting for its (new) parent to reap it.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ..."; comm may hold spaces, so read the state after the last ')'.
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next()),
            Some(Some('Z' | 'X'))
        ),
        Err(_) => !Path::new("/proc/self").exists(),
    }
}

/// Wait until `pid` is gone, up to `limit`.
async fn gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !alive(pid)
}

fn read_pid(file: &Path) -> i32 {
    let text = std::fs::read_to_string(file).expect("the script wrote its grandchild's pid");
    text.trim().parse().expect("a pid")
}

fn with_pidfile(mut spec: ToolSpec, pidfile: &Path) -> ToolSpec {
    spec.env
        .insert("PIDFILE".to_owned(), pidfile.display().to_string());
    spec
}

#[tokio::test]
async fn success_passes_arguments_on_stdin_and_identity_in_env() {
    let mut s = spec("echo_env", &[&script("echo_env.sh")]);
    s.env = BTreeMap::from([
        ("EXTRA".to_owned(), "from config".to_owned()),
        ("KIMI_TOOL_NAME".to_owned(), "spoofed".to_owned()),
    ]);
    let args = r#"{"city": "Beijing", "note": "ünïcode"}"#;
    let out = run(&s, "functions.echo_env:7", args, CancellationToken::new()).await;
    assert_eq!(out.exit, ExitKind::Exited(0), "{out:?}");
    assert!(out.success());
    let pwd = std::env::current_dir().expect("cwd");
    assert_eq!(
        out.stdout,
        format!(
            "name=echo_env\nid=functions.echo_env:7\nextra=from config\npwd={}\nargc=0\nstdin={args}\n",
            pwd.display()
        )
    );
    assert!(!out.truncated);
    assert_eq!(out.stdout_total_bytes, out.stdout.len() as u64);
    assert_eq!(out.to_model_content(), out.stdout);
}

#[tokio::test]
async fn weather_tool_answers_for_the_city() {
    let s = spec("get_weather", &[&script("weather.sh")]);
    let out = run_now(&s, r#"{"city": "Beijing"}"#).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(
        out.stdout,
        "{\"city\": \"Beijing\", \"weather\": \"Sunny\", \"temp_c\": 25}\n"
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON output");
    assert_eq!(v["temp_c"], 25);
}

#[tokio::test]
async fn relative_command_resolves_against_cwd_then_current_dir() {
    // With cwd: "./echo_env.sh" is found in the tools dir, and the child runs there.
    let mut s = spec("echo_env", &["./echo_env.sh"]);
    s.cwd = Some(kimi_test_support::tools_dir());
    let out = run_now(&s, "{}").await;
    assert!(out.success(), "{out:?}");
    let expected_pwd = format!("pwd={}\n", kimi_test_support::tools_dir().display());
    assert!(out.stdout.contains(&expected_pwd), "{}", out.stdout);

    // Without cwd: relative to this process's current directory (the crate root under cargo).
    let s = spec("echo_env", &["../test-support/tools/echo_env.sh"]);
    let out = run_now(&s, "{}").await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("name=echo_env\n"), "{}", out.stdout);
}

#[tokio::test]
async fn bare_program_names_use_path_and_argv_is_exact() {
    let s = spec("printf", &["printf", "[%s]", "a b", "$HOME", "*"]);
    let out = run_now(&s, "{}").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout, "[a b][$HOME][*]");
}

#[tokio::test]
async fn nonzero_exit_reports_code_and_stderr_tail() {
    let s = spec("fail", &[&script("fail.sh")]);
    let out = run_now(&s, "{}").await;
    assert_eq!(out.exit, ExitKind::Exited(3));
    assert!(!out.success());
    assert_eq!(out.stdout, "partial result\n");
    assert!(
        out.stderr_tail
            .ends_with("error: the weather service is unavailable\n"),
        "{:?}",
        out.stderr_tail
    );
    assert!(out.stderr_tail.len() <= 2048, "{}", out.stderr_tail.len());
    assert!(
        out.stderr_tail.len() > 1500,
        "the tail is kept, not just the last line"
    );
    assert!(!out.stderr_tail.contains("noise line 0\n"), "only the tail");
    let content = out.to_model_content();
    assert!(
        content.starts_with("partial result\n[exit code 3]\nstderr: "),
        "{content}"
    );
    assert!(
        content.ends_with("error: the weather service is unavailable"),
        "{content}"
    );
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("grandchild.pid");
    let mut s = with_pidfile(spec("slow", &[&script("slow.sh")]), &pidfile);
    s.timeout_secs = 1;
    let start = Instant::now();
    let out = run_now(&s, "{}").await;
    let took = start.elapsed();
    assert_eq!(out.exit, ExitKind::TimedOut, "{out:?}");
    assert!(took >= Duration::from_secs(1), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(out.stdout, "started\n", "output before the kill is kept");
    assert_eq!(
        out.to_model_content(),
        "started\n[timed out after 1 s; the process group was killed]"
    );
    let grandchild = read_pid(&pidfile);
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "grandchild {grandchild} survived the timeout"
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("grandchild.pid");
    let s = with_pidfile(spec("slow", &[&script("slow.sh")]), &pidfile);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watch = pidfile.clone();
    tokio::spawn(async move {
        // Cancel once the script is under way (its grandchild exists).
        for _ in 0..200 {
            if watch.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        trigger.cancel();
    });
    let start = Instant::now();
    let out = run(&s, "functions.slow:0", "{}", cancel).await;
    assert_eq!(out.exit, ExitKind::Cancelled, "{out:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(out.to_model_content().ends_with("[cancelled by the user]"));
    let grandchild = read_pid(&pidfile);
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "grandchild {grandchild} survived the cancel"
    );
}

#[tokio::test]
async fn cancelled_before_start_runs_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let s = spec(
        "touch",
        &["touch", marker.to_str().expect("utf-8 temp path")],
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = run(&s, "id", "{}", cancel).await;
    assert_eq!(out.exit, ExitKind::Cancelled);
    assert!(!marker.exists(), "a cancelled call must not start");
}

#[tokio::test]
async fn dropping_the_run_kills_the_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("grandchild.pid");
    let s = with_pidfile(spec("slow", &[&script("slow.sh")]), &pidfile);
    let watch = pidfile.clone();
    let result = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::select! {
            _ = run_now(&s, "{}") => panic!("slow.sh cannot finish"),
            _ = async {
                while !watch.exists() {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            } => {}
        }
    })
    .await;
    assert!(result.is_ok(), "slow.sh never wrote its pid");
    let grandchild = read_pid(&pidfile);
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "grandchild {grandchild} survived the dropped run"
    );
}

#[tokio::test]
async fn lingering_grandchild_does_not_hold_up_the_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("grandchild.pid");
    let s = with_pidfile(spec("linger", &[&script("linger.sh")]), &pidfile);
    let start = Instant::now();
    let out = run_now(&s, "{}").await;
    assert_eq!(out.exit, ExitKind::Exited(0), "{out:?}");
    assert_eq!(out.stdout, "done\n");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let grandchild = read_pid(&pidfile);
    assert!(
        gone_within(grandchild, Duration::from_secs(5)).await,
        "grandchild {grandchild} holding stdout was left running"
    );
}

#[tokio::test]
async fn flood_is_capped_and_counted() {
    let s = spec("flood", &[&script("flood.sh")]);
    let out = run_now(&s, "{}").await;
    assert_eq!(out.exit, ExitKind::Exited(0), "{out:?}");
    assert!(out.truncated);
    assert_eq!(out.stdout.len(), 65536);
    assert_eq!(out.stdout_total_bytes, 1_048_576);
    assert!(
        out.stdout
            .starts_with("0123456789abcdef\n0123456789abcdef\n")
    );
    assert!(
        out.to_model_content()
            .ends_with("\n[output truncated: showed 65536 of 1048576 bytes]")
    );

    let mut small = s.clone();
    small.max_output_bytes = Some(100);
    let out = run_now(&small, "{}").await;
    assert_eq!(out.stdout.len(), 100);
    assert_eq!(out.stdout_total_bytes, 1_048_576);
    assert!(out.truncated);
}

#[tokio::test]
async fn stderr_flood_does_not_block() {
    let s = spec(
        "noisy",
        &[
            "sh",
            "-c",
            "yes 'error line' | head -n 300000 >&2; echo finished",
        ],
    );
    let out = run_now(&s, "{}").await;
    assert_eq!(out.exit, ExitKind::Exited(0), "{out:?}");
    assert_eq!(out.stdout, "finished\n");
    assert!(out.stderr_tail.len() <= 2048);
    assert!(
        out.stderr_tail.ends_with("error line\n"),
        "{:?}",
        out.stderr_tail
    );
}

#[tokio::test]
async fn missing_program_fails_to_start_clearly() {
    let s = spec("nope", &["./no/such/tool.sh", "x"]);
    let out = run_now(&s, "{}").await;
    assert_eq!(
        out.exit,
        ExitKind::FailedToStart(
            "could not start `./no/such/tool.sh`: No such file or directory".to_owned()
        )
    );
    assert!(!out.success());
    assert_eq!(
        out.to_model_content(),
        "[could not start `./no/such/tool.sh`: No such file or directory]"
    );

    let s = spec("nope", &["kimi-tui-no-such-program-on-path"]);
    let out = run_now(&s, "{}").await;
    assert!(
        matches!(&out.exit, ExitKind::FailedToStart(m) if m.contains("No such file or directory")),
        "{out:?}"
    );
}

#[tokio::test]
async fn bad_cwd_and_non_executable_files_fail_to_start_clearly() {
    let mut s = spec("echo_env", &[&script("echo_env.sh")]);
    s.cwd = Some(PathBuf::from("/no/such/dir"));
    let out = run_now(&s, "{}").await;
    assert!(
        matches!(&out.exit, ExitKind::FailedToStart(m)
            if m.contains("working directory `/no/such/dir` does not exist")),
        "{out:?}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let orphan = dir.path().join("orphan.sh");
    std::fs::write(&orphan, "#!/no/such/interpreter\necho hi\n").expect("write script");
    std::fs::set_permissions(&orphan, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let s = spec("orphan", &[orphan.to_str().expect("utf-8 temp path")]);
    let out = run_now(&s, "{}").await;
    assert!(
        matches!(&out.exit, ExitKind::FailedToStart(m)
            if m.contains("No such file or directory") && m.contains("#! line")),
        "{out:?}"
    );

    let plain = dir.path().join("plain.sh");
    std::fs::write(&plain, "#!/bin/sh\necho hi\n").expect("write script");
    let s = spec("plain", &[plain.to_str().expect("utf-8 temp path")]);
    let out = run_now(&s, "{}").await;
    assert!(
        matches!(&out.exit, ExitKind::FailedToStart(m)
            if m.contains("Permission denied") && m.contains("chmod +x")),
        "{out:?}"
    );
}

#[tokio::test]
async fn child_that_never_reads_stdin_does_not_deadlock() {
    let s = spec("no_stdin", &[&script("no_stdin.sh")]);
    // Far more than a pipe buffer holds, so the write cannot complete.
    let big = format!("{{\"data\": \"{}\"}}", "x".repeat(4 * 1024 * 1024));
    let out = tokio::time::timeout(Duration::from_secs(20), run_now(&s, &big))
        .await
        .expect("run finishes although nobody reads stdin");
    assert_eq!(out.exit, ExitKind::Exited(0), "{out:?}");
    assert_eq!(out.stdout, "ok\n");
}

#[tokio::test]
async fn arguments_are_data_never_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("pwned");
    let keep = dir.path().join("keep");
    std::fs::write(&keep, "precious").expect("write keep");
    let city = format!(
        "$(touch {m}) `touch {m}`; rm -rf {k} && touch {m} | touch {m}",
        m = marker.display(),
        k = keep.display()
    );
    let args = serde_json::json!({ "city": city }).to_string();
    for tool in ["weather.sh", "echo_env.sh"] {
        let s = spec(tool, &[&script(tool)]);
        let out = run_now(&s, &args).await;
        assert!(out.success(), "{tool}: {out:?}");
        assert!(
            out.stdout.contains(&city),
            "{tool} got the text verbatim: {}",
            out.stdout
        );
    }
    let demo = kimi_test_support::demo_tools_dir()
        .join("weather.sh")
        .display()
        .to_string();
    let out = run_now(&spec("get_weather", &[&demo]), &args).await;
    assert!(out.success(), "{out:?}");
    assert!(!marker.exists(), "an argument was executed");
    assert!(keep.exists(), "an argument was executed");
}

#[tokio::test]
async fn toolbox_validation_gates_the_run() {
    let spec: ToolSpec = toml::from_str(&format!(
        r#"
name = "get_weather"
command = ["{}"]
parameters = {{ type = "object", required = ["city"], properties = {{ city = {{ type = "string" }} }} }}
"#,
        script("weather.sh")
    ))
    .expect("valid spec");
    let toolbox = Toolbox::new(vec![spec]).expect("valid toolbox");
    let problem = toolbox
        .check_call("get_weather", r#"{"city": 42}"#)
        .expect_err("wrong type");
    assert_eq!(
        problem.to_string(),
        r#"the arguments do not match the tool's parameters: at /city: 42 is not of type "string""#
    );
    let args = r#"{"city": "Paris"}"#;
    toolbox.check_call("get_weather", args).expect("valid call");
    let out = run_now(toolbox.get("get_weather").expect("declared"), args).await;
    assert!(out.stdout.contains("\"city\": \"Paris\""), "{out:?}");
}

mod demo_tools {
    use super::*;

    fn demo(name: &str) -> ToolSpec {
        let path = kimi_test_support::demo_tools_dir().join(name);
        spec(name, &[path.to_str().expect("utf-8 path")])
    }

    #[tokio::test]
    async fn weather_is_deterministic_per_city() {
        let out = run_now(&demo("weather.sh"), r#"{"city": "Paris"}"#).await;
        assert!(out.success(), "{out:?}");
        let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        assert_eq!(v["city"], "Paris");
        assert_eq!(v["weather"], "Partly cloudy");
        assert_eq!(v["temp_c"], 18);
        let unknown = run_now(&demo("weather.sh"), r#"{"city": "Atlantis \"Deep\""}"#).await;
        let v: serde_json::Value =
            serde_json::from_str(&unknown.stdout).expect("JSON even with escapes");
        assert_eq!(v["city"], "Atlantis \"Deep\"");
        assert_eq!(v["weather"], "Sunny");
        let missing = run_now(&demo("weather.sh"), "{}").await;
        assert_eq!(missing.exit, ExitKind::Exited(2));
        assert!(missing.stderr_tail.contains("missing \"city\""));
    }

    #[tokio::test]
    async fn time_prints_iso_utc() {
        let out = run_now(&demo("time.sh"), "{}").await;
        assert!(out.success(), "{out:?}");
        let first = out.stdout.lines().next().expect("a line");
        let stamp = first.strip_prefix("utc: ").expect("utc line");
        assert_eq!(stamp.len(), "2025-01-01T00:00:00Z".len(), "{stamp}");
        assert!(
            stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T',
            "{stamp}"
        );
        assert!(out.stdout.contains("\nlocal: "), "{}", out.stdout);
    }

    #[tokio::test]
    async fn list_dir_lists_the_given_path_as_data() {
        let dir = tempfile::tempdir().expect("tempdir");
        let odd = dir.path().join("$(touch pwned) \"quoted\"");
        std::fs::create_dir(&odd).expect("mkdir");
        std::fs::write(odd.join("inside.txt"), "x").expect("write");
        let args = serde_json::json!({ "path": odd.display().to_string() }).to_string();
        let mut s = demo("list_dir.sh");
        s.cwd = Some(dir.path().to_path_buf());
        let out = run_now(&s, &args).await;
        assert!(out.success(), "{out:?}");
        assert!(out.stdout.contains("inside.txt"), "{}", out.stdout);
        assert!(!dir.path().join("pwned").exists());

        let out = run_now(&s, "{}").await;
        assert!(out.success(), "{out:?}");
        assert!(
            out.stdout.contains("$(touch pwned) \"quoted\""),
            "defaults to cwd: {}",
            out.stdout
        );
    }
}

#[tokio::test]
async fn hidden_variables_never_reach_the_tool() {
    // The program hides the profile's API key variable; HOME stands in for it here.
    let mut s = spec("env", &["/usr/bin/env"]);
    s.env.insert("KIMI_VISIBLE".into(), "yes".into());
    s.env.insert("KIMI_SECRET_LIKE".into(), "sk-123".into());
    s.hidden_env = vec!["HOME".into(), "KIMI_SECRET_LIKE".into()];
    let out = run(&s, "functions.env:0", "{}", CancellationToken::new()).await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("KIMI_VISIBLE=yes"), "{}", out.stdout);
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("HOME=")),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("sk-123"), "{}", out.stdout);
}
