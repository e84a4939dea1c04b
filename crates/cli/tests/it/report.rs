//! `--report DIR`: the page as a browser shows it. Headless Chromium (Debian's
//! `chromium`; `.ci/run` installs it) loads a quick experiment's page; the test checks
//! that every figure is an SVG the browser laid out and drew, in a screenshot that is
//! not blank.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the binary, never beside the daemon's tests (`crate::shared`).
fn floe(args: &[&str]) -> std::process::Output {
    let _shared = crate::shared();
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).env("FLOE_CACHE_DIR", "").output().expect("run floe")
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("floe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether Debian's `chromium` runs here.
fn chromium_present() -> bool {
    Command::new("chromium").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Headless Chromium on `page` with `args` (a screenshot, or the DOM dumped to
/// standard output), with a profile of its own in `dir` (a browser still closing may
/// hold the last one's lock), until `done` says it did its job. Chromium's helper
/// processes carry a high oom_score_adj, and a memory killer elsewhere on the machine
/// (the daemon's tests, a benchmark) may take one, leaving an error or an empty page: a
/// browser that fails is tried again, up to three times, each failure printed.
fn chromium(dir: &Path, page: &Path, args: &[&str], done: &dyn Fn(&std::process::Output) -> bool) -> std::process::Output {
    // Never beside the daemon's tests: a browser's allocations stall the machine on
    // memory, and the daemon's lmkd tests read those stalls from /proc/pressure/memory.
    let _shared = crate::shared();
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let url = format!("file://{}", page.display());
    let mut failures = Vec::new();
    for _ in 0..3 {
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let profile = format!("--user-data-dir={}", dir.join(format!("profile-{n}")).display());
        let out = Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", &profile])
            .args(args)
            .arg(&url)
            .output()
            .expect("run chromium");
        if out.status.success() && done(&out) {
            return out;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let last: Vec<&str> = err.lines().rev().take(3).collect();
        println!("chromium {args:?} failed ({:?}), trying again: {last:?}", out.status);
        failures.push(format!("{:?}: {err}", out.status));
    }
    panic!("chromium {args:?} failed three times: {failures:#?}");
}

/// What the probe script finds in the laid-out page (see `PROBE`).
#[derive(Debug, serde::Deserialize)]
struct Probe {
    svgs: usize,
    findings: usize,
    timelines: usize,
    /// SVGs at least 100 px wide and 60 px high, with drawn shapes in them.
    drawn: usize,
    /// Text elements in the SVGs, and those the browser gave a width (a font drew them).
    texts: usize,
    measured_texts: usize,
}

/// Appended to a copy of the page (the page itself has no script): measures every SVG
/// as laid out and writes the counts into the DOM, where `--dump-dom` shows them.
const PROBE: &str = r#"<script>
const svgs = [...document.querySelectorAll('svg')];
const drawn = svgs.filter(s => { const r = s.getBoundingClientRect();
  return r.width >= 100 && r.height >= 60 && s.querySelectorAll('rect, polyline, path, line').length > 0; });
const texts = [...document.querySelectorAll('svg text')];
const out = document.createElement('pre');
out.id = 'probe';
out.textContent = JSON.stringify({ svgs: svgs.length, drawn: drawn.length,
  findings: document.querySelectorAll('svg.finding-chart').length,
  timelines: document.querySelectorAll('svg.timeline-chart').length,
  texts: texts.length, measured_texts: texts.filter(t => t.getComputedTextLength() > 0).length });
document.body.appendChild(out);
</script>"#;

/// `floe experiment smartlmk --quick --report DIR` writes a page that headless
/// Chromium renders: one SVG per finding with a figure (counted from the same run's
/// JSON) and one timeline, each laid out with its shapes and its text drawn; the
/// screenshot is not blank and shows the charts' colours. Skips, saying so, only where
/// chromium is not installed.
#[test]
fn the_experiment_report_renders_every_figure_in_chromium() {
    if !chromium_present() {
        eprintln!("SKIPPED the_experiment_report_renders_every_figure_in_chromium: `chromium` is not installed (apt-get install chromium)");
        return;
    }
    let dir = scratch("report");
    let report = dir.join("out");
    let out = floe(&["experiment", "smartlmk", "--quick", "--json", "--report", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = report.join("index.html");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("report written to {}", page.display())));
    // The findings that have a figure, from the JSON of the same run.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let charted = findings.iter().filter(|f| f["paper"].is_number() || f["floe"].is_number()).count();
    assert!(charted >= 4, "smartlmk's findings have figures: {findings:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script") && !html.contains("https://"), "a self-contained page");

    // The DOM as Chromium parsed it: every figure an SVG element.
    let whole = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).contains("</html>");
    let dom = String::from_utf8(chromium(&dir, &page, &["--dump-dom"], &whole).stdout).unwrap();
    assert_eq!(dom.matches("<svg").count(), charted + 1, "an SVG per finding with a figure, and the timeline");
    assert_eq!(dom.matches("<figure class=\"finding\"").count(), findings.len());

    // The same page with the probe: every SVG laid out, with shapes and measured text.
    let probed = dir.join("probe.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}\n</body>"))).unwrap();
    let dom = String::from_utf8(chromium(&dir, &probed, &["--dump-dom"], &whole).stdout).unwrap();
    let json = dom.split("<pre id=\"probe\">").nth(1).and_then(|s| s.split("</pre>").next()).expect("the probe ran");
    let probe: Probe = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!((probe.svgs, probe.findings, probe.timelines), (charted + 1, charted, 1), "{probe:?}");
    assert_eq!(probe.drawn, probe.svgs, "every SVG laid out with its shapes: {probe:?}");
    assert!(probe.texts >= 5 * probe.svgs && probe.measured_texts == probe.texts, "every label drawn: {probe:?}");

    // A screenshot of the top of the page: not blank, and with the charts' colours.
    let shot = dir.join("shot.png");
    let arg = format!("--screenshot={}", shot.display());
    let _ = std::fs::remove_file(&shot);
    chromium(&dir, &page, &[&arg, "--window-size=1100,2400"], &|_| std::fs::metadata(&shot).is_ok_and(|m| m.len() > 0));
    let (w, h, rgb) = decode_rgb(&shot);
    assert_eq!((w, h), (1100, 2400));
    let n = rgb.len() as f64;
    let luma: Vec<f64> = rgb.iter().map(|p| 0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])).collect();
    let mean = luma.iter().sum::<f64>() / n;
    let var = luma.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n;
    assert!(var > 200.0, "a nearly uniform screenshot: luminance variance {var:.1}");
    // Saturated pixels: the bars (the verdicts' colours) and the timeline's lines.
    let coloured = rgb.iter().filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 80).count();
    assert!(coloured as f64 > 0.005 * n, "{coloured} coloured pixels of {n}");
    let near = |c: [u8; 3]| rgb.iter().filter(|p| p.iter().zip(c).all(|(&a, b)| a.abs_diff(b) < 24)).count();
    assert!(near([0x15, 0x65, 0xc0]) + near([0x2e, 0x7d, 0x32]) > 1000, "the findings' bars");
    assert!(near([0x1f, 0x77, 0xb4]) > 200 && near([0xd6, 0x27, 0x28]) > 200, "both policies' lines in the timeline");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A PNG's width, height and pixels as RGB.
fn decode_rgb(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let mut dec = png::Decoder::new(std::fs::File::open(path).unwrap());
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("screenshot colour type {other:?}"),
    };
    let pixels = buf[..info.buffer_size()].chunks(step).map(|p| [p[0], p[1], p[2]]).collect();
    (info.width, info.height, pixels)
}

/// `floe sim --report DIR` writes the runs' page: the policies' timeline in one SVG and
/// a metrics table with a column per policy.
#[test]
fn the_sim_report_has_the_timeline_and_the_metrics() {
    let dir = scratch("sim-report");
    let out =
        floe(&["sim", "--workload", "selective-c", "--policy", "android-lmk,selective-kill-first", "--report", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 1);
    assert_eq!(html.matches("class=\"timeline-chart\"").count(), 1);
    assert!(html.contains("<th>android-lmk</th><th>selective-kill-first</th>"));
    assert!(html.contains("<tr><td>launch_ms_mean</td>"), "the metrics table");
    std::fs::remove_dir_all(&dir).unwrap();
}
