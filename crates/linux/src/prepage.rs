//! ASAP's anonymous prepaging (§4.3, §5.1) on the running kernel.
//!
//! At a switch to an app, the pages of its target table that are in swap are fetched by
//! one SCHED_IDLE thread per core, each taking batches of 16 pages and handing them to
//! `process_madvise(MADV_WILLNEED)`, which swaps them in ahead of the app. When the
//! switch ends, the estimator learns from /proc/PID/pagemap what the switch touched.
//!
//! What the kernel shows, and so what floe can observe: a page that was in swap when
//! the switch began, was not fetched by floe, and is present when it ends was faulted
//! in by the app (accessed). A page that stayed in swap was not accessed. For a page
//! that was resident, or that floe fetched itself, pagemap gives no evidence of use
//! (the paper reads access bits; per-page access bits need page-idle tracking, which
//! kernels without CONFIG_IDLE_PAGE_TRACKING, like this project's CI kernel, lack), so
//! such a page keeps its table and timeout ([`AnonTables::after_switch_observed`]).
//! With swap on flash, kernel swap readahead also brings neighbours in, which then
//! count as accessed; with zram (synchronous I/O) there is no readahead.

use crate::sys::{anon_ranges, page_locations, page_runs, Pidfd, MADV_WILLNEED};
use floe_policies::asap::{AnonTables, ANON_BATCH};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// A page of an app: (process, virtual page number).
pub type PageKey = (i32, u64);

/// What one switch learned.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SwitchReport {
    /// Pages in swap when the switch began.
    pub swapped: usize,
    /// Of those, pages floe fetched ahead.
    pub prepaged: usize,
    /// Pages the app itself faulted in from swap during the switch.
    pub faulted: usize,
    /// Table sizes after learning.
    pub targets: usize,
    pub candidates: usize,
}

struct Switch {
    app: String,
    started: Instant,
    swapped: BTreeSet<PageKey>,
    fetched: BTreeSet<PageKey>,
    fetchers: Fetchers,
}

/// A switch's fetching threads and the flag that stops them; shared by the anonymous
/// and the file prepager.
#[derive(Default)]
pub(crate) struct Fetchers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Fetchers {
    /// Runs `work` on a new thread; it should return soon after the flag it is given
    /// is set.
    pub(crate) fn spawn(&mut self, work: impl FnOnce(&AtomicBool) + Send + 'static) {
        let stop = self.stop.clone();
        self.threads.push(std::thread::spawn(move || work(&stop)));
    }

    /// Stops the threads: what they have not fetched yet is dropped.
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// The anonymous estimator's tables per app (by name) and the switch in progress.
#[derive(Default)]
pub struct AnonPrepager {
    tables: BTreeMap<String, AnonTables<PageKey>>,
    switch: Option<Switch>,
}

fn swapped_and_present(pids: &[i32]) -> (BTreeSet<PageKey>, BTreeSet<PageKey>) {
    let (mut swapped, mut present) = (BTreeSet::new(), BTreeSet::new());
    for &pid in pids {
        let Ok(ranges) = anon_ranges(pid) else { continue };
        if let Ok((s, p)) = page_locations(pid, &ranges) {
            swapped.extend(s.into_iter().map(|v| (pid, v)));
            present.extend(p.into_iter().map(|v| (pid, v)));
        }
    }
    (swapped, present)
}

/// Makes the calling thread SCHED_IDLE: it runs only when a core has nothing else.
pub(crate) fn sched_idle() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; a valid policy and parameter.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

impl AnonPrepager {
    pub fn new() -> AnonPrepager {
        AnonPrepager::default()
    }

    /// The app whose switch is in progress, and since when.
    pub fn in_progress(&self) -> Option<(&str, Instant)> {
        self.switch.as_ref().map(|s| (s.app.as_str(), s.started))
    }

    /// A switch to `app` (its processes `pids`) begins: fetch its swapped targets in
    /// the background. Returns (pages in swap, pages being fetched).
    pub fn begin(&mut self, app: &str, pids: &[i32]) -> (usize, usize) {
        self.cancel();
        let (swapped, _) = swapped_and_present(pids);
        let tables = self.tables.entry(app.to_string()).or_default();
        // Pages of processes that are gone are forgotten.
        tables.candidates.retain(|k, _| pids.contains(&k.0));
        tables.targets.retain(|k, _| pids.contains(&k.0));
        let fetch: Vec<PageKey> = tables.targets.keys().filter(|k| swapped.contains(k)).copied().collect();
        let fetched: BTreeSet<PageKey> = fetch.iter().copied().collect();
        let mut fetchers = Fetchers::default();
        if !fetch.is_empty() {
            let fetch = Arc::new(fetch);
            let next = Arc::new(AtomicUsize::new(0));
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            for _ in 0..cores {
                let (fetch, next) = (fetch.clone(), next.clone());
                fetchers.spawn(move |stop| {
                    sched_idle();
                    let mut fds: BTreeMap<i32, Option<Pidfd>> = BTreeMap::new();
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(ANON_BATCH, Ordering::Relaxed);
                        if i >= fetch.len() {
                            break;
                        }
                        let batch = &fetch[i..(i + ANON_BATCH).min(fetch.len())];
                        let mut by_pid: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
                        for &(pid, v) in batch {
                            by_pid.entry(pid).or_default().push(v);
                        }
                        for (pid, pages) in by_pid {
                            if let Some(fd) = fds.entry(pid).or_insert_with(|| Pidfd::open(pid).ok()) {
                                let _ = fd.madvise(&page_runs(&pages), MADV_WILLNEED);
                            }
                        }
                    }
                });
            }
        }
        let n = (swapped.len(), fetched.len());
        self.switch = Some(Switch { app: app.to_string(), started: Instant::now(), swapped, fetched, fetchers });
        n
    }

    /// Stops a switch in progress without learning from it.
    pub fn cancel(&mut self) {
        if let Some(s) = self.switch.take() {
            s.fetchers.stop();
        }
    }

    /// The switch to `app` ended: stop fetching, and learn what it touched.
    pub fn end(&mut self, app: &str, pids: &[i32]) -> Option<SwitchReport> {
        if self.switch.as_ref().is_none_or(|s| s.app != app) {
            return None;
        }
        let s = self.switch.take()?;
        s.fetchers.stop();
        let (_, present) = swapped_and_present(pids);
        let t = self.tables.entry(app.to_string()).or_default();
        Some(learn(t, &s.swapped, &s.fetched, &present))
    }

    /// The tables as JSON, `{"anon": ...}`, to outlive a restart of the daemon (the
    /// apps' processes, and so their page numbers, live on).
    pub fn export(&self) -> serde_json::Value {
        let enc = |m: &BTreeMap<PageKey, u8>| m.iter().map(|(&(pid, v), &t)| (pid, v, t)).collect::<Vec<_>>();
        let apps: BTreeMap<&str, serde_json::Value> = self
            .tables
            .iter()
            .map(|(a, t)| (a.as_str(), serde_json::json!({ "candidates": enc(&t.candidates), "targets": enc(&t.targets) })))
            .collect();
        serde_json::json!({ "anon": apps })
    }

    pub fn import(&mut self, text: &str) -> std::result::Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Tables {
            candidates: Vec<(i32, u64, u8)>,
            targets: Vec<(i32, u64, u8)>,
        }
        #[derive(serde::Deserialize)]
        struct Saved {
            anon: BTreeMap<String, Tables>,
        }
        let saved: Saved = serde_json::from_str(text).map_err(|e| format!("ASAP tables: {e}"))?;
        let dec = |v: Vec<(i32, u64, u8)>| v.into_iter().map(|(p, v, t)| ((p, v), t)).collect();
        for (app, t) in saved.anon {
            self.tables.insert(app, AnonTables { candidates: dec(t.candidates), targets: dec(t.targets) });
        }
        Ok(())
    }
}

/// What a switch teaches the anonymous estimator, from what pagemap showed: the pages in
/// swap when it began (`swapped`), those floe fetched (`fetched`), and those present when
/// it ended (`present`). A page in swap that floe did not fetch and that is now present
/// was faulted in by the app (accessed); one still in swap was not; other pages gave no
/// evidence.
pub fn learn(
    t: &mut AnonTables<PageKey>,
    swapped: &BTreeSet<PageKey>,
    fetched: &BTreeSet<PageKey>,
    present: &BTreeSet<PageKey>,
) -> SwitchReport {
    let faulted: Vec<PageKey> = swapped.iter().filter(|k| !fetched.contains(k) && present.contains(k)).copied().collect();
    t.after_switch_observed(&faulted, |k| (swapped.contains(&k) && !fetched.contains(&k)).then(|| present.contains(&k)));
    SwitchReport {
        swapped: swapped.len(),
        prepaged: fetched.len(),
        faulted: faulted.len(),
        targets: t.targets.len(),
        candidates: t.candidates.len(),
    }
}

impl Drop for AnonPrepager {
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pages: &[u64]) -> BTreeSet<PageKey> {
        pages.iter().map(|&v| (7, v)).collect()
    }

    #[test]
    fn learning_from_synthetic_pagemaps() {
        use floe_policies::asap::ANON_TIMEOUT;
        let mut t = AnonTables::default();
        // Switch 1: pages 1-4 in swap, the app faults 1-3 in; 4 stays out.
        let r = learn(&mut t, &set(&[1, 2, 3, 4]), &set(&[]), &set(&[1, 2, 3, 9]));
        assert_eq!((r.faulted, r.candidates, r.targets), (3, 3, 0));
        // Switch 2: 1-3 in swap again; the app touches 1 and 2 (promoted); 3 stays in
        // swap (not accessed: its timeout counts down).
        let r = learn(&mut t, &set(&[1, 2, 3]), &set(&[]), &set(&[1, 2]));
        assert_eq!((r.faulted, r.targets), (2, 2));
        assert_eq!(t.candidates.get(&(7, 3)), Some(&(ANON_TIMEOUT - 1)));
        // Switch 3: floe fetches 1 and 2 (no evidence of use: they keep their timeout);
        // 3 is resident all along (no evidence either).
        let r = learn(&mut t, &set(&[1, 2]), &set(&[1, 2]), &set(&[1, 2, 3]));
        assert_eq!((r.prepaged, r.faulted), (2, 0));
        assert_eq!(t.targets.get(&(7, 1)), Some(&ANON_TIMEOUT));
        assert_eq!(t.candidates.get(&(7, 3)), Some(&(ANON_TIMEOUT - 1)));
        // Four more switches with 3 in swap and untouched: it times out.
        for _ in 0..ANON_TIMEOUT - 1 {
            learn(&mut t, &set(&[3]), &set(&[]), &set(&[]));
        }
        assert!(!t.candidates.contains_key(&(7, 3)));
    }

    #[test]
    fn tables_round_trip_through_json() {
        let mut p = AnonPrepager::new();
        let t = p.tables.entry("cam".into()).or_default();
        t.candidates.insert((42, 1 << 35), 3);
        t.targets.insert((42, 7), 5);
        let text = p.export().to_string();
        let mut q = AnonPrepager::new();
        q.import(&text).unwrap();
        assert_eq!(q.tables, p.tables);
        assert!(q.import("{\"anon\": 3}").unwrap_err().contains("ASAP tables"));
    }

    #[test]
    fn a_switch_of_a_process_with_nothing_in_swap_learns_nothing() {
        let mut p = AnonPrepager::new();
        let me = std::process::id() as i32;
        assert_eq!(p.begin("me", &[me]).1, 0);
        assert_eq!(p.in_progress().map(|(a, _)| a), Some("me"));
        assert_eq!(p.end("other", &[me]), None, "only the app's own switch ends it");
        let r = p.end("me", &[me]).unwrap();
        assert_eq!((r.prepaged, r.faulted, r.targets, r.candidates), (0, 0, 0, 0));
        assert!(p.in_progress().is_none());
    }
}
