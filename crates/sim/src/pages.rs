//! The page table: every simulated 4 KiB page, its owner, kind and location, and the
//! kernel's LRU lists as intrusive doubly-linked index lists (O(1) insert, remove, move).
//!
//! Storage is one 16-byte record per page (a quarter of a cache line, so a list move
//! touches few lines), indexed by a dense page id; each app owns one contiguous id
//! range, anonymous pages first, then file pages.

/// End-of-list marker.
pub const NIL: u32 = u32::MAX;

/// Where a page is. Locations 1..=5 are lists; the others are not ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Loc {
    /// Not in memory: an anonymous page never touched (or freed with its process), a
    /// file page not in the page cache (never read, or evicted: see the shadow flag).
    Absent = 0,
    InactiveAnon = 1,
    ActiveAnon = 2,
    InactiveFile = 3,
    ActiveFile = 4,
    /// Compressed in RAM (zram, zswap's pool). Ordered oldest-first for writeback.
    Zram = 5,
    /// In swap space on flash.
    Flash = 6,
    /// Resident anonymous page that reclaim may not take (its app is unswappable):
    /// off the LRU lists, as the kernel keeps unevictable pages, so reclaim does not
    /// rescan it on every pass.
    Unevictable = 7,
}

impl Loc {
    pub const ALL: [Loc; 8] =
        [Loc::Absent, Loc::InactiveAnon, Loc::ActiveAnon, Loc::InactiveFile, Loc::ActiveFile, Loc::Zram, Loc::Flash, Loc::Unevictable];
    const LISTS: usize = 5;

    fn from_u8(v: u8) -> Loc {
        Loc::ALL[v as usize]
    }
    /// True for the four LRU lists: the page occupies a frame of RAM.
    pub fn resident(self) -> bool {
        matches!(self, Loc::InactiveAnon | Loc::ActiveAnon | Loc::InactiveFile | Loc::ActiveFile | Loc::Unevictable)
    }
    fn list(self) -> Option<usize> {
        let v = self as usize;
        (1..=Loc::LISTS).contains(&v).then(|| v - 1)
    }
}

/// Accessed since the last scan (the PTE young bit).
pub const F_YOUNG: u8 = 1;
/// PG_referenced: seen referenced once by reclaim already.
pub const F_REFERENCED: u8 = 2;
/// A shadow entry exists: the page was evicted and a fault on it is a refault.
pub const F_SHADOW: u8 = 4;
/// Anonymous page (else file-backed).
pub const F_ANON: u8 = 8;
/// Pinned by a policy (e.g. SEAL's launch-required pages held in SL1).
pub const F_LOCKED: u8 = 16;
/// The top three bits hold SEAL's LLR weight (0..=7; 0 = the sl2-list).
const LLR_SHIFT: u8 = 5;

#[derive(Clone, Copy, Debug, Default)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

/// One page.
#[derive(Clone, Copy, Debug)]
struct Page {
    prev: u32,
    next: u32,
    /// Eviction age recorded in the shadow entry.
    shadow: u32,
    owner: u16,
    loc: u8,
    flags: u8,
}

/// All pages of a run.
#[derive(Clone, Debug)]
pub struct PageTable {
    p: Vec<Page>,
    lists: [List; Loc::LISTS],
    /// Pages per (app, location).
    counts: Vec<[u32; 8]>,
    /// Pages per location.
    totals: [u64; 8],
}

impl PageTable {
    /// Creates a table for apps with the given (anon, file) page counts. Returns the
    /// table and each app's first page id.
    pub fn new(apps: &[(u32, u32)]) -> (PageTable, Vec<u32>) {
        let total: u64 = apps.iter().map(|&(a, f)| a as u64 + f as u64).sum();
        assert!(total < NIL as u64, "too many pages for 32-bit page ids");
        let mut p = Vec::with_capacity(total as usize);
        let mut bases = Vec::with_capacity(apps.len());
        for (i, &(a, f)) in apps.iter().enumerate() {
            bases.push(p.len() as u32);
            let page = |flags| Page { prev: NIL, next: NIL, shadow: 0, owner: i as u16, loc: Loc::Absent as u8, flags };
            p.extend(std::iter::repeat_n(page(F_ANON), a as usize));
            p.extend(std::iter::repeat_n(page(0), f as usize));
        }
        let counts = apps.iter().map(|&(a, f)| [a + f, 0, 0, 0, 0, 0, 0, 0]).collect();
        let totals = [total, 0, 0, 0, 0, 0, 0, 0];
        let t = PageTable { p, lists: [List { head: NIL, tail: NIL, len: 0 }; Loc::LISTS], counts, totals };
        (t, bases)
    }

    pub fn len(&self) -> usize {
        self.p.len()
    }
    pub fn is_empty(&self) -> bool {
        self.p.is_empty()
    }
    #[inline]
    pub fn owner(&self, p: u32) -> u16 {
        self.p[p as usize].owner
    }
    #[inline]
    pub fn loc(&self, p: u32) -> Loc {
        Loc::from_u8(self.p[p as usize].loc)
    }
    #[inline]
    pub fn is_anon(&self, p: u32) -> bool {
        self.p[p as usize].flags & F_ANON != 0
    }
    #[inline]
    pub fn has(&self, p: u32, f: u8) -> bool {
        self.p[p as usize].flags & f != 0
    }
    #[inline]
    pub fn set_flag(&mut self, p: u32, f: u8, on: bool) {
        if on {
            self.p[p as usize].flags |= f;
        } else {
            self.p[p as usize].flags &= !f;
        }
    }
    /// SEAL's LLR weight of the page (Algorithm 1's flag).
    #[inline]
    pub fn llr_weight(&self, p: u32) -> u8 {
        self.p[p as usize].flags >> LLR_SHIFT
    }
    #[inline]
    pub fn set_llr_weight(&mut self, p: u32, w: u8) {
        debug_assert!(w < 8);
        let f = &mut self.p[p as usize].flags;
        *f = (*f & ((1 << LLR_SHIFT) - 1)) | (w << LLR_SHIFT);
    }
    #[inline]
    pub fn shadow(&self, p: u32) -> u32 {
        self.p[p as usize].shadow
    }
    #[inline]
    pub fn set_shadow(&mut self, p: u32, age: u32) {
        self.p[p as usize].shadow = age;
        self.p[p as usize].flags |= F_SHADOW;
    }
    /// Hints the CPU to fetch page `p`'s record; no effect on results.
    #[inline]
    pub fn prefetch(&self, p: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(rec) = self.p.get(p as usize) {
            // SAFETY: prefetch is a hint that never faults; the pointer comes from a
            // live element of the slice.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(rec as *const Page as *const i8) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = p;
    }

    /// Length of a list location.
    pub fn list_len(&self, l: Loc) -> u32 {
        l.list().map_or(0, |i| self.lists[i].len)
    }
    /// Pages at location `l`, all apps together.
    #[inline]
    pub fn total(&self, l: Loc) -> u64 {
        self.totals[l as usize]
    }

    /// Pages of `app` at `l`.
    #[inline]
    pub fn count(&self, app: u16, l: Loc) -> u32 {
        self.counts[app as usize][l as usize]
    }
    /// The oldest page of list `l`.
    #[inline]
    pub fn tail(&self, l: Loc) -> Option<u32> {
        let t = self.lists[l.list()?].tail;
        (t != NIL).then_some(t)
    }
    /// The next-newer page after `p` in its list (towards the head).
    #[inline]
    pub fn newer(&self, p: u32) -> Option<u32> {
        let q = self.p[p as usize].prev;
        (q != NIL).then_some(q)
    }

    /// Moves page `p` to location `to`, at the head (newest end) of its list if any.
    #[inline]
    pub fn move_to(&mut self, p: u32, to: Loc) {
        let from = self.loc(p);
        if let Some(i) = from.list() {
            self.unlink(i, p);
        }
        if let Some(i) = to.list() {
            self.push_head(i, p);
        }
        let c = &mut self.counts[self.p[p as usize].owner as usize];
        c[from as usize] -= 1;
        c[to as usize] += 1;
        self.totals[from as usize] -= 1;
        self.totals[to as usize] += 1;
        self.p[p as usize].loc = to as u8;
    }

    /// Moves `p` to the head of the list it is already on.
    #[inline]
    pub fn rotate(&mut self, p: u32) {
        if let Some(i) = self.loc(p).list() {
            self.unlink(i, p);
            self.push_head(i, p);
        }
    }

    #[inline]
    fn unlink(&mut self, i: usize, p: u32) {
        let (pr, nx) = (self.p[p as usize].prev, self.p[p as usize].next);
        if pr == NIL {
            self.lists[i].head = nx;
        } else {
            self.p[pr as usize].next = nx;
        }
        if nx == NIL {
            self.lists[i].tail = pr;
        } else {
            self.p[nx as usize].prev = pr;
        }
        self.p[p as usize].prev = NIL;
        self.p[p as usize].next = NIL;
        self.lists[i].len -= 1;
    }

    #[inline]
    fn push_head(&mut self, i: usize, p: u32) {
        let h = self.lists[i].head;
        self.p[p as usize].prev = NIL;
        self.p[p as usize].next = h;
        if h == NIL {
            self.lists[i].tail = p;
        } else {
            self.p[h as usize].prev = p;
        }
        self.lists[i].head = p;
        self.lists[i].len += 1;
    }

    /// Checks every structural invariant; returns a description of the first broken one.
    /// Used by tests (property tests drive random operations and call this).
    pub fn check(&self) -> Result<(), String> {
        let n = self.len();
        let mut seen = vec![false; n];
        for (i, l) in self.lists.iter().enumerate() {
            let want = Loc::ALL[i + 1];
            let (mut p, mut prev, mut len) = (l.head, NIL, 0u32);
            while p != NIL {
                if seen[p as usize] {
                    return Err(format!("page {p} twice in lists"));
                }
                seen[p as usize] = true;
                if self.loc(p) != want {
                    return Err(format!("page {p} on list {want:?} but located {:?}", self.loc(p)));
                }
                if self.p[p as usize].prev != prev {
                    return Err(format!("page {p} has a broken prev link"));
                }
                let anon_list = matches!(want, Loc::InactiveAnon | Loc::ActiveAnon | Loc::Zram);
                if anon_list != self.is_anon(p) {
                    return Err(format!("page {p} of the wrong kind on {want:?}"));
                }
                prev = p;
                p = self.p[p as usize].next;
                len += 1;
            }
            if prev != l.tail || len != l.len {
                return Err(format!("list {want:?}: tail or length wrong ({len} walked, {} recorded)", l.len));
            }
        }
        let mut counts = vec![[0u32; 8]; self.counts.len()];
        for p in 0..n as u32 {
            let l = self.loc(p);
            if l.list().is_some() != seen[p as usize] {
                return Err(format!("page {p} at {l:?} is not on exactly the list of its location"));
            }
            if matches!(l, Loc::Flash | Loc::Unevictable) && !self.is_anon(p) {
                return Err(format!("file page {p} in flash swap"));
            }
            counts[self.owner(p) as usize][l as usize] += 1;
        }
        if counts != self.counts {
            return Err("per-app location counts disagree with the pages".into());
        }
        for l in Loc::ALL {
            let sum: u64 = counts.iter().map(|c| c[l as usize] as u64).sum();
            if sum != self.totals[l as usize] {
                return Err(format!("total at {l:?} is {} but pages say {sum}", self.totals[l as usize]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_keep_order_and_counts() {
        let (mut t, bases) = PageTable::new(&[(3, 2), (1, 0)]);
        assert_eq!(bases, vec![0, 5]);
        for p in [0, 1, 2] {
            t.move_to(p, Loc::ActiveAnon);
        }
        assert_eq!(t.tail(Loc::ActiveAnon), Some(0));
        t.rotate(0);
        assert_eq!(t.tail(Loc::ActiveAnon), Some(1));
        t.move_to(1, Loc::InactiveAnon);
        t.move_to(3, Loc::InactiveFile);
        assert_eq!(t.count(0, Loc::ActiveAnon), 2);
        assert_eq!(t.count(0, Loc::Absent), 1);
        assert_eq!(t.list_len(Loc::InactiveAnon), 1);
        t.check().unwrap();
    }
}
