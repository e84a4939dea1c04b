//! The Ice paper's evaluation (Li et al., ACM TOCS 2025, §2.2, §3.2 and §6.1): the
//! motivation (Table 1's background CPU, Fig. 1, Fig. 2(a), Fig. 2(b)'s 30 s slices), the
//! per-process reclaim test (Fig. 4), frame rate and
//! interaction alerts in four scenarios on the Pixel3 (6 background apps) and the P20
//! (8), refaults and reclaims (Fig. 11), power-manager freezing (Table 5) and the
//! background-app sweep (Fig. 10), app launching over 10 rounds of Table 3's apps
//! (Fig. 12), for LRU+CFS, UCSG, Acclaim, power-manager freezing, Ice and Ice+. Every
//! frame-rate scenario is repeated over background-app draws (seeds), as Ice re-draws
//! its background apps each round.

use crate::report::{
    against_bar, also, mean_where, paired_cut_stderr, pct_cut, value, versus, Comparison, PaperFigure, Report, Table, Want,
};
use crate::RunSpec;
use floe_core::{Finding, Metrics, Nanos, RunRecord};
use floe_sim::SimError;

const DEVICES: [(&str, usize); 2] = [("pixel3", 6), ("p20", 8)];
pub(crate) const SCENARIOS: [(&str, &str); 4] =
    [("S-A", "ice-video-call"), ("S-B", "ice-short-video"), ("S-C", "ice-scrolling"), ("S-D", "ice-game")];
const POLICIES: [&str; 6] = ["lru-cfs", "ucsg", "acclaim", "power-freezer", "ice", "ice-plus"];
/// §6.1.2's launch experiment: Table 3's 20 apps, 10 rounds of 30 s each.
const LAUNCH_WORKLOAD: &str = "ice-launch";

/// Published figures quoted in Ice's text and tables.
pub(crate) mod paper {
    /// §2.2.2 / Fig. 1(a): the video call's FPS with no app cached (BG-null), and its
    /// change with eight apps cached (BG-apps), percent.
    pub const FIG1_SA_NULL_FPS: f64 = 42.2;
    pub const FIG1_SA_APPS_FPS_PCT: f64 = -51.7;
    /// §2.2.3: FPS change with memtester in the background, mean of the scenarios.
    pub const FIG1_MEMTESTER_FPS_PCT: f64 = -27.8;
    /// §2.2.3: memtester's case: "The size of occupied memory is 5.52GB in total,
    /// similar to that of the BG-apps case", GiB of the P20's 6 GB, the system's included.
    pub const MEMTESTER_TOTAL_GIB: f64 = 5.52;
    /// §2.2.3: BG-cputester, "a self-developed tool that occupies CPU resources but does
    /// not introduce big memory pressure", takes this percentage of the CPU, and the FPS
    /// change it causes against BG-null, percent, on average over the scenarios.
    pub const CPUTESTER_PCT: f64 = 20.0;
    pub const FIG1_CPUTESTER_FPS_PCT: f64 = -6.3;
    /// Fig. 2(a): reclaimed and refaulted pages in total, BG-null, BG-memtester,
    /// BG-apps (the scenario is not stated; floe compares S-A's).
    pub const FIG2A: [(f64, f64); 3] = [(76.0, 3.0), (55_637.0, 1_351.0), (102_581.0, 38_924.0)];
    /// §2.2.3 / Fig. 2(b): the BG-apps runs of the four scenarios cut into 30 s slices
    /// and sorted by background refaults; FPS in the slices with the fewest (the 0th to
    /// 10th percentile), and its change in those with the most (90th to 100th), percent.
    pub const FIG2B_FEW_FPS: f64 = 47.2;
    pub const FIG2B_MANY_FPS_PCT: f64 = -60.6;
    /// §3.2 / Fig. 4: apps tested; "more than 30 %" of the reclaimed pages refault
    /// within 30 s; 51.4 % of those refaults are anonymous (48.6 % file-backed).
    pub const FIG4_APPS: f64 = 40.0;
    /// §2.2.3 / Table 1 (P20): CPU utilisation, percent, average and peak, with 0, 2, 4,
    /// 6, 8 apps cached and no foreground app.
    pub const TABLE1: [(f64, f64); 5] = [(43.0, 52.0), (46.0, 58.0), (47.0, 63.0), (51.0, 67.0), (55.0, 69.0)];
    pub const FIG4_REFAULTED_PCT: f64 = 30.0;
    pub const FIG4_ANON_SHARE_PCT: f64 = 51.4;
    /// §2.2.3 / Fig. 3(b), the P20 over a day of use: refaults as a share of reclaims
    /// ("finally fluctuated at a high level (38%)") and the background processes' share
    /// of the refaults ("65% of refaults are caused by BG processes"), percent.
    pub const FIG3_P20_REFAULT_RATIO_PCT: f64 = 38.0;
    pub const FIG3_P20_BG_SHARE_PCT: f64 = 65.0;
    /// §2.2.3 / Fig. 3(a), the eight users' phones on average: "39% of evicted pages are
    /// moved back" and "more than 60% of refaults are caused by BG processes".
    pub const FIG3_REFAULT_RATIO_PCT: f64 = 39.0;
    pub const FIG3_BG_SHARE_PCT: f64 = 60.0;
    /// §6.1.1: video call (S-A) on the Pixel3, FPS.
    pub const FPS_PIXEL3_SA: [(&str, f64); 4] = [("lru-cfs", 25.4), ("ucsg", 29.3), ("acclaim", 24.1), ("ice", 37.2)];
    /// §6.1.1: PUBG (S-D) on the P20, RIA.
    pub const RIA_P20_SD: [(&str, f64); 2] = [("lru-cfs", 0.46), ("ice", 0.28)];
    /// §6.1.1 / Fig. 10: FPS gain of Ice over LRU+CFS and RIA reduction at 6B+F
    /// (Pixel3) and 8B+F (P20).
    pub const FPS_GAIN: [(&str, f64); 2] = [("pixel3", 1.57), ("p20", 1.44)];
    pub const RIA_CUT_PCT: [(&str, f64); 2] = [("pixel3", 32.7), ("p20", 34.6)];
    /// Fig. 11 (P20): refault reduction of Ice against LRU+CFS, percent.
    pub const REFAULT_CUT_PCT: [(&str, f64); 4] = [("S-A", 42.1), ("S-B", 44.4), ("S-C", 57.6), ("S-D", 40.5)];
    /// Fig. 11: Ice's reclaims as a share of LRU+CFS's, percent, mean of scenarios.
    pub const RECLAIM_SHARE_PCT: f64 = 70.7;
    /// §6.1.1, of Fig. 11's runs (P20, eight background apps): "During the evaluation
    /// with Ice, only four BG applications on average are frozen."
    pub const APPS_FROZEN: f64 = 4.0;
    /// Fig. 11: UCSG's refault and reclaim reductions as a share of Ice's, percent.
    pub const UCSG_OF_ICE_PCT: (f64, f64) = (51.7, 53.9);
    /// Table 5 (P20, x1000 pages): power manager refault, reclaim; Ice refault, reclaim.
    pub const TABLE5: [(&str, [f64; 4]); 4] = [
        ("S-A", [6.712, 20.063, 5.233, 18.688]),
        ("S-B", [7.332, 26.061, 6.457, 24.832]),
        ("S-C", [3.856, 15.772, 2.929, 13.312]),
        ("S-D", [14.858, 51.433, 12.18, 46.848]),
    ];
    /// §6.1.1: power manager against LRU+CFS, reduction of reclaims and refaults, percent.
    pub const POWER_CUT_PCT: (f64, f64) = (22.4, 33.5);
    /// Table 6 (x1000 pages): reclaims under Ice, Ice+; refaults under Ice, Ice+, per
    /// device and scenario.
    pub const TABLE6: [(&str, &str, [f64; 4]); 8] = [
        ("pixel3", "S-A", [21.372, 16.256, 8.737, 7.618]),
        ("p20", "S-A", [18.688, 13.375, 5.233, 5.122]),
        ("pixel3", "S-B", [19.637, 16.254, 10.526, 8.662]),
        ("p20", "S-B", [24.832, 19.938, 6.457, 4.434]),
        ("pixel3", "S-C", [17.618, 15.261, 5.533, 5.006]),
        ("p20", "S-C", [13.312, 12.127, 2.929, 3.128]),
        ("pixel3", "S-D", [53.761, 50.535, 18.632, 16.736]),
        ("p20", "S-D", [46.848, 41.336, 12.18, 10.628]),
    ];
    /// Table 6 summary: Ice+'s reclaims and refaults as a share of Ice's, percent.
    pub const ICE_PLUS_SHARE_PCT: (f64, f64) = (85.52, 87.34);
    /// §6.1.2 / Fig. 12(a): mean cold launch under LRU+CFS, ms; Ice's cut of the cold
    /// and of all launches, percent. The phone is not stated.
    pub const COLD_LRU_MS: f64 = 4237.0;
    pub const COLD_ICE_CUT_PCT: f64 = 28.8;
    pub const LAUNCH_ICE_CUT_PCT: f64 = 36.6;
    /// §6.1.2: hot launch under LRU+CFS, ms, derived: the worst case with Ice, 839 ms,
    /// "is 1.98x of the hot launching latency with LRU+CFS".
    pub const HOT_LRU_MS: f64 = 839.0 / 1.98;
    /// §6.1.2 / Fig. 12(b): apps hot-launched per round after the first under LRU+CFS
    /// ("only seven or eight"), and Ice's gain over it, percent ("25% more").
    pub const HOT_PER_ROUND_LRU: f64 = 7.5;
    pub const HOT_ICE_GAIN_PCT: f64 = 25.0;
}

/// All the refaults of a run, the apps' and the system processes': Ice counts the
/// device's (Fig. 2(a): "in total"; Fig. 11).
fn refaults(m: &Metrics) -> f64 {
    (m.refaults_fg_anon + m.refaults_fg_file + m.refaults_bg_anon + m.refaults_bg_file + m.refaults_system) as f64
}

/// Mean of `f` over the evaluation's runs (background apps drawn, no balloon) matching
/// device, workload, policy and background count.
fn mean(runs: &[RunRecord], dev: &str, wl: &str, policy: &str, bg: usize, f: impl Fn(&Metrics) -> f64) -> f64 {
    mean_where(runs, |r| r.policy == policy && evaluation(r, dev, wl, bg), f)
}

/// An evaluation run (background apps drawn, no balloon) of this device, workload and
/// background count, any policy.
fn evaluation(r: &RunRecord, dev: &str, wl: &str, bg: usize) -> bool {
    evaluation_with_killer(r, dev, wl, bg, false)
}

/// An evaluation run with the device's own killer (`replaced` false) or another
/// (`RunSpec::lmkd`: Table 6's what-if).
fn evaluation_with_killer(r: &RunRecord, dev: &str, wl: &str, bg: usize, replaced: bool) -> bool {
    r.device == dev
        && r.workload == wl
        && r.params.get("bg_apps") == Some(&floe_core::Param::Int(bg as i64))
        && !motivation(r)
        && crate::killer_replaced(r) == replaced
}

/// A run of the §2.2 motivation cases: Fig. 1's fixed background set, or memtester.
fn motivation(r: &RunRecord) -> bool {
    fixed_set(r) || ballooned(r)
}

/// The run cached the workload's fixed background set (Fig. 1's apps), not a draw.
fn fixed_set(r: &RunRecord) -> bool {
    r.params.get("bg_fixed") == Some(&floe_core::Param::Bool(true))
}

/// A run of §2.2's BG-apps case: Fig. 1's fixed background set cached, no balloon.
fn bg_apps_case(r: &RunRecord) -> bool {
    fixed_set(r) && !ballooned(r) && r.params.get("bg_apps") != Some(&floe_core::Param::Int(0))
}

/// A run of §2.2's BG-memtester case: memtester's balloon, no app cached.
fn memtester_case(r: &RunRecord) -> bool {
    ballooned(r) && r.params.get("bg_apps") == Some(&floe_core::Param::Int(0))
}

/// The run pinned memory away from apps (BG-memtester).
fn ballooned(r: &RunRecord) -> bool {
    r.params.get("balloon_mib").is_some_and(|b| *b != floe_core::Param::Float(0.0))
}

/// §2.2.3's BG-memtester case on the P20, MiB: memtester brought the memory occupied
/// in total to 5.52 GB ("similar to that of the BG-apps case"), the system's own use
/// included. floe pins that total less the system's share (`ram_mib - app_mem_mib`),
/// in whole MiB, up to the largest balloon the device takes (`Device::balloon_fits`:
/// below memory for apps less twice the high watermark, as `floe sim --balloon-mib`
/// allows).
pub fn memtester_mib() -> Result<f64, SimError> {
    Ok(memtester_on(&floe_sim::Device::load(MOTIVATION_DEVICE)?))
}

/// [`memtester_mib`] on `dev`.
fn memtester_on(dev: &floe_sim::Device) -> f64 {
    let system_mib = dev.memory.ram_mib - dev.memory.app_mem_mib;
    let want_mib = (paper::MEMTESTER_TOTAL_GIB * 1024.0 - system_mib).floor();
    // A balloon must be smaller than the room: the largest whole MiB below it.
    let largest_mib = dev.balloon_room_mib().ceil() - 1.0;
    want_mib.min(largest_mib).max(0.0)
}

/// The device of Ice's §2.2 motivation (Fig. 1, Fig. 2).
pub(crate) const MOTIVATION_DEVICE: &str = "p20";
/// Fig. 2(b)'s time slices, seconds (§2.2.3: "Each time slice contains 30 seconds of
/// frame rendering information").
const FIG2B_SLICE_S: usize = 30;

/// Builds the run list. `quick`: 2 draws of 60 s each instead of 10 of the workload's
/// 300 s; same devices, scenarios and policies.
pub fn specs(quick: bool) -> Vec<RunSpec> {
    let (seeds, use_s) = if quick { (1..=2u64, Some(60.0)) } else { (1..=10u64, None) };
    let mut v = Vec::new();
    for (dev, n) in DEVICES {
        for (_, wl) in SCENARIOS {
            for seed in seeds.clone() {
                for policy in POLICIES {
                    // §6.1.1: every round re-draws the background apps from Table 3.
                    v.push(RunSpec { seed, bg_apps: Some(n), use_s, draw_bg: true, ..RunSpec::new(dev, wl, policy) });
                }
                // Fig. 10's sweep: fewer background apps, LRU+CFS and Ice.
                for bg in [0, 2] {
                    for policy in ["lru-cfs", "ice"] {
                        v.push(RunSpec { seed, bg_apps: Some(bg), use_s, draw_bg: true, ..RunSpec::new(dev, wl, policy) });
                    }
                }
            }
        }
        // Table 6 again with Android 10 lmkd's default PSI mode on both phones (a
        // what-if), to show what Ice+'s exclusivity owes to a killer that acts on
        // memory stalls.
        for (_, wl) in SCENARIOS {
            for seed in seeds.clone() {
                for policy in ["ice", "ice-plus"] {
                    v.push(RunSpec {
                        seed,
                        bg_apps: Some(n),
                        use_s,
                        draw_bg: true,
                        lmkd: Some(floe_core::LmkdMode::Psi),
                        ..RunSpec::new(dev, wl, policy)
                    });
                }
            }
        }
        // §6.1.2: the launch experiment, one run per policy (its 10 rounds in one run),
        // each round in a fresh random order (the paper gives none; see `launch_table`)
        // and in Table 3's order every round.
        for shuffle_rounds in [false, true] {
            for policy in POLICIES {
                v.push(RunSpec { rounds: quick.then_some(3), shuffle_rounds, ..RunSpec::new(dev, LAUNCH_WORKLOAD, policy) });
            }
        }
    }
    v
}

/// §2.2 (Fig. 1, Fig. 2(a)) on the P20 under LRU+CFS: BG-apps (Fig. 1's fixed eight
/// apps) and BG-memtester (a balloon of `memtester_mib`); BG-null is the evaluation's
/// 0B+F run.
fn motivation_specs(quick: bool, memtester_mib: f64) -> Vec<RunSpec> {
    let (seeds, use_s) = if quick { (1..=2u64, Some(60.0)) } else { (1..=10u64, None) };
    let mut v = Vec::new();
    for (_, wl) in SCENARIOS {
        for seed in seeds.clone() {
            for (bg, balloon) in [(8, None), (0, Some(memtester_mib))] {
                // Fig. 2(b) cuts the BG-apps runs into 30 s slices, made of 1 s samples;
                // the memtester runs' slices show whether reclaim goes on throughout.
                let slice_s = Some(1.0);
                v.push(RunSpec {
                    seed,
                    bg_apps: Some(bg),
                    use_s,
                    balloon_mib: balloon,
                    slice_s,
                    ..RunSpec::new(MOTIVATION_DEVICE, wl, "lru-cfs")
                });
            }
        }
    }
    v
}

/// Runs the Ice experiment and builds its tables.
pub fn run(quick: bool, seeds: u32, progress: crate::Progress) -> Result<Report, SimError> {
    let mut specs = specs(quick);
    specs.extend(motivation_specs(quick, memtester_mib()?));
    // Table 1 and Fig. 4 come from runs of their own, made once.
    let (fig4, t1) = (fig4_table(&per_process_reclaim()?), table1(&background_cpu(&TABLE1_BG)?));
    let report = |runs| {
        let mut rep = report(runs, quick);
        rep.tables.insert(2, fig4.clone());
        rep.tables.insert(0, t1.clone());
        rep
    };
    crate::run_replicated(&specs, seeds, progress, report, |t, _| findings(t))
}

/// Table 1's background apps, and its rounds (§2.2.3: "Each evaluation is conducted for
/// 10 rounds"; the apps are drawn afresh from 20 popular apps each time).
const TABLE1_BG: [usize; 5] = [0, 2, 4, 6, 8];
const TABLE1_ROUNDS: u64 = 10;
/// §2.2.3: "The BG applications stay in the BG for 10 seconds with no FG application."
const TABLE1_IDLE_S: u64 = 10;

/// CPU utilisation over Table 1's 10 s, mean and highest second, as fractions of the
/// device's cores.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Utilisation {
    pub(crate) mean: f64,
    pub(crate) peak: f64,
}

/// §2.2.3 / Table 1 on the P20 under LRU+CFS, for each N of `ns`: N apps drawn from
/// Table 3's 20 (seeded by the round) are each launched and used for 30 s, then left on
/// the home screen; the CPU the simulated phone spends in the 10 s after the last one
/// leaves the foreground, with N apps cached and none in the foreground. For N = 0 one
/// app is launched, used and killed as it leaves the foreground ([`KillOnLeaving`]), so
/// that nothing is cached. Utilisation is the cores' busy time, the system's own threads
/// (the device's `cpu.system_load_pct`) included.
pub(crate) fn background_cpu(ns: &[usize]) -> Result<Vec<(usize, Utilisation)>, SimError> {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    use rayon::prelude::*;
    let catalog = floe_sim::Catalog::embedded()?;
    let launch = floe_sim::Workload::load(LAUNCH_WORKLOAD, &catalog)?;
    let device = floe_sim::Device::load(MOTIVATION_DEVICE)?;
    let cases: Vec<(usize, u64)> = ns.iter().flat_map(|&n| (1..=TABLE1_ROUNDS).map(move |r| (n, r))).collect();
    cases
        .par_iter()
        .map(|&(n, round)| {
            let mut wl = launch.clone();
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(round);
            wl.sequence.shuffle(&mut rng);
            wl.sequence.truncate(n.max(1));
            wl.rounds = 1;
            wl.idle_s = TABLE1_IDLE_S as f64;
            let mut policy = floe_policies::make_spec("lru-cfs").map_err(SimError::Policy)?;
            if n == 0 {
                policy = Box::new(KillOnLeaving { inner: policy });
            }
            let mut sim = floe_sim::Sim::try_new(&device, &wl, &catalog, policy, &floe_sim::RunOptions::default())?;
            let last = wl.sequence.last().cloned().unwrap_or_default();
            let mut t = crate::run_until_left_foreground(&mut sim, &last)?;
            // Busy time of the cores, whoever ran, as a trace counts utilisation.
            let busy = |sim: &floe_sim::Sim| sim.snapshot().cpu_busy_ns;
            let second = Nanos::from_secs_f64(1.0);
            let cores = f64::from(device.cpu.cores);
            let mut seconds = Vec::new();
            let mut prev = busy(&sim);
            for _ in 0..TABLE1_IDLE_S {
                t += second;
                sim.run_until(t);
                let now = busy(&sim);
                seconds.push((now - prev) as f64 / (second.0 as f64 * cores));
                prev = now;
            }
            let mean = seconds.iter().sum::<f64>() / seconds.len() as f64;
            Ok((n, Utilisation { mean, peak: seconds.iter().copied().fold(0.0, f64::max) }))
        })
        .collect()
}

/// `lru-cfs` that also kills each app as it leaves the foreground for the home screen:
/// Table 1's no-app row, nothing cached and nothing in the foreground.
struct KillOnLeaving {
    inner: Box<dyn floe_core::Policy>,
}

impl floe_core::Policy for KillOnLeaving {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn setup(&self) -> floe_core::Setup {
        let s = self.inner.setup();
        floe_core::Setup { events: floe_core::EventMask { launches: true, ..s.events }, ..s }
    }
    fn on_event(&mut self, ev: &floe_core::Event, view: &dyn floe_core::SystemView, out: &mut Vec<floe_core::Action>) {
        if let floe_core::Event::AppSwitch { from: Some(app), to: None } = *ev {
            out.push(floe_core::Action::Kill(vec![app]));
        }
        self.inner.on_event(ev, view, out);
    }
}

/// Table 1: CPU utilisation with N apps cached and none in the foreground, mean over the
/// rounds of the 10 s average and of the busiest second, in percent of all cores, the
/// system's own threads included (their load is calibrated on the no-app row).
fn table1(cases: &[(usize, Utilisation)]) -> Table {
    let mut t = Table {
        title: "Table 1 (P20): CPU utilisation with N apps cached and none in the foreground (N = 0: the control the system's own load is calibrated on)".into(),
        unit: "percent of all cores".into(),
        rows: vec![],
    };
    for (i, &n) in TABLE1_BG.iter().enumerate() {
        let of_n: Vec<&Utilisation> = cases.iter().filter(|(m, _)| *m == n).map(|(_, u)| u).collect();
        let mean = |f: &dyn Fn(&Utilisation) -> f64| 100.0 * of_n.iter().map(|u| f(u)).sum::<f64>() / of_n.len().max(1) as f64;
        let (avg, peak) = paper::TABLE1[i];
        t.rows.push(Comparison { label: format!("N = {n} average"), paper: Some(avg), ours: mean(&|u| u.mean) });
        t.rows.push(Comparison { label: format!("N = {n} peak"), paper: Some(peak), ours: mean(&|u| u.peak) });
    }
    t
}

/// One app's Fig. 4 test: pages reclaimed from it and brought back within 30 s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Reclaimed {
    anon: u64,
    file: u64,
    refaulted_anon: u64,
    refaulted_file: u64,
}

/// How long Fig. 4's test watches for refaults after the reclaim (§3.2: "within 30
/// seconds").
const FIG4_WATCH_S: f64 = 30.0;

/// §3.2 / Fig. 4, the per-process reclaim test, on each of Table 3's apps (Ice tests 40
/// popular apps and publishes no list): the app alone is launched and used for 30 s (as
/// in §6.1.2), then switched to the background (the home screen); at once all of its
/// pages are reclaimed, and its refaults in the next 30 s, all in the background, are
/// counted. P20, LRU+CFS, seed 1.
fn per_process_reclaim() -> Result<Vec<(String, Reclaimed)>, SimError> {
    use rayon::prelude::*;
    let catalog = floe_sim::Catalog::embedded()?;
    let launch = floe_sim::Workload::load(LAUNCH_WORKLOAD, &catalog)?;
    let device = floe_sim::Device::load(MOTIVATION_DEVICE)?;
    launch
        .sequence
        .par_iter()
        .map(|app| {
            let mut wl = launch.clone();
            wl.sequence = vec![app.clone()];
            wl.rounds = 1;
            wl.idle_s = 2.0 * FIG4_WATCH_S;
            let policy = floe_policies::make_spec("lru-cfs").map_err(SimError::Policy)?;
            let mut sim = floe_sim::Sim::try_new(&device, &wl, &catalog, policy, &floe_sim::RunOptions::default())?;
            let t = crate::run_until_left_foreground(&mut sim, app)?;
            let (anon, file) = sim.per_process_reclaim(app, floe_sim::ReclaimKind::All).expect("the workload's own app");
            let before = sim.snapshot().refaults[0];
            sim.run_until(t + Nanos::from_secs_f64(FIG4_WATCH_S));
            let after = sim.snapshot().refaults[0];
            Ok((app.clone(), Reclaimed { anon, file, refaulted_anon: after[0] - before[0], refaulted_file: after[1] - before[1] }))
        })
        .collect()
}

/// Fig. 4: the share of the reclaimed pages that came back within 30 s, over all the
/// tested apps, and how the refaults split between anonymous and file-backed pages.
fn fig4_table(apps: &[(String, Reclaimed)]) -> Table {
    let mut t = Table {
        title: "Fig. 4 (P20, LRU+CFS): per-process reclaim of a cached app, refaults within 30 s (an input echoed: the catalog derives background touches from it)".into(),
        unit: "apps; percent; pages".into(),
        rows: vec![],
    };
    let sum = |f: &dyn Fn(&Reclaimed) -> u64| apps.iter().map(|(_, r)| f(r)).sum::<u64>() as f64;
    let reclaimed = sum(&|r| r.anon + r.file);
    let refaulted = sum(&|r| r.refaulted_anon + r.refaulted_file);
    let share = |x: f64, of: f64| if of > 0.0 { 100.0 * x / of } else { f64::NAN };
    let (least, most) =
        crate::report::range(apps.iter().map(|(_, r)| share((r.refaulted_anon + r.refaulted_file) as f64, (r.anon + r.file) as f64)));
    t.rows.push(Comparison { label: "apps tested".into(), paper: Some(paper::FIG4_APPS), ours: apps.len() as f64 });
    t.rows.push(Comparison { label: "reclaimed pages per app".into(), paper: None, ours: reclaimed / apps.len().max(1) as f64 });
    t.rows.push(Comparison {
        label: "refaulted within 30 s, % of reclaimed (paper: more than)".into(),
        paper: Some(paper::FIG4_REFAULTED_PCT),
        ours: share(refaulted, reclaimed),
    });
    t.rows.push(Comparison { label: "  least of one app %".into(), paper: None, ours: least });
    t.rows.push(Comparison { label: "  most of one app %".into(), paper: None, ours: most });
    t.rows.push(Comparison {
        label: "anonymous share of the refaults %".into(),
        paper: Some(paper::FIG4_ANON_SHARE_PCT),
        ours: share(sum(&|r| r.refaulted_anon), refaulted),
    });
    t.rows.push(Comparison {
        label: "anonymous share of the reclaimed pages %".into(),
        paper: None,
        ours: share(sum(&|r| r.anon), reclaimed),
    });
    t
}

/// Builds the tables from finished runs.
pub fn report(runs: Vec<RunRecord>, quick: bool) -> Report {
    let lookup = |table: &[(&str, f64)], key: &str| table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let mut fps = Table { title: "Fig. 9: frame rate with the background full of apps".into(), unit: "fps".into(), rows: vec![] };
    let mut ria =
        Table { title: "Fig. 9: ratio of interaction alerts (frames over 16.6 ms)".into(), unit: "share of frames".into(), rows: vec![] };
    for (dev, n) in DEVICES {
        for (sc, wl) in SCENARIOS {
            for policy in POLICIES {
                let label = format!("{dev} {sc} {policy}");
                let paper_fps = if dev == "pixel3" && sc == "S-A" { lookup(&paper::FPS_PIXEL3_SA, policy) } else { None };
                let paper_ria = if dev == "p20" && sc == "S-D" { lookup(&paper::RIA_P20_SD, policy) } else { None };
                fps.rows.push(Comparison { label: label.clone(), paper: paper_fps, ours: mean(&runs, dev, wl, policy, n, |m| m.fps) });
                ria.rows.push(Comparison { label, paper: paper_ria, ours: mean(&runs, dev, wl, policy, n, |m| m.ria) });
            }
        }
    }
    let mut sweep = Table {
        title: "Fig. 10: mean of the four scenarios against background apps".into(),
        unit: "fps; ratio; percent".into(),
        rows: vec![],
    };
    for (dev, n) in DEVICES {
        let avg = |policy: &str, bg: usize, f: &dyn Fn(&Metrics) -> f64| {
            SCENARIOS.iter().map(|(_, wl)| mean(&runs, dev, wl, policy, bg, f)).sum::<f64>() / 4.0
        };
        for bg in [0, 2, n] {
            for policy in ["lru-cfs", "ice"] {
                sweep.rows.push(Comparison {
                    label: format!("{dev} {bg}B+F {policy} fps"),
                    paper: None,
                    ours: avg(policy, bg, &|m| m.fps),
                });
            }
        }
        let gain = avg("ice", n, &|m| m.fps) / avg("lru-cfs", n, &|m| m.fps);
        sweep.rows.push(Comparison { label: format!("{dev} {n}B+F fps ice / lru-cfs"), paper: lookup(&paper::FPS_GAIN, dev), ours: gain });
        let ria_cut = pct_cut(avg("lru-cfs", n, &|m| m.ria), avg("ice", n, &|m| m.ria));
        sweep.rows.push(Comparison {
            label: format!("{dev} {n}B+F RIA cut by ice %"),
            paper: lookup(&paper::RIA_CUT_PCT, dev),
            ours: ria_cut,
        });
    }
    let mut fig11 = Table { title: "Fig. 11 (P20, 8 BG apps): refaults and reclaims".into(), unit: "percent".into(), rows: vec![] };
    let p20 = |wl: &str, policy: &str, f: &dyn Fn(&Metrics) -> f64| mean(&runs, "p20", wl, policy, 8, f);
    let mut reclaim_share = 0.0;
    let (mut ucsg_ref, mut ucsg_rec, mut ice_ref, mut ice_rec) = (0.0, 0.0, 0.0, 0.0);
    // The background apps Ice froze at least once in a run's measured part.
    let mut frozen_apps = 0.0;
    for (sc, wl) in SCENARIOS {
        let ice_runs: Vec<&RunRecord> = runs.iter().filter(|r| r.policy == "ice" && evaluation(r, "p20", wl, 8)).collect();
        frozen_apps += crate::report::mean(ice_runs.iter().map(|r| r.apps.iter().filter(|a| a.freezes > 0).count() as f64)) / 4.0;
        let base_ref = p20(wl, "lru-cfs", &refaults);
        let base_rec = p20(wl, "lru-cfs", &|m| m.reclaimed_pages as f64);
        let cut = pct_cut(base_ref, p20(wl, "ice", &refaults));
        fig11.rows.push(Comparison { label: format!("{sc} refaults cut by ice"), paper: lookup(&paper::REFAULT_CUT_PCT, sc), ours: cut });
        fig11.rows.push(Comparison {
            label: format!("{sc} ice's cut: std. error over draws"),
            paper: None,
            ours: paired_cut_stderr(&runs, |r| evaluation(r, "p20", wl, 8), "lru-cfs", "ice", refaults),
        });
        fig11.rows.push(Comparison {
            label: format!("{sc} refaults cut by acclaim"),
            paper: None,
            ours: pct_cut(base_ref, p20(wl, "acclaim", &refaults)),
        });
        fig11.rows.push(Comparison {
            label: format!("{sc} refaults cut by ice-plus"),
            paper: None,
            ours: pct_cut(base_ref, p20(wl, "ice-plus", &refaults)),
        });
        reclaim_share += 100.0 * p20(wl, "ice", &|m| m.reclaimed_pages as f64) / base_rec.max(1.0) / 4.0;
        ucsg_ref += pct_cut(base_ref, p20(wl, "ucsg", &refaults));
        ucsg_rec += pct_cut(base_rec, p20(wl, "ucsg", &|m| m.reclaimed_pages as f64));
        ice_ref += cut;
        ice_rec += pct_cut(base_rec, p20(wl, "ice", &|m| m.reclaimed_pages as f64));
    }
    fig11.rows.push(Comparison {
        label: "apps ice froze a run (mean of the four)".into(),
        paper: Some(paper::APPS_FROZEN),
        ours: frozen_apps,
    });
    fig11.rows.push(Comparison {
        label: "ice reclaims as % of lru-cfs (mean)".into(),
        paper: Some(paper::RECLAIM_SHARE_PCT),
        ours: reclaim_share,
    });
    let share = |a: f64, b: f64| if b != 0.0 { 100.0 * a / b } else { 0.0 };
    fig11.rows.push(Comparison {
        label: "ucsg refault cut as % of ice's".into(),
        paper: Some(paper::UCSG_OF_ICE_PCT.0),
        ours: share(ucsg_ref, ice_ref),
    });
    fig11.rows.push(Comparison {
        label: "ucsg reclaim cut as % of ice's".into(),
        paper: Some(paper::UCSG_OF_ICE_PCT.1),
        ours: share(ucsg_rec, ice_rec),
    });
    fig11.rows.push(Comparison { label: "ucsg refault cut (mean)".into(), paper: None, ours: ucsg_ref / 4.0 });
    let mut t5 = Table {
        title: "Table 5 (P20, 8 BG apps): power-manager freezing vs Ice".into(),
        unit: "thousand pages per run".into(),
        rows: vec![],
    };
    let (mut pm_ref, mut pm_rec, mut base_ref_all, mut base_rec_all) = (0.0, 0.0, 0.0, 0.0);
    for (sc, wl) in SCENARIOS {
        let p = paper::TABLE5.iter().find(|(k, _)| *k == sc).map(|(_, v)| *v);
        let vals = [
            p20(wl, "power-freezer", &refaults),
            p20(wl, "power-freezer", &|m| m.reclaimed_pages as f64),
            p20(wl, "ice", &refaults),
            p20(wl, "ice", &|m| m.reclaimed_pages as f64),
        ];
        for (i, what) in ["power refaults", "power reclaims", "ice refaults", "ice reclaims"].iter().enumerate() {
            t5.rows.push(Comparison { label: format!("{sc} {what}"), paper: p.map(|v| v[i]), ours: vals[i] / 1000.0 });
        }
        pm_ref += vals[0];
        pm_rec += vals[1];
        base_ref_all += p20(wl, "lru-cfs", &refaults);
        base_rec_all += p20(wl, "lru-cfs", &|m| m.reclaimed_pages as f64);
    }
    // LRU+CFS's own counts, which §6 gives only through Ice's: Table 5's Ice figures
    // over Fig. 11's cuts (the refault cut per scenario, the reclaim share as its mean).
    let (mut lru_ref_paper, mut lru_rec_paper) = (0.0, 0.0);
    for (sc, wl) in SCENARIOS {
        let ice = paper::TABLE5.iter().find(|(k, _)| *k == sc).map(|(_, v)| *v).expect("every scenario");
        let cut = lookup(&paper::REFAULT_CUT_PCT, sc).expect("every scenario");
        let (r, c) = (ice[2] / (1.0 - cut / 100.0), ice[3] / (paper::RECLAIM_SHARE_PCT / 100.0));
        lru_ref_paper += r;
        lru_rec_paper += c;
        t5.rows.push(Comparison {
            label: format!("{sc} lru-cfs refaults: Table 5's ice / (1 - Fig. 11's cut)"),
            paper: Some(r),
            ours: p20(wl, "lru-cfs", &refaults) / 1000.0,
        });
        t5.rows.push(Comparison {
            label: format!("{sc} lru-cfs reclaims: Table 5's ice / Fig. 11's 70.7 %"),
            paper: Some(c),
            ours: p20(wl, "lru-cfs", &|m| m.reclaimed_pages as f64) / 1000.0,
        });
    }
    t5.rows.push(Comparison { label: "four scenarios' lru-cfs refaults".into(), paper: Some(lru_ref_paper), ours: base_ref_all / 1000.0 });
    t5.rows.push(Comparison { label: "four scenarios' lru-cfs reclaims".into(), paper: Some(lru_rec_paper), ours: base_rec_all / 1000.0 });
    t5.rows.push(Comparison {
        label: "power reclaims cut vs lru-cfs %".into(),
        paper: Some(paper::POWER_CUT_PCT.0),
        ours: pct_cut(base_rec_all, pm_rec),
    });
    t5.rows.push(Comparison {
        label: "power refaults cut vs lru-cfs %".into(),
        paper: Some(paper::POWER_CUT_PCT.1),
        ours: pct_cut(base_ref_all, pm_ref),
    });
    let t6 = table6(&runs);
    let t6_psi = table6_psi(&runs);
    let fig1 = motivation_table(&runs);
    let fig2b = slices_table(&runs);
    let fig12 = launch_table(&runs);
    let fig3 = fig3_table(&runs);
    let mut notes = vec![
        format!(
            "{}: each cell is the mean over {} background-app draws (seeds) of {} s of foreground use; the paper averages 10 rounds of an unstated length, so absolute page counts (Table 5) depend on the scenario length.",
            if quick { "--quick" } else { "full run" },
            if quick { 2 } else { 10 },
            if quick { "60" } else { "the workload's 300" }
        ),
        "Known difference (Table 6): the paper credits Ice+'s cuts mostly to reclaim-or-kill exclusivity (under Ice, 21.4 % of reclaimed pages were freed again by LMK kills soon after). Both phones kill by the minfree table (the P20 through the in-kernel driver, the Pixel 3 through Android 10 lmkd asking it at each memory-stall event: docs/MODEL.md, 'Killers'), and floe's runs of these scenarios kill little (the P20's file cache stays above its top minfree level in their 300 s), so freeze-aware eviction acts more than exclusivity: it sends more of the frozen apps' heaps to zram, where each page still holds about a third of a page of RAM, so reclaim takes more pages for the same free memory (more reclaims than Ice). It also takes a frozen app's hot pages with its cold ones, but a thawed app is frozen again at its first refault, so that costs few refaults; where zram's growth leaves the page cache less, more pages come back (the Pixel 3's scenarios, docs/MODEL.md, 'Ice and its baselines'). Exclusivity spares swapped apps only while a cached app with nothing in swap is left to kill. The what-if table after Table 6 runs both phones with lmkd's default PSI mode, which kills on memory stalls whatever the file cache holds: there the P20's Ice+ totals fall below Ice's, as the paper's do, while now and then one of the Pixel 3's Ice+ runs thrashes and sets the mean, as its zram fills and lmkd's PSI mode sees free memory held at the high watermark (docs/MODEL.md, 'Ice and its baselines').".into(),
        "Known difference: UCSG cuts few refaults here (the paper: 24.4 %). It only raises the foreground's CPU weight, and in these scenarios the 8 cores are about 15 % busy (300-360 s of app CPU in a 300 s run), so background apps run, and touch memory, exactly as under LRU+CFS.".into(),
        "Known differences (Fig. 12): the launch order and phone are not published (both phones; the paper's figures are compared with the mean of the two). The main rows draw each round's order afresh: the paper's LRU+CFS keeps seven or eight apps hot a round, which a fixed cycle of 20 apps cannot under Android's killers. The 'Table 3's order' rows show that case: the LMK takes each app just before its turn, in LRU order on the Pixel 3 (Android 10, a level per cached app) and nearly so on the P20 (Android 9's shared slots, the previous app at 700), and Ice+'s exclusivity breaks the cycle in part, while some cached app has nothing in swap (docs/MODEL.md, 'Killers' and 'Launches')".into(),
        "Known difference: reclaim blocks the render thread by a wait per page reclaimed while the app renders, calibrated on BG-memtester's frame loss (docs/MODEL.md, 'Frames'), with at most one kswapd episode's wait owed at once, so frames fall with the reclaim going on around them. Fig. 1's eight apps then cost the call about 1.5 times what memtester's balloon costs it (the paper: nearly twice the four scenarios' memtester loss), most of it in the call's first minute, as the apps' page cache leaves; after it the call renders about what it renders beside the balloon, so the frames Ice can save, and its fps gains, stay below the paper's.".into(),
        "Known difference (page counts): Fig. 2(a) does not say whether it counts S-A alone or the four scenarios together; floe fits BG-memtester's counts as S-A's (docs/MODEL.md, 'Calibration'). Section 6 counts on the same phone with eight apps cached (Table 5, and LRU+CFS's own through Fig. 11's cuts): per scenario a quarter to a fifth of Fig. 2(a)'s BG-apps counts, summed over the four about their size, which is the four-scenario reading. floe's runs, fitted on the S-A reading, reclaim several times Section 6's pages per scenario (Table 5's rows). Fitted on the four-scenario reading instead, the call reclaims what Section 6 counts but its background refaults vanish: reclaim then takes only pages the cached apps never touch (docs/MODEL.md, 'Frames').".into(),
    ];
    let balloon = runs.iter().find_map(|r| match r.params.get("balloon_mib") {
        Some(floe_core::Param::Float(b)) if *b > 0.0 && r.workload == SCENARIOS[0].1 => Some(*b),
        _ => None,
    });
    let set = runs.iter().filter(|r| fixed_set(r) && r.workload == SCENARIOS[0].1).find_map(|r| match r.params.get("bg_set") {
        Some(floe_core::Param::Text(t)) => Some(t.replace(',', ", ")),
        _ => None,
    });
    if let (Some(b), Some(set)) = (balloon, set) {
        notes.insert(
            0,
            format!(
                "Fig. 1 / Fig. 2(a): BG-apps caches Fig. 1's eight apps ({set}); BG-memtester pins {b:.0} MiB: the paper's memtester brought the memory occupied in total to 5.52 GB ('similar to that of the BG-apps case'), floe pins that less the P20's system share (RAM less memory for apps), up to the largest balloon the P20 takes; BG-null is the 0B+F run. Fig. 2(a) does not say which scenario it counts; floe shows S-A's counts (the ones it calibrates on), the four scenarios' sums, and S-A's anonymous reclaims, the pages sent to swap, which §2.2.3 followed through /proc/vmstat's pswpout."
            ),
        );
    }
    notes.push("Known difference (Fig. 3, shown, not judged): the paper's figures are a day of eight users' own use, screen-off and idle time included; floe's closest run is the launch experiment's (an app every 30 s for 10 rounds, each round in a fresh order), whose cached apps keep their background activity the whole run, so about twice the paper's share of reclaimed pages comes back (docs/MODEL.md, 'Background activity'). Fig. 1's call credits its refaults to the background apps (§2.2.3: 'fewer refaulted pages from the BG apps (39k)'): the call's own working set stays hot while it renders, so what reclaim takes from it is what the call no longer touches.".into());
    let tables = vec![fig1, fig2b, fps, ria, sweep, fig11, t5, t6, t6_psi, fig12, fig3];
    Report { experiment: "ice".into(), runs, findings: findings(&tables), tables, notes, seeds: 1, sd: vec![] }
}

/// Ice's findings (§2.2, §6), each checked against the report's tables.
fn findings(t: &[Table]) -> Vec<Finding> {
    let v = |title: &str, label: &str| value(t, title, label);
    // Table 6: Ice+'s share of Ice's pages with the phones' own killers (the verdict),
    // and beside it the share under lmkd's default PSI mode (the what-if table).
    let ice_plus = |what: &str, claim: &str, paper: f64| {
        let label = format!("ice-plus {what} as % of ice's");
        let f = against_bar(claim, ("ice-plus's share of ice's", v("Table 6: Ice+", &label)), Want::Below, 99.0, "%").paper(paper);
        also(f, "both phones with lmkd's default PSI mode (Table 6 what-if)", &format!("{:.2} %", v("Table 6 what-if", &label)))
    };
    // Fig. 9's frame rate of a policy, over both phones' four scenarios.
    let fps = |policy: &str| {
        let cells: Vec<f64> = DEVICES
            .iter()
            .flat_map(|(dev, _)| SCENARIOS.iter().map(move |(sc, _)| v("Fig. 9: frame rate", &format!("{dev} {sc} {policy}"))))
            .collect();
        cells.iter().sum::<f64>() / cells.len() as f64
    };
    let cut = |by: &str| SCENARIOS.map(|(sc, _)| v("Fig. 11", &format!("{sc} refaults cut by {by}")));
    let least = |xs: [f64; 4]| xs.into_iter().fold(f64::INFINITY, f64::min);
    let mean4 = |xs: [f64; 4]| xs.iter().sum::<f64>() / 4.0;
    let (ucsg, acclaim) = (fps("ucsg"), fps("acclaim"));
    let frozen = v("Fig. 11", "apps ice froze a run (mean of the four)");
    let (rival, rival_fps) = if ucsg >= acclaim { ("ucsg", ucsg) } else { ("acclaim", acclaim) };
    let mut findings = vec![against_bar(
        "Cached background apps cut the P20's frame rate (Fig. 1, S-A: by 51.7 %)",
        ("change with Fig. 1's eight apps", v("Fig. 1 ", "S-A BG-apps fps change %")),
        Want::Below,
        -1.0,
        "%",
    )
    .paper(-51.7)];
    // Fig. 2(a), §2.2.3: the background's refaults make reclaim do more than the
    // balloon of the same size does.
    findings.push(
        against_bar(
            "Cached apps make reclaim take more pages than memtester's balloon of the same memory (Fig. 2(a): 84.4 % more)",
            ("S-A's BG-apps reclaims over BG-memtester's", v("Fig. 1 ", "S-A BG-apps reclaims over BG-memtester's %")),
            Want::Above,
            crate::report::MIN_CHANGE * 100.0,
            "%",
        )
        .paper(100.0 * (paper::FIG2A[2].0 / paper::FIG2A[1].0 - 1.0)),
    );
    // Fig. 2(b): the same runs' 30 s slices, the tenth with the most background
    // refaults against the tenth with the fewest.
    findings.push(
        against_bar(
            "The frame rate falls in the 30 s slices with the most background refaults (Fig. 2(b): by 60.6 % against the fewest)",
            ("change of the most-refault tenth", v("Fig. 2(b)", "most BG refaults (90-100th pct) fps change %")),
            Want::Below,
            -1.0,
            "%",
        )
        .paper(paper::FIG2B_MANY_FPS_PCT),
    );
    // §2.2.3: with memtester's balloon, pswpout showed reclaim going on throughout the
    // call, not all at its start: more than half of the 30 s slices swap pages out.
    findings.push(against_bar(
        "Reclaim goes on throughout the call, not all at its start (§2.2.3: pswpout with memtester's balloon)",
        ("memtester's 30 s slices that swap out", v("Fig. 2(b)", "BG-memtester slices that swap out %")),
        Want::Above,
        50.0,
        "%",
    ));
    // Fig. 10: the frame-rate gain on each phone with its full background.
    for ((dev, n), (_, gain)) in DEVICES.into_iter().zip(paper::FPS_GAIN) {
        let phone = if dev == "pixel3" { "Pixel 3" } else { "P20" };
        findings.push(
            against_bar(
                format!("Ice raises the {phone}'s frame rate with the background full of apps (Fig. 10: {gain} times LRU+CFS's)"),
                ("ice / lru-cfs", v("Fig. 10:", &format!("{dev} {n}B+F fps ice / lru-cfs"))),
                Want::Above,
                1.0 + crate::report::MIN_CHANGE,
                "",
            )
            .paper(gain),
        );
    }
    findings.extend([
        versus(
            "Ice renders more frames than UCSG and Acclaim (Fig. 9: 37.2 fps against 29.3 and 24.1, Pixel 3, S-A)",
            ("ice", fps("ice")),
            Want::Above,
            (rival, rival_fps),
            "fps, mean of both phones' four scenarios",
        )
        .paper_vs(37.2, if rival == "ucsg" { 29.3 } else { 24.1 }),
        against_bar(
            "Ice cuts background refaults against LRU+CFS in all four scenarios (Fig. 11: by 40.5 to 57.6 %)",
            ("least of the four cuts", least(cut("ice"))),
            Want::Above,
            1.0,
            "%",
        )
        .paper(40.5),
        against_bar(
            "Ice cuts reclaims against LRU+CFS (Fig. 11: to 70.7 %)",
            ("ice's reclaims as a share of lru-cfs's", v("Fig. 11", "ice reclaims as % of lru-cfs (mean)")),
            Want::Below,
            99.0,
            "%",
        )
        .paper(70.7),
        against_bar(
            "Ice freezes only some of the eight background apps (§6.1.1: four on average)",
            ("apps frozen a run", frozen),
            Want::Below,
            8.0,
            "",
        )
        .paper(paper::APPS_FROZEN)
        .vacuous_if(frozen < 0.5, "freezing"),
        against_bar(
            "UCSG cuts fewer refaults than Ice (Fig. 11: 51.7 % of Ice's cut)",
            ("ucsg's cut as a share of ice's", v("Fig. 11", "ucsg refault cut as % of ice's")),
            Want::Below,
            99.0,
            "%",
        )
        .paper(51.7)
        .vacuous_if(v("Fig. 11", "ucsg refault cut (mean)").abs() < 1.0, "ucsg's own cut"),
        versus(
            "Ice cuts more background refaults than Acclaim (Fig. 11)",
            ("ice's cut", mean4(cut("ice"))),
            Want::Above,
            ("acclaim's", mean4(cut("acclaim"))),
            "%, mean of the four scenarios",
        ),
        ice_plus("reclaims", "Ice+ reclaims fewer pages than Ice (Table 6: 85.5 % of Ice's)", 85.5),
        ice_plus("refaults", "Ice+ refaults fewer pages than Ice (Table 6: 87.3 % of Ice's)", 87.3),
        against_bar(
            "Ice cuts app launch time against LRU+CFS (Fig. 12: by 36.6 %)",
            ("cut", v("Fig. 12", "ice cut of launch time %")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(36.6),
        against_bar(
            "Ice hot-launches more apps than LRU+CFS (Fig. 12: 25 % more)",
            ("gain", v("Fig. 12", "ice gain in hot launches %")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(25.0),
    ]);
    findings
}

/// Fig. 1 and Fig. 2(a): what eight cached apps, or memtester holding as much memory,
/// do to the foreground's frame rate and to reclaim and refaults, against BG-null.
pub(crate) fn motivation_table(runs: &[RunRecord]) -> Table {
    let mut t = Table {
        title: "Fig. 1 / Fig. 2(a) (P20, LRU+CFS): BG-null, BG-memtester, BG-apps (Fig. 1's eight apps)".into(),
        unit: "fps; percent; pages per run".into(),
        rows: vec![],
    };
    let case = |wl: &str, which: &str, f: &dyn Fn(&Metrics) -> f64| {
        mean_where(
            runs,
            |r| {
                r.device == MOTIVATION_DEVICE
                    && r.workload == wl
                    && r.policy == "lru-cfs"
                    && match which {
                        "null" => evaluation(r, MOTIVATION_DEVICE, wl, 0),
                        "memtester" => memtester_case(r),
                        _ => bg_apps_case(r),
                    }
            },
            f,
        )
    };
    let change = |wl: &str, which: &str| -pct_cut(case(wl, "null", &|m| m.fps), case(wl, which, &|m| m.fps));
    let wa = SCENARIOS[0].1;
    t.rows.push(Comparison { label: "S-A BG-null fps".into(), paper: Some(paper::FIG1_SA_NULL_FPS), ours: case(wa, "null", &|m| m.fps) });
    t.rows.push(Comparison {
        label: "S-A BG-apps fps change %".into(),
        paper: Some(paper::FIG1_SA_APPS_FPS_PCT),
        ours: change(wa, "apps"),
    });
    let mean4 = |which: &str| SCENARIOS.iter().map(|(_, wl)| change(wl, which)).sum::<f64>() / SCENARIOS.len() as f64;
    t.rows.push(Comparison { label: "mean BG-apps fps change %".into(), paper: None, ours: mean4("apps") });
    t.rows.push(Comparison {
        label: "mean BG-memtester fps change %".into(),
        paper: Some(paper::FIG1_MEMTESTER_FPS_PCT),
        ours: mean4("memtester"),
    });
    for (i, which) in ["null", "memtester", "apps"].iter().enumerate() {
        t.rows.push(Comparison {
            label: format!("S-A BG-{which} reclaims"),
            paper: Some(paper::FIG2A[i].0),
            ours: case(wa, which, &|m| m.reclaimed_pages as f64),
        });
        t.rows.push(Comparison {
            label: format!("S-A BG-{which} refaults"),
            paper: Some(paper::FIG2A[i].1),
            ours: case(wa, which, &refaults),
        });
    }
    // Fig. 2(a) read as the four scenarios' runs together ("in total"): the reading
    // under which its BG-apps counts are of the size of §6's per-scenario ones summed
    // (Fig. 11 and Table 5, the same phone and eight cached apps).
    let sum4 = |which: &str, f: &dyn Fn(&Metrics) -> f64| SCENARIOS.iter().map(|(_, wl)| case(wl, which, f)).sum::<f64>();
    for (i, which) in ["null", "memtester", "apps"].iter().enumerate() {
        t.rows.push(Comparison {
            label: format!("four scenarios' BG-{which} reclaims"),
            paper: Some(paper::FIG2A[i].0),
            ours: sum4(which, &|m| m.reclaimed_pages as f64),
        });
        t.rows.push(Comparison {
            label: format!("four scenarios' BG-{which} refaults"),
            paper: Some(paper::FIG2A[i].1),
            ours: sum4(which, &refaults),
        });
    }
    // §2.2.3: "84.4% more memory reclaiming operations are detected in the BG-apps case".
    let more = |a: f64, b: f64| 100.0 * (a / b - 1.0);
    let (apps, memtester) = (paper::FIG2A[2].0, paper::FIG2A[1].0);
    t.rows.push(Comparison {
        label: "S-A BG-apps reclaims over BG-memtester's %".into(),
        paper: Some(more(apps, memtester)),
        ours: more(case(wa, "apps", &|m| m.reclaimed_pages as f64), case(wa, "memtester", &|m| m.reclaimed_pages as f64)),
    });
    t.rows.push(Comparison {
        label: "four scenarios' BG-apps reclaims over BG-memtester's %".into(),
        paper: Some(more(apps, memtester)),
        ours: more(sum4("apps", &|m| m.reclaimed_pages as f64), sum4("memtester", &|m| m.reclaimed_pages as f64)),
    });
    // Fig. 2(a)'s reclaims read as the anonymous pages sent to swap: Ice followed reclaim
    // through /proc/vmstat's pswpout (§2.2.3).
    let anon = |m: &Metrics| m.reclaimed_anon_pages as f64;
    for (i, which) in ["null", "memtester", "apps"].iter().enumerate() {
        t.rows.push(Comparison {
            label: format!("S-A BG-{which} anonymous reclaims"),
            paper: Some(paper::FIG2A[i].0),
            ours: case(wa, which, &anon),
        });
    }
    t.rows.push(Comparison {
        label: "S-A BG-apps anonymous reclaims over BG-memtester's %".into(),
        paper: Some(more(apps, memtester)),
        ours: more(case(wa, "apps", &anon), case(wa, "memtester", &anon)),
    });
    t
}

/// Fig. 2(b): the BG-apps runs of the four scenarios (Fig. 1's eight apps, LRU+CFS) cut
/// into 30 s slices of frame rendering, sorted by background refaults; the frame rate,
/// refaults and reclaims of the tenth with the fewest and the tenth with the most.
fn slices_table(runs: &[RunRecord]) -> Table {
    let mut t = Table {
        title: "Fig. 2(b) (P20, LRU+CFS, Fig. 1's eight apps): 30 s slices by background refaults".into(),
        unit: "fps; percent; pages per slice".into(),
        rows: vec![],
    };
    let mut slices: Vec<Slice> = runs
        .iter()
        .filter(|r| bg_apps_case(r) && r.device == MOTIVATION_DEVICE && r.policy == "lru-cfs")
        .flat_map(|r| rendering_slices(&r.slices))
        .collect();
    slices.sort_by_key(|s| s.bg_refaults);
    let tenth = slices.len().div_ceil(10);
    let mean = |xs: &[Slice], f: &dyn Fn(&Slice) -> f64| crate::report::mean(xs.iter().map(f));
    let (few, many) = (&slices[..tenth], &slices[slices.len() - tenth..]);
    let fps = |s: &Slice| s.frames as f64 / FIG2B_SLICE_S as f64;
    t.rows.push(Comparison { label: "slices".into(), paper: None, ours: slices.len() as f64 });
    t.rows.push(Comparison {
        label: "fewest BG refaults (0-10th pct) fps".into(),
        paper: Some(paper::FIG2B_FEW_FPS),
        ours: mean(few, &fps),
    });
    t.rows.push(Comparison {
        label: "most BG refaults (90-100th pct) fps change %".into(),
        paper: Some(paper::FIG2B_MANY_FPS_PCT),
        ours: -pct_cut(mean(few, &fps), mean(many, &fps)),
    });
    for (name, xs) in [("fewest", few), ("most", many)] {
        t.rows.push(Comparison { label: format!("{name}: BG refaults per slice"), paper: None, ours: mean(xs, &|s| s.bg_refaults as f64) });
        t.rows.push(Comparison { label: format!("{name}: reclaims per slice"), paper: None, ours: mean(xs, &|s| s.reclaims as f64) });
    }
    // §2.2.3, followed through pswpout with memtester's balloon: reclaim "occurs
    // throughout the entire process of FG application usage rather than reclaiming all
    // 56k pages in the initial stage". The share of slices that reclaim at all.
    let share = |xs: &[Slice], f: &dyn Fn(&Slice) -> u64| 100.0 * xs.iter().filter(|s| f(s) > 0).count() as f64 / xs.len() as f64;
    let memtester: Vec<Slice> = runs
        .iter()
        .filter(|r| memtester_case(r) && r.device == MOTIVATION_DEVICE && r.policy == "lru-cfs")
        .flat_map(|r| rendering_slices(&r.slices))
        .collect();
    t.rows.push(Comparison { label: "BG-apps slices that reclaim %".into(), paper: None, ours: share(&slices, &|s| s.reclaims) });
    t.rows.push(Comparison { label: "BG-memtester slices that reclaim %".into(), paper: None, ours: share(&memtester, &|s| s.reclaims) });
    t.rows.push(Comparison {
        label: "BG-memtester slices that swap out %".into(),
        paper: None,
        ours: share(&memtester, &|s| s.anon_reclaims),
    });
    t
}

/// One slice of Fig. 2(b).
#[derive(Clone, Copy, Debug)]
struct Slice {
    frames: u64,
    bg_refaults: u64,
    reclaims: u64,
    /// Of `reclaims`, anonymous pages (sent to swap: what pswpout counts).
    anon_reclaims: u64,
}

/// A run's 1 s samples of its measured part cut into whole 30 s slices of frame
/// rendering: from the first full second after the foreground's first frame (the
/// measured part opens with its launch, which renders nothing), in consecutive
/// seconds; a last slice shorter than 30 s is left out.
fn rendering_slices(samples: &[floe_core::Sample]) -> Vec<Slice> {
    let Some(first) = samples.iter().position(|s| s.frames.unwrap_or(0) > 0) else { return vec![] };
    let seconds: Vec<&floe_core::Sample> = samples[first + 1..]
        .iter()
        .zip(&samples[first..])
        .take_while(|(s, prev)| (s.t_s - prev.t_s - 1.0).abs() < 1e-9)
        .map(|(s, _)| s)
        .collect();
    seconds
        .chunks_exact(FIG2B_SLICE_S)
        .map(|c| Slice {
            frames: c.iter().map(|s| s.frames.unwrap_or(0)).sum(),
            bg_refaults: c.iter().map(|s| s.refaults_bg_anon + s.refaults_bg_file).sum(),
            reclaims: c.iter().map(|s| s.reclaimed_pages).sum(),
            anon_reclaims: c.iter().map(|s| s.reclaimed_anon_pages.unwrap_or(0)).sum(),
        })
        .collect()
}

/// Mean latency of the launches of `kind` (all when None) in a run, ms; NaN if none.
fn launch_ms(r: &RunRecord, kind: Option<floe_core::LaunchKind>) -> f64 {
    crate::report::mean(r.launches.iter().filter(|l| kind.is_none_or(|k| l.kind == k)).map(|l| l.ms))
}

/// A figure read off one run.
type Stat = dyn Fn(&RunRecord) -> f64;

/// Fig. 12: launch latency (all, cold, hot) and hot launches per round after the first,
/// per phone and policy, and against the paper's figures, whose phone is not stated,
/// as the mean of both phones. The findings' rows read the runs that draw each round's
/// launch order afresh: Ice publishes no order, and its LRU+CFS baseline rules out Table
/// 3's every round ("only seven or eight applications are cached with LRU+CFS", §6.1.2),
/// where a fixed cycle of 20 apps under Android's killers loses almost every app just
/// before its turn (the "Table 3's order" rows show it).
fn launch_table(runs: &[RunRecord]) -> Table {
    use floe_core::LaunchKind::{Cold, Warm};
    let mut t = Table {
        title: "Fig. 12: app launching, Table 3's 20 apps over 10 rounds of 30 s".into(),
        unit: "ms; hot launches per round; percent".into(),
        rows: vec![],
    };
    let run = |dev: &str, policy: &str, shuffled: bool| {
        runs.iter().find(|r| {
            r.device == dev && r.workload == LAUNCH_WORKLOAD && r.policy == policy && r.params.contains_key("shuffle_rounds") == shuffled
        })
    };
    let get = |dev: &str, policy: &str, f: &Stat| run(dev, policy, true).map_or(f64::NAN, f);
    let what: [(&str, &Stat); 4] = [
        ("launch ms", &|r| launch_ms(r, None)),
        ("cold ms", &|r| launch_ms(r, Some(Cold))),
        ("hot ms", &|r| launch_ms(r, Some(Warm))),
        ("hot per round", &|r| r.metrics.caching_capability),
    ];
    for (dev, _) in DEVICES {
        for policy in POLICIES {
            for (label, f) in &what {
                t.rows.push(Comparison { label: format!("{dev} {policy} {label}"), paper: None, ours: get(dev, policy, f) });
            }
        }
    }
    let both = |shuffled: bool, policy: &str, f: &Stat| {
        DEVICES.iter().map(|(d, _)| run(d, policy, shuffled).map_or(f64::NAN, f)).sum::<f64>() / DEVICES.len() as f64
    };
    let [all, cold, hot, per_round] = what.map(|(_, f)| f);
    t.rows.push(Comparison {
        label: "both phones lru-cfs cold ms".into(),
        paper: Some(paper::COLD_LRU_MS),
        ours: both(true, "lru-cfs", cold),
    });
    t.rows.push(Comparison {
        label: "both phones lru-cfs hot ms".into(),
        paper: Some(paper::HOT_LRU_MS),
        ours: both(true, "lru-cfs", hot),
    });
    // The comparisons, with each round's order shuffled and in Table 3's order.
    for (prefix, shuffled) in [("", true), ("Table 3's order: ", false)] {
        let both = |policy: &str, f: &Stat| both(shuffled, policy, f);
        t.rows.push(Comparison {
            label: format!("{prefix}both phones lru-cfs hot per round"),
            paper: Some(paper::HOT_PER_ROUND_LRU),
            ours: both("lru-cfs", per_round),
        });
        t.rows.push(Comparison {
            label: format!("{prefix}ice cut of launch time %"),
            paper: Some(paper::LAUNCH_ICE_CUT_PCT),
            ours: pct_cut(both("lru-cfs", all), both("ice", all)),
        });
        if shuffled {
            t.rows.push(Comparison {
                label: "ice cut of cold launch time %".into(),
                paper: Some(paper::COLD_ICE_CUT_PCT),
                ours: pct_cut(both("lru-cfs", cold), both("ice", cold)),
            });
        }
        t.rows.push(Comparison {
            label: format!("{prefix}ice gain in hot launches %"),
            paper: Some(paper::HOT_ICE_GAIN_PCT),
            ours: -pct_cut(both("lru-cfs", per_round), both("ice", per_round)),
        });
    }
    // Fig. 13: Ice+ against Ice, mean and standard deviation of all launches; the paper
    // finds the means closer than either deviation.
    for (dev, _) in DEVICES {
        let sd = |policy: &str| run(dev, policy, true).map_or(f64::NAN, launch_ms_stddev);
        let gap = (get(dev, "ice-plus", all) - get(dev, "ice", all)).abs();
        t.rows.push(Comparison { label: format!("Fig. 13: {dev} ice launch ms stddev"), paper: None, ours: sd("ice") });
        t.rows.push(Comparison { label: format!("Fig. 13: {dev} ice-plus launch ms stddev"), paper: None, ours: sd("ice-plus") });
        t.rows.push(Comparison {
            label: format!("Fig. 13: {dev} |ice-plus - ice| mean over the smaller stddev (paper: under 1)"),
            paper: None,
            ours: gap / sd("ice").min(sd("ice-plus")),
        });
    }
    t
}

/// The background processes' refaults (cached apps and the system's processes: every
/// refault but the foreground app's), percent of all of a run's.
fn bg_refault_share(m: &Metrics) -> f64 {
    100.0 * (1.0 - (m.refaults_fg_anon + m.refaults_fg_file) as f64 / refaults(m))
}

/// Refaults as a share of reclaims, percent (Fig. 3's "refault ratio").
fn refault_ratio(m: &Metrics) -> f64 {
    100.0 * refaults(m) / m.reclaimed_pages as f64
}

/// Fig. 3 (§2.2.3): the refault ratio and the background processes' share of refaults
/// under LRU+CFS, in the launch experiment (§6.1.2's apps used in turn, each round in a
/// fresh order: floe's nearest to the paper's day of use) on each phone, and in the call
/// with Fig. 1's eight apps cached.
fn fig3_table(runs: &[RunRecord]) -> Table {
    let mut t =
        Table { title: "Fig. 3 (LRU+CFS): refault ratio and background share of refaults".into(), unit: "percent".into(), rows: vec![] };
    for (dev, _) in DEVICES {
        let launch = |f: &dyn Fn(&Metrics) -> f64| {
            mean_where(
                runs,
                |r| r.device == dev && r.workload == LAUNCH_WORKLOAD && r.policy == "lru-cfs" && r.params.contains_key("shuffle_rounds"),
                f,
            )
        };
        let p20 = dev == MOTIVATION_DEVICE;
        let (ratio, share) = if p20 {
            (paper::FIG3_P20_REFAULT_RATIO_PCT, paper::FIG3_P20_BG_SHARE_PCT)
        } else {
            (paper::FIG3_REFAULT_RATIO_PCT, paper::FIG3_BG_SHARE_PCT)
        };
        let whose = if p20 { "the P20's" } else { "all phones'" };
        t.rows.push(Comparison {
            label: format!("{dev} launch experiment refault ratio (paper: {whose})"),
            paper: Some(ratio),
            ours: launch(&refault_ratio),
        });
        t.rows.push(Comparison {
            label: format!("{dev} launch experiment BG share of refaults (paper: {whose})"),
            paper: Some(share),
            ours: launch(&bg_refault_share),
        });
    }
    let call = |f: &dyn Fn(&Metrics) -> f64| {
        mean_where(runs, |r| r.device == MOTIVATION_DEVICE && r.workload == SCENARIOS[0].1 && r.policy == "lru-cfs" && bg_apps_case(r), f)
    };
    t.rows.push(Comparison { label: "S-A BG-apps refault ratio".into(), paper: None, ours: call(&refault_ratio) });
    t.rows.push(Comparison { label: "S-A BG-apps BG share of refaults".into(), paper: None, ours: call(&bg_refault_share) });
    t
}

/// Standard deviation of all of a run's launch latencies, ms; NaN with fewer than two.
fn launch_ms_stddev(r: &RunRecord) -> f64 {
    let xs: Vec<f64> = r.launches.iter().map(|l| l.ms).collect();
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = crate::report::mean(xs.iter().copied());
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

/// Table 6: Ice+ against Ice, reclaims and refaults per device and scenario, and Ice+'s
/// totals as a share of Ice's.
fn table6(runs: &[RunRecord]) -> Table {
    let mut t =
        Table { title: "Table 6: Ice+ against Ice (full background)".into(), unit: "thousand pages per run; percent".into(), rows: vec![] };
    let mut sums = [0.0; 4];
    // Table 6's rows (device and scenario) where Ice+ took more than Ice: [reclaims, refaults].
    let (mut above, mut ours_above, mut rows) = ([0usize; 2], [0usize; 2], 0usize);
    for (dev, n) in DEVICES {
        for (sc, wl) in SCENARIOS {
            let p = paper::TABLE6.iter().find(|(d, k, _)| *d == dev && *k == sc).map(|(_, _, v)| *v);
            let reclaims = |m: &Metrics| m.reclaimed_pages as f64;
            let vals = [
                mean(runs, dev, wl, "ice", n, reclaims),
                mean(runs, dev, wl, "ice-plus", n, reclaims),
                mean(runs, dev, wl, "ice", n, refaults),
                mean(runs, dev, wl, "ice-plus", n, refaults),
            ];
            for (i, what) in ["ice reclaims", "ice-plus reclaims", "ice refaults", "ice-plus refaults"].iter().enumerate() {
                t.rows.push(Comparison { label: format!("{dev} {sc} {what}"), paper: p.map(|v| v[i]), ours: vals[i] / 1000.0 });
                sums[i] += vals[i];
            }
            rows += 1;
            for k in 0..2 {
                above[k] += p.is_some_and(|v| v[2 * k + 1] > v[2 * k]) as usize;
                ours_above[k] += (vals[2 * k + 1] > vals[2 * k]) as usize;
            }
        }
    }
    // Whether the totals' direction holds row by row, or comes from a few rows.
    for (k, what) in ["reclaims", "refaults"].iter().enumerate() {
        t.rows.push(Comparison {
            label: format!("rows where ice-plus {what} exceed ice's, %"),
            paper: Some(100.0 * above[k] as f64 / rows as f64),
            ours: 100.0 * ours_above[k] as f64 / rows as f64,
        });
    }
    t.rows.extend(ice_plus_shares("", sums));
    t
}

/// Ice+'s reclaims and refaults as a share of Ice's, from `sums` [ice reclaims, ice-plus
/// reclaims, ice refaults, ice-plus refaults]; rows labelled after `prefix`, the
/// paper's summary beside them where `prefix` is empty (both phones).
fn ice_plus_shares(prefix: &str, sums: [f64; 4]) -> [Comparison; 2] {
    let share = |a: f64, b: f64| if a > 0.0 { 100.0 * b / a } else { 0.0 };
    let paper = |v: f64| prefix.is_empty().then_some(v);
    [
        Comparison {
            label: format!("{prefix}ice-plus reclaims as % of ice's"),
            paper: paper(paper::ICE_PLUS_SHARE_PCT.0),
            ours: share(sums[0], sums[1]),
        },
        Comparison {
            label: format!("{prefix}ice-plus refaults as % of ice's"),
            paper: paper(paper::ICE_PLUS_SHARE_PCT.1),
            ours: share(sums[2], sums[3]),
        },
    ]
}

/// Table 6's summary with both phones running Android 10 lmkd's default PSI mode (a
/// what-if: the Pixel 3 runs lmkd with minfree levels, the P20 the in-kernel minfree
/// driver). Ice+'s reclaim-or-kill exclusivity has something to act on only where the
/// killer kills.
fn table6_psi(runs: &[RunRecord]) -> Table {
    let mut t = Table {
        title: "Table 6 what-if: both phones with Android 10 lmkd's default PSI mode (kills on memory stalls)".into(),
        unit: "percent; kills per run".into(),
        rows: vec![],
    };
    let reclaims = |m: &Metrics| m.reclaimed_pages as f64;
    let kills = |m: &Metrics| m.kills as f64;
    let mut sums = [0.0; 4];
    for (dev, n) in DEVICES {
        // Summed over the scenarios: each one's mean over draws.
        let sum = |policy: &str, f: &dyn Fn(&Metrics) -> f64| -> f64 {
            SCENARIOS.iter().map(|(_, wl)| mean_where(runs, |r| r.policy == policy && evaluation_with_killer(r, dev, wl, n, true), f)).sum()
        };
        let v = [sum("ice", &reclaims), sum("ice-plus", &reclaims), sum("ice", &refaults), sum("ice-plus", &refaults)];
        for i in 0..4 {
            sums[i] += v[i];
        }
        t.rows.extend(ice_plus_shares(&format!("{dev} "), v));
        for policy in ["ice", "ice-plus"] {
            t.rows.push(Comparison {
                label: format!("{dev} {policy} kills"),
                paper: None,
                ours: sum(policy, &kills) / SCENARIOS.len() as f64,
            });
        }
    }
    t.rows.extend(ice_plus_shares("", sums));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_has_every_device_scenario_and_policy_at_the_papers_bg_counts() {
        let s = specs(true);
        for (dev, n) in DEVICES {
            for (_, wl) in SCENARIOS {
                for p in POLICIES {
                    assert!(
                        s.iter().any(|r| r.device == dev && r.workload == wl && r.policy == p && r.bg_apps == Some(n)),
                        "{dev} {wl} {p}"
                    );
                }
            }
        }
        assert!(s.len() < specs(false).len());
        // §6.1.2's launch experiment: every phone and policy, in the listed and in a
        // shuffled order, 3 rounds quick, 10 full.
        for (quick, rounds) in [(true, Some(3)), (false, None)] {
            for (dev, _) in DEVICES {
                for p in POLICIES {
                    for shuffled in [false, true] {
                        let n = specs(quick)
                            .iter()
                            .filter(|r| r.device == dev && r.workload == LAUNCH_WORKLOAD && r.policy == p && r.shuffle_rounds == shuffled)
                            .count();
                        assert_eq!(n, 1, "{dev} {p} shuffled {shuffled}");
                    }
                    assert!(specs(quick).iter().any(|r| r.workload == LAUNCH_WORKLOAD && r.device == dev && r.rounds == rounds));
                }
            }
        }
    }

    /// Fig. 12 reads cold and hot launch means off each run's launch log, and compares
    /// the mean of both phones with the paper's figures.
    #[test]
    fn launch_table_averages_cold_and_hot_launches_per_run() {
        use floe_core::{LaunchKind, LaunchLog};
        let log = |kind, ms| LaunchLog::new("facebook", kind, ms, 0);
        let run = |dev: &str, policy: &str, launches: Vec<LaunchLog>, hot: f64| RunRecord {
            metrics: Metrics { caching_capability: hot, ..Default::default() },
            launches,
            ..RunRecord::new(policy, dev, LAUNCH_WORKLOAD, 1)
        };
        let mut runs = Vec::new();
        for (dev, _) in DEVICES {
            runs.push(run(
                dev,
                "lru-cfs",
                vec![log(LaunchKind::Cold, 4000.0), log(LaunchKind::Cold, 6000.0), log(LaunchKind::Warm, 400.0)],
                8.0,
            ));
            runs.push(run(dev, "ice", vec![log(LaunchKind::Cold, 3000.0), log(LaunchKind::Warm, 500.0)], 10.0));
        }
        runs.push(run("p20", "ucsg", vec![log(LaunchKind::Cold, 1000.0)], 0.0));
        // The main runs draw each round's order afresh; Table 3's order counts only in
        // its own rows.
        for r in &mut runs {
            r.params.insert("shuffle_rounds".into(), floe_core::Param::Bool(true));
        }
        for (dev, _) in DEVICES {
            for (policy, hot) in [("lru-cfs", 2.0), ("ice", 3.0)] {
                runs.insert(0, run(dev, policy, vec![log(LaunchKind::Cold, 9000.0)], hot));
            }
        }
        let t = launch_table(&runs);
        let row = |label: &str| t.row(label).ours;
        assert!((row("p20 lru-cfs launch ms") - 10_400.0 / 3.0).abs() < 1e-9);
        assert_eq!(row("p20 lru-cfs cold ms"), 5000.0);
        assert_eq!(row("pixel3 ice hot ms"), 500.0);
        assert!(row("p20 ucsg hot ms").is_nan(), "no hot launch: n/a");
        assert_eq!(row("both phones lru-cfs cold ms"), 5000.0);
        assert_eq!(row("ice cut of cold launch time %"), 40.0);
        assert_eq!(row("ice gain in hot launches %"), 25.0);
        assert!((row("ice cut of launch time %") - pct_cut(10_400.0 / 3.0, 1750.0)).abs() < 1e-9);
        assert_eq!(row("Table 3's order: both phones lru-cfs hot per round"), 2.0);
        assert_eq!(row("Table 3's order: ice gain in hot launches %"), 50.0);
        assert_eq!(row("Table 3's order: ice cut of launch time %"), 0.0);
        // Fig. 13: pixel3 ice launches 3000 and 500 ms (sd 1250); no ice-plus run.
        assert_eq!(row("Fig. 13: pixel3 ice launch ms stddev"), 1250.0);
        assert!(row("Fig. 13: pixel3 ice-plus launch ms stddev").is_nan());
    }

    /// Fig. 3 reads LRU+CFS's shuffled launch runs per phone, and the fixed-set call:
    /// the system's refaults count as background, the foreground app's do not.
    #[test]
    fn fig3_counts_every_refault_but_the_foreground_apps_as_background() {
        let m = |fg: u64, bg: u64, system: u64, reclaimed: u64| Metrics {
            refaults_fg_file: fg,
            refaults_bg_anon: bg,
            refaults_system: system,
            reclaimed_pages: reclaimed,
            ..Default::default()
        };
        let launch = |dev: &str, policy: &str, shuffled: bool, metrics: Metrics| {
            let mut r = RunRecord { metrics, ..RunRecord::new(policy, dev, LAUNCH_WORKLOAD, 1) };
            if shuffled {
                r.params.insert("shuffle_rounds".into(), floe_core::Param::Bool(true));
            }
            r
        };
        let mut call = record(SCENARIOS[0].1, 8, Some(true), 0.0, 30.0);
        call.metrics = m(0, 40, 10, 500);
        let runs = vec![
            launch("p20", "lru-cfs", true, m(30, 50, 20, 400)),
            launch("p20", "lru-cfs", false, m(100, 0, 0, 100)),
            launch("p20", "ice", true, m(100, 0, 0, 100)),
            launch("pixel3", "lru-cfs", true, m(60, 20, 20, 200)),
            call,
        ];
        let t = fig3_table(&runs);
        let row = |label: &str| t.row(label).ours;
        assert_eq!(row("p20 launch experiment refault ratio (paper: the P20's)"), 25.0);
        assert_eq!(row("p20 launch experiment BG share of refaults (paper: the P20's)"), 70.0);
        assert_eq!(t.row("p20 launch experiment BG share of refaults (paper: the P20's)").paper, Some(65.0));
        assert_eq!(row("pixel3 launch experiment refault ratio (paper: all phones')"), 50.0);
        assert_eq!(row("pixel3 launch experiment BG share of refaults (paper: all phones')"), 40.0);
        assert_eq!(row("S-A BG-apps refault ratio"), 10.0);
        assert_eq!(row("S-A BG-apps BG share of refaults"), 100.0);
    }

    fn record(wl: &str, bg: i64, fixed: Option<bool>, balloon: f64, fps: f64) -> RunRecord {
        use floe_core::Param;
        let mut params = std::collections::BTreeMap::new();
        params.insert("bg_apps".to_string(), Param::Int(bg));
        params.insert("balloon_mib".to_string(), Param::Float(balloon));
        if let Some(f) = fixed {
            params.insert("bg_fixed".to_string(), Param::Bool(f));
        }
        RunRecord {
            params,
            metrics: Metrics { fps, reclaimed_pages: fps as u64, ..Default::default() },
            ..RunRecord::new("lru-cfs", "p20", wl, 1)
        }
    }

    /// Fig. 2(b) cuts the fixed-set BG-apps runs into 30 s slices of rendering (after
    /// the foreground's first frame, whole slices only), sorts them by background
    /// refaults and compares the tenth with the fewest with the tenth with the most.
    #[test]
    fn fig2b_compares_the_slices_with_the_fewest_and_the_most_background_refaults() {
        let second = |t_s: f64, frames: u64, refaults: u64| floe_core::Sample {
            t_s,
            frames: Some(frames),
            refaults_bg_anon: refaults / 2,
            refaults_bg_file: refaults - refaults / 2,
            reclaimed_pages: 10 * refaults,
            ..Default::default()
        };
        let mut fixed = record(SCENARIOS[0].1, 8, Some(true), 0.0, 50.0);
        // The launch: 5 s without a frame and the second of the first frame, with many
        // refaults that would land in the top slice if they were counted.
        let mut t = 250.0;
        for frames in [0, 0, 0, 0, 0, 7] {
            t += 1.0;
            fixed.slices.push(second(t, frames, 100_000));
        }
        // Twenty slices of 30 s in an order unlike their refaults: slice i has 30 x i
        // refaults and renders 60 - i fps.
        for i in (0..20u64).rev() {
            for _ in 0..30 {
                t += 1.0;
                fixed.slices.push(second(t, 60 - i, i));
            }
        }
        // 12 s more: not a whole slice.
        for _ in 0..12 {
            t += 1.0;
            fixed.slices.push(second(t, 1, 1_000_000));
        }
        // A drawn run's samples are not Fig. 2(b)'s.
        let mut drawn = record(SCENARIOS[0].1, 8, None, 0.0, 50.0);
        drawn.slices = (0..90).map(|k| second(k as f64, 5, 5000)).collect();
        // Memtester's run: three slices after its first frame, the first swapping pages
        // out, the second reclaiming file pages only, the third nothing.
        // (Its runs carry the fixed set's flag too, as the real ones do.)
        let mut memtester = record(SCENARIOS[0].1, 0, Some(true), 900.0, 30.0);
        memtester.slices.push(second(10.0, 7, 0));
        for k in 0..90u64 {
            let (reclaimed, anon) = [(5, 5), (3, 0), (0, 0)][k as usize / 30];
            let s = floe_core::Sample { reclaimed_pages: reclaimed, reclaimed_anon_pages: Some(anon), ..second(11.0 + k as f64, 30, 0) };
            memtester.slices.push(s);
        }
        let tb = slices_table(&[drawn, fixed, memtester]);
        let row = |label: &str| tb.row(label).ours;
        assert_eq!(row("BG-apps slices that reclaim %"), 95.0, "all but the slice with no refault to reclaim for");
        assert!((row("BG-memtester slices that reclaim %") - 200.0 / 3.0).abs() < 1e-9);
        assert!((row("BG-memtester slices that swap out %") - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(row("slices"), 20.0);
        assert_eq!(row("fewest BG refaults (0-10th pct) fps"), 59.5);
        assert_eq!(row("fewest: BG refaults per slice"), 15.0);
        assert_eq!(row("most: BG refaults per slice"), 555.0);
        assert_eq!(row("most: reclaims per slice"), 5550.0);
        assert!((row("most BG refaults (90-100th pct) fps change %") + pct_cut(59.5, 41.5)).abs() < 1e-9);
    }

    /// Table 1 averages the rounds of each N, in percent of all cores, beside the
    /// paper's figures (floe's system load makes the no-app row comparable).
    #[test]
    fn table1_averages_the_rounds_beside_the_papers_utilisation() {
        let u = |mean, peak| Utilisation { mean, peak };
        let cases = [(0, u(0.43, 0.5)), (2, u(0.01, 0.05)), (2, u(0.03, 0.07)), (8, u(0.12, 0.30)), (4, u(0.02, 0.10)), (6, u(0.05, 0.2))];
        let t = table1(&cases);
        let row = |label: &str| t.row(label);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(row("N = 2 average").ours, 2.0) && close(row("N = 2 peak").ours, 6.0));
        assert!(close(row("N = 8 average").ours, 12.0) && close(row("N = 8 peak").ours, 30.0));
        assert!(close(row("N = 0 average").ours, 43.0));
        assert_eq!(row("N = 0 average").paper, Some(43.0));
        assert_eq!(row("N = 8 average").paper, Some(55.0));
        assert_eq!(row("N = 8 peak").paper, Some(69.0));
        assert_eq!(row("N = 2 average").paper, Some(46.0));
    }

    /// Fig. 4 sums the tested apps' pages: the refaulted share of all reclaimed pages,
    /// its range over apps, and the refaults' anonymous share.
    #[test]
    fn fig4_sums_the_tested_apps_pages() {
        let apps = [
            ("a".to_string(), Reclaimed { anon: 600, file: 400, refaulted_anon: 100, refaulted_file: 100 }),
            ("b".to_string(), Reclaimed { anon: 2000, file: 1000, refaulted_anon: 300, refaulted_file: 500 }),
        ];
        let t = fig4_table(&apps);
        let row = |label: &str| t.row(label).ours;
        assert_eq!(row("apps tested"), 2.0);
        assert_eq!(row("reclaimed pages per app"), 2000.0);
        assert_eq!(row("refaulted within 30 s, % of reclaimed (paper: more than)"), 25.0);
        assert_eq!(row("  least of one app %"), 20.0);
        assert!((row("  most of one app %") - 80.0 / 3.0).abs() < 1e-9);
        assert_eq!(row("anonymous share of the refaults %"), 40.0);
        assert_eq!(row("anonymous share of the reclaimed pages %"), 65.0);
    }

    /// The motivation cases land in the Fig. 1 table and nowhere else: a drawn 8-app
    /// run, the fixed-set run, BG-null and memtester each have their own fps here.
    #[test]
    fn motivation_runs_stay_out_of_the_evaluation_tables() {
        let mut runs = Vec::new();
        for (_, wl) in SCENARIOS {
            runs.push(record(wl, 8, Some(false), 0.0, 50.0)); // evaluation draw
            runs.push(record(wl, 8, Some(true), 0.0, 30.0)); // Fig. 1's set
            runs.push(record(wl, 0, Some(false), 0.0, 60.0)); // BG-null
            runs.push(record(wl, 0, Some(false), 900.0, 45.0)); // memtester
        }
        let rep = report(runs, true);
        let row = |title: &str, label: &str| {
            let t = rep.tables.iter().find(|t| t.title.starts_with(title)).unwrap();
            t.row(label).ours
        };
        assert_eq!(row("Fig. 9: frame rate", "p20 S-A lru-cfs"), 50.0);
        assert_eq!(row("Fig. 1", "S-A BG-null fps"), 60.0);
        assert_eq!(row("Fig. 1", "S-A BG-apps fps change %"), -50.0);
        assert_eq!(row("Fig. 1", "mean BG-memtester fps change %"), -25.0);
        assert_eq!(row("Fig. 1", "S-A BG-apps reclaims"), 30.0);
        assert_eq!(row("Fig. 10", "p20 0B+F lru-cfs fps"), 60.0);
    }

    /// Fig. 2(a) is shown read both ways, the video call's counts and the four
    /// scenarios' sums; the claim of 84.4 % more reclaims with the apps than with the
    /// balloon is judged on the call's; LRU+CFS's Section 6 counts are derived from
    /// Table 5's Ice counts and Fig. 11's cuts.
    #[test]
    fn fig2a_is_read_per_call_and_summed_and_its_reclaim_claim_judged() {
        let mut runs = Vec::new();
        for (i, (_, wl)) in SCENARIOS.iter().enumerate() {
            let k = i as f64;
            runs.push(record(wl, 8, Some(true), 0.0, 40.0 + 10.0 * k)); // Fig. 1's set
            runs.push(record(wl, 0, Some(false), 0.0, 60.0)); // BG-null
            runs.push(record(wl, 0, Some(false), 900.0, 20.0 + 5.0 * k)); // memtester

            // Of the reclaims, the anonymous: the apps' 10, the balloon's 16.
            let n = runs.len();
            (runs[n - 3].metrics.reclaimed_anon_pages, runs[n - 1].metrics.reclaimed_anon_pages) = (10, 16);
        }
        let rep = report(runs, true);
        let t = |title: &str| rep.tables.iter().find(|t| t.title.starts_with(title)).unwrap();
        let fig1 = t("Fig. 1");
        assert_eq!(fig1.row("S-A BG-apps reclaims").ours, 40.0);
        assert_eq!(fig1.row("four scenarios' BG-apps reclaims").ours, 40.0 + 50.0 + 60.0 + 70.0);
        assert_eq!(fig1.row("four scenarios' BG-memtester reclaims").ours, 20.0 + 25.0 + 30.0 + 35.0);
        assert_eq!(fig1.row("four scenarios' BG-memtester reclaims").paper, Some(55_637.0));
        assert_eq!(fig1.row("S-A BG-apps reclaims over BG-memtester's %").ours, 100.0);
        assert_eq!(fig1.row("four scenarios' BG-apps reclaims over BG-memtester's %").ours, 100.0);
        // Read as the pswpout Ice watched: the anonymous reclaims, S-A's.
        assert_eq!(fig1.row("S-A BG-memtester anonymous reclaims").ours, 16.0);
        assert_eq!(fig1.row("S-A BG-apps anonymous reclaims").paper, Some(102_581.0));
        assert_eq!(fig1.row("S-A BG-apps anonymous reclaims over BG-memtester's %").ours, -37.5);
        let paper_more = fig1.row("S-A BG-apps reclaims over BG-memtester's %").paper.unwrap();
        assert!((paper_more - 84.38).abs() < 0.01, "{paper_more}");
        let f = rep.findings.iter().find(|f| f.claim.starts_with("Cached apps make reclaim take more pages")).unwrap();
        assert!(f.holds && f.floe == Some(100.0), "{f:?}");
        let t5 = t("Table 5");
        let derived = t5.row("S-A lru-cfs refaults: Table 5's ice / (1 - Fig. 11's cut)").paper.unwrap();
        assert!((derived - 5.233 / (1.0 - 0.421)).abs() < 1e-9, "{derived}");
        let derived = t5.row("S-D lru-cfs reclaims: Table 5's ice / Fig. 11's 70.7 %").paper.unwrap();
        assert!((derived - 46.848 / 0.707).abs() < 1e-9, "{derived}");
        let summed = t5.row("four scenarios' lru-cfs refaults").paper.unwrap();
        assert!((summed - 48.03).abs() < 0.01, "{summed}");
    }

    /// §6.1.1's "four apps frozen on average": the background apps Ice froze at least
    /// once in each drawn 8-app run on the P20, averaged over draws and scenarios; the
    /// fixed-set run and other policies' runs stay out, and the finding reads the row.
    #[test]
    fn apps_frozen_counts_the_apps_ice_froze_in_each_evaluation_run() {
        let app = |name: &str, freezes: u64| floe_core::AppStats { app: name.into(), freezes, ..Default::default() };
        let mut runs = Vec::new();
        for (_, wl) in SCENARIOS {
            for (fixed, policy, frozen) in [(false, "ice", 3), (false, "ice", 5), (true, "ice", 8), (false, "lru-cfs", 8)] {
                let mut r = record(wl, 8, Some(fixed), 0.0, 50.0);
                r.policy = policy.into();
                r.apps = (0..8).map(|i| app(&format!("a{i}"), u64::from(i < frozen))).collect();
                r.apps.push(app("fg", 0));
                runs.push(r);
            }
        }
        let rep = report(runs, true);
        let fig11 = rep.tables.iter().find(|t| t.title.starts_with("Fig. 11")).unwrap();
        assert_eq!(fig11.row("apps ice froze a run (mean of the four)").ours, 4.0);
        let f = rep.findings.iter().find(|f| f.claim.starts_with("Ice freezes only some")).unwrap();
        assert_eq!(f.verdict, floe_core::Verdict::Matches, "{f:?}");
    }

    /// Per-draw cuts 50 % and 30 % (seeds 1, 2; seed 3 refaults nothing and has no
    /// cut): mean 40, sd 14.14, stderr 10.
    #[test]
    fn the_cut_spread_pairs_each_draw_with_its_own_baseline() {
        let mut runs = Vec::new();
        for (seed, base, with) in [(1u64, 100u64, 50u64), (2, 200, 140), (3, 0, 0)] {
            for (policy, n) in [("lru-cfs", base), ("ice", with)] {
                let mut r = record("ice-video-call", 8, Some(false), 0.0, 0.0);
                r.policy = policy.into();
                r.seed = seed;
                r.metrics.refaults_bg_anon = n;
                runs.push(r);
            }
        }
        let keep = |r: &RunRecord| evaluation(r, "p20", "ice-video-call", 8);
        let se = paired_cut_stderr(&runs, keep, "lru-cfs", "ice", refaults);
        assert!((se - 10.0).abs() < 1e-9, "{se}");
        assert!(paired_cut_stderr(&runs[..2], keep, "lru-cfs", "ice", refaults).is_nan());
    }

    /// Table 6's totals and its row-by-row count: Ice+ reclaims more than Ice in the
    /// Pixel3's four scenarios only (2 and 1 thousand pages against 1 each), refaults
    /// less everywhere; the paper's own rows give 0 % and 12.5 % (P20 S-C's refaults).
    #[test]
    fn table6_counts_the_rows_where_ice_plus_took_more_than_ice() {
        let mut runs = Vec::new();
        for (dev, n) in DEVICES {
            for (_, wl) in SCENARIOS {
                for (policy, reclaims, refaults) in [("ice", 1000, 400), ("ice-plus", if dev == "pixel3" { 2000 } else { 1000 }, 300)] {
                    let mut r = record(wl, n as i64, Some(false), 0.0, 0.0);
                    (r.policy, r.device) = (policy.into(), dev.into());
                    r.metrics.reclaimed_pages = reclaims;
                    r.metrics.refaults_bg_anon = refaults;
                    runs.push(r);
                }
            }
        }
        let t = table6(&runs);
        assert_eq!(t.row("rows where ice-plus reclaims exceed ice's, %").ours, 50.0);
        assert_eq!(t.row("rows where ice-plus reclaims exceed ice's, %").paper, Some(0.0));
        assert_eq!(t.row("rows where ice-plus refaults exceed ice's, %").ours, 0.0);
        assert_eq!(t.row("rows where ice-plus refaults exceed ice's, %").paper, Some(12.5));
        assert_eq!(t.row("ice-plus reclaims as % of ice's").ours, 150.0);
        assert_eq!(t.row("ice-plus refaults as % of ice's").ours, 75.0);
    }

    /// The what-if runs (lmkd's PSI mode on both phones) stay out of Table 6 and fill
    /// their own table.
    #[test]
    fn runs_with_another_killer_fill_only_the_what_if_table() {
        let mut runs = Vec::new();
        for (dev, n) in DEVICES {
            for (_, wl) in SCENARIOS {
                // Own killer: Ice+ takes as much as Ice; lmkd's PSI mode: half (the
                // Pixel 3) or a quarter (the P20), and kills.
                for (replaced, plus) in [(false, 1000), (true, if dev == "pixel3" { 500 } else { 250 })] {
                    for (policy, reclaims) in [("ice", 1000), ("ice-plus", plus)] {
                        let mut r = record(wl, n as i64, Some(false), 0.0, 0.0);
                        (r.policy, r.device) = (policy.into(), dev.into());
                        (r.metrics.reclaimed_pages, r.metrics.refaults_bg_file) = (reclaims, reclaims);
                        if replaced {
                            r.params.insert("lmkd_override".into(), floe_core::Param::Bool(true));
                            r.metrics.kills = 2;
                        }
                        runs.push(r);
                    }
                }
            }
        }
        assert_eq!(table6(&runs).row("ice-plus reclaims as % of ice's").ours, 100.0, "Table 6 has each device's own killer's runs only");
        let t = table6_psi(&runs);
        assert_eq!(t.row("pixel3 ice-plus reclaims as % of ice's").ours, 50.0);
        assert_eq!(t.row("p20 ice-plus refaults as % of ice's").ours, 25.0);
        assert_eq!(t.row("p20 ice kills").ours, 2.0);
        assert_eq!(t.row("ice-plus reclaims as % of ice's").ours, 37.5);
        assert_eq!(t.row("ice-plus refaults as % of ice's").paper, Some(87.34));
    }

    /// Memtester's balloon brings the memory occupied in total to 5.52 GiB, the system's
    /// share included, in whole MiB; where the device cannot take that much, the largest
    /// whole MiB it takes.
    #[test]
    fn memtester_fills_the_p20_to_5_52_gib_with_the_system_up_to_the_largest_balloon() {
        let dev = floe_sim::Device::load(MOTIVATION_DEVICE).unwrap();
        let system_mib = dev.memory.ram_mib - dev.memory.app_mem_mib;
        let want_mib = 5.52 * 1024.0 - system_mib;
        let b = memtester_mib().unwrap();
        assert!(b > 0.0 && b == b.floor() && dev.balloon_fits(b), "{b}");
        assert!(b == want_mib.floor() || (b < want_mib && !dev.balloon_fits(b + 1.0)), "{b}");
        // With room to spare, exactly the 5.52 GiB total, floored to whole MiB.
        let mut roomy = dev.clone();
        roomy.memory.watermark_high_mib = 10.0;
        assert!(roomy.balloon_fits(want_mib));
        assert_eq!(memtester_on(&roomy), want_mib.floor());
        // With room for 1000.5 MiB only, 1000 (a balloon must be smaller than the room).
        let mut tight = dev.clone();
        tight.memory.watermark_high_mib = (tight.memory.app_mem_mib - 1000.5) / 2.0;
        assert_eq!(memtester_on(&tight), 1000.0);
        assert!(tight.balloon_fits(1000.0) && !tight.balloon_fits(1001.0));
    }
}
