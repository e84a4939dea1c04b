//! ASAP's file-backed prepaging (§4.2, §5.2) on the running kernel.
//!
//! The estimator's tables are `floe_policies::asap::FileTables`, one per file an app
//! maps, keyed by the file's path. What the kernel shows, and so what floe logs:
//!
//! - **Fault logging.** /proc/PID/pagemap's present bit of a file mapping says whether
//!   the page is mapped into the process. A page of a mapped file that was not mapped
//!   when the switch began and is mapped when it ends was faulted in by the app during
//!   the switch (a major fault, or a minor one on a page still in the page cache). The
//!   kernel's fault-around maps up to 16 neighbours that are already cached at each
//!   fault; those count as faulted too, as swap readahead's neighbours do for the
//!   anonymous estimator. Pages the app reads with read(2) are not mapped and go unseen.
//! - **Offline profiling.** The paper profiles ten switches of each app offline; the
//!   daemon profiles the app's first ten switches it sees, and keeps as candidates the
//!   pages faulted in at least eight of them (`floe_policies::asap::profile`).
//! - **Prepaging.** At a switch, threads read the target extents ahead into the page
//!   cache with readahead(2), a whole file each (§5.2, so no two hold one file's locks;
//!   the file system reads its own metadata first): one SCHED_NORMAL thread takes the
//!   largest 15 % of the files, which hold about 90 % of a switch's file pages (Fig.
//!   5.1), and one SCHED_IDLE thread per other core shares the rest. Fetched pages are
//!   not mapped; the app's access then takes a minor fault and maps them.
//! - **Eviction.** A fetched target page still unmapped in every process of the app when
//!   the switch ends went unused; it leaves the target table, splitting its extent.
//!
//! Needs /proc/PID/pagemap and readahead(2); no per-page access bits (page-idle
//! tracking), which the paper's kernel module reads and this project's CI kernel lacks.

use crate::prepage::{sched_idle, Fetchers};
use crate::sys::page_locations;
use floe_policies::asap::{profile, Extent, FileTables, PROFILE_SWITCHES};
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Pages of one file (by page index in the file), per file path.
pub type FilePages = BTreeMap<String, BTreeSet<u32>>;

/// A file-backed mapping of /proc/PID/maps: `[start, end)`, the file page at `start`,
/// and the file's path.
#[derive(Clone, Debug, PartialEq)]
pub struct FileMapping {
    pub start: usize,
    pub end: usize,
    pub first_page: u64,
    pub path: String,
}

/// The file-backed mappings of a maps file: those with an inode and an absolute path
/// (not deleted files, not `[vdso]` and the like).
pub fn parse_file_mappings(maps: &str) -> Vec<FileMapping> {
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut f = line.splitn(6, ' ');
        let (Some(range), Some(_perms), Some(offset), Some(_dev), Some(inode)) = (f.next(), f.next(), f.next(), f.next(), f.next()) else {
            continue;
        };
        let path = f.next().unwrap_or("").trim_start();
        if inode == "0" || !path.starts_with('/') || path.ends_with(" (deleted)") {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end), Ok(off)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16), u64::from_str_radix(offset, 16))
        else {
            continue;
        };
        if end > start {
            out.push(FileMapping { start, end, first_page: off / 4096, path: path.to_string() });
        }
    }
    out
}

/// The file pages the processes `pids` have mapped, per file.
pub fn mapped_file_pages(pids: &[i32]) -> FilePages {
    let mut out = FilePages::new();
    for &pid in pids {
        let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { continue };
        for m in parse_file_mappings(&maps) {
            let Ok((_, present)) = page_locations(pid, &[(m.start, m.end - m.start)]) else { continue };
            let first_vpn = (m.start / 4096) as u64;
            let pages = out.entry(m.path).or_default();
            pages.extend(present.into_iter().filter_map(|v| u32::try_from(m.first_page + (v - first_vpn)).ok()));
        }
    }
    out
}

/// One app's file estimator: its profiled switches until there are ten, then the
/// tables per file.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AppFileTables {
    /// Faulted pages per file of each profiled switch (empty once profiling is over).
    pub profiled: Vec<BTreeMap<String, Vec<u32>>>,
    /// Candidate and target extents per file.
    pub files: BTreeMap<String, (Vec<Extent>, Vec<Extent>)>,
    /// Profiling is over.
    pub profiled_done: bool,
}

/// What one switch taught the file estimator.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileSwitchReport {
    /// Pages read ahead at the switch's start.
    pub prepaged: usize,
    /// Pages the app faulted in (mapped) during the switch.
    pub faulted: usize,
    /// Fetched pages still unmapped at its end (dropped from the targets).
    pub unused: usize,
    /// Candidate and target pages after learning, over all files.
    pub candidates: u64,
    pub targets: u64,
    /// Switches profiled so far (10 when profiling is over).
    pub profiled: usize,
}

/// What a switch teaches one app's tables: pages mapped when it began (`before`) and
/// when it ended (`after`), and the pages floe fetched ahead (`fetched`).
pub fn learn_files(t: &mut AppFileTables, before: &FilePages, after: &FilePages, fetched: &FilePages) -> FileSwitchReport {
    let empty = BTreeSet::new();
    let faulted: BTreeMap<String, Vec<u32>> = after
        .iter()
        .map(|(f, a)| (f.clone(), a.difference(before.get(f).unwrap_or(&empty)).copied().collect::<Vec<u32>>()))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let mut r = FileSwitchReport { faulted: faulted.values().map(Vec::len).sum(), ..Default::default() };
    if !t.profiled_done {
        t.profiled.push(faulted);
        if t.profiled.len() >= PROFILE_SWITCHES {
            let files: BTreeSet<String> = t.profiled.iter().flat_map(|s| s.keys().cloned()).collect();
            for f in files {
                let per_switch: Vec<Vec<u32>> = t.profiled.iter().map(|s| s.get(&f).cloned().unwrap_or_default()).collect();
                let candidates = profile(&per_switch);
                if !candidates.is_empty() {
                    t.files.insert(f, (candidates, Vec::new()));
                }
            }
            t.profiled.clear();
            t.profiled_done = true;
            r.profiled = PROFILE_SWITCHES;
        } else {
            r.profiled = t.profiled.len();
        }
    } else {
        r.profiled = PROFILE_SWITCHES;
        for (f, (candidates, targets)) in t.files.iter_mut() {
            let mut tables = FileTables { candidates: std::mem::take(candidates), targets: std::mem::take(targets) };
            let mapped = after.get(f).unwrap_or(&empty);
            let unused: Vec<u32> = fetched.get(f).map_or(Vec::new(), |p| p.iter().filter(|p| !mapped.contains(p)).copied().collect());
            r.unused += unused.len();
            tables.after_switch(faulted.get(f).map_or(&[][..], |v| &v[..]), &unused);
            *candidates = tables.candidates;
            *targets = tables.targets;
        }
    }
    r.prepaged = fetched.values().map(BTreeSet::len).sum();
    let pages = |e: &[Extent]| e.iter().map(|&(_, l)| l as u64).sum::<u64>();
    r.candidates = t.files.values().map(|(c, _)| pages(c)).sum();
    r.targets = t.files.values().map(|(_, tg)| pages(tg)).sum();
    r
}

struct Switch {
    app: String,
    started: Instant,
    before: FilePages,
    fetched: FilePages,
    fetchers: Fetchers,
}

/// Share of the files, largest first, that §5.2's SCHED_NORMAL thread takes: "about 90%
/// of the total number of accessed pages is part of the top 15% of large files".
pub const LARGE_FILE_SHARE: f64 = 0.15;

/// Splits the files to read ahead, given as (size in bytes, work), into the large ones
/// for the SCHED_NORMAL thread (the largest 15 %, at least one) and the rest, largest
/// first both.
pub fn split_large_files<T>(mut files: Vec<(u64, T)>) -> (Vec<T>, Vec<T>) {
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let large = ((files.len() as f64 * LARGE_FILE_SHARE).ceil() as usize).min(files.len());
    let rest = files.split_off(large);
    (files.into_iter().map(|f| f.1).collect(), rest.into_iter().map(|f| f.1).collect())
}

/// The file estimator's tables per app (by name) and the switch in progress.
#[derive(Default)]
pub struct FilePrepager {
    tables: BTreeMap<String, AppFileTables>,
    switch: Option<Switch>,
}

/// Reads `extents` of the file at `path` ahead into the page cache.
fn read_ahead(path: &str, extents: &[Extent], stop: &AtomicBool) {
    let Ok(f) = std::fs::File::open(path) else { return };
    for &(s, l) in extents {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        // SAFETY: a valid open descriptor; readahead(2) only reads the file into the
        // page cache.
        unsafe { libc::readahead(f.as_raw_fd(), s as i64 * 4096, l as usize * 4096) };
    }
}

impl FilePrepager {
    pub fn new() -> FilePrepager {
        FilePrepager::default()
    }

    /// The app whose switch is in progress, and since when.
    pub fn in_progress(&self) -> Option<(&str, Instant)> {
        self.switch.as_ref().map(|s| (s.app.as_str(), s.started))
    }

    /// A switch to `app` (its processes `pids`) begins: read its target extents ahead
    /// in the background. Returns the pages being fetched (targets not mapped already).
    pub fn begin(&mut self, app: &str, pids: &[i32]) -> usize {
        self.cancel();
        let before = mapped_file_pages(pids);
        let t = self.tables.entry(app.to_string()).or_default();
        let mut fetched = FilePages::new();
        let mut work: Vec<(String, Vec<Extent>)> = Vec::new();
        for (f, (_, targets)) in &t.files {
            if targets.is_empty() {
                continue;
            }
            let mapped = before.get(f);
            let pages: BTreeSet<u32> =
                targets.iter().flat_map(|&(s, l)| s..s + l).filter(|p| mapped.is_none_or(|m| !m.contains(p))).collect();
            if !pages.is_empty() {
                fetched.insert(f.clone(), pages);
                work.push((f.clone(), targets.clone()));
            }
        }
        let sized = work.into_iter().map(|w| (std::fs::metadata(&w.0).map_or(0, |m| m.len()), w)).collect();
        let (large, rest) = split_large_files(sized);
        let mut fetchers = Fetchers::default();
        if !large.is_empty() {
            fetchers.spawn(move |stop| {
                for (path, extents) in large {
                    read_ahead(&path, &extents, stop);
                }
            });
        }
        if !rest.is_empty() {
            let rest = Arc::new(std::sync::Mutex::new(rest.into_iter()));
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            for _ in 0..cores.saturating_sub(1).max(1) {
                let rest = rest.clone();
                fetchers.spawn(move |stop| {
                    sched_idle();
                    loop {
                        let next = rest.lock().ok().and_then(|mut r| r.next());
                        let Some((path, extents)) = next else { break };
                        read_ahead(&path, &extents, stop);
                    }
                });
            }
        }
        let n = fetched.values().map(BTreeSet::len).sum();
        self.switch = Some(Switch { app: app.to_string(), started: Instant::now(), before, fetched, fetchers });
        n
    }

    /// Stops a switch in progress without learning from it.
    pub fn cancel(&mut self) {
        if let Some(s) = self.switch.take() {
            s.fetchers.stop();
        }
    }

    /// The switch to `app` ended: stop fetching, and learn what it touched.
    pub fn end(&mut self, app: &str, pids: &[i32]) -> Option<FileSwitchReport> {
        if self.switch.as_ref().is_none_or(|s| s.app != app) {
            return None;
        }
        // Read-ahead not issued by now is dropped (its threads may be starved of CPU;
        // the daemon's loop does not wait for them).
        let s = self.switch.take()?;
        s.fetchers.stop();
        let after = mapped_file_pages(pids);
        let t = self.tables.entry(app.to_string()).or_default();
        Some(learn_files(t, &s.before, &after, &s.fetched))
    }

    /// One app's tables.
    pub fn tables(&self, app: &str) -> Option<&AppFileTables> {
        self.tables.get(app)
    }

    /// The tables as JSON, `{"file": ...}`, to outlive a restart of the daemon (files keep
    /// their paths).
    pub fn export(&self) -> serde_json::Value {
        serde_json::json!({ "file": &self.tables })
    }

    pub fn import(&mut self, text: &str) -> std::result::Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Saved {
            file: BTreeMap<String, AppFileTables>,
        }
        let saved: Saved = serde_json::from_str(text).map_err(|e| format!("ASAP file tables: {e}"))?;
        self.tables.extend(saved.file);
        Ok(())
    }
}

impl Drop for FilePrepager {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pages(f: &str, p: &[u32]) -> FilePages {
        [(f.to_string(), p.iter().copied().collect())].into_iter().collect()
    }

    #[test]
    fn file_mappings_from_maps() {
        let maps = "\
55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1311 /usr/bin/cat
55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:01 1311 /usr/bin/cat
7f0000000000-7f0000021000 rw-p 00000000 00:00 0 
7f1000000000-7f1000004000 r--s 00010000 00:2a 77 /tmp/x (deleted)
7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]
7f2000000000-7f2000800000 r--s 00400000 08:02 99 /data/app/base.apk
";
        let m = parse_file_mappings(maps);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1], FileMapping { start: 0x55d0c0a02000, end: 0x55d0c0a07000, first_page: 2, path: "/usr/bin/cat".into() });
        assert_eq!((m[2].first_page, m[2].path.as_str()), (0x400, "/data/app/base.apk"));
    }

    #[test]
    fn profiling_then_targets_then_eviction_of_unused_fetches() {
        let mut t = AppFileTables::default();
        let none = FilePages::new();
        // Ten profiled switches: pages 10-19 faulted in every one, 40 in seven only, 60
        // in eight (a candidate, "at least eight of ten").
        for i in 0..PROFILE_SWITCHES {
            let mut p: Vec<u32> = (10..20).collect();
            if i < 7 {
                p.push(40);
            }
            if i < 8 {
                p.push(60);
            }
            let r = learn_files(&mut t, &pages("/a", &[1, 2]), &pages("/a", &[&[1, 2][..], &p].concat()), &none);
            assert_eq!(r.faulted, p.len(), "pages mapped before the switch are not faults");
            assert_eq!(r.profiled, i + 1);
        }
        assert!(t.profiled_done && t.profiled.is_empty());
        let r = learn_files(&mut AppFileTables { profiled_done: true, ..t.clone() }, &none, &none, &none);
        assert_eq!((r.candidates, r.targets), (11, 0));
        assert_eq!(t.files["/a"].0, vec![(10, 10), (60, 1)]);
        assert!(t.files["/a"].1.is_empty(), "no targets before a switch faults them");
        // A switch faults 10-19, 40 and 60: the candidates among them become targets (40
        // is none); 19 and 60 are too far apart to merge.
        let mut p: Vec<u32> = (10..20).collect();
        p.extend([40, 60]);
        let r = learn_files(&mut t, &none, &pages("/a", &p), &none);
        assert_eq!(r.targets, 11);
        assert_eq!(t.files["/a"].1, vec![(10, 10), (60, 1)]);
        // floe fetches the targets; the app maps 10-14 and 60; 15-19 stay unmapped: unused,
        // they leave the table.
        let fetched = pages("/a", &[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 60]);
        let r = learn_files(&mut t, &none, &pages("/a", &[10, 11, 12, 13, 14, 60]), &fetched);
        assert_eq!((r.prepaged, r.unused, r.targets), (11, 5, 6));
        assert_eq!(t.files["/a"].1, vec![(10, 5), (60, 1)]);
    }

    #[test]
    fn the_largest_files_go_to_the_normal_priority_thread() {
        // Twenty files of 1..20 MiB, given smallest first; the work is the size in MiB.
        let files: Vec<(u64, u64)> = (1..=20u64).map(|mib| (mib << 20, mib)).collect();
        let (large, rest) = split_large_files(files);
        assert_eq!(large, vec![20, 19, 18], "15 % of 20 files, largest first");
        assert_eq!(rest, (1..=17).rev().collect::<Vec<u64>>());
        let (large, rest) = split_large_files(vec![(5u64, "only")]);
        assert_eq!((large, rest), (vec!["only"], vec![]), "one file is a large one");
        let (large, rest) = split_large_files(Vec::<(u64, ())>::new());
        assert!(large.is_empty() && rest.is_empty());
    }

    proptest::proptest! {
        /// Ten profiled switches fault a core set (plus noise), later ones random pages
        /// with random pages already mapped. Whatever they do, the core set becomes
        /// candidates, and the tables stay well formed: target extents sorted, disjoint
        /// and non-empty, within the candidates' span (merging fills gaps between
        /// candidate pages, splitting may leave such a gap page alone), and no fetched page
        /// the switch left unmapped a target.
        #[test]
        fn learning_keeps_the_tables_well_formed(
            core in proptest::collection::btree_set(0u32..200, 1..60),
            noise in proptest::collection::vec(proptest::collection::btree_set(0u32..200, 0..40), PROFILE_SWITCHES),
            later in proptest::collection::vec(
                (proptest::collection::btree_set(0u32..200, 0..120), proptest::collection::btree_set(0u32..200, 0..60)),
                1..12,
            )
        ) {
            let mut t = AppFileTables::default();
            let file = |p: BTreeSet<u32>| -> FilePages { [("/f".to_string(), p)].into_iter().collect() };
            for n in &noise {
                learn_files(&mut t, &FilePages::new(), &file(core.union(n).copied().collect()), &FilePages::new());
            }
            let is_candidate = |t: &AppFileTables, p: u32| t.files["/f"].0.iter().any(|&(s, l)| p >= s && p < s + l);
            for &p in &core {
                proptest::prop_assert!(is_candidate(&t, p), "core page {} is a candidate", p);
            }
            let mut fetched = FilePages::new();
            for (touched, mapped) in &later {
                let after = file(mapped.union(touched).copied().collect());
                learn_files(&mut t, &file(mapped.clone()), &after, &fetched);
                let targets = &t.files["/f"].1;
                for w in targets.windows(2) {
                    proptest::prop_assert!(w[0].0 + w[0].1 < w[1].0, "sorted and disjoint: {:?}", targets);
                }
                let c = &t.files["/f"].0;
                let span = c[0].0..c[c.len() - 1].0 + c[c.len() - 1].1;
                for &(s, l) in targets {
                    proptest::prop_assert!(l > 0 && span.contains(&s) && span.contains(&(s + l - 1)), "{:?} outside {:?}", (s, l), span);
                }
                for u in fetched.get("/f").map_or(Vec::new(), |f| f.difference(&after["/f"]).copied().collect()) {
                    proptest::prop_assert!(!targets.iter().any(|&(s, l)| u >= s && u < s + l), "unused page {} still a target", u);
                }
                // The next switch reads this one's targets ahead, except what is mapped.
                fetched = file(targets.iter().flat_map(|&(s, l)| s..s + l).filter(|p| !mapped.contains(p)).collect());
            }
        }
    }

    #[test]
    fn tables_round_trip_through_json() {
        let mut p = FilePrepager::new();
        let t = p.tables.entry("cam".into()).or_default();
        t.files.insert("/system/framework/framework.jar".into(), (vec![(3, 4)], vec![(3, 2)]));
        t.profiled_done = true;
        let text = p.export().to_string();
        let mut q = FilePrepager::new();
        q.import(&text).unwrap();
        assert_eq!(q.tables, p.tables);
        assert!(q.import("{\"file\": 3}").unwrap_err().contains("ASAP file tables"));
    }

    #[test]
    fn this_process_maps_its_own_executable() {
        let me = std::process::id() as i32;
        let mapped = mapped_file_pages(&[me]);
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let pages = mapped.get(exe.to_str().unwrap()).expect("the test binary is mapped");
        assert!(!pages.is_empty(), "the running code's pages are mapped");
    }
}
