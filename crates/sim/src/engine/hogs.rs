//! Threads that only take CPU: the system's own (kernel and framework threads, the
//! device's `cpu.system_load_pct`) and Ice's cputester (`RunOptions::cputester_pct`).
//! Each thread alternates a burst of work with an idle gap, both drawn from
//! exponential laws, so that its mean demand is its share of a core.

use super::{stream, Cont, Ev, Sim};
use floe_core::Nanos;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus as FastRng;

/// Assumption: a system thread's mean burst, 5 ms of a big core's work (binder calls,
/// input and display work, kernel threads), the length of a composition or a layout
/// pass; no source gives the distribution of the framework's bursts.
const SYSTEM_BURST_MS: f64 = 5.0;
/// Assumption: cputester spins in 10 ms bursts on two threads (Ice does not describe
/// its tool beyond "occupies 20 % CPU utilization"); a native process started from a
/// shell, it runs outside the cached apps' cpuset.
const TESTER_BURST_MS: f64 = 10.0;
const TESTER_THREADS: usize = 2;
/// Seed component of the first hog thread's random stream.
const HOG_STREAM: u64 = 500;

/// Who a hog thread works for, for the CPU counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum HogKind {
    System,
    Tester,
}

/// One thread that only takes CPU.
#[derive(Clone, Debug)]
pub(super) struct Hog {
    pub(super) kind: HogKind,
    burst_ms: f64,
    idle_ms: f64,
    rng: FastRng,
}

/// The hog threads of a run on a device with `cores` cores: one system thread a core
/// taking `system_pct` of all cores' time together, and cputester's threads taking
/// `tester_pct`.
pub(super) fn hogs(seed: u64, cores: u32, system_pct: Option<f64>, tester_pct: Option<f64>) -> Vec<Hog> {
    let mut out = Vec::new();
    let mut add = |kind, threads: usize, pct: f64, burst_ms: f64| {
        // Each thread's share of a core: the group's share of all cores over its threads.
        let duty = (pct / 100.0 * f64::from(cores) / threads as f64).min(0.99);
        if duty > 0.0 {
            for _ in 0..threads {
                let rng = stream(seed, HOG_STREAM + out.len() as u64);
                out.push(Hog { kind, burst_ms, idle_ms: burst_ms * (1.0 - duty) / duty, rng });
            }
        }
    };
    if let Some(p) = system_pct {
        add(HogKind::System, cores as usize, p, SYSTEM_BURST_MS);
    }
    if let Some(p) = tester_pct {
        add(HogKind::Tester, TESTER_THREADS, p, TESTER_BURST_MS);
    }
    out
}

/// A draw from the exponential law of mean `mean_ms`.
fn exp_ms(rng: &mut FastRng, mean_ms: f64) -> Nanos {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    Nanos::from_ms_f64(-mean_ms * u.ln())
}

impl Sim {
    /// Starts every hog thread after an idle gap of its own.
    pub(super) fn start_hogs(&mut self) {
        for k in 0..self.hogs.len() {
            let h = &mut self.hogs[k];
            let gap = exp_ms(&mut h.rng, h.idle_ms);
            self.push(gap, Ev::HogWake { thread: k as u16 });
        }
    }

    /// Hog thread `k` wakes with a burst of work.
    pub(super) fn hog_wake(&mut self, k: u16) {
        let h = &mut self.hogs[k as usize];
        let work = exp_ms(&mut h.rng, h.burst_ms);
        match h.kind {
            HogKind::System => self.c.cpu_system_ns += work.0,
            HogKind::Tester => self.c.cpu_tester_ns += work.0,
        }
        self.cpu.add(self.now, work, crate::cpu::WEIGHT_NORMAL, false, None, false, Cont::Hog { thread: k });
    }

    /// Hog thread `k`'s burst is done: it sleeps until its next.
    pub(super) fn hog_done(&mut self, k: u16) {
        let Some(h) = self.hogs.get_mut(k as usize) else {
            return;
        };
        let gap = exp_ms(&mut h.rng, h.idle_ms);
        self.push(self.after(gap), Ev::HogWake { thread: k });
    }
}
