//! The Landlock rules of a policy (Linux), built in the parent and enforced by the child on
//! itself between fork and exec.

use std::io;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    Scope,
};

use super::SandboxError;
use super::policy::{SandboxMode, SandboxPolicy};

/// The filesystem rights handled: fixed rather than "whatever the kernel has", as the crate
/// advises, so a sandbox behaves the same on every kernel that accepts it.
const FS_ABI: ABI = ABI::V3;

/// The highest ABI whose rights this kernel accepts, tried from 1 to 6 with every right (files,
/// TCP, scopes) the ABI adds, as a hard requirement; 0 without Landlock.
pub(super) fn probe_abi() -> u8 {
    let abis = [ABI::V1, ABI::V2, ABI::V3, ABI::V4, ABI::V5, ABI::V6];
    let mut found = 0;
    for (n, abi) in (1u8..).zip(abis) {
        if accepts(abi).is_err() {
            break;
        }
        found = n;
    }
    found
}

fn accepts(abi: ABI) -> Result<(), landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?;
    if abi >= ABI::V4 {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    ruleset.create().map(drop)
}

/// The ruleset for `policy`: reading everywhere; writing only under `tmpdir` (and `workspace`
/// for workspace-write) and to `/dev/null`, which shells redirect to all the time; with
/// `network = false`, no TCP connect or bind at all. Every right is a hard requirement, so a
/// kernel that cannot enforce one fails here rather than running the process looser.
pub(super) fn build(
    policy: SandboxPolicy,
    tmpdir: Option<&Path>,
    workspace: &Path,
) -> Result<RulesetCreated, SandboxError> {
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    if !policy.mode.is_none() {
        ruleset = ruleset.handle_access(AccessFs::from_all(FS_ABI))?;
    }
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    let mut created = ruleset.create()?;
    if !policy.mode.is_none() {
        created = created.add_rule(beneath(Path::new("/"), AccessFs::from_read(FS_ABI))?)?;
        created = created.add_rule(beneath(
            Path::new("/dev/null"),
            AccessFs::from_file(FS_ABI),
        )?)?;
        let mut writable: Vec<&Path> = tmpdir.into_iter().collect();
        if policy.mode == SandboxMode::WorkspaceWrite {
            writable.push(workspace);
        }
        for dir in writable {
            created = created.add_rule(beneath(dir, AccessFs::from_all(FS_ABI))?)?;
        }
    }
    Ok(created)
}

fn beneath(
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<PathBeneath<PathFd>, SandboxError> {
    let fd = PathFd::new(path).map_err(|e| SandboxError::Landlock(Box::new(e)))?;
    Ok(PathBeneath::new(fd, access))
}

/// Enforce `ruleset` on the calling process: the body of a `pre_exec` closure, so it only
/// makes system calls (`prctl`, `landlock_restrict_self`, `close`) and allocates nothing.
pub(super) fn restrict(ruleset: &mut Option<RulesetCreated>) -> io::Result<()> {
    let Some(ruleset) = ruleset.take() else {
        // The closure runs once per spawn and each confinement spawns once.
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    match ruleset.restrict_self() {
        Ok(RestrictionStatus {
            ruleset: RulesetStatus::FullyEnforced,
            ..
        }) => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::EPERM)),
        Err(_) => Err(io::Error::last_os_error()),
    }
}
