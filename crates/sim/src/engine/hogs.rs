//! Threads that are no app's: the system's own (kernel and framework threads, the
//! device's `cpu.system_load_pct`) and Ice's cputester (`RunOptions::cputester_pct`).
//! Each thread alternates a burst of work with an idle gap, both drawn from
//! exponential laws, so that its mean demand is its share of a core.
//!
//! On a device with a `[system]` table the system's processes own pages on the LRU,
//! and a system thread's burst first touches its share of their hot sets, so that
//! what reclaim takes from them comes back as the system's refaults, and the burst
//! waits for them.

use super::{exp1, pages_of, stream, AppRt, Cont, Ctx, Ev, JobEv, Sim};
use crate::config::{AppSpec, SystemProcess, SystemSpec};
use floe_core::{AppState, Nanos, PriorityClass};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus as FastRng;

/// Assumption: a system thread's mean burst, 5 ms of a big core's work (binder calls,
/// input and display work, kernel threads), the length of a composition or a layout
/// pass; no source gives the distribution of the framework's bursts.
const SYSTEM_BURST_MS: f64 = 5.0;
/// Assumption: cputester spins in 10 ms bursts (Ice describes its tool only as one that
/// "occupies 20 % CPU utilization"). It runs one thread per core, each busy that share of
/// its time, as the usual load generators hold a utilisation target (stress-ng
/// `--cpu 0 --cpu-load P`: a worker per processor, each looping P % busy and the rest
/// asleep); a native process started from a shell, it runs outside the cached apps'
/// cpuset.
const TESTER_BURST_MS: f64 = 10.0;
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
/// taking `system_pct` of all cores' time together, and one cputester thread a core
/// taking `tester_pct`.
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
        add(HogKind::Tester, cores as usize, p, TESTER_BURST_MS);
    }
    out
}

/// The catalog-like entry of a system process: its pages and hot sets; no launch, no
/// frames, no wakeups of its own (the system threads do its work).
pub(super) fn system_spec(p: &SystemProcess) -> AppSpec {
    AppSpec {
        name: p.name.clone(),
        package: p.name.clone(),
        category: "system".into(),
        anon_mib: p.anon_mib,
        file_mib: p.file_mib,
        launch_anon_mib: 0.0,
        launch_file_mib: 0.0,
        ws_anon_mib: p.hot_anon_mib,
        ws_file_mib: p.hot_file_mib,
        cold_launch_ms: 0.0,
        warm_launch_ms: 0.0,
        frame_cpu_ms: 0.0,
        bg_period_s: f64::INFINITY,
        bg_cpu_ms: 0.0,
        bg_touch_mib: 0.0,
        saves_context: false,
        priority_class: PriorityClass::High,
        perceptible: true,
        source: "device [system]".into(),
    }
}

/// A system process as the run starts: alive since boot with all its pages mapped,
/// never killed (the killers and policies see only `apps[..n_apps]`), at its adj.
pub(super) fn system_process(a: &mut AppRt, p: &SystemProcess) {
    a.state = AppState::Cached;
    a.oom_adj = p.adj;
    a.unkillable = true;
    a.populated = a.anon;
    a.file_seen = a.file;
    a.bg_touch = 0;
    a.bg_hot_anon = pages_of(p.hot_anon_mib).min(a.anon);
    a.bg_hot_file = pages_of(p.hot_file_mib).min(a.file);
}

/// How the system threads' bursts touch the system processes' hot sets.
#[derive(Clone, Debug, Default)]
pub(super) struct SystemTouch {
    /// Pages touched per nanosecond of a system thread's work.
    per_ns: f64,
    /// Each process's hot pages, cumulated: a burst serves one process, drawn by
    /// its share of all the hot pages.
    cum_hot: Vec<u64>,
    /// The touches owed but not yet made (fractions of a page carried over).
    carry: f64,
}

impl SystemTouch {
    /// The touches of `system`'s processes, `procs` (their hot sets as `system_process`
    /// set them).
    pub(super) fn new(system: Option<&SystemSpec>, procs: &[AppRt]) -> SystemTouch {
        let Some(s) = system else { return SystemTouch::default() };
        let mut acc = 0;
        let cum_hot = procs
            .iter()
            .map(|a| {
                acc += u64::from(a.bg_hot_anon + a.bg_hot_file);
                acc
            })
            .collect();
        SystemTouch { per_ns: f64::from(pages_of(s.touch_mib_per_cpu_s)) / 1e9, cum_hot, carry: 0.0 }
    }
}

/// A draw from the exponential law of mean `mean_ms`.
fn exp_ms(rng: &mut FastRng, mean_ms: f64) -> Nanos {
    Nanos::from_ms_f64(mean_ms * exp1(rng))
}

impl Sim {
    /// Maps every system process's pages as the run starts, on the inactive lists:
    /// the hot ones are activated as the system threads touch them, the rest age.
    pub(super) fn boot_system(&mut self) {
        for i in self.n_apps as usize..self.apps.len() {
            let a = &self.apps[i];
            let (base, anon, file) = (a.base, a.anon, a.file);
            for p in base..base + anon {
                self.pages.move_to(p, crate::pages::Loc::InactiveAnon);
            }
            for p in base + anon..base + anon + file {
                self.pages.move_to(p, crate::pages::Loc::InactiveFile);
            }
        }
    }

    /// A system thread's burst of `work` touches its share of the hot sets first,
    /// one process's, in passes over the set (`Walk`); returns what the touches cost
    /// it (I/O wait and fault CPU).
    fn system_touches(&mut self, k: usize, work: Nanos) -> Ctx {
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        let st = &mut self.sys_touch;
        let Some(&all) = st.cum_hot.last().filter(|&&h| h > 0 && st.per_ns > 0.0) else {
            return ctx;
        };
        st.carry += st.per_ns * work.0 as f64;
        let n = st.carry.floor();
        st.carry -= n;
        let draw = self.hogs[k].rng.gen_range(0..all);
        let j = st.cum_hot.partition_point(|&c| c <= draw);
        let app = self.n_apps as usize + j;
        let a = &mut self.apps[app];
        let (ha, hf) = (a.bg_hot_anon, a.bg_hot_file);
        let na = (n * f64::from(ha) / f64::from(ha + hf)).round() as u32;
        let nf = n as u32 - na;
        let spread = a.bg_spread();
        let mut idx = std::mem::take(&mut self.scratch);
        let (rng, [walk_anon, walk_file]) = (&mut a.rng, &mut a.bg_walk);
        if ha > 0 {
            idx.extend((0..na).map(|_| spread.at(walk_anon.next(ha, rng))));
        }
        if hf > 0 {
            idx.extend((0..nf).map(|_| a.anon + walk_file.next(hf, rng)));
        }
        self.touch_all(app as u16, &mut idx, &mut ctx);
        self.scratch = idx;
        ctx
    }

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
        let (kind, work) = (h.kind, exp_ms(&mut h.rng, h.burst_ms));
        let ctx = match kind {
            HogKind::System => self.system_touches(k as usize, work),
            HogKind::Tester => Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO },
        };
        let work = work + ctx.cpu;
        match kind {
            HogKind::System => self.c.cpu_system_ns += work.0,
            HogKind::Tester => self.c.cpu_tester_ns += work.0,
        }
        self.c.cpu_compress_ns += ctx.compress.0;
        let cont = Cont::Hog { thread: k };
        if ctx.t > self.now {
            self.push(ctx.t, Ev::Job(Box::new(JobEv { work, app: None, cont })));
        } else {
            self.cpu.add(self.now, work, crate::cpu::WEIGHT_NORMAL, false, None, false, cont);
        }
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

#[cfg(test)]
mod tests {
    use super::super::{measuring_sim_with_a_cached_app, Sim};
    use crate::pages::Loc;
    use crate::ReclaimKind;
    use floe_core::{AppId, Nanos, SystemView};

    fn resident(sim: &Sim, app: u16, anon: bool) -> u32 {
        let lists = if anon { [Loc::InactiveAnon, Loc::ActiveAnon] } else { [Loc::InactiveFile, Loc::ActiveFile] };
        lists.iter().map(|&l| sim.pages.count(app, l)).sum()
    }

    /// cputester holds its share of all cores as a load generator does, a thread on every
    /// core busy that share of its time; the system's threads are one a core as well.
    #[test]
    fn cputester_runs_a_thread_a_core_each_busy_its_share() {
        let hogs = super::hogs(1, 8, Some(40.0), Some(20.0));
        let duty = |h: &super::Hog| h.burst_ms / (h.burst_ms + h.idle_ms);
        let tester: Vec<_> = hogs.iter().filter(|h| h.kind == super::HogKind::Tester).collect();
        assert_eq!(tester.len(), 8);
        assert!(tester.iter().all(|h| (duty(h) - 0.2).abs() < 1e-9), "{:?}", tester.iter().map(|h| duty(h)).collect::<Vec<_>>());
        let system: Vec<_> = hogs.iter().filter(|h| h.kind == super::HogKind::System).collect();
        assert_eq!(system.len(), 8);
        assert!(system.iter().all(|h| (duty(h) - 0.4).abs() < 1e-9));
        assert_eq!(super::hogs(1, 4, None, Some(20.0)).len(), 4, "a thread a core on a quad-core");
    }

    /// The P20's system processes map all their pages at boot, out of the system's
    /// reserve (free memory is what the device leaves to apps); they are no app to
    /// policies; what reclaim takes from them comes back as the system's refaults,
    /// and only their hot sets come back.
    #[test]
    fn system_pages_come_out_of_the_reserve_and_only_their_hot_sets_refault() {
        let (mut sim, t, _) = measuring_sim_with_a_cached_app();
        let n = sim.n_apps;
        assert!(sim.apps.len() > n as usize, "the P20 has system processes");
        assert_eq!(sim.apps().len(), n as usize, "policies see the apps alone");
        assert!(sim.app(AppId(n)).is_none(), "a system process is no app to a policy");
        let ui = sim.apps.iter().position(|a| a.spec.name == "systemui").unwrap() as u16;
        let (hot_anon, hot_file) = (sim.apps[ui as usize].bg_hot_anon, sim.apps[ui as usize].bg_hot_file);
        let (anon, file) = (sim.apps[ui as usize].anon, sim.apps[ui as usize].file);
        assert!(hot_anon < anon / 2 && hot_file < file / 2);
        let (got_anon, got_file) = sim.per_process_reclaim("systemui", ReclaimKind::All).unwrap();
        assert!(got_anon > u64::from(anon) / 2 && got_file > u64::from(file) / 2, "{got_anon} {got_file}");
        let before = (sim.c.refaults_system, sim.c.refaults);
        assert!(sim.run_until(t + Nanos::from_secs_f64(60.0)));
        let back = sim.c.refaults_system - before.0;
        assert!(back > 0, "the system threads touch SystemUI's hot set again");
        // Its pages come back no further than its hot sets (file faults read whole
        // aligned clusters around the hot prefix).
        let (res_anon, res_file) = (resident(&sim, ui, true), resident(&sim, ui, false));
        assert!(res_anon > 0 && res_anon <= hot_anon, "{res_anon} of {hot_anon}");
        assert!(res_file > 0 && res_file <= hot_file + super::super::FILE_CLUSTER, "{res_file} of {hot_file}");
        sim.check_invariants().unwrap();
    }

    /// At boot every system page is resident and free memory is the memory the device
    /// leaves to apps, as if the system processes were the fixed reserve: on both of
    /// Ice's phones, which list their processes.
    #[test]
    fn at_boot_free_memory_is_what_the_device_leaves_to_apps() {
        let cat = crate::Catalog::embedded().unwrap();
        let wl = crate::Workload::load("ice-video-call", &cat).unwrap();
        for device in ["p20", "pixel3"] {
            let dev = crate::Device::load(device).unwrap();
            let sim = Sim::new(&dev, &wl, &cat, floe_policies::make("lru-cfs").unwrap(), &Default::default());
            assert!(sim.apps.len() > sim.n_apps as usize + 5, "{device} lists the system's processes");
            let sys: u32 = sim.apps[sim.n_apps as usize..].iter().map(|a| a.anon + a.file).sum();
            let mapped: u32 = (sim.n_apps..sim.apps.len() as u16).map(|a| resident(&sim, a, true) + resident(&sim, a, false)).sum();
            assert_eq!(mapped, sys, "{device}");
            assert_eq!(sim.free(), i64::from(super::pages_of(dev.memory.app_mem_mib)), "{device}");
            sim.check_invariants().unwrap();
        }
    }
}
