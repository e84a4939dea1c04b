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

/// The resident locations ([`Loc::resident`]) as one bit per location's value.
const RESIDENT_LOCS: u32 = 0b1001_1110;

/// Sets bit `i` of `word` to `on`.
#[inline(always)]
fn put_bit(word: &mut u64, i: u32, on: bool) {
    let bit = 1u64 << i;
    *word = if on { *word | bit } else { *word & !bit };
}

/// Accessed since the last scan (the PTE young bit).
pub const F_YOUNG: u8 = 1;
/// PG_referenced: seen referenced once by reclaim already.
pub const F_REFERENCED: u8 = 2;
/// A shadow entry exists: the page was evicted and a fault on it is a refault. On a
/// resident anonymous page: the page is in the swap cache, read ahead from flash swap
/// and still holding its slot (kept in the record's shadow field).
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
/// A set of free slots `0..n` that finds the next free slot at or after a position,
/// wrapping around, a 64-slot word at a time: a bitmap of the slots and a bitmap of
/// the words that hold a free one.
#[derive(Clone, Debug, Default)]
struct FreeBits {
    n: u32,
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl FreeBits {
    fn all_free(n: u32) -> FreeBits {
        let nw = (n as usize).div_ceil(64);
        let mut words = vec![u64::MAX; nw];
        if !n.is_multiple_of(64) {
            words[nw - 1] = (1u64 << (n % 64)) - 1;
        }
        let mut summary = vec![0u64; nw.div_ceil(64)];
        for w in 0..nw {
            summary[w / 64] |= 1 << (w % 64);
        }
        FreeBits { n, words, summary }
    }

    #[inline]
    fn get(&self, s: u32) -> bool {
        self.words[(s / 64) as usize] >> (s % 64) & 1 == 1
    }

    #[inline]
    fn set(&mut self, s: u32, free: bool) {
        let w = (s / 64) as usize;
        if free {
            self.words[w] |= 1 << (s % 64);
            self.summary[w / 64] |= 1 << (w % 64);
        } else {
            self.words[w] &= !(1 << (s % 64));
            if self.words[w] == 0 {
                self.summary[w / 64] &= !(1 << (w % 64));
            }
        }
    }

    /// The first word at or after word `w` holding a free slot, without wrapping.
    fn word_from(&self, w: usize) -> Option<usize> {
        let mut i = w / 64;
        let mut bits = *self.summary.get(i)? & (u64::MAX << (w % 64));
        loop {
            if bits != 0 {
                return Some(i * 64 + bits.trailing_zeros() as usize);
            }
            i += 1;
            bits = *self.summary.get(i)?;
        }
    }

    /// The first free slot at or after `from`, wrapping around to 0; None when all are
    /// taken.
    fn next_from(&self, from: u32) -> Option<u32> {
        if self.n == 0 {
            return None;
        }
        let w = (from / 64) as usize;
        let here = self.words[w] & (u64::MAX << (from % 64));
        if here != 0 {
            return Some(w as u32 * 64 + here.trailing_zeros());
        }
        let w = self.word_from(w + 1).or_else(|| self.word_from(0))?;
        Some(w as u32 * 64 + self.words[w].trailing_zeros())
    }
}

#[derive(Clone, Debug)]
pub struct PageTable {
    p: Vec<Page>,
    lists: [List; Loc::LISTS],
    /// Pages per (app, location).
    counts: Vec<[u32; 8]>,
    /// Pages per location.
    totals: [u64; 8],
    /// The flash swap device's slots, when tracked ([`PageTable::track_swap_slots`]):
    /// the page in each slot, NIL where free. A page in flash swap keeps its slot in
    /// its `prev` link, which no list uses at that location.
    slots: Vec<u32>,
    /// Where the next slot search starts (the kernel's allocator hands out slots in
    /// order while it can: scan_swap_map's clusters).
    slot_cursor: u32,
    slots_free: u32,
    /// The free slots as a bitmap (bit `s % 64` of word `s / 64` set while slot `s` is
    /// free), and above it a bitmap of the words that have a free slot, so that the
    /// next free slot in order is found a word at a time, not slot by slot.
    slot_bits: FreeBits,
    /// SEAL's unloader candidates, when tracked ([`PageTable::track_sl1_unloadable`]):
    /// one bit per page, set while the page is in zram (SL1) with LLR weight 0, so the
    /// unloader's scan skips 64 pages a word instead of reading each page's record.
    sl1_unloadable: Vec<u64>,
    /// One bit per page, set while a touch of the page would change nothing: it is
    /// resident, young already and not in the swap cache ([`PageTable::touch_is_noop`]).
    /// Most touches find their page so, and the bit, 64 pages a word, is read where the
    /// page's record would have to be loaded from memory.
    noop: Vec<u64>,
    /// How many times a bit of `noop` went from set to clear ([`PageTable::noop_cleared`]).
    noop_cleared: u64,
}

impl PageTable {
    /// Creates a table for apps with the given (anon, file) page counts. Returns the
    /// table and each app's first page id.
    pub fn new(apps: &[(u32, u32)]) -> (PageTable, Vec<u32>) {
        let segments: Vec<[u32; 4]> = apps.iter().map(|&(a, f)| [a, f, 0, 0]).collect();
        PageTable::with_segments(&segments)
    }

    /// Creates a table for apps whose pages come in four segments, in this order:
    /// anonymous, file, then a second anonymous and a second file segment (a scenario's
    /// heap churn and content, see `Foreground`). Returns the table and each app's first
    /// page id.
    pub fn with_segments(apps: &[[u32; 4]]) -> (PageTable, Vec<u32>) {
        let total: u64 = apps.iter().flatten().map(|&n| n as u64).sum();
        assert!(total < NIL as u64, "too many pages for 32-bit page ids");
        let mut p = Vec::with_capacity(total as usize);
        let mut bases = Vec::with_capacity(apps.len());
        for (i, seg) in apps.iter().enumerate() {
            bases.push(p.len() as u32);
            let page = |flags| Page { prev: NIL, next: NIL, shadow: 0, owner: i as u16, loc: Loc::Absent as u8, flags };
            for (k, &n) in seg.iter().enumerate() {
                p.extend(std::iter::repeat_n(page(if k % 2 == 0 { F_ANON } else { 0 }), n as usize));
            }
        }
        let counts = apps.iter().map(|seg| [seg.iter().sum::<u32>(), 0, 0, 0, 0, 0, 0, 0]).collect();
        let totals = [total, 0, 0, 0, 0, 0, 0, 0];
        let t = PageTable {
            p,
            lists: [List { head: NIL, tail: NIL, len: 0 }; Loc::LISTS],
            counts,
            totals,
            slots: Vec::new(),
            slot_cursor: 0,
            slots_free: 0,
            slot_bits: FreeBits::default(),
            sl1_unloadable: Vec::new(),
            noop: vec![0; (total as usize).div_ceil(64)],
            noop_cleared: 0,
        };
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
    #[inline(always)]
    pub fn set_flag(&mut self, p: u32, f: u8, on: bool) {
        if on {
            self.p[p as usize].flags |= f;
        } else {
            self.p[p as usize].flags &= !f;
        }
        if f & (F_YOUNG | F_SHADOW) != 0 {
            if (on && f & F_SHADOW != 0) || (!on && f & F_YOUNG != 0) {
                self.clear_noop(p);
            } else {
                self.sync_noop(p);
            }
        }
    }

    /// Whether a touch of page `p` would change nothing (resident, young, not in the
    /// swap cache), read from a bitmap rather than from the page's record.
    #[inline]
    pub fn touch_is_noop(&self, p: u32) -> bool {
        self.noop[(p / 64) as usize] & (1 << (p % 64)) != 0
    }

    /// How many times a page's touch stopped being a no-op so far. While it stays the
    /// same, every page whose touch was a no-op still is one: a caller that checked a
    /// batch of pages ahead may skip those it found so.
    #[inline]
    pub fn noop_cleared(&self) -> u64 {
        self.noop_cleared
    }

    #[inline(always)]
    fn clear_noop(&mut self, p: u32) {
        self.put_noop(p, false);
    }

    #[inline(always)]
    fn sync_noop(&mut self, p: u32) {
        let pg = &self.p[p as usize];
        let on = (RESIDENT_LOCS >> pg.loc) & 1 != 0 && pg.flags & (F_YOUNG | F_SHADOW) == F_YOUNG;
        self.put_noop(p, on);
    }

    #[inline(always)]
    fn put_noop(&mut self, p: u32, on: bool) {
        let word = &mut self.noop[(p / 64) as usize];
        self.noop_cleared += (!on && *word & (1u64 << (p % 64)) != 0) as u64;
        put_bit(word, p % 64, on);
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
        self.sync_sl1_unloadable(p);
    }

    /// Keeps a bit per page of which pages are in zram (SL1) with LLR weight 0, for
    /// [`PageTable::next_sl1_unloadable`]. Call before any page is in zram.
    pub fn track_sl1_unloadable(&mut self) {
        debug_assert_eq!(self.total(Loc::Zram), 0);
        self.sl1_unloadable = vec![0; self.len().div_ceil(64)];
    }

    /// The first page in `from..end` that is in zram with LLR weight 0 (tracked pages
    /// only, see [`PageTable::track_sl1_unloadable`]).
    pub fn next_sl1_unloadable(&self, from: u32, end: u32) -> Option<u32> {
        debug_assert!(!self.sl1_unloadable.is_empty(), "SL1 candidates not tracked");
        let mut w = (from / 64) as usize;
        let mut bits = self.sl1_unloadable.get(w)? & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let p = w as u32 * 64 + bits.trailing_zeros();
                return (p < end).then_some(p);
            }
            w += 1;
            if w as u32 * 64 >= end {
                return None;
            }
            bits = *self.sl1_unloadable.get(w)?;
        }
    }

    #[inline]
    fn sync_sl1_unloadable(&mut self, p: u32) {
        if let Some(word) = self.sl1_unloadable.get_mut((p / 64) as usize) {
            let pg = &self.p[p as usize];
            put_bit(word, p % 64, pg.loc == Loc::Zram as u8 && pg.flags >> LLR_SHIFT == 0);
        }
    }
    #[inline]
    pub fn shadow(&self, p: u32) -> u32 {
        self.p[p as usize].shadow
    }
    #[inline]
    pub fn set_shadow(&mut self, p: u32, age: u32) {
        self.p[p as usize].shadow = age;
        self.p[p as usize].flags |= F_SHADOW;
        self.clear_noop(p);
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

    /// Hints the CPU to fetch the word of the no-op-touch bitmap that holds page `p`'s
    /// bit; no effect on results.
    #[inline]
    pub fn prefetch_noop_bit(&self, p: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(word) = self.noop.get((p / 64) as usize) {
            // SAFETY: as in `prefetch`.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(word as *const u64 as *const i8) }
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

    /// Gives the flash swap device `n` slots, so that each page entering flash swap
    /// takes the next free slot in order and swap readahead can find its neighbours
    /// ([`PageTable::swap_cluster`]). Call before any page is in flash swap.
    pub fn track_swap_slots(&mut self, n: u32) {
        debug_assert_eq!(self.total(Loc::Flash), 0);
        self.slots = vec![NIL; n as usize];
        self.slots_free = n;
        self.slot_cursor = 0;
        self.slot_bits = FreeBits::all_free(n);
    }

    /// The swap slot of page `p`, if it is in flash swap and slots are tracked.
    pub fn swap_slot(&self, p: u32) -> Option<u32> {
        let s = self.p[p as usize].prev;
        (!self.slots.is_empty() && self.loc(p) == Loc::Flash && s != NIL).then_some(s)
    }

    /// Whether page `p` is resident and in the swap cache: read ahead from flash, its
    /// slot still holding its data.
    #[inline]
    pub fn in_swap_cache(&self, p: u32) -> bool {
        self.has(p, F_SHADOW) && self.loc(p).resident()
    }

    /// Swap readahead: page `p`, in flash swap, comes into memory at list location
    /// `to` and joins the swap cache, keeping its slot (read_swap_cache_async). A page
    /// without a slot simply comes in.
    pub fn swap_cache_add(&mut self, p: u32, to: Loc) {
        debug_assert!(self.loc(p) == Loc::Flash && to.list().is_some());
        let s = std::mem::replace(&mut self.p[p as usize].prev, NIL);
        self.move_to(p, to);
        if s == NIL {
            self.set_flag(p, F_SHADOW, false);
        } else {
            self.p[p as usize].shadow = s;
            self.set_flag(p, F_SHADOW, true);
        }
    }

    /// The swap cache lets go of page `p`'s slot (a fault mapped the page and the
    /// kernel freed its swap); the page stays where it is.
    pub fn swap_cache_free(&mut self, p: u32) {
        debug_assert!(self.in_swap_cache(p));
        let s = self.p[p as usize].shadow;
        self.slots[s as usize] = NIL;
        self.slots_free += 1;
        self.slot_bits.set(s, true);
        self.set_flag(p, F_SHADOW, false);
    }

    /// The other pages in flash in the aligned cluster of `cluster` slots (a power of
    /// two) around page `p`'s slot: what swapin_readahead reads with it (a slot whose
    /// page is in the swap cache already needs no read). Empty when `p` has no slot.
    pub fn swap_cluster(&self, p: u32, cluster: u32) -> Vec<u32> {
        debug_assert!(cluster.is_power_of_two());
        let Some(s) = self.swap_slot(p) else { return Vec::new() };
        let first = s & !(cluster - 1);
        let last = (first + cluster).min(self.slots.len() as u32);
        (first..last).filter(|&t| t != s).map(|t| self.slots[t as usize]).filter(|&q| q != NIL && self.loc(q) == Loc::Flash).collect()
    }

    fn take_slot(&mut self, p: u32) {
        if self.slots_free == 0 {
            // More pages than slots (a device counting compressed bytes): no neighbours.
            self.p[p as usize].prev = NIL;
            return;
        }
        let n = self.slots.len() as u32;
        let s = self.slot_bits.next_from(self.slot_cursor).expect("a free slot is counted");
        debug_assert_eq!(self.slots[s as usize], NIL);
        self.slots[s as usize] = p;
        self.slots_free -= 1;
        self.slot_bits.set(s, false);
        self.slot_cursor = if s + 1 == n { 0 } else { s + 1 };
        self.p[p as usize].prev = s;
    }

    fn free_slot(&mut self, p: u32) {
        let s = self.p[p as usize].prev;
        if s != NIL {
            self.slots[s as usize] = NIL;
            self.slots_free += 1;
            self.slot_bits.set(s, true);
            self.p[p as usize].prev = NIL;
        }
    }

    /// Moves page `p` to location `to`, at the head (newest end) of its list if any.
    #[inline]
    pub fn move_to(&mut self, p: u32, to: Loc) {
        let from = self.loc(p);
        // A slot lives in the `prev` link: freed before a list takes the page, taken
        // after a list let go of it. A swap-cache page keeps its slot in `shadow`: it
        // goes back to it when dropped to flash, and frees it when it leaves memory
        // otherwise (its app died).
        let tracked = !self.slots.is_empty();
        let cached = tracked && from.resident() && self.has(p, F_SHADOW);
        let slot = tracked && (from == Loc::Flash) != (to == Loc::Flash);
        if slot && from == Loc::Flash {
            self.free_slot(p);
        }
        if cached && !to.resident() && to != Loc::Flash {
            self.swap_cache_free(p);
        }
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
        match (from.resident(), to.resident()) {
            (true, false) => self.clear_noop(p),
            (false, true) => self.sync_noop(p),
            _ => {}
        }
        if from == Loc::Zram || to == Loc::Zram {
            self.sync_sl1_unloadable(p);
        }
        if slot && to == Loc::Flash {
            if cached {
                self.p[p as usize].prev = self.p[p as usize].shadow;
            } else {
                self.take_slot(p);
            }
        }
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
            if self.touch_is_noop(p) != (l.resident() && self.has(p, F_YOUNG) && !self.has(p, F_SHADOW)) {
                return Err(format!("the no-op-touch bitmap disagrees with page {p}"));
            }
            if let Some(word) = self.sl1_unloadable.get((p / 64) as usize) {
                let marked = word & (1 << (p % 64)) != 0;
                if marked != (l == Loc::Zram && self.llr_weight(p) == 0) {
                    return Err(format!("page {p}'s SL1 candidate bit is {marked} at {l:?} with LLR weight {}", self.llr_weight(p)));
                }
            }
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
        for p in (0..n as u32).filter(|&p| self.in_swap_cache(p)) {
            let s = self.p[p as usize].shadow as usize;
            if !self.is_anon(p) || self.slots.get(s) != Some(&p) {
                return Err(format!("resident page {p} is marked as in the swap cache but holds no slot"));
            }
        }
        if !self.slots.is_empty() {
            for (s, &q) in self.slots.iter().enumerate().filter(|&(_, &q)| q != NIL) {
                let at = if self.loc(q) == Loc::Flash { self.p[q as usize].prev } else { self.p[q as usize].shadow };
                if !(self.loc(q) == Loc::Flash || self.in_swap_cache(q)) || at != s as u32 {
                    return Err(format!("slot {s} holds page {q}, which is neither in flash swap nor in the swap cache at that slot"));
                }
            }
            for p in (0..n as u32).filter(|&p| self.loc(p) == Loc::Flash) {
                let s = self.p[p as usize].prev;
                if s != NIL && self.slots[s as usize] != p {
                    return Err(format!("page {p} in flash swap names slot {s}, which holds another"));
                }
            }
            if self.slots.iter().filter(|&&q| q == NIL).count() != self.slots_free as usize {
                return Err("free swap slots miscounted".into());
            }
            if let Some(s) = (0..self.slots.len() as u32).find(|&s| self.slot_bits.get(s) != (self.slots[s as usize] == NIL)) {
                return Err(format!("the free-slot bitmap disagrees with slot {s}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past 4,096 slots the words' own bitmap spans several words: a search from near
    /// the end wraps through them to the one free slot left at the start.
    #[test]
    fn the_free_slot_bitmap_wraps_across_summary_words() {
        let n = 10_000;
        let mut bits = FreeBits::all_free(n);
        for s in 0..n {
            assert_eq!(bits.next_from(s), Some(s));
            bits.set(s, false);
        }
        assert_eq!(bits.next_from(0), None);
        bits.set(5_000, true);
        assert_eq!(bits.next_from(9_999), Some(5_000));
        assert_eq!(bits.next_from(5_001), Some(5_000));
        bits.set(70, true);
        assert_eq!(bits.next_from(5_001), Some(70));
        assert_eq!(bits.next_from(71), Some(5_000));
    }

    proptest::proptest! {
        /// The free-slot bitmap hands out the slot a scan in order from the cursor
        /// would, whatever slots were taken and freed before.
        #[test]
        fn the_free_slot_bitmap_finds_what_a_scan_finds(n in 1u32..300, ops in proptest::collection::vec((proptest::bool::ANY, 0u32..300), 0..400)) {
            let mut bits = FreeBits::all_free(n);
            let mut free = vec![true; n as usize];
            for (take, at) in ops {
                let at = at % n;
                let scan = (0..n).map(|k| (at + k) % n).find(|&s| free[s as usize]);
                proptest::prop_assert_eq!(bits.next_from(at), scan);
                if take {
                    if let Some(s) = scan {
                        free[s as usize] = false;
                        bits.set(s, false);
                    }
                } else {
                    free[at as usize] = true;
                    bits.set(at, true);
                }
                for s in 0..n {
                    proptest::prop_assert_eq!(bits.get(s), free[s as usize]);
                }
            }
        }
    }

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

    /// A touch is a no-op exactly while the page is resident, young and not in the swap
    /// cache: the bit follows a fault, a scan clearing the young bit, an eviction that
    /// leaves a shadow entry, and a swap-in by readahead that keeps the page's slot.
    #[test]
    fn a_touch_is_a_noop_exactly_while_the_page_is_resident_young_and_out_of_the_swap_cache() {
        for l in Loc::ALL {
            assert_eq!((RESIDENT_LOCS >> l as u8) & 1 != 0, l.resident(), "{l:?}");
        }
        let (mut t, _) = PageTable::new(&[(130, 3)]);
        t.track_swap_slots(8);
        let p = 70;
        assert!(!t.touch_is_noop(p), "absent");
        t.set_flag(p, F_YOUNG, true);
        assert!(!t.touch_is_noop(p), "young but absent: the touch faults");
        t.move_to(p, Loc::InactiveAnon);
        assert!(t.touch_is_noop(p), "faulted in, young");
        t.move_to(p, Loc::ActiveAnon);
        assert!(t.touch_is_noop(p), "activated: still resident");
        t.set_flag(p, F_YOUNG | F_REFERENCED, false);
        assert!(!t.touch_is_noop(p), "a scan cleared the young bit");
        t.set_flag(p, F_YOUNG, true);
        t.move_to(p, Loc::Flash);
        t.set_shadow(p, 1);
        assert!(!t.touch_is_noop(p), "in flash swap");
        t.swap_cache_add(p, Loc::InactiveAnon);
        assert!(t.in_swap_cache(p) && !t.touch_is_noop(p), "in the swap cache: the touch frees its slot");
        t.swap_cache_free(p);
        assert!(t.touch_is_noop(p), "mapped, its slot freed");
        let f = 131;
        t.move_to(f, Loc::InactiveFile);
        t.set_flag(f, F_YOUNG, true);
        assert!(t.touch_is_noop(f));
        t.move_to(f, Loc::Absent);
        t.set_shadow(f, 2);
        assert!(!t.touch_is_noop(f), "evicted, a shadow entry left");
        t.check().unwrap();
    }

    /// `noop_cleared` counts the times a page's touch stopped being a no-op, and
    /// nothing else: not a clear of a bit already clear, nor a bit set.
    #[test]
    fn the_noop_clear_count_counts_a_bit_going_from_set_to_clear_only() {
        let (mut t, _) = PageTable::new(&[(70, 0)]);
        let p = 65;
        t.set_flag(p, F_YOUNG, false);
        t.set_shadow(p, 1);
        assert_eq!(t.noop_cleared(), 0, "clear already");
        t.set_flag(p, F_SHADOW, false);
        t.set_flag(p, F_YOUNG, true);
        t.move_to(p, Loc::InactiveAnon);
        assert!(t.touch_is_noop(p));
        assert_eq!(t.noop_cleared(), 0, "set, not cleared");
        t.set_flag(p, F_YOUNG | F_REFERENCED, false);
        assert_eq!(t.noop_cleared(), 1, "a scan cleared the young bit");
        t.set_flag(p, F_YOUNG, true);
        t.move_to(p, Loc::Zram);
        assert_eq!(t.noop_cleared(), 2, "swapped out");
        t.move_to(p, Loc::Absent);
        assert_eq!(t.noop_cleared(), 2, "out of memory already");
    }

    /// SEAL's unloader candidates (in zram with LLR weight 0) follow both the page's
    /// location and its weight, and the search for the next one crosses words and stops
    /// at its end.
    #[test]
    fn sl1_candidates_follow_location_and_weight() {
        let (mut t, _) = PageTable::new(&[(200, 10)]);
        t.track_sl1_unloadable();
        assert_eq!(t.next_sl1_unloadable(0, 210), None);
        for p in [3, 70, 150, 199] {
            t.move_to(p, Loc::ActiveAnon);
            t.move_to(p, Loc::Zram);
        }
        t.set_llr_weight(70, 2);
        assert_eq!(t.next_sl1_unloadable(0, 210), Some(3));
        assert_eq!(t.next_sl1_unloadable(4, 210), Some(150), "page 70 holds a chance");
        assert_eq!(t.next_sl1_unloadable(151, 199), None, "the end is exclusive");
        assert_eq!(t.next_sl1_unloadable(151, 210), Some(199));
        t.set_llr_weight(70, 0);
        assert_eq!(t.next_sl1_unloadable(4, 210), Some(70), "its last chance lost in SL1");
        t.move_to(3, Loc::Flash);
        t.move_to(150, Loc::ActiveAnon);
        assert_eq!(t.next_sl1_unloadable(0, 210), Some(70));
        assert_eq!(t.next_sl1_unloadable(71, 210), Some(199));
        t.set_llr_weight(5, 0);
        assert_eq!(t.next_sl1_unloadable(0, 64), None, "weight 0 outside SL1 is no candidate");
        t.check().unwrap();
    }

    /// Pages entering flash swap take slots in order, leave them free when they go,
    /// and a readahead cluster is the other pages of the aligned slots around one.
    #[test]
    fn swap_slots_are_taken_in_order_and_clustered() {
        let (mut t, _) = PageTable::new(&[(12, 0), (4, 0)]);
        t.track_swap_slots(16);
        for p in [3, 12, 4, 5, 13, 0] {
            t.move_to(p, Loc::ActiveAnon);
            t.move_to(p, Loc::Flash);
        }
        assert_eq!([3, 12, 4, 5, 13, 0].map(|p| t.swap_slot(p)), [0, 1, 2, 3, 4, 5].map(Some));
        let mut c = t.swap_cluster(4, 4);
        c.sort_unstable();
        assert_eq!(c, vec![3, 5, 12], "slots 0-3 around slot 2, whoever owns them");
        assert_eq!(t.swap_cluster(13, 4), vec![0], "slots 4-7: only slot 5 taken besides");
        // A swap-in frees the slot; the next page out takes the first free one after
        // the last taken, then wraps round to the freed one.
        t.move_to(12, Loc::ActiveAnon);
        assert_eq!(t.swap_slot(12), None);
        assert_eq!(t.swap_cluster(4, 4).len(), 2);
        t.move_to(7, Loc::Flash);
        assert_eq!(t.swap_slot(7), Some(6));
        t.check().unwrap();
        for p in 8..12 {
            t.move_to(p, Loc::Flash);
        }
        for p in [1, 2, 6, 14, 15, 12] {
            t.move_to(p, Loc::Flash);
        }
        assert_eq!(t.swap_slot(12), Some(1), "the freed slot, after the device's end");
        t.check().unwrap();
        // Every slot taken: a page freed and swapped again gets its slot back, the
        // only free one; with none free a page goes to flash without a slot.
        t.move_to(12, Loc::Absent);
        t.move_to(12, Loc::ActiveAnon);
        t.move_to(12, Loc::Flash);
        assert_eq!(t.swap_slot(12), Some(1));
        t.check().unwrap();
        let (mut small, _) = PageTable::new(&[(3, 0)]);
        small.track_swap_slots(2);
        for p in 0..3 {
            small.move_to(p, Loc::Flash);
        }
        assert_eq!((small.swap_slot(1), small.swap_slot(2)), (Some(1), None));
        assert!(small.swap_cluster(2, 2).is_empty());
        small.move_to(2, Loc::Absent);
        small.check().unwrap();
    }

    /// A page read ahead joins the swap cache with its slot; dropped again it goes back
    /// to that slot; freed by a fault or by its app's death, the slot is free.
    #[test]
    fn the_swap_cache_keeps_a_read_ahead_pages_slot() {
        let (mut t, _) = PageTable::new(&[(4, 0)]);
        t.track_swap_slots(4);
        for p in 0..4 {
            t.move_to(p, Loc::Flash);
        }
        t.swap_cache_add(1, Loc::InactiveAnon);
        assert!(t.in_swap_cache(1) && t.swap_slot(1).is_none());
        assert_eq!(t.swap_cluster(0, 4), vec![2, 3], "a cached page is no longer in flash to read");
        t.move_to(1, Loc::ActiveAnon);
        assert!(t.in_swap_cache(1), "activation keeps it in the swap cache");
        t.check().unwrap();
        t.move_to(1, Loc::Flash);
        assert_eq!(t.swap_slot(1), Some(1), "dropped back to its own slot");
        t.check().unwrap();
        t.swap_cache_add(1, Loc::InactiveAnon);
        t.swap_cache_free(1);
        assert!(!t.in_swap_cache(1) && t.loc(1) == Loc::InactiveAnon);
        t.move_to(1, Loc::Flash);
        assert_eq!(t.swap_slot(1), Some(1), "a fresh slot: the first free one");
        t.swap_cache_add(2, Loc::InactiveAnon);
        t.move_to(2, Loc::Absent);
        assert!(!t.has(2, F_SHADOW));
        t.move_to(2, Loc::ActiveAnon);
        t.move_to(2, Loc::Flash);
        assert_eq!(t.swap_slot(2), Some(2), "its app died: the slot was freed and taken again");
        t.check().unwrap();
    }
}
