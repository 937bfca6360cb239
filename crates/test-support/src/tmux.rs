//! A program in a real terminal: tmux, driven with send-keys and read with capture-pane, as a
//! person would use it. Each [`Tmux`] is a tmux server of its own (`-L`, a unique name) started
//! without any config (`-f /dev/null`): a user's tmux setup or running sessions cannot change
//! what a test sees, and tests run in parallel without meeting. Dropping it kills the server.

// Test code: a failed tmux call is a failed test.
#![allow(clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The terminal size unless a test asks for another: columns, rows.
pub const DEFAULT_SIZE: (u16, u16) = (120, 40);

/// How long [`Tmux::wait_for`] waits for the screen.
pub const WAIT: Duration = Duration::from_secs(30);

/// The one session on each server.
const SESSION: &str = "main";

/// `env` with HOME and every XDG directory inside `home`, and TERM=xterm-256color: the start
/// of a shell command line that runs a program in that home.
pub fn home_env(home: &Path) -> String {
    format!(
        "env HOME={h} XDG_CONFIG_HOME={h}/config XDG_DATA_HOME={h}/data XDG_STATE_HOME={h}/state TERM=xterm-256color",
        h = home.display()
    )
}

/// One tmux server running one session (one window, one pane).
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// `cmd` (a shell command line) run with [`home_env`] in a 120x40 terminal; `name` labels
    /// the server.
    pub fn start(name: &str, cmd: &str, home: &Path) -> Tmux {
        Tmux::start_sized(name, cmd, home, DEFAULT_SIZE)
    }

    /// [`Tmux::start`] in a terminal of `size` (columns, rows).
    pub fn start_sized(name: &str, cmd: &str, home: &Path, size: (u16, u16)) -> Tmux {
        Tmux::start_shell(name, &format!("{} {cmd}", home_env(home)), size)
    }

    /// The shell command line `shell` as it is (no environment added) in a terminal of `size`.
    pub fn start_shell(name: &str, shell: &str, size: (u16, u16)) -> Tmux {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let t = Tmux {
            socket: format!(
                "kimi-{name}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        };
        t.run(&[
            "new-session",
            "-d",
            "-s",
            SESSION,
            "-x",
            &size.0.to_string(),
            "-y",
            &size.1.to_string(),
            shell,
        ]);
        t
    }

    /// tmux on this server, to be given its arguments.
    pub fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// The session's name: the target (`-t`) of commands, also good as a buffer name.
    pub fn target(&self) -> &str {
        SESSION
    }

    /// Run tmux with `args` on this server; it must succeed.
    pub fn run(&self, args: &[&str]) {
        let status = self
            .command()
            .args(args)
            .status()
            .expect("tmux runs (it is on every machine)");
        assert!(status.success(), "tmux {args:?} failed");
    }

    /// Keys by tmux's names (`Enter`, `C-c`, `y`, ...).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// `text` typed as it is (`send-keys -l`).
    pub fn literal(&self, text: &str) {
        self.run(&["send-keys", "-t", SESSION, "-l", text]);
    }

    /// `text` typed, then Enter.
    pub fn send_line(&self, text: &str) {
        self.literal(text);
        self.keys(&["Enter"]);
    }

    /// Whether the session still runs (it ends when the program exits).
    pub fn alive(&self) -> bool {
        self.command()
            .args(["has-session", "-t", SESSION])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// The screen as text.
    pub fn capture(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-t", SESSION])
            .output()
            .expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen shows every one of `needles`; the screen then. Panics after
    /// [`WAIT`], showing the screen.
    pub fn wait_for(&self, needles: &[&str], what: &str) -> String {
        self.wait_for_within(needles, WAIT, what)
    }

    /// [`Tmux::wait_for`] for at most `limit`.
    pub fn wait_for_within(&self, needles: &[&str], limit: Duration, what: &str) -> String {
        self.wait_until(&format!("{what} ({needles:?})"), limit, |screen| {
            needles.iter().all(|n| screen.contains(n))
        })
    }

    /// Wait until `done` holds for the screen; the screen then. Panics after `limit`, showing
    /// the screen.
    pub fn wait_until(&self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.capture();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {limit:?} waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait until the program has exited (the session is gone); panics after 10 s.
    pub fn wait_gone(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "the program is still running; screen:\n{}",
                self.capture()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Ctrl-C twice (one on an empty input only asks for the second), then wait until the
    /// program has exited.
    pub fn quit(&self) {
        self.keys(&["C-c", "C-c"]);
        self.wait_gone();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // The server is this test's own: stopping it ends the session and its buffers.
        let _ = self.command().arg("kill-server").output();
    }
}
