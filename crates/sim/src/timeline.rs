//! A run sampled at a fixed step of simulated time, like `vmstat 1`: what memory held
//! at the end of each step and what happened during it (frames, reclaim, refaults,
//! kills, freezes, CPU and flash traffic). The whole run is covered, the part before
//! the workload's measured part included; each sample says which part it is in.

use crate::engine::{RunOptions, Sim, Snapshot};
use crate::{policy_params, Catalog, Device, SimError, Workload};
use floe_core::timeline::mib_of_pages as mib;
use floe_core::{Nanos, RunRecord, Sample};

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// The step from `a` to `b`, ending at `end`.
fn between(policy: &str, a: &Snapshot, b: &Snapshot, end: Nanos) -> Sample {
    let secs = (end.0 - a.t.0.min(end.0)) as f64 / 1e9;
    let d = |x: u64, y: u64| y - x;
    let frames = d(a.frames, b.frames);
    Sample {
        policy: policy.to_string(),
        t_s: end.0 as f64 / 1e9,
        measured: Some(b.measuring),
        fg_app: b.fg_app.clone().unwrap_or_default(),
        frames: Some(frames),
        fps: Some(if secs > 0.0 { (frames as f64 / secs * 100.0).round() / 100.0 } else { 0.0 }),
        janky_frames: Some(d(a.janky_frames, b.janky_frames)),
        free_mib: mib(b.free_pages as f64),
        anon_lru_mib: mib(b.anon_lru_pages as f64),
        file_lru_mib: mib(b.file_lru_pages as f64),
        zram_stored_mib: mib(b.zram_stored_pages as f64),
        zram_pool_mib: mib(b.zram_pool_pages as f64),
        flash_swap_mib: mib(b.flash_swap_pages as f64),
        writeback_mib: mib(b.writeback_pages as f64),
        apps_alive: b.apps_alive,
        apps_frozen: b.apps_frozen,
        reclaimed_pages: d(a.reclaimed_pages, b.reclaimed_pages),
        direct_reclaimed_pages: d(a.direct_reclaimed_pages, b.direct_reclaimed_pages),
        refaults_fg_anon: d(a.refaults[1][0], b.refaults[1][0]),
        refaults_fg_file: d(a.refaults[1][1], b.refaults[1][1]),
        refaults_bg_anon: d(a.refaults[0][0], b.refaults[0][0]),
        refaults_bg_file: d(a.refaults[0][1], b.refaults[0][1]),
        kills: d(a.kills, b.kills),
        freezes: d(a.freezes, b.freezes),
        thaws: d(a.thaws, b.thaws),
        cpu_ms_app: Some(ms(d(a.cpu_app_ns, b.cpu_app_ns))),
        cpu_ms_kswapd: Some(ms(d(a.cpu_kswapd_ns, b.cpu_kswapd_ns))),
        cpu_ms_compress: Some(ms(d(a.cpu_compress_ns, b.cpu_compress_ns))),
        flash_read_kib: Some(d(a.flash_read_bytes, b.flash_read_bytes) / 1024),
        flash_write_kib: Some(d(a.flash_write_bytes, b.flash_write_bytes) / 1024),
    }
}

/// Runs like [`crate::run`] and also samples the run every `step` of simulated time,
/// handing each sample to `each` as soon as its step is over (a long run at a fine step
/// is never held in memory); `each` returns false to stop the run there
/// ([`SimError::Stopped`]). The record is the same as [`crate::run`] gives for the same
/// inputs: sampling only reads the state between events.
pub fn run_with_timeline(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policy: &str,
    opts: &RunOptions,
    step: Nanos,
    mut each: impl FnMut(Sample) -> bool,
) -> Result<RunRecord, SimError> {
    if step.0 == 0 {
        return Err(SimError::Policy("timeline step must be longer than 0 s".into()));
    }
    let p = floe_policies::make_spec(policy).map_err(SimError::Policy)?;
    let name = p.name().to_string();
    let mut sim = Sim::try_new(device, workload, catalog, p, opts)?;
    let mut prev = sim.snapshot();
    let mut end = Nanos::ZERO;
    loop {
        end = Nanos(end.0.saturating_add(step.0));
        let more = sim.run_until(end);
        let now = sim.snapshot();
        // The last step ends with the run's last event.
        let step_end = if more { end } else { now.t.max(prev.t) };
        if (more || step_end > prev.t) && !each(between(&name, &prev, &now, step_end)) {
            return Err(SimError::Stopped);
        }
        prev = now;
        prev.t = step_end;
        if !more {
            break;
        }
    }
    let mut rec = sim.finish()?;
    policy_params(&mut rec, policy);
    Ok(rec)
}
