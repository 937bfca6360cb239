//! End to end through a real terminal: the real binary with `--demo` inside tmux, driven with
//! send-keys and read with capture-pane, as a person would use it.

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
        let session = format!("kimi-tui-e2e-{}", std::process::id());
        let status = tmux(&session)
            .args(["new-session", "-d", "-s", &session, "-x", "120", "-y", "40"])
            .arg(format!(
                "env HOME={h} XDG_CONFIG_HOME={h}/config XDG_DATA_HOME={h}/data XDG_STATE_HOME={h}/state TERM=xterm-256color {cmd}",
                h = home.display()
            ))
            .status()
            .expect("tmux runs (it is on every machine)");
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

    /// Wait until the screen shows every one of `needles`.
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
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is this test's own: stopping it ends the session and its buffers.
        let _ = tmux(&self.session).arg("kill-server").output();
    }
}

#[test]
fn demo_weather_call_is_approved_and_inspected() {
    let home = tempfile::tempdir().expect("tmp home");
    let t = Tmux::start(
        &format!("{} --demo", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    t.wait_for(&["kimi-tui", "demo"], "the welcome screen");
    t.literal("What's the weather like in Paris?");
    t.keys(&["Enter"]);
    let dialog = t.wait_for(
        &["Tool call needs approval", "Run get_weather?"],
        "the approval dialog",
    );
    assert!(dialog.contains("\"city\": \"Paris\""), "{dialog}");
    t.keys(&["y"]);
    let answer = t.wait_for(
        &["✓ done · exit 0", "returned", "│ idle │"],
        "the tool result and the whole final answer",
    );
    assert!(
        answer.contains("├─ result"),
        "tool result visible: {answer}"
    );
    assert!(
        answer.contains(r#"{"city": "Paris", "weather": "#),
        "tool result visible: {answer}"
    );
    // Select the call's pane and open the inspector on its markers.
    t.keys(&["Tab"]);
    t.keys(&["C-t"]);
    let inspector = t.wait_for(
        &["Inspector", "163597"],
        "the inspector at the call's markers",
    );
    assert!(inspector.contains("<|tool_call_begin|>"), "{inspector}");
    assert!(
        inspector.contains("163598"),
        "argument marker id: {inspector}"
    );
    assert!(inspector.contains("ms #"), "chunk timings: {inspector}");
    // Esc closes it; Ctrl-C quits and gives the terminal back.
    t.keys(&["Escape"]);
    t.wait_for(&["◆ Kimi"], "the transcript again");
    t.keys(&["C-c"]);
    t.wait_gone();
    drop(t);

    // The conversation was saved as it went: --resume brings it back, panes and results too.
    let t = Tmux::start(
        &format!("{} --demo --resume", env!("CARGO_BIN_EXE_kimi-tui")),
        home.path(),
    );
    let resumed = t.wait_for(
        &["Resumed session", "What's the weather like in Paris?"],
        "the resumed transcript",
    );
    assert!(resumed.contains("get_weather"), "{resumed}");
    assert!(resumed.contains("returned"), "{resumed}");
    t.keys(&["C-c"]);
    t.wait_gone();
}

impl Tmux {
    fn wait_gone(&self) {
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
