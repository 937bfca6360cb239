//! Integration tests of kimi-mock: the scripted server over real HTTP on loopback.
//!
//! One test binary for the crate (one link, one process): each file under `suite/` is a module.

// A test binary: a failed unwrap in a helper is a failed test, as in the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
