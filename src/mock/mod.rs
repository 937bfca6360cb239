//! The scripted mock Kimi server (axum on loopback). To be written.

use crate::cli::MockArgs;

pub fn run_cli(_args: &MockArgs) -> anyhow::Result<()> {
    anyhow::bail!("the mock server is not written yet")
}
