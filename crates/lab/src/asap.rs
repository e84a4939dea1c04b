//! The ASAP paper's evaluation (Son et al., USENIX ATC 2021, §6): eight apps switched in
//! three sequences (Table 6.3), each iterated 10 times, on the Pixel 4 and the Pixel 3a
//! with lmkd off; switch time per app against demand paging for anon-only, file-only and
//! both estimators (Figs. 6.1, 6.2), and demand paging's switch with the app's pages out
//! of memory against the ideal (Fig. 2.1, §2.2); estimator precision and recall (Fig. 6.3); the CPU
//! and flash traffic prepaging adds (Figs. 6.4, 6.5 in summary).

use crate::report::{against_bar, mean_where, pct_cut, range, value, warm_ms_by_app, Comparison, PaperFigure, Report, Table, Want};
use crate::RunSpec;
use floe_core::{Finding, LaunchKind, LaunchLog, Metrics, RunRecord};
use floe_sim::{Catalog, Device, SimError, Workload};
use std::collections::BTreeMap;

pub(crate) const DEVICES: [&str; 2] = ["pixel4", "pixel3a"];
const SEQUENCES: [&str; 3] = ["asap-seq1", "asap-seq2", "asap-seq3"];
const QUICK_ROUNDS: u32 = 6;
const POLICIES: [&str; 4] = ["demand-paging", "asap-anon", "asap-file", "asap"];

/// Published figures quoted in ASAP's §6 text.
pub(crate) mod paper {
    /// §6.2: mean switch-time improvement over the baseline, percent, per device:
    /// (ASAP, Anon-only, File-only).
    pub const IMPROVEMENT_PCT: [(&str, [f64; 3]); 2] = [("pixel4", [22.2, 6.8, 18.3]), ("pixel3a", [28.3, 14.6, 14.4])];
    /// §6.3 (Pixel 4): (precision, recall) in percent of the anonymous and the
    /// file-backed estimators.
    pub const ANON_PR: (f64, f64) = (68.4, 60.4);
    pub const FILE_PR: (f64, f64) = (79.3, 52.2);
    /// §2.2 on Fig. 2.1 (Pixel 4): the overhead of memory pressure "increases the
    /// application switch time by a factor of 4x relative to the ideal switch time".
    pub const PRESSURE_OVER_IDEAL: f64 = 4.0;
    /// §2.3 on Fig. 2.2 (Pixel 4, the same switches under memory pressure): "CPU
    /// utilization is measured only 34.2 % during the switch", the mean of the eight
    /// cores, and "only 19.4 % of the maximum disk bandwidth is used on average" (the
    /// bandwidth being the read throughput over fio's peak sequential read, §6.4).
    pub const SWITCH_CPU_PCT: f64 = 34.2;
    pub const SWITCH_DISK_PCT: f64 = 19.4;
    /// §6.4 on Figs. 6.4 and 6.5 (Pixel 4): ASAP "increases the CPU utilization to 1.18x
    /// on average over the total switch time", and "improves the I/O bandwidth by 25.2 %
    /// on average".
    pub const CPU_OVER_BASELINE: f64 = 1.18;
    pub const IO_BANDWIDTH_GAIN_PCT: f64 = 25.2;
}

/// The balloon that puts the eight apps under memory pressure. ASAP balloons its devices
/// "by considering the entire footprint of the target applications" (§6.1) without
/// giving the size; with floe's catalog footprints the published 4 GB leaves them room
/// to spare (no reclaim at all), so floe leaves the apps half their summed footprint:
/// an assumption, fixed before any ASAP run and the same for every policy.
pub fn pressure_balloon_mib(device: &str) -> Result<f64, SimError> {
    let cat = Catalog::embedded()?;
    let wl = Workload::load(SEQUENCES[0], &cat)?;
    let dev = Device::load(device)?;
    let mut seen: Vec<&str> = Vec::new();
    let mut total = 0.0;
    for a in &wl.sequence {
        if !seen.contains(&a.as_str()) {
            seen.push(a);
            let s = cat.get(a).expect("validated workload");
            total += s.anon_mib + s.file_mib;
        }
    }
    Ok((dev.memory.app_mem_mib - total / 2.0).max(0.0))
}

/// The run list: every device, sequence and policy at the pressure balloon; `quick`
/// iterates each sequence `QUICK_ROUNDS` times instead of 10 (the anonymous estimator
/// needs a fault and a later access before it prepages a page: the fourth switch at the
/// earliest). Fig. 2.1 comes from switches of its own ([`fig21`]).
pub fn specs(quick: bool) -> Result<Vec<RunSpec>, SimError> {
    let mut v = Vec::new();
    for dev in DEVICES {
        let balloon = pressure_balloon_mib(dev)?;
        for wl in SEQUENCES {
            for p in POLICIES {
                v.push(RunSpec { balloon_mib: Some(balloon), rounds: quick.then_some(QUICK_ROUNDS), ..RunSpec::new(dev, wl, p) });
            }
        }
    }
    Ok(v)
}

pub fn run(quick: bool, seeds: u32, progress: crate::Progress) -> Result<Report, SimError> {
    // Fig. 2.1 comes from switches of its own, made with each replicate's seed.
    let fig21 = fig21_by_replicate(seeds)?;
    let report = |runs: Vec<RunRecord>| {
        let table = fig21_of(&fig21, &runs);
        let mut rep = report(runs, quick);
        rep.tables.insert(0, table);
        rep
    };
    crate::run_replicated(&specs(quick)?, seeds, progress, report, findings)
}

/// Mean switch (warm launch) time per app over a device's sequences, for one policy.
fn per_app(runs: &[RunRecord], dev: &str, policy: &str) -> BTreeMap<String, f64> {
    warm_ms_by_app(runs.iter().filter(|r| r.device == dev && r.policy == policy))
}

/// Mean of `f` over a device's runs of a policy under pressure.
fn mean(runs: &[RunRecord], dev: &str, policy: &str, f: impl Fn(&Metrics) -> f64) -> f64 {
    mean_where(runs, |r| r.device == dev && r.policy == policy, f)
}

/// Mean over a device's switches under pressure (warm launches), for one policy, of
/// `f` of the switch's record.
fn mean_over_switches(runs: &[RunRecord], dev: &str, policy: &str, f: impl Fn(&LaunchLog) -> f64) -> f64 {
    let xs: Vec<f64> = runs
        .iter()
        .filter(|r| r.device == dev && r.policy == policy)
        .flat_map(|r| r.launches.iter().filter(|l| l.kind == LaunchKind::Warm).map(&f))
        .collect();
    crate::report::mean(xs)
}

/// §6.4, Figs. 6.4 and 6.5 as the paper sums them up: the share of the cores busy and
/// the flash read throughput over the switch, each policy against demand paging.
fn utilisation_rows(runs: &[RunRecord], dev: &str) -> Vec<Comparison> {
    let pixel4 = dev == "pixel4";
    let cpu = |p: &str| mean_over_switches(runs, dev, p, |l| l.cpu_share);
    let io = |p: &str| mean_over_switches(runs, dev, p, |l| l.read_bytes_s / 1048576.0);
    let mut rows = vec![
        Comparison { label: format!("{dev} demand-paging CPU busy over a switch %"), paper: None, ours: 100.0 * cpu("demand-paging") },
        Comparison { label: format!("{dev} demand-paging flash read over a switch, MiB/s"), paper: None, ours: io("demand-paging") },
    ];
    for p in &POLICIES[1..] {
        rows.push(Comparison {
            label: format!("{dev} {p} CPU busy / demand-paging's"),
            paper: (pixel4 && *p == "asap").then_some(paper::CPU_OVER_BASELINE),
            ours: cpu(p) / cpu("demand-paging"),
        });
        rows.push(Comparison {
            label: format!("{dev} {p} flash read throughput over demand-paging's %"),
            paper: (pixel4 && *p == "asap").then_some(paper::IO_BANDWIDTH_GAIN_PCT),
            ours: 100.0 * (io(p) / io("demand-paging") - 1.0),
        });
    }
    rows
}

/// One app's switches of Fig. 2.1 on one phone, from [`fig21`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fig21Switches {
    pub dev: String,
    pub app: String,
    /// The switch time in each of the three cases ([`Fig21Case`] order), ms.
    pub ms: [f64; 3],
    /// Fig. 2.2 on the switch with most pages out: the share of the cores' time busy
    /// (the mean of eight cores, percent) and the flash read throughput against the
    /// phone's peak sequential read (percent).
    pub cpu_pct: f64,
    pub read_pct: f64,
}

/// Fig. 2.1's switches: per device, each app's.
pub(crate) type Fig21 = Vec<Fig21Switches>;

/// Fig. 2.1, as §2.2 defines its cases, under demand paging on both phones: the mean
/// switch time over the eight apps in each case, the ratio of the means with most pages
/// out to the ideal (the thesis's 4x, Pixel 4) and its range over the apps.
pub(crate) fn fig21_table(switches: &Fig21) -> Table {
    let mut t = Table {
        title: "Fig. 2.1: demand paging's switch time with the app's pages out of memory against the ideal (every page in memory); Fig. 2.2: the CPU and flash it keeps busy".into(),
        unit: "ms; ratio; percent".into(),
        rows: vec![],
    };
    for dev in DEVICES {
        let of_dev: Vec<&Fig21Switches> = switches.iter().filter(|s| s.dev == dev).collect();
        let mean_of = |i: usize| crate::report::mean(of_dev.iter().map(|s| s.ms[i]));
        let (lo, hi) = range(of_dev.iter().map(|s| s.ms[2] / s.ms[0]));
        t.rows.push(Comparison { label: format!("{dev} ideal switch ms"), paper: None, ours: mean_of(0) });
        t.rows.push(Comparison { label: format!("{dev} switch ms, file-backed pages on disk"), paper: None, ours: mean_of(1) });
        t.rows.push(Comparison { label: format!("{dev} switch ms, most pages not in memory"), paper: None, ours: mean_of(2) });
        t.rows.push(Comparison {
            label: format!("{dev} most pages not in memory / ideal"),
            paper: (dev == "pixel4").then_some(paper::PRESSURE_OVER_IDEAL),
            ours: mean_of(2) / mean_of(0),
        });
        t.rows.push(Comparison { label: format!("{dev} most pages not in memory / ideal, least of an app"), paper: None, ours: lo });
        t.rows.push(Comparison { label: format!("{dev} most pages not in memory / ideal, most of an app"), paper: None, ours: hi });
        let pixel4 = |v: f64| (dev == "pixel4").then_some(v);
        t.rows.push(Comparison {
            label: format!("{dev} CPU busy over a switch with most pages not in memory %"),
            paper: pixel4(paper::SWITCH_CPU_PCT),
            ours: crate::report::mean(of_dev.iter().map(|s| s.cpu_pct)),
        });
        t.rows.push(Comparison {
            label: format!("{dev} flash read over that switch, % of peak"),
            paper: pixel4(paper::SWITCH_DISK_PCT),
            ours: crate::report::mean(of_dev.iter().map(|s| s.read_pct)),
        });
    }
    t
}

pub fn report(runs: Vec<RunRecord>, quick: bool) -> Report {
    let mut tables = vec![];
    let mut gains = Table { title: "§6.2: mean switch-time improvement over demand paging".into(), unit: "percent".into(), rows: vec![] };
    let mut pr = Table { title: "Fig. 6.3: estimator precision and recall".into(), unit: "percent".into(), rows: vec![] };
    let mut cost = Table {
        title: "Figs. 6.4, 6.5 in summary: what prepaging costs per switch".into(),
        unit: "ms of CPU; MiB read".into(),
        rows: vec![],
    };
    for dev in DEVICES {
        let base = per_app(&runs, dev, "demand-paging");
        let mut t = Table {
            title: format!("Fig. 6.{}: switch time per app on the {dev}, demand paging and speedup", if dev == "pixel4" { 1 } else { 2 }),
            unit: "ms; speedup x".into(),
            rows: vec![],
        };
        for (app, ms) in &base {
            t.rows.push(Comparison { label: format!("{app} demand-paging ms"), paper: None, ours: *ms });
            for p in &POLICIES[1..] {
                let other = per_app(&runs, dev, p);
                let sp = other.get(app).map_or(f64::NAN, |o| ms / o);
                t.rows.push(Comparison { label: format!("{app} {p} speedup"), paper: None, ours: sp });
            }
        }
        tables.push(t);
        let published = paper::IMPROVEMENT_PCT.iter().find(|(d, _)| *d == dev).map(|x| x.1);
        let b = mean(&runs, dev, "demand-paging", |m| m.switch_ms_mean);
        for (i, p) in ["asap", "asap-anon", "asap-file"].iter().enumerate() {
            gains.rows.push(Comparison {
                label: format!("{dev} {p}"),
                paper: published.map(|v| v[i]),
                ours: pct_cut(b, mean(&runs, dev, p, |m| m.switch_ms_mean)),
            });
        }
        let (ap, fp) = if dev == "pixel4" { (Some(paper::ANON_PR), Some(paper::FILE_PR)) } else { (None, None) };
        let pct = |x: Option<f64>| x.map_or(f64::NAN, |v| 100.0 * v);
        for (label, policy, published) in [("anonymous", "asap-anon", ap), ("file-backed", "asap-file", fp)] {
            pr.rows.push(Comparison {
                label: format!("{dev} {label} precision"),
                paper: published.map(|x| x.0),
                ours: mean(&runs, dev, policy, |m| pct(m.prepage_precision)),
            });
            pr.rows.push(Comparison {
                label: format!("{dev} {label} recall"),
                paper: published.map(|x| x.1),
                ours: mean(&runs, dev, policy, |m| pct(m.prepage_recall)),
            });
        }
        for p in POLICIES {
            let per = |f: &dyn Fn(&Metrics) -> f64| {
                mean(&runs, dev, p, |m| if m.launches_warm > 0 { f(m) / m.launches_warm as f64 } else { 0.0 })
            };
            cost.rows.push(Comparison { label: format!("{dev} {p} prepaging CPU"), paper: None, ours: per(&|m| m.cpu_ms_prepage) });
            cost.rows.push(Comparison {
                label: format!("{dev} {p} flash read"),
                paper: None,
                ours: per(&|m| m.flash_read_bytes as f64 / 1048576.0),
            });
        }
    }
    let util = Table {
        title: "§6.4 (Figs. 6.4, 6.5): CPU and flash over the switch, against demand paging".into(),
        unit: "percent; ratio".into(),
        rows: DEVICES.iter().flat_map(|d| utilisation_rows(&runs, d)).collect(),
    };
    tables.extend([gains, pr, cost, util]);
    let notes = vec![
        format!(
            "{}; seed 1; lmkd off (OOM killer only), zram on; balloons: pixel4 {:.0} MiB, pixel3a {:.0} MiB (memory left to apps = half the eight apps' summed footprint; see `pressure_balloon_mib`).",
            if quick { "--quick: each sequence iterated 6 times instead of 10" } else { "full run: each sequence iterated 10 times" },
            pressure_balloon_mib("pixel4").unwrap_or(f64::NAN),
            pressure_balloon_mib("pixel3a").unwrap_or(f64::NAN)
        ),
        "Fig. 2.1: each app alone, launched, used, left, its pages taken with per-process reclaim (`file`, then `all`) and switched back to 1 s later; ASAP times a switch to its first rendering, and the sequences' switch_cpu_share (the share of each app's warm-launch CPU run before it) is calibrated on this figure's 4x.".into(),
        "Known differences: a warm launch touches an invariant part of its cold launch's heap pages (about 81 %, so that over 10 switches 44 % of the pages touched are touched 9 or 10 times, ASAP Fig. 4.2) and a window of its heap at a random offset for the rest, which no estimator can foresee, so the anonymous estimator's tables (a page must fault, then be touched again within 5 switches) cover less of a switch's faults than ASAP's; while the file-backed footprint is the same every switch (precision 100 %). Read-ahead is asynchronous I/O served only when the flash has nothing else queued (CFQ-like); with a plain FIFO queue it delayed the switch's own first reads and file-only prepaging slowed switches. Precision and recall follow §6.3, counted per estimator, the baseline's faults taken as the pages not resident when the switch began.".into(),
    ];
    let findings = findings(&tables, &runs);
    Report { experiment: "asap".into(), runs, tables, findings, notes, seeds: 1, sd: vec![] }
}

/// ASAP's findings (§6.2), each checked against the report's tables, and per sequence
/// against the runs.
fn findings(t: &[Table], runs: &[RunRecord]) -> Vec<Finding> {
    let gain = |dev: &str, p: &str| value(t, "§6.2", &format!("{dev} {p}"));
    // The least cut of the mean switch time over the phones and sequences, and where.
    let least_per_sequence = |p: &str| {
        let switch = |dev: &str, wl: &str, policy: &str| {
            mean_where(runs, |r| r.device == dev && r.workload == wl && r.policy == policy, |m| m.switch_ms_mean)
        };
        DEVICES
            .iter()
            .flat_map(|dev| {
                SEQUENCES.iter().map(move |wl| (format!("{dev} {wl}"), pct_cut(switch(dev, wl, "demand-paging"), switch(dev, wl, p))))
            })
            .fold((String::from("none"), f64::INFINITY), |a, b| if b.1 < a.1 || b.1.is_nan() { b } else { a })
    };
    let (asap_where, asap_least) = least_per_sequence("asap");
    let least_of = |p: &str| DEVICES.iter().map(|d| gain(d, p)).fold(f64::INFINITY, f64::min);
    vec![
        against_bar(
            "ASAP cuts the mean switch time against demand paging on the Pixel 4 (§6.2: by 22.2 %)",
            ("cut", gain("pixel4", "asap")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(22.2),
        against_bar(
            "ASAP cuts the mean switch time against demand paging on the Pixel 3a (§6.2: by 28.3 %)",
            ("cut", gain("pixel3a", "asap")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(28.3),
        against_bar(
            "ASAP cuts the mean switch time on each of the three app sequences (§6.2)",
            (&format!("least cut, on {asap_where}"), asap_least),
            Want::Above,
            1.0,
            "%",
        ),
        against_bar(
            "Anonymous prepaging alone cuts the switch time on both phones (§6.2: by 6.8 and 14.6 %)",
            ("least of the two cuts", least_of("asap-anon")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(6.8),
        against_bar(
            "File prepaging alone cuts the switch time on both phones (§6.2: by 18.3 and 14.4 %)",
            ("least of the two cuts", least_of("asap-file")),
            Want::Above,
            1.0,
            "%",
        )
        .paper(14.4),
    ]
}

/// Fig. 2.1's three switches of one app, as §2.2 defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Fig21Case {
    /// "All of the applications' anonymous and file-backed pages reside in memory."
    Ideal,
    /// "All of the applications' anonymous pages are resident in memory, but almost all
    /// of file-backed pages do not reside in memory."
    FileOnDisk,
    /// "Most of the applications' anonymous pages are already swapped out" (and the
    /// file-backed pages out as in the case before).
    MostOut,
}

/// The gap between leaving an app and switching back to it in Fig. 2.1's test; the
/// thesis gives none (assumption: short, so the cached app's own wakeups bring back
/// little of what the reclaim took).
const FIG21_GAP_S: f64 = 1.0;

/// One switch of Fig. 2.1 on `device` (demand paging, every page fitting in memory):
/// `app` is launched and used as the sequences use it, left for the home screen, put in
/// `case`'s state with the Android kernels' per-process reclaim (`/proc/PID/reclaim`:
/// `file` for file-backed pages on disk, `all` for most pages out), and switched back
/// to after [`FIG21_GAP_S`]. Returns the switch's record.
pub(crate) fn fig21_switch(device: &str, app: &str, case: Fig21Case, seed: u64) -> Result<LaunchLog, SimError> {
    let catalog = Catalog::embedded()?;
    let mut wl = Workload::load(SEQUENCES[0], &catalog)?;
    wl.sequence = vec![app.to_string()];
    wl.rounds = 2;
    wl.idle_s = FIG21_GAP_S;
    wl.balloon_mib = 0.0;
    let mut dev = Device::load(device)?;
    dev.memory.app_mem_mib = dev.memory.ram_mib;
    let policy = floe_policies::make_spec("demand-paging").map_err(SimError::Policy)?;
    let mut sim = floe_sim::Sim::try_new(&dev, &wl, &catalog, policy, &floe_sim::RunOptions { seed, ..Default::default() })?;
    crate::run_until_left_foreground(&mut sim, app)?;
    match case {
        Fig21Case::Ideal => None,
        Fig21Case::FileOnDisk => sim.per_process_reclaim(app, floe_sim::ReclaimKind::File),
        Fig21Case::MostOut => sim.per_process_reclaim(app, floe_sim::ReclaimKind::All),
    };
    let rec = sim.run();
    rec.launches
        .iter()
        .find(|l| l.kind == LaunchKind::Warm)
        .cloned()
        .ok_or_else(|| SimError::Run(format!("{app} was not switched back to on the {device}")))
}

/// Fig. 2.1's switches on both phones with `seed`: every app of the sequences in each
/// case, in parallel.
pub(crate) fn fig21(seed: u64) -> Result<Fig21, SimError> {
    use rayon::prelude::*;
    let catalog = Catalog::embedded()?;
    let apps = Workload::load(SEQUENCES[0], &catalog)?.sequence;
    let peak: BTreeMap<&str, f64> =
        DEVICES.iter().map(|&d| Ok((d, Device::load(d)?.flash.seq_read_mib_s * 1024.0 * 1024.0))).collect::<Result<_, SimError>>()?;
    let jobs: Vec<(&str, &String)> = DEVICES.iter().flat_map(|d| apps.iter().map(move |a| (*d, a))).collect();
    jobs.par_iter()
        .map(|&(dev, app)| {
            let logs = [Fig21Case::Ideal, Fig21Case::FileOnDisk, Fig21Case::MostOut]
                .into_iter()
                .map(|case| fig21_switch(dev, app, case, seed))
                .collect::<Result<Vec<_>, _>>()?;
            // CPU and read bandwidth are Fig. 2.2's, of the switch with most pages out.
            let most_out = &logs[2];
            Ok(Fig21Switches {
                dev: dev.to_string(),
                app: app.clone(),
                ms: [logs[0].ms, logs[1].ms, logs[2].ms],
                cpu_pct: 100.0 * most_out.cpu_share,
                read_pct: 100.0 * most_out.read_bytes_s / peak[dev],
            })
        })
        .collect()
}

/// Fig. 2.1's table for each of `seeds` replicates, by the replicate's seed (the runs'
/// seed 1 plus the replicate's stride).
pub(crate) fn fig21_by_replicate(seeds: u32) -> Result<BTreeMap<u64, Table>, SimError> {
    (0..u64::from(seeds.max(1)))
        .map(|r| {
            let seed = 1 + r * crate::SEED_STRIDE;
            Ok((seed, fig21_table(&fig21(seed)?)))
        })
        .collect()
}

/// The Fig. 2.1 table of the replicate `runs` belong to (their first run's seed).
pub(crate) fn fig21_of(tables: &BTreeMap<u64, Table>, runs: &[RunRecord]) -> Table {
    let seed = runs.first().map_or(1, |r| r.seed);
    tables.get(&seed).or_else(|| tables.values().next()).cloned().unwrap_or_else(|| fig21_table(&Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 2.1's table averages each case over a device's apps and sets the means with
    /// most pages out against the ideal ones.
    #[test]
    fn fig21_table_sets_the_means_against_the_ideal() {
        let sw = |dev: &str, app: &str, ms: [f64; 3]| Fig21Switches {
            dev: dev.into(),
            app: app.into(),
            ms,
            cpu_pct: ms[0] / 10.0,
            read_pct: ms[1] / 10.0,
        };
        let switches = vec![
            sw("pixel4", "a", [100.0, 200.0, 300.0]),
            sw("pixel4", "b", [200.0, 300.0, 900.0]),
            sw("pixel3a", "a", [100.0, 100.0, 100.0]),
        ];
        let t = fig21_table(&switches);
        let row = |label: &str| t.row(label).ours;
        assert_eq!(row("pixel4 ideal switch ms"), 150.0);
        assert_eq!(row("pixel4 switch ms, file-backed pages on disk"), 250.0);
        assert_eq!(row("pixel4 switch ms, most pages not in memory"), 600.0);
        assert_eq!(row("pixel4 most pages not in memory / ideal"), 4.0);
        assert_eq!(t.row("pixel4 most pages not in memory / ideal").paper, Some(paper::PRESSURE_OVER_IDEAL));
        assert_eq!(row("pixel4 most pages not in memory / ideal, least of an app"), 3.0);
        assert_eq!(row("pixel4 most pages not in memory / ideal, most of an app"), 4.5);
        assert_eq!(row("pixel3a most pages not in memory / ideal"), 1.0);
        assert_eq!(t.row("pixel3a most pages not in memory / ideal").paper, None);
        // Fig. 2.2's rows: the means of the switches with most pages out.
        assert_eq!(row("pixel4 CPU busy over a switch with most pages not in memory %"), 15.0);
        assert_eq!(t.row("pixel4 CPU busy over a switch with most pages not in memory %").paper, Some(paper::SWITCH_CPU_PCT));
        assert_eq!(row("pixel4 flash read over that switch, % of peak"), 25.0);
        assert_eq!(t.row("pixel3a flash read over that switch, % of peak").paper, None);
    }

    /// Each replicate shows the Fig. 2.1 switches made with its own seed.
    #[test]
    fn each_replicate_takes_the_fig21_table_of_its_seed() {
        let table = |ms: f64| {
            fig21_table(&vec![Fig21Switches { dev: "pixel4".into(), app: "a".into(), ms: [ms, ms, 2.0 * ms], cpu_pct: 0.0, read_pct: 0.0 }])
        };
        let tables: BTreeMap<u64, Table> = [(1, table(100.0)), (1 + crate::SEED_STRIDE, table(300.0))].into();
        let runs = |seed| vec![RunRecord::new("demand-paging", "pixel4", SEQUENCES[0], seed)];
        assert_eq!(fig21_of(&tables, &runs(1)).row("pixel4 ideal switch ms").ours, 100.0);
        assert_eq!(fig21_of(&tables, &runs(1 + crate::SEED_STRIDE)).row("pixel4 ideal switch ms").ours, 300.0);
    }

    /// A switch back to an app whose file pages were reclaimed waits for the flash, and
    /// one whose heap went to zram as well waits longer: each case of Fig. 2.1 costs
    /// more than the one before, on the same CPU work.
    #[test]
    fn a_switch_takes_longer_with_each_kind_of_page_out_of_memory() {
        for dev in DEVICES {
            let ms = [Fig21Case::Ideal, Fig21Case::FileOnDisk, Fig21Case::MostOut].map(|c| fig21_switch(dev, "youtube", c, 1).unwrap().ms);
            assert!(ms[0] < ms[1] && ms[1] < ms[2], "{dev}: {ms:?}");
            assert!(ms[2] > 2.0 * ms[0], "{dev}: {ms:?}");
        }
    }

    /// §6.4's rows average the switches' own CPU share and read throughput (warm
    /// launches under pressure only) and set each policy against demand paging.
    #[test]
    fn utilisation_rows_average_switches_against_demand_paging() {
        let log =
            |kind, cpu_share, mib_s: f64| LaunchLog { cpu_share, read_bytes_s: mib_s * 1048576.0, ..LaunchLog::new("a", kind, 1.0, 1) };
        let run = |policy: &str, launches: Vec<LaunchLog>| RunRecord { launches, ..RunRecord::new(policy, "pixel4", SEQUENCES[0], 1) };
        let (w, c) = (LaunchKind::Warm, LaunchKind::Cold);
        let runs =
            [run("demand-paging", vec![log(w, 0.2, 10.0), log(w, 0.3, 30.0), log(c, 0.9, 500.0)]), run("asap", vec![log(w, 0.3, 25.0)])];
        let rows = utilisation_rows(&runs, "pixel4");
        let row = |l: &str| rows.iter().find(|r| r.label == l).unwrap_or_else(|| panic!("{l}"));
        assert!((row("pixel4 demand-paging CPU busy over a switch %").ours - 25.0).abs() < 1e-9);
        assert_eq!(row("pixel4 demand-paging flash read over a switch, MiB/s").ours, 20.0);
        let cpu = row("pixel4 asap CPU busy / demand-paging's");
        assert!((cpu.ours - 1.2).abs() < 1e-9 && cpu.paper == Some(1.18));
        assert!((row("pixel4 asap flash read throughput over demand-paging's %").ours - 25.0).abs() < 1e-9);
        assert!(row("pixel4 asap-anon CPU busy / demand-paging's").ours.is_nan(), "no asap-anon run: n/a");
    }

    #[test]
    fn runs_cover_devices_sequences_and_policies_under_pressure() {
        let s = specs(true).unwrap();
        assert_eq!(s.len(), DEVICES.len() * SEQUENCES.len() * POLICIES.len());
        for dev in DEVICES {
            let b = pressure_balloon_mib(dev).unwrap();
            let left = Device::load(dev).unwrap().memory.app_mem_mib - b;
            assert!(left > 500.0 && left < 2000.0, "{dev}: {left} MiB left to apps");
            assert!(s.iter().filter(|r| r.device == dev).all(|r| r.balloon_mib == Some(b)));
        }
    }
}
