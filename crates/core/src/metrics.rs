//! The metrics schema shared by the simulator and the real kernel (DESIGN.md "Metrics").
//!
//! Field names are the JSON names; their order is the order in DESIGN.md, so output is
//! stable and diffable.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything one run measures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Frames per second while an interactive app was in the foreground; 0 in a run
    /// that renders no frame (`frames` 0; the CLI's table shows `-`).
    pub fps: f64,
    /// Share of frames that took longer than 16.6 ms (ratio of interaction alerts); 0
    /// when no frame was rendered.
    pub ria: f64,
    /// Frames that took longer than 16.6 ms.
    pub interaction_alerts: u64,
    pub frames: u64,
    pub launches_cold: u64,
    pub launches_warm: u64,
    pub launch_ms_mean: f64,
    pub launch_ms_p50: f64,
    pub launch_ms_p95: f64,
    pub launch_ms_stddev: f64,
    pub launch_ms_total: f64,
    /// Mean latency of warm launches (an app switch back to a cached app).
    pub switch_ms_mean: f64,
    /// Warm launches per round after the first, averaged (0 for one-round workloads).
    pub caching_capability: f64,
    pub refaults_fg_anon: u64,
    pub refaults_fg_file: u64,
    pub refaults_bg_anon: u64,
    pub refaults_bg_file: u64,
    /// Refaults of the system's own processes (devices with a `[system]` table).
    #[serde(default)]
    pub refaults_system: u64,
    pub reclaimed_pages: u64,
    /// Of those, anonymous pages sent to swap (zram, zswap's pool, SEAL's levels, flash):
    /// the kernel's pgsteal_anon, what Ice followed as pswpout.
    #[serde(default)]
    pub reclaimed_anon_pages: u64,
    pub kills: u64,
    pub freezes: u64,
    pub thaws: u64,
    pub flash_read_bytes: u64,
    pub flash_write_bytes: u64,
    /// Uncompressed bytes held in compressed RAM at the end of the run.
    pub zram_stored_bytes: u64,
    pub cpu_ms_app: f64,
    pub cpu_ms_kswapd: f64,
    pub cpu_ms_compress: f64,
    pub cpu_ms_prepage: f64,
    /// Share of prepaged pages that were used; null when nothing was prepaged.
    pub prepage_precision: Option<f64>,
    /// Share of pages needed at switch-in that were prepaged; null when nothing was prepaged.
    pub prepage_recall: Option<f64>,
}

/// One run: a policy on a device and workload with a seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub policy: String,
    pub device: String,
    pub workload: String,
    /// Run parameters that are not part of the names (bg_apps, balloon_mib, ...).
    pub params: BTreeMap<String, Param>,
    pub seed: u64,
    pub metrics: Metrics,
    /// Every measured launch in order, for per-app breakdowns (SmartLMK Fig. 13). Not
    /// part of the run's JSON (DESIGN.md "Metrics" fixes its keys).
    #[serde(skip)]
    pub launches: Vec<LaunchLog>,
    /// Why the measured part's `kills` happened (the simulator's; the daemon leaves it
    /// empty). Not part of the run's JSON either.
    #[serde(skip)]
    pub kills_by: KillCauses,
    /// The run in fixed steps of simulated time, when the caller asked for them (Ice
    /// Fig. 2(b) slices runs into 30 s windows). Not part of the run's JSON either.
    #[serde(skip)]
    pub slices: Vec<crate::Sample>,
    /// What each app did in the measured part (the simulator's; the daemon leaves it
    /// empty). Not part of the run's JSON unless asked for (`floe sim --per-app`).
    #[serde(skip)]
    pub apps: Vec<AppStats>,
}

/// One app's part of a run's measured part, and how it ended: its share of the run's
/// counters (the system's own processes are left out, so the apps' refaults and
/// reclaims add up to the run's less the system's), and its memory at the end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppStats {
    pub app: String,
    /// At the end: foreground, launching, cached, frozen or dead.
    pub state: String,
    pub launches_cold: u64,
    pub launches_warm: u64,
    pub kills: u64,
    pub freezes: u64,
    pub thaws: u64,
    pub refaults_anon: u64,
    pub refaults_file: u64,
    pub reclaimed_anon: u64,
    pub reclaimed_file: u64,
    pub cpu_ms: f64,
    /// Its own pages resident at the end, MiB: anonymous, and its files' in the page
    /// cache (which outlive the process). Zygote's shared pages are not counted.
    pub resident_mib: f64,
    /// Swapped pages at the end (zram and flash, uncompressed), MiB.
    pub swapped_mib: f64,
}

impl Metrics {
    /// Sets the launch figures from `launches`, the run's measured launches in order:
    /// the counts by kind; the latencies' mean, population standard deviation, total,
    /// median and 95th percentile (the nearest rank of the sorted latencies); and the
    /// warm launches' mean, the switch time. All 0 without launches. The simulator and
    /// the daemon compute them here, the same way.
    pub fn set_launches(&mut self, launches: &[LaunchLog]) {
        let mut lat: Vec<f64> = launches.iter().map(|l| l.ms).collect();
        let n = lat.len() as f64;
        let mean = if lat.is_empty() { 0.0 } else { lat.iter().sum::<f64>() / n };
        let stddev = if lat.is_empty() { 0.0 } else { (lat.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt() };
        lat.sort_by(f64::total_cmp);
        let pct = |q: f64| {
            if lat.is_empty() {
                0.0
            } else {
                lat[((q * (lat.len() - 1) as f64).round() as usize).min(lat.len() - 1)]
            }
        };
        let warm: Vec<f64> = launches.iter().filter(|l| l.kind == crate::LaunchKind::Warm).map(|l| l.ms).collect();
        self.launches_cold = launches.iter().filter(|l| l.kind == crate::LaunchKind::Cold).count() as u64;
        self.launches_warm = warm.len() as u64;
        self.launch_ms_mean = mean;
        self.launch_ms_p50 = pct(0.5);
        self.launch_ms_p95 = pct(0.95);
        self.launch_ms_stddev = stddev;
        self.launch_ms_total = lat.iter().sum();
        self.switch_ms_mean = if warm.is_empty() { 0.0 } else { warm.iter().sum::<f64>() / warm.len() as f64 };
    }
}

impl RunRecord {
    /// A run of `policy` on `device` and `workload` with `seed` that has recorded nothing
    /// yet: no parameters, zero metrics, no launches, kills or slices.
    pub fn new(policy: &str, device: &str, workload: &str, seed: u64) -> RunRecord {
        RunRecord {
            policy: policy.into(),
            device: device.into(),
            workload: workload.into(),
            params: BTreeMap::new(),
            seed,
            metrics: Metrics::default(),
            launches: Vec::new(),
            kills_by: KillCauses::default(),
            slices: Vec::new(),
            apps: Vec::new(),
        }
    }
}

/// A run's kills by who decided them (the causes add up to the `kills` metric), and how
/// fast their memory was freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KillCauses {
    /// The stock low-memory killer, at a minfree level.
    pub lmk: u64,
    /// The OOM killer: an allocation found nothing left to reclaim.
    pub oom: u64,
    /// The policy's own kill actions (SmartLMK's set, selective swap/kill, ...).
    pub policy: u64,
    /// SEAL's HPL making room in SL1 for the pages it loads back.
    pub sl1_room: u64,
    /// The policy's kill actions that took at least one app: its kills come in this
    /// many batches (SmartLMK kills a victim set at once).
    pub policy_batches: u64,
    /// How fast the victims' memory came back, on a device that models a killed
    /// process's exit (SmartLMK Fig. 15): the victims whose exit ended, their memory
    /// (RSS at the kill, pages) and the time from each one's kill to its memory being
    /// free, summed.
    #[serde(default)]
    pub exits: u64,
    #[serde(default)]
    pub exit_pages: u64,
    #[serde(default)]
    pub exit_ns: u64,
    /// The same by kill decision (a stock LMK kill alone, or a policy's set): the
    /// decisions whose victims all exited, their victims' memory, and the time from the
    /// decision to its last victim's memory being free, summed.
    #[serde(default)]
    pub exit_batches: u64,
    #[serde(default)]
    pub exit_batch_pages: u64,
    #[serde(default)]
    pub exit_batch_ns: u64,
}

impl std::ops::AddAssign for KillCauses {
    /// Pools two runs' kills, field by field.
    fn add_assign(&mut self, o: KillCauses) {
        self.lmk += o.lmk;
        self.oom += o.oom;
        self.policy += o.policy;
        self.sl1_room += o.sl1_room;
        self.policy_batches += o.policy_batches;
        self.exits += o.exits;
        self.exit_pages += o.exit_pages;
        self.exit_ns += o.exit_ns;
        self.exit_batches += o.exit_batches;
        self.exit_batch_pages += o.exit_batch_pages;
        self.exit_batch_ns += o.exit_batch_ns;
    }
}

impl KillCauses {
    /// Memory freed a second of exit, MiB/s, victim by victim (SmartLMK's "Each" and
    /// Vanilla): the victims' memory over the sum of their exit times; None without an
    /// exit.
    pub fn reclaim_mib_s_each(&self) -> Option<f64> {
        (self.exit_ns > 0).then(|| self.exit_pages as f64 / 256.0 / (self.exit_ns as f64 / 1e9))
    }

    /// Memory freed a second, kill decision by kill decision (SmartLMK's "Batch"): the
    /// victims' memory over the sum of the decisions' times to their last victim's exit.
    pub fn reclaim_mib_s_batch(&self) -> Option<f64> {
        (self.exit_batch_ns > 0).then(|| self.exit_batch_pages as f64 / 256.0 / (self.exit_batch_ns as f64 / 1e9))
    }
}

/// One measured launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchLog {
    pub app: String,
    pub kind: crate::LaunchKind,
    pub ms: f64,
    pub round: u32,
    /// Share of the CPU's cores busy during the launch, whoever ran (ASAP Fig. 6.4).
    pub cpu_share: f64,
    /// Flash bytes read per second of the launch (ASAP Fig. 6.5).
    pub read_bytes_s: f64,
}

impl LaunchLog {
    /// A launch with no resource use recorded (test records, a backend without it).
    pub fn new(app: &str, kind: crate::LaunchKind, ms: f64, round: u32) -> LaunchLog {
        LaunchLog { app: app.into(), kind, ms, round, cpu_share: 0.0, read_bytes_s: 0.0 }
    }
}

/// An experiment: a named set of runs, and the paper's findings checked against them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub experiment: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    pub runs: Vec<RunRecord>,
}

/// How floe's runs bear out one of a paper's findings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The paper's direction, and floe's effect within ±30 % of the paper's (or
    /// inside the range the paper states).
    Matches,
    /// The paper's direction, the magnitude outside that band (or the paper gives none
    /// to compare with).
    Direction,
    /// Not the paper's direction.
    #[default]
    No,
    /// An effect the finding rests on is within the noise floor: the 95 % interval of
    /// floe's effect over the seeds takes in no effect, or the effect it is set against
    /// is none. It counts as no.
    Vacuous,
}

impl Verdict {
    /// Whether the finding counts as holding: matches or direction.
    pub fn holds(self) -> bool {
        matches!(self, Verdict::Matches | Verdict::Direction)
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Matches => "matches",
            Verdict::Direction => "direction",
            Verdict::No => "no",
            Verdict::Vacuous => "vacuous",
        }
    }
}

/// One of a paper's findings, and whether floe's runs show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The finding in words, with where the paper shows it and its figure.
    pub claim: String,
    /// Whether it holds: the verdict is matches or direction.
    pub holds: bool,
    #[serde(default)]
    pub verdict: Verdict,
    /// floe's figures behind the verdict.
    pub evidence: String,
    /// The effect the finding is about on one scale for paper and floe (a change in
    /// the figure's unit, or relative to what it is set against), where the finding has
    /// one: the paper's, where it publishes it,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<f64>,
    /// floe's (on the seeds' mean figures),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floe: Option<f64>,
    /// and the 95 % interval of floe's over the seeds (with two or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// The figure on that scale that means no effect (the bar the finding must pass:
    /// 0 for a cut, 1 for a ratio, the other side's figure for a comparison).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<f64>,
    /// With the experiment replicated over several seeds (`floe experiment --seeds N`):
    /// in how many of them the finding holds on its own (the verdict above is the
    /// seeds' mean figures').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds_held: Option<u32>,
    /// How many seeds the experiment was replicated over, beside `seeds_held`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<u32>,
}

impl Finding {
    /// A finding of one set of runs (no seed replicates) that holds in direction or not,
    /// with no effect to weigh.
    pub fn new(claim: impl Into<String>, holds: bool, evidence: impl Into<String>) -> Finding {
        let verdict = if holds { Verdict::Direction } else { Verdict::No };
        Finding {
            claim: claim.into(),
            holds,
            verdict,
            evidence: evidence.into(),
            paper: None,
            floe: None,
            interval: None,
            origin: None,
            seeds_held: None,
            seeds: None,
        }
    }

    /// Sets the verdict, and `holds` with it.
    pub fn set_verdict(&mut self, v: Verdict) {
        self.verdict = v;
        self.holds = v.holds();
    }
}

/// A run parameter's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Param {
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LaunchKind::{Cold, Warm};

    #[test]
    fn launch_figures_count_kinds_and_rank_the_latencies() {
        let mut m = Metrics::default();
        let launches: Vec<LaunchLog> = [(Cold, 900.0), (Warm, 100.0), (Warm, 300.0), (Cold, 700.0), (Warm, 200.0)]
            .iter()
            .map(|&(k, ms)| LaunchLog::new("a", k, ms, 0))
            .collect();
        m.set_launches(&launches);
        assert_eq!((m.launches_cold, m.launches_warm), (2, 3));
        assert_eq!((m.launch_ms_mean, m.launch_ms_total, m.switch_ms_mean), (440.0, 2200.0, 200.0));
        // Sorted 100, 200, 300, 700, 900: the median the third, the 95th percentile the
        // nearest rank, round(0.95 x 4) = 4, the fifth.
        assert_eq!((m.launch_ms_p50, m.launch_ms_p95), (300.0, 900.0));
        let var = [900.0f64, 100.0, 300.0, 700.0, 200.0].iter().map(|x| (x - 440.0).powi(2)).sum::<f64>() / 5.0;
        assert_eq!(m.launch_ms_stddev, var.sqrt());
        // None: every launch figure 0, the rest untouched.
        let mut m = Metrics { fps: 30.0, launch_ms_p95: 5.0, ..Metrics::default() };
        m.set_launches(&[]);
        assert_eq!(m, Metrics { fps: 30.0, ..Metrics::default() });
    }
}
