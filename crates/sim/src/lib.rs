//! floe-sim: a fast, deterministic discrete-event simulator of a phone's memory system.
//!
//! [`run`] plays a [`Workload`] on a [`Device`] under one policy and returns the run's
//! metrics. The model (DESIGN.md "Simulator model") lives in [`engine`]; the page
//! table and LRU lists in [`pages`], and the kernel's steps over them in [`lru`]; CPU
//! sharing in [`cpu`]; the flash queue in [`flash`]; input files in [`config`];
//! [`timeline`] samples a run over time; [`replay`] runs the page-cache model on a
//! standard cache trace.

pub mod config;
pub mod cpu;
pub mod engine;
pub mod flash;
pub mod lru;
pub mod pages;
pub mod replay;
pub mod timeline;

pub use config::{AppSpec, Catalog, ConfigError, Device, SystemProcess, SystemSpec, Workload, MAX_RUN_S};
pub use engine::{bg_window_fits, ReclaimKind, RunOptions, Sim, Snapshot};
pub use floe_core::Sample;
pub use timeline::run_with_timeline;

use floe_core::RunRecord;

/// Errors of a simulation run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Policy(String),
    /// A run's options, policy parameters and workload do not fit together on its
    /// device (more background apps than the workload holds, a balloon or an SL1 too
    /// large for the device).
    #[error("{0}")]
    Run(String),
    /// A timeline's reader asked to stop the run.
    #[error("the run was stopped by its timeline's reader")]
    Stopped,
}

/// Runs `policy` on `device` with `workload` and returns the run record; inputs that do
/// not fit together are an error (see [`Sim::try_new`]).
pub fn run(device: &Device, workload: &Workload, catalog: &Catalog, policy: &str, opts: &RunOptions) -> Result<RunRecord, SimError> {
    let p = floe_policies::make_spec(policy).map_err(SimError::Policy)?;
    let mut rec = run_policy(device, workload, catalog, p, opts)?;
    policy_params(&mut rec, policy);
    Ok(rec)
}

/// [`run`] with a policy object instead of a registered name: a policy written outside
/// floe runs here unchanged (crates/sim/examples/own_policy.rs,
/// docs/ADDING-A-POLICY.md). The record names the policy by [`Policy::name`].
///
/// [`Policy::name`]: floe_core::Policy::name
pub fn run_policy(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policy: Box<dyn floe_core::Policy>,
    opts: &RunOptions,
) -> Result<RunRecord, SimError> {
    let mut sim = Sim::try_new(device, workload, catalog, policy, opts)?;
    sim.run_to_end();
    sim.finish()
}

/// Records the parameters a policy spec gave after its name (`seal:k=2` -> `k=2`).
fn policy_params(rec: &mut RunRecord, policy: &str) {
    if let Some((_, params)) = policy.split_once(':') {
        rec.params.insert("policy_params".into(), floe_core::Param::Text(params.into()));
    }
}
