//! Confining what a tool or MCP server may touch: per tool (`[[tools]]`) and per stdio server
//! (`[[mcp_servers]]`), `sandbox = "none" | "read-only" | "workspace-write"` and
//! `network = true | false`, enforced by the kernel with Landlock on Linux.
//!
//! The flow for one process: `Confinement::prepare` checks that this kernel can enforce the
//! policy ([`check`] against [`support`]; if not, the process does not run and the error says
//! why), creates the private `TMPDIR` and builds the ruleset; `Confinement::apply` puts both
//! on the command, and the child restricts itself just before `exec`, so the rules hold for
//! the program and everything it starts. Elsewhere than Linux a confined policy is refused.

#[cfg(target_os = "linux")]
mod landlock_rules;
mod policy;
mod support;

use std::path::Path;

pub use policy::{SandboxMode, SandboxPolicy};
pub(crate) use policy::{default_network, is_true};
pub use support::{FILESYSTEM_ABI, NETWORK_ABI, Support, check, support};

#[cfg(test)]
pub(crate) use support::pretend;

/// Why a confined process was not started.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `wants` is the setting as written (`sandbox = "read-only"`).
    #[error("{wants} needs Landlock, which only Linux has; not run without its sandbox")]
    NotLinux { wants: String },
    /// `found` is [`Support::describe`]; `linux` the kernel version that brought ABI `needs`.
    #[error(
        "{wants} needs Landlock ABI {needs} or later (Linux {linux}+) and this kernel has {found}; not run without its sandbox"
    )]
    KernelTooOld {
        wants: String,
        needs: u8,
        linux: &'static str,
        found: String,
    },
    #[error("could not create the sandbox's temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// The kernel refused a rule, or a path to allow could not be opened.
    #[error("could not build the sandbox's Landlock rules: {0}")]
    Landlock(#[source] Box<dyn std::error::Error + Send + Sync>),
}

#[cfg(target_os = "linux")]
impl From<landlock::RulesetError> for SandboxError {
    fn from(e: landlock::RulesetError) -> SandboxError {
        SandboxError::Landlock(Box::new(e))
    }
}

/// A confined process's sandbox, from before its spawn until it ends: the private temporary
/// directory (removed when this is dropped) and, until applied, the ruleset.
#[derive(Debug)]
pub(crate) struct Confinement {
    tmpdir: Option<tempfile::TempDir>,
    #[cfg(target_os = "linux")]
    ruleset: Option<landlock::RulesetCreated>,
}

impl Confinement {
    /// `None` for an unconfined policy (nothing changes for the process). Otherwise the
    /// policy is checked against this kernel and the rules built; `workspace` is where a
    /// workspace-write process may write (its working directory).
    pub(crate) fn prepare(
        policy: SandboxPolicy,
        workspace: &Path,
    ) -> Result<Option<Confinement>, SandboxError> {
        if policy.is_unconfined() {
            return Ok(None);
        }
        check(policy, support())?;
        let tmpdir = if policy.mode.is_none() {
            None
        } else {
            Some(private_tmpdir().map_err(SandboxError::TempDir)?)
        };
        #[cfg(target_os = "linux")]
        {
            let ruleset = landlock_rules::build(
                policy,
                tmpdir.as_ref().map(tempfile::TempDir::path),
                workspace,
            )?;
            Ok(Some(Confinement {
                tmpdir,
                ruleset: Some(ruleset),
            }))
        }
        #[cfg(not(target_os = "linux"))]
        {
            // `check` has already refused every confined policy here: no Landlock to build.
            let _ = (workspace, tmpdir);
            Err(SandboxError::NotLinux {
                wants: format!("sandbox = {:?}", policy.mode.as_str()),
            })
        }
    }

    /// Put the sandbox on `cmd`: `TMPDIR` set to the private directory, and the rules enforced
    /// by the child on itself just before `exec`. Call once, before the one spawn.
    pub(crate) fn apply(&mut self, cmd: &mut tokio::process::Command) {
        if let Some(dir) = &self.tmpdir {
            cmd.env("TMPDIR", dir.path());
        }
        #[cfg(target_os = "linux")]
        if let Some(ruleset) = self.ruleset.take() {
            let mut ruleset = Some(ruleset);
            // SAFETY: the closure runs in the forked child before exec; it only calls
            // `prctl`, `landlock_restrict_self` and `close` (async-signal-safe system calls)
            // and allocates nothing (the ruleset was built before the fork).
            unsafe {
                cmd.pre_exec(move || landlock_rules::restrict(&mut ruleset));
            }
        }
    }
}

/// A fresh directory only this user can enter (0700), removed with the confinement.
fn private_tmpdir() -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix("kimi-tool-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
}
