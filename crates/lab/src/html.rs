//! The results as one static HTML page (`--report DIR`): every finding's figure, the
//! paper's beside floe's, with floe's 95 % interval and the verdict; one run's timeline
//! per experiment (free memory, reclaim, refaults, frame rate, kills and freezes); the
//! tables; the calibration. Self-contained: no script, no external style sheet, font or
//! image; the charts are inline SVG drawn with plotters. All text is HTML-escaped.

use crate::calibration::{self, Calibrated};
use crate::report::{counts, fmt, mean, stddev, Report, Table};
use crate::{RunSpec, SimError};
use floe_core::{Finding, RunRecord, Sample, Verdict};
use plotters::prelude::*;
use rayon::prelude::*;
use std::fmt::Write as _;

/// The page's file name in the report's directory.
pub const INDEX: &str = "index.html";

/// `s` with HTML's special characters escaped, safe in text and in quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Runs side by side as they went: each policy's samples (the same device, workload and
/// seed), and what the runs were.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// What the runs were (device, workload, seed, overrides), shown above the chart.
    pub caption: String,
    /// Each run's policy and its samples, in the order drawn.
    pub runs: Vec<(String, Vec<Sample>)>,
    /// The samples' step, simulated seconds.
    pub step_s: f64,
}

/// The policies of an experiment's representative runs: its paper's baseline and its
/// scheme (the pair `floe sim` runs on the paper's workloads). None for `calibration`.
pub fn showcase_policies(experiment: &str) -> Option<[&'static str; 2]> {
    match experiment {
        "ice" => Some(["lru-cfs", "ice"]),
        "seal" => Some(["zswap", "seal"]),
        "smartlmk" => Some(["android-lmk", "smartlmk"]),
        "selective" => Some(["android-lmk", "selective-kill-first"]),
        "asap" => Some(["demand-paging", "asap"]),
        _ => None,
    }
}

/// An experiment's representative runs, from its own run list (`quick` as it runs):
/// the first run of its paper's baseline, and the same run under its scheme. Empty for
/// an experiment without a pair (`calibration`).
pub fn showcase(experiment: &str, quick: bool) -> Result<Vec<RunSpec>, SimError> {
    let Some([base, scheme]) = showcase_policies(experiment) else { return Ok(Vec::new()) };
    let specs = match experiment {
        "ice" => crate::ice::specs(quick),
        "seal" => crate::seal::specs(quick),
        "smartlmk" => crate::smartlmk::specs(quick),
        "selective" => crate::selective::specs(quick),
        "asap" => crate::asap::specs(quick)?,
        _ => Vec::new(),
    };
    let Some(first) = specs.into_iter().find(|s| s.policy == base) else { return Ok(Vec::new()) };
    let first = RunSpec { slice_s: None, ..first };
    Ok(vec![first.clone(), RunSpec { policy: scheme.into(), ..first }])
}

/// A timeline's step, simulated seconds: `floe sim --timeline`'s default.
pub const STEP_S: f64 = 1.0;

/// Runs `specs` (side by side, in parallel) with their timelines at [`STEP_S`]; None
/// when there are none.
pub fn run_timeline(specs: &[RunSpec]) -> Result<Option<Timeline>, SimError> {
    let Some(first) = specs.first() else { return Ok(None) };
    let runs = specs.par_iter().map(|s| crate::run_sampled(s, STEP_S).map(|(_, x)| (s.policy.clone(), x))).collect::<Result<_, _>>()?;
    Ok(Some(Timeline { caption: describe(first), runs, step_s: STEP_S }))
}

/// A spec in words: device, workload, seed and what it overrides.
fn describe(s: &RunSpec) -> String {
    let mut d = format!("device {}, workload {}, seed {}", s.device, s.workload, s.seed);
    let mut add = |k: &str, v: String| write!(d, ", {k} {v}").unwrap();
    if let Some(n) = s.bg_apps {
        add("background apps", n.to_string() + if s.draw_bg { " (drawn)" } else { "" });
    }
    if let Some(u) = s.use_s {
        add("use", format!("{u} s per launch"));
    }
    if let Some(b) = s.balloon_mib {
        add("balloon", format!("{b:.0} MiB"));
    }
    if let Some(r) = s.rounds {
        add("rounds", r.to_string());
    }
    if let Some(n) = s.launches {
        add("launches", n.to_string());
    }
    if let Some(w) = s.bg_window_s {
        add("background window", format!("{w} s"));
    }
    if s.no_idle_growth {
        add("idle apps", "keep their launch's pages".into());
    }
    d
}

/// The page of `reports` (`experiments_page`), each experiment's representative runs
/// ([`showcase`], `quick` as the experiments ran) run again for their timelines.
pub fn experiments_report(reports: &[Report], quick: bool) -> Result<String, SimError> {
    let mut sections = Vec::new();
    for report in reports {
        sections.push(Section { report, timeline: run_timeline(&showcase(&report.experiment, quick)?)? });
    }
    Ok(experiments_page(&sections, quick))
}

/// One experiment on the page: its report and its representative runs' timeline.
pub struct Section<'a> {
    pub report: &'a Report,
    pub timeline: Option<Timeline>,
}

/// The page of one or more experiments: the verdicts counted, then each experiment's
/// findings (a chart each where the finding has a figure), its timeline, its tables and
/// notes, then the values in data/ calibrated on the papers' controls. `quick` marks
/// the verdicts indicative.
pub fn experiments_page(sections: &[Section], quick: bool) -> String {
    let names: Vec<&str> = sections.iter().map(|s| s.report.experiment.as_str()).collect();
    let mut b = String::new();
    head(&mut b, &format!("floe experiment {}", names.join(", ")));
    let seeds = sections.iter().map(|s| s.report.seeds).max().unwrap_or(1);
    let how = if quick || seeds <= 1 {
        "one seed (--quick or --seeds 1): the verdicts are indicative, without intervals".to_string()
    } else {
        format!("{seeds} seeds: each figure their mean, floe's effect with its 95 % interval")
    };
    writeln!(b, "<p class=\"meta\">floe {} · {}</p>", esc(env!("CARGO_PKG_VERSION")), esc(&how)).unwrap();
    b.push_str("<nav><ul>");
    for n in &names {
        write!(b, "<li><a href=\"#exp-{0}\">{0}</a></li>", esc(n)).unwrap();
    }
    b.push_str("<li><a href=\"#calibrated\">calibrated values</a></li></ul></nav>\n");
    b.push_str("<h2>Verdicts</h2>\n");
    legend(&mut b);
    b.push_str("<table class=\"counts\"><thead><tr><th>experiment</th><th>matches</th><th>direction</th><th>no</th><th>vacuous</th><th>held</th></tr></thead><tbody>\n");
    // The papers' findings in all; the calibration's controls are not findings of a paper.
    let papers: Vec<&Section> = sections.iter().filter(|s| s.report.experiment != calibration::NAME).collect();
    let all: Vec<Finding> = papers.iter().flat_map(|s| s.report.findings.iter().cloned()).collect();
    let mut rows: Vec<(&str, &[Finding])> = sections.iter().map(|s| (s.report.experiment.as_str(), s.report.findings.as_slice())).collect();
    if papers.len() > 1 {
        rows.push(("the papers in all", &all));
    }
    for (name, fs) in rows {
        let n = |v: Verdict| fs.iter().filter(|f| f.verdict == v).count();
        let held = fs.iter().filter(|f| f.holds).count();
        writeln!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{held} of {}</td></tr>",
            esc(name),
            n(Verdict::Matches),
            n(Verdict::Direction),
            n(Verdict::No),
            n(Verdict::Vacuous),
            fs.len()
        )
        .unwrap();
    }
    b.push_str("</tbody></table>\n");
    for s in sections {
        experiment_section(&mut b, s);
    }
    calibrated_section(&mut b, &calibration::calibrated());
    tail(&mut b);
    b
}

/// The page of `floe sim`: the runs' metrics side by side (each policy's mean over its
/// seeds, with the standard deviation when there are several) and their timeline.
pub fn runs_page(caption: &str, runs: &[RunRecord], timeline: Option<&Timeline>) -> String {
    let mut b = String::new();
    let mut policies: Vec<&str> = Vec::new();
    for r in runs {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    head(&mut b, &format!("floe sim: {}", policies.join(", ")));
    writeln!(b, "<p class=\"meta\">floe {} · {}</p>", esc(env!("CARGO_PKG_VERSION")), esc(caption)).unwrap();
    if let Some(t) = timeline {
        b.push_str("<h2>The runs as they went</h2>\n");
        timeline_figure(&mut b, t);
    }
    b.push_str("<h2>Metrics</h2>\n");
    let of = |p: &str| runs.iter().filter(|r| r.policy == p).collect::<Vec<_>>();
    let seeds = policies.iter().map(|p| of(p).len()).max().unwrap_or(0);
    if seeds > 1 {
        writeln!(b, "<p>Each policy's mean over {seeds} seeds, ± the standard deviation across them.</p>").unwrap();
    }
    b.push_str("<table class=\"metrics\"><thead><tr><th>metric</th>");
    for p in &policies {
        write!(b, "<th>{}</th>", esc(p)).unwrap();
    }
    b.push_str("</tr></thead><tbody>\n");
    let values: Vec<Vec<serde_json::Map<String, serde_json::Value>>> = policies
        .iter()
        .map(|p| {
            of(p)
                .iter()
                .map(|r| match serde_json::to_value(&r.metrics) {
                    Ok(serde_json::Value::Object(m)) => m,
                    _ => serde_json::Map::new(),
                })
                .collect()
        })
        .collect();
    let mut keys: Vec<&str> = Vec::new();
    for m in values.iter().flatten() {
        for k in m.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    for k in keys {
        write!(b, "<tr><td>{}</td>", esc(k)).unwrap();
        for per_policy in &values {
            let xs: Vec<f64> = per_policy.iter().filter_map(|m| m.get(k).and_then(serde_json::Value::as_f64)).collect();
            let cell = match xs.len() {
                0 => "-".to_string(),
                1 => fmt(xs[0]),
                _ => format!("{} ±{}", fmt(mean(xs.iter().copied())), fmt(stddev(&xs))),
            };
            write!(b, "<td>{}</td>", esc(&cell)).unwrap();
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody></table>\n");
    tail(&mut b);
    b
}

/// Writes `html` to `DIR/index.html`, creating DIR; the path written.
pub fn write(dir: &std::path::Path, html: &str) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(INDEX);
    std::fs::write(&path, html)?;
    Ok(path)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1000px;padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}h3{margin-top:1.2em}\
.meta{color:#555}nav ul{list-style:none;padding:0;display:flex;gap:1em;flex-wrap:wrap}\
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}\
td:first-child,th:first-child{text-align:left}thead th{background:#f2f2f2}\
figure{margin:.8em 0;padding:.5em;border:1px solid #e3e3e3;border-radius:4px}figcaption{margin-bottom:.3em}\
.findings{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:.6em}.findings figure{margin:0}\
.v{display:inline-block;min-width:5.5em;text-align:center;border-radius:3px;padding:0 .3em;margin-right:.4em;color:#fff;font-weight:600}\
.v-matches{background:#2e7d32}.v-direction{background:#1565c0}.v-no{background:#c62828}.v-vacuous{background:#757575}\
.ev{color:#555;font-size:.85em}.sw{display:inline-block;width:1.6em;height:.6em;margin:0 .3em 0 1em;vertical-align:middle}\
svg{max-width:100%;height:auto;display:block}details{margin:.6em 0}summary{cursor:pointer;font-weight:600}";

fn head(b: &mut String, title: &str) {
    write!(
        b,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{0}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
        esc(title)
    )
    .unwrap();
}

fn tail(b: &mut String) {
    b.push_str("</body>\n</html>\n");
}

fn legend(b: &mut String) {
    b.push_str(
        "<p class=\"ev\"><span class=\"v v-matches\">matches</span>the paper's direction, floe's effect within ±30 % of the paper's \
         <span class=\"v v-direction\">direction</span>the paper's direction, outside that band \
         <span class=\"v v-no\">no</span>not the paper's direction \
         <span class=\"v v-vacuous\">vacuous</span>floe's effect within the noise of its seeds (counts as no)</p>\n",
    );
}

fn experiment_section(b: &mut String, s: &Section) {
    let r = s.report;
    writeln!(b, "<section id=\"exp-{0}\">\n<h2>experiment {0}</h2>", esc(&r.experiment)).unwrap();
    let desc = crate::EXPERIMENTS.iter().find(|e| e.0 == r.experiment).map_or("", |e| e.1);
    writeln!(b, "<p>{}</p>", esc(desc)).unwrap();
    writeln!(b, "<p class=\"meta\">{} runs · {}</p>", r.runs.len(), esc(&counts(&r.findings))).unwrap();
    if !r.findings.is_empty() {
        b.push_str("<h3>Findings</h3>\n<p class=\"ev\">Each chart: the paper's effect (grey) and floe's (coloured by the verdict), drawn from the value that means no effect (the dashed line), with floe's 95 % interval over the seeds where there is one.</p>\n<div class=\"findings\">\n");
        for f in &r.findings {
            finding_figure(b, f);
        }
        b.push_str("</div>\n");
    }
    if let Some(t) = &s.timeline {
        b.push_str("<h3>One run as it went</h3>\n");
        timeline_figure(b, t);
    }
    if !r.tables.is_empty() {
        b.push_str("<details><summary>Tables</summary>\n");
        for (i, t) in r.tables.iter().enumerate() {
            table(b, t, r.sd.get(i));
        }
        b.push_str("</details>\n");
    }
    if !r.notes.is_empty() {
        b.push_str("<details><summary>Notes</summary>\n<ul>\n");
        for n in &r.notes {
            writeln!(b, "<li>{}</li>", esc(n)).unwrap();
        }
        b.push_str("</ul>\n</details>\n");
    }
    b.push_str("</section>\n");
}

fn table(b: &mut String, t: &Table, sd: Option<&Vec<f64>>) {
    writeln!(b, "<table><caption>{} [{}]</caption>", esc(&t.title), esc(&t.unit)).unwrap();
    b.push_str("<thead><tr><th></th><th>paper</th><th>floe</th><th>diff</th>");
    if sd.is_some() {
        b.push_str("<th>sd</th>");
    }
    b.push_str("</tr></thead><tbody>\n");
    for (j, row) in t.rows.iter().enumerate() {
        let (p, d) = match row.paper {
            Some(p) => (fmt(p), fmt(row.ours - p)),
            None => ("-".into(), "-".into()),
        };
        write!(b, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", esc(&row.label), esc(&p), esc(&fmt(row.ours)), esc(&d)).unwrap();
        if let Some(v) = sd {
            write!(b, "<td>{}</td>", esc(&fmt(v.get(j).copied().unwrap_or(f64::NAN)))).unwrap();
        }
        b.push_str("</tr>\n");
    }
    b.push_str("</tbody></table>\n");
}

fn calibrated_section(b: &mut String, cal: &[Calibrated]) {
    b.push_str("<section id=\"calibrated\">\n<h2>Values calibrated on the papers' controls</h2>\n");
    b.push_str("<p>Every value in data/ fitted to a paper's control figure (a <code># calibrated:</code> marker), and the control it was fitted on; <code>floe experiment calibration</code> re-runs the controls against the papers' figures.</p>\n");
    b.push_str(
        "<table class=\"calibrated\"><thead><tr><th>file</th><th>key</th><th>value</th><th>control</th><th>how</th></tr></thead><tbody>\n",
    );
    for c in cal {
        let unknown = if c.known() { "" } else { " (not a known control)" };
        writeln!(
            b,
            "<tr><td>{}:{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td></tr>",
            esc(&c.file),
            c.line,
            esc(&c.key),
            esc(&c.value),
            esc(&c.control),
            unknown,
            esc(&c.how)
        )
        .unwrap();
    }
    b.push_str("</tbody></table>\n</section>\n");
}

/// The figures of a finding that can be drawn: the paper's and floe's where finite.
fn drawable(f: &Finding) -> (Option<f64>, Option<f64>) {
    (f.paper.filter(|x| x.is_finite()), f.floe.filter(|x| x.is_finite()))
}

/// Whether a finding gets a chart: it has a figure, the paper's or floe's.
pub fn charted(f: &Finding) -> bool {
    let (p, x) = drawable(f);
    p.is_some() || x.is_some()
}

fn finding_figure(b: &mut String, f: &Finding) {
    let word = f.verdict.word();
    writeln!(
        b,
        "<figure class=\"finding\" data-verdict=\"{0}\"><figcaption><span class=\"v v-{0}\">{0}</span>{1}</figcaption>",
        esc(word),
        esc(&f.claim)
    )
    .unwrap();
    if charted(f) {
        b.push_str(&finding_svg(f));
        b.push('\n');
    }
    let (p, x) = drawable(f);
    let mut nums = Vec::new();
    if let Some(p) = p {
        nums.push(format!("paper {}", fmt(p)));
    }
    if let Some(x) = x {
        nums.push(format!("floe {}", fmt(x)));
    }
    if let Some([lo, hi]) = f.interval {
        nums.push(format!("95 % {} to {}", fmt(lo), fmt(hi)));
    }
    if let (Some(held), Some(n)) = (f.seeds_held, f.seeds) {
        nums.push(format!("held in {held} of {n} seeds"));
    }
    let nums = if nums.is_empty() { String::new() } else { format!(" [{}]", nums.join(", ")) };
    writeln!(b, "<div class=\"ev\">floe: {}{}</div></figure>", esc(&f.evidence), esc(&nums)).unwrap();
}

/// An axis label: at most two decimals, no trailing zeros.
fn tick(v: f64) -> String {
    let s = if v.abs() >= 100.0 { format!("{v:.0}") } else { format!("{v:.2}") };
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn verdict_colour(v: Verdict) -> RGBColor {
    match v {
        Verdict::Matches => RGBColor(0x2e, 0x7d, 0x32),
        Verdict::Direction => RGBColor(0x15, 0x65, 0xc0),
        Verdict::No => RGBColor(0xc6, 0x28, 0x28),
        Verdict::Vacuous => RGBColor(0x75, 0x75, 0x75),
    }
}

/// `svg` (one `<svg ...>` element as plotters writes it) with a class and an accessible
/// name on its root element.
fn tag(svg: &str, class: &str, label: &str) -> String {
    svg.replacen("<svg ", &format!("<svg class=\"{}\" role=\"img\" aria-label=\"{}\" ", esc(class), esc(label)), 1)
}

/// A finding's chart: horizontal bars from its origin to the paper's figure and to
/// floe's, floe's 95 % interval as an error bar.
fn finding_svg(f: &Finding) -> String {
    let (p, x) = drawable(f);
    let o = f.origin.filter(|o| o.is_finite()).unwrap_or(0.0);
    let interval = f.interval.filter(|[lo, hi]| lo.is_finite() && hi.is_finite());
    let mut all = vec![o];
    all.extend(p);
    all.extend(x);
    if let Some([lo, hi]) = interval {
        all.extend([lo, hi]);
    }
    let (lo, hi) = all.iter().fold((f64::INFINITY, -f64::INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let pad = if hi > lo { (hi - lo) * 0.1 } else { 1.0f64.max(hi.abs() * 0.1) };
    let (lo, hi) = (lo - pad, hi + pad);
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (440, 104)).into_drawing_area();
        let _ = draw_finding(&root, f, (p, x, o, interval), (lo, hi));
        let _ = root.present();
    }
    tag(&s, "finding-chart", &format!("{}: {}", f.verdict.word(), f.claim))
}

type Figures = (Option<f64>, Option<f64>, f64, Option<[f64; 2]>);

fn draw_finding(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    f: &Finding,
    (p, x, o, interval): Figures,
    (lo, hi): (f64, f64),
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(root).margin(6).margin_left(50).x_label_area_size(22).build_cartesian_2d(lo..hi, 0f64..2f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(6)
        .x_label_formatter(&|v| tick(*v))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .label_style(("sans-serif", 11))
        .draw()?;
    let grey = RGBColor(0x9e, 0x9e, 0x9e);
    let label = ("sans-serif", 12).into_font();
    if let Some(p) = p {
        chart.draw_series(std::iter::once(Rectangle::new([(o, 1.2), (p, 1.8)], grey.filled())))?;
    }
    let colour = verdict_colour(f.verdict);
    if let Some(x) = x {
        chart.draw_series(std::iter::once(Rectangle::new([(o, 0.2), (x, 0.8)], colour.filled())))?;
    }
    if let Some([a, b]) = interval {
        let line = BLACK.stroke_width(2);
        chart.draw_series([
            PathElement::new(vec![(a, 0.5), (b, 0.5)], line),
            PathElement::new(vec![(a, 0.32), (a, 0.68)], line),
            PathElement::new(vec![(b, 0.32), (b, 0.68)], line),
        ])?;
    }
    // The origin: dashes along it.
    let dashes = (0..10).map(|i| {
        let y = f64::from(i) * 0.2;
        PathElement::new(vec![(o, y), (o, y + 0.12)], BLACK.stroke_width(1))
    });
    chart.draw_series(dashes)?;
    for (y, name) in [(1.5, "paper"), (0.5, "floe")] {
        let (_, py) = chart.backend_coord(&(lo, y));
        root.draw(&Text::new(name, (6, py - 7), label.clone()))?;
    }
    Ok(())
}

/// Colours of the policies in a timeline, in order.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The most points a timeline's line has: longer runs are summed over buckets of steps.
pub const MAX_POINTS: usize = 600;

/// A timeline's series for the chart, at most [`MAX_POINTS`] points: gauges at the end
/// of each bucket, counts as rates per second over it, kills and freezes cumulative.
#[derive(Debug, Default, PartialEq)]
struct Series {
    t: Vec<f64>,
    free: Vec<f64>,
    zram: Vec<f64>,
    kswapd: Vec<f64>,
    direct: Vec<f64>,
    refaults_fg: Vec<f64>,
    refaults_bg: Vec<f64>,
    fps: Vec<f64>,
    kills: Vec<f64>,
    freezes: Vec<f64>,
    /// When the workload's measured part began.
    measured_from: Option<f64>,
}

fn series(samples: &[Sample]) -> Series {
    let per = samples.len().div_ceil(MAX_POINTS).max(1);
    let mut out = Series { measured_from: samples.iter().find(|s| s.measured == Some(true)).map(|s| s.t_s), ..Default::default() };
    let (mut kills, mut freezes, mut t0) = (0.0, 0.0, 0.0);
    for bucket in samples.chunks(per) {
        let last = bucket.last().expect("chunks are not empty");
        let secs = (last.t_s - t0).max(1e-9);
        t0 = last.t_s;
        let sum = |f: &dyn Fn(&Sample) -> u64| bucket.iter().map(f).sum::<u64>() as f64;
        let reclaimed = sum(&|s| s.reclaimed_pages);
        let direct = sum(&|s| s.direct_reclaimed_pages);
        out.t.push(last.t_s);
        out.free.push(last.free_mib);
        out.zram.push(last.zram_stored_mib);
        out.kswapd.push((reclaimed - direct).max(0.0) / secs);
        out.direct.push(direct / secs);
        out.refaults_fg.push(sum(&|s| s.refaults_fg_anon + s.refaults_fg_file) / secs);
        out.refaults_bg.push(sum(&|s| s.refaults_bg_anon + s.refaults_bg_file) / secs);
        out.fps.push(sum(&|s| s.frames.unwrap_or(0)) / secs);
        kills += sum(&|s| s.kills);
        freezes += sum(&|s| s.freezes);
        out.kills.push(kills);
        out.freezes.push(freezes);
    }
    out
}

/// A panel: its title, and per run the series drawn solid and the one drawn light.
type Panel<'a> = (&'a str, fn(&Series) -> (&[f64], Option<&[f64]>));

const PANELS: [Panel; 5] = [
    ("free memory (solid) and zram stored (light), MiB", |s| (&s.free, Some(&s.zram))),
    ("pages reclaimed by kswapd (solid) and direct reclaim (light), per s", |s| (&s.kswapd, Some(&s.direct))),
    ("refaults of the foreground (solid) and background (light), per s", |s| (&s.refaults_fg, Some(&s.refaults_bg))),
    ("frames per second", |s| (&s.fps, None)),
    ("kills (solid) and freezes (light) so far", |s| (&s.kills, Some(&s.freezes))),
];

/// How many panels a timeline chart stacks.
pub const TIMELINE_PANELS: usize = PANELS.len();

fn timeline_figure(b: &mut String, t: &Timeline) {
    b.push_str("<figure class=\"timeline\"><figcaption>");
    write!(b, "{} · a sample every {} s of simulated time, every series summed over equal buckets beyond {MAX_POINTS} points; the grey line marks where the measured part begins.", esc(&t.caption), t.step_s).unwrap();
    b.push_str("<br>");
    for (i, (policy, _)) in t.runs.iter().enumerate() {
        let RGBColor(r, g, bl) = colour(i);
        write!(b, "<span class=\"sw\" style=\"background:#{r:02x}{g:02x}{bl:02x}\"></span>{}", esc(policy)).unwrap();
    }
    b.push_str("</figcaption>\n");
    b.push_str(&timeline_svg(t));
    b.push_str("\n</figure>\n");
}

fn timeline_svg(t: &Timeline) -> String {
    let all: Vec<Series> = t.runs.iter().map(|(_, x)| series(x)).collect();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (960, 170 * PANELS.len() as u32)).into_drawing_area();
        let _ = draw_timeline(&root, &all);
        let _ = root.present();
    }
    let names: Vec<&str> = t.runs.iter().map(|r| r.0.as_str()).collect();
    tag(&s, "timeline-chart", &format!("timeline: {}", names.join(", ")))
}

fn draw_timeline(root: &DrawingArea<SVGBackend, plotters::coord::Shift>, all: &[Series]) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let t_end = all.iter().filter_map(|s| s.t.last().copied()).fold(0.0, f64::max).max(1.0);
    for (area, (title, pick)) in root.split_evenly((PANELS.len(), 1)).iter().zip(PANELS) {
        let top = all
            .iter()
            .flat_map(|s| {
                let (a, b) = pick(s);
                a.iter().chain(b.unwrap_or(&[]))
            })
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.08 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 13))
            .margin(4)
            .margin_right(16)
            .x_label_area_size(20)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..t_end, 0f64..top)?;
        chart
            .configure_mesh()
            .x_labels(10)
            .y_labels(4)
            .x_label_formatter(&|v| format!("{v:.0} s"))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
            .label_style(("sans-serif", 11))
            .draw()?;
        if let Some(m) = all.iter().find_map(|s| s.measured_from) {
            chart.draw_series(std::iter::once(PathElement::new(vec![(m, 0.0), (m, top)], RGBColor(0xaa, 0xaa, 0xaa).stroke_width(1))))?;
        }
        for (i, s) in all.iter().enumerate() {
            let c = colour(i);
            let (solid, light) = pick(s);
            if let Some(light) = light {
                chart.draw_series(LineSeries::new(s.t.iter().copied().zip(light.iter().copied()), c.mix(0.4).stroke_width(1)))?;
            }
            chart.draw_series(LineSeries::new(s.t.iter().copied().zip(solid.iter().copied()), c.stroke_width(2)))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::Finding;

    /// Axis labels drop what adds nothing.
    #[test]
    fn ticks_are_short() {
        let got: Vec<String> = [0.0, -0.0001, 2.5, 10.0, 0.25, 1234.6, -20.0].map(tick).into();
        assert_eq!(got, ["0", "0", "2.5", "10", "0.25", "1235", "-20"]);
    }

    /// Every special character is escaped, in text and attributes alike.
    #[test]
    fn escaping_covers_text_and_attributes() {
        assert_eq!(esc("<a href=\"x\">Tom & 'Jerry'</a>"), "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
        assert_eq!(esc("plain — ±30 %"), "plain — ±30 %");
    }

    fn sample(t: f64, measured: bool, reclaimed: u64, direct: u64, frames: u64, kills: u64) -> Sample {
        Sample {
            t_s: t,
            measured: Some(measured),
            free_mib: 100.0 + t,
            reclaimed_pages: reclaimed,
            direct_reclaimed_pages: direct,
            frames: Some(frames),
            kills,
            ..Default::default()
        }
    }

    /// Short runs keep every step; long ones are summed into buckets whose rates and
    /// cumulative counts keep the totals.
    #[test]
    fn series_keep_rates_and_totals_when_bucketed() {
        let short: Vec<Sample> = (1..=3).map(|i| sample(f64::from(i), i > 1, 10, 4, 60, u64::from(i == 3))).collect();
        let s = series(&short);
        assert_eq!(s.t, [1.0, 2.0, 3.0]);
        assert_eq!((s.kswapd[0], s.direct[0], s.fps[0]), (6.0, 4.0, 60.0));
        assert_eq!(s.kills, [0.0, 0.0, 1.0]);
        assert_eq!(s.measured_from, Some(2.0));
        let long: Vec<Sample> = (1..=(3 * MAX_POINTS as u32)).map(|i| sample(f64::from(i), true, 10, 4, 60, 1)).collect();
        let s = series(&long);
        assert_eq!(s.t.len(), MAX_POINTS);
        assert_eq!((s.t[0], s.kswapd[0], s.fps[0], s.free[0]), (3.0, 6.0, 60.0, 103.0));
        assert_eq!(*s.kills.last().unwrap(), 3.0 * MAX_POINTS as f64);
    }

    fn finding(claim: &str, verdict: Verdict, paper: Option<f64>, floe: Option<f64>) -> Finding {
        let mut f = Finding::new(claim, verdict.holds(), "a <b> & c");
        f.set_verdict(verdict);
        (f.paper, f.floe, f.origin, f.interval) = (paper, floe, Some(0.0), floe.map(|x| [x - 1.0, x + 1.0]));
        f
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report { experiment: "x<y".into(), runs: vec![], tables: vec![], findings, notes: vec!["n & m".into()], seeds: 5, sd: vec![] }
    }

    /// A page has one chart per finding with a figure and one per timeline, its text
    /// escaped, and nothing it would fetch.
    #[test]
    fn the_page_has_a_chart_per_finding_and_timeline_and_escapes_text() {
        let findings = vec![
            finding("cuts <refaults>", Verdict::Matches, Some(-20.0), Some(-18.0)),
            finding("raises fps", Verdict::No, Some(10.0), Some(-3.0)),
            finding("a trend", Verdict::Direction, None, None),
        ];
        let rep = report(findings);
        let samples: Vec<Sample> = (1..=5).map(|i| sample(f64::from(i), true, 10, 4, 60, 0)).collect();
        let tl = Timeline {
            caption: "device <p20>".into(),
            runs: vec![("lru-cfs".into(), samples.clone()), ("ice".into(), samples)],
            step_s: 1.0,
        };
        let page = experiments_page(&[Section { report: &rep, timeline: Some(tl) }], false);
        assert_eq!(page.matches("<svg ").count(), 3, "two findings with figures and one timeline");
        assert_eq!(page.matches("class=\"finding-chart\"").count(), 2);
        assert_eq!(page.matches("class=\"timeline-chart\"").count(), 1);
        assert_eq!(page.matches("<figure class=\"finding\"").count(), 3, "every finding, with a chart or not");
        assert!(page.contains("cuts &lt;refaults&gt;") && page.contains("a &lt;b&gt; &amp; c") && page.contains("device &lt;p20&gt;"));
        assert!(page.contains("experiment x&lt;y") && !page.contains("x<y") && !page.contains("<b>"));
        for remote in ["http://", "https://", "<script", "<link", "@import", "url("] {
            let hits: Vec<&str> = page.match_indices(remote).map(|(i, _)| &page[i.saturating_sub(40)..(i + 60).min(page.len())]).collect();
            // The SVG namespace is a name, not a fetch.
            assert!(hits.iter().all(|h| h.contains("xmlns")), "{remote}: {hits:?}");
        }
        assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    }

    /// With several papers, the verdicts are counted in all, the calibration's controls
    /// left out of that count.
    #[test]
    fn the_count_in_all_is_the_papers_findings() {
        let one = |name: &str, v: Verdict| Report { experiment: name.into(), ..report(vec![finding("f", v, Some(1.0), Some(1.0))]) };
        let (a, b, cal) = (one("a", Verdict::Matches), one("b", Verdict::No), one(calibration::NAME, Verdict::Matches));
        let sections: Vec<Section> = [&a, &b, &cal].into_iter().map(|report| Section { report, timeline: None }).collect();
        let page = experiments_page(&sections, true);
        assert!(page.contains("<tr><td>the papers in all</td><td>1</td><td>0</td><td>1</td><td>0</td><td>1 of 2</td></tr>"), "{page}");
        assert!(page.contains("<tr><td>calibration</td><td>1</td>"));
        assert!(page.contains("indicative"));
    }

    /// The metrics table has a column per policy and each policy's mean over its seeds
    /// with the deviation.
    #[test]
    fn the_runs_page_has_a_column_per_policy() {
        let run = |p: &str, seed: u64, fps: f64| {
            let mut r = RunRecord::new(p, "p20", "ice-video-call", seed);
            r.metrics.fps = fps;
            r
        };
        let runs = [run("lru-cfs", 1, 40.0), run("lru-cfs", 2, 42.0), run("ice", 1, 50.0), run("ice", 2, 50.0)];
        let page = runs_page("device p20", &runs, None);
        assert!(page.contains("<th>lru-cfs</th><th>ice</th>"));
        assert!(page.contains("<tr><td>fps</td><td>41.00 ±1.41</td><td>50.00 ±0.00</td></tr>"), "{page}");
        assert_eq!(page.matches("<svg").count(), 0);
    }

    /// Each experiment with a baseline and a scheme shows that pair on its own first
    /// run of the baseline; calibration shows none.
    #[test]
    fn showcases_are_the_baseline_and_the_scheme_on_the_same_run() {
        for name in crate::evaluations() {
            let s = showcase(name, true).unwrap();
            assert_eq!(s.len(), 2, "{name}");
            assert_eq!([s[0].policy.as_str(), s[1].policy.as_str()], showcase_policies(name).unwrap());
            assert_eq!(RunSpec { policy: s[0].policy.clone(), ..s[1].clone() }, s[0], "{name}");
        }
        assert!(showcase(calibration::NAME, true).unwrap().is_empty());
    }
}
