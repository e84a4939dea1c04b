//! Reclaim in the engine: allocation against the watermarks (kswapd from the low one,
//! direct reclaim from the min one), Linux's anon/file scan balance, the LRU scan with
//! young and referenced bits and the inactive ratio, eviction to zram / zswap / flash or
//! dropping a file page with a shadow entry, and Ice+'s frozen-first pass.

use super::{Cont, Ctx, Ev, Evict, Sim, EVICT_NS, LMK_INTERVAL, RECLAIM_BATCH, SCAN_NS, SWAPPINESS};
use crate::flash::Op;
use crate::lru::{self, Tail};
use crate::pages::{Loc, F_LOCKED};
use floe_core::{AppState, Event, Nanos, Pages, ReclaimOrder, SwapSetup};

/// What a per-process reclaim takes ([`Sim::per_process_reclaim`]): the words Android's
/// `/proc/PID/reclaim` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimKind {
    /// `file`: the file-backed pages only.
    File,
    /// `anon`: the anonymous pages only.
    Anon,
    /// `all`: both.
    All,
}

/// The anon/file balance of one reclaim pass (Linux's scan_balance).
#[derive(Clone, Copy, Debug)]
pub(super) enum Balance {
    File,
    Anon,
    /// Scan both, in proportion to these weights.
    Fract {
        anon: u64,
        file: u64,
    },
    /// Scan the larger list (the kernel at priority 0: both by size).
    Equal,
}

/// get_scan_count's weights of the anon and file LRUs: each type's priority
/// (swappiness, 200 - swappiness) times how many of its recently scanned pages were not
/// rotated back to active use, so the type whose pages prove busy is scanned less.
pub(super) fn scan_fractions(swappiness: u64, scanned: [u64; 2], rotated: [u64; 2]) -> (u64, u64) {
    let ap = swappiness * (scanned[0] + 1) / (rotated[0] + 1);
    let fp = (200 - swappiness) * (scanned[1] + 1) / (rotated[1] + 1);
    (ap, fp)
}

impl Sim {
    /// What reclaim scans next, as Linux's get_scan_count decides it for a pass.
    pub(super) fn scan_balance(&mut self, anon_ok: bool) -> Balance {
        let len = |l: Loc| self.pages.list_len(l) as u64;
        let (ia, aa, ifl, af) = (len(Loc::InactiveAnon), len(Loc::ActiveAnon), len(Loc::InactiveFile), len(Loc::ActiveFile));
        if !anon_ok {
            return Balance::File;
        }
        if self.scan_anon_only {
            return Balance::Anon;
        }
        // File pages nearly gone: only anonymous memory is left to take.
        if ifl + af + (self.free().max(0) as u64) <= self.wmark[2].max(0) as u64 {
            return Balance::Anon;
        }
        // Linux 3.11-5.8 also reclaims only file pages while the inactive file list is
        // not low ("only evict file pages when we have plenty"); that rule is left out:
        // see docs/MODEL.md, "Reclaim and watermarks".
        for (k, size) in [(0, ia + aa), (1, ifl + af)] {
            if self.recent_scanned[k] > size / 4 {
                self.recent_scanned[k] /= 2;
                self.recent_rotated[k] /= 2;
            }
        }
        let (anon, file) = scan_fractions(SWAPPINESS, self.recent_scanned, self.recent_rotated);
        Balance::Fract { anon, file }
    }

    /// The inactive list's target: inactive x ratio >= active, ratio = sqrt(10 x GiB of the list).
    pub(super) fn inactive_ratio(&self, pages: u64) -> u64 {
        crate::lru::inactive_ratio(pages)
    }

    /// Makes room for one page: wakes kswapd below the low watermark, reclaims
    /// directly (stalling the caller) below the min watermark.
    pub(super) fn alloc(&mut self, ctx: &mut Ctx) {
        let free = self.free();
        if free <= self.wmark[1] && !self.kswapd_active {
            self.kswapd_active = true;
            self.push(self.now, Ev::Kswapd);
            if self.setup.events.pressure {
                let p = |x: i64| Pages(x.max(0) as u64);
                self.pending.push(Event::Pressure { free: p(free), low: p(self.wmark[1]), min: p(self.wmark[0]) });
            }
        }
        // The kernel's lowmemorykiller is a shrinker and lmkd hears vmpressure: both act
        // only while memory is being reclaimed, so while kswapd sleeps between its low
        // and high watermarks nothing is killed (direct reclaim, below, checks as well).
        if self.kswapd_active
            && self.lmk_free() <= self.minfree.last().map_or(0, |m| m.1)
            && self.last_lmk.is_none_or(|t| self.now >= t + LMK_INTERVAL)
        {
            self.lmk();
        }
        if self.free() <= self.wmark[0] {
            let t0 = ctx.t;
            let (got, cost, io) = self.shrink(RECLAIM_BATCH, ctx.t, true);
            self.c.direct_reclaimed += got as u64;
            self.block_frames(got);
            ctx.cpu += cost.0;
            ctx.compress += cost.1;
            ctx.t = ctx.t.max(io);
            if let Some(l) = self.psi.as_mut() {
                // Direct reclaim stalls the allocating task: its reclaim work and any
                // wait for the writes it started.
                l.stall(t0, ctx.t + cost.0);
            }
            self.lmk();
            if got == 0 && self.free() <= 0 {
                self.oom_kill();
            }
        }
    }

    pub(super) fn swap_possible(&self) -> bool {
        if self.setup.swap == SwapSetup::TwoLevel {
            // Everything is swapped into SL1 first.
            return self.zram_stored < self.zram_cap;
        }
        if self.setup.swap == SwapSetup::Zswap {
            return self.zram_stored + self.flash_used < self.flash_cap;
        }
        self.zram_stored < self.zram_cap || self.flash_used < self.flash_cap
    }

    /// Under zswap every stored page holds a slot of the swap device: reclaim allocates
    /// the slot (add_to_swap) before the write that frontswap diverts into the pool
    /// (swap_writepage), so pool and flash share the device's size. Other setups have
    /// no such bond.
    pub(super) fn swap_slots_left(&self) -> bool {
        self.setup.swap != SwapSetup::Zswap || self.zram_stored + self.flash_used < self.flash_cap
    }

    // ----- reclaim -----

    pub(super) fn kswapd_batch(&mut self) {
        self.lmk();
        if self.free() >= self.wmark[2] && !self.seal_ags_busy() {
            self.kswapd_sleeps();
            return;
        }
        self.kswapd_active = true;
        if let Some(l) = self.psi.as_mut() {
            // kswapd's balance_pgdat is a memory stall from wakeup to sleep.
            l.kswapd_wakes(self.now);
        }
        let (got, cost, io) = self.shrink(RECLAIM_BATCH, self.now, false);
        self.block_frames(got);
        if got == 0 {
            self.kswapd_sleeps();
            if self.setup.events.pressure {
                // A pass that frees nothing: a policy may answer it with a kill (Selective's
                // Algorithm 1 does), taking effect before kswapd is woken again.
                self.pending.push(Event::ReclaimFailed { free: Pages(self.free().max(0) as u64) });
                self.flush_policy();
            }
            return;
        }
        // Pages written to flash swap are not really free until their writeback ends:
        // kswapd goes on only after this batch's writes complete, so swap-out runs at
        // the flash's write speed instead of piling up a queue that reads wait behind.
        let ctx = Ctx { t: io, cpu: cost.0, compress: cost.1 };
        self.start_job(ctx, Nanos::ZERO, None, Cont::Kswapd);
    }

    /// Reclaim that runs while the foreground renders blocks its render thread (Ice
    /// §2.2.3: "a high number of frame rendering tasks are blocked by memory reclaiming
    /// tasks"): the device's wait per page is owed to the frames that follow. What is
    /// owed at once is at most one kswapd episode's wait (its pages from the low
    /// watermark to the high): the frames wait on the reclaim going on around them, so
    /// reclaim that goes on keeps them waiting, and once it stops they recover within an
    /// episode's wait, not after every page of a burst long past has been paid for.
    pub(super) fn block_frames(&mut self, pages: u32) {
        if self.in_use && self.interactive && self.fg.is_some() {
            let owed = self.frame_block_owed + Nanos(self.frame_block_per_page.0 * u64::from(pages));
            self.frame_block_owed = owed.min(self.frame_block_cap());
        }
    }

    /// The most wait reclaim may owe the frames: one kswapd episode's pages, from the
    /// low watermark to the high, at the device's wait per page.
    pub(super) fn frame_block_cap(&self) -> Nanos {
        let episode = (self.wmark[2] - self.wmark[1]).max(1) as u64;
        Nanos(self.frame_block_per_page.0 * episode)
    }

    fn kswapd_sleeps(&mut self) {
        self.kswapd_active = false;
        if let Some(l) = self.psi.as_mut() {
            l.kswapd_sleeps(self.now);
        }
    }

    /// Reclaims up to `nr` pages from the LRU tails. Returns (pages freed, (CPU cost,
    /// of which compression), when its flash writes are done). Pages it writes to
    /// flash stay under writeback until their writes end, unless the caller `waits`
    /// for them: a direct reclaimer whose pages are under writeback sleeps until they
    /// are written (4.x: wait_iff_congested / congestion_wait in its reclaim loop) and
    /// frees them when it retries, so it resumes at the returned time with them free,
    /// instead of reclaiming again for every page it then allocates.
    pub(super) fn shrink(&mut self, nr: u32, t: Nanos, waits: bool) -> (u32, (Nanos, Nanos), Nanos) {
        let mut acc = Evict::default();
        // Freeze-aware eviction (Ice+): the frozen apps, least recently used first.
        let frozen = if self.setup.reclaim == ReclaimOrder::FrozenFirst { self.frozen_by_age() } else { Vec::new() };
        // Whether the anon [0] and file [1] lists may still hold frozen pages this pass.
        let mut frozen_left = [!frozen.is_empty(); 2];
        // SEAL's AGS swaps anonymous memory a whole app at a time; the LRU then only
        // gives up file pages.
        let ags = self.seal.as_ref().is_some_and(|s| s.cfg.ags);
        if ags {
            self.seal_ags_shrink(nr, &mut acc);
        }
        // Like the kernel raising scan priority until it scans whole lists, a pass may
        // walk the entire LRU once before giving up.
        let budget = (nr as u64 * 64).max(self.resident() as u64 * 2);
        // FG-aware eviction skips the foreground app's pages until a whole list was
        // skipped (then nothing else is left to take).
        let mut fg_skipped: u32 = 0;
        let mut balance = self.scan_balance(self.swap_possible() && !ags);
        // Pages scanned this pass from the anon [0] and file [1] lists.
        let mut pass = [0u64; 2];
        while acc.got < nr && acc.scanned < budget {
            let anon_ok = self.swap_possible() && !ags;
            let lru = |s: &Self, k: Loc, l: Loc| (s.pages.list_len(k) + s.pages.list_len(l)) as u64;
            let (anon_lru, file_lru) = (lru(self, Loc::InactiveAnon, Loc::ActiveAnon), lru(self, Loc::InactiveFile, Loc::ActiveFile));
            // A list scanned through without enough reclaimed: the kernel's priority
            // falls to 0 and it scans both in proportion to their size.
            let exhausted = match balance {
                Balance::File => pass[1] > file_lru,
                Balance::Anon => pass[0] > anon_lru,
                Balance::Fract { .. } => pass[0] + pass[1] > anon_lru + file_lru,
                Balance::Equal => false,
            };
            // RCC's reclaim keeps to the anonymous lists at every priority (its
            // rcc_mode overrides get_scan_count's choice, SCAN_EQUAL included).
            if exhausted && !self.scan_anon_only {
                balance = Balance::Equal;
            }
            let anon = anon_ok
                && match balance {
                    Balance::File => false,
                    Balance::Anon => anon_lru > 0,
                    // Keep each list's share of this pass's scans at its size times its
                    // fraction, as the kernel's scan targets are.
                    Balance::Fract { anon, file } => {
                        let (wa, wf) = (anon as u128 * anon_lru as u128, file as u128 * file_lru as u128);
                        wa > 0 && (wf == 0 || pass[0] as u128 * (wa + wf) <= wa * (pass[0] + pass[1]) as u128)
                    }
                    Balance::Equal => anon_lru > file_lru,
                };
            let k = (!anon) as usize;
            if frozen_left[k] {
                // The list the scan balance chose gives up its frozen apps' pages first.
                let (got, scanned) = (acc.got, acc.scanned);
                self.shrink_frozen(anon, (nr - acc.got).min(RECLAIM_BATCH), &frozen, &mut acc);
                pass[k] += acc.scanned - scanned;
                self.recent_scanned[k] += acc.scanned - scanned;
                if acc.got > got {
                    continue;
                }
                frozen_left[k] = false;
            }
            let (inactive, active) = if anon { (Loc::InactiveAnon, Loc::ActiveAnon) } else { (Loc::InactiveFile, Loc::ActiveFile) };
            let ratio = self.inactive_ratio(if anon { anon_lru } else { file_lru }) as u32;
            // Refill the inactive list from the active tail if it is low, then look at
            // its tail page: a young one gets its second chance.
            let lru::Step { deactivated, referenced, tail } = lru::scan_step(&mut self.pages, anon, ratio, RECLAIM_BATCH);
            acc.scanned += deactivated as u64;
            self.recent_scanned[k] += deactivated as u64;
            self.recent_rotated[k] += referenced as u64;
            if tail == Tail::Empty {
                if !anon_ok || self.pages.list_len(Loc::InactiveFile) + self.pages.list_len(Loc::ActiveFile) == 0 {
                    break;
                }
                continue;
            }
            acc.scanned += 1;
            pass[k] += 1;
            self.recent_scanned[k] += 1;
            let p = match tail {
                Tail::Cold(p) => p,
                Tail::Kept { activated } => {
                    self.recent_rotated[k] += activated as u64;
                    continue;
                }
                Tail::Empty => unreachable!("handled above"),
            };
            if self.setup.reclaim == ReclaimOrder::FgLast
                && self.fg == Some(self.pages.owner(p))
                && fg_skipped <= self.pages.list_len(inactive)
            {
                fg_skipped += 1;
                self.pages.rotate(p);
                continue;
            }
            if !self.evict_page(p, &mut acc) {
                if self.pages.has(p, F_LOCKED) {
                    self.pages.rotate(p);
                } else if anon && !self.apps[self.pages.owner(p) as usize].swappable {
                    // Unswappable: off the LRU until its app may swap again.
                    self.pages.move_to(p, Loc::Unevictable);
                } else {
                    self.recent_rotated[k] += 1;
                    self.pages.move_to(p, active);
                }
            }
        }
        let mut io_done = t;
        if acc.flash_writes > 0 {
            // Under zswap the written pages are the pool entries written back, each
            // decompressed into a page for the write.
            io_done = if waits { self.flash.submit(t, Op::Write, acc.flash_writes * 4096) } else { self.write_back(t, acc.flash_writes) };
        }
        self.c.reclaimed += acc.got as u64;
        self.c.reclaimed_anon += acc.anon;
        self.c.scanned += acc.scanned;
        if acc.got > 0 {
            self.seal_arm();
        }
        let cpu = Nanos(acc.scanned * SCAN_NS + acc.got as u64 * EVICT_NS) + acc.compress;
        (acc.got, (cpu, acc.compress), io_done)
    }

    /// Writes `n` reclaimed pages to flash from `t`; they stay in memory (under
    /// writeback) until the write ends, which is returned.
    pub(super) fn write_back(&mut self, t: Nanos, n: u64) -> Nanos {
        let done = self.flash.submit(t, Op::Write, n * 4096);
        self.writeback += n as i64;
        self.push(done, Ev::WritebackDone { n: n as u32 });
        done
    }

    /// Reclaim of page `p` if it is a read-ahead page never mapped: its data is still in
    /// its swap slot, so it goes back there without a write (a clean swap-cache page).
    /// Returns whether it was one.
    pub(super) fn drop_swap_cache(&mut self, p: u32) -> bool {
        let cached = self.pages.in_swap_cache(p);
        if cached {
            self.pages.move_to(p, Loc::Flash);
        }
        cached
    }

    /// Evicts one resident page: an anonymous page to swap (zram first, then flash;
    /// zswap writes its oldest pool entry back when full), a file page dropped, either
    /// leaving a shadow entry. Returns false if the page cannot go (locked, or
    /// anonymous with no swap for its app).
    pub(super) fn evict_page(&mut self, p: u32, acc: &mut Evict) -> bool {
        if self.pages.has(p, F_LOCKED) {
            return false;
        }
        if self.drop_swap_cache(p) {
            acc.got += 1;
            acc.anon += 1;
            return true;
        }
        if self.pages.is_anon(p) {
            let app = self.pages.owner(p) as usize;
            if !self.apps[app].swappable || !self.swap_possible() {
                return false;
            }
            acc.anon += 1;
            let tier = if self.zram_stored < self.zram_cap || self.setup.swap == SwapSetup::TwoLevel { Loc::Zram } else { Loc::Flash };
            if tier == Loc::Zram {
                acc.compress += Nanos(self.compress_ns);
                self.zram_stored += 1;
                if self.setup.swap == SwapSetup::Zswap && self.zram_stored >= self.zram_cap {
                    // zswap: the pool is full; write its oldest entry back to flash. Its
                    // slot was counted when it was stored; its place on flash is the next
                    // free one in order, so entries written back together are neighbours,
                    // as the kernel's were when they were stored together.
                    if let Some(old) = self.pages.tail(Loc::Zram) {
                        acc.compress += Nanos(self.decompress_ns);
                        self.pages.move_to(old, Loc::Flash);
                        self.zram_stored -= 1;
                        self.flash_used += 1;
                        acc.flash_writes += 1;
                    }
                }
            } else {
                self.flash_used += 1;
                acc.flash_writes += 1;
            }
            self.pages.move_to(p, tier);
            if tier == Loc::Zram && self.seal.is_some() && self.pages.llr_weight(p) == 0 {
                self.seal_unloadable(app as u16, p);
            }
        } else {
            self.pages.move_to(p, Loc::Absent);
        }
        lru::leave_shadow(&mut self.pages, &mut self.age, p);
        acc.got += 1;
        let owner = self.pages.owner(p) as usize;
        if let Some(c) = self.app_c.get_mut(owner) {
            c.reclaimed[!self.pages.is_anon(p) as usize] += 1;
        }
        true
    }

    /// Per-process reclaim of the app named `name`, as the Android kernels'
    /// `/proc/PID/reclaim` does it for a process's pages (Ice §3.2 uses it for Fig. 4 with
    /// `all`; the interface also takes `file` and `anon`): every page of the kind asked
    /// for on the LRU lists goes out at once, anonymous pages to swap and file pages
    /// dropped, each leaving a shadow entry as reclaim does. Pages that cannot go
    /// (locked, or with no swap left) stay. Returns the anonymous and the file pages
    /// reclaimed, or None if no app has that name. It is the experimenter's action, so
    /// it costs no simulated CPU and is not counted in the run's `reclaimed_pages`.
    pub fn per_process_reclaim(&mut self, name: &str, kind: ReclaimKind) -> Option<(u64, u64)> {
        let a = self.apps.iter().find(|a| a.spec.name == name)?;
        let (base, anon, file) = (a.base, a.anon, a.file);
        let from = if kind == ReclaimKind::File { base + anon } else { base };
        let to = if kind == ReclaimKind::Anon { base + anon } else { base + anon + file };
        let mut acc = Evict::default();
        let mut got = (0, 0);
        for p in from..to {
            let on_lru = matches!(self.pages.loc(p), Loc::InactiveAnon | Loc::ActiveAnon | Loc::InactiveFile | Loc::ActiveFile);
            if on_lru && self.evict_page(p, &mut acc) {
                if p < base + anon {
                    got.0 += 1;
                } else {
                    got.1 += 1;
                }
            }
        }
        if acc.flash_writes > 0 {
            self.write_back(self.now, acc.flash_writes);
        }
        // The experimenter's reclaim is not the run's: off the app's counters too.
        let c = &mut self.app_c[self.apps.iter().position(|a| a.spec.name == name).expect("found above")];
        c.reclaimed[0] -= got.0;
        c.reclaimed[1] -= got.1;
        Some(got)
    }

    /// The frozen apps, least recently used first: the order freeze-aware eviction
    /// takes them in.
    pub(super) fn frozen_by_age(&self) -> Vec<u16> {
        let mut frozen: Vec<(Nanos, u16)> = (0..self.n_apps)
            .filter(|&i| self.apps[i as usize].state == AppState::Frozen)
            .map(|i| (self.apps[i as usize].last_used, i))
            .collect();
        frozen.sort();
        frozen.into_iter().map(|(_, i)| i).collect()
    }

    /// Freeze-aware eviction (Ice+ §4.3.1, Fig. 8): when reclaim scans a list (the
    /// anonymous or the file one, as the kernel's scan balance chose), the pages of
    /// frozen apps on it leave first, one app at a time, least recently used app first,
    /// "identified as inactive immediately" whatever their referenced bits say. Ice+
    /// changes the order within the LRU lists, not how much each list gives up. Takes
    /// up to `nr` pages.
    pub(super) fn shrink_frozen(&mut self, anon: bool, nr: u32, frozen: &[u16], acc: &mut Evict) {
        let want = acc.got + nr;
        let k = (!anon) as usize;
        for &app in frozen {
            // Two sweeps over the app's pages of this kind: first those the LRU already
            // holds inactive, then the rest, so the app's own recency still orders them.
            let a = &self.apps[app as usize];
            let (base, len) = if anon { (a.base, a.anon) } else { (a.base + a.anon, a.file) };
            let inactive = if anon { Loc::InactiveAnon } else { Loc::InactiveFile };
            let mut c = a.evict_cursor[k].min(2 * len);
            while acc.got < want && c < 2 * len {
                let (sweep, q) = (c / len.max(1), base + c % len.max(1));
                let loc = self.pages.loc(q);
                let take = if sweep == 0 { loc == inactive } else { loc.resident() };
                acc.scanned += 1;
                if take {
                    self.evict_page(q, acc);
                }
                c += 1;
            }
            self.apps[app as usize].evict_cursor[k] = c;
            if acc.got >= want {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{scan_fractions, Evict, ReclaimKind, RECLAIM_BATCH};
    use crate::engine::{embedded_sim, measuring_sim_with_a_cached_app, AppState, Ctx, Ev, RunOptions, Sim, FILE_CLUSTER};
    use crate::pages::{Loc, F_LOCKED, F_SHADOW};
    use floe_core::{AppId, Nanos, SystemView};

    /// The P20's short-video scenario with six background apps, run until three cached
    /// apps hold file and anonymous pages; then the two least recently used are frozen.
    fn sim_with_frozen_apps() -> Sim {
        let opts = RunOptions { seed: 2, bg_apps: Some(6), draw_bg: true, ..Default::default() };
        let mut sim = embedded_sim("p20", "ice-short-video", "ice-plus", &opts);
        let lru = |sim: &Sim, l: [Loc; 2], app: u16| l.iter().map(|&l| sim.pages.count(app, l)).sum::<u32>();
        let mut t = Nanos::from_secs_f64(10.0);
        let cached = loop {
            assert!(sim.run_until(t), "the run ended before three apps were cached with memory");
            let mut cached: Vec<(Nanos, u16)> = (0..sim.n_apps)
                .filter(|&a| sim.apps[a as usize].state == AppState::Cached)
                .filter(|&a| {
                    lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon], a) > 1000 && lru(&sim, [Loc::ActiveFile, Loc::InactiveFile], a) > 1000
                })
                .map(|a| (sim.apps[a as usize].last_used, a))
                .collect();
            if cached.len() >= 3 {
                cached.sort();
                break cached;
            }
            t += Nanos::from_secs_f64(10.0);
        };
        for &(_, app) in &cached[..2] {
            sim.freeze(app);
        }
        sim
    }

    /// Per-process reclaim (Ice Fig. 4's test) takes every page the app has on the LRU
    /// lists, heap to zram and file pages out of the page cache, each with its shadow
    /// entry, and the app's next background wakeups bring pages back as refaults.
    #[test]
    fn per_process_reclaim_takes_all_of_an_apps_lru_pages_and_its_wakeups_refault_them() {
        let (mut sim, t, app) = measuring_sim_with_a_cached_app();
        let lru = |sim: &Sim, l: [Loc; 2], app: u16| l.iter().map(|&l| sim.pages.count(app, l)).sum::<u32>();
        let name = sim.apps[app as usize].spec.name.clone();
        let (anon, file) = (lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon], app), lru(&sim, [Loc::ActiveFile, Loc::InactiveFile], app));
        let (zram, free) = (sim.pages.count(app, Loc::Zram), sim.free());
        assert!(anon > 1000 && file > 1000, "the cached app holds {anon} anonymous and {file} file pages");
        assert_eq!(sim.per_process_reclaim(&name, ReclaimKind::All), Some((anon as u64, file as u64)));
        assert_eq!(lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon], app) + lru(&sim, [Loc::ActiveFile, Loc::InactiveFile], app), 0);
        assert_eq!(sim.pages.count(app, Loc::Zram), zram + anon);
        assert!(sim.free() > free, "reclaim frees memory");
        let a = &sim.apps[app as usize];
        let shadows = (a.base..a.base + a.anon + a.file).filter(|&p| sim.pages.has(p, F_SHADOW)).count() as u32;
        assert!(shadows >= anon + file, "{shadows} shadow entries for {} pages", anon + file);
        sim.check_invariants().unwrap();
        let before = sim.snapshot().refaults[0];
        sim.run_until(t + Nanos::from_secs_f64(30.0));
        let after = sim.snapshot().refaults[0];
        assert!(after[0] > before[0] && after[1] > before[1], "background refaults {before:?} -> {after:?}");
        assert!(lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon], app) > 0);
        assert_eq!(sim.per_process_reclaim("no-such-app", ReclaimKind::All), None);
    }

    /// `/proc/PID/reclaim`'s `file` and `anon` take one kind of page and leave the
    /// other where it is.
    #[test]
    fn per_process_reclaim_of_one_kind_leaves_the_other() {
        for kind in [ReclaimKind::File, ReclaimKind::Anon] {
            let (mut sim, _, app) = measuring_sim_with_a_cached_app();
            let name = sim.apps[app as usize].spec.name.clone();
            let lru = |sim: &Sim, l: [Loc; 2]| l.iter().map(|&l| sim.pages.count(app, l)).sum::<u32>() as u64;
            let (anon, file) = (lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon]), lru(&sim, [Loc::ActiveFile, Loc::InactiveFile]));
            let got = sim.per_process_reclaim(&name, kind).unwrap();
            let (anon_after, file_after) =
                (lru(&sim, [Loc::ActiveAnon, Loc::InactiveAnon]), lru(&sim, [Loc::ActiveFile, Loc::InactiveFile]));
            match kind {
                ReclaimKind::File => assert_eq!((got, anon_after, file_after), ((0, file), anon, 0)),
                _ => assert_eq!((got, anon_after, file_after), ((anon, 0), 0, file)),
            }
            sim.check_invariants().unwrap();
        }
    }

    /// `sim_with_frozen_apps` with its first frozen app thawed: a cached app whose
    /// pages are partly resident.
    fn sim_with_a_thawed_app() -> (Sim, u16) {
        let mut sim = sim_with_frozen_apps();
        let app = (0..sim.n_apps).find(|&a| sim.apps[a as usize].state == AppState::Frozen).unwrap();
        sim.thaw(app);
        (sim, app)
    }

    /// Freeze-aware eviction takes from the list reclaim is scanning: a file scan takes
    /// the least recently used frozen app's file pages and leaves every anonymous page
    /// and every other app alone; an anonymous scan then takes that app's heap.
    #[test]
    fn freeze_aware_eviction_takes_the_scanned_lists_frozen_pages_oldest_app_first() {
        let mut sim = sim_with_frozen_apps();
        let frozen = sim.frozen_by_age();
        let (oldest, next) = (frozen[0], frozen[1]);
        assert!(sim.apps[oldest as usize].last_used <= sim.apps[next as usize].last_used);
        assert!(frozen.iter().all(|&a| sim.apps[a as usize].state == AppState::Frozen));
        let anon = |sim: &Sim, app: u16| sim.pages.count(app, Loc::ActiveAnon) + sim.pages.count(app, Loc::InactiveAnon);
        let file = |sim: &Sim, app: u16| sim.pages.count(app, Loc::ActiveFile) + sim.pages.count(app, Loc::InactiveFile);
        let all = |sim: &Sim| (0..sim.n_apps).map(|a| (anon(sim, a), file(sim, a))).collect::<Vec<_>>();
        let before = all(&sim);
        let mut acc = Evict::default();
        sim.shrink_frozen(false, 500, &frozen, &mut acc);
        assert_eq!(acc.got, 500);
        let after = all(&sim);
        for (a, (b, n)) in before.iter().zip(&after).enumerate() {
            let want_file = if a == oldest as usize { b.1 - 500 } else { b.1 };
            assert_eq!(*n, (b.0, want_file), "app {a}: (anon, file) pages on the LRU");
        }
        // Now the anonymous list: the same app's heap goes to zram.
        let stored = sim.zram_stored;
        let mut acc = Evict::default();
        sim.shrink_frozen(true, 300, &frozen, &mut acc);
        assert_eq!(acc.got, 300);
        assert_eq!(anon(&sim, oldest), before[oldest as usize].0 - 300);
        assert_eq!(anon(&sim, next), before[next as usize].0);
        assert_eq!(sim.zram_stored, stored + 300);
    }

    /// The seeds' kernels (3.0-4.14): a swapped-in anonymous page goes back on the active
    /// list whatever its refault distance (do_swap_page's activate_page); a file refault
    /// is activated only when its distance is within the active file list; only file
    /// evictions advance the nonresident age.
    #[test]
    fn refaults_follow_the_pre_5_9_kernel_rules() {
        let (mut sim, app) = sim_with_a_thawed_app();
        let a = &sim.apps[app as usize];
        let (base, anon, file) = (a.base, a.anon, a.file);
        let resident = |sim: &Sim, r: std::ops::Range<u32>| r.filter(|&p| sim.pages.loc(p).resident()).collect::<Vec<u32>>();
        let anon_pages = resident(&sim, base..base + anon);
        let file_pages = resident(&sim, base + anon..base + anon + file);
        // q and r far apart: a file fault reads its whole cluster.
        let (p, q, r) = (anon_pages[0], file_pages[0], *file_pages.last().unwrap());
        let mut acc = Evict::default();
        let age = sim.age;
        assert!(sim.evict_page(p, &mut acc));
        assert_eq!(sim.age, age, "an anonymous eviction leaves the age alone");
        assert!(sim.evict_page(q, &mut acc));
        assert_eq!(sim.age, age.wrapping_add(1), "a file eviction advances it");
        // Push both refault distances past every list's size; then give the active file
        // list a hundred of the app's other file pages.
        sim.age = sim.age.wrapping_add(sim.pages.len() as u32);
        for &f in &file_pages[1..101] {
            sim.pages.move_to(f, Loc::ActiveFile);
        }
        assert!(sim.evict_page(r, &mut acc));
        let mut ctx = Ctx { t: sim.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        for page in [p, q, r] {
            sim.touch(app, page - base, &mut ctx);
        }
        assert_eq!(sim.pages.loc(p), Loc::ActiveAnon, "swapped in: active, however far");
        assert_eq!(sim.pages.loc(q), Loc::InactiveFile, "a distant file refault starts inactive");
        assert_eq!(sim.pages.loc(r), Loc::ActiveFile, "a near one is activated");
    }

    /// A file fault reads its page's aligned cluster, and every page of it that left a
    /// shadow entry is a refault, counted and activated by its distance, as the kernel's
    /// add_to_page_cache_lru does for read-around pages; one that never left the cache
    /// is neither.
    #[test]
    fn every_page_a_file_fault_reads_back_is_a_refault_if_it_left_a_shadow() {
        let (mut sim, app) = sim_with_a_thawed_app();
        let a = &sim.apps[app as usize];
        let (base, anon, file) = (a.base, a.anon, a.file);
        let file0 = base + anon;
        // An aligned cluster all of whose pages are in the page cache.
        let first = (0..file / FILE_CLUSTER)
            .map(|c| file0 + c * FILE_CLUSTER)
            .find(|&f| (f..f + FILE_CLUSTER).all(|p| sim.pages.loc(p).resident()))
            .expect("a resident cluster");
        let cluster: Vec<u32> = (first..first + FILE_CLUSTER).collect();
        // Evict all but the last page, which stays cached and so is no refault.
        let mut acc = Evict::default();
        for &p in &cluster[..cluster.len() - 1] {
            assert!(sim.evict_page(p, &mut acc));
            assert!(sim.pages.has(p, F_SHADOW));
        }
        // Give the active file list a hundred other cached pages, so that distances of a
        // handful of evictions lie within it.
        let others: Vec<u32> = (file0..file0 + file).filter(|&p| !cluster.contains(&p) && sim.pages.loc(p).resident()).take(100).collect();
        assert_eq!(others.len(), 100);
        for &p in &others {
            sim.pages.move_to(p, Loc::ActiveFile);
        }
        let refaults = |sim: &Sim| sim.c.refaults[0][1] + sim.c.refaults[1][1];
        let before = refaults(&sim);
        let mut ctx = Ctx { t: sim.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        sim.touch(app, cluster[2] - base, &mut ctx);
        assert!(cluster.iter().all(|&p| sim.pages.loc(p).resident()), "the whole cluster is read");
        assert_eq!(refaults(&sim) - before, FILE_CLUSTER as u64 - 1, "each evicted page of it is a refault");
        assert_eq!(sim.c.refaults[0][1] - before, FILE_CLUSTER as u64 - 1, "in the background, as its app is cached");
        // Their distances are a handful of evictions, within the active file list; the
        // page that stayed cached keeps its place.
        assert!(cluster[..cluster.len() - 1].iter().all(|&p| sim.pages.loc(p) == Loc::ActiveFile));
        assert_eq!(sim.pages.loc(cluster[cluster.len() - 1]), Loc::InactiveFile);
        assert!(cluster.iter().all(|&p| !sim.pages.has(p, F_SHADOW)));
    }

    /// SEAL's 30 apps under `swap-all`, run until something is on flash swap.
    fn swapping_to_flash() -> Sim {
        let mut sim = embedded_sim("hikey970", "seal-30apps", "swap-all", &RunOptions { seed: 1, ..Default::default() });
        let mut t = Nanos::from_secs_f64(30.0);
        while sim.flash_used == 0 {
            assert!(sim.run_until(t), "the run ended before it swapped");
            t += Nanos::from_secs_f64(10.0);
        }
        sim
    }

    /// A swap-in from flash on the Nexus 5 (Linux 3.4: the aligned eight slots every
    /// time) reads its slot's neighbours in the same request into the swap cache:
    /// resident, not in flash, their slots still held. The app's later touch of one is
    /// a minor fault that reads nothing, counts the refault the spared swap-in would
    /// have, and frees the slot; a neighbour reclaimed before use goes back to its slot
    /// without a write.
    #[test]
    fn a_swap_in_reads_its_slots_neighbours_into_the_swap_cache() {
        let mut sim = embedded_sim("nexus5", "selective-b1", "swap-all", &RunOptions { seed: 1, ..Default::default() });
        assert_eq!(sim.swap_cluster, 8);
        let mut t = Nanos::from_secs_f64(30.0);
        // A page in flash whose aligned cluster holds at least two more, of live apps.
        let (p, ahead) = loop {
            assert!(sim.run_until(t), "the run ended before it swapped");
            t += Nanos::from_secs_f64(10.0);
            let found = (0..sim.pages.len() as u32)
                .filter(|&p| sim.pages.loc(p) == Loc::Flash)
                .map(|p| (p, sim.pages.swap_cluster(p, 8)))
                .find(|(_, c)| c.len() >= 2);
            if let Some(f) = found {
                break f;
            }
        };
        let app = sim.pages.owner(p);
        let idx = p - sim.apps[app as usize].base;
        let (reads, used, refaults, ahead_before) = (sim.flash.read_bytes, sim.flash_used, sim.c.refaults, sim.c.swap_readahead);
        let mut ctx = Ctx { t: sim.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        sim.touch(app, idx, &mut ctx);
        assert!(sim.pages.loc(p).resident() && !sim.pages.in_swap_cache(p));
        let cached: Vec<u32> = ahead.iter().copied().filter(|&q| sim.pages.in_swap_cache(q)).collect();
        assert!(!cached.is_empty(), "read ahead: {ahead:?}");
        assert!(cached.iter().all(|&q| sim.pages.loc(q) == Loc::InactiveAnon));
        assert_eq!(sim.flash.read_bytes - reads, (cached.len() as u64 + 1) * 4096, "one read for all");
        assert_eq!(sim.c.swap_readahead - ahead_before, cached.len() as u64);
        assert_eq!(sim.flash_used, used - 1, "only the faulting page gave up its slot");
        sim.check_invariants().unwrap();
        // The app that owns the first read-ahead page touches it.
        let q = cached[0];
        assert_ne!(sim.c.refaults, refaults, "the swap-in itself is a refault");
        let (owner, reads, refaults_now) = (sim.pages.owner(q), sim.flash.read_bytes, sim.c.refaults);
        let fg = sim.fg == Some(owner);
        sim.touch(owner, q - sim.apps[owner as usize].base, &mut ctx);
        assert_eq!(sim.flash.read_bytes, reads, "a swap-cache hit reads nothing");
        assert!(!sim.pages.in_swap_cache(q) && sim.pages.loc(q) == Loc::ActiveAnon);
        assert_eq!(sim.c.refaults[fg as usize][0], refaults_now[fg as usize][0] + 1);
        assert_eq!(sim.flash_used, used - 2);
        // The rest are dropped by reclaim with no write and go back to their slots.
        if let Some(&r) = cached.get(1) {
            let (writes, used) = (sim.flash.write_bytes, sim.flash_used);
            let mut acc = Evict::default();
            assert!(sim.evict_page(r, &mut acc));
            assert_eq!((sim.pages.loc(r), acc.flash_writes, sim.flash_used, sim.flash.write_bytes), (Loc::Flash, 0, used, writes));
            assert!(sim.pages.swap_slot(r).is_some());
        }
        sim.check_invariants().unwrap();
    }

    /// A page reclaim writes to flash swap is not free until its write ends (the
    /// kernel's PageWriteback): until then it still takes memory, so the LMK can act
    /// while swap-out lags behind.
    #[test]
    fn pages_written_to_flash_take_memory_until_their_writes_end() {
        let mut sim = swapping_to_flash();
        let (free, held, flash) = (sim.free(), sim.writeback, sim.flash_used);
        let (got, _, io) = sim.shrink(4096, sim.now, false);
        let written = sim.flash_used - flash;
        assert!(written > 0 && got as i64 >= written, "{got} reclaimed, {written} written");
        assert!(io > sim.now);
        assert_eq!(sim.writeback - held, written);
        assert_eq!(sim.free() - free, got as i64 - written, "the written pages are not free yet");
        sim.handle(Ev::WritebackDone { n: written as u32 });
        assert_eq!(sim.writeback, held);
        assert_eq!(sim.free() - free, got as i64);
    }

    /// A direct reclaimer that writes pages to flash waits for those writes and has the
    /// pages free when it resumes: it reclaims about as much as it allocates, leaves
    /// nothing of its own under writeback, and its clock moves past the writes. (Otherwise it
    /// would find them still under writeback at each allocation and reclaim a batch
    /// per page.)
    #[test]
    fn a_direct_reclaimer_waits_for_its_writes_and_resumes_with_them_free() {
        let mut sim = swapping_to_flash();
        // Free memory at the min watermark, as if allocations had just taken it there.
        sim.usable -= sim.free() - sim.wmark[0];
        let (reclaimed, held, written, now) = (sim.c.reclaimed, sim.writeback, sim.flash_used, sim.now);
        let mut ctx = Ctx { t: now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        for _ in 0..64 {
            sim.alloc(&mut ctx);
            // The page allocated.
            sim.usable -= 1;
        }
        let taken = sim.c.reclaimed - reclaimed;
        assert!(taken > 0 && taken <= 64 + RECLAIM_BATCH as u64, "{taken} pages reclaimed for 64 allocated");
        assert!(sim.flash_used > written, "some of them were written to flash");
        assert_eq!(sim.writeback, held, "none of its writes is left pending");
        assert!(ctx.t > now, "it waited for them");
        assert!(sim.free() >= sim.wmark[0] - 64, "free memory stayed near the min watermark");
    }

    /// Selective's nine first apps of scenario B1 on the Nexus 5 under `policy`, with
    /// every resident page locked and free memory just under kswapd's low watermark,
    /// so that a kswapd pass scans everything and frees nothing.
    fn nothing_reclaimable(policy: &str) -> Sim {
        let mut sim = embedded_sim("nexus5", "selective-b1", policy, &RunOptions { seed: 1, ..Default::default() });
        assert!(sim.run_until(Nanos::from_secs_f64(280.0)));
        for p in 0..sim.pages.len() as u32 {
            if sim.pages.loc(p).resident() {
                sim.pages.set_flag(p, F_LOCKED, true);
            }
        }
        sim.usable -= sim.free() - (sim.wmark[1] - 1);
        sim
    }

    /// A kswapd pass that frees nothing is reported to a policy that listens for
    /// pressure ([`floe_core::Event::ReclaimFailed`]), and the kill Selective answers
    /// with (Algorithm 1's OOM step) lands before kswapd sleeps: the background app of
    /// the lowest Table 1 class that was used longest ago dies. A policy that does not
    /// listen is not told, and nothing dies.
    #[test]
    fn a_kswapd_pass_that_frees_nothing_is_reported_and_selective_kills() {
        let mut sim = nothing_reclaimable("selective-swap-first");
        let alive = |sim: &Sim| (0..sim.n_apps as usize).filter(|&i| sim.apps[i].state != AppState::Dead).count();
        let expected = (0..sim.n_apps)
            .filter_map(|i| SystemView::app(&sim, AppId(i)))
            .filter(|a| a.state == AppState::Cached)
            .max_by_key(|a| (a.priority_class, std::cmp::Reverse(a.last_used)))
            .expect("cached apps")
            .id;
        let (kills, before) = (sim.c.kills, alive(&sim));
        assert!(before >= 5, "{before} apps alive");
        sim.kswapd_batch();
        assert!(!sim.kswapd_active, "kswapd sleeps after a pass that freed nothing");
        assert_eq!(sim.c.kills, kills + 1);
        assert_eq!(alive(&sim), before - 1);
        assert_eq!(sim.apps[expected.0 as usize].state, AppState::Dead, "the lowest class, least recently used");

        let mut sim = nothing_reclaimable("swap-all");
        let kills = sim.c.kills;
        sim.kswapd_batch();
        assert!(!sim.kswapd_active);
        assert_eq!(sim.c.kills, kills, "swap-all does not listen for pressure");
    }

    #[test]
    fn scan_fractions_follow_the_kernel_formula() {
        // No history: the two priorities alone.
        assert_eq!(scan_fractions(100, [0, 0], [0, 0]), (100, 100));
        assert_eq!(scan_fractions(60, [0, 0], [0, 0]), (60, 140));
        // Anonymous pages keep being rotated (new pages start active, refaults
        // activate): file is scanned more.
        let (a, f) = scan_fractions(100, [1000, 1000], [900, 100]);
        assert_eq!((a, f), (100 * 1001 / 901, 100 * 1001 / 101));
        assert!(f > 8 * a);
        // And the other way round.
        let (a, f) = scan_fractions(100, [1000, 1000], [10, 990]);
        assert!(a > 50 * f, "{a} {f}");
    }
}
