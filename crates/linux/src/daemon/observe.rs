//! What the daemon reads of the kernel for policies and its timeline: memory (the
//! machine's or a budget's), swap devices, refault deltas, kswapd's work, the stock
//! killer's choice.
use super::kfile::{kb_fields, KFile};
use crate::cgroup::GroupMemory;
use crate::procfs::parse_flat;
use crate::read;
use floe_core::{AppId, AppInfo, AppState, MemInfo, Nanos, Pages, SwapSetup};
use std::collections::BTreeMap;

/// What the daemon says at start when the machine's swap (the devices of /proc/swaps:
/// name, whether zram) is not what `policy` runs on: the daemon does not set swap up,
/// it uses the machine's, and keeps apps out of it for policies without swap.
pub(super) fn swap_note(policy: &str, want: SwapSetup, swaps: &[(String, bool)], zswap_on: bool) -> Option<String> {
    let have = swaps.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
    let (zram, storage) = (swaps.iter().any(|s| s.1), swaps.iter().any(|s| !s.1));
    if want == SwapSetup::Zswap && storage && !zswap_on {
        return Some(format!(
            "note: policy {policy} runs with zswap in front of swap on storage; zswap is off here (/sys/module/zswap/parameters/enabled), so pages go to {have} directly"
        ));
    }
    let wants = match want {
        SwapSetup::None if swaps.is_empty() => return None,
        SwapSetup::None => {
            return Some(format!(
                "note: policy {policy} runs without swap; swap is on here ({have}): each app's swappiness is set to 0 (v1 memory.swappiness; v2 memory.swap.max 0) to keep its anonymous memory in RAM"
            ))
        }
        SwapSetup::Zram if zram => return None,
        SwapSetup::Flash if storage => return None,
        SwapSetup::Zswap | SwapSetup::TwoLevel if storage => return None,
        SwapSetup::Zram => "zram",
        SwapSetup::Flash => "swap on storage",
        SwapSetup::Zswap | SwapSetup::TwoLevel => "zswap in front of swap on storage",
    };
    Some(if swaps.is_empty() {
        format!("note: policy {policy} runs with {wants}; no swap is on here: apps' anonymous memory stays in RAM")
    } else {
        format!("note: policy {policy} runs with {wants}; this machine swaps to {have}, and the daemon uses what the machine has")
    })
}

/// Refaults (anon, file) a group counted since the last sample, `last`; none at the
/// first sample, whose counts may hold what happened before floe watched the group, and
/// none where a counter went back (a group made anew under the same name).
pub(super) fn refaults_since(last: Option<(u64, u64)>, now: (u64, u64)) -> (u64, u64) {
    let (pa, pf) = last.unwrap_or(now);
    (now.0.saturating_sub(pa), now.1.saturating_sub(pf))
}

/// CPU time (user + system) of a process or kernel thread from its /proc/PID/stat, in
/// clock ticks; None once it is gone.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    // Fields after the command (which may hold spaces and parentheses): state is the
    // first, utime the 12th and stime the 13th (stat fields 14 and 15).
    let rest = stat.rsplit_once(") ")?.1;
    let mut f = rest.split_whitespace().skip(11);
    Some(f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?)
}

/// The pids of the kernel's kswapd threads.
pub(super) fn kswapd_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| read(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("kswapd")))
        .collect()
}

/// CPU time of the kswapd threads, in ms.
pub(super) fn kswapd_ms(pids: &[i32]) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks: u64 = pids.iter().filter_map(|p| read(format!("/proc/{p}/stat")).ok().and_then(|s| cpu_ticks(&s))).sum();
    ticks as f64 * 1000.0 / hz
}

/// Pages reclaimed since boot ([`pages_stolen`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stolen {
    /// In all.
    pub all: u64,
    /// By the machine's direct reclaim.
    pub direct: u64,
    /// Anonymous pages sent to swap; None where /proc/vmstat counts neither
    /// pgsteal_anon nor pswpout.
    pub anon: Option<u64>,
}

/// Pages reclaimed since boot, from /proc/vmstat. In all: pgsteal_anon + pgsteal_file
/// where the kernel has them (5.8+; they count every reclaim, a memory cgroup's limit
/// and proactive reclaim included), else pgsteal_kswapd*, pgsteal_direct* and
/// pgsteal_khugepaged* (per zone before 4.8). Direct: pgsteal_direct*, which counts
/// only reclaim for the machine's own shortage. Anonymous: pgsteal_anon, else pswpout
/// (pages written to a swap device, zram included: the anonymous pages reclaimed less
/// those dropped from the swap cache unwritten).
pub fn pages_stolen(vmstat: &BTreeMap<String, u64>) -> Stolen {
    let sum = |pre: &str| vmstat.iter().filter(|(k, _)| k.starts_with(pre)).map(|(_, v)| v).sum::<u64>();
    let direct = sum("pgsteal_direct");
    let all = match (vmstat.get("pgsteal_anon"), vmstat.get("pgsteal_file")) {
        (Some(a), Some(f)) => a + f,
        _ => sum("pgsteal_kswapd") + direct + sum("pgsteal_khugepaged"),
    };
    let anon = vmstat.get("pgsteal_anon").or(vmstat.get("pswpout")).copied();
    Stolen { all, direct, anon }
}

/// kswapd's pages scanned and reclaimed since boot, from /proc/vmstat: pgscan_kswapd*
/// and pgsteal_kswapd* (one counter per zone before 4.8).
pub fn kswapd_scan_steal(vmstat: &BTreeMap<String, u64>) -> (u64, u64) {
    let sum = |pre: &str| vmstat.iter().filter(|(k, _)| k.starts_with(pre)).map(|(_, v)| v).sum::<u64>();
    (sum("pgscan_kswapd"), sum("pgsteal_kswapd"))
}

/// Whether kswapd failed to free pages between two readings of
/// [`kswapd_scan_steal`]: it scanned and reclaimed nothing.
pub fn kswapd_failed(before: (u64, u64), after: (u64, u64)) -> bool {
    after.0 > before.0 && after.1 == before.1
}

pub(super) fn read_stolen() -> Stolen {
    read("/proc/vmstat").map(|t| pages_stolen(&parse_flat(&t))).unwrap_or_default()
}

/// Resident (all, and anonymous) and swapped bytes of some processes, from their
/// /proc/PID/status; a process gone meanwhile counts nothing.
pub(super) fn memory_of(pids: &[i32]) -> (u64, u64, u64) {
    let (mut rss, mut rss_anon, mut swap) = (0, 0, 0);
    for pid in pids {
        if let Ok(t) = read(format!("/proc/{pid}/status")) {
            let (r, a, s) = status_memory(&t);
            (rss, rss_anon, swap) = (rss + r, rss_anon + a, swap + s);
        }
    }
    (rss, rss_anon, swap)
}

/// Resident (all, and anonymous) and swapped bytes in a /proc/PID/status.
pub(super) fn status_memory(status: &str) -> (u64, u64, u64) {
    let [rss, anon, swap] = kb_fields(status, ["VmRSS", "RssAnon", "VmSwap"]);
    (rss, anon, swap)
}

/// The files [`meminfo_in`] reads, kept open.
pub(super) struct MemFiles {
    meminfo: KFile,
    zram_mm: KFile,
    zram_size: KFile,
    /// zram0's (original data, memory used) and disk size at the last read of them.
    zram: ((u64, u64), u64),
}

impl MemFiles {
    pub(super) fn new() -> MemFiles {
        MemFiles {
            meminfo: KFile::new("/proc/meminfo"),
            zram_mm: KFile::new("/sys/block/zram0/mm_stat"),
            zram_size: KFile::new("/sys/block/zram0/disksize"),
            zram: ((0, 0), 0),
        }
    }

    /// System memory now ([`meminfo_in`]); zeros for what cannot be read (no zram).
    /// Without `zram`, zram's figures are those of the last read that had them.
    pub(super) fn read(&mut self, min_kb: u64, zram: bool) -> MemInfo {
        if zram {
            self.read_zram(&mut MemInfo::default());
        }
        meminfo_in(self.meminfo.read().unwrap_or_default(), self.zram.0, self.zram.1, min_kb)
    }

    /// Reads zram's figures again into `m`.
    pub(super) fn read_zram(&mut self, m: &mut MemInfo) {
        let mm = zram_mm_stat(self.zram_mm.read().unwrap_or_default());
        self.zram = (mm, self.zram_size.read().ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0));
        (m.zram_stored, m.zram_used, m.zram_capacity) = (Pages(mm.0 / 4096), Pages(mm.1 / 4096), Pages(self.zram.1 / 4096));
    }
}

/// zram0's (original data, memory used) in bytes from its mm_stat.
fn zram_mm_stat(mm: &str) -> (u64, u64) {
    let mut f = mm.split_whitespace().map(|v| v.parse::<u64>().unwrap_or(0));
    let orig = f.next().unwrap_or(0);
    (orig, f.nth(1).unwrap_or(0))
}

/// System memory as a policy sees it, from /proc/meminfo's text and zram0's (original
/// data, memory used) and disk size in bytes: available memory as free, watermarks from
/// min_free_kbytes with the kernel's low = 5/4 and high = 3/2 of min.
pub(super) fn meminfo_in(meminfo: &str, zram: (u64, u64), zram_size: u64, min_kb: u64) -> MemInfo {
    const KEYS: [&str; 9] = [
        "MemTotal",
        "MemAvailable",
        "Active(anon)",
        "Inactive(anon)",
        "Active(file)",
        "Inactive(file)",
        "SwapTotal",
        "SwapFree",
        "Writeback",
    ];
    let [total, avail, aa, ia, af, inf, swap_total, swap_free, writeback] = kb_fields(meminfo, KEYS);
    let pages = |b: u64| Pages(b / 4096);
    let min = Pages(min_kb * 1024 / 4096);
    MemInfo {
        total: pages(total),
        free: pages(avail),
        available: pages(avail),
        wmark_min: min,
        wmark_low: Pages(min.0 * 5 / 4),
        wmark_high: Pages(min.0 * 3 / 2),
        tuned_high: None,
        active_anon: pages(aa),
        inactive_anon: pages(ia),
        active_file: pages(af),
        inactive_file: pages(inf),
        zram_stored: pages(zram.0),
        zram_used: pages(zram.1),
        zram_capacity: pages(zram_size),
        flash_swap_used: pages(swap_total.saturating_sub(swap_free)),
        flash_swap_capacity: pages(swap_total),
        writeback: pages(writeback),
    }
}

/// The low-memory killer's level at `free`: the lowest oom_adj whose minfree is above
/// it (levels in ascending adj and minfree, as Android lists them), if any.
pub fn lmk_level(levels: &[(i32, Pages)], free: Pages) -> Option<i32> {
    levels.iter().find(|&&(_, mf)| free < mf).map(|&(adj, _)| adj)
}

/// Android's oom_adj of app `i` among `apps` (alive, perceptible, last used) with `fg`
/// in the foreground, as the simulator gives it: foreground 0, perceptible 200, the
/// cached apps 900 and up by their recency among themselves.
pub(super) fn android_adj(apps: &[(bool, bool, Nanos)], fg: Option<usize>, i: usize) -> i32 {
    let (_, perceptible, last_used) = apps[i];
    if fg == Some(i) {
        0
    } else if perceptible {
        200
    } else {
        let newer = apps.iter().enumerate().filter(|&(j, &(alive, p, t))| alive && !p && fg != Some(j) && t > last_used).count();
        floe_core::cached_oom_adj(newer)
    }
}

/// The stock killer's victim at level `min_adj`: the highest oom_adj at or above it,
/// then the largest; never the foreground, an unkillable or a dead app.
pub fn stock_victim(apps: &[AppInfo], fg: Option<AppId>, min_adj: i32) -> Option<AppId> {
    apps.iter()
        .filter(|a| a.state != AppState::Dead && fg != Some(a.id) && !a.unkillable && a.oom_adj >= min_adj)
        .max_by_key(|a| (a.oom_adj, a.rss, std::cmp::Reverse(a.id)))
        .map(|a| a.id)
}

/// Bytes swap can still take: /proc/meminfo's SwapFree (zram and storage swap alike;
/// zram counts uncompressed pages, as its swap device's size does).
pub(super) fn swap_room(sys: &MemInfo) -> u64 {
    sys.flash_swap_capacity.0.saturating_sub(sys.flash_swap_used.0) * 4096
}

/// Memory as policies see it under a budget: the budget is the total, and free is what
/// is left of it plus the apps' inactive page cache (what MemAvailable counts
/// system-wide) plus the part of their anonymous memory that swap can still take
/// (`swap_room`, bytes; a limit on RAM use lets reclaim move anonymous pages out to
/// swap, so the budget is not spent while swap has room), never more than the machine
/// has available plus that swap room.
pub(super) fn budget_meminfo(sys: MemInfo, budget: u64, g: &GroupMemory, swap_room: u64) -> MemInfo {
    let swappable = (g.active_anon + g.inactive_anon).min(swap_room);
    let left = budget.saturating_sub(g.usage) + g.inactive_file.min(g.usage) + swappable;
    let pages = |b: u64| Pages(b / 4096);
    let free = Pages((left / 4096).min(sys.free.0 + swappable / 4096));
    MemInfo {
        total: pages(budget),
        free,
        available: free,
        active_anon: pages(g.active_anon),
        inactive_anon: pages(g.inactive_anon),
        active_file: pages(g.active_file),
        inactive_file: pages(g.inactive_file),
        ..sys
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    #[test]
    fn the_machines_swap_is_named_when_it_is_not_the_policys() {
        let zram = vec![("/dev/zram0".to_string(), true)];
        let file = vec![("/swapfile".to_string(), false)];
        assert_eq!(swap_note("lru-cfs", SwapSetup::Zram, &zram, false), None);
        assert_eq!(swap_note("android-lmk", SwapSetup::None, &[], false), None);
        assert_eq!(swap_note("swap-all", SwapSetup::Flash, &file, false), None);
        assert_eq!(swap_note("zswap", SwapSetup::Zswap, &file, true), None);
        let n = swap_note("android-lmk", SwapSetup::None, &zram, false).unwrap();
        assert!(n.contains("without swap") && n.contains("/dev/zram0") && n.contains("swappiness is set to 0"), "{n}");
        let n = swap_note("swap-all", SwapSetup::Flash, &zram, false).unwrap();
        assert!(n.contains("swap on storage") && n.contains("swaps to /dev/zram0"), "{n}");
        let n = swap_note("lru-cfs", SwapSetup::Zram, &[], false).unwrap();
        assert!(n.contains("runs with zram; no swap is on here"), "{n}");
        let n = swap_note("zswap", SwapSetup::Zswap, &file, false).unwrap();
        assert!(n.contains("zswap is off here") && n.contains("go to /swapfile directly"), "{n}");
    }

    #[test]
    fn refaults_count_from_the_first_sample_not_from_the_groups_history() {
        assert_eq!(refaults_since(None, (5_000, 120)), (0, 0), "an adopted group's history is no refault");
        assert_eq!(refaults_since(Some((5_000, 120)), (5_010, 120)), (10, 0));
        assert_eq!(refaults_since(Some((5_000, 120)), (3, 7)), (0, 0), "a counter that went back");
    }

    #[test]
    fn cached_apps_rank_by_recency_among_themselves() {
        let t = Nanos::from_secs;
        // 0: foreground, used last; 1: perceptible; 2 and 3 cached (3 more recent); 4 dead.
        let apps = [(true, false, t(50)), (true, true, t(40)), (true, false, t(10)), (true, false, t(30)), (false, false, t(45))];
        let adj: Vec<i32> = (0..apps.len()).map(|i| android_adj(&apps, Some(0), i)).collect();
        assert_eq!(&adj[..4], &[0, 200, 910, 900], "neither the foreground, the perceptible nor the dead app counts");
        // At home, with nothing in the foreground, the last app used is a cached one too.
        assert_eq!(android_adj(&apps, None, 0), 900);
        assert_eq!(android_adj(&apps, None, 3), 910);
    }

    #[test]
    fn a_kswapd_that_scans_and_frees_nothing_has_failed() {
        // 4.8+: one counter each; before 4.8 one per zone.
        let new = parse_flat("pgscan_kswapd 500\npgsteal_kswapd 120\npgscan_direct 9\npgsteal_direct 4\n");
        assert_eq!(kswapd_scan_steal(&new), (500, 120));
        let old = parse_flat("pgscan_kswapd_dma 5\npgscan_kswapd_normal 70\npgsteal_kswapd_normal 30\npgsteal_direct_normal 2\n");
        assert_eq!(kswapd_scan_steal(&old), (75, 30));
        assert!(kswapd_failed((500, 120), (900, 120)), "scanned 400, freed none");
        assert!(!kswapd_failed((500, 120), (900, 121)), "freed one");
        assert!(!kswapd_failed((500, 120), (500, 120)), "did not run");
        // This kernel's /proc/vmstat has kswapd's counters, and it never reclaimed more
        // than it scanned.
        let here = kswapd_scan_steal(&parse_flat(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert!(here.0 >= here.1, "{here:?}");
        assert!(std::fs::read_to_string("/proc/vmstat").unwrap().lines().any(|l| l.starts_with("pgscan_kswapd")));
    }

    #[test]
    fn the_stock_killer_takes_the_highest_adj_then_the_largest_never_the_foreground() {
        let mib = |m: u64| Pages(m * 256);
        let levels = [(0, mib(72)), (200, mib(108)), (900, mib(144))];
        assert_eq!(lmk_level(&levels, mib(200)), None);
        assert_eq!(lmk_level(&levels, mib(120)), Some(900));
        assert_eq!(lmk_level(&levels, mib(100)), Some(200));
        assert_eq!(lmk_level(&levels, mib(10)), Some(0));
        let app = |i: u16, adj: i32, rss: u64| AppInfo { rss: mib(rss), ..AppInfo::ordinary(AppId(i), AppState::Cached, adj) };
        let mut apps = vec![app(0, 0, 500), app(1, 200, 300), app(2, 910, 50), app(3, 910, 80), app(4, 900, 400)];
        // Highest adj first (910), the larger of the two.
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(3)));
        apps[3].unkillable = true;
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(2)));
        apps[2].state = AppState::Dead;
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(4)));
        // Nothing at or above the level: no kill; the foreground never, even at adj 0.
        assert_eq!(stock_victim(&apps[..2], Some(AppId(0)), 900), None);
        assert_eq!(stock_victim(&apps[..1], Some(AppId(0)), 0), None);
        assert_eq!(stock_victim(&apps[..2], Some(AppId(0)), 0), Some(AppId(1)));
    }

    #[test]
    fn meminfo_is_read_in_place_from_the_kernels_text() {
        let text = "MemTotal:       24683424 kB\nMemFree:        19882000 kB\nMemAvailable:   23624000 kB\nActive(anon):     100000 kB\n\
                    Inactive(anon):    50000 kB\nActive(file):     300000 kB\nInactive(file):   400000 kB\nSwapTotal:        262140 kB\n\
                    SwapFree:         262000 kB\nWriteback:             8 kB\n";
        let m = meminfo_in(text, (8192, 4096), 1 << 30, 67584);
        let kb = |k: u64| Pages(k * 1024 / 4096);
        assert_eq!((m.total, m.free), (kb(24683424), kb(23624000)));
        assert_eq!((m.active_anon, m.inactive_anon, m.active_file, m.inactive_file), (kb(100000), kb(50000), kb(300000), kb(400000)));
        assert_eq!((m.flash_swap_capacity, m.flash_swap_used, m.writeback), (kb(262140), kb(140), kb(8)));
        assert_eq!((m.zram_stored, m.zram_used, m.zram_capacity), (Pages(2), Pages(1), Pages(1 << 18)));
        assert_eq!((m.wmark_min, m.wmark_low, m.wmark_high), (kb(67584), Pages(kb(67584).0 * 5 / 4), Pages(kb(67584).0 * 3 / 2)));
        assert_eq!(zram_mm_stat("8192 1000 4096 0 4096 0 0 0 0\n"), (8192, 4096));
        // This machine's, through the files kept open: what a fresh read gives.
        let mut f = MemFiles::new();
        let here = f.read(0, true);
        let fresh = crate::procfs::parse_kb_table("meminfo", &std::fs::read_to_string("/proc/meminfo").unwrap()).unwrap();
        assert_eq!(here.total, Pages(fresh["MemTotal"] / 4096));
        assert_eq!(here.flash_swap_capacity, Pages(fresh["SwapTotal"] / 4096));
    }

    #[test]
    fn a_budget_is_the_memory_policies_see() {
        let sys = MemInfo { total: Pages(6_000_000), free: Pages(5_000_000), wmark_min: Pages(100), ..MemInfo::default() };
        let g = |usage: u64, inactive_file: u64| GroupMemory { usage, inactive_file, ..GroupMemory::default() };
        // 512 MiB budget, 400 MiB charged of which 30 MiB inactive file: 142 MiB free;
        // the LRU sizes are the group's.
        let grp = GroupMemory { active_anon: 300 << 20, inactive_anon: 50 << 20, active_file: 20 << 20, ..g(400 << 20, 30 << 20) };
        let m = budget_meminfo(MemInfo { active_anon: Pages(1), ..sys }, 512 << 20, &grp, 0);
        assert_eq!((m.total, m.free, m.wmark_min), (Pages(512 * 256), Pages(142 * 256), Pages(100)));
        assert_eq!(
            (m.active_anon, m.inactive_anon, m.active_file, m.inactive_file),
            (Pages(300 * 256), Pages(50 * 256), Pages(20 * 256), Pages(30 * 256))
        );
        // Over the limit (charged can briefly exceed it): only the cache counts.
        assert_eq!(budget_meminfo(sys, 512 << 20, &g(600 << 20, 10 << 20), 0).free, Pages(10 * 256));
        // Never more than the machine has.
        let tight = MemInfo { free: Pages(256), ..sys };
        assert_eq!(budget_meminfo(tight, 512 << 20, &g(0, 0), 0).free, Pages(256));
        // At the limit with zram room: the anonymous memory swap can take is free, up
        // to the room left; no room, no level fires on it either way.
        let full = GroupMemory { active_anon: 400 << 20, inactive_anon: 100 << 20, ..g(512 << 20, 0) };
        assert_eq!(budget_meminfo(sys, 512 << 20, &full, 0).free, Pages(0));
        assert_eq!(budget_meminfo(sys, 512 << 20, &full, 64 << 20).free, Pages(64 * 256));
        assert_eq!(budget_meminfo(sys, 512 << 20, &full, 4 << 30).free, Pages(500 * 256));
        let z = MemInfo { flash_swap_capacity: Pages(1000), flash_swap_used: Pages(300), ..sys };
        assert_eq!(swap_room(&z), 700 * 4096);
    }
}
