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
