//! The `floe` binary's one integration-test binary: output contracts and errors on bad
//! input (`cli`), `floe replay` on trace files (`replay`), sweeps in shards (`sweep`),
//! the report page in headless Chromium (`report`), and the daemon on the real kernel
//! (`daemon`).
//!
//! The daemon's tests time what happens on the machine (a freeze within its window,
//! prepaging on idle CPU), so they run alone: each holds `MACHINE` for writing, while
//! the CLI's tests, which run simulations and experiments, hold it for reading and
//! run beside one another.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

mod cli;
mod daemon;
mod replay;
mod report;
mod sweep;

static MACHINE: RwLock<()> = RwLock::new(());

/// A share of the machine, for a test that may run beside others of its kind.
fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(|e| e.into_inner())
}

/// The whole machine, for a test that times the kernel.
fn alone() -> RwLockWriteGuard<'static, ()> {
    MACHINE.write().unwrap_or_else(|e| e.into_inner())
}
