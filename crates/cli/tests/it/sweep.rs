//! `floe sweep`: shards into JSON Lines, their merge, and errors in sweep files.

use std::path::{Path, PathBuf};
use std::process::Command;

const TD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sim/testdata");

/// Runs the binary in `dir`, never beside the daemon's tests (`crate::shared`).
fn floe(dir: &Path, args: &[&str]) -> std::process::Output {
    let _shared = crate::shared();
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).current_dir(dir).output().expect("run floe")
}

fn ok(out: std::process::Output) -> std::process::Output {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A fresh directory holding a sweep file over the tiny test inputs: 3 policies x 2
/// background counts x 3 seeds.
fn setup(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("floe-it-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["tiny-device.toml", "tiny-workload.toml", "tiny-apps.toml"] {
        std::fs::copy(format!("{TD}/{f}"), dir.join(f)).unwrap();
    }
    let spec = "devices = [\"tiny-device.toml\"]\nworkloads = [\"tiny-workload.toml\"]\n\
                policies = [\"lru-cfs\", \"android-lmk\", \"seal:k=1:mu=0.5\"]\nseeds = [1, 2, 3]\n\n\
                [flags]\napps = \"tiny-apps.toml\"\nbg_apps = [1, 2]\n";
    std::fs::write(dir.join("grid.toml"), spec).unwrap();
    dir
}

/// Shards run anywhere (here: from another directory, one after another) merge into
/// the whole sweep run at once, byte for byte, in the sweep's order; the merge is also
/// a CSV by its name.
#[test]
fn shards_merge_into_the_whole_sweep() {
    let dir = setup("merge");
    let list = ok(floe(&dir, &["sweep", "grid.toml", "--list"]));
    let keys: Vec<String> = String::from_utf8(list.stdout).unwrap().lines().map(String::from).collect();
    assert_eq!(keys.len(), 18);
    assert!(keys[0].starts_with(r#"{"device":"tiny-device.toml","workload":"tiny-workload.toml","policy":"lru-cfs","seed":1,"flags":{"apps":"tiny-apps.toml","bg_apps":1}}"#));
    let whole = ok(floe(&dir, &["sweep", "grid.toml", "--quiet"]));
    assert!(whole.stderr.is_empty(), "--quiet prints nothing");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for i in 1..=4 {
        let out = ok(floe(&sub, &["sweep", "../grid.toml", "--shard", &format!("{i}/4"), "-j", "1"]));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("shard {i}/4 of ../grid.toml")), "{err}");
        let lines = std::fs::read_to_string(sub.join(format!("grid-{i}-of-4.jsonl"))).unwrap().lines().count();
        assert_eq!(lines, if i <= 2 { 5 } else { 4 });
    }
    ok(floe(&dir, &["sweep", "merge", "--spec", "grid.toml", "grid.jsonl", "-o", "whole.jsonl"]));
    let shards: Vec<String> = (1..=4).rev().map(|i| format!("sub/grid-{i}-of-4.jsonl")).collect();
    let mut args = vec!["sweep", "merge", "--spec", "grid.toml"];
    args.extend(shards.iter().map(String::as_str));
    let merged = ok(floe(&dir, &args)).stdout;
    assert_eq!(merged, std::fs::read(dir.join("whole.jsonl")).unwrap());
    let lines: Vec<serde_json::Value> =
        merged.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    for (l, k) in lines.iter().zip(&keys) {
        assert_eq!(l["key"], serde_json::from_str::<serde_json::Value>(k).unwrap(), "the sweep's order");
        assert_eq!(l["run"]["seed"], l["key"]["seed"]);
    }
    // A run's line holds its `floe sim --json` record.
    let sim = ok(floe(
        &dir,
        &[
            "sim",
            "--device",
            "tiny-device.toml",
            "--workload",
            "tiny-workload.toml",
            "--apps",
            "tiny-apps.toml",
            "--policy",
            "seal:k=1:mu=0.5",
            "--seed",
            "2",
            "--bg-apps",
            "2",
            "--json",
        ],
    ));
    let run: serde_json::Value = serde_json::from_slice(&sim.stdout).unwrap();
    assert_eq!(lines[16]["run"], run);
    args.extend(["-o", "all.csv"]);
    ok(floe(&dir, &args));
    let csv = std::fs::read_to_string(dir.join("all.csv")).unwrap();
    assert!(csv.starts_with("device,workload,policy,seed,apps,bg_apps,fps,"), "{csv}");
    assert_eq!(csv.lines().count(), 19);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A missing shard, a shard given twice, and a bad sweep file are errors (status 2)
/// naming the run, the file and the line.
#[test]
fn merge_and_spec_errors_name_the_run_and_the_line() {
    let dir = setup("errors");
    for i in 1..=2 {
        ok(floe(&dir, &["sweep", "grid.toml", "--shard", &format!("{i}/2"), "--quiet"]));
    }
    let out = floe(&dir, &["sweep", "merge", "--spec", "grid.toml", "grid-1-of-2.jsonl"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("9 of the sweep's 18 runs are missing: run {\"device\":\"tiny-device.toml\""), "{err}");
    assert!(err.contains(r#""policy":"lru-cfs","seed":2,"flags":{"apps":"tiny-apps.toml","bg_apps":1}} and 8 more"#), "{err}");
    let out = floe(&dir, &["sweep", "merge", "--spec", "grid.toml", "grid-1-of-2.jsonl", "grid-2-of-2.jsonl", "grid-1-of-2.jsonl"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("floe: error: grid-1-of-2.jsonl is named twice"));
    std::fs::write(
        dir.join("bad.toml"),
        "workloads = [\"tiny-workload.toml\"]\npolicies = [\"lru-cfs\"]\nseeds = [1]\n\n[flags]\nbg_apps = 2\nballoon = 5\n",
    )
    .unwrap();
    let out = floe(&dir, &["sweep", "bad.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.starts_with("floe: error: bad.toml:7: field `flags.balloon`: unknown field `balloon`"), "{err}");
    let out = floe(&dir, &["sweep", "grid.toml", "--shard", "3/2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a shard is I/N"));
    let _ = std::fs::remove_dir_all(&dir);
}
