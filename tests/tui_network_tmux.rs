//! The TUI in tmux against hostile servers (the mock's fault flags): a BOM before the first
//! event used to panic the turn task, leaving the screen restored under a running app stuck in
//! "streaming"; a proxy's login page was "dropped mid-stream after 0 bytes".

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kimi_tui::mock::{MockOptions, MockServer};

struct Tmux {
    session: String,
}

/// tmux on a server of its own (`-L`, named after the session) started without any config
/// (`-f /dev/null`): a user's tmux setup or running sessions cannot change what a test sees.
fn tmux(socket: &str) -> Command {
    let mut c = Command::new("tmux");
    c.args(["-L", socket, "-f", "/dev/null"]);
    c
}

impl Tmux {
    fn start(name: &str, cmd: &str, home: &Path) -> Tmux {
        let session = format!("kimi-tui-net-{name}-{}", std::process::id());
        let status = tmux(&session)
            .args(["new-session", "-d", "-s", &session, "-x", "120", "-y", "40"])
            .arg(format!(
                "env HOME={h} XDG_CONFIG_HOME={h}/config XDG_DATA_HOME={h}/data XDG_STATE_HOME={h}/state TERM=xterm-256color {cmd}",
                h = home.display()
            ))
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        Tmux { session }
    }

    fn keys(&self, keys: &[&str]) {
        let status = tmux(&self.session)
            .args(["send-keys", "-t", &self.session])
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(status.success());
    }

    fn literal(&self, text: &str) {
        let status = tmux(&self.session)
            .args(["send-keys", "-t", &self.session, "-l", text])
            .status()
            .expect("send-keys");
        assert!(status.success());
    }

    fn alive(&self) -> bool {
        tmux(&self.session)
            .args(["has-session", "-t", &self.session])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn capture(&self) -> String {
        let out = tmux(&self.session)
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, needles: &[&str], what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.capture();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what} ({needles:?}); screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn quit(&self) {
        self.keys(&["C-c"]);
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "the app did not quit on Ctrl-C; screen:\n{}",
                self.capture()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is this test's own: stopping it ends the session and its buffers.
        let _ = tmux(&self.session).arg("kill-server").output();
    }
}

/// The TUI pointed at a mock started with `opts`, one question asked; the screen once it
/// shows every one of `needles`.
fn ask(name: &str, opts: MockOptions, mode: &str, needles: &[&str]) -> String {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(MockServer::start(opts, 0)).expect("mock");
    let home = tempfile::tempdir().expect("tmp home");
    let cfg = home.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[profiles.test]\nmode = \"{mode}\"\nbase_url = \"{}\"\n",
            server.base_url()
        ),
    )
    .expect("config");
    let t = Tmux::start(
        name,
        &format!(
            "{} --config {}",
            env!("CARGO_BIN_EXE_kimi-tui"),
            cfg.display()
        ),
        home.path(),
    );
    t.wait_for(&["kimi-tui"], "the welcome screen");
    t.literal("Tell me about Rust.");
    t.keys(&["Enter"]);
    let screen = t.wait_for(needles, "the end of the turn");
    // The app still owns the terminal and takes keys: Ctrl-C quits it.
    t.quit();
    rt.block_on(server.shutdown());
    screen
}

#[test]
fn a_bom_before_the_first_event_streams_normally() {
    let opts = MockOptions {
        bom: true,
        ..MockOptions::default()
    };
    let screen = ask("bom", opts, "raw", &["你好", "│ idle │"]);
    assert!(!screen.contains("panicked"), "{screen}");
}

#[test]
fn a_proxy_login_page_ends_the_turn_with_what_arrived() {
    let opts = MockOptions {
        content_type: Some("text/html".into()),
        ..MockOptions::default()
    };
    let screen = ask(
        "html",
        opts,
        "chat",
        &[
            "the server answered text/html, not an event stream",
            "│ idle │",
        ],
    );
    assert!(screen.contains("Corporate proxy"), "{screen}");
    assert!(!screen.contains("dropped"), "{screen}");
}
