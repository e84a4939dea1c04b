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
}
