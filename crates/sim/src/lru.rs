//! The kernel's LRU steps over a [`PageTable`], shared by the engine's reclaim and by
//! [`crate::replay`]: where a page brought into memory goes (workingset_refault's
//! refault distance), the inactive list's refill from the active one, the second chance
//! a young page gets at the inactive tail, and the shadow entry an evicted page leaves.
//!
//! These are the steps of Linux 4.x (the seeds' kernels) as floe models them: an access
//! to a resident page sets its young bit (the PTE accessed bit), which reclaim's scan
//! reads and clears; a page found young twice in a row at the inactive tail is
//! activated.

use crate::pages::{Loc, PageTable, F_REFERENCED, F_SHADOW, F_YOUNG};

/// The inactive list's target for an LRU type of `pages` pages (anonymous or file,
/// active and inactive together): inactive x ratio >= active, ratio = sqrt(10 x GiB).
pub fn inactive_ratio(pages: u64) -> u64 {
    let gb = pages >> 18;
    if gb == 0 {
        1
    } else {
        ((10 * gb) as f64).sqrt() as u64
    }
}

/// Whether file page `p`, refaulting, is activated: its refault distance (the file
/// evictions since its own, the nonresident `age` now minus the age its shadow entry
/// recorded) is within the active file list (workingset_refault).
#[inline]
pub fn refault_activates(pages: &PageTable, age: u32, p: u32) -> bool {
    let distance = age.wrapping_sub(pages.shadow(p)) as i64;
    distance <= pages.list_len(Loc::ActiveFile) as i64
}

/// Readies page `p`, just brought into memory, for its LRU list and returns the list, as
/// the seeds' kernels (3.0-4.14) choose it: an anonymous page starts active, a new one
/// (lru_cache_add_active) and a swapped-in one alike (do_swap_page's activate_page); a
/// file page starts inactive unless it is a refault whose distance is within the active
/// file list (workingset_refault, 3.15-5.8). The page is young, not referenced, and
/// its shadow entry is gone. The caller puts it on the list.
#[inline]
pub fn fault_in(pages: &mut PageTable, age: u32, p: u32, refault: bool) -> Loc {
    let anon = pages.is_anon(p);
    let mut active = anon;
    if refault && !anon {
        active = refault_activates(pages, age, p);
    }
    pages.set_flag(p, F_SHADOW | F_REFERENCED, false);
    pages.set_flag(p, F_YOUNG, true);
    match (anon, active) {
        (true, true) => Loc::ActiveAnon,
        (true, false) => Loc::InactiveAnon,
        (false, true) => Loc::ActiveFile,
        (false, false) => Loc::InactiveFile,
    }
}

/// What reclaim's scan found at the inactive tail ([`scan_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// The inactive list is empty, even after its refill.
    Empty,
    /// The tail page was young and stays: moved to the active list (`activated`: an
    /// anonymous page, or a file page already referenced once), or else marked
    /// referenced and moved to the inactive list's head.
    Kept { activated: bool },
    /// The tail page was not young: reclaim may evict it. It is still at the tail.
    Cold(u32),
}

/// What one [`scan_step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Pages moved from the active list to the inactive one.
    pub deactivated: u32,
    /// Of those, the pages found referenced (young): shrink_active_list counts them as
    /// rotated for get_scan_count ("Count referenced pages from currently used mappings
    /// as rotated, even though only some of them are actually re-activated"), though
    /// it deactivates them all but mapped executable file pages, which floe does not
    /// tell apart.
    pub referenced: u32,
    /// What was found at the inactive tail.
    pub tail: Tail,
}

/// One step of reclaim's scan of the anonymous or the file LRU (`anon`): when the
/// inactive list is low against the active one by `ratio` ([`inactive_ratio`]) or
/// empty, up to `batch` pages move from the active tail to the inactive head with their
/// young and referenced bits cleared (page_referenced clears the young bits it reads);
/// then the inactive tail page is looked at, and a young one gets its second chance.
#[inline]
pub fn scan_step(pages: &mut PageTable, anon: bool, ratio: u32, batch: u32) -> Step {
    let (inactive, active) = if anon { (Loc::InactiveAnon, Loc::ActiveAnon) } else { (Loc::InactiveFile, Loc::ActiveFile) };
    let (mut deactivated, mut referenced) = (0, 0);
    if pages.list_len(inactive) * ratio < pages.list_len(active) || pages.list_len(inactive) == 0 {
        for _ in 0..batch {
            let Some(p) = pages.tail(active) else {
                break;
            };
            deactivated += 1;
            referenced += pages.has(p, F_YOUNG) as u32;
            pages.set_flag(p, F_YOUNG | F_REFERENCED, false);
            pages.move_to(p, inactive);
        }
    }
    let step = |tail| Step { deactivated, referenced, tail };
    let Some(p) = pages.tail(inactive) else {
        return step(Tail::Empty);
    };
    if !pages.has(p, F_YOUNG) {
        return step(Tail::Cold(p));
    }
    pages.set_flag(p, F_YOUNG, false);
    let activated = anon || pages.has(p, F_REFERENCED);
    if activated {
        pages.move_to(p, active);
    } else {
        pages.set_flag(p, F_REFERENCED, true);
        pages.rotate(p);
    }
    step(Tail::Kept { activated })
}

/// Records the shadow entry of page `p`, just evicted, at the nonresident `age`; a file
/// page's eviction advances the age. Before 5.9 only the page cache keeps shadow entries,
/// so only file evictions count (F_SHADOW still marks a swapped page for refault
/// accounting).
#[inline]
pub fn leave_shadow(pages: &mut PageTable, age: &mut u32, p: u32) {
    pages.set_shadow(p, *age);
    if !pages.is_anon(p) {
        *age = age.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A young page at the inactive tail is kept: a file page the first time with its
    /// referenced bit set, activated the second; a page not young is the one to evict.
    #[test]
    fn a_file_page_found_young_twice_is_activated() {
        let (mut t, _) = PageTable::new(&[(0, 3)]);
        for p in 0..3 {
            let to = fault_in(&mut t, 0, p, false);
            assert_eq!(to, Loc::InactiveFile);
            t.move_to(p, to);
        }
        let step = |deactivated, referenced, tail| Step { deactivated, referenced, tail };
        // The active list is empty, so the inactive one is not low.
        assert_eq!(scan_step(&mut t, false, 1, 32), step(0, 0, Tail::Kept { activated: false }));
        assert!(t.has(0, F_REFERENCED) && !t.has(0, F_YOUNG));
        assert_eq!(t.tail(Loc::InactiveFile), Some(1));
        scan_step(&mut t, false, 1, 32);
        scan_step(&mut t, false, 1, 32);
        assert_eq!(scan_step(&mut t, false, 1, 32), step(0, 0, Tail::Cold(0)), "not touched since");
        t.set_flag(0, F_YOUNG, true);
        assert_eq!(scan_step(&mut t, false, 1, 32), step(0, 0, Tail::Kept { activated: true }));
        assert_eq!(t.loc(0), Loc::ActiveFile);
        // Two active pages against one inactive: the refill moves both to the head,
        // their bits cleared, and counts the one found young (page 1) as referenced;
        // the tail is still page 2, referenced but not young.
        t.move_to(1, Loc::ActiveFile);
        t.set_flag(1, F_YOUNG, true);
        assert_eq!(scan_step(&mut t, false, 1, 32), step(2, 1, Tail::Cold(2)));
        assert_eq!(t.list_len(Loc::ActiveFile), 0);
        assert!(!t.has(1, F_YOUNG) && !t.has(0, F_REFERENCED));
        t.check().unwrap();
    }

    /// A file refault is activated when no more file pages were evicted since its own
    /// eviction than the active file list holds; each file eviction advances the age.
    #[test]
    fn refault_distance_is_measured_against_the_active_file_list() {
        let (mut t, _) = PageTable::new(&[(1, 6)]);
        let mut age = 0;
        for p in 1..7 {
            t.move_to(p, Loc::InactiveFile);
        }
        t.move_to(1, Loc::Absent);
        leave_shadow(&mut t, &mut age, 1);
        t.move_to(2, Loc::Absent);
        leave_shadow(&mut t, &mut age, 2);
        assert_eq!(age, 2);
        t.move_to(0, Loc::ActiveAnon);
        t.move_to(0, Loc::Zram);
        leave_shadow(&mut t, &mut age, 0);
        assert_eq!(age, 2, "an anonymous eviction leaves the age alone");
        // Page 1's distance is 2, page 2's is 1.
        t.move_to(3, Loc::ActiveFile);
        assert!(!refault_activates(&t, age, 1) && refault_activates(&t, age, 2));
        t.move_to(4, Loc::ActiveFile);
        assert!(refault_activates(&t, age, 1));
        assert_eq!(fault_in(&mut t, age, 1, true), Loc::ActiveFile);
        assert!(!t.has(1, F_SHADOW) && t.has(1, F_YOUNG));
        assert_eq!(fault_in(&mut t, age, 0, true), Loc::ActiveAnon, "a swap-in is active whatever its distance");
    }
}
