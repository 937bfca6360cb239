//! A huge paste through a real terminal: the real binary with `--demo` inside tmux, the text
//! delivered by `tmux paste-buffer -p` as a terminal delivers a paste (bracketed).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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
    fn start(cmd: &str, home: &Path) -> Tmux {
        let session = format!("kimi-tui-paste-{}", std::process::id());
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

    fn tmux(&self, args: &[&str]) {
        let status = tmux(&self.session).args(args).status().expect("tmux");
        assert!(status.success(), "tmux {args:?}");
    }

    fn capture(&self) -> String {
        let out = tmux(&self.session)
            .args(["capture-pane", "-p", "-t", &self.session])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait up to `limit` until the screen shows every one of `needles`.
    fn wait_for(&self, needles: &[&str], limit: Duration, what: &str) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.capture();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("no {what} within {limit:?} ({needles:?}); screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is this test's own: stopping it ends the session and its buffers.
        let _ = tmux(&self.session).arg("kill-server").output();
    }
}

#[test]
fn a_10_mb_paste_is_refused_at_once_and_the_app_stays_usable() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for(
        &["kimi-tui", "demo"],
        Duration::from_secs(30),
        "welcome screen",
    );
    let file = home.path().join("paste.txt");
    let line = "2026-12-01T12:00:00Z INFO request handled in 12 ms path=/v1/completions\n";
    std::fs::write(&file, line.repeat(10_000_000 / line.len())).expect("write");
    let file = file.to_str().expect("utf-8 path");
    t.tmux(&["load-buffer", "-b", &t.session, file]);
    t.tmux(&[
        "paste-buffer",
        "-p",
        "-d",
        "-b",
        &t.session,
        "-t",
        &t.session,
    ]);
    // The 10 MB reach the app through the pty (tmux gives them to `cat` in about 0.3 s); the
    // notice follows as soon as the paste ends. The limit allows for a loaded test machine.
    let screen = t.wait_for(
        &["Paste not inserted", "1 MiB limit"],
        Duration::from_secs(10),
        "notice for the refused paste",
    );
    assert!(
        !screen.contains("request handled"),
        "nothing inserted:\n{screen}"
    );
    // Still usable: typing shows up right away.
    t.tmux(&["send-keys", "-t", &t.session, "-l", "still here"]);
    t.wait_for(&["still here"], Duration::from_secs(2), "typed text");
}
