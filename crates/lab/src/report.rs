//! Experiment reports: tables of our figures beside the paper's, as text for people.

use floe_core::RunRecord;
use std::fmt::Write as _;

/// One figure: what it is, the paper's value where the paper publishes one, ours.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub label: String,
    pub paper: Option<f64>,
    pub ours: f64,
}

/// A table or figure of the paper, re-run.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub title: String,
    /// What the values are, with their unit.
    pub unit: String,
    pub rows: Vec<Comparison>,
}

#[cfg(test)]
impl Table {
    /// The row labelled `label` (tests: panics naming the label if there is none).
    pub(crate) fn row(&self, label: &str) -> &Comparison {
        self.rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row `{label}` in `{}`", self.title))
    }
}

/// A whole experiment: its runs and the tables built from them.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub experiment: String,
    pub runs: Vec<RunRecord>,
    pub tables: Vec<Table>,
    /// Notes printed under the tables (how the runs were made, what differs).
    pub notes: Vec<String>,
}

impl Report {
    /// Renders every table as aligned text: label, paper, ours, ours minus paper.
    pub fn text(&self) -> String {
        let mut s = String::new();
        writeln!(s, "experiment {} — {} runs", self.experiment, self.runs.len()).unwrap();
        for t in &self.tables {
            writeln!(s, "\n{}  [{}]", t.title, t.unit).unwrap();
            let w = t.rows.iter().map(|r| r.label.len()).max().unwrap_or(10).max(10);
            writeln!(s, "  {:<w$}  {:>10}  {:>10}  {:>10}", "", "paper", "floe", "diff").unwrap();
            for r in &t.rows {
                let (p, d) = match r.paper {
                    Some(p) => (fmt(p), fmt(r.ours - p)),
                    None => ("-".to_string(), "-".to_string()),
                };
                writeln!(s, "  {:<w$}  {:>10}  {:>10}  {:>10}", r.label, p, fmt(r.ours), d).unwrap();
            }
        }
        if !self.notes.is_empty() {
            writeln!(s).unwrap();
            for n in &self.notes {
                writeln!(s, "note: {n}").unwrap();
            }
        }
        s
    }
}

/// Mean of `xs`; NaN when there are none.
pub fn mean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = xs.into_iter().fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The least and the largest of `xs`; NaN for both when there are none.
pub fn range(xs: impl IntoIterator<Item = f64>) -> (f64, f64) {
    xs.into_iter().fold((f64::NAN, f64::NAN), |(lo, hi), x| (x.min(lo), x.max(hi)))
}

/// Each app's mean warm-launch (switch) latency over the runs' launch logs, ms.
pub fn warm_ms_by_app<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> std::collections::BTreeMap<String, f64> {
    let mut acc: std::collections::BTreeMap<String, (f64, u32)> = Default::default();
    for r in runs {
        for l in r.launches.iter().filter(|l| l.kind == floe_core::LaunchKind::Warm) {
            let e = acc.entry(l.app.clone()).or_default();
            *e = (e.0 + l.ms, e.1 + 1);
        }
    }
    acc.into_iter().map(|(app, (sum, n))| (app, sum / f64::from(n))).collect()
}

/// Mean of `f` over the runs `keep` selects; NaN when it selects none.
pub fn mean_where(runs: &[RunRecord], keep: impl Fn(&RunRecord) -> bool, f: impl Fn(&floe_core::Metrics) -> f64) -> f64 {
    mean(runs.iter().filter(|r| keep(r)).map(|r| f(&r.metrics)))
}

/// How much lower `with` is than `base`, in percent of `base` (0 when base is 0).
pub fn pct_cut(base: f64, with: f64) -> f64 {
    if base > 0.0 {
        100.0 * (base - with) / base
    } else {
        0.0
    }
}

/// The standard error of the mean of per-seed cuts (`pct_cut`) of `f` under `policy`
/// against `base`, over the runs `keep` selects, each seed's two runs paired: how far a
/// cut moves with the seed. Seeds where `base` gives zero are left out (no cut); NaN with
/// fewer than two seeds left.
pub fn paired_cut_stderr(
    runs: &[RunRecord],
    keep: impl Fn(&RunRecord) -> bool,
    base: &str,
    policy: &str,
    f: impl Fn(&floe_core::Metrics) -> f64,
) -> f64 {
    let of = |p: &str, seed: u64| runs.iter().find(|r| r.policy == p && r.seed == seed && keep(r)).map(|r| f(&r.metrics));
    let mut seeds: Vec<u64> = runs.iter().filter(|r| r.policy == base && keep(r)).map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let cuts: Vec<f64> =
        seeds.iter().filter_map(|&s| Some((of(base, s).filter(|&b| b > 0.0)?, of(policy, s)?))).map(|(b, p)| pct_cut(b, p)).collect();
    if cuts.len() < 2 {
        return f64::NAN;
    }
    let n = cuts.len() as f64;
    let mean = cuts.iter().sum::<f64>() / n;
    let var = cuts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (var / n).sqrt()
}

fn fmt(x: f64) -> String {
    if x.is_nan() {
        // Nothing to show: no runs selected, or too few for the statistic.
        "n/a".to_string()
    } else if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_shows_paper_beside_ours_and_the_difference() {
        let r = Report {
            experiment: "x".into(),
            runs: vec![],
            tables: vec![Table {
                title: "Fig. 1".into(),
                unit: "fps".into(),
                rows: vec![
                    Comparison { label: "a".into(), paper: Some(25.4), ours: 30.0 },
                    Comparison { label: "b".into(), paper: None, ours: 1.0 },
                    Comparison { label: "c".into(), paper: Some(1.0), ours: f64::NAN },
                ],
            }],
            notes: vec!["n".into()],
        };
        let t = r.text();
        assert!(t.contains("25.40") && t.contains("30.00") && t.contains("4.60"), "{t}");
        assert!(t.lines().any(|l| l.trim_start().starts_with('b') && l.contains('-')), "{t}");
        assert!(t.contains("note: n"));
        assert!(t.lines().any(|l| l.trim_start().starts_with('c') && l.matches("n/a").count() == 2) && !t.contains("NaN"), "{t}");
    }

    /// The plain statistics the tables share: NaN where there is nothing to take.
    #[test]
    fn mean_range_and_warm_launches_by_app() {
        use floe_core::{LaunchKind, LaunchLog};
        assert_eq!(mean([1.0, 2.0, 6.0]), 3.0);
        assert!(mean([]).is_nan());
        assert_eq!(range([3.0, -1.0, 2.0]), (-1.0, 3.0));
        let (lo, hi) = range([]);
        assert!(lo.is_nan() && hi.is_nan());
        let run = |launches: Vec<LaunchLog>| RunRecord { launches, ..RunRecord::new("p", "d", "w", 1) };
        let log = |app: &str, kind, ms| LaunchLog::new(app, kind, ms, 1);
        let a = run(vec![log("x", LaunchKind::Warm, 100.0), log("x", LaunchKind::Cold, 9000.0), log("y", LaunchKind::Warm, 50.0)]);
        let b = run(vec![log("x", LaunchKind::Warm, 300.0)]);
        let by_app = warm_ms_by_app([&a, &b]);
        assert_eq!(by_app.len(), 2);
        assert_eq!((by_app["x"], by_app["y"]), (200.0, 50.0), "cold launches are not switches");
    }
}
