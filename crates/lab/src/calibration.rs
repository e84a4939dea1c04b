//! `floe experiment calibration`: each seed paper's controls re-run (a baseline alone:
//! DESIGN.md's "calibrate on controls, validate on comparisons"), floe's figure beside
//! the paper's with the relative difference and whether it lies within ±15 %, and the
//! values in data/ calibrated on each control (`# calibrated: <control>, <how>`).
//!
//! A control the paper gives no number for is listed with "(no figure)"; nothing is
//! made up for it. Every row's label opens with its control's key, the text a marker
//! in data/ names it by.

use crate::report::{fmt, mean_where, pct_cut, value, Comparison, Report, Table};
use crate::{asap, ice, seal, selective, smartlmk, RunSpec};
use floe_core::{Finding, Metrics, Param, RunRecord};
use floe_sim::SimError;

/// The experiment's name, as `floe experiment` takes it.
pub const NAME: &str = "calibration";

/// Ice §2.2.2 / Fig. 1(a), Fig. 2(a): no app cached in the background.
pub const ICE_BG_NULL: &str = "Ice BG-null";
/// Ice §2.2.3 / Fig. 1, Fig. 2(a): memtester holding memory in the background.
pub const ICE_BG_MEMTESTER: &str = "Ice BG-memtester";
/// Ice §2.2.3 / Fig. 1: a CPU hog taking 20 % of the CPU in the background.
pub const ICE_BG_CPUTESTER: &str = "Ice BG-cputester";
/// Ice §2.2.3 / Table 1: CPU utilisation with N apps cached and none in the foreground.
pub const ICE_TABLE1: &str = "Ice Table 1";
/// SEAL §II-B, §VI: swap disabled (android-lmk).
pub const SEAL_NO_SWAP: &str = "SEAL No-SWAP";
/// SmartLMK §6.3: the stock low-memory killer ("Vanilla", android-lmk).
pub const SMARTLMK_STOCK_LMK: &str = "SmartLMK stock LMK";
/// ASAP §2.2, §6: demand paging, no prepaging.
pub const ASAP_DEMAND_PAGING: &str = "ASAP demand paging";
/// Selective §III, §V: the original Android (no swap, android-lmk).
pub const SELECTIVE_ORIGINAL: &str = "Selective original Android";

/// Every control's key, in the order the report lists them; a `# calibrated:` marker in
/// data/ must name one of them (tested).
pub const CONTROLS: [&str; 8] =
    [ICE_BG_NULL, ICE_BG_MEMTESTER, ICE_BG_CPUTESTER, ICE_TABLE1, SEAL_NO_SWAP, SMARTLMK_STOCK_LMK, ASAP_DEMAND_PAGING, SELECTIVE_ORIGINAL];

/// The marker a calibrated value carries in data/, followed by `<control>, <how>`.
pub const MARKER: &str = "# calibrated:";

/// Within this share of the paper's figure, percent, a control counts as reproduced.
pub const TOLERANCE_PCT: f64 = 15.0;

/// Ice's foreground time per launch with `--quick`, seconds (the workloads' 300 s
/// otherwise), as `floe experiment ice --quick` runs it.
const ICE_QUICK_USE_S: f64 = 60.0;
/// Ice's rounds (seeds) in a full run: §2.2.3 averages 10 rounds; one with `--quick`.
const ICE_SEEDS: u64 = 10;
/// Table 1's background counts that the paper's text gives: none (43 %) and eight (55 %).
const TABLE1_BG: [usize; 2] = [0, 8];

/// A value in data/ calibrated on a control: where it is, what it is, and the marker's
/// text.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibrated {
    /// The file, as `data/...`.
    pub file: String,
    /// Its line, from 1.
    pub line: usize,
    /// The key with its table before it (`memory.app_mem_mib`; in an array of tables,
    /// the element's `name`: `app[facebook].bg_cpu_ms`); `line N` where the marker's
    /// line sets no key.
    pub key: String,
    /// The value as the file writes it.
    pub value: String,
    /// The control the marker names: its text up to the first comma.
    pub control: String,
    /// How the value was fitted: the rest of the marker's text.
    pub how: String,
}

impl Calibrated {
    /// Whether the marker names one of [`CONTROLS`].
    pub fn known(&self) -> bool {
        CONTROLS.contains(&self.control.as_str())
    }

    /// `data/FILE key = value`, the way the report lists it.
    pub fn setting(&self) -> String {
        if self.value.is_empty() {
            format!("{} {}", self.file, self.key)
        } else {
            format!("{} {} = {}", self.file, self.key, self.value)
        }
    }
}

/// Every `# calibrated:` marker of one TOML text; `file` names it in the results.
pub fn markers(file: &str, src: &str) -> Vec<Calibrated> {
    // The table the lines are in: its name, and for an array of tables the element's
    // index and `name`.
    let (mut table, mut array, mut element, mut index) = (String::new(), false, None::<String>, 0usize);
    let mut found = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("").trim();
        if let Some(name) = code.strip_prefix("[[").and_then(|c| c.strip_suffix("]]")) {
            index = if array && table == name.trim() { index + 1 } else { 0 };
            (table, array, element) = (name.trim().to_string(), true, None);
        } else if let Some(name) = code.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
            (table, array, element) = (name.trim().to_string(), false, None);
        }
        let kv = code.split_once('=').map(|(k, v)| (k.trim(), v.trim()));
        if let Some(("name", v)) = kv {
            element = Some(v.trim_matches('"').to_string());
        }
        let Some(at) = line.find(MARKER) else { continue };
        let text = line[at + MARKER.len()..].trim();
        let (control, how) = text.split_once(',').map_or((text, ""), |(c, h)| (c.trim(), h.trim()));
        let prefix = match (table.is_empty(), array) {
            (true, _) => String::new(),
            (false, false) => format!("{table}."),
            (false, true) => format!("{table}[{}].", element.clone().unwrap_or_else(|| format!("#{index}"))),
        };
        let (key, value) = match kv {
            Some((k, v)) if !k.is_empty() => (format!("{prefix}{k}"), v.to_string()),
            _ => (format!("line {}", i + 1), String::new()),
        };
        found.push(Calibrated { file: file.to_string(), line: i + 1, key, value, control: control.into(), how: how.into() });
    }
    found
}

/// Every `# calibrated:` marker of the embedded data, file by file.
pub fn calibrated() -> Vec<Calibrated> {
    floe_sim::config::embedded_files().iter().flat_map(|(path, src)| markers(&format!("data/{path}"), src)).collect()
}

/// The specs of each paper's controls, in the report's order: Ice, SEAL, SmartLMK, ASAP,
/// Selective. The other experiments' own specs are taken where they already hold the
/// control (their `--quick` included), filtered to the baseline.
fn plan(quick: bool) -> Result<[Vec<RunSpec>; 5], SimError> {
    let (seeds, use_s) = if quick { (1..=1u64, Some(ICE_QUICK_USE_S)) } else { (1..=ICE_SEEDS, None) };
    let memtester_mib = ice::memtester_mib()?;
    let mut ice_specs = Vec::new();
    for (_, wl) in ice::SCENARIOS {
        for seed in seeds.clone() {
            let base = RunSpec { seed, bg_apps: Some(0), use_s, ..RunSpec::new(ice::MOTIVATION_DEVICE, wl, "lru-cfs") };
            // BG-null is Ice's 0B+F evaluation run (drawn: no fixed set cached).
            ice_specs.push(RunSpec { draw_bg: true, ..base.clone() });
            ice_specs.push(RunSpec { balloon_mib: Some(memtester_mib), ..base.clone() });
            ice_specs.push(RunSpec { draw_bg: true, cputester_pct: Some(ice::paper::CPUTESTER_PCT), ..base });
        }
    }
    let seal_specs: Vec<RunSpec> = seal::specs(quick)
        .into_iter()
        .filter(|s| s.policy == "android-lmk" && s.shuffle_rounds && s.use_s.is_none() && s.bg_window_s.is_none())
        .collect();
    let smartlmk_specs: Vec<RunSpec> = smartlmk::specs(quick)
        .into_iter()
        .filter(|s| s.policy == "android-lmk" && s.balloon_mib == Some(0.0) && s.shuffle_rounds)
        .collect();
    // ASAP's control, Fig. 2.1, comes from switches of its own (`asap::fig21`).
    let asap_specs = Vec::new();
    let selective_specs: Vec<RunSpec> =
        selective::specs(quick).into_iter().filter(|s| s.policy == "android-lmk" && s.bg_window_s.is_none() && !s.no_idle_growth).collect();
    Ok([ice_specs, seal_specs, smartlmk_specs, asap_specs, selective_specs])
}

/// Runs every paper's controls and builds the report.
pub fn run(quick: bool, seeds: u32, progress: crate::Progress) -> Result<Report, SimError> {
    let plan = plan(quick)?;
    let lens = plan.each_ref().map(Vec::len);
    let specs: Vec<RunSpec> = plan.into_iter().flatten().collect();
    // Table 1 comes from runs of its own, made once; ASAP's Fig. 2.1 from switches of its
    // own, made with each replicate's seed.
    let table1 = ice::background_cpu(&TABLE1_BG)?;
    let fig21 = asap::fig21_by_replicate(seeds)?;
    let calibrated = calibrated();
    let report = |runs: Vec<RunRecord>| {
        let fig21 = asap::fig21_of(&fig21, &runs);
        report(runs, lens, &table1, &fig21, &calibrated, quick)
    };
    crate::run_replicated(&specs, seeds, progress, report, |t, _| findings(t, &calibrated))
}

/// A run of Ice's BG-cputester.
fn cputester(r: &RunRecord) -> bool {
    r.params.contains_key("cputester_pct")
}

/// One row: `control`'s figure `what`, the paper's (None: it gives none), floe's.
fn row(control: &str, what: &str, paper: Option<f64>, ours: f64) -> Comparison {
    let tail = if paper.is_none() { " (no figure)" } else { "" };
    Comparison { label: format!("{control}: {what}{tail}"), paper, ours }
}

/// Ice §2.2 on the P20 under LRU+CFS: BG-null, BG-memtester and BG-cputester (from
/// `ice::motivation_table`, the same reading as `floe experiment ice`'s Fig. 1), and
/// Table 1 (floe's utilisation as a share of all cores, from `ice::background_cpu`).
fn ice_table(runs: &[RunRecord], table1: &[(usize, ice::Utilisation)]) -> Table {
    use ice::paper;
    let plain: Vec<RunRecord> = runs.iter().filter(|r| !cputester(r)).cloned().collect();
    let fig1 = [ice::motivation_table(&plain)];
    let v = |label: &str| value(&fig1, "Fig. 1", label);
    // The FPS change a case brings against BG-null, percent, mean of the scenarios.
    let change = |keep: &dyn Fn(&RunRecord) -> bool| {
        let fps = |wl: &str, keep: &dyn Fn(&RunRecord) -> bool| mean_where(runs, |r| r.workload == wl && keep(r), |m| m.fps);
        let null = |r: &RunRecord| !cputester(r) && r.params.get("balloon_mib") == Some(&Param::Float(0.0));
        let each: Vec<f64> = ice::SCENARIOS.iter().map(|(_, wl)| -pct_cut(fps(wl, &null), fps(wl, keep))).collect();
        crate::report::mean(each)
    };
    let table1_pct = |n: usize| crate::report::mean(table1.iter().filter(|(m, _)| *m == n).map(|(_, u)| 100.0 * u.mean));
    let (fig2a_null, fig2a_memtester) = (paper::FIG2A[0], paper::FIG2A[1]);
    let rows = vec![
        row(ICE_BG_NULL, "S-A fps (Fig. 1(a))", Some(paper::FIG1_SA_NULL_FPS), v("S-A BG-null fps")),
        row(ICE_BG_NULL, "S-A pages reclaimed in the run (Fig. 2(a))", Some(fig2a_null.0), v("S-A BG-null reclaims")),
        row(ICE_BG_NULL, "S-A pages refaulted in the run (Fig. 2(a))", Some(fig2a_null.1), v("S-A BG-null refaults")),
        row(ICE_BG_MEMTESTER, "S-A pages reclaimed in the run (Fig. 2(a))", Some(fig2a_memtester.0), v("S-A BG-memtester reclaims")),
        row(ICE_BG_MEMTESTER, "S-A pages refaulted in the run (Fig. 2(a))", Some(fig2a_memtester.1), v("S-A BG-memtester refaults")),
        row(
            ICE_BG_MEMTESTER,
            "fps change vs BG-null, mean of 4 scenarios, % (§2.2.3)",
            Some(paper::FIG1_MEMTESTER_FPS_PCT),
            v("mean BG-memtester fps change %"),
        ),
        row(
            ICE_BG_CPUTESTER,
            "fps change vs BG-null, mean of 4 scenarios, % (§2.2.3)",
            Some(paper::FIG1_CPUTESTER_FPS_PCT),
            change(&cputester),
        ),
        row(ICE_TABLE1, "CPU use, no app cached, no foreground, % of all cores", Some(paper::TABLE1[0].0), table1_pct(0)),
        row(ICE_TABLE1, "CPU use, 8 apps cached, no foreground, % of all cores", Some(paper::TABLE1[4].0), table1_pct(8)),
    ];
    Table {
        title: "Ice (P20, LRU+CFS): BG-null, BG-memtester, BG-cputester (§2.2, Figs. 1, 2(a)) and Table 1".into(),
        unit: "fps; pages per run; percent".into(),
        rows,
    }
}

/// SEAL on the HiKey 970, 30 apps in a fresh order each round (as `floe experiment
/// seal` runs them): No-SWAP's warm launch (Fig. 10), caching (Fig. 13, §II-B) and
/// interaction alerts (Fig. 11, which gives no count).
fn seal_table(runs: &[RunRecord]) -> Table {
    use seal::paper;
    let m = |f: &dyn Fn(&Metrics) -> f64| mean_where(runs, |_| true, f);
    let of = |t: &[(&str, f64)]| t.iter().find(|(p, _)| *p == "android-lmk").map(|x| x.1);
    Table {
        title: "SEAL (HiKey 970, 30 apps): No-SWAP (android-lmk)".into(),
        unit: "ms; apps; frames".into(),
        rows: vec![
            row(SEAL_NO_SWAP, "warm launch ms (Fig. 10)", of(&paper::WARM_MS), m(&|m| m.switch_ms_mean)),
            row(SEAL_NO_SWAP, "apps warm-launched per round (Fig. 13, §II-B)", of(&paper::CACHED), m(&|m| m.caching_capability)),
            row(SEAL_NO_SWAP, "interaction alerts in the run (Fig. 11)", None, m(&|m| m.interaction_alerts as f64)),
        ],
    }
}

/// SmartLMK on the Galaxy Nexus, 256 launches with no balloon: the stock LMK's total
/// launch time (Fig. 10), apps cached on average (§6.3), resumes (Fig. 11) and kills
/// (Fig. 14).
fn smartlmk_table(runs: &[RunRecord]) -> Table {
    use smartlmk::paper;
    let m = |f: &dyn Fn(&Metrics) -> f64| mean_where(runs, |_| true, f);
    let total = paper::TOTAL_S.iter().find(|(p, _, _)| *p == "android-lmk").map(|x| x.1);
    let cached = paper::CACHED_APPS.iter().find(|(p, _)| *p == "android-lmk").map(|x| x.1);
    Table {
        title: "SmartLMK (Galaxy Nexus, 256 launches, no balloon): the stock LMK (Vanilla, android-lmk)".into(),
        unit: "seconds; apps; launches; kills".into(),
        rows: vec![
            row(SMARTLMK_STOCK_LMK, "total launch time, s (Fig. 10)", total, m(&|m| m.launch_ms_total / 1000.0)),
            row(SMARTLMK_STOCK_LMK, "apps cached on average (§6.3)", cached, smartlmk::mean_cached_apps(runs, |_| true)),
            row(SMARTLMK_STOCK_LMK, "app resumes of 256 (Fig. 11)", None, m(&|m| m.launches_warm as f64)),
            row(SMARTLMK_STOCK_LMK, "processes killed (Fig. 14)", None, m(&|m| m.kills as f64)),
        ],
    }
}

/// ASAP on the Pixel 4 and 3a: demand paging's switch with the app's pages out of memory
/// against the ideal one (Fig. 2.1, from `asap::fig21_table`).
fn asap_table(fig21: &Table) -> Table {
    let fig21 = [fig21.clone()];
    let mut rows = Vec::new();
    for dev in asap::DEVICES {
        let v = |label: &str| value(&fig21, "Fig. 2.1", &format!("{dev} {label}"));
        let ratio = (dev == "pixel4").then_some(asap::paper::PRESSURE_OVER_IDEAL);
        rows.push(row(
            ASAP_DEMAND_PAGING,
            &format!("{dev} mean switch ms, most pages not in memory"),
            None,
            v("switch ms, most pages not in memory"),
        ));
        rows.push(row(ASAP_DEMAND_PAGING, &format!("{dev} mean switch ms, ideal (every page in memory)"), None, v("ideal switch ms")));
        rows.push(row(
            ASAP_DEMAND_PAGING,
            &format!("{dev} most pages not in memory / ideal (Fig. 2.1)"),
            ratio,
            v("most pages not in memory / ideal"),
        ));
    }
    Table { title: "ASAP (Pixel 4, Pixel 3a, the eight apps of the sequences): demand paging".into(), unit: "ms; ratio".into(), rows }
}

/// Selective on the Nexus 5: the original Android's mean launch time in each scenario
/// (Figs. 5-9, which the text gives no number for).
fn selective_table(runs: &[RunRecord]) -> Table {
    let rows = selective::SCENARIOS
        .iter()
        .map(|wl| {
            let name = wl.trim_start_matches("selective-").to_uppercase();
            let ms = mean_where(runs, |r| r.workload == *wl, |m| m.launch_ms_mean);
            row(SELECTIVE_ORIGINAL, &format!("{name} mean launch ms (Figs. 5-9)"), None, ms)
        })
        .collect();
    Table { title: "Selective (Nexus 5, scenarios A1-C): the original Android (android-lmk)".into(), unit: "ms".into(), rows }
}

/// Builds the report from one replicate's runs, in the order of [`plan`] (`lens` runs
/// per paper), Table 1's measurements and data/'s calibrated values.
fn report(
    runs: Vec<RunRecord>,
    lens: [usize; 5],
    table1: &[(usize, ice::Utilisation)],
    fig21: &Table,
    calibrated: &[Calibrated],
    quick: bool,
) -> Report {
    let mut parts = Vec::new();
    let mut rest = runs.as_slice();
    for n in lens {
        let (head, tail) = rest.split_at(n.min(rest.len()));
        parts.push(head);
        rest = tail;
    }
    let tables =
        vec![ice_table(parts[0], table1), seal_table(parts[1]), smartlmk_table(parts[2]), asap_table(fig21), selective_table(parts[4])];
    let mut notes = vec![
        format!(
            "{}. Ice: the four scenarios with no app cached (BG-null), with memtester's {:.0} MiB balloon (BG-memtester; the 5.52 GB the paper's memtester brought the memory occupied in total to, less the P20's system share, up to the largest balloon it takes), and with the CPU hog (BG-cputester); Fig. 2(a) names no scenario, floe shows S-A's, and its page counts grow with the run's length, which the paper does not give. Table 1: 10 rounds each, apps drawn from Table 3's 20, the 10 s after the last leaves the foreground; with no app, the one launched is killed as it leaves. The other papers' controls are their experiments' baseline runs (the same `--quick`).",
            if quick { "--quick: Ice 1 seed of 60 s per launch" } else { "Full run: Ice 10 seeds of the workloads' 300 s" },
            ice::memtester_mib().unwrap_or(f64::NAN),
        ),
        format!(
            "Each finding: floe's figure within ±{TOLERANCE_PCT:.0} % of the paper's (relative difference, floe minus paper over the paper's magnitude). A value calibrated on a control is listed beside it; controls are calibration targets, comparisons never are (DESIGN.md, 'Rules for numbers')."
        ),
    ];
    if calibrated.is_empty() {
        notes.push(format!("Values in data/ calibrated on a control (`{MARKER}` markers): none."));
    } else {
        notes.push(format!("Values in data/ calibrated on a control (`{MARKER}` markers): {}.", calibrated.len()));
        for c in calibrated {
            let unknown = if c.known() { "" } else { " (not a known control)" };
            notes.push(format!("{}  <- {}{unknown}", c.setting(), c.control));
        }
    }
    Report { experiment: NAME.into(), runs, findings: findings(&tables, calibrated), tables, notes, seeds: 1, sd: vec![] }
}

/// floe minus the paper, percent of the paper's magnitude; n/a where the paper's is 0.
pub fn relative_pct(paper: f64, ours: f64) -> f64 {
    if paper == 0.0 {
        f64::NAN
    } else {
        100.0 * (ours - paper) / paper.abs()
    }
}

/// One finding per row with a paper figure: whether floe's lies within ±15 % of it, with
/// the relative difference and the values calibrated on the row's control.
fn findings(tables: &[Table], calibrated: &[Calibrated]) -> Vec<Finding> {
    let mut found = Vec::new();
    for r in tables.iter().flat_map(|t| &t.rows) {
        let Some(paper) = r.paper else { continue };
        let control = r.label.split_once(": ").map_or(r.label.as_str(), |(c, _)| c);
        let fixed: Vec<String> = calibrated.iter().filter(|c| c.control == control).map(Calibrated::setting).collect();
        let fixed =
            if fixed.is_empty() { "no value calibrated on it".to_string() } else { format!("calibrated on it: {}", fixed.join(", ")) };
        let rel = relative_pct(paper, r.ours);
        let claim = format!("{} within ±{TOLERANCE_PCT:.0} % of the paper's {}", r.label, fmt(paper));
        let evidence = if r.ours.is_nan() {
            format!("not run; {fixed}")
        } else {
            format!("{} against {}: {rel:+.1} %; {fixed}", fmt(r.ours), fmt(paper))
        };
        // A control within the tolerance matches the paper's figure: the tolerance is
        // the band, and there is no direction to hold without it.
        let mut f = Finding::new(claim, rel.abs() <= TOLERANCE_PCT, evidence);
        if f.holds {
            f.set_verdict(floe_core::Verdict::Matches);
        }
        (f.paper, f.floe) = (Some(paper), Some(r.ours).filter(|x| !x.is_nan()));
        found.push(f);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A marker is found on its line, mapped to its control by the text before the first
    /// comma, its key named with its table (an array element by its `name`).
    #[test]
    fn markers_are_found_and_mapped_to_their_control() {
        let src = r#"name = "x"
limit_mib = 3.0  # src: somewhere
[memory]
app_mem_mib = 3072.0  # calibrated: Ice BG-null, fitted so that BG-null's fps matches
[[app]]
name = "facebook"
bg_cpu_ms = 20.0  # calibrated: Ice Table 1, the 8-app row
[[app]]
name = "twitter"
bg_cpu_ms = 15.0  # calibrated: Ice Tabel 1, a typo
"#;
        let found = markers("data/t.toml", src);
        assert_eq!(found.len(), 3, "{found:?}");
        let c = &found[0];
        assert_eq!((c.file.as_str(), c.line, c.key.as_str(), c.value.as_str()), ("data/t.toml", 4, "memory.app_mem_mib", "3072.0"));
        assert_eq!((c.control.as_str(), c.how.as_str()), (ICE_BG_NULL, "fitted so that BG-null's fps matches"));
        assert!(c.known());
        assert_eq!(c.setting(), "data/t.toml memory.app_mem_mib = 3072.0");
        assert_eq!((found[1].key.as_str(), found[1].control.as_str()), ("app[facebook].bg_cpu_ms", ICE_TABLE1));
        assert_eq!(found[2].key, "app[twitter].bg_cpu_ms");
        assert!(!found[2].known(), "a misspelt control is not a known one");
        assert!(markers("f", "a = 1  # src: x\n").is_empty());
    }

    /// Every marker in data/ names a known control, so that a misspelt one fails here.
    #[test]
    fn every_marker_in_data_names_a_known_control() {
        let unknown: Vec<String> =
            calibrated().iter().filter(|c| !c.known()).map(|c| format!("{}:{}: `{}`", c.file, c.line, c.control)).collect();
        assert!(unknown.is_empty(), "markers naming no control (known: {}):\n{}", CONTROLS.join(", "), unknown.join("\n"));
    }

    /// The controls' keys are distinct, and none holds a comma (a marker's key ends at
    /// its first).
    #[test]
    fn control_keys_are_distinct() {
        for (i, a) in CONTROLS.iter().enumerate() {
            assert!(!a.contains(','), "{a}: a key ends at the marker's first comma");
            assert!(CONTROLS[i + 1..].iter().all(|b| a != b), "{a} twice");
        }
    }

    /// The findings take each row with a paper figure, its relative difference against
    /// the ±15 % bar, and the values calibrated on its control; rows without a figure
    /// have none, and a figure not run does not hold.
    #[test]
    fn findings_judge_each_figure_within_the_tolerance() {
        let rows = vec![
            row(ICE_BG_NULL, "fps", Some(40.0), 45.0),
            row(ICE_BG_MEMTESTER, "reclaims", Some(100.0), 130.0),
            row(ICE_BG_CPUTESTER, "fps change", Some(-6.3), f64::NAN),
            row(SEAL_NO_SWAP, "alerts", None, 12.0),
        ];
        assert_eq!(rows[3].label, "SEAL No-SWAP: alerts (no figure)");
        let tables = vec![Table { title: "t".into(), unit: "u".into(), rows }];
        let cal = markers("data/d.toml", "[memory]\nx_mib = 2.0  # calibrated: Ice BG-null, by hand\n");
        let f = findings(&tables, &cal);
        assert_eq!(f.len(), 3);
        assert!(f[0].holds && f[0].claim.starts_with("Ice BG-null: fps within ±15 % of the paper's 40.00"), "{:?}", f[0]);
        assert_eq!(f[0].evidence, "45.00 against 40.00: +12.5 %; calibrated on it: data/d.toml memory.x_mib = 2.0");
        assert!(!f[1].holds && f[1].evidence.contains("+30.0 %") && f[1].evidence.ends_with("no value calibrated on it"));
        assert!(!f[2].holds && f[2].evidence.starts_with("not run"));
        assert_eq!(relative_pct(-27.8, -2.78), 90.0);
    }

    /// A report of no runs still has every paper's table with its labels (none missing:
    /// `value` stops debug builds on a missing one), and lists no calibrated value.
    #[test]
    fn the_report_has_a_table_per_paper() {
        let rep = report(vec![], [0; 5], &[], &asap::fig21_table(&Vec::new()), &[], true);
        let titles: Vec<&str> = rep.tables.iter().map(|t| t.title.split_whitespace().next().unwrap()).collect();
        assert_eq!(titles, ["Ice", "SEAL", "SmartLMK", "ASAP", "Selective"]);
        for t in &rep.tables {
            for r in &t.rows {
                let control = r.label.split_once(": ").unwrap().0;
                assert!(CONTROLS.contains(&control), "{}", r.label);
            }
        }
        assert!(rep.notes.iter().any(|n| n.ends_with("markers): none.")), "{:?}", rep.notes);
        let covered: Vec<&str> =
            CONTROLS.iter().copied().filter(|c| rep.tables.iter().flat_map(|t| &t.rows).any(|r| r.label.starts_with(c))).collect();
        assert_eq!(covered, CONTROLS, "every control has a row");
    }

    /// The plan runs each control's baseline only: Ice's three cases in its four
    /// scenarios, and the other papers' baseline policy (ASAP's switches are made apart).
    #[test]
    fn the_plan_runs_the_baselines_only() {
        let [ice_specs, seal_specs, smartlmk_specs, asap_specs, selective_specs] = plan(true).unwrap();
        let cases = 3;
        assert_eq!(ice_specs.len(), ice::SCENARIOS.len() * cases);
        assert!(ice_specs.iter().all(|s| s.policy == "lru-cfs" && s.bg_apps == Some(0) && s.use_s == Some(ICE_QUICK_USE_S)));
        assert_eq!(seal_specs.len(), 1);
        assert_eq!(smartlmk_specs.len(), 1);
        assert!(asap_specs.is_empty(), "ASAP's control comes from asap::fig21's switches");
        assert_eq!(selective_specs.len(), selective::SCENARIOS.len());
        for s in [&seal_specs, &smartlmk_specs, &selective_specs].into_iter().flatten() {
            assert_eq!(s.policy, "android-lmk");
        }
    }
}
