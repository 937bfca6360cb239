//! Running an approved call: a child process in its own process group, arguments on stdin, stdout
//! capped, stderr tail kept, the whole group killed at the timeout or on cancel.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::env::child_env;
use super::result::{Failure, ToolResult, ToolStatus};
use super::sandbox::Confinement;
use super::spec::ToolSpec;

/// Bytes of stderr kept (the end of it).
pub(crate) const STDERR_TAIL_BYTES: usize = 2048;

/// After the child exits, how long its descendants may keep stdout or stderr open before the
/// process group is killed.
const LINGER: Duration = Duration::from_secs(1);

/// After the group is killed, how long to wait for the pipes to close (a process that left the
/// group may hold them) before giving up on them.
const DRAIN: Duration = Duration::from_secs(1);

/// How the tool's process ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ExitKind {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it (not one sent by the runner).
    Signaled(i32),
    /// It ran past `timeout_secs`; its process group was killed.
    TimedOut,
    /// The cancellation token fired; its process group was killed.
    Cancelled,
    /// It never ran. The text is the whole message, e.g.
    /// ``could not start `./x.sh`: No such file or directory``.
    FailedToStart(String),
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    pub exit: ExitKind,
    /// stdout as lossy UTF-8, at most the cap (a character cut by the cap is dropped whole).
    pub stdout: String,
    /// Everything the child wrote to stdout, kept or not.
    pub stdout_total_bytes: u64,
    /// stdout was longer than the cap.
    pub truncated: bool,
    /// The last ~2 KiB of stderr, lossy UTF-8.
    pub stderr_tail: String,
    /// From just before the spawn until the pipes closed.
    pub duration: Duration,
}

impl ToolOutcome {
    fn failed(message: String, duration: Duration) -> ToolOutcome {
        ToolOutcome {
            exit: ExitKind::FailedToStart(message),
            stdout: String::new(),
            stdout_total_bytes: 0,
            truncated: false,
            stderr_tail: String::new(),
            duration,
        }
    }

    /// Exit code 0. (Truncated output still counts as success.)
    pub fn success(&self) -> bool {
        self.exit == ExitKind::Exited(0)
    }

    /// The `tool` message content sent back to the model: stdout, then one line per note:
    /// `[output truncated: showed 65536 of 1048576 bytes]` when cut; `[exit code 3]` or
    /// `[killed by signal 9]` followed by `stderr: <tail>` (when there is any) for a failure;
    /// `[timed out after 20 s; the process group was killed]` (also followed by the stderr tail);
    /// `[could not start `cmd`: No such file or directory]`; `[cancelled by the user]`.
    /// A successful run with no output at all gives `[no output]`, so the model never sees an
    /// empty result. The timeout shown is the whole seconds of `duration`, which is the timeout
    /// (the kill and the last reads take milliseconds).
    pub fn to_model_content(&self) -> String {
        let mut notes: Vec<String> = Vec::new();
        if self.truncated {
            notes.push(format!(
                "[output truncated: showed {} of {} bytes]",
                self.stdout.len(),
                self.stdout_total_bytes
            ));
        }
        let mut with_stderr = false;
        match &self.exit {
            ExitKind::Exited(0) => {}
            ExitKind::Exited(code) => {
                notes.push(format!("[exit code {code}]"));
                with_stderr = true;
            }
            ExitKind::Signaled(sig) => {
                notes.push(format!("[killed by signal {sig}]"));
                with_stderr = true;
            }
            ExitKind::TimedOut => {
                notes.push(format!(
                    "[timed out after {} s; the process group was killed]",
                    self.duration.as_secs()
                ));
                with_stderr = true;
            }
            ExitKind::Cancelled => notes.push("[cancelled by the user]".to_owned()),
            ExitKind::FailedToStart(message) => notes.push(format!("[{message}]")),
        }
        let stderr = self.stderr_tail.trim_end();
        if with_stderr && !stderr.is_empty() {
            notes.push(format!("stderr: {stderr}"));
        }
        if notes.is_empty() && self.stdout.is_empty() {
            return "[no output]".to_owned();
        }
        let mut content = self.stdout.clone();
        if !notes.is_empty() {
            if !content.is_empty() && !content.ends_with('\n') {
                content.push('\n');
            }
            content.push_str(&notes.join("\n"));
        }
        content
    }
}

impl From<ToolOutcome> for ToolResult {
    /// The neutral form of a run: the model's content is [`ToolOutcome::to_model_content`],
    /// stdout is the output and the stderr tail the log tail.
    fn from(o: ToolOutcome) -> ToolResult {
        let content = o.to_model_content();
        let status = match o.exit {
            ExitKind::Exited(0) => ToolStatus::Ok,
            ExitKind::Exited(code) => ToolStatus::Failed(Failure::Exit(code)),
            ExitKind::Signaled(sig) => ToolStatus::Failed(Failure::Signal(sig)),
            ExitKind::TimedOut => ToolStatus::TimedOut,
            ExitKind::Cancelled => ToolStatus::Cancelled,
            ExitKind::FailedToStart(why) => ToolStatus::CouldNotStart(why),
        };
        ToolResult {
            content,
            status,
            output: o.stdout,
            output_total_bytes: o.stdout_total_bytes,
            truncated: o.truncated,
            log_tail: o.stderr_tail,
            duration: o.duration,
        }
    }
}

/// Run an approved call of `spec`.
///
/// - argv is `spec.command` exactly, without a shell; the arguments are never put in argv. A
///   relative `command[0]` with a `/` in it resolves against `spec.cwd` if set, else against this
///   process's current directory; a bare name is looked up in `PATH`. A relative `cwd` is taken
///   from this process's current directory.
/// - `arguments` (the JSON text) is written to the child's stdin, followed by a newline if it
///   does not end with one, and stdin is closed. The write runs in its own task and ignores a
///   child that never reads (EPIPE).
/// - The child's environment is [`child_env`]: this process's (or only the variables
///   `spec.inherit_env` lists) without any API key variable, plus `spec.env`, then
///   `KIMI_TOOL_NAME` and `KIMI_TOOL_CALL_ID` (which `spec.env` cannot override).
/// - The child leads its own process group. At the timeout or on `cancel`, the whole group gets
///   SIGKILL. When the child exits by itself but descendants still hold its stdout or stderr
///   after a second, the group is killed too, so a stray `sleep 30 &` cannot hold up the result.
///   If the future is dropped before the end, the group is killed as well.
/// - stdout is kept up to `spec.max_output_bytes` (64 KiB by default); the rest is read, counted
///   and discarded, so a flooding child never blocks and memory stays bounded. stderr is read
///   the same way, keeping its last 2 KiB.
/// - A tool with `sandbox` or `network = false` runs confined (see [`super::sandbox`]): with a
///   private `TMPDIR` that is removed afterwards, and Landlock rules the child puts on itself
///   before `exec`. When this kernel cannot enforce them the tool does not run: the outcome is
///   [`ExitKind::FailedToStart`] saying why.
///
/// Never panics; every failure is in the [`ToolOutcome`].
pub async fn run(
    spec: &ToolSpec,
    call_id: &str,
    arguments: &str,
    cancel: CancellationToken,
) -> ToolOutcome {
    let started = Instant::now();
    let shown = spec.command.first().map(String::as_str).unwrap_or("");
    let cant_start = |why: String| {
        ToolOutcome::failed(
            format!("could not start `{shown}`: {why}"),
            started.elapsed(),
        )
    };

    if cancel.is_cancelled() {
        return ToolOutcome {
            exit: ExitKind::Cancelled,
            ..ToolOutcome::failed(String::new(), started.elapsed())
        };
    }
    let Some(program) = spec.command.first().filter(|p| !p.is_empty()) else {
        return cant_start("the command is empty".to_owned());
    };
    let cwd = match spec.cwd.as_deref().map(absolute) {
        None => None,
        Some(Ok(dir)) if dir.is_dir() => Some(dir),
        Some(Ok(dir)) => {
            return cant_start(format!(
                "the working directory `{}` does not exist or is not a directory",
                dir.display()
            ));
        }
        Some(Err(e)) => return cant_start(format!("no current directory: {}", os_message(&e))),
    };
    let resolved = resolve_program(program, cwd.as_deref());
    // A workspace-write tool may write under its working directory: `cwd`, else ours.
    let workspace = cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    // Kept to the end of the run: it owns the tool's private TMPDIR.
    let mut confinement = match Confinement::prepare(spec.sandbox_policy(), &workspace) {
        Ok(confinement) => confinement,
        Err(e) => return cant_start(e.to_string()),
    };

    let mut cmd = Command::new(&resolved);
    cmd.args(&spec.command[1..])
        .env_clear()
        .envs(child_env(spec, call_id, std::env::vars_os()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    if let Some(confinement) = confinement.as_mut() {
        confinement.apply(&mut cmd);
    }
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return cant_start(spawn_message(&e, &resolved)),
    };
    // The child leads its group, so the group id is its pid. Never 0: killpg(0) would hit us.
    let mut group = ProcessGroup {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .filter(|&id| id > 0),
        killed: false,
        done: false,
    };

    if let Some(mut stdin) = child.stdin.take() {
        let mut input = arguments.as_bytes().to_vec();
        if !input.ends_with(b"\n") {
            input.push(b'\n');
        }
        tokio::spawn(async move {
            // A child that never reads gets EPIPE (or is killed); either way, nothing to report.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out = Capture::new(spec.output_cap());
    let mut err = Tail::new(STDERR_TAIL_BYTES);
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 4 * 1024];

    let timeout = Duration::from_secs(spec.timeout_secs);
    let deadline = started.checked_add(timeout).unwrap_or_else(far_future);
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut ended_by: Option<ExitKind> = None;
    // Set once the child is gone: when to stop waiting for the pipes to close.
    let mut pipes_deadline: Option<Instant> = None;

    while stdout.is_some() || stderr.is_some() || status.is_none() {
        let running = status.is_none();
        tokio::select! {
            r = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => match r {
                Some(n) => out.push(&out_buf[..n]),
                None => stdout = None,
            },
            r = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => match r {
                Some(n) => err.push(&err_buf[..n]),
                None => stderr = None,
            },
            s = child.wait(), if running => {
                status = Some(s);
                pipes_deadline = Some(Instant::now() + if group.killed { DRAIN } else { LINGER });
            }
            _ = sleep_until(deadline), if running && ended_by.is_none() => {
                group.kill();
                ended_by = Some(ExitKind::TimedOut);
            }
            _ = cancel.cancelled(), if running && ended_by.is_none() => {
                group.kill();
                ended_by = Some(ExitKind::Cancelled);
            }
            _ = sleep_until(pipes_deadline.unwrap_or_else(far_future)), if pipes_deadline.is_some() => {
                if group.killed {
                    // Something outside the group holds the pipes; stop waiting for it.
                    break;
                }
                group.kill();
                pipes_deadline = Some(Instant::now() + DRAIN);
            }
        }
    }
    group.done = true;

    let exit = match (status, ended_by) {
        // The child finished on its own just as the timeout or cancel fired.
        (Some(Ok(s)), Some(_)) if s.code().is_some() => exit_kind(s),
        (_, Some(kind)) => kind,
        (Some(Ok(s)), None) => exit_kind(s),
        (Some(Err(e)), None) => {
            ExitKind::FailedToStart(format!("could not wait for `{shown}`: {}", os_message(&e)))
        }
        (None, None) => ExitKind::Signaled(libc::SIGKILL),
    };
    let (stdout, stdout_total_bytes, truncated) = out.finish();
    ToolOutcome {
        exit,
        stdout,
        stdout_total_bytes,
        truncated,
        stderr_tail: err.finish(),
        duration: started.elapsed(),
    }
}

/// Read once; `None` at EOF or on an error (both end the stream).
async fn read_some<R: AsyncRead + Unpin>(reader: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match reader {
        Some(r) => match r.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

fn exit_kind(status: ExitStatus) -> ExitKind {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitKind::Exited(code),
        (None, Some(sig)) => ExitKind::Signaled(sig),
        (None, None) => ExitKind::Signaled(0),
    }
}

/// About thirty years from now: a deadline that never comes.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}

fn absolute(dir: &Path) -> io::Result<PathBuf> {
    if dir.is_absolute() {
        Ok(dir.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(dir))
    }
}

/// `command[0]` as the child will run it. A relative path with a `/` is made absolute against
/// `cwd` (already absolute) or, without one, left relative to this process's current directory,
/// which the child shares. A bare name stays bare for the `PATH` lookup.
fn resolve_program(program: &str, cwd: Option<&Path>) -> PathBuf {
    let path = Path::new(program);
    match cwd {
        Some(dir) if program.contains('/') && path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// `No such file or directory`, without Rust's ` (os error 2)`.
fn os_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text,
    }
}

fn spawn_message(e: &io::Error, program: &Path) -> String {
    let message = os_message(e);
    match e.kind() {
        io::ErrorKind::PermissionDenied if program.is_file() => format!(
            "{message} (is the file executable? try `chmod +x {}`)",
            program.display()
        ),
        // The file is there, so what is missing is the interpreter its `#!` line names.
        io::ErrorKind::NotFound if program.is_file() => {
            format!("{message} (the file exists: is the interpreter on its #! line installed?)")
        }
        _ => message,
    }
}

/// The child's process group, killed once at most, and killed on drop if the run did not finish
/// (its future was dropped).
struct ProcessGroup {
    pgid: Option<i32>,
    killed: bool,
    done: bool,
}

impl ProcessGroup {
    fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        if let Some(pgid) = self.pgid {
            // SAFETY: killpg only sends a signal; pgid is a positive id of a group we created.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if !self.done {
            self.kill();
        }
    }
}

/// stdout up to a cap; the rest only counted.
struct Capture {
    kept: Vec<u8>,
    cap: usize,
    total: u64,
}

impl Capture {
    fn new(cap: usize) -> Capture {
        Capture {
            kept: Vec::with_capacity(cap.min(64 * 1024)),
            cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// (text, total bytes, truncated)
    fn finish(mut self) -> (String, u64, bool) {
        let truncated = self.total > self.kept.len() as u64;
        if truncated {
            drop_partial_char_at_end(&mut self.kept);
        }
        (
            String::from_utf8_lossy(&self.kept).into_owned(),
            self.total,
            truncated,
        )
    }
}

/// The last `cap` bytes of a stream, in bounded memory. (Also an MCP server's stderr.)
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    buf: Vec<u8>,
    cap: usize,
    /// Bytes before `buf` were dropped, so it may start inside a character.
    cut: bool,
}

impl Tail {
    pub(crate) fn new(cap: usize) -> Tail {
        Tail {
            buf: Vec::with_capacity(cap * 2),
            cap,
            cut: false,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let skip = bytes.len().saturating_sub(self.cap);
        self.cut |= skip > 0;
        self.buf.extend_from_slice(&bytes[skip..]);
        if self.buf.len() > 2 * self.cap {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
            self.cut = true;
        }
    }

    pub(crate) fn finish(mut self) -> String {
        if self.buf.len() > self.cap {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
            self.cut = true;
        }
        if self.cut {
            // Do not start in the middle of a character.
            let skip = self
                .buf
                .iter()
                .take(3)
                .take_while(|&&b| b & 0xC0 == 0x80)
                .count();
            self.buf.drain(..skip);
        }
        String::from_utf8_lossy(&self.buf).into_owned()
    }
}

/// Remove a UTF-8 sequence cut short by the cap at the end of `buf`.
fn drop_partial_char_at_end(buf: &mut Vec<u8>) {
    let n = buf.len();
    for back in 1..=n.min(4) {
        let b = buf[n - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: keep looking for the lead byte
        }
        let needed = match b {
            0xF0..=0xF7 => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        if needed > back {
            buf.truncate(n - back);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(exit: ExitKind, stdout: &str, stderr: &str) -> ToolOutcome {
        ToolOutcome {
            exit,
            stdout: stdout.to_owned(),
            stdout_total_bytes: stdout.len() as u64,
            truncated: false,
            stderr_tail: stderr.to_owned(),
            duration: Duration::from_millis(20_030),
        }
    }

    #[test]
    fn model_content_for_each_ending() {
        let ok = outcome(ExitKind::Exited(0), "{\"temp\": 25}\n", "noise");
        assert!(ok.success());
        assert_eq!(ok.to_model_content(), "{\"temp\": 25}\n");

        let failed = outcome(ExitKind::Exited(3), "partial", "boom\n");
        assert!(!failed.success());
        assert_eq!(
            failed.to_model_content(),
            "partial\n[exit code 3]\nstderr: boom"
        );

        let quiet_fail = outcome(ExitKind::Exited(1), "", "");
        assert_eq!(quiet_fail.to_model_content(), "[exit code 1]");

        let timed_out = outcome(ExitKind::TimedOut, "", "");
        assert_eq!(
            timed_out.to_model_content(),
            "[timed out after 20 s; the process group was killed]"
        );

        let failed_start = outcome(
            ExitKind::FailedToStart(
                "could not start `./nope.sh`: No such file or directory".to_owned(),
            ),
            "",
            "",
        );
        assert_eq!(
            failed_start.to_model_content(),
            "[could not start `./nope.sh`: No such file or directory]"
        );

        let cancelled = outcome(ExitKind::Cancelled, "half\n", "ignored");
        assert_eq!(
            cancelled.to_model_content(),
            "half\n[cancelled by the user]"
        );

        let signaled = outcome(ExitKind::Signaled(9), "", "");
        assert_eq!(signaled.to_model_content(), "[killed by signal 9]");

        assert_eq!(
            outcome(ExitKind::Exited(0), "", "").to_model_content(),
            "[no output]"
        );
    }

    #[test]
    fn truncation_note_counts_bytes() {
        let mut o = outcome(ExitKind::Exited(0), &"a".repeat(65536), "");
        o.stdout_total_bytes = 1_048_576;
        o.truncated = true;
        let content = o.to_model_content();
        assert!(o.success());
        assert!(
            content.ends_with("a\n[output truncated: showed 65536 of 1048576 bytes]"),
            "{}",
            &content[content.len() - 80..]
        );
    }

    #[test]
    fn capture_keeps_the_cap_and_counts_the_rest() {
        let mut c = Capture::new(10);
        c.push(b"0123456");
        c.push(b"789abcdef");
        c.push(b"xyz");
        assert_eq!(c.finish(), ("0123456789".to_owned(), 19, true));
        let mut c = Capture::new(10);
        c.push(b"0123456789");
        assert_eq!(c.finish(), ("0123456789".to_owned(), 10, false));
    }

    #[test]
    fn capture_never_ends_in_half_a_character() {
        // "é" is 2 bytes, "€" 3, "😀" 4; cut each after its first byte.
        for (text, keep) in [("aé", 2), ("a€", 2), ("a€", 3), ("a😀", 4), ("a😀", 2)] {
            let mut c = Capture::new(keep);
            c.push(text.as_bytes());
            let (s, total, truncated) = c.finish();
            assert_eq!(s, "a", "{text} cut at {keep}");
            assert_eq!(total, text.len() as u64);
            assert!(truncated);
        }
        let mut c = Capture::new(3);
        c.push("aé!".as_bytes());
        assert_eq!(c.finish().0, "aé");
    }

    #[test]
    fn tail_keeps_the_end_without_half_characters() {
        let mut t = Tail::new(8);
        for chunk in ["hello ", "world, ", "this is", " the end"] {
            t.push(chunk.as_bytes());
        }
        assert_eq!(t.finish(), " the end");
        let mut t = Tail::new(4);
        t.push("x€€".as_bytes()); // 7 bytes; the last 4 start inside the first €
        assert_eq!(t.finish(), "€");
        let mut t = Tail::new(4);
        t.push(&[b'a'; 100_000]);
        assert_eq!(t.finish(), "aaaa");
    }

    #[test]
    fn relative_programs_resolve_against_cwd() {
        let cwd = Path::new("/srv/tools");
        assert_eq!(
            resolve_program("./w.sh", Some(cwd)),
            PathBuf::from("/srv/tools/./w.sh")
        );
        assert_eq!(
            resolve_program("bin/w", Some(cwd)),
            PathBuf::from("/srv/tools/bin/w")
        );
        assert_eq!(
            resolve_program("/bin/date", Some(cwd)),
            PathBuf::from("/bin/date")
        );
        assert_eq!(resolve_program("date", Some(cwd)), PathBuf::from("date"));
        assert_eq!(resolve_program("./w.sh", None), PathBuf::from("./w.sh"));
    }

    #[tokio::test]
    async fn a_sandbox_this_kernel_cannot_enforce_refuses_the_call() {
        use crate::tools::sandbox::{SandboxMode, Support, pretend};
        let dir = tempfile::tempdir().expect("tmp");
        let marker = dir.path().join("ran");
        let touch = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            format!("touch '{}'", marker.display()),
        ];
        let read_only = ToolSpec {
            sandbox: SandboxMode::ReadOnly,
            ..ToolSpec::new("t", touch.clone())
        };
        let offline = ToolSpec {
            network: false,
            ..ToolSpec::new("t", touch)
        };
        for (spec, abi, why) in [
            (
                &read_only,
                0,
                "sandbox = \"read-only\" needs Landlock ABI 3 or later (Linux 6.2+) and this kernel has no Landlock",
            ),
            (&read_only, 2, "this kernel has Landlock ABI 2"),
            (
                &offline,
                3,
                "network = false needs Landlock ABI 4 or later (Linux 6.7+)",
            ),
        ] {
            let _fake = pretend(Support { landlock_abi: abi });
            let out = run(spec, "c", "{}", CancellationToken::new()).await;
            let ExitKind::FailedToStart(message) = &out.exit else {
                panic!("not refused: {out:?}");
            };
            assert!(message.starts_with("could not start `sh`: "), "{message}");
            assert!(message.contains(why), "{message:?} should say {why:?}");
            assert!(
                message.ends_with("not run without its sandbox"),
                "{message}"
            );
            assert!(!marker.exists(), "the tool ran unsandboxed");
            let result = ToolResult::from(out);
            assert!(matches!(result.status, ToolStatus::CouldNotStart(_)));
        }
        // The same tool unconfined runs as always.
        let plain = ToolSpec {
            sandbox: SandboxMode::None,
            ..read_only
        };
        let _fake = pretend(Support { landlock_abi: 0 });
        let out = run(&plain, "c", "{}", CancellationToken::new()).await;
        assert!(out.success(), "{out:?}");
        assert!(marker.exists());
    }

    #[test]
    fn os_messages_lose_the_error_number() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(os_message(&e), "No such file or directory");
    }
}
