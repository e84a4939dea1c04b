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

/// Mean of `f` over the runs `keep` selects; NaN when it selects none.
pub fn mean_where(runs: &[RunRecord], keep: impl Fn(&RunRecord) -> bool, f: impl Fn(&floe_core::Metrics) -> f64) -> f64 {
    let xs: Vec<f64> = runs.iter().filter(|r| keep(r)).map(|r| f(&r.metrics)).collect();
    if xs.is_empty() {
        f64::NAN
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
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
}
