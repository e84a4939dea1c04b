//! Experiment reports: tables of our figures beside the paper's, as text for people.

use floe_core::{Finding, RunRecord, Verdict};
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
    /// The paper's findings, each checked against the tables (printed after them).
    pub findings: Vec<Finding>,
    /// Notes printed under the tables (how the runs were made, what differs).
    pub notes: Vec<String>,
    /// How many seed replicates each figure is the mean of (1: one set of runs;
    /// [`replicate`]).
    pub seeds: u32,
    /// With several seeds, each table's rows' standard deviation across them, in the
    /// order of `tables` and their rows; empty with one.
    pub sd: Vec<Vec<f64>>,
}

/// A change smaller than this share of what it is measured against counts as none: a
/// finding that a figure rises or falls needs at least this much (1 %).
pub const MIN_CHANGE: f64 = 0.01;

/// Which way floe's figure must lie for a finding to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Above the other by at least [`MIN_CHANGE`] of it.
    Above,
    /// Below the other by at least [`MIN_CHANGE`] of it.
    Below,
    /// Not below the other.
    AtLeast,
}

impl Want {
    fn holds(self, a: f64, b: f64) -> bool {
        let margin = MIN_CHANGE * b.abs();
        match self {
            Want::Above => a > b + margin,
            Want::Below => a < b - margin,
            Want::AtLeast => a >= b,
        }
    }
}

/// floe's effect matches the paper's when it lies within this share of the paper's
/// effect of it (±30 %).
pub const MATCH_BAND: f64 = 0.3;

/// A finding whose direction held gets its magnitude verdict: matches when the paper
/// publishes its effect and floe's lies within [`MATCH_BAND`] of it (both measured from
/// the finding's origin), direction otherwise.
fn magnitude(f: &Finding) -> Verdict {
    match (f.paper, f.floe) {
        (Some(p), Some(x)) if !p.is_nan() && !x.is_nan() => {
            let o = f.origin.unwrap_or(0.0);
            if (x - p).abs() <= MATCH_BAND * (p - o).abs() {
                Verdict::Matches
            } else {
                Verdict::Direction
            }
        }
        _ => Verdict::Direction,
    }
}

/// Sets `f`'s verdict from whether its direction held and its figures.
fn settle(f: &mut Finding, direction: bool) {
    f.set_verdict(if direction { magnitude(f) } else { Verdict::No });
}

/// The relative difference of `a` from `b`, in percent of `b`'s magnitude.
fn relative(a: f64, b: f64) -> f64 {
    100.0 * (a - b) / b.abs()
}

/// The finding `claim` holds if floe's `a` lies as `want` says against `b` (each a
/// label and a figure, in `unit`); the evidence names both. A figure that is n/a
/// (NaN: no runs to take it from) never holds. Its effect is `a`'s difference from `b`
/// in percent of `b` ([`PaperFigure::paper_vs`] gives the paper's).
pub fn versus(claim: impl Into<String>, a: (&str, f64), want: Want, b: (&str, f64), unit: &str) -> Finding {
    let holds = !a.1.is_nan() && !b.1.is_nan() && want.holds(a.1, b.1);
    let mut f = Finding::new(claim, holds, format!("{} {} against {} {}{}", a.0, fmt(a.1), b.0, fmt(b.1), unit_suffix(unit)));
    f.floe = Some(relative(a.1, b.1)).filter(|x| x.is_finite());
    // "At least" is met by no difference: no origin to fall into.
    f.origin = (want != Want::AtLeast).then_some(0.0);
    settle(&mut f, holds);
    f
}

/// The finding `claim` holds if floe's figure (`label`, `value`) lies as `want` says
/// against the fixed `bar` (a cut of at least 1 %, a ratio at least 1.01 — the bar is
/// taken as it is, without [`MIN_CHANGE`]). Its effect is the figure itself, measured
/// from the bar ([`PaperFigure::paper`] gives the paper's figure).
pub fn against_bar(claim: impl Into<String>, (label, value): (&str, f64), want: Want, bar: f64, unit: &str) -> Finding {
    let holds = !value.is_nan()
        && match want {
            Want::Above => value > bar,
            Want::Below => value < bar,
            Want::AtLeast => value >= bar,
        };
    let mut f = Finding::new(claim, holds, format!("{label} {}{}", fmt(value), unit_suffix(unit)));
    f.floe = Some(value).filter(|x| !x.is_nan());
    f.origin = (want != Want::AtLeast).then_some(bar);
    settle(&mut f, holds);
    f
}

/// The paper's side of a finding.
pub trait PaperFigure {
    /// The paper's figure on the finding's own scale (for [`against_bar`]: the figure
    /// the paper reports where floe's value stands).
    fn paper(self, x: f64) -> Finding;
    /// The paper's two figures of a [`versus`] finding, `a` against `b`.
    fn paper_vs(self, a: f64, b: f64) -> Finding;
    /// Marks the finding vacuous when `none` says an effect it rests on is none (a
    /// share of a cut that is zero), naming it in the evidence.
    fn vacuous_if(self, none: bool, what: &str) -> Finding;
}

impl PaperFigure for Finding {
    fn paper(mut self, x: f64) -> Finding {
        self.paper = Some(x);
        if self.verdict.holds() {
            settle(&mut self, true);
        }
        self
    }

    fn paper_vs(self, a: f64, b: f64) -> Finding {
        self.paper(relative(a, b))
    }

    fn vacuous_if(mut self, none: bool, what: &str) -> Finding {
        if none {
            self.set_verdict(Verdict::Vacuous);
            write!(self.evidence, " ({what} is none)").unwrap();
        }
        self
    }
}

/// The finding `claim` holds if every one of floe's figures (each a label and a value)
/// lies within the paper's range `lo..=hi` (a range the paper states, taken as it is):
/// then it matches; the evidence names them all. A figure that is n/a never holds.
pub fn within(claim: impl Into<String>, figures: &[(&str, f64)], (lo, hi): (f64, f64), unit: &str) -> Finding {
    let holds = !figures.is_empty() && figures.iter().all(|&(_, x)| (lo..=hi).contains(&x));
    let shown: Vec<String> = figures.iter().map(|(label, x)| format!("{label} {}", fmt(*x))).collect();
    let mut f = Finding::new(claim, holds, format!("{}{}", shown.join(", "), unit_suffix(unit)));
    if holds {
        f.set_verdict(Verdict::Matches);
    }
    f
}

/// The finding `claim` that a figure rises (`want` +1) or falls (-1) along a sweep
/// holds if floe's `trend` (+1, -1, or 0 for no change) is the same (a direction: the
/// paper gives no magnitude to match).
pub fn trend(claim: impl Into<String>, what: &str, trend: f64, want: f64) -> Finding {
    let word = |t: f64| match t {
        t if t > 0.0 => "rises",
        t if t < 0.0 => "falls",
        0.0 => "does not change",
        _ => "n/a",
    };
    Finding::new(claim, trend == want, format!("{what} {}", word(trend)))
}

/// `f` with one more figure behind it, from runs under another assumption (`what`):
/// shown beside the verdict, which stays the main runs'.
pub fn also(mut f: Finding, what: &str, figures: &str) -> Finding {
    write!(f.evidence, "; {what}: {figures}").unwrap();
    f
}

fn unit_suffix(unit: &str) -> String {
    match unit {
        "" => String::new(),
        "%" => " %".into(),
        u => format!(" {u}"),
    }
}

/// The figure labelled `label` in the table whose title starts with `title`, or n/a
/// (NaN) if there is none (a finding built on it then does not hold, and says n/a).
/// A missing row is a mislabelled finding: debug builds (the tests) stop on it.
pub fn value(tables: &[Table], title: &str, label: &str) -> f64 {
    let row = tables.iter().filter(|t| t.title.starts_with(title)).flat_map(|t| &t.rows).find(|r| r.label == label);
    debug_assert!(row.is_some(), "no row `{label}` in a table titled `{title}...`");
    row.map_or(f64::NAN, |r| r.ours)
}

impl Report {
    /// Renders every table as aligned text: label, paper, ours, ours minus paper, and
    /// with several seeds the standard deviation of ours across them.
    pub fn text(&self) -> String {
        let mut s = String::new();
        write!(s, "experiment {} — {} runs", self.experiment, self.runs.len()).unwrap();
        if self.seeds > 1 {
            write!(s, ", {} seeds: each figure their mean, sd its standard deviation across them", self.seeds).unwrap();
        }
        writeln!(s).unwrap();
        // The findings first: what a reader looks for, then the tables they rest on.
        if !self.findings.is_empty() {
            let of_seeds = if self.seeds > 1 { format!(" (on the {} seeds' mean figures)", self.seeds) } else { String::new() };
            let indicative = if self.seeds > 1 { "" } else { "; indicative with one seed" };
            writeln!(s, "\nThe paper's findings in floe's runs{of_seeds}: {}", counts(&self.findings)).unwrap();
            let legend = format!(
                "(matches: within ±{:.0} % of the paper's effect; a change under {:.0} % counts as none{indicative})",
                MATCH_BAND * 100.0,
                MIN_CHANGE * 100.0
            );
            s.push_str(&wrap(&legend, "  ", "  "));
            for f in &self.findings {
                let line = format!("{:<9}  {} — floe: {}{}", f.verdict.word(), f.claim, f.evidence, effects(f));
                s.push_str(&wrap(&line, "  ", &" ".repeat(13)));
            }
        }
        for (i, t) in self.tables.iter().enumerate() {
            let sd = self.sd.get(i);
            writeln!(s).unwrap();
            s.push_str(&wrap(&format!("{}  [{}]", t.title, t.unit), "", "  "));
            // Labels longer than what leaves room for the figures get a line of their own.
            let room = WIDTH - 2 - 4 * 12;
            let w = t.rows.iter().map(|r| r.label.chars().count()).filter(|&n| n <= room).max().unwrap_or(10).max(10);
            write!(s, "  {:<w$}  {:>10}  {:>10}  {:>10}", "", "paper", "floe", "diff").unwrap();
            writeln!(s, "{}", if sd.is_some() { format!("  {:>10}", "sd") } else { String::new() }).unwrap();
            for (j, r) in t.rows.iter().enumerate() {
                let (p, d) = match r.paper {
                    Some(p) => (fmt(p), fmt(r.ours - p)),
                    None => ("-".to_string(), "-".to_string()),
                };
                let label = if r.label.chars().count() > w {
                    s.push_str(&wrap(&r.label, "  ", "  "));
                    ""
                } else {
                    r.label.as_str()
                };
                write!(s, "  {:<w$}  {:>10}  {:>10}  {:>10}", label, p, fmt(r.ours), d).unwrap();
                let dev = sd.map(|v| format!("  {:>10}", fmt(v.get(j).copied().unwrap_or(f64::NAN))));
                writeln!(s, "{}", dev.unwrap_or_default()).unwrap();
            }
        }
        if !self.notes.is_empty() {
            writeln!(s).unwrap();
            for n in &self.notes {
                s.push_str(&wrap(&format!("note: {n}"), "", "      "));
            }
        }
        s
    }
}

/// The widest line a report's text prints, in characters.
pub const WIDTH: usize = 120;

/// `text` as lines of at most [`WIDTH`] characters, broken at spaces: the first line
/// after `first`, the others after `rest` (a word longer than a line stays whole).
fn wrap(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(first);
    let mut len = first.chars().count();
    let mut empty = true;
    for word in text.split(' ') {
        let n = word.chars().count();
        if !empty && len + 1 + n > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(rest);
            len = rest.chars().count();
            empty = true;
        }
        if !empty {
            line.push(' ');
            len += 1;
        }
        line.push_str(word);
        len += n;
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// One report from the reports of the same experiment over several seed replicates
/// (the same runs, each replicate with its own seeds): every figure the mean of the
/// replicates' (those that have it, n/a ones left out), beside its standard deviation
/// across them; the findings judged again by `findings` on the mean figures (and all
/// the runs), each saying in how many replicates it held on its own; the runs of all.
/// Tables are matched by position, rows by label. One report comes back as it is.
pub fn replicate(mut reports: Vec<Report>, findings: impl Fn(&[Table], &[RunRecord]) -> Vec<Finding>) -> Report {
    if reports.len() <= 1 {
        return reports.pop().expect("at least one report");
    }
    let n = reports.len() as u32;
    let first = &reports[0];
    debug_assert!(reports.iter().all(|r| r.tables.len() == first.tables.len()), "replicates with different tables");
    let (mut tables, mut sd) = (Vec::new(), Vec::new());
    for (i, t) in first.tables.iter().enumerate() {
        let same: Vec<&Table> = reports.iter().filter_map(|r| r.tables.get(i)).collect();
        let mut labels: Vec<&str> = Vec::new();
        for row in same.iter().flat_map(|t| &t.rows) {
            if !labels.contains(&row.label.as_str()) {
                labels.push(&row.label);
            }
        }
        let (mut rows, mut devs) = (Vec::new(), Vec::new());
        for label in labels {
            let found: Vec<&Comparison> = same.iter().filter_map(|t| t.rows.iter().find(|r| r.label == label)).collect();
            let xs: Vec<f64> = found.iter().map(|r| r.ours).filter(|x| !x.is_nan()).collect();
            rows.push(Comparison { label: label.to_string(), paper: found[0].paper, ours: mean(xs.iter().copied()) });
            devs.push(stddev(&xs));
        }
        tables.push(Table { title: t.title.clone(), unit: t.unit.clone(), rows });
        sd.push(devs);
    }
    let runs: Vec<RunRecord> = reports.iter().flat_map(|r| r.runs.iter().cloned()).collect();
    let mut judged = findings(&tables, &runs);
    for (i, f) in judged.iter_mut().enumerate() {
        let same: Vec<&Finding> = reports.iter().filter_map(|r| r.findings.get(i).filter(|g| g.claim == f.claim)).collect();
        let held = same.iter().filter(|g| g.holds).count() as u32;
        write!(f.evidence, "; holds in {held} of {n} seeds").unwrap();
        (f.seeds_held, f.seeds) = (Some(held), Some(n));
        let xs: Vec<f64> = same.iter().filter_map(|g| g.floe).filter(|x| !x.is_nan()).collect();
        if let Some(ci) = interval95(&xs) {
            f.interval = Some(ci);
            // An effect whose interval over the seeds takes in its origin is within the
            // noise: vacuous, whichever side its mean lies.
            if f.origin.is_some_and(|o| ci[0] <= o && o <= ci[1]) && f.verdict != Verdict::Vacuous {
                f.set_verdict(Verdict::Vacuous);
            }
        }
    }
    let mut notes = first.notes.clone();
    notes.push(format!(
        "{n} seed replicates (--seeds {n}): replicate r (from 0) ran every run with its seed plus {} r (the --json runs carry their seeds); each figure is the replicates' mean, sd their standard deviation, and each finding is judged on the means and says in how many replicates it holds on its own. A finding's 95 % interval is that of the replicates' own values: where the finding takes the least (or most) of several cases, its value on the means can lie above (or below) that interval. Notes above that name a seed describe the first replicate.",
        crate::SEED_STRIDE
    ));
    Report { experiment: first.experiment.clone(), runs, tables, findings: judged, notes, seeds: n, sd }
}

/// One line per report of its findings' verdicts, then the total: the closing summary
/// of several experiments run together.
pub fn summary(reports: &[Report]) -> String {
    let mut s = String::from("The papers' findings in floe's runs:\n");
    let mut all = Vec::new();
    for r in reports {
        writeln!(s, "  {:<10} {}", r.experiment, counts(&r.findings)).unwrap();
        all.extend(r.findings.iter().cloned());
    }
    writeln!(s, "  {:<10} {}", "in all", counts(&all)).unwrap();
    s
}

/// The findings' verdicts counted: "2 match, 3 direction, 1 no, 1 vacuous: 5 of 7 hold".
pub fn counts(findings: &[Finding]) -> String {
    let n = |v: Verdict| findings.iter().filter(|f| f.verdict == v).count();
    let held = findings.iter().filter(|f| f.holds).count();
    format!(
        "{} match, {} direction, {} no, {} vacuous: {held} of {} hold",
        n(Verdict::Matches),
        n(Verdict::Direction),
        n(Verdict::No),
        n(Verdict::Vacuous),
        findings.len()
    )
}

/// The paper's effect and floe's beside a finding's evidence, with floe's interval.
fn effects(f: &Finding) -> String {
    let (Some(x), Some(p)) = (f.floe, f.paper) else {
        return match (f.floe, f.interval) {
            (Some(x), Some([lo, hi])) => format!(" [floe {} (95 % {} to {})]", fmt(x), fmt(lo), fmt(hi)),
            _ => String::new(),
        };
    };
    let ci = f.interval.map(|[lo, hi]| format!(" (95 % {} to {})", fmt(lo), fmt(hi))).unwrap_or_default();
    format!(" [paper {}, floe {}{ci}]", fmt(p), fmt(x))
}

/// Student's t for a two-sided 95 % interval with `df` degrees of freedom (1 to 30;
/// the normal 1.96 beyond).
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.96)
}

/// The 95 % interval of the mean of `xs` (Student's t); None with fewer than two.
pub fn interval95(xs: &[f64]) -> Option<[f64; 2]> {
    if xs.len() < 2 {
        return None;
    }
    let (m, half) = (mean(xs.iter().copied()), t95(xs.len() - 1) * stddev(xs) / (xs.len() as f64).sqrt());
    Some([m - half, m + half])
}

/// The sample standard deviation of `xs`; NaN with fewer than two.
pub fn stddev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs.iter().copied());
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
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
    stddev(&cuts) / (cuts.len() as f64).sqrt()
}

/// A figure as the reports print it: whole above 1000, two decimals below, n/a for NaN.
pub(crate) fn fmt(x: f64) -> String {
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
            findings: vec![],
            notes: vec!["n".into()],
            seeds: 1,
            sd: vec![],
        };
        let t = r.text();
        assert!(t.contains("25.40") && t.contains("30.00") && t.contains("4.60"), "{t}");
        assert!(t.lines().any(|l| l.trim_start().starts_with('b') && l.contains('-')), "{t}");
        assert!(t.contains("note: n"));
        assert!(t.lines().any(|l| l.trim_start().starts_with('c') && l.matches("n/a").count() == 2) && !t.contains("NaN"), "{t}");
    }

    /// A finding holds only when floe's figure lies the paper's way by at least 1 % of
    /// what it is set against (`AtLeast`: not below it), and never on n/a.
    #[test]
    fn findings_need_the_papers_direction_by_more_than_one_percent() {
        let f = |a: f64, want, b: f64| versus("c", ("a", a), want, ("b", b), "apps").holds;
        assert!(f(20.0, Want::Above, 10.0) && !f(10.0, Want::Above, 20.0));
        assert!(!f(100.5, Want::Above, 100.0), "half a percent is no change");
        assert!(f(98.0, Want::Below, 100.0) && !f(99.5, Want::Below, 100.0) && !f(101.0, Want::Below, 100.0));
        assert!(f(-102.0, Want::Below, -100.0) && !f(-100.5, Want::Below, -100.0), "the margin is on the magnitude");
        assert!(f(15.0, Want::AtLeast, 15.0) && !f(14.9, Want::AtLeast, 15.0));
        assert!(!f(f64::NAN, Want::Above, 1.0) && !f(1.0, Want::AtLeast, f64::NAN));
        let e = versus("SEAL caches more", ("seal", 18.25), Want::Above, ("zswap", 21.5), "apps");
        assert_eq!(e.evidence, "seal 18.25 against zswap 21.50 apps");
        let bar = |x: f64, want| against_bar("c", ("cut", x), want, 1.0, "%");
        assert!(bar(1.5, Want::Above).holds && !bar(1.0, Want::Above).holds && !bar(f64::NAN, Want::Above).holds);
        assert!(bar(0.5, Want::Below).holds && bar(1.0, Want::AtLeast).holds);
        assert_eq!(bar(33.4, Want::Above).evidence, "cut 33.40 %");
        let more = also(bar(33.4, Want::Above), "with less background", "cut 8.61 %");
        assert_eq!((more.evidence.as_str(), more.holds), ("cut 33.40 %; with less background: cut 8.61 %", true));
        let range = |xs: &[f64]| within("c", &xs.iter().map(|&x| ("r", x)).collect::<Vec<_>>(), (2.0, 5.0), "x");
        assert!(range(&[2.0, 5.0]).holds && range(&[3.1]).holds && !range(&[2.5, 5.2]).holds && !range(&[1.9]).holds);
        assert!(!range(&[]).holds && !range(&[3.0, f64::NAN]).holds);
        assert_eq!(within("c", &[("b1", 2.26), ("b2", 19.5)], (2.0, 5.0), "x").evidence, "b1 2.26, b2 19.50 x");
        let tr = |t: f64| trend("c", "alerts", t, -1.0);
        assert!(tr(-1.0).holds && !tr(1.0).holds && !tr(0.0).holds && !tr(f64::NAN).holds);
        assert_eq!((tr(-1.0).evidence.as_str(), tr(0.0).evidence.as_str()), ("alerts falls", "alerts does not change"));
    }

    /// A finding in the paper's direction matches when floe's effect lies within 30 %
    /// of the paper's, both measured from the bar; outside it, or with no paper figure,
    /// it holds in direction only; against the paper's direction it is no; an effect
    /// it rests on that is none makes it vacuous. Verdicts decide `holds`.
    #[test]
    fn verdicts_weigh_floes_effect_against_the_papers() {
        use floe_core::Verdict::*;
        let cut = |x: f64| against_bar("c", ("cut", x), Want::Above, 1.0, "%");
        assert_eq!(cut(36.0).paper(36.6).verdict, Matches);
        assert_eq!(cut(26.5).paper(36.6).verdict, Matches, "(36.6 - 1) x 0.7 = 24.9 is the band's edge");
        assert_eq!(cut(20.0).paper(36.6).verdict, Direction);
        assert_eq!(cut(60.0).paper(36.6).verdict, Direction);
        assert_eq!(cut(20.0).verdict, Direction, "no paper figure: direction at best");
        assert_eq!(cut(0.5).paper(36.6).verdict, No);
        assert!(!cut(0.5).paper(36.6).holds && cut(20.0).paper(36.6).holds);
        let ratio = against_bar("r", ("ice / lru-cfs", 1.35), Want::Above, 1.01, "").paper(1.44);
        assert_eq!(ratio.verdict, Matches, "0.34 against 0.43 over the bar");
        let vs = |a: f64, b: f64| versus("v", ("a", a), Want::Above, ("b", b), "apps");
        assert_eq!(vs(16.0, 7.0).paper_vs(17.0, 7.0).verdict, Matches, "+129 % against +143 %");
        assert_eq!(vs(8.0, 7.0).paper_vs(17.0, 7.0).verdict, Direction);
        let share = against_bar("s", ("share", 0.0), Want::Below, 99.0, "%").paper(51.7);
        assert_eq!(share.verdict, Direction);
        let none = share.vacuous_if(true, "ucsg's own cut");
        assert_eq!((none.verdict, none.holds), (Vacuous, false));
        assert!(none.evidence.ends_with("(ucsg's own cut is none)"), "{}", none.evidence);
        assert_eq!(within("w", &[("B1", 3.0)], (2.0, 5.0), "x").verdict, Matches);
        assert_eq!(within("w", &[("B1", 1.8)], (2.0, 5.0), "x").verdict, No);
        assert_eq!(trend("t", "alerts", -1.0, -1.0).verdict, Direction);
    }

    /// The 95 % interval of a mean uses Student's t: 12.706 with two seeds, 2.776 with five.
    #[test]
    fn intervals_use_students_t() {
        assert_eq!(interval95(&[1.0]), None);
        let [lo, hi] = interval95(&[1.0, 3.0]).unwrap();
        assert!((lo - (2.0 - 12.706)).abs() < 1e-9 && (hi - (2.0 + 12.706)).abs() < 1e-9);
        let xs = [10.0, 12.0, 11.0, 9.0, 13.0];
        let [lo, hi] = interval95(&xs).unwrap();
        let half = 2.776 * stddev(&xs) / 5f64.sqrt();
        assert!((lo - (11.0 - half)).abs() < 1e-9 && (hi - (11.0 + half)).abs() < 1e-9);
    }

    /// The findings come first, counted, each with its verdict and floe's figures, then
    /// the tables; a figure is found by its table's title and its label.
    #[test]
    fn findings_are_printed_before_the_tables_with_a_count() {
        let table = Table {
            title: "Fig. 13: caching".into(),
            unit: "apps".into(),
            rows: vec![
                Comparison { label: "seal".into(), paper: Some(17.0), ours: 18.0 },
                Comparison { label: "zswap".into(), paper: Some(15.0), ours: 21.0 },
            ],
        };
        let v = |label| value(std::slice::from_ref(&table), "Fig. 13", label);
        let findings = vec![
            versus("SEAL caches at least as many apps as ZSWAP", ("seal", v("seal")), Want::AtLeast, ("zswap", v("zswap")), "apps"),
            against_bar("SEAL caches apps", ("seal", v("seal")), Want::Above, 0.0, "apps"),
        ];
        let r =
            Report { experiment: "x".into(), runs: vec![], tables: vec![table], findings, notes: vec!["n".into()], seeds: 1, sd: vec![] };
        let t = r.text();
        let at = |s: &str| t.find(s).unwrap_or_else(|| panic!("no `{s}` in {t}"));
        assert!(
            at("findings in floe's runs: 0 match, 1 direction, 1 no, 0 vacuous: 1 of 2 hold") < at("Fig. 13")
                && at("Fig. 13") < at("note: n"),
            "{t}"
        );
        assert!(t.contains("indicative with one seed"), "{t}");
        assert!(t.contains("  no         SEAL caches at least as many apps as ZSWAP — floe: seal 18.00 against zswap 21.00 apps"), "{t}");
        assert!(t.contains("  direction  SEAL caches apps — floe: seal 18.00 apps"), "{t}");
    }

    /// No line of a report is wider than 120 characters: long findings, notes, titles
    /// and labels are broken at spaces and indented, and no word is lost.
    #[test]
    fn report_lines_stay_within_120_characters() {
        let long = |what: &str| format!("{what} {}", "word ".repeat(60).trim_end());
        let table = Table {
            title: long("Fig. 99: a title"),
            unit: "apps".into(),
            rows: vec![
                Comparison { label: long("a label"), paper: Some(17.0), ours: 18.0 },
                Comparison { label: "short".into(), paper: None, ours: 1.0 },
            ],
        };
        let findings = vec![against_bar(long("A claim"), ("cut", 12.0), Want::Above, 1.0, "%").paper(13.2)];
        let r = Report {
            experiment: "x".into(),
            runs: vec![],
            tables: vec![table],
            findings,
            notes: vec![long("A note")],
            seeds: 3,
            sd: vec![vec![1.0, 2.0]],
        };
        let t = r.text();
        assert!(t.lines().all(|l| l.chars().count() <= WIDTH), "{t}");
        let words = |x: &str| x.split_whitespace().filter(|w| *w == "word").count();
        assert_eq!(words(&t), 4 * 60, "every word of the claim, note, title and label is kept");
        assert!(t.lines().any(|l| l.starts_with("  matches    A claim word")), "{t}");
        assert!(t.lines().any(|l| l.starts_with("note: A note word")) && t.lines().any(|l| l.starts_with("      word")), "{t}");
        assert!(t.lines().any(|l| l.trim_start().starts_with("short") && l.contains("1.00") && l.trim_end().ends_with("2.00")), "{t}");
    }

    /// Replicates combine into one report: each figure the mean of the replicates that
    /// have it (n/a left out) beside its standard deviation, rows matched by label (a
    /// row only some have is kept), findings judged again on the means and counted per
    /// replicate, all runs kept; the text shows the spread and the seeds. One report
    /// comes back unchanged.
    #[test]
    fn replicates_combine_into_means_with_their_spread_and_counted_findings() {
        let rep = |seed: u64, seal: f64, zswap: f64, extra: Option<f64>| {
            let mut rows = vec![
                Comparison { label: "seal".into(), paper: Some(17.0), ours: seal },
                Comparison { label: "zswap".into(), paper: Some(15.0), ours: zswap },
            ];
            if let Some(x) = extra {
                rows.push(Comparison { label: "llr".into(), paper: None, ours: x });
            }
            let tables = vec![Table { title: "Fig. 13: caching".into(), unit: "apps".into(), rows }];
            let findings = judge(&tables, &[]);
            assert_eq!(findings[0].floe, Some(100.0 * (seal - zswap) / zswap), "the effect is relative to zswap's");
            let runs = vec![RunRecord::new("seal", "hikey970", "seal-30apps", seed)];
            Report { experiment: "seal".into(), runs, tables, findings, notes: vec!["seed 1".into()], seeds: 1, sd: vec![] }
        };
        fn judge(t: &[Table], _: &[RunRecord]) -> Vec<Finding> {
            let v = |l| value(t, "Fig. 13", l);
            vec![versus("SEAL caches more than ZSWAP", ("seal", v("seal")), Want::Above, ("zswap", v("zswap")), "apps")]
        }
        let one = rep(1, 18.0, 21.0, None);
        assert_eq!(replicate(vec![one.clone()], judge), one);

        let all =
            replicate(vec![rep(1, 22.0, 21.0, None), rep(1001, 18.0, 21.0, Some(f64::NAN)), rep(2001, 20.0, 21.0, Some(30.0))], judge);
        assert_eq!(all.seeds, 3);
        assert_eq!(all.runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [1, 1001, 2001]);
        let t = &all.tables[0];
        assert_eq!((t.row("seal").ours, t.row("seal").paper, t.row("zswap").ours, t.row("llr").ours), (20.0, Some(17.0), 21.0, 30.0));
        assert_eq!(all.sd[0][0], 2.0, "sample standard deviation of 22, 18, 20");
        assert_eq!(all.sd[0][1], 0.0);
        assert!(all.sd[0][2].is_nan(), "one figure has no spread");
        let f = &all.findings[0];
        assert!(!f.holds, "the mean, 20 against 21, decides");
        assert_eq!((f.seeds_held, f.seeds), (Some(1), Some(3)));
        assert_eq!(f.evidence, "seal 20.00 against zswap 21.00 apps; holds in 1 of 3 seeds");
        // The seeds' effects, +4.76, -14.29 and -4.76 %, spread so far that their
        // interval takes in no effect: vacuous, a no.
        let [lo, hi] = f.interval.expect("three seeds give an interval");
        assert!(lo < 0.0 && hi > 0.0 && (hi + lo) / 2.0 - (4.76 - 14.29 - 4.76) / 3.0 < 0.01, "{lo} {hi}");
        assert_eq!(f.verdict, floe_core::Verdict::Vacuous);
        let text = all.text();
        assert!(text.starts_with("experiment seal — 3 runs, 3 seeds"), "{text}");
        assert!(text.lines().any(|l| l.trim_start().starts_with("seal") && l.trim_end().ends_with("2.00")), "{text}");
        assert!(
            text.contains("findings in floe's runs (on the 3 seeds' mean figures): 0 match, 0 direction, 0 no, 1 vacuous: 0 of 1 hold"),
            "{text}"
        );
        assert!(text.contains("  vacuous    SEAL caches more than ZSWAP") && text.contains("(95 % "), "{text}");
        assert!(all.notes[0] == "seed 1" && all.notes[1].contains("plus 1000 r"), "{:?}", all.notes);
    }

    /// Several experiments end with each one's count of findings that hold, and the total.
    #[test]
    fn the_summary_counts_each_papers_findings_and_all() {
        let rep = |name: &str, verdicts: &[bool]| Report {
            experiment: name.into(),
            runs: vec![],
            tables: vec![],
            findings: verdicts.iter().map(|&h| Finding::new("c (p)", h, "e")).collect(),
            notes: vec![],
            seeds: 1,
            sd: vec![],
        };
        let s = summary(&[rep("ice", &[true, false, false]), rep("smartlmk", &[true, true])]);
        assert_eq!(
            s,
            "The papers' findings in floe's runs:\n  ice        0 match, 1 direction, 2 no, 0 vacuous: 1 of 3 hold\n  smartlmk   0 match, 2 direction, 0 no, 0 vacuous: 2 of 2 hold\n  in all     0 match, 3 direction, 2 no, 0 vacuous: 3 of 5 hold\n"
        );
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
