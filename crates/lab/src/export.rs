//! Runs for tools: as a table, CSV with one row per run and one column per key, run
//! parameter and metric, as pandas' `read_csv` or a spreadsheet takes it; as they went,
//! Chrome trace-event JSON for Perfetto.

use floe_core::{Param, RunRecord};
use floe_sim::timeline::{AppEvent, AppEventKind};
use std::collections::BTreeSet;

/// The runs as CSV: the columns `policy`, `device`, `workload`, `seed`, then every run
/// parameter any run has (sorted by name, empty where a run has none), then the metrics
/// in the order of their JSON keys (an absent one, such as a precision with nothing
/// prepaged, empty). Numbers are written as the JSON writes them.
pub fn runs_csv(runs: &[RunRecord]) -> Result<String, csv::Error> {
    let params: BTreeSet<&str> = runs.iter().flat_map(|r| r.params.keys().map(String::as_str)).collect();
    let metrics: Vec<serde_json::Map<String, serde_json::Value>> = runs
        .iter()
        .map(|r| match serde_json::to_value(&r.metrics) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        })
        .collect();
    // The metric keys in their JSON order, taken from the first run that has each.
    let mut keys: Vec<&str> = Vec::new();
    for m in &metrics {
        for k in m.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let head = ["policy", "device", "workload", "seed"].into_iter().chain(params.iter().copied()).chain(keys.iter().copied());
    w.write_record(head)?;
    for (r, m) in runs.iter().zip(&metrics) {
        let mut row = vec![r.policy.clone(), r.device.clone(), r.workload.clone(), r.seed.to_string()];
        row.extend(params.iter().map(|p| r.params.get(*p).map(param_cell).unwrap_or_default()));
        row.extend(keys.iter().map(|k| m.get(*k).map(value_cell).unwrap_or_default()));
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 fields"))
}

fn param_cell(p: &Param) -> String {
    match p {
        Param::Int(i) => i.to_string(),
        Param::Float(x) => x.to_string(),
        Param::Text(t) => t.clone(),
        Param::Bool(b) => b.to_string(),
    }
}

fn value_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One run as it went, for [`trace_json`]: its policy, its samples
/// ([`floe_sim::run_with_timeline`]) and its apps' events
/// ([`floe_sim::timeline::run_with_app_events`]; none: no app tracks).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TracedRun {
    pub policy: String,
    pub samples: Vec<floe_core::Sample>,
    pub apps: Vec<AppEvent>,
}

/// The trace's thread ids: the foreground's track, direct reclaim's, then one per app.
const FG_TID: usize = 1;
const RECLAIM_TID: usize = 2;
const FIRST_APP_TID: usize = 10;
/// A frame longer than this is an interaction alert (Systrace's 16.6 ms, as the
/// simulator counts them).
const ALERT_US: f64 = 16_600.0;

/// Runs as they went, in the Chrome trace-event format that Perfetto's UI and
/// chrome://tracing open: one process per policy, in it a `foreground` track whose
/// slices are the spans each app held the foreground; a `direct reclaim` track with a
/// slice over each stretch of steps in which allocations reclaimed themselves (the
/// simulator counts direct reclaim per step, not per app); one track per app with its
/// launches (`cold launch`, `warm launch`: from the user's request to the first frame),
/// its frames (`frame`, or `frame (alert)` over 16.6 ms), its freezes (`frozen`: freeze
/// to thaw) and its kills (an instant, `killed`); counter
/// tracks for memory (free, LRU, zram), frames a second, reclaim (by kswapd and direct)
/// and refaults (foreground and background) per step; and an instant event at each step
/// with kills, freezes or thaws. Times are simulated, in microseconds; a span still
/// open when the run ends closes with it.
pub fn trace_json(runs: &[TracedRun]) -> serde_json::Value {
    use serde_json::json;
    let us = |t: f64| (t * 1e6).round();
    let mut ev = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let (policy, samples) = (&run.policy, &run.samples);
        let pid = i + 1;
        let end = samples.last().map_or(0.0, |s| s.t_s).max(run.apps.last().map_or(0.0, |e| e.t_s));
        ev.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("floe sim: {policy}")}}));
        for (tid, name) in [(FG_TID, "foreground"), (RECLAIM_TID, "direct reclaim")] {
            ev.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}));
            ev.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}));
        }
        // The foreground's spans: a slice from each change of app to the next.
        let mut span: Option<(&str, f64)> = None;
        // Direct reclaim's stretches: from the start of the first step with some to the
        // end of the last, and the pages they reclaimed.
        let mut stall: Option<(f64, u64)> = None;
        let mut prev_t = 0.0;
        for s in samples {
            let t0 = prev_t;
            prev_t = s.t_s;
            if span.is_some_and(|(app, _)| app != s.fg_app) {
                let (app, start) = span.take().expect("checked");
                ev.push(json!({"ph": "X", "name": app, "pid": pid, "tid": FG_TID, "ts": us(start), "dur": us(t0) - us(start)}));
            }
            if span.is_none() && !s.fg_app.is_empty() && s.fg_app != "-" {
                span = Some((&s.fg_app, t0));
            }
            stall = match (stall, s.direct_reclaimed_pages) {
                (None, 0) => None,
                (None, n) => Some((t0, n)),
                (Some((start, n)), 0) => {
                    let args = json!({"pages": n});
                    ev.push(json!({"ph": "X", "name": "direct reclaim", "pid": pid, "tid": RECLAIM_TID, "ts": us(start), "dur": us(t0) - us(start), "args": args}));
                    None
                }
                (Some((start, n)), m) => Some((start, n + m)),
            };
            let ts = us(s.t_s);
            let counters = [
                (
                    "memory MiB",
                    json!({"free": s.free_mib, "anon LRU": s.anon_lru_mib, "file LRU": s.file_lru_mib, "zram": s.zram_stored_mib}),
                ),
                ("fps", json!({"fps": s.fps.unwrap_or(0.0)})),
                (
                    "reclaimed pages",
                    json!({"kswapd": s.reclaimed_pages - s.direct_reclaimed_pages.min(s.reclaimed_pages), "direct": s.direct_reclaimed_pages}),
                ),
                (
                    "refaults",
                    json!({"foreground": s.refaults_fg_anon + s.refaults_fg_file, "background": s.refaults_bg_anon + s.refaults_bg_file}),
                ),
            ];
            for (name, args) in counters {
                ev.push(json!({"ph": "C", "name": name, "pid": pid, "ts": ts, "args": args}));
            }
            if s.kills + s.freezes + s.thaws > 0 {
                let args = json!({"kills": s.kills, "freezes": s.freezes, "thaws": s.thaws});
                ev.push(json!({"ph": "i", "s": "p", "name": "kills, freezes, thaws", "pid": pid, "tid": FG_TID, "ts": ts, "args": args}));
            }
        }
        if let Some((app, start)) = span {
            ev.push(json!({"ph": "X", "name": app, "pid": pid, "tid": FG_TID, "ts": us(start), "dur": us(prev_t) - us(start)}));
        }
        if let Some((start, n)) = stall {
            let args = json!({"pages": n});
            ev.push(json!({"ph": "X", "name": "direct reclaim", "pid": pid, "tid": RECLAIM_TID, "ts": us(start), "dur": us(prev_t) - us(start), "args": args}));
        }
        // The apps' tracks, in the order they first appear.
        let mut apps: Vec<&str> = Vec::new();
        for e in &run.apps {
            if !apps.contains(&e.app.as_str()) {
                apps.push(&e.app);
            }
        }
        for (k, app) in apps.iter().enumerate() {
            let tid = FIRST_APP_TID + k;
            ev.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": app}}));
            ev.push(json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}));
            let (mut launch, mut frozen): (Option<(f64, bool)>, Option<f64>) = (None, None);
            let slice = |name: &str, start: f64, stop: f64| json!({"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": us(start), "dur": us(stop) - us(start)});
            let launch_name = |cold: bool| if cold { "cold launch" } else { "warm launch" };
            for e in run.apps.iter().filter(|e| e.app == *app) {
                match e.kind {
                    AppEventKind::LaunchStarted { cold } => launch = Some((e.t_s, cold)),
                    AppEventKind::LaunchDone => {
                        if let Some((start, cold)) = launch.take() {
                            ev.push(slice(launch_name(cold), start, e.t_s));
                        }
                    }
                    AppEventKind::Frozen => frozen = Some(e.t_s),
                    AppEventKind::Thawed => {
                        if let Some(start) = frozen.take() {
                            ev.push(slice("frozen", start, e.t_s));
                        }
                    }
                    AppEventKind::Killed => {
                        ev.push(json!({"ph": "i", "s": "t", "name": "killed", "pid": pid, "tid": tid, "ts": us(e.t_s)}));
                    }
                    AppEventKind::Frame { dur_us } => {
                        let name = if dur_us as f64 > ALERT_US { "frame (alert)" } else { "frame" };
                        ev.push(json!({"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": us(e.t_s), "dur": dur_us}));
                    }
                }
            }
            if let Some((start, cold)) = launch {
                ev.push(slice(launch_name(cold), start, end));
            }
            if let Some(start) = frozen {
                ev.push(slice("frozen", start, end));
            }
        }
    }
    json!({"traceEvents": ev, "displayTimeUnit": "ms"})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per run under one header: keys, the union of the runs' parameters
    /// (empty where a run lacks one), then every metric; a text parameter with a comma
    /// is quoted, and the table reads back with the same cells.
    #[test]
    fn runs_become_one_row_each_under_one_header() {
        let mut a = RunRecord::new("lru-cfs", "p20", "ice-video-call", 1);
        a.params.insert("bg_apps".into(), Param::Int(8));
        a.params.insert("bg_set".into(), Param::Text("twitter,amazon".into()));
        a.metrics.fps = 40.5;
        a.metrics.reclaimed_pages = 59_616;
        let mut b = RunRecord::new("ice", "p20", "ice-video-call", 2);
        b.params.insert("balloon_mib".into(), Param::Float(2070.0));
        b.metrics.prepage_precision = Some(0.5);
        let text = runs_csv(&[a, b]).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(&head[..7], ["policy", "device", "workload", "seed", "balloon_mib", "bg_apps", "bg_set"]);
        let json_keys = serde_json::to_value(floe_core::Metrics::default()).unwrap().as_object().unwrap().len();
        assert!(head.len() >= 7 + json_keys && head.contains(&"fps".to_string()) && head.contains(&"prepage_precision".to_string()));
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        assert_eq!((&rows[0][col("policy")], &rows[0][col("seed")], &rows[0][col("bg_set")]), ("lru-cfs", "1", "twitter,amazon"));
        assert_eq!((&rows[0][col("fps")], &rows[0][col("reclaimed_pages")], &rows[0][col("balloon_mib")]), ("40.5", "59616", ""));
        assert_eq!((&rows[1][col("balloon_mib")], &rows[1][col("bg_apps")], &rows[1][col("prepage_precision")]), ("2070", "", "0.5"));
        assert_eq!(&rows[0][col("prepage_precision")], "", "an absent metric is an empty cell");
        assert!(rows.iter().all(|r| r.len() == head.len()));
    }

    /// A trace has a process per policy, the foreground's spans as slices on its own
    /// track, direct reclaim's stretches on another, an app's launches, freezes and
    /// kills on its own track, counters at every sample, and an instant only where
    /// something was killed, frozen or thawed.
    #[test]
    fn a_trace_has_the_foregrounds_spans_app_tracks_counters_and_instants() {
        let sample = |t: f64, app: &str, freezes: u64, direct: u64| floe_core::Sample {
            policy: "ice".into(),
            t_s: t,
            fg_app: app.into(),
            free_mib: 100.0,
            reclaimed_pages: 40,
            direct_reclaimed_pages: direct,
            freezes,
            ..Default::default()
        };
        let samples = vec![sample(1.0, "a", 0, 8), sample(2.0, "a", 1, 8), sample(3.0, "b", 0, 0), sample(4.0, "b", 0, 2)];
        let at = |t_s: f64, app: &str, kind| AppEvent { t_s, app: app.into(), kind };
        let apps = vec![
            at(0.0, "a", AppEventKind::LaunchStarted { cold: true }),
            at(0.5, "a", AppEventKind::LaunchDone),
            at(1.5, "c", AppEventKind::Frozen),
            at(2.0, "b", AppEventKind::LaunchStarted { cold: false }),
            at(2.0, "c", AppEventKind::Thawed),
            at(2.25, "b", AppEventKind::LaunchDone),
            at(2.5, "b", AppEventKind::Frame { dur_us: 12_000 }),
            at(2.6, "b", AppEventKind::Frame { dur_us: 30_000 }),
            at(3.0, "c", AppEventKind::Frozen),
            at(3.5, "c", AppEventKind::Killed),
            at(3.5, "c", AppEventKind::Thawed),
            at(3.75, "a", AppEventKind::Frozen),
        ];
        let v = trace_json(&[TracedRun { policy: "ice".into(), samples, apps }]);
        let ev = v["traceEvents"].as_array().unwrap();
        let of = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).collect::<Vec<_>>();
        assert_eq!(of("M")[0]["args"]["name"], "floe sim: ice");
        let threads: Vec<(u64, &str)> = of("M")
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
            .collect();
        assert_eq!(threads, [(1, "foreground"), (2, "direct reclaim"), (10, "a"), (11, "c"), (12, "b")]);
        let spans = |tid: u64| -> Vec<(String, f64, f64)> {
            of("X")
                .iter()
                .filter(|e| e["tid"] == tid)
                .map(|e| (e["name"].as_str().unwrap().to_string(), e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
                .collect()
        };
        let span = |name: &str, ts: f64, dur: f64| (name.to_string(), ts, dur);
        assert_eq!(spans(1), [span("a", 0.0, 2e6), span("b", 2e6, 2e6)]);
        assert_eq!(spans(2), [span("direct reclaim", 0.0, 2e6), span("direct reclaim", 3e6, 1e6)]);
        assert_eq!(of("X").iter().find(|e| e["tid"] == 2).unwrap()["args"]["pages"], 16);
        assert_eq!(spans(10), [span("cold launch", 0.0, 0.5e6), span("frozen", 3.75e6, 0.25e6)], "a freeze open at the end closes with it");
        assert_eq!(spans(11), [span("frozen", 1.5e6, 0.5e6), span("frozen", 3e6, 0.5e6)]);
        assert_eq!(spans(12), [span("warm launch", 2e6, 0.25e6), span("frame", 2.5e6, 12e3), span("frame (alert)", 2.6e6, 30e3)]);
        let killed: Vec<(u64, f64)> =
            of("i").iter().filter(|e| e["name"] == "killed").map(|e| (e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap())).collect();
        assert_eq!(killed, [(11, 3.5e6)]);
        assert_eq!(of("C").len(), 4 * 4, "four counter tracks at each of four samples");
        let reclaim = of("C").into_iter().find(|e| e["name"] == "reclaimed pages").unwrap();
        assert_eq!((reclaim["args"]["kswapd"].as_u64(), reclaim["args"]["direct"].as_u64()), (Some(32), Some(8)));
        let instants: Vec<_> = of("i").into_iter().filter(|e| e["s"] == "p").collect();
        assert_eq!(instants.len(), 1);
        assert_eq!((instants[0]["ts"].as_f64(), instants[0]["args"]["freezes"].as_u64()), (Some(2e6), Some(1)));
    }
}
