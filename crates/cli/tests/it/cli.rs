//! End-to-end tests of the `floe` binary: output contracts and errors on bad input.

use std::process::Command;

/// Runs the binary, never beside the daemon's tests (`crate::shared`), keeping no runs
/// on disk (FLOE_CACHE_DIR empty) unless a test names a place.
fn floe(args: &[&str]) -> std::process::Output {
    let _shared = crate::shared();
    Command::new(env!("CARGO_BIN_EXE_floe")).args(args).env("FLOE_CACHE_DIR", "").output().expect("run floe")
}

const TD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../sim/testdata");

/// `--per-app` adds each app's part: a table per policy under the metrics, and with
/// --json an `apps` array in every run object, whose refaults add up to the run's; the
/// run object has no such key without it.
#[test]
fn per_app_prints_each_apps_part_of_the_run() {
    let dev = format!("{TD}/tiny-device.toml");
    let wl = format!("{TD}/tiny-workload.toml");
    let apps = format!("{TD}/tiny-apps.toml");
    let base = ["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "lru-cfs,zswap", "--seed", "3"];
    let out = floe(&[&base[..], &["--json", "--per-app"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for run in v.as_array().unwrap() {
        let list = run["apps"].as_array().unwrap_or_else(|| panic!("no apps array: {run}"));
        assert!(!list.is_empty() && list.iter().all(|a| a["app"].is_string() && a["cpu_ms"].is_number()), "{run}");
        let m = &run["metrics"];
        let of = |k: &str| list.iter().map(|a| a[k].as_u64().unwrap()).sum::<u64>();
        let run_refaults = ["refaults_fg_anon", "refaults_fg_file", "refaults_bg_anon", "refaults_bg_file"]
            .iter()
            .map(|k| m[*k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(of("refaults_anon") + of("refaults_file"), run_refaults, "{run}");
        assert_eq!(of("launches_cold") + of("launches_warm"), m["launches_cold"].as_u64().unwrap() + m["launches_warm"].as_u64().unwrap());
    }
    let out = floe(&[&base[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v[0].get("apps").is_none(), "apps only when asked for");
    let out = floe(&[&base[..], &["--per-app"]].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    for policy in ["lru-cfs", "zswap"] {
        assert!(text.contains(&format!("per app: {policy}, seed 3")), "{text}");
    }
    assert!(text.contains("rf_anon") && text.contains("swap_mib"), "{text}");
}

/// Output piped into a reader that stops early (`floe sim | head`) ends floe the way it
/// ends any Unix filter, by SIGPIPE, not with a panic.
#[test]
fn a_closed_output_pipe_ends_floe_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let _shared = crate::shared();
    let mut child = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["sim", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run floe");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{:?}", out.status);
}

/// Output that cannot be written (a full disk: /dev/full) is an error with exit
/// status 2, for reports, lists and help alike, never a panic or a silent success.
#[test]
fn unwritable_output_is_an_error_not_a_panic() {
    let _shared = crate::shared();
    for args in [&["list", "apps"][..], &["sim", "--json"], &["sim"], &["--help"]] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(args).stdout(full).output().expect("run floe");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    }
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["list", "apps"]).stdout(full).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("floe: error: cannot write to standard output"));
}

#[test]
fn sim_json_is_one_run_object_with_the_schema_names() {
    let dev = format!("{TD}/tiny-device.toml");
    let wl = format!("{TD}/tiny-workload.toml");
    let apps = format!("{TD}/tiny-apps.toml");
    let out = floe(&["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "lru-cfs", "--seed", "3", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in ["policy", "device", "workload", "params", "seed", "metrics"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["policy"], "lru-cfs");
    assert_eq!(v["seed"], 3);
    let m = v["metrics"].as_object().unwrap();
    for k in [
        "fps",
        "ria",
        "interaction_alerts",
        "launch_ms_p95",
        "caching_capability",
        "refaults_bg_anon",
        "zram_stored_bytes",
        "cpu_ms_kswapd",
        "prepage_recall",
    ] {
        assert!(m.contains_key(k), "metric {k} missing");
    }
    // Several policies give an array of runs, in the order asked.
    let out = floe(&["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "android-lmk,zswap", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["policy"], "android-lmk");
    assert_eq!(v[1]["policy"], "zswap");
}

/// `floe list metrics` gives every metric of the JSON schema, in its order, each with
/// a unit and a meaning.
#[test]
fn list_metrics_names_every_metric_with_its_unit_and_meaning() {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let out = floe(&["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "lru-cfs", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut schema: Vec<String> = v["metrics"].as_object().unwrap().keys().cloned().collect();
    let out = floe(&["list", "metrics"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut listed = Vec::new();
    for l in text.lines() {
        let mut words = l.split_whitespace();
        let (name, unit) = (words.next().unwrap_or_default(), words.next().unwrap_or_default());
        assert!(["frames/s", "ratio", "frames", "launches", "ms", "pages", "apps", "bytes"].contains(&unit), "{l}");
        assert!(words.count() >= 2, "a meaning in words: {l}");
        listed.push(name.to_string());
    }
    assert!(text.contains("\nria ") && text.contains("frames that took longer than 16.6 ms"), "{text}");
    assert!(text.contains("\ncaching_capability ") && text.contains("warm launches per round after the first"), "{text}");
    let in_order = listed.clone();
    listed.sort();
    schema.sort();
    assert_eq!(listed, schema);
    assert_eq!(in_order.first().map(String::as_str), Some("fps"));
}

/// Byte metrics show in binary units in the table (the mean's unit for a mean and its
/// deviation), and as the raw count in the JSON.
#[test]
fn byte_metrics_print_in_binary_units_in_tables_and_raw_in_json() {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let base = ["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "zswap", "--seed", "3"];
    let out = floe(&[&base[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = String::from_utf8_lossy(&floe(&base).stdout).to_string();
    let mut shown = 0;
    for name in ["flash_read_bytes", "flash_write_bytes", "zram_stored_bytes"] {
        let raw = v["metrics"][name].as_u64().unwrap_or_else(|| panic!("{name} is a count of bytes in the JSON: {v}"));
        let row = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {text}"));
        let cell: Vec<&str> = row.split_whitespace().skip(1).collect();
        if raw < 1024 {
            continue;
        }
        let (x, unit) = (cell[0].parse::<f64>().unwrap_or_else(|_| panic!("{row}")), cell[1]);
        let d = match unit {
            "KiB" => 1024.0,
            "MiB" => 1_048_576.0,
            "GiB" => 1_073_741_824.0,
            _ => panic!("{name}: {raw} bytes shown as {row}"),
        };
        assert!((1.0..1024.0).contains(&x) && (x * d - raw as f64).abs() <= 0.05 * d, "{name}: {raw} bytes shown as {row}");
        shown += 1;
    }
    assert!(shown >= 2, "{text}");
    // Over seeds, a mean and its deviation share the mean's unit.
    let text = String::from_utf8_lossy(&floe(&[&base[..], &["--seeds", "2"]].concat()).stdout).to_string();
    let row = text.lines().find(|l| l.starts_with("zram_stored_bytes")).unwrap_or_else(|| panic!("{text}"));
    let cell: Vec<&str> = row.split_whitespace().skip(1).collect();
    assert!(cell.len() == 3 && cell[1].starts_with('±') && ["KiB", "MiB", "GiB"].contains(&cell[2]), "{row}");
}

/// `--seeds N` runs every policy with N seeds from --seed on: --json gives every run,
/// policy by policy, each the run that seed gives alone; the table shows each metric's
/// mean and spread. It cannot share --timeline, nor run past the last seed.
#[test]
fn sim_over_several_seeds() {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let base = ["sim", "--device", &dev, "--workload", &wl, "--apps", &apps];
    let run = |more: &[&str]| floe(&[&base[..], more].concat());
    let json = |more: &[&str]| serde_json::from_slice::<serde_json::Value>(&run(more).stdout).unwrap();
    let all = json(&["--policy", "android-lmk,zswap", "--seed", "5", "--seeds", "2", "--json"]);
    let got: Vec<(String, u64)> =
        all.as_array().unwrap().iter().map(|r| (r["policy"].as_str().unwrap().to_string(), r["seed"].as_u64().unwrap())).collect();
    let want: Vec<(String, u64)> =
        [("android-lmk", 5), ("android-lmk", 6), ("zswap", 5), ("zswap", 6)].map(|(p, s)| (p.to_string(), s)).into();
    assert_eq!(got, want);
    assert_eq!(all[3], json(&["--policy", "zswap", "--seed", "6", "--json"]));
    let text = String::from_utf8_lossy(&run(&["--policy", "android-lmk,zswap", "--seed", "5", "--seeds", "2"]).stdout).to_string();
    assert!(text.lines().next().unwrap().contains("seeds 5 to 6 (mean ±standard deviation of 2 runs)"), "{text}");
    let kills = text.lines().find(|l| l.starts_with("kills")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(kills.matches('±').count(), 2, "{kills}");
    let k: Vec<f64> = (0..2).map(|i| all[i]["metrics"]["kills"].as_f64().unwrap()).collect();
    let sd = (k[0] - k[1]).abs() / 2f64.sqrt();
    assert!(kills.contains(&format!("{:.1} ±{sd:.1}", (k[0] + k[1]) / 2.0)), "android-lmk's kills {k:?}: {kills}");
    for (args, why) in [
        (vec!["--seeds", "2", "--timeline", "-"], "--timeline"),
        (vec!["--seed", "18446744073709551615", "--seeds", "2"], "the last seed"),
        (vec!["--seeds", "0"], "--seeds"),
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(why), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn bad_device_file_names_file_line_and_field() {
    let dir = std::env::temp_dir().join(format!("floe-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad-device.toml");
    let src = std::fs::read_to_string(format!("{TD}/tiny-device.toml")).unwrap().replace("cores = 2 ", "cores = \"two\" ");
    std::fs::write(&bad, src).unwrap();
    let out = floe(&["sim", "--device", bad.to_str().unwrap(), "--workload", "ice-video-call"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad-device.toml:29") && err.contains("cores"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A device whose app memory cannot hold one app of the workload (here WhatsApp's
/// 170 MiB with the video call's 240 MiB of buffers) is refused with exit status 2 at
/// its `memory.app_mem_mib` line, before anything runs with free memory below zero.
#[test]
fn a_device_smaller_than_one_app_is_refused() {
    let dir = std::env::temp_dir().join(format!("floe-cli-small-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p20 = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/devices/p20.toml")).unwrap();
    // Without its system processes, whose pages a tiny RAM cannot hold.
    let p20 = p20.split("\n[system]").next().unwrap();
    let set = |kv: &[(&str, &str)]| -> String {
        let lines = p20.lines().map(|l| match kv.iter().find(|(k, _)| l.starts_with(&format!("{k} ="))) {
            Some((k, v)) => format!("{k} = {v}"),
            None => l.to_string(),
        });
        lines.collect::<Vec<_>>().join("\n")
    };
    let small = [
        ("watermark_min_mib", "0.1"),
        ("watermark_low_mib", "0.2"),
        ("watermark_high_mib", "0.3"),
        ("tuned_high_mib", "0.5"),
        ("minfree", "[[0, 0.5]]"),
    ];
    for (name, kv) in
        [("app-mem-64", &[("app_mem_mib", "64.0")][..]), ("ram-1", &[("ram_mib", "1.0"), ("app_mem_mib", "1.0"), ("size_mib", "1.0")])]
    {
        let src = set(&[&small[..], kv].concat());
        let at = src.lines().position(|l| l.starts_with("app_mem_mib =")).unwrap() + 1;
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, &src).unwrap();
        let out = floe(&["sim", "--device", file.to_str().unwrap(), "--policy", "lru-cfs", "--timeline", "-"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}: a run began: {}", String::from_utf8_lossy(&out.stdout));
        let want = format!("{}:{at}: field `memory.app_mem_mib`: ", file.display());
        assert!(err.contains(&want) && err.contains("cannot hold app `whatsapp`"), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An apps file that lacks an app the workload needs is the error: the message names
/// the apps file and the app, and where the workload asks for it.
#[test]
fn an_apps_file_lacking_a_workloads_app_is_blamed() {
    let apps = format!("{TD}/tiny-apps.toml");
    let out = floe(&["sim", "--apps", &apps, "--workload", "ice-video-call", "--policy", "lru-cfs"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with(&format!("floe: error: {apps}: no app `whatsapp` in this app catalog")), "{err}");
    assert!(err.contains("workload `ice-video-call` needs it (data/workloads/ice-video-call.toml:"), "{err}");
}

#[test]
fn unknown_names_are_errors_not_panics() {
    for args in [
        &["sim", "--policy", "no-such-policy"][..],
        &["sim", "--workload", "no-such-workload"][..],
        &["sim", "--device", "no-such-device"][..],
        &["sim", "--device", "/nonexistent/dir/dev.toml"][..],
        &["sim", "--balloon-mib", "-5"][..],
        &["sim", "--balloon-mib", "100000"][..],
        &["sim", "--bg-window-s", "-1"][..],
        &["sim", "--bg-window-s", "nan"][..],
    ] {
        let out = floe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("floe: error:"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        if args[1] == "--bg-window-s" {
            assert!(err.contains("--bg-window-s ") && err.contains("must be a number of seconds from 0 to 604800"), "{err}");
        }
    }
}

#[test]
fn list_names_every_contract_policy_device_and_workload() {
    let out = floe(&["list", "policies"]);
    let s = String::from_utf8_lossy(&out.stdout);
    for p in ["android-lmk", "lru-cfs", "swap-all", "zswap"] {
        assert!(s.lines().any(|l| l.starts_with(p)), "{p} not listed");
    }
    let s = String::from_utf8_lossy(&floe(&["list", "devices"]).stdout).to_string();
    for d in ["pixel3", "pixel3a", "pixel4", "p20", "hikey970", "galaxy-nexus", "nexus5"] {
        assert!(s.lines().any(|l| l.starts_with(d)), "{d} not listed");
    }
    // Each device says which killer it runs.
    assert!(s.lines().any(|l| l.starts_with("pixel3 ") && l.contains(" psi-minfree ")), "{s}");
    assert!(s.lines().any(|l| l.starts_with("pixel3a ") && l.contains(" psi ")), "{s}");
    assert!(s.lines().any(|l| l.starts_with("p20 ") && l.contains(" minfree ")), "{s}");
    let s = String::from_utf8_lossy(&floe(&["list", "workloads"]).stdout).to_string();
    for w in ["ice-video-call", "seal-30apps", "smartlmk-256", "asap-seq1", "selective-c"] {
        assert!(s.lines().any(|l| l.starts_with(w)), "{w} not listed");
    }
    let s = String::from_utf8_lossy(&floe(&["list", "experiments"]).stdout).to_string();
    for e in ["ice", "seal", "smartlmk", "selective", "asap"] {
        assert!(s.lines().any(|l| l.starts_with(e) && l.len() > e.len() + 20), "{e} not listed with what it re-runs: {s}");
    }
    // A user's catalog is listed instead of the embedded one.
    let tiny = format!("{TD}/tiny-apps.toml");
    let s = String::from_utf8_lossy(&floe(&["list", "apps", "--apps", tiny.as_str()]).stdout).to_string();
    assert!(s.lines().any(|l| l.starts_with("alpha")) && !s.contains("facebook"), "{s}");
}

/// `floe experiment NAME --quick --json`: it succeeds, names the experiment, and its runs.
/// Before the runs come the paper's findings, each a claim, a verdict and floe's
/// figures, every one of them found in the report (none n/a).
fn quick_experiment_runs(name: &str) -> Vec<serde_json::Value> {
    quick_experiment(name)["runs"].as_array().unwrap().clone()
}

/// `floe experiment NAME --quick --json`, checked as [`quick_experiment_runs`] says.
fn quick_experiment(name: &str) -> serde_json::Value {
    let out = floe(&["experiment", name, "--quick", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.find("\"findings\"") < text.find("\"runs\""), "findings first");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["experiment"], name);
    let findings = v["findings"].as_array().unwrap_or_else(|| panic!("{name}: no findings"));
    assert!(findings.len() >= 3, "{name}: {findings:?}");
    for f in findings {
        assert!(f["claim"].as_str().is_some_and(|c| c.contains('(')), "{name}: a claim says where the paper shows it: {f}");
        assert!(f["holds"].is_boolean(), "{f}");
        assert!(f["evidence"].as_str().is_some_and(|e| !e.is_empty() && !e.contains("n/a")), "{name}: {f}");
    }
    v
}

/// SmartLMK's and selective swap/kill's quick runs carry their papers' findings too,
/// and the text ends its tables with them: each verdict beside floe's figures.
#[test]
fn experiments_check_their_papers_findings() {
    for name in ["smartlmk", "selective"] {
        let runs = quick_experiment_runs(name);
        assert!(!runs.is_empty());
    }
    let out = floe(&["experiment", "smartlmk", "--quick"]);
    let t = String::from_utf8_lossy(&out.stdout);
    let head = t.lines().find(|l| l.starts_with("The paper's findings in floe's runs: ")).unwrap_or_else(|| panic!("{t}"));
    // The findings come first: the head line, then a verdict per finding (its lines
    // after the first indented further), up to the first blank line.
    let block: Vec<&str> = t.lines().skip_while(|l| !l.starts_with("The paper's findings")).skip(1).take_while(|l| !l.is_empty()).collect();
    let word = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let verdicts: Vec<&str> = block
        .iter()
        .copied()
        .filter(|l| !l.starts_with("   ") && ["matches", "direction", "no", "vacuous"].contains(&word(l).as_str()))
        .collect();
    let held = verdicts.iter().filter(|l| ["matches", "direction"].contains(&word(l).as_str())).count();
    assert!(!verdicts.is_empty() && head.contains(&format!("{held} of {} hold", verdicts.len())), "{head}");
    assert!(t.find(head).unwrap() < t.find("§6.3").unwrap_or(usize::MAX), "findings before the tables: {t}");
    assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
    let joined = block.iter().flat_map(|l| l.split_whitespace()).collect::<Vec<_>>().join(" ");
    assert!(joined.matches(" — floe: ").count() == verdicts.len(), "{block:?}");
}

/// `--seeds N` replicates an experiment: every run again with its seed moved by 1000,
/// each finding counted over the replicates (SmartLMK's benchmark draws only its launch
/// order from the seed: the replicates' drawn orders differ, its fixed order's runs
/// agree), the text's figures beside their spread; N = 0 is refused.
#[test]
fn experiments_replicate_over_seeds() {
    let out = floe(&["experiment", "smartlmk", "--quick", "--seeds", "2", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let once = quick_experiment_runs("smartlmk");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * once.len());
    let seeds = |rs: &[serde_json::Value]| rs.iter().map(|r| r["seed"].as_u64().unwrap()).collect::<Vec<_>>();
    let moved: Vec<u64> = seeds(&once).iter().map(|s| s + 1000).collect();
    assert_eq!(seeds(runs), [seeds(&once), moved].concat());
    for f in v["findings"].as_array().unwrap() {
        assert_eq!(f["seeds"].as_u64(), Some(2), "{f}");
        assert!(f["seeds_held"].as_u64().is_some_and(|h| h <= 2), "{f}");
    }
    let (first, second) = runs.split_at(once.len());
    let total = |r: &serde_json::Value| r["metrics"]["launch_ms_total"].as_f64().unwrap();
    let drawn = |r: &serde_json::Value| r["params"].get("shuffle_rounds").is_some();
    let pairs: Vec<(&serde_json::Value, &serde_json::Value)> = first.iter().zip(second).collect();
    assert!(pairs.iter().any(|(a, _)| drawn(a)) && pairs.iter().any(|(a, _)| !drawn(a)), "both orders run");
    for (a, b) in &pairs {
        assert_eq!(drawn(a), drawn(b));
        assert_eq!(total(a) == total(b), !drawn(a), "{} and {}: the drawn orders differ, the fixed one agrees", a["seed"], b["seed"]);
    }
    let text = String::from_utf8_lossy(&floe(&["experiment", "smartlmk", "--quick", "--seeds", "2"]).stdout).to_string();
    assert!(text.starts_with(&format!("experiment smartlmk — {} runs, 2 seeds", runs.len())), "{text}");
    assert!(text.lines().any(|l| l.trim_end().ends_with(" sd")), "an sd column: {text}");
    let bad = floe(&["experiment", "smartlmk", "--seeds", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--seeds"));
}

/// Several experiments named with commas run one after another: the text ends with
/// each one's count of findings that hold, --json is an array of experiment records.
/// Unknown or repeated names are refused before anything runs.
#[test]
fn experiments_run_together_and_count_their_findings() {
    let out = floe(&["experiment", "smartlmk,asap", "--quick", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v.as_array().unwrap().iter().map(|e| e["experiment"].as_str().unwrap()).collect();
    assert_eq!(names, ["smartlmk", "asap"]);
    let held = |e: &serde_json::Value| e["findings"].as_array().unwrap().iter().filter(|f| f["holds"] == true).count();
    let counts: Vec<(usize, usize)> = v.as_array().unwrap().iter().map(|e| (held(e), e["findings"].as_array().unwrap().len())).collect();
    let text = String::from_utf8_lossy(&floe(&["experiment", "smartlmk,asap", "--quick"]).stdout).to_string();
    assert!(text.starts_with("experiment smartlmk") && text.contains("\nexperiment asap"), "{text}");
    let tail = &text[text.rfind("The papers' findings in floe's runs:").unwrap_or_else(|| panic!("{text}"))..];
    for (name, (h, n)) in ["smartlmk", "asap"].iter().zip(&counts) {
        assert!(tail.lines().any(|l| l.trim_start().starts_with(name) && l.ends_with(&format!(" {h} of {n} hold"))), "{tail}");
    }
    let (h, n) = counts.iter().fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1));
    assert!(tail.lines().any(|l| l.trim_start().starts_with("in all") && l.ends_with(&format!(" {h} of {n} hold"))), "{tail}");
    for (name, why) in [("smartlmk,nope", "unknown experiment `nope`"), ("asap,asap", "named twice")] {
        let out = floe(&["experiment", name]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(why), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `floe experiment calibration --quick` re-runs every paper's controls: it succeeds and
/// shows a table for each paper, a verdict for each control the paper gives a figure
/// for, and "(no figure)" for the others; it is listed among the experiments.
#[test]
fn calibration_reruns_every_papers_controls() {
    let out = floe(&["experiment", "calibration", "--quick"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.starts_with("experiment calibration — "), "{t}");
    for paper in ["Ice", "SEAL", "SmartLMK", "ASAP", "Selective"] {
        assert!(t.lines().any(|l| l.starts_with(&format!("{paper} ("))), "no table for {paper}: {t}");
    }
    assert!(t.lines().any(|l| l.contains("Ice BG-null: S-A fps (Fig. 1(a)) within ±15 % of the paper's 42.20 — floe: ")), "{t}");
    assert!(t.contains("Selective original Android: A1 mean launch ms (Figs. 5-9) (no figure)"), "{t}");
    let list = String::from_utf8_lossy(&floe(&["list", "experiments"]).stdout).to_string();
    assert!(list.lines().any(|l| l.starts_with("calibration ") && l.contains("not part of `all`")), "{list}");
}

#[test]
fn experiment_ice_quick_json_has_the_contract_shape() {
    let v = quick_experiment("ice");
    // Ice+'s findings are judged with the phones' own killers and show the what-if
    // killer's share beside the verdict.
    let ice_plus: Vec<&serde_json::Value> =
        v["findings"].as_array().unwrap().iter().filter(|f| f["claim"].as_str().unwrap().starts_with("Ice+ ")).collect();
    assert_eq!(ice_plus.len(), 2, "{ice_plus:?}");
    for f in ice_plus {
        let e = f["evidence"].as_str().unwrap();
        assert!(
            e.starts_with("ice-plus's share of ice's ") && e.contains(" %; both phones with lmkd's default PSI mode (Table 6 what-if): "),
            "{e}"
        );
    }
    let runs = v["runs"].as_array().unwrap();
    for p in ["lru-cfs", "ucsg", "acclaim", "power-freezer", "ice", "ice-plus"] {
        assert!(runs.iter().any(|r| r["policy"] == p && r["device"] == "pixel3"), "{p} on pixel3");
        assert!(runs.iter().any(|r| r["policy"] == p && r["device"] == "p20"), "{p} on p20");
        // §6.1.2's launch experiment: Table 3's 20 apps, 3 rounds when quick.
        assert!(
            runs.iter().any(|r| r["policy"] == p
                && r["workload"] == "ice-launch"
                && r["metrics"]["launches_cold"].as_u64().unwrap() + r["metrics"]["launches_warm"].as_u64().unwrap() == 60),
            "{p} launches"
        );
    }
    assert!(runs.iter().all(|r| r["metrics"]["fps"].is_number()));
    let out = floe(&["experiment", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown experiment"));
}

#[test]
fn experiment_seal_quick_json_has_the_contract_shape() {
    let runs = &quick_experiment_runs("seal");
    for p in ["android-lmk", "zswap", "llr", "llr-hpl", "seal"] {
        assert!(runs.iter().any(|r| r["policy"] == p && r["device"] == "hikey970" && r["params"].get("policy_params").is_none()), "{p}");
    }
    // The sweeps are SEAL runs that carry their parameters.
    assert!(runs.iter().any(|r| r["policy"] == "seal" && r["params"]["policy_params"] == "k=1"));
    // Fig. 12's runs: 10 to 1,000 Monkey events per app at 20 a second, marked by use_s.
    for use_s in [0.5, 5.0, 50.0] {
        assert!(runs.iter().any(|r| r["policy"] == "zswap" && r["params"]["use_s"] == use_s), "{use_s}");
    }
    assert!(runs.iter().all(|r| r["metrics"]["caching_capability"].is_number() && r["metrics"]["interaction_alerts"].is_number()));
}

#[test]
fn policy_parameters_are_checked() {
    let out = floe(&["sim", "--workload", "seal-30apps", "--policy", "seal:k=9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`k` must be 1..=7"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = floe(&["sim", "--policy", "ice:k=2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("takes no parameters"));
    let out = floe(&["sim", "--policy", "lru-cfs,ice,lru-cfs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names `lru-cfs` twice"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn experiment_asap_quick_json_reports_precision_and_recall() {
    let runs = &quick_experiment_runs("asap");
    // Every run is one sequence under the pressure balloon (Fig. 2.1's switches are made
    // apart and are no runs of the list).
    for dev in ["pixel4", "pixel3a"] {
        for p in ["demand-paging", "asap-anon", "asap-file", "asap"] {
            let of = |r: &&serde_json::Value| r["policy"] == p && r["device"] == dev;
            assert_eq!(runs.iter().filter(of).count(), 3, "{p} on {dev}: three sequences");
            assert!(runs.iter().filter(of).all(|r| r["params"]["balloon_mib"].as_f64().is_some_and(|b| b > 0.0)), "{p} on {dev}");
        }
    }
    for r in runs {
        let prepages = r["policy"] != "demand-paging";
        assert_eq!(r["metrics"]["prepage_precision"].is_number(), prepages, "{}", r["policy"]);
        assert_eq!(r["metrics"]["prepage_recall"].is_number(), prepages, "{}", r["policy"]);
    }
}

#[test]
fn daemon_check_passes_on_this_machine_and_the_sample_config_is_valid() {
    let out = floe(&["daemon", "--check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for m in ["freezer", "pidfd kill", "psi trigger", "refault counters"] {
        assert!(text.lines().any(|l| l.starts_with("ok") && l.contains(m)), "{m} not ok:\n{text}");
    }
    let out = floe(&["daemon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --config FILE"));
    // Both faces of the daemon say how it stops and logs.
    for help in [floe(&["daemon", "--help"]), Command::new(env!("CARGO_BIN_EXE_floed")).arg("--help").output().unwrap()] {
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(
            help.status.success() && text.contains("Stops on SIGTERM, SIGINT or SIGHUP") && text.contains("never stalls the killer"),
            "{text}"
        );
    }
    // The sample config in the repository is valid and --check accepts it.
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../packaging/floe.toml");
    let out = floe(&["daemon", "--check", "--config", sample]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = floe(&["daemon", "--check", "--policy", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    // Per policy, what it does not need is marked optional: Ice+ pages out with
    // process_madvise, Ice does not; ASAP's file estimator needs no page-idle tracking.
    let line = |policy: &str, m: &str| {
        let out = floe(&["daemon", "--check", "--policy", policy]);
        assert!(out.status.success(), "{policy}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().find(|l| l.contains(m)).unwrap_or_else(|| panic!("{policy}: no {m} line")).to_string()
    };
    assert!(!line("ice-plus", "process_madvise").contains("optional"));
    assert!(line("ice", "process_madvise").contains("optional"));
    let asap = floe(&["daemon", "--check", "--policy", "asap"]);
    assert!(
        asap.status.success() && !String::from_utf8_lossy(&asap.stdout).contains("page idle"),
        "{}",
        String::from_utf8_lossy(&asap.stdout)
    );
    assert!(!line("asap", "readahead").contains("optional"));
    // SEAL's levels the daemon does not drive: --check fails as the start would, for
    // that reason, whatever the kernel offers.
    for policy in ["seal", "llr", "llr-hpl"] {
        let out = floe(&["daemon", "--check", "--policy", policy]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains("the daemon refuses it whatever the kernel offers"), "{policy}: {err}");
    }
}

#[test]
fn state_set_checks_its_input_and_show_prints_it_back() {
    let dir = std::env::temp_dir().join(format!("floe-state-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("state.db");
    let db = db.to_str().unwrap();
    let out = floe(&["state", "--db", db]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("no state database"));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\n  \"launch_seq\": 1,\n  oops\n}\n").unwrap();
    let out = floe(&["state", "--db", db, "smartlmk", "--set", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("bad.json:3"), "{err}");
    let out = floe(&["state", "--db", db, "no-such-policy", "--set", bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown policy"));
    // A state the daemon would log and drop at its next start is refused too.
    let alien = dir.join("alien.json");
    std::fs::write(&alien, "{\"x\": 1}\n").unwrap();
    for policy in ["smartlmk", "lru-cfs"] {
        let out = floe(&["state", "--db", db, policy, "--set", alien.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains("not a state the daemon would restore"), "{policy}: {err}");
    }
    assert!(!std::path::Path::new(db).exists(), "a refused --set creates no database");
    let good = dir.join("good.json");
    std::fs::write(&good, "{\"launch_seq\": 3, \"apps\": {}}\n").unwrap();
    assert!(floe(&["state", "--db", db, "smartlmk", "--set", good.to_str().unwrap()]).status.success());
    let out = floe(&["state", "--db", db]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.starts_with("smartlmk (saved at unix ") && shown.contains("{\"launch_seq\": 3, \"apps\": {}}"), "{shown}");
    let out = floe(&["state", "--db", db, "no-such-policy"]);
    assert!(out.status.code() == Some(2) && String::from_utf8_lossy(&out.stderr).contains("unknown policy"));
    let out = floe(&["state", "--db", db, "ice"]);
    assert!(out.status.success() && out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).contains("no saved state for `ice`"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--bg-apps N` caches the first N of an Ice workload's fixed set (Fig. 1's apps);
/// `--draw-bg` draws them from the pool with the seed instead. The run says which.
#[test]
fn draw_bg_replaces_the_workloads_fixed_background_set() {
    let run = |extra: &[&str]| {
        let mut args = vec!["sim", "--workload", "ice-video-call", "--bg-apps", "2", "--policy", "lru-cfs", "--json"];
        args.extend_from_slice(extra);
        let out = floe(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v["params"]["bg_set"].as_str().unwrap().to_string(), v["params"]["bg_fixed"].as_bool().unwrap())
    };
    assert_eq!(run(&[]), ("twitter,amazon".to_string(), true));
    let (drawn, fixed) = run(&["--draw-bg", "--seed", "2"]);
    assert!(!fixed && drawn != "twitter,amazon" && drawn.split(',').count() == 2, "{drawn}");
    assert_eq!(run(&["--draw-bg", "--seed", "2"]).0, drawn, "the same seed draws the same apps");
}

/// A workload file's `device` names a device file relative to the workload's own
/// directory, wherever floe runs from; one that cannot be found is an error at that line.
#[test]
fn a_workloads_device_file_is_found_beside_it() {
    let _shared = crate::shared();
    let (wl, apps) = (format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let out = Command::new(env!("CARGO_BIN_EXE_floe")).current_dir("/").args(["sim", "--workload", &wl, "--apps", &apps]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The table's first line says which inputs came from files.
    let head = String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_string();
    assert!(head.contains(&format!(" (from {wl})")) && head.contains(&format!("apps from {apps}")), "{head}");
    let head = String::from_utf8_lossy(&floe(&["sim", "--device", "p20"]).stdout).lines().next().unwrap_or_default().to_string();
    assert!(head.starts_with("device p20  workload ice-video-call  seed 1") && !head.contains("from"), "{head}");
    let dir = std::env::temp_dir().join(format!("floe-cli-wdev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(&wl).unwrap();
    let line = text.lines().position(|l| l.starts_with("device =")).unwrap() + 1;
    let bad = dir.join("w.toml");
    let moved: Vec<String> =
        text.lines().map(|l| if l.starts_with("device =") { "device = \"nosuch.toml\"".into() } else { l.to_string() }).collect();
    std::fs::write(&bad, moved.join("\n")).unwrap();
    let out = floe(&["sim", "--workload", bad.to_str().unwrap(), "--apps", &apps]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(2) && err.contains(&format!("w.toml:{line}: field `device`")), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On the Galaxy Nexus, whose kills free memory as the victims' exits run, `floe sim`
/// says how fast each policy's kills freed it, SmartLMK's also by kill decision; a device
/// that frees a victim's memory at once says nothing of it.
#[test]
fn sim_on_a_device_with_exits_says_how_fast_kills_freed_memory() {
    let out = floe(&["sim", "--workload", "smartlmk-256", "--policy", "android-lmk,smartlmk"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line =
        text.lines().find(|l| l.starts_with("killed apps' memory freed as their exits ran, MiB/s: ")).unwrap_or_else(|| panic!("{text}"));
    let (vanilla, smart) = line.split_once("; ").unwrap_or_else(|| panic!("{line}"));
    let speed = |s: &str| s.split_whitespace().nth(1).and_then(|x| x.parse::<f64>().ok()).unwrap_or_else(|| panic!("{line}"));
    assert!(vanilla.contains("android-lmk ") && speed(vanilla.rsplit(": ").next().unwrap()) > 0.0, "{line}");
    assert!(smart.starts_with("smartlmk ") && smart.contains(" a victim, ") && smart.ends_with(" a kill decision"), "{line}");
    let p20 = String::from_utf8_lossy(&floe(&["sim", "--device", "p20", "--policy", "lru-cfs"]).stdout).to_string();
    assert!(p20.lines().any(|l| l.starts_with("kills ")) && !p20.contains("exits ran"), "{p20}");
}

/// The main job: `floe sim` alone runs Ice's video call under the stock policy and
/// Ice side by side, leaves out the rows that are 0 in both, and ends with one line
/// saying what Ice changed and a legend; `--policy` runs the policies named, with every
/// row and nothing after the table.
#[test]
fn the_main_job_shows_the_baseline_beside_the_scheme_and_what_changed() {
    let out = floe(&["sim"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("device p20  workload ice-video-call  seed 1"), "{text}");
    let head: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(head, ["metric", "lru-cfs", "ice"], "{text}");
    let row =
        |m: &str| lines.iter().find(|l| l.split_whitespace().next() == Some(m)).map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>());
    let fps = row("fps").unwrap_or_else(|| panic!("{text}"));
    assert!(fps.len() == 2 && fps.iter().all(|c| c.parse::<f64>().is_ok_and(|f| f > 0.0)), "{text}");
    assert!(row("freezes").is_some_and(|c| c[0] == "0" && c[1] != "0"), "Ice freezes cached apps, LRU+CFS does not: {text}");
    assert!(row("prepage_recall").is_none() && row("launches_warm").is_none(), "rows 0 or empty in both are left out: {text}");
    let summary = lines.iter().find(|l| l.starts_with("What ice changed against lru-cfs: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(summary.contains("freezes 0 -> ") && summary.contains("background refaults "), "{summary}");
    assert!(lines.iter().any(|l| l.starts_with("fps: ") && l.contains("ria: ")), "a legend under the table: {text}");
    let one = String::from_utf8_lossy(&floe(&["sim", "--policy", "lru-cfs"]).stdout).to_string();
    let head: Vec<&str> = one.lines().nth(1).unwrap_or_default().split_whitespace().collect();
    assert_eq!(head, ["metric", "lru-cfs"], "{one}");
    assert!(one.lines().any(|l| l.starts_with("prepage_recall ")) && !one.contains("What ") && !one.contains("ria: "), "{one}");
    let col =
        |t: &str, m: &str| t.lines().find(|l| l.starts_with(&format!("{m} "))).and_then(|l| l.split_whitespace().nth(1)).map(String::from);
    assert_eq!(col(&one, "fps"), col(&text, "fps"), "the baseline's column is its run alone");
}

/// A run that renders no frame (a launch-only workload) shows no frame rate in the
/// table, while its JSON keeps the schema's numbers.
#[test]
fn a_frameless_run_shows_no_frame_rate() {
    let out = floe(&["sim", "--workload", "selective-a1", "--policy", "android-lmk"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let cell = |m: &str| text.lines().find(|l| l.starts_with(&format!("{m} "))).map(|l| l.split_whitespace().last().unwrap().to_string());
    assert_eq!((cell("frames").as_deref(), cell("fps").as_deref(), cell("ria").as_deref()), (Some("0"), Some("-"), Some("-")), "{text}");
    let v: serde_json::Value =
        serde_json::from_slice(&floe(&["sim", "--workload", "selective-a1", "--policy", "android-lmk", "--json"]).stdout).unwrap();
    assert_eq!(v["metrics"]["fps"].as_f64(), Some(0.0));
    let text = String::from_utf8_lossy(&floe(&["sim"]).stdout).to_string();
    assert!(text.lines().any(|l| l.starts_with("fps ") && !l.ends_with('-')), "{text}");
}

/// `--shuffle-rounds` reaches the run (its params say so) and changes what happens.
/// `floe sim --json` on the tiny device, workload and apps with `extra` arguments: the
/// run's record.
fn tiny_json(extra: &[&str]) -> serde_json::Value {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let mut args = vec!["sim", "--device", dev.as_str(), "--workload", wl.as_str(), "--apps", apps.as_str(), "--json"];
    args.extend_from_slice(extra);
    let out = floe(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
}

#[test]
fn shuffle_rounds_is_passed_to_the_run_and_recorded() {
    let (listed, shuffled) = (tiny_json(&[]), tiny_json(&["--shuffle-rounds"]));
    assert!(listed["params"].get("shuffle_rounds").is_none());
    assert_eq!(shuffled["params"]["shuffle_rounds"], serde_json::Value::Bool(true));
    assert_ne!(listed["metrics"], shuffled["metrics"], "another order, another run");
}

#[test]
fn lmkd_overrides_the_devices_killer_and_is_recorded() {
    // The tiny device's file keeps the default (minfree), which a run does not record.
    assert!(tiny_json(&[])["params"].get("lmkd").is_none());
    assert!(tiny_json(&["--lmkd", "minfree"])["params"].get("lmkd").is_none());
    assert_eq!(tiny_json(&["--lmkd", "psi"])["params"]["lmkd"], serde_json::Value::String("psi".into()));
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let out = floe(&["sim", "--device", dev.as_str(), "--workload", wl.as_str(), "--apps", apps.as_str(), "--lmkd", "vmpressure"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("vmpressure") && err.contains("minfree") && err.contains("psi"), "{err}");
}

#[test]
fn timeline_writes_one_csv_row_per_step_for_each_policy() {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let tiny = ["sim", "--device", dev.as_str(), "--workload", wl.as_str(), "--apps", apps.as_str()];
    let dir = std::env::temp_dir().join(format!("floe-cli-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tl.csv");
    let p = path.to_str().unwrap();
    let out = floe(&[&tiny[..], &["--policy", "lru-cfs,android-lmk", "--timeline", p, "--timeline-step", "2"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("reclaimed_pages"), "the metrics table is still printed");
    let csv = std::fs::read_to_string(&path).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "policy",
        "t_s",
        "measured",
        "fg_app",
        "frames",
        "fps",
        "free_mib",
        "zram_pool_mib",
        "writeback_mib",
        "reclaimed_pages",
        "refaults_bg_anon",
        "kills",
    ] {
        assert!(header.contains(&col), "column {col} missing from {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let t = header.iter().position(|c| *c == "t_s").unwrap();
    let of = |pol: &str| rows.iter().filter(|r| r[0] == pol).map(|r| r[t].parse::<f64>().unwrap()).collect::<Vec<_>>();
    let (a, b) = (of("lru-cfs"), of("android-lmk"));
    assert!(a.len() > 5 && b.len() > 5 && a.len() + b.len() == rows.len());
    assert_eq!(rows[0][0], "lru-cfs", "policies follow one another in the order asked");
    assert_eq!(rows[a.len()][0], "android-lmk");
    for ts in [&a, &b] {
        assert_eq!(ts[0], 2.0);
        assert!(ts.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 2.0 + 1e-9), "{ts:?}");
    }
    // `-`: the CSV alone on standard output, the same rows.
    let out = floe(&[&tiny[..], &["--policy", "lru-cfs", "--timeline", "-", "--timeline-step", "2"]].concat());
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let expect: Vec<&str> = csv.lines().take(1 + a.len()).collect();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expect);
    // Bad uses are errors that say what is wrong.
    let err = |args: &[&str]| {
        let out = floe(&[&tiny[..], args].concat());
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(err(&["--timeline", "-", "--json"]).contains("--json"));
    let missing = dir.join("no-such-dir/tl.csv");
    assert!(err(&["--timeline", missing.to_str().unwrap()]).contains("no-such-dir/tl.csv"));
    assert!(err(&["--timeline", p, "--timeline-step", "0"]).contains("--timeline-step"));
    assert!(err(&["--timeline", p, "--timeline-step", "inf"]).contains("finite"));
    assert!(err(&["--timeline-step", "2"]).contains("--timeline"));
    // A device that takes no writes: the error names it (and the run stops there).
    assert!(err(&["--timeline", "/dev/full"]).contains("cannot write the timeline to /dev/full"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--csv FILE` writes the runs beside the usual output: a header, then one row per
/// run whose cells are the JSON's figures (`floe sim`), or every run of the experiment
/// (`floe experiment`).
#[test]
fn csv_has_one_row_per_run_with_the_jsons_figures() {
    let (dev, wl, apps) = (format!("{TD}/tiny-device.toml"), format!("{TD}/tiny-workload.toml"), format!("{TD}/tiny-apps.toml"));
    let path = std::env::temp_dir().join(format!("floe-csv-{}.csv", std::process::id()));
    let p = path.to_str().unwrap();
    let args = ["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--policy", "lru-cfs,android-lmk"];
    let out = floe(&[&args[..], &["--json", "--csv", p]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "{text}");
    let col = |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}: {head:?}"));
    for (i, run) in json.as_array().unwrap().iter().enumerate() {
        assert_eq!(rows[i][col("policy")], *run["policy"].as_str().unwrap());
        for m in ["fps", "reclaimed_pages", "launch_ms_mean"] {
            let cell: f64 = rows[i][col(m)].parse().unwrap();
            assert_eq!(cell, run["metrics"][m].as_f64().unwrap(), "{m}");
        }
    }
    let out = floe(&["experiment", "smartlmk", "--quick", "--csv", p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    let runs = quick_experiment_runs("smartlmk");
    assert_eq!(text.lines().count(), runs.len() + 1, "a header and a row per run");
    std::fs::remove_file(&path).unwrap();
    let bad = floe(&["sim", "--device", &dev, "--workload", &wl, "--apps", &apps, "--csv", "/nonexistent/dir/x.csv"]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("cannot write the CSV to /nonexistent/dir/x.csv"));
}

/// On a terminal an experiment shows a progress bar on stderr (runs done of all, time
/// left); with --json, none. The terminal is a pseudo-terminal from util-linux's
/// `script`, which the tests' machines have.
#[test]
fn a_progress_bar_shows_on_a_terminal_and_not_with_json() {
    let _shared = crate::shared();
    let bin = env!("CARGO_BIN_EXE_floe");
    let on_tty = |args: &str| {
        let out = Command::new("script")
            .args(["-qec", &format!("{bin} experiment smartlmk --quick {args}"), "/dev/null"])
            .env("FLOE_CACHE_DIR", "")
            .output()
            .expect("util-linux script");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = on_tty("");
    assert!(text.contains("experiment smartlmk [") && text.contains(" runs, "), "no bar: {text}");
    let json = on_tty("--json");
    assert!(!json.contains("experiment smartlmk [") && !json.contains(" runs, "), "a bar with --json");
    assert!(json.contains("\"experiment\": \"smartlmk\""), "{json}");
}

/// An experiment keeps each finished run in its cache: run again it takes them from
/// there and prints the same report; stopped part-way (runs missing from the cache) it
/// makes only the missing ones. `--no-cache` keeps none, and a cache that cannot be
/// made is an error naming it.
#[test]
fn an_experiment_takes_its_finished_runs_from_the_cache() {
    let dir = std::env::temp_dir().join(format!("floe-run-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = floe(&[&["experiment", "smartlmk", "--quick"][..], args].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (fresh, err) = run(&["--json", "--cache", cache]);
    assert!(!err.contains("run cache"), "nothing to take yet: {err}");
    let build = std::fs::read_dir(&dir).unwrap().next().expect("a directory for this build").unwrap().path();
    let mut kept: Vec<_> =
        std::fs::read_dir(&build).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    let runs = kept.len();
    assert!(runs >= 10, "every distinct run kept: {runs}");
    let (again, _) = run(&["--json", "--cache", cache]);
    assert_eq!(again, fresh, "the cached runs give the same report");
    // A run stopped part-way: some runs never finished.
    kept.sort();
    for p in &kept[..3] {
        std::fs::remove_file(p).unwrap();
    }
    let (text, err) = run(&["--cache", cache]);
    assert!(err.contains(&format!("experiment smartlmk: {} runs taken from the run cache", runs - 3)), "{err}");
    let (plain, _) = run(&[]);
    assert_eq!(text, plain, "the same text as without a cache");
    std::fs::remove_dir_all(&dir).unwrap();
    // FLOE_CACHE_DIR is the default place, and --no-cache keeps nothing there.
    let with_env = |args: &[&str]| {
        let _shared = crate::shared();
        let out = Command::new(env!("CARGO_BIN_EXE_floe"))
            .args(["experiment", "smartlmk", "--quick", "--json"])
            .args(args)
            .env("FLOE_CACHE_DIR", &dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    with_env(&["--no-cache"]);
    assert!(!dir.exists(), "--no-cache makes no cache");
    with_env(&[]);
    assert!(dir.exists(), "FLOE_CACHE_DIR names the cache");
    std::fs::remove_dir_all(&dir).unwrap();
    // A mistyped name is an error before the cache is made.
    let out =
        Command::new(env!("CARGO_BIN_EXE_floe")).args(["experiment", "smartlmkk", "--quick"]).env("FLOE_CACHE_DIR", &dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown experiment `smartlmkk`"));
    assert!(!dir.exists(), "a bad name makes no cache");
    let out = floe(&["experiment", "smartlmk", "--quick", "--cache", "/proc/floe-cache"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot keep runs in /proc/floe-cache"), "{err}");
}

/// Where stderr is not a terminal, an experiment says how far its runs are in plain
/// lines, one a period (FLOE_HEARTBEAT_S; a minute by default), with the time left at
/// the pace so far, and stdout keeps only the report; with --json, no line.
#[test]
fn off_a_terminal_an_experiment_prints_a_heartbeat_line_instead_of_a_bar() {
    let _shared = crate::shared();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_floe"))
            .args(["experiment", "smartlmk", "--quick"])
            .args(args)
            .env("FLOE_HEARTBEAT_S", "0")
            .env("FLOE_CACHE_DIR", "")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (stdout, stderr) = run(&[]);
    let beats: Vec<&str> = stderr.lines().filter(|l| l.starts_with("experiment smartlmk: ") && l.contains(" runs done, ")).collect();
    assert!(beats.len() > 1 && !stderr.contains('['), "{stderr}");
    let last = beats.last().unwrap().split_whitespace().nth(2).unwrap().split_once('/').unwrap();
    assert_eq!(last.0, last.1, "the last line counts every run: {stderr}");
    assert!(beats.last().unwrap().ends_with(", about 0 s left at this pace"), "{stderr}");
    assert!(beats.iter().all(|l| l.contains(" left at this pace")), "{stderr}");
    assert!(!stdout.contains("runs done"), "the heartbeat is on stderr only");
    let (_, stderr) = run(&["--json"]);
    assert!(!stderr.contains("runs done"), "{stderr}");
}

/// `--trace FILE` writes the runs in the Chrome trace-event format: one process per
/// policy, the foreground's slices, counter tracks and, where the policy froze apps,
/// instants; every event has the fields its phase needs.
#[test]
fn trace_is_chrome_trace_json_with_a_process_per_policy() {
    let path = std::env::temp_dir().join(format!("floe-trace-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let out = floe(&["sim", "--policy", "lru-cfs,ice", "--trace", p]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let ev = v["traceEvents"].as_array().expect("a traceEvents array");
    let names: Vec<&str> =
        ev.iter().filter(|e| e["ph"] == "M" && e["name"] == "process_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["floe sim: lru-cfs", "floe sim: ice"]);
    for e in ev {
        let ph = e["ph"].as_str().unwrap();
        assert!(e["pid"].as_u64().is_some() && e["name"].is_string(), "{e}");
        match ph {
            "X" => assert!(e["ts"].as_f64().is_some() && e["dur"].as_f64().is_some_and(|d| d >= 0.0), "{e}"),
            "C" | "i" => assert!(e["ts"].as_f64().is_some() && e["args"].is_object(), "{e}"),
            "M" => {}
            other => panic!("phase {other}: {e}"),
        }
    }
    let slices: Vec<&str> = ev.iter().filter(|e| e["ph"] == "X").map(|e| e["name"].as_str().unwrap()).collect();
    assert!(slices.contains(&"whatsapp"), "the call's foreground span: {slices:?}");
    for track in ["memory MiB", "fps", "reclaimed pages", "refaults"] {
        assert!(ev.iter().any(|e| e["ph"] == "C" && e["name"] == track), "no {track} counter");
    }
    assert!(ev.iter().any(|e| e["ph"] == "i" && e["pid"] == 2 && e["args"]["freezes"].as_u64() > Some(0)), "ice's freezes");
    // A track per app under each policy: the call's own launch, Ice's freezes of the
    // cached apps, and a slice name for each kind only where it belongs.
    for pid in [1, 2] {
        let threads: Vec<(u64, &str)> = ev
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid)
            .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap()))
            .collect();
        assert_eq!(&threads[..2], [(1, "foreground"), (2, "direct reclaim")], "{threads:?}");
        assert!(threads.len() > 2 + 8, "a track for the call and each of the 8 cached apps: {threads:?}");
        let tid_of = |app: &str| threads.iter().find(|t| t.1 == app).map(|t| t.0);
        let on =
            |tid: Option<u64>, name: &str| ev.iter().filter(|e| e["pid"] == pid && e["tid"].as_u64() == tid && e["name"] == name).count();
        assert_eq!(on(tid_of("whatsapp"), "cold launch"), 1, "the call's launch on its track");
        // The call's frames, each a slice on its track: 300 s at about 30 fps with the
        // eight apps' reclaim blocking the render thread, some of them alerts.
        let frames = on(tid_of("whatsapp"), "frame") + on(tid_of("whatsapp"), "frame (alert)");
        assert!(frames > 8_000 && on(tid_of("whatsapp"), "frame (alert)") > 0, "{frames} frames");
        assert!(ev.iter().filter(|e| e["pid"] == pid && e["name"] == "frame").all(|e| e["tid"].as_u64() == tid_of("whatsapp")));
        let frozen = ev.iter().filter(|e| e["pid"] == pid && e["ph"] == "X" && e["name"] == "frozen").count();
        assert_eq!(frozen > 0, pid == 2, "only Ice freezes apps: {frozen} spans under pid {pid}");
        for e in ev
            .iter()
            .filter(|e| e["pid"] == pid && ["cold launch", "warm launch", "frozen", "killed"].contains(&e["name"].as_str().unwrap()))
        {
            assert!(e["tid"].as_u64() >= Some(10), "an app's slice on an app's track: {e}");
        }
        for e in ev.iter().filter(|e| e["pid"] == pid && e["name"] == "direct reclaim") {
            assert!(e["ph"] == "X" && e["tid"] == 2 && e["args"]["pages"].as_u64() > Some(0), "{e}");
        }
    }
}
