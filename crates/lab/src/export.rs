//! Runs as a table for tools: CSV with one row per run and one column per key, run
//! parameter and metric, as pandas' `read_csv` or a spreadsheet takes it.

use floe_core::{Param, RunRecord};
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

/// Runs as they went, in the Chrome trace-event format that Perfetto's UI and
/// chrome://tracing open: one process per policy; a `foreground` track whose slices
/// are the spans each app held the foreground; counter tracks for memory (free, LRU,
/// zram), frames a second, reclaim (by kswapd and direct) and refaults (foreground and
/// background) per step; and an instant event at each step with kills, freezes or thaws.
/// Times are the samples' simulated times, in microseconds.
pub fn trace_json(runs: &[(String, Vec<floe_core::Sample>)]) -> serde_json::Value {
    use serde_json::json;
    let us = |t: f64| (t * 1e6).round();
    let mut ev = Vec::new();
    for (i, (policy, samples)) in runs.iter().enumerate() {
        let pid = i + 1;
        ev.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("floe sim: {policy}")}}));
        ev.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": 1, "args": {"name": "foreground"}}));
        // The foreground's spans: a slice from each change of app to the next.
        let mut span: Option<(&str, f64)> = None;
        let mut prev_t = 0.0;
        for s in samples {
            let t0 = prev_t;
            prev_t = s.t_s;
            if span.is_some_and(|(app, _)| app != s.fg_app) {
                let (app, start) = span.take().expect("checked");
                ev.push(json!({"ph": "X", "name": app, "pid": pid, "tid": 1, "ts": us(start), "dur": us(t0) - us(start)}));
            }
            if span.is_none() && !s.fg_app.is_empty() && s.fg_app != "-" {
                span = Some((&s.fg_app, t0));
            }
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
                ev.push(json!({"ph": "i", "s": "p", "name": "kills, freezes, thaws", "pid": pid, "tid": 1, "ts": ts, "args": args}));
            }
        }
        if let Some((app, start)) = span {
            ev.push(json!({"ph": "X", "name": app, "pid": pid, "tid": 1, "ts": us(start), "dur": us(prev_t) - us(start)}));
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
    /// track, counters at every sample, and an instant only where something was killed,
    /// frozen or thawed.
    #[test]
    fn a_trace_has_the_foregrounds_spans_counters_and_instants() {
        let sample = |t: f64, app: &str, freezes: u64| floe_core::Sample {
            policy: "ice".into(),
            t_s: t,
            fg_app: app.into(),
            free_mib: 100.0,
            reclaimed_pages: 40,
            direct_reclaimed_pages: 8,
            freezes,
            ..Default::default()
        };
        let samples = vec![sample(1.0, "a", 0), sample(2.0, "a", 1), sample(3.0, "b", 0), sample(4.0, "b", 0)];
        let v = trace_json(&[("ice".into(), samples)]);
        let ev = v["traceEvents"].as_array().unwrap();
        let of = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).collect::<Vec<_>>();
        assert_eq!(of("M")[0]["args"]["name"], "floe sim: ice");
        let spans: Vec<(String, f64, f64)> = of("X")
            .iter()
            .map(|e| (e["name"].as_str().unwrap().to_string(), e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        assert_eq!(spans, [("a".to_string(), 0.0, 2e6), ("b".to_string(), 2e6, 2e6)]);
        assert_eq!(of("C").len(), 4 * 4, "four counter tracks at each of four samples");
        let reclaim = of("C").into_iter().find(|e| e["name"] == "reclaimed pages").unwrap();
        assert_eq!((reclaim["args"]["kswapd"].as_u64(), reclaim["args"]["direct"].as_u64()), (Some(32), Some(8)));
        let instants = of("i");
        assert_eq!(instants.len(), 1);
        assert_eq!((instants[0]["ts"].as_f64(), instants[0]["args"]["freezes"].as_u64()), (Some(2e6), Some(1)));
    }
}
