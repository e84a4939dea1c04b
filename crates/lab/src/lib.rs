//! floe-lab: experiment specifications, the runner and reports. The paper
//! reproductions (`floe experiment NAME`) land here; for now it runs a set of policies
//! side by side on one device and workload.

use floe_core::RunRecord;
use floe_sim::{Catalog, Device, RunOptions, SimError, Workload};

/// Runs each policy on the same device, workload and options, in order.
pub fn compare(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policies: &[String],
    opts: &RunOptions,
) -> Result<Vec<RunRecord>, SimError> {
    policies.iter().map(|p| floe_sim::run(device, workload, catalog, p, opts)).collect()
}
