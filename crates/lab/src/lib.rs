//! floe-lab: experiment specifications, the runner and reports — each seed paper's own
//! evaluation re-run in the simulator, with the paper's published figure beside ours.

pub mod asap;
pub mod calibration;
pub mod export;
pub mod html;
pub mod ice;
pub mod report;
pub mod seal;
pub mod selective;
pub mod smartlmk;
pub mod store;
pub mod sweep;

use floe_core::{ExperimentRecord, Param, RunRecord};
use floe_sim::{Catalog, Device, RunOptions, SimError, Workload};
use rayon::prelude::*;

pub use report::{Comparison, Report, Table};

/// Runs each policy on the same device, workload and options, side by side: in
/// parallel (each run is deterministic), the records in the order of `policies`.
pub fn compare(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policies: &[String],
    opts: &RunOptions,
) -> Result<Vec<RunRecord>, SimError> {
    compare_seeds(device, workload, catalog, policies, opts, 1)
}

/// [`compare`] over `seeds` seeds, `opts.seed` and the ones after it: every policy with
/// each, all in parallel; the records policy by policy, each policy's in seed order.
pub fn compare_seeds(
    device: &Device,
    workload: &Workload,
    catalog: &Catalog,
    policies: &[String],
    opts: &RunOptions,
    seeds: u32,
) -> Result<Vec<RunRecord>, SimError> {
    let pairs: Vec<(&String, u64)> =
        policies.iter().flat_map(|p| (0..u64::from(seeds)).map(move |i| (p, opts.seed.wrapping_add(i)))).collect();
    pairs.par_iter().map(|&(p, seed)| floe_sim::run(device, workload, catalog, p, &RunOptions { seed, ..opts.clone() })).collect()
}

/// The background window of the experiments' sensitivity runs: cached apps stay active
/// for the 30 s after leaving the foreground over which Ice's Fig. 4 watched them (the
/// main runs keep them active for as long as they stay cached; `RunOptions::bg_window_s`).
pub const OBSERVED_BG_WINDOW_S: f64 = 30.0;

/// Whether a run replaced its device's low-memory killer (`RunSpec::lmkd`).
pub fn killer_replaced(r: &RunRecord) -> bool {
    r.params.contains_key("lmkd_override")
}

/// Whether a run ended cached apps' background activity after a window.
pub fn windowed(r: &RunRecord) -> bool {
    r.params.contains_key("bg_window_s")
}

/// Whether a run kept a foreground app nobody uses at what its launch mapped
/// (`RunOptions::no_idle_growth`).
pub fn idle_still(r: &RunRecord) -> bool {
    r.params.get("idle_growth") == Some(&Param::Bool(false))
}

/// One run to do: names are resolved against the embedded data.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    pub device: String,
    pub workload: String,
    pub policy: String,
    pub seed: u64,
    pub bg_apps: Option<usize>,
    /// Overrides the workload's foreground time per launch (for `--quick`).
    pub use_s: Option<f64>,
    /// Overrides the workload's balloon.
    pub balloon_mib: Option<f64>,
    /// Overrides the workload's number of rounds (for `--quick`).
    pub rounds: Option<u32>,
    /// Keeps only the first this many launches of the workload's sequence (for
    /// `--quick` on workloads whose rounds are concatenated into one sequence).
    pub launches: Option<usize>,
    /// Draws the background apps with the seed even where the workload fixes them.
    pub draw_bg: bool,
    /// Launches each round in a fresh seeded order instead of the workload's.
    pub shuffle_rounds: bool,
    /// Ends cached apps' background activity this long after they leave the
    /// foreground (`RunOptions::bg_window_s`).
    pub bg_window_s: Option<f64>,
    /// A foreground app nobody uses keeps what its launch mapped instead of growing to
    /// its footprint (`RunOptions::no_idle_growth`).
    pub no_idle_growth: bool,
    /// Also keep the run's measured part in steps of this many simulated seconds
    /// (`RunRecord::slices`).
    pub slice_s: Option<f64>,
    /// Memory left to apps, MiB, instead of the device's (a what-if: how a result
    /// depends on the system's share). Recorded in the run's params.
    pub app_mem_mib: Option<f64>,
    /// The low-memory killer instead of the device's (a what-if: how a result depends
    /// on the killer). Recorded in the run's params as `lmkd_override`.
    pub lmkd: Option<floe_core::LmkdMode>,
    /// A background CPU hog taking this percentage of all cores' capacity (Ice's
    /// BG-cputester), passed to `RunOptions::cputester_pct`. Recorded in the run's params.
    pub cputester_pct: Option<f64>,
}

impl RunSpec {
    /// A run of `policy` on `device` and `workload` as the workload sets it, seed 1;
    /// callers change what their experiment varies with struct-update syntax.
    pub fn new(device: &str, workload: &str, policy: &str) -> RunSpec {
        RunSpec {
            device: device.into(),
            workload: workload.into(),
            policy: policy.into(),
            seed: 1,
            bg_apps: None,
            use_s: None,
            balloon_mib: None,
            rounds: None,
            launches: None,
            draw_bg: false,
            shuffle_rounds: false,
            bg_window_s: None,
            no_idle_growth: false,
            slice_s: None,
            app_mem_mib: None,
            lmkd: None,
            cputester_pct: None,
        }
    }
}

/// What a batch of runs tells its watcher ([`Progress`]), from the worker threads, so
/// in any order but `Begin` first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// A batch of `runs` runs begins, `done` of them done already.
    Begin { runs: usize, done: usize },
    /// The runs left to simulate will cost about `cost` in all: their simulated
    /// seconds, which a run's time follows far better than one run per run does (the
    /// longest start first).
    Cost { cost: f64 },
    /// `runs` more are done (specs that share one run end together), which took `cost`
    /// of the estimate (none for runs taken from a cache).
    Done { runs: usize, cost: f64 },
}

/// Told each [`Step`] of an experiment's runs.
pub type Progress<'a> = &'a (dyn Fn(Step) + Sync);

/// A `Progress` that ignores what it is told.
pub fn no_progress(_: Step) {}

/// Runs every spec (in parallel; each run is deterministic, and results keep the
/// order of `specs`), telling `progress` as runs finish. Specs the simulator cannot
/// tell apart ([`sim_key`]) share one run, each record then given its own spec's
/// params; with [`keep_runs`] on, runs made by earlier calls are taken too, and with
/// [`store_runs`], runs kept on disk by this build of floe (each run is kept there as
/// it ends). The distinct runs start longest first (by simulated time), so that no
/// long run is left alone at the end.
pub fn run_all(specs: &[RunSpec], progress: Progress) -> Result<Vec<RunRecord>, SimError> {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let catalog = Catalog::embedded()?;
    progress(Step::Begin { runs: specs.len(), done: 0 });
    // Each spec's key; the first spec of each key stands for the others.
    let mut inputs: HashMap<(&str, &str), (Device, Workload)> = HashMap::new();
    let mut keys: Vec<String> = Vec::with_capacity(specs.len());
    let mut costs: Vec<f64> = Vec::with_capacity(specs.len());
    for s in specs {
        let (dev, wl) = match inputs.entry((s.device.as_str(), s.workload.as_str())) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert((Device::load(&s.device)?, Workload::load(&s.workload, &catalog)?)),
        };
        let key = sim_key(s, dev, wl);
        costs.push(simulated_s(&key, wl));
        keys.push(format!("{key:?}"));
    }
    let store = STORE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // The store's key names the device and workload as loaded too (by a hash of their
    // text), whatever named them.
    let input_hash: HashMap<(&str, &str), String> = match &store {
        Some(_) => inputs.iter().map(|(&k, (dev, wl))| (k, store::hash_hex(&[format!("{dev:?}\n{wl:?}").as_bytes()]))).collect(),
        None => HashMap::new(),
    };
    let stored_key = |i: usize| format!("{}\n{}", keys[i], input_hash[&(specs[i].device.as_str(), specs[i].workload.as_str())]);
    let mut first: HashMap<&str, usize> = HashMap::new();
    let owner: Vec<usize> = keys.iter().enumerate().map(|(i, k)| *first.entry(k.as_str()).or_insert(i)).collect();
    let mut sharing = vec![0usize; specs.len()];
    for &o in &owner {
        sharing[o] += 1;
    }
    let mut raw: Vec<Option<RunRecord>> = vec![None; specs.len()];
    let tell = |o: usize, cost: f64| progress(Step::Done { runs: sharing[o], cost });
    if let Some(kept) = KEPT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        for (i, slot) in raw.iter_mut().enumerate() {
            if owner[i] == i {
                if let Some(rec) = kept.get(&keys[i]) {
                    *slot = Some(rec.clone());
                    tell(i, 0.0);
                }
            }
        }
    }
    if let Some(store) = &store {
        for i in 0..specs.len() {
            if owner[i] == i && raw[i].is_none() {
                if let Some(rec) = store.get(&stored_key(i)) {
                    raw[i] = Some(rec);
                    STORE_HITS.fetch_add(1, Ordering::Relaxed);
                    tell(i, 0.0);
                }
            }
        }
    }
    let mut todo: Vec<usize> = (0..specs.len()).filter(|&i| owner[i] == i && raw[i].is_none()).collect();
    todo.sort_by(|&a, &b| costs[b].total_cmp(&costs[a]).then(a.cmp(&b)));
    progress(Step::Cost { cost: todo.iter().map(|&i| costs[i]).sum() });
    // Workers take the next run from the list as they finish one.
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = rayon::current_num_threads().clamp(1, todo.len().max(1));
    let results: Vec<(usize, Result<RunRecord, SimError>)> = (0..workers)
        .into_par_iter()
        .flat_map_iter(|_| {
            let mut out = Vec::new();
            while !failed.load(Ordering::Relaxed) {
                let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                let (dev, wl) = &inputs[&(specs[i].device.as_str(), specs[i].workload.as_str())];
                let rec = simulate(&sim_key(&specs[i], dev, wl), &catalog, None);
                failed.fetch_or(rec.is_err(), Ordering::Relaxed);
                if let Ok(rec) = &rec {
                    // Kept as it ends: an interruption loses only the runs in progress.
                    if let Some(store) = &store {
                        store.put(&stored_key(i), rec);
                    }
                    tell(i, costs[i]);
                }
                out.push((i, rec));
            }
            out
        })
        .collect();
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    for (i, rec) in results {
        let rec = rec?;
        if let Some(kept) = kept.as_mut() {
            kept.insert(keys[i].clone(), rec.clone());
        }
        raw[i] = Some(rec);
    }
    drop(kept);
    Ok(specs
        .iter()
        .zip(&owner)
        .map(|(s, &o)| {
            let mut rec = raw[o].clone().expect("every distinct run was made");
            annotate(&mut rec, s);
            rec
        })
        .collect())
}

/// Runs kept across calls of [`run_all`] while on, by [`sim_key`]: `floe experiment`
/// turns it on so that experiments run together (`all --report` with the calibration)
/// make each run once.
static KEPT: std::sync::Mutex<Option<std::collections::HashMap<String, RunRecord>>> = std::sync::Mutex::new(None);

/// Turns keeping runs across [`run_all`] calls on (empty) or off (what was kept is
/// dropped).
pub fn keep_runs(on: bool) {
    *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = on.then(std::collections::HashMap::new);
}

/// Finished runs on disk, by [`store::Store`], while set.
static STORE: std::sync::Mutex<Option<store::Store>> = std::sync::Mutex::new(None);
/// Distinct runs [`run_all`] has taken from the store so far.
static STORE_HITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many distinct runs [`run_all`] has taken from the store since the process began.
pub fn runs_from_store() -> usize {
    STORE_HITS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Keeps the runs [`run_all`] makes on disk under `root` (this build's directory
/// there, which it returns) and takes them from there in later calls and later
/// processes; None: no store.
pub fn store_runs(root: Option<&std::path::Path>) -> std::io::Result<Option<std::path::PathBuf>> {
    let store = root.map(store::Store::open).transpose()?;
    let dir = store.as_ref().map(|s| s.dir().to_path_buf());
    *STORE.lock().unwrap_or_else(|e| e.into_inner()) = store;
    Ok(dir)
}

/// `s` as the simulator sees it, given its device and workload: every override that
/// changes nothing in the run dropped (a value the device or workload already has, a
/// launch cap beyond the sequence), and a SEAL-family policy whose parameters give its
/// defaults named without them. Two specs with the same key make the same run; only the
/// params their records carry ([`annotate`]) differ.
fn sim_key(s: &RunSpec, dev: &Device, wl: &Workload) -> RunSpec {
    let same = |a: Option<f64>, b: f64| a.is_some_and(|a| a.to_bits() == b.to_bits());
    let mut k = s.clone();
    if same(k.use_s, wl.use_s) {
        k.use_s = None;
    }
    if k.rounds == Some(wl.rounds) {
        k.rounds = None;
    }
    if k.launches.is_some_and(|n| n.max(1) >= wl.sequence.len()) {
        k.launches = None;
    }
    if same(k.app_mem_mib, dev.memory.app_mem_mib) {
        k.app_mem_mib = None;
    }
    if k.lmkd == Some(dev.memory.lmkd) {
        k.lmkd = None;
    }
    // Only SEAL's family takes parameters, and it is nothing but its name and `Setup`.
    if let Some((name, _)) = s.policy.split_once(':') {
        if matches!(name, "llr" | "llr-hpl" | "seal") {
            let setup = |p: &str| floe_policies::make_spec(p).ok().map(|p| (p.name(), p.setup()));
            if setup(&s.policy).is_some_and(|x| Some(x) == setup(name)) {
                k.policy = name.to_string();
            }
        }
    }
    k
}

/// Simulated seconds of a run of `k` (a [`sim_key`]) on `wl`, roughly: what its run
/// costs, to start the longest first.
fn simulated_s(k: &RunSpec, wl: &Workload) -> f64 {
    let launches = k.launches.map_or(wl.sequence.len(), |n| n.max(1).min(wl.sequence.len()));
    let rounds = k.rounds.unwrap_or(wl.rounds);
    let fg = f64::from(rounds) * launches as f64 * (k.use_s.unwrap_or(wl.use_s) + wl.idle_s);
    let bg = wl.background.as_ref().map_or(0.0, |b| k.bg_apps.unwrap_or(b.count) as f64 * b.use_s);
    fg + bg
}

/// One run of `s` (names resolved in `catalog`), its params recording what the spec
/// overrides. With `timeline`, the whole run is also sampled every `.0` of simulated
/// time into `.1` ([`floe_sim::run_with_timeline`]), and the spec's slices are not kept.
fn run_spec(
    s: &RunSpec,
    catalog: &Catalog,
    timeline: Option<(floe_core::Nanos, &mut Vec<floe_core::Sample>)>,
) -> Result<RunRecord, SimError> {
    let mut rec = simulate(s, catalog, timeline)?;
    annotate(&mut rec, s);
    Ok(rec)
}

/// The run of `s` as [`run_spec`] makes it, without the params [`annotate`] adds.
fn simulate(
    s: &RunSpec,
    catalog: &Catalog,
    timeline: Option<(floe_core::Nanos, &mut Vec<floe_core::Sample>)>,
) -> Result<RunRecord, SimError> {
    let mut wl = Workload::load(&s.workload, catalog)?;
    if let Some(u) = s.use_s {
        wl.use_s = u;
    }
    if let Some(r) = s.rounds {
        wl.rounds = r;
    }
    if let Some(n) = s.launches {
        wl.sequence.truncate(n.max(1));
    }
    let mut dev = Device::load(&s.device)?;
    if let Some(m) = s.app_mem_mib {
        dev.memory.app_mem_mib = m;
    }
    let lmkd_override = s.lmkd.filter(|&k| k != dev.memory.lmkd);
    if let Some(k) = lmkd_override {
        dev.memory.lmkd = k;
    }
    let opts = RunOptions {
        seed: s.seed,
        bg_apps: s.bg_apps,
        balloon_mib: s.balloon_mib,
        draw_bg: s.draw_bg,
        shuffle_rounds: s.shuffle_rounds,
        bg_window_s: s.bg_window_s,
        no_idle_growth: s.no_idle_growth,
        cputester_pct: s.cputester_pct,
    };
    let mut rec = match (timeline, s.slice_s) {
        (None, None) => floe_sim::run(&dev, &wl, catalog, &s.policy, &opts)?,
        (Some((step, out)), _) => floe_sim::run_with_timeline(&dev, &wl, catalog, &s.policy, &opts, step, |x| {
            out.push(x);
            true
        })?,
        (None, Some(step)) => {
            let mut slices = Vec::new();
            let step = floe_core::Nanos::from_secs_f64(step);
            let mut rec = floe_sim::run_with_timeline(&dev, &wl, catalog, &s.policy, &opts, step, |x| {
                if x.measured == Some(true) {
                    slices.push(x);
                }
                true
            })?;
            rec.slices = slices;
            rec
        }
    };
    if lmkd_override.is_some() {
        rec.params.insert("lmkd_override".into(), Param::Bool(true));
    }
    Ok(rec)
}

/// Adds to `rec` the params recording what `s` overrides: those a run's own key may
/// leave out ([`sim_key`]), and the policy's parameters as [`floe_sim::run`] records them.
fn annotate(rec: &mut RunRecord, s: &RunSpec) {
    if let Some((_, params)) = s.policy.split_once(':') {
        rec.params.insert("policy_params".into(), Param::Text(params.into()));
    }
    if let Some(u) = s.use_s {
        rec.params.insert("use_s".into(), Param::Float(u));
    }
    if let Some(r) = s.rounds {
        rec.params.insert("rounds".into(), Param::Int(r as i64));
    }
    if let Some(n) = s.launches {
        rec.params.insert("launches".into(), Param::Int(n.max(1) as i64));
    }
    if let Some(m) = s.app_mem_mib {
        rec.params.insert("app_mem_mib".into(), Param::Float(m));
    }
    if let Some(pct) = s.cputester_pct {
        rec.params.insert("cputester_pct".into(), Param::Float(pct));
    }
}

/// Runs `spec` as [`run_all`] does and samples the whole run every `step_s` simulated
/// seconds (`floe sim --timeline`'s rows): the record (without slices) and its samples.
pub fn run_sampled(spec: &RunSpec, step_s: f64) -> Result<(RunRecord, Vec<floe_core::Sample>), SimError> {
    let catalog = Catalog::embedded()?;
    let mut samples = Vec::new();
    let rec = run_spec(spec, &catalog, Some((floe_core::Nanos::from_secs_f64(step_s), &mut samples)))?;
    Ok((rec, samples))
}

/// What each seed replicate of an experiment adds to its runs' seeds, times its index
/// (from 0): far above the seeds an experiment draws itself (Ice's ten draws), so no
/// two replicates share a run.
pub const SEED_STRIDE: u64 = 1000;

/// Runs `specs` once per seed replicate (`seeds` of them, all in one parallel batch:
/// replicate r adds r x [`SEED_STRIDE`] to every seed), makes each replicate's report
/// with `report`, and combines them ([`report::replicate`]), judging the findings again
/// on the mean figures with `findings`. With one seed, `report` of the runs as they are.
pub fn run_replicated(
    specs: &[RunSpec],
    seeds: u32,
    progress: Progress,
    report: impl Fn(Vec<RunRecord>) -> Report,
    findings: impl Fn(&[Table], &[RunRecord]) -> Vec<floe_core::Finding>,
) -> Result<Report, SimError> {
    let seeds = seeds.max(1);
    let all: Vec<RunSpec> =
        (0..u64::from(seeds)).flat_map(|r| specs.iter().map(move |s| RunSpec { seed: s.seed + r * SEED_STRIDE, ..s.clone() })).collect();
    let runs = run_all(&all, progress)?;
    let reports = runs.chunks(specs.len().max(1)).map(|c| report(c.to_vec())).collect();
    Ok(report::replicate(reports, findings))
}

/// The experiments floe knows, as `floe experiment NAME` takes them.
pub const EXPERIMENTS: &[(&str, &str)] = &[
    ("ice", "Ice §2-3 and §6: the motivation (Figs. 1-2, Table 1, Fig. 4's per-process reclaim), FPS/RIA in four scenarios, refaults and reclaims, power-manager freezing, BG-app sweep, Ice+ (Table 6, Fig. 13), launching over 10 rounds (Fig. 12)"),
    ("seal", "SEAL §II-B and §VI: swap against none (Figs. 2-4); warm launch, interaction alerts (also by Monkey events, Fig. 12), caching over 10 rounds of 30 apps; SL size, k and mu sweeps"),
    ("smartlmk", "SmartLMK §6.2-6.5: the launch tracker's parameters (Fig. 6); 256-launch benchmark over balloons 0-128 MB: total launch time, resumes, per-app launch time and resumes, kills"),
    ("selective", "Selective swap/kill §III and §V: scenarios A1-C on the Nexus 5; mean and stddev of launch time, by target type, flash traffic; every scheme against the original Android (Figs. 2, 5-8)"),
    ("asap", "ASAP §2.2 and §6: Fig. 2.1's switch with the app's pages out of memory against the ideal; switch time per app over three sequences on the Pixel 4 and 3a; anon-only, file-only, both; precision and recall"),
    (calibration::NAME, "every paper's controls (a baseline alone: Ice's BG-null, BG-memtester, BG-cputester and Table 1, SEAL's No-SWAP, SmartLMK's stock LMK, ASAP's demand paging, Selective's original Android) against the paper's figures, within ±15 % or not, and the calibrated parameters in data/ each one fixes; not part of `all`"),
];

/// The experiments `floe experiment all` runs: the five papers' evaluations, every
/// experiment but `calibration` (which re-runs their controls only).
pub fn evaluations() -> impl Iterator<Item = &'static str> {
    EXPERIMENTS.iter().map(|e| e.0).filter(|&n| n != calibration::NAME)
}

/// Errors of an experiment.
#[derive(Debug)]
pub enum LabError {
    Sim(SimError),
    Unknown(String),
}

impl std::fmt::Display for LabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabError::Sim(e) => write!(f, "{e}"),
            LabError::Unknown(n) => {
                let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.0).collect();
                write!(f, "unknown experiment `{n}` (known: {})", known.join(", "))
            }
        }
    }
}

impl std::error::Error for LabError {}

impl From<SimError> for LabError {
    fn from(e: SimError) -> Self {
        LabError::Sim(e)
    }
}

/// Runs experiment `name`; `quick` keeps its policies and devices at a smaller size;
/// `seeds` replicates it over that many seeds (1: once, as the experiment sets its
/// seeds). `progress` hears of every finished run.
pub fn run_experiment(name: &str, quick: bool, seeds: u32, progress: Progress) -> Result<Report, LabError> {
    match name {
        "ice" => Ok(ice::run(quick, seeds, progress)?),
        "smartlmk" => Ok(smartlmk::run(quick, seeds, progress)?),
        "selective" => Ok(selective::run(quick, seeds, progress)?),
        "seal" => Ok(seal::run(quick, seeds, progress)?),
        "asap" => Ok(asap::run(quick, seeds, progress)?),
        calibration::NAME => Ok(calibration::run(quick, seeds, progress)?),
        other => Err(LabError::Unknown(other.to_string())),
    }
}

impl Report {
    /// The JSON form of DESIGN.md: `{"experiment": NAME, "runs": [...]}`, with the
    /// paper's findings as floe's runs bear them out (`"findings"`) before the runs.
    pub fn record(&self) -> ExperimentRecord {
        ExperimentRecord { experiment: self.experiment.clone(), findings: self.findings.clone(), runs: self.runs.clone() }
    }
}

/// Runs `sim` in 100 ms steps until `app` has been in the foreground and has left it
/// for the home screen; returns the simulated time reached.
pub(crate) fn run_until_left_foreground(sim: &mut floe_sim::Sim, app: &str) -> Result<floe_core::Nanos, SimError> {
    let (mut t, mut seen) = (floe_core::Nanos::ZERO, false);
    loop {
        t += floe_core::Nanos::from_ms(100);
        let more = sim.run_until(t);
        let fg = sim.snapshot().fg_app;
        seen |= fg.as_deref() == Some(app);
        if seen && fg.is_none() {
            return Ok(t);
        }
        if !more {
            return Err(SimError::Run(format!("{app} never left the foreground")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// `run_all` announces the batch first, then what its runs will cost, then each
    /// finished run with its share of that cost, and the records keep the order of the
    /// specs whatever order the runs finish in.
    #[test]
    fn run_all_reports_every_finished_run_and_keeps_the_spec_order() {
        let specs: Vec<RunSpec> = [3u64, 1, 2]
            .iter()
            .map(|&seed| RunSpec { seed, use_s: Some(1.0), rounds: Some(1), ..RunSpec::new("nexus5", "selective-c", "android-lmk") })
            .collect();
        let heard = Mutex::new(Vec::new());
        let runs = run_all(&specs, &|s| heard.lock().unwrap().push(s)).unwrap();
        assert_eq!(runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [3, 1, 2]);
        let heard = heard.into_inner().unwrap();
        assert_eq!(heard[0], Step::Begin { runs: 3, done: 0 });
        let Step::Cost { cost } = heard[1] else { panic!("{heard:?}") };
        let done: Vec<(usize, f64)> = heard[2..]
            .iter()
            .map(|s| match *s {
                Step::Done { runs, cost } => (runs, cost),
                other => panic!("{other:?} after the cost"),
            })
            .collect();
        assert_eq!(done.len(), 3, "{heard:?}");
        assert!(done.iter().all(|&(n, c)| n == 1 && c > 0.0), "{heard:?}");
        assert!((done.iter().map(|d| d.1).sum::<f64>() - cost).abs() < 1e-9, "the runs' costs add up to the estimate: {heard:?}");
    }

    /// Specs the simulator cannot tell apart (an override equal to the workload's or
    /// the device's value, SEAL's parameters at their defaults) share one run, yet each
    /// record is the one a run of its own spec makes, params included.
    #[test]
    fn specs_that_make_the_same_run_share_it_and_keep_their_own_params() {
        let catalog = Catalog::embedded().unwrap();
        let wl = Workload::load("selective-c", &catalog).unwrap();
        let dev = Device::load("nexus5").unwrap();
        let base = RunSpec { use_s: Some(1.0), rounds: Some(1), ..RunSpec::new("nexus5", "selective-c", "seal") };
        let specs = [
            base.clone(),
            RunSpec { policy: "seal:k=3:mu=0.8".into(), ..base.clone() },
            RunSpec { lmkd: Some(dev.memory.lmkd), launches: Some(wl.sequence.len() + 1), ..base.clone() },
            RunSpec { app_mem_mib: Some(dev.memory.app_mem_mib), ..base.clone() },
            RunSpec { policy: "seal:k=1".into(), ..base.clone() },
        ];
        let keys: Vec<RunSpec> = specs.iter().map(|s| sim_key(s, &dev, &wl)).collect();
        assert!(keys[1..4].iter().all(|k| k == &keys[0]), "{keys:?}");
        assert_ne!(keys[4], keys[0]);
        let runs = run_all(&specs, &no_progress).unwrap();
        for (s, r) in specs.iter().zip(&runs) {
            assert_eq!(r, &run_spec(s, &catalog, None).unwrap(), "{s:?}");
        }
        assert_eq!(runs[1].params.get("policy_params"), Some(&Param::Text("k=3:mu=0.8".into())));
    }

    /// Kept runs are taken by later calls, unchanged; turning keeping off drops them.
    #[test]
    fn kept_runs_are_taken_again() {
        let spec = RunSpec { seed: 77, use_s: Some(1.0), rounds: Some(1), ..RunSpec::new("nexus5", "selective-c", "android-lmk") };
        keep_runs(true);
        let first = run_all(std::slice::from_ref(&spec), &no_progress).unwrap();
        let catalog = Catalog::embedded().unwrap();
        let (dev, wl) = (Device::load(&spec.device).unwrap(), Workload::load(&spec.workload, &catalog).unwrap());
        let key = format!("{:?}", sim_key(&spec, &dev, &wl));
        assert!(KEPT.lock().unwrap().as_ref().is_some_and(|k| k.contains_key(&key)));
        let heard = std::sync::Mutex::new(Vec::new());
        let again = run_all(&[spec.clone(), spec], &|s| heard.lock().unwrap().push(s)).unwrap();
        keep_runs(false);
        assert_eq!(again, [first[0].clone(), first[0].clone()]);
        // Both specs end with the kept run, which costs nothing; nothing is left to run.
        assert_eq!(
            heard.into_inner().unwrap(),
            [Step::Begin { runs: 2, done: 0 }, Step::Done { runs: 2, cost: 0.0 }, Step::Cost { cost: 0.0 }]
        );
        assert!(KEPT.lock().unwrap().is_none());
    }

    /// Side by side, the runs come back in the order of the policies, each the same
    /// record as a run of its own.
    #[test]
    fn compare_keeps_the_policies_order_and_their_runs() {
        let catalog = Catalog::embedded().unwrap();
        let mut wl = Workload::load("selective-c", &catalog).unwrap();
        (wl.use_s, wl.rounds) = (1.0, 1);
        let dev = Device::load("nexus5").unwrap();
        let opts = RunOptions { seed: 3, ..Default::default() };
        let policies: Vec<String> = ["swap-all", "android-lmk", "selective-kill-first"].map(String::from).into();
        let runs = compare(&dev, &wl, &catalog, &policies, &opts).unwrap();
        assert_eq!(runs.iter().map(|r| r.policy.as_str()).collect::<Vec<_>>(), ["swap-all", "android-lmk", "selective-kill-first"]);
        for (p, r) in policies.iter().zip(&runs) {
            assert_eq!(r, &floe_sim::run(&dev, &wl, &catalog, p, &opts).unwrap());
        }
        let over = compare_seeds(&dev, &wl, &catalog, &policies[..2], &opts, 3).unwrap();
        let got: Vec<(&str, u64)> = over.iter().map(|r| (r.policy.as_str(), r.seed)).collect();
        assert_eq!(got, [("swap-all", 3), ("swap-all", 4), ("swap-all", 5), ("android-lmk", 3), ("android-lmk", 4), ("android-lmk", 5)]);
        assert_eq!(over[0], runs[0]);
        assert_eq!(over[4], floe_sim::run(&dev, &wl, &catalog, "android-lmk", &RunOptions { seed: 4, ..opts.clone() }).unwrap());
    }

    /// Each replicate runs every spec with its seed moved by the stride, all in one
    /// batch, and gets a report of its own runs only.
    #[test]
    fn replicates_run_every_spec_with_their_own_seeds() {
        let specs: Vec<RunSpec> = [2u64, 1]
            .iter()
            .map(|&seed| RunSpec { seed, use_s: Some(1.0), rounds: Some(1), ..RunSpec::new("nexus5", "selective-c", "android-lmk") })
            .collect();
        let heard = Mutex::new(Vec::new());
        let seen = Mutex::new(Vec::new());
        let report = |runs: Vec<RunRecord>| {
            seen.lock().unwrap().push(runs.iter().map(|r| r.seed).collect::<Vec<_>>());
            let ms = runs.iter().map(|r| r.metrics.launch_ms_mean).sum::<f64>();
            let tables =
                vec![Table { title: "t".into(), unit: "ms".into(), rows: vec![Comparison { label: "sum".into(), paper: None, ours: ms }] }];
            Report { experiment: "x".into(), runs, tables, findings: vec![], notes: vec![], seeds: 1, sd: vec![] }
        };
        let rep = run_replicated(&specs, 3, &|s| heard.lock().unwrap().push(s), report, |_, _| vec![]).unwrap();
        assert_eq!(seen.into_inner().unwrap(), [vec![2, 1], vec![1002, 1001], vec![2002, 2001]]);
        assert_eq!(heard.into_inner().unwrap()[0], Step::Begin { runs: 6, done: 0 }, "one batch of all six runs");
        assert_eq!((rep.seeds, rep.runs.len()), (3, 6));
        assert!(rep.tables[0].rows[0].ours > 0.0 && !rep.sd[0][0].is_nan());
    }

    /// `floe experiment all` runs the five papers' evaluations, not the calibration,
    /// which `EXPERIMENTS` lists beside them.
    #[test]
    fn all_is_the_five_evaluations_without_the_calibration() {
        assert_eq!(evaluations().collect::<Vec<_>>(), ["ice", "seal", "smartlmk", "selective", "asap"]);
        assert!(EXPERIMENTS.iter().any(|e| e.0 == calibration::NAME));
    }

    /// A sampled run is the run `run_all` makes, slices left out, with samples covering
    /// all of it.
    #[test]
    fn a_sampled_run_is_the_same_run_with_its_timeline() {
        let spec =
            RunSpec { use_s: Some(2.0), rounds: Some(1), slice_s: Some(1.0), ..RunSpec::new("nexus5", "selective-c", "android-lmk") };
        let mut plain = run_all(std::slice::from_ref(&spec), &no_progress).unwrap().remove(0);
        assert!(!plain.slices.is_empty());
        let (rec, samples) = run_sampled(&spec, 0.5).unwrap();
        plain.slices.clear();
        assert_eq!(rec, plain);
        assert!(samples.len() >= 4 && samples[0].t_s == 0.5, "{} samples", samples.len());
        assert_eq!(samples.iter().map(|s| s.kills).sum::<u64>(), rec.metrics.kills);
    }

    /// A spec's CPU hog reaches the simulator: the run records it and spends CPU on it.
    #[test]
    fn a_cpu_hog_reaches_the_run() {
        let base = RunSpec { use_s: Some(5.0), launches: Some(1), ..RunSpec::new("nexus5", "selective-c", "android-lmk") };
        let runs = run_all(&[base.clone(), RunSpec { cputester_pct: Some(20.0), ..base }], &no_progress).unwrap();
        assert!(!runs[0].params.contains_key("cputester_pct"));
        assert_eq!(runs[1].params.get("cputester_pct"), Some(&floe_core::Param::Float(20.0)));
    }

    /// A spec's launch cap keeps the head of the workload's sequence: the run launches
    /// those apps only, in that order, and records the cap among its params.
    #[test]
    fn a_launch_cap_keeps_the_head_of_the_sequence() {
        let catalog = Catalog::embedded().unwrap();
        let head: Vec<String> = Workload::load("selective-b2", &catalog).unwrap().sequence[..5].to_vec();
        let spec = RunSpec { use_s: Some(1.0), launches: Some(5), ..RunSpec::new("nexus5", "selective-b2", "android-lmk") };
        let run = &run_all(&[spec], &|_| {}).unwrap()[0];
        let launched: Vec<&str> = run.launches.iter().map(|l| l.app.as_str()).collect();
        assert_eq!(launched, head.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(run.params.get("launches"), Some(&Param::Int(5)));
    }
}
