//! Parsers for the kernel files a policy observes: /proc/meminfo, pressure files
//! (/proc/pressure/memory, a cgroup's memory.pressure), memory.stat, /proc/stat and
//! /proc/PID/smaps_rollup, and whether /sys/class/power_supply says the machine is
//! plugged in. Pure functions over text (and one over a directory), tested on fixtures.

use crate::{Error, Result};
use std::collections::BTreeMap;

/// `key: value kB` lines (meminfo, smaps_rollup, /proc/PID/status) as bytes; other
/// lines are skipped.
pub fn parse_kb_table(path: &str, text: &str) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        if k.contains(char::is_whitespace) {
            // Not a `Key: value` line (smaps_rollup's address header).
            continue;
        }
        let mut it = v.split_whitespace();
        let (Some(n), unit) = (it.next(), it.next()) else { continue };
        let Ok(n) = n.parse::<u64>() else { continue };
        let mult = match unit {
            Some("kB") => 1024,
            None => 1,
            // Several numbers on one line (/proc/PID/status's Uid:, Gid:): not a size.
            Some(u) if u.starts_with(|c: char| c.is_ascii_digit()) => continue,
            Some(u) => return Err(Error::Parse { path: path.into(), detail: format!("unit `{u}` of `{k}`") }),
        };
        out.insert(k.trim().to_string(), n * mult);
    }
    Ok(out)
}

/// The values of `keys` in `Key: value [kB]` lines (/proc/meminfo, /proc/PID/status),
/// in bytes where the unit is kB; 0 for a key not there.
pub fn kb_fields<const N: usize>(text: &str, keys: [&str; N]) -> [u64; N] {
    let mut out = [0; N];
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let Some(i) = keys.iter().position(|&w| w == k) else { continue };
        let mut it = v.split_whitespace();
        let n = it.next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        out[i] = if it.next() == Some("kB") { n * 1024 } else { n };
    }
    out
}

/// The values of `keys` in `key value` lines (memory.stat, /proc/vmstat); 0 for a key
/// not there.
pub fn flat_fields<const N: usize>(text: &str, keys: [&str; N]) -> [u64; N] {
    let mut out = [0; N];
    for line in text.lines() {
        let Some((k, v)) = line.split_once(' ') else { continue };
        if let Some(i) = keys.iter().position(|&w| w == k) {
            out[i] = v.trim().parse().unwrap_or(0);
        }
    }
    out
}

/// One line of a PSI file.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Total stall time in microseconds.
    pub total_us: u64,
}

/// A PSI file: `some` and (for memory and io) `full`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Psi {
    pub some: PsiLine,
    pub full: Option<PsiLine>,
}

pub fn parse_psi(path: &str, text: &str) -> Result<Psi> {
    let mut psi = Psi::default();
    let mut seen_some = false;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let kind = it.next();
        let mut l = PsiLine::default();
        for kv in it {
            let (k, v) = kv.split_once('=').ok_or_else(|| Error::Parse { path: path.into(), detail: format!("`{kv}`") })?;
            let bad = || Error::Parse { path: path.into(), detail: format!("`{kv}`") };
            match k {
                "avg10" => l.avg10 = v.parse().map_err(|_| bad())?,
                "avg60" => l.avg60 = v.parse().map_err(|_| bad())?,
                "avg300" => l.avg300 = v.parse().map_err(|_| bad())?,
                "total" => l.total_us = v.parse().map_err(|_| bad())?,
                _ => {}
            }
        }
        match kind {
            Some("some") => {
                psi.some = l;
                seen_some = true;
            }
            Some("full") => psi.full = Some(l),
            _ => {}
        }
    }
    if !seen_some {
        return Err(Error::Parse { path: path.into(), detail: "no `some` line".into() });
    }
    Ok(psi)
}

/// `key value` lines (cgroup memory.stat, /proc/vmstat).
pub fn parse_flat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// Workingset refaults of a memory cgroup or of the system: (anonymous, file). Kernels
/// before 5.9 have one `workingset_refault` counter: it is reported as file refaults.
pub fn refaults(stat: &BTreeMap<String, u64>) -> (u64, u64) {
    match (stat.get("workingset_refault_anon"), stat.get("workingset_refault_file")) {
        (Some(&a), Some(&f)) => (a, f),
        _ => (0, stat.get("workingset_refault").copied().unwrap_or(0)),
    }
}

/// The aggregate `cpu` line of /proc/stat: (busy + iowait, total) in ticks, SmartLMK's
/// launch tracker input.
pub fn parse_cpu_line(path: &str, text: &str) -> Result<(u64, u64)> {
    let line =
        text.lines().find(|l| l.starts_with("cpu ")).ok_or_else(|| Error::Parse { path: path.into(), detail: "no `cpu` line".into() })?;
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|x| x.parse().unwrap_or(0)).collect();
    if v.len() < 4 {
        return Err(Error::Parse { path: path.into(), detail: format!("`{line}`") });
    }
    // user nice system idle iowait irq softirq steal ...
    let total: u64 = v.iter().take(8).sum();
    let idle = v[3];
    Ok((total - idle, total))
}

/// The active swap devices of /proc/swaps: each one's name (a path) and whether it is
/// zram (compressed RAM) rather than a partition or file on storage.
pub fn parse_swaps(text: &str) -> Vec<(String, bool)> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|name| (name.to_string(), name.rsplit('/').next().is_some_and(|n| n.starts_with("zram"))))
        .collect()
}

/// Whether the machine runs on external power, from a /sys/class/power_supply tree at
/// `dir`: a mains, USB or wireless supply `online`, or a battery `Charging` or `Full`.
/// No power supply at all (a server, a VM) counts as on battery, so a power manager's
/// schedule runs there as on an unplugged phone.
pub fn on_external_power(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().any(|e| {
        let get = |f: &str| std::fs::read_to_string(e.path().join(f)).map(|v| v.trim().to_string()).unwrap_or_default();
        match get("type").as_str() {
            "Battery" => matches!(get("status").as_str(), "Charging" | "Full"),
            "" => false,
            _ => get("online") == "1",
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_devices_are_listed_with_their_kind() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0                              partition\t262140\t\t0\t\t100\n/swapfile                               file\t\t2097148\t\t0\t\t-2\n";
        assert_eq!(parse_swaps(text), vec![("/dev/zram0".to_string(), true), ("/swapfile".to_string(), false)]);
        assert!(parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n").is_empty());
    }

    #[test]
    fn meminfo_and_smaps_rollup() {
        let m = parse_kb_table("meminfo", "MemTotal:       24591312 kB\nMemFree:         1000 kB\nHugePages_Total:       0\n").unwrap();
        assert_eq!(m["MemTotal"], 24591312 * 1024);
        assert_eq!(m["MemFree"], 1024 * 1000);
        assert_eq!(m["HugePages_Total"], 0);
        let r = parse_kb_table("smaps_rollup", "55a0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:  2048 kB\nSwap:   4 kB\n").unwrap();
        assert_eq!((r["Rss"], r["Swap"]), (2 << 20, 4096));
        assert!(parse_kb_table("x", "A: 1 MB\n").is_err());
        // /proc/PID/status mixes sizes with names, id lists and masks.
        let st = "Name:\tpython3\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\nGroups:\t\nVmRSS:\t   96112 kB\nVmSwap:\t       8 kB\nCpus_allowed_list:\t0-1\n";
        let st = parse_kb_table("status", st).unwrap();
        assert_eq!((st["VmRSS"], st["VmSwap"], st.get("Uid")), (96112 * 1024, 8 * 1024, None));
    }

    #[test]
    fn pressure_files() {
        let p = parse_psi(
            "/proc/pressure/memory",
            "some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\nfull avg10=0.10 avg60=0.00 avg300=0.00 total=42\n",
        )
        .unwrap();
        assert_eq!(p.some.avg10, 1.5);
        assert_eq!(p.some.total_us, 123456);
        assert_eq!(p.full.unwrap().total_us, 42);
        let cpu = parse_psi("cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n").unwrap();
        assert_eq!(cpu.full, None);
        assert!(parse_psi("x", "").is_err());
        assert!(parse_psi("x", "some avg10=zz\n").is_err());
    }

    #[test]
    fn memory_stat_refaults_old_and_new_kernels() {
        let s = parse_flat("cache 4096\nworkingset_refault_anon 3\nworkingset_refault_file 5\n");
        assert_eq!(refaults(&s), (3, 5));
        assert_eq!(refaults(&parse_flat("workingset_refault 9\n")), (0, 9));
        assert_eq!(refaults(&parse_flat("")), (0, 0));
    }

    #[test]
    fn proc_stat_busy_and_total() {
        let (busy, total) = parse_cpu_line("/proc/stat", "cpu  10 0 5 80 5 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((busy, total), (20, 100));
        assert!(parse_cpu_line("/proc/stat", "intr 1\n").is_err());
    }

    #[test]
    fn external_power_from_a_power_supply_tree() {
        let dir = std::env::temp_dir().join(format!("floe-power-{}", std::process::id()));
        let supply = |name: &str, files: &[(&str, &str)]| {
            let d = dir.join(name);
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in files {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        };
        assert!(!on_external_power(&dir), "no tree: on battery");
        supply("BAT0", &[("type", "Battery"), ("status", "Discharging")]);
        supply("AC", &[("type", "Mains"), ("online", "0")]);
        let plugged = on_external_power(&dir);
        supply("usb", &[("type", "USB"), ("online", "1")]);
        let usb = on_external_power(&dir);
        std::fs::remove_dir_all(dir.join("usb")).unwrap();
        supply("BAT0", &[("type", "Battery"), ("status", "Full")]);
        let full = on_external_power(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((plugged, usb, full), (false, true, true));
    }
}
