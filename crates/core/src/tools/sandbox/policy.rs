//! What a tool or MCP server asks to be confined to: the `sandbox` and `network` keys.

use serde::{Deserialize, Serialize};

/// Where a sandboxed process may write. Reading is allowed everywhere in every mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No filesystem confinement (the default): the process has the user's full rights.
    #[default]
    None,
    /// Write nowhere except a private temporary directory, given as `TMPDIR`.
    ReadOnly,
    /// Write under the working directory too.
    WorkspaceWrite,
}

impl SandboxMode {
    /// No filesystem confinement: the default, left out when a spec is written back.
    pub fn is_none(&self) -> bool {
        *self == SandboxMode::None
    }

    /// The value as written in the config (`"read-only"`).
    pub fn as_str(&self) -> &'static str {
        match self {
            SandboxMode::None => "none",
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
        }
    }
}

/// A tool's or server's whole confinement: its filesystem mode and whether it may open TCP
/// connections or listen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// `false` blocks TCP `connect` and `bind`.
    pub network: bool,
}

impl SandboxPolicy {
    /// Nothing asked for: the process runs as it always did, without Landlock.
    pub fn is_unconfined(&self) -> bool {
        self.mode.is_none() && self.network
    }
}

/// `network` is on unless the config says otherwise.
pub(crate) fn default_network() -> bool {
    true
}

/// Serde's `skip_serializing_if` for `network`: the default is not written back.
pub(crate) fn is_true(value: &bool) -> bool {
    *value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_as_written_and_reject_others() {
        #[derive(Debug, Deserialize)]
        struct T {
            sandbox: SandboxMode,
        }
        for (text, mode) in [
            ("none", SandboxMode::None),
            ("read-only", SandboxMode::ReadOnly),
            ("workspace-write", SandboxMode::WorkspaceWrite),
        ] {
            let t: T = toml::from_str(&format!("sandbox = {text:?}")).expect("parses");
            assert_eq!(t.sandbox, mode);
            assert_eq!(mode.as_str(), text);
        }
        let e = toml::from_str::<T>("sandbox = \"read_only\"").expect_err("unknown mode");
        assert!(e.to_string().contains("read-only"), "{e}");
    }

    #[test]
    fn only_the_defaults_are_unconfined() {
        let open = SandboxPolicy {
            mode: SandboxMode::None,
            network: true,
        };
        assert!(open.is_unconfined());
        assert!(
            !SandboxPolicy {
                network: false,
                ..open
            }
            .is_unconfined()
        );
        assert!(
            !SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                ..open
            }
            .is_unconfined()
        );
    }
}
