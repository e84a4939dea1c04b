//! ASAP (Son et al., "ASAP: Fast Mobile Application Switch via Adaptive Prepaging",
//! USENIX ATC 2021, §4-5): predict the pages an app switch will touch (its switch
//! footprint) and fetch them with spare CPU and disk while the switch runs.
//!
//! - **File-backed estimator** (§4.2): an offline candidate table of pages accessed in
//!   at least 8 of 10 profiled switches, kept as extents; after each switch, faulted
//!   pages that are candidates enter the prepaging target table, extents closer than 16
//!   pages merged; a fetched page the switch did not use leaves the table, splitting
//!   its extent.
//! - **Anonymous estimator** (§4.3): faulted pages enter an online candidate table; a
//!   candidate accessed during a later switch is promoted to the target table; every
//!   page has a timeout of 5 switches, reset when accessed, evicted at 0.
//! - **Prepaging manager** (§5): at a switch, one SCHED_IDLE thread per core takes
//!   batches of 16 anonymous targets; file targets are read ahead, file by file, by a
//!   SCHED_NORMAL thread, metadata first. The backend runs these (the simulator inside
//!   its CPU and flash models).
//!
//! The tables here are pure data structures; the policies `demand-paging`, `asap-anon`,
//! `asap-file` and `asap` declare which estimators run.

use floe_core::{Action, Event, LmkMode, Policy, PrepageSetup, Setup, SwapSetup, SystemView};
use std::collections::BTreeMap;

/// Profiled switches per app (§4.2).
pub const PROFILE_SWITCHES: usize = 10;
/// A page is an offline candidate when accessed "more than eight times" out of ten;
/// Fig. 4.1 groups "9 or 10 times", and §4.2's summary says ">= 8": floe takes >= 8.
pub const PROFILE_MIN_HITS: usize = 8;
/// Extents closer than this many pages are merged (§4.2).
pub const MERGE_GAP: u32 = 16;
/// Timeout of anonymous table entries in switches (§4.3, "e.g., 5").
pub const ANON_TIMEOUT: u8 = 5;
/// Anonymous pages per prepaging batch (§5.1).
pub const ANON_BATCH: usize = 16;
/// F2FS: one direct node maps 512 data blocks; metadata is read at this stride (§5.2).
pub const METADATA_STRIDE: u32 = 512;

/// A run of pages `[start, start + len)` within a file.
pub type Extent = (u32, u32);

/// Builds extents from sorted, distinct pages, merging runs less than `gap` pages apart.
pub fn extents_of(pages: &[u32], gap: u32) -> Vec<Extent> {
    let mut out: Vec<Extent> = Vec::new();
    for &p in pages {
        match out.last_mut() {
            Some((s, l)) if p >= *s + *l && p - (*s + *l) < gap => *l = p + 1 - *s,
            Some((s, l)) if p < *s + *l => {}
            _ => out.push((p, 1)),
        }
    }
    out
}

/// Offline profiling (§4.2): the pages accessed in at least `PROFILE_MIN_HITS` of the
/// profiled switches, as exact extents (no gap merging: the candidate table records
/// what was accessed).
pub fn profile(switches: &[Vec<u32>]) -> Vec<Extent> {
    let mut hits: BTreeMap<u32, usize> = BTreeMap::new();
    for s in switches {
        let mut seen: Vec<u32> = s.clone();
        seen.sort_unstable();
        seen.dedup();
        for p in seen {
            *hits.entry(p).or_default() += 1;
        }
    }
    let pages: Vec<u32> = hits.into_iter().filter(|&(_, n)| n >= PROFILE_MIN_HITS).map(|(p, _)| p).collect();
    extents_of(&pages, 1)
}

fn contains(ext: &[Extent], p: u32) -> bool {
    // Extents are sorted and disjoint.
    let i = ext.partition_point(|&(s, _)| s <= p);
    i > 0 && p < ext[i - 1].0 + ext[i - 1].1
}

/// The file-backed estimator's tables for one file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileTables {
    /// Offline candidate table.
    pub candidates: Vec<Extent>,
    /// Prepaging target table: sorted, disjoint extents.
    pub targets: Vec<Extent>,
}

impl FileTables {
    pub fn new(candidates: Vec<Extent>) -> FileTables {
        FileTables { candidates, targets: Vec::new() }
    }

    /// After a switch: `faulted` pages that are offline candidates join the targets;
    /// extents less than `MERGE_GAP` pages apart merge; `unused` fetched pages leave,
    /// splitting their extents.
    pub fn after_switch(&mut self, faulted: &[u32], unused: &[u32]) {
        let mut new: Vec<u32> = faulted.iter().copied().filter(|&p| contains(&self.candidates, p) && !contains(&self.targets, p)).collect();
        new.sort_unstable();
        new.dedup();
        for p in new {
            self.insert(p);
        }
        for &u in unused {
            if let Some(i) = self.targets.iter().position(|&(s, l)| u >= s && u < s + l) {
                let (s, l) = self.targets[i];
                let mut parts = Vec::new();
                if u > s {
                    parts.push((s, u - s));
                }
                if u + 1 < s + l {
                    parts.push((u + 1, s + l - u - 1));
                }
                self.targets.splice(i..=i, parts);
            }
        }
    }

    /// Inserts one page, merging it with neighbouring extents less than `MERGE_GAP`
    /// pages away (the gap is fetched too: one sequential request instead of several).
    fn insert(&mut self, p: u32) {
        if contains(&self.targets, p) {
            // Covered by an extent that grew over it (merging fills gaps).
            return;
        }
        let i = self.targets.partition_point(|&(s, _)| s <= p);
        let (mut s, mut e) = (p, p + 1);
        let mut lo = i;
        if i > 0 {
            let (ps, pl) = self.targets[i - 1];
            if p - (ps + pl) < MERGE_GAP {
                s = ps;
                lo = i - 1;
            }
        }
        let mut hi = i;
        if let Some(&(ns, nl)) = self.targets.get(i) {
            if ns - e < MERGE_GAP {
                e = ns + nl;
                hi = i + 1;
            }
        }
        self.targets.splice(lo..hi, [(s, e - s)]);
    }

    /// Pages in the target table.
    pub fn target_pages(&self) -> u64 {
        self.targets.iter().map(|&(_, l)| l as u64).sum()
    }
}

/// The anonymous estimator's tables for one app: page -> remaining timeout. Pages are
/// keyed by `K`: the simulator's page numbers, or the kernel backend's (process, virtual
/// page) pairs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnonTables<K: Ord + Copy = u32> {
    pub candidates: BTreeMap<K, u8>,
    pub targets: BTreeMap<K, u8>,
}

impl<K: Ord + Copy> AnonTables<K> {
    /// Pages whose access bits are logged during the next switch (both tables).
    pub fn logged(&self) -> impl Iterator<Item = K> + '_ {
        self.candidates.keys().chain(self.targets.keys()).copied()
    }

    /// After a switch: `faulted` pages new to both tables become candidates; logged
    /// pages `accessed` during the switch reset their timeout, candidates among them are
    /// promoted; the others count down and leave at 0.
    pub fn after_switch(&mut self, faulted: &[K], accessed: impl Fn(K) -> bool) {
        self.after_switch_observed(faulted, |p| Some(accessed(p)));
    }

    /// [`AnonTables::after_switch`] for a backend that cannot observe every logged page:
    /// `observed` says whether the page was accessed, or None when the switch gave no
    /// evidence either way; such a page keeps its table and timeout.
    pub fn after_switch_observed(&mut self, faulted: &[K], observed: impl Fn(K) -> Option<bool>) {
        let mut promote = Vec::new();
        self.candidates.retain(|&p, t| match observed(p) {
            Some(true) => {
                promote.push(p);
                false
            }
            Some(false) => {
                *t -= 1;
                *t > 0
            }
            None => true,
        });
        self.targets.retain(|&p, t| match observed(p) {
            Some(true) => {
                *t = ANON_TIMEOUT;
                true
            }
            Some(false) => {
                *t -= 1;
                *t > 0
            }
            None => true,
        });
        for p in promote {
            self.targets.insert(p, ANON_TIMEOUT);
        }
        for &p in faulted {
            if !self.targets.contains_key(&p) {
                self.candidates.entry(p).or_insert(ANON_TIMEOUT);
            }
        }
    }
}

/// ASAP's baseline and variants; the policy only declares the estimators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asap {
    name: &'static str,
    prepage: Option<PrepageSetup>,
}

impl Asap {
    /// ASAP's baseline: zram swap, lmkd off, pages come back on demand.
    pub fn demand_paging() -> Asap {
        Asap { name: "demand-paging", prepage: None }
    }
    pub fn anon_only() -> Asap {
        Asap { name: "asap-anon", prepage: Some(PrepageSetup { anon: true, file: false }) }
    }
    pub fn file_only() -> Asap {
        Asap { name: "asap-file", prepage: Some(PrepageSetup { anon: false, file: true }) }
    }
    pub fn both() -> Asap {
        Asap { name: "asap", prepage: Some(PrepageSetup { anon: true, file: true }) }
    }
}

impl Policy for Asap {
    fn name(&self) -> &'static str {
        self.name
    }
    fn setup(&self) -> Setup {
        // §6.1: zram on, lmkd disabled so switches meet memory pressure, not cold starts.
        Setup { swap: SwapSetup::Zram, lmk: LmkMode::OomOnly, prepage: self.prepage, ..Setup::stock() }
    }
    fn on_event(&mut self, _ev: &Event, _view: &dyn SystemView, _out: &mut Vec<Action>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_merge_when_less_than_16_pages_apart() {
        assert_eq!(extents_of(&[1, 2, 3, 10, 40], MERGE_GAP), vec![(1, 10), (40, 1)]);
        // 3 -> 19 is 15 pages of gap after the extent's end (4): merged; 20 more: not.
        assert_eq!(extents_of(&[3, 19], MERGE_GAP), vec![(3, 17)]);
        assert_eq!(extents_of(&[3, 20], MERGE_GAP), vec![(3, 1), (20, 1)]);
        assert_eq!(extents_of(&[5, 6, 8], 1), vec![(5, 2), (8, 1)]);
        assert_eq!(extents_of(&[], MERGE_GAP), vec![]);
    }

    #[test]
    fn offline_profile_keeps_pages_seen_in_8_of_10_switches() {
        let mut sw: Vec<Vec<u32>> = vec![vec![1, 2, 3, 7]; 8];
        sw.push(vec![1, 2, 3, 9]);
        sw.push(vec![1, 9, 9]);
        // 1 in 10, 2 and 3 in 9, 7 in 8, 9 in 2 (duplicates count once).
        assert_eq!(profile(&sw), vec![(1, 3), (7, 1)]);
    }

    #[test]
    fn file_targets_take_faulted_candidates_and_split_on_unused() {
        let mut t = FileTables::new(vec![(0, 100)]);
        // 200 is not a candidate.
        t.after_switch(&[10, 11, 20, 200], &[]);
        assert_eq!(t.targets, vec![(10, 11)], "10-11 and 20 merge (gap 8)");
        assert_eq!(t.target_pages(), 11);
        // Page 15 was fetched but not used: the extent splits around it.
        t.after_switch(&[], &[15]);
        assert_eq!(t.targets, vec![(10, 5), (16, 5)]);
        // Unused at an edge trims.
        t.after_switch(&[], &[10, 20]);
        assert_eq!(t.targets, vec![(11, 4), (16, 4)]);
        assert!(contains(&t.targets, 12) && !contains(&t.targets, 15) && !contains(&t.targets, 0));
        // Pages inside a gap an earlier insertion of the same switch filled are covered.
        let mut g = FileTables::new(vec![(0, 100)]);
        g.after_switch(&[10], &[]);
        g.after_switch(&[2, 5], &[]);
        assert_eq!(g.targets, vec![(2, 9)], "2 merges up to 10, which covers 5");
        // A new fault bridges and merges with its neighbours; a far one stays apart.
        t.after_switch(&[15, 60], &[]);
        assert_eq!(t.targets, vec![(11, 9), (60, 1)]);
        t.after_switch(&[40], &[]);
        assert_eq!(t.targets, vec![(11, 9), (40, 1), (60, 1)], "gaps of 20 and 19 pages stay apart");
        t.after_switch(&[50], &[]);
        assert_eq!(t.targets, vec![(11, 9), (40, 21)], "50 is 9 pages from both");
    }

    #[test]
    fn anon_pages_are_promoted_on_a_later_access_and_time_out_after_5_switches() {
        let mut t = AnonTables::default();
        t.after_switch(&[1, 2], |_| false);
        assert_eq!(t.candidates.len(), 2);
        assert!(t.targets.is_empty(), "a fault alone does not promote");
        // Page 1 is accessed in the next switch: promoted with a fresh timeout.
        t.after_switch(&[], |p| p == 1);
        assert_eq!(t.targets.get(&1), Some(&ANON_TIMEOUT));
        assert_eq!(t.candidates.get(&2), Some(&(ANON_TIMEOUT - 1)));
        // Four more switches without page 2: it leaves after its fifth.
        for _ in 0..3 {
            t.after_switch(&[], |p| p == 1);
        }
        assert_eq!(t.candidates.get(&2), Some(&1));
        t.after_switch(&[], |p| p == 1);
        assert!(!t.candidates.contains_key(&2));
        // Page 1 was accessed every time: its timeout stays full; then it times out.
        assert_eq!(t.targets.get(&1), Some(&ANON_TIMEOUT));
        for _ in 0..ANON_TIMEOUT - 1 {
            t.after_switch(&[], |_| false);
        }
        assert_eq!(t.targets.get(&1), Some(&1));
        t.after_switch(&[], |_| false);
        assert!(t.targets.is_empty());
        // A page faulting while already a target is not re-added as a candidate.
        t.targets.insert(7, 3);
        t.after_switch(&[7], |_| false);
        assert!(!t.candidates.contains_key(&7));
        assert_eq!(t.logged().collect::<Vec<_>>(), vec![7]);
    }

    #[test]
    fn unobserved_pages_keep_their_table_and_timeout() {
        let mut t: AnonTables<u64> = AnonTables::default();
        t.after_switch_observed(&[1 << 40, 2], |_| None);
        t.after_switch_observed(&[], |p| (p == 2).then_some(true));
        // 2 was seen accessed: promoted; 1 << 40 gave no evidence: untouched.
        assert_eq!(t.targets.get(&2), Some(&ANON_TIMEOUT));
        assert_eq!(t.candidates.get(&(1 << 40)), Some(&ANON_TIMEOUT));
        t.after_switch_observed(&[], |p| (p == 2).then_some(false));
        assert_eq!(t.targets.get(&2), Some(&(ANON_TIMEOUT - 1)));
        assert_eq!(t.candidates.get(&(1 << 40)), Some(&ANON_TIMEOUT));
    }

    #[test]
    fn variants_declare_their_estimators() {
        assert_eq!(Asap::demand_paging().setup().prepage, None);
        assert_eq!(Asap::anon_only().setup().prepage, Some(PrepageSetup { anon: true, file: false }));
        assert_eq!(Asap::file_only().setup().prepage, Some(PrepageSetup { anon: false, file: true }));
        assert_eq!(Asap::both().setup().prepage, Some(PrepageSetup { anon: true, file: true }));
        assert!([Asap::demand_paging(), Asap::both()]
            .iter()
            .all(|a| a.setup().lmk == LmkMode::OomOnly && a.setup().swap == SwapSetup::Zram));
    }
}
