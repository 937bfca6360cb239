//! The real `kimi-tui mock-server` as a child process on a free port, for the suites that drive
//! the binary end to end; killed and reaped on drop.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub(crate) struct MockProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`, as the server printed it.
    pub(crate) url: String,
}

impl MockProcess {
    /// `kimi-tui mock-server --port 0 ARGS...`, once it has said where it listens.
    pub(crate) fn start<I, S>(args: I) -> MockProcess
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kimi-tui"))
            .args(["mock-server", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("mock-server starts");
        let mut first = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut first);
        }
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .map(str::to_owned);
        let Some(url) = url else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no address from mock-server: {first:?}");
        };
        MockProcess { child, url }
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
