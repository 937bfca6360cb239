//! `kimi-tui mock-server`: the scripted server as its own process, serving until SIGTERM.
//! (The server itself is tested in crates/mock.)

use std::sync::Once;
use std::time::{Duration, Instant};

fn client() -> reqwest::Client {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::new()
}

#[test]
fn mock_server_subcommand_prints_its_address_and_stops_on_sigterm() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let mut child = Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(["mock-server", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("a line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{url}"
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let status = rt.block_on(async {
        client()
            .get(format!("{url}/models"))
            .send()
            .await
            .expect("sent")
            .status()
    });
    assert_eq!(status, 200);

    // SIGTERM to the child this test started, by its pid.
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success(), "{st:?}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mock-server did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn server_bug_list_names_every_scenario_with_its_upstream_report() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(["mock-server", "--server-bug", "list"])
        .output()
        .expect("binary runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for b in kimi_mock::server_bugs::SERVER_BUGS {
        assert!(text.contains(b.name), "{} missing:\n{text}", b.name);
        assert!(text.contains(b.upstream), "{text}");
    }
    assert!(text.contains("vllm-project/vllm#54701"), "{text}");
    assert!(text.contains("MoonshotAI/Kimi-K2#128"), "{text}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
        .args(["mock-server", "--server-bug", "nope"])
        .output()
        .expect("binary runs");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("unknown server bug \"nope\""), "{err}");
    assert!(err.contains("empty-tool-call-deltas"), "{err}");
}

#[test]
fn a_server_bug_is_applied_on_top_of_the_flags() {
    use clap::Parser as _;
    let cli = kimi_tui::cli::Cli::try_parse_from([
        "kimi-tui",
        "mock-server",
        "--server-bug",
        "k3-think-close-skipped",
        "--delay-ms",
        "3",
    ])
    .expect("parses");
    let Some(kimi_tui::cli::Command::MockServer(args)) = cli.command else {
        panic!("not mock-server");
    };
    let opts = kimi_tui::mock_cli::options(&args);
    assert_eq!(opts.k3_shape.as_deref(), Some("think-close-skipped-tools"));
    assert_eq!(opts.delay_ms, 3, "the other flags stay");
    assert_eq!(
        kimi_protocol::Template::for_model(&opts.model),
        kimi_protocol::Template::K3
    );
    let plain = kimi_tui::mock_cli::options(&kimi_tui::cli::MockArgs::default());
    assert!(plain.k3_shape.is_none() && !plain.repeat_calls);
}
