//! What this kernel can enforce, found once per process, and whether it is enough for a policy.

use std::sync::OnceLock;

use super::SandboxError;
use super::policy::SandboxPolicy;

/// The first Landlock ABI that confines every kind of write (ABI 3 adds truncation; before it
/// a "read-only" process could still empty a file), so the least a filesystem sandbox accepts.
pub const FILESYSTEM_ABI: u8 = 3;

/// The first Landlock ABI with TCP `connect` and `bind` rules.
pub const NETWORK_ABI: u8 = 4;

/// What Landlock enforces on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI, as far as probing can tell it apart (0: no Landlock, or not Linux).
    /// Probing stops at 6, the last ABI that adds rules this program could ask for, so a newer
    /// kernel shows 6.
    pub landlock_abi: u8,
}

impl Support {
    /// `sandbox = "read-only"` and `"workspace-write"` can be enforced.
    pub fn filesystem(&self) -> bool {
        self.landlock_abi >= FILESYSTEM_ABI
    }

    /// `network = false` can be enforced.
    pub fn network(&self) -> bool {
        self.landlock_abi >= NETWORK_ABI
    }

    /// What this kernel enforces, in one line for `doctor`.
    pub fn summary(&self) -> String {
        const FS: &str = "the filesystem sandbox (read-only, workspace-write)";
        const NET: &str = "network = false (TCP connect and bind)";
        if !cfg!(target_os = "linux") {
            return "not available: Landlock is Linux's; a tool with sandbox or network = false is refused".to_owned();
        }
        match (self.filesystem(), self.network()) {
            (true, true) => format!("Landlock ABI {} enforces {FS} and {NET}", self.landlock_abi),
            (true, false) => format!(
                "Landlock ABI {} enforces {FS}; not {NET}, which needs ABI {NETWORK_ABI} (Linux 6.7+)",
                self.landlock_abi
            ),
            _ => format!(
                "{} enforces neither {FS}, which needs Landlock ABI {FILESYSTEM_ABI} (Linux 6.2+), nor {NET}, which needs ABI {NETWORK_ABI} (Linux 6.7+): tools asking for them are refused",
                self.describe()
            ),
        }
    }

    /// "no Landlock" or "Landlock ABI 2", for a message.
    pub fn describe(&self) -> String {
        match self.landlock_abi {
            0 => "no Landlock".to_owned(),
            abi => format!("Landlock ABI {abi}"),
        }
    }
}

/// What this kernel enforces, probed once (creating a ruleset per ABI, nothing is restricted).
pub fn support() -> Support {
    #[cfg(test)]
    if let Some(fake) = OVERRIDE.with(std::cell::Cell::get) {
        return fake;
    }
    static DETECTED: OnceLock<Support> = OnceLock::new();
    *DETECTED.get_or_init(|| Support {
        landlock_abi: probe(),
    })
}

#[cfg(target_os = "linux")]
fn probe() -> u8 {
    super::landlock_rules::probe_abi()
}

#[cfg(not(target_os = "linux"))]
fn probe() -> u8 {
    0
}

#[cfg(test)]
thread_local! {
    static OVERRIDE: std::cell::Cell<Option<Support>> = const { std::cell::Cell::new(None) };
}

/// In this thread, until the guard is dropped, [`support`] answers `fake`: how the refusal
/// paths are tested on a kernel that could enforce everything.
#[cfg(test)]
pub(crate) fn pretend(fake: Support) -> impl Drop {
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|o| o.set(None));
        }
    }
    OVERRIDE.with(|o| o.set(Some(fake)));
    Restore
}

/// Whether `support` can enforce everything `policy` asks for; if not, why, in words for the
/// user. A policy is never weakened to fit: the process does not run.
pub fn check(policy: SandboxPolicy, support: Support) -> Result<(), SandboxError> {
    if policy.is_unconfined() {
        return Ok(());
    }
    let wants = if policy.mode.is_none() {
        "network = false".to_owned()
    } else {
        format!("sandbox = {:?}", policy.mode.as_str())
    };
    if !cfg!(target_os = "linux") {
        return Err(SandboxError::NotLinux { wants });
    }
    if !policy.mode.is_none() && !support.filesystem() {
        return Err(SandboxError::KernelTooOld {
            wants,
            needs: FILESYSTEM_ABI,
            linux: "6.2",
            found: support.describe(),
        });
    }
    if !policy.network && !support.network() {
        return Err(SandboxError::KernelTooOld {
            wants: "network = false".to_owned(),
            needs: NETWORK_ABI,
            linux: "6.7",
            found: support.describe(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::policy::SandboxMode;
    use super::*;

    fn policy(mode: SandboxMode, network: bool) -> SandboxPolicy {
        SandboxPolicy { mode, network }
    }

    #[test]
    fn the_unconfined_default_needs_nothing() {
        let none = Support { landlock_abi: 0 };
        check(policy(SandboxMode::None, true), none).expect("always runs");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn each_policy_needs_its_abi_and_says_so() {
        let abi = |n| Support { landlock_abi: n };
        let read_only = policy(SandboxMode::ReadOnly, true);
        let offline = policy(SandboxMode::None, false);
        let both = policy(SandboxMode::WorkspaceWrite, false);

        let e = check(read_only, abi(0))
            .expect_err("no Landlock")
            .to_string();
        assert_eq!(
            e,
            "sandbox = \"read-only\" needs Landlock ABI 3 or later (Linux 6.2+) and this kernel has no Landlock; not run without its sandbox"
        );
        let e = check(read_only, abi(2))
            .expect_err("no truncate rule")
            .to_string();
        assert!(e.contains("this kernel has Landlock ABI 2"), "{e}");
        check(read_only, abi(3)).expect("enforceable");

        let e = check(offline, abi(3))
            .expect_err("no TCP rules")
            .to_string();
        assert_eq!(
            e,
            "network = false needs Landlock ABI 4 or later (Linux 6.7+) and this kernel has Landlock ABI 3; not run without its sandbox"
        );
        check(offline, abi(4)).expect("enforceable");

        let e = check(both, abi(3))
            .expect_err("filesystem only")
            .to_string();
        assert!(e.starts_with("network = false needs"), "{e}");
        let e = check(both, abi(1)).expect_err("neither").to_string();
        assert!(e.starts_with("sandbox = \"workspace-write\" needs"), "{e}");
        check(both, abi(6)).expect("enforceable");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_summary_says_what_is_enforced() {
        let abi = |n| Support { landlock_abi: n }.summary();
        assert_eq!(
            abi(6),
            "Landlock ABI 6 enforces the filesystem sandbox (read-only, workspace-write) and network = false (TCP connect and bind)"
        );
        assert!(abi(3).ends_with(
            "; not network = false (TCP connect and bind), which needs ABI 4 (Linux 6.7+)"
        ));
        assert!(
            abi(0).starts_with("no Landlock enforces neither"),
            "{}",
            abi(0)
        );
        assert!(
            abi(2).starts_with("Landlock ABI 2 enforces neither"),
            "{}",
            abi(2)
        );
    }

    #[test]
    fn the_override_holds_in_its_thread_until_dropped() {
        let real = support();
        {
            let _fake = pretend(Support { landlock_abi: 1 });
            assert_eq!(support().landlock_abi, 1);
        }
        assert_eq!(support(), real);
    }
}
