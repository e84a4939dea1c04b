//! SEAL's two-level swap in the simulator (SEAL §IV; the rules are in
//! `floe_policies::seal`): SL1 is the compressed store (`Loc::Zram`), SL2 the flash swap
//! (`Loc::Flash`). Swapped pages always enter SL1; an unloader moves pages of the
//! sl2-list (LLR weight 0) to SL2 in the background at low I/O priority; with HPL, a
//! launch loads the app's SL2 pages back into SL1 while it runs; with AGS, reclaim
//! swaps whole victim apps and SL2 requests are merged up to 1 MiB. Pages move between
//! the levels still compressed ("SEAL unloads the compressed pages from SL1 to SL2",
//! §IV-D; "the data loaded back to SL1 is still in a compressed state", §IV-B), so SL2
//! holds, and its requests carry, compressed bytes.

use super::{AppState, Ev, Evict, KillCause, Sim};
use crate::flash::Op;
use crate::pages::Loc;
use floe_core::{Nanos, SealSetup};
use floe_policies::seal::{llr_step, peak_pages, victim, Candidate, AGS_MERGE_BYTES};
use rand::Rng;

/// Pages per SL2 request: as many compressed pages as a merged request carries under
/// AGS (1 MiB of data, "the maximum amount of data carried by a merged request",
/// §IV-C), one page otherwise.
fn batch_pages(cfg: &SealSetup, ratio: f64) -> u32 {
    if cfg.ags {
        ((AGS_MERGE_BYTES as f64 * ratio / 4096.0).floor() as u32).max(1)
    } else {
        1
    }
}

/// Bytes a request for `pages` compressed pages moves to or from SL2: their compressed
/// size, in whole 4 KiB blocks (a lone compressed page still takes one block's I/O).
pub(super) fn sl2_request_bytes(pages: u64, ratio: f64) -> u64 {
    let bytes = (pages as f64 * 4096.0 / ratio).ceil() as u64;
    bytes.div_ceil(4096).max(1) * 4096
}

/// One app's HPL load: the request in flight and the pages still to ask for.
#[derive(Clone, Default)]
struct HplLoad {
    /// The pages of the request in flight (empty: none is).
    chunk: Vec<u32>,
    /// SL2 pages still to load, in request order.
    queue: std::collections::VecDeque<u32>,
    /// When the load began, and the bytes it has asked for so far.
    start: Nanos,
    bytes: u64,
    /// The request's pages arrived and wait, read, for room in SL1 that victims still
    /// exiting will free (a device with `cpu.exit_us_per_page`).
    waiting: bool,
}

/// SEAL's run-time state.
pub(super) struct SealState {
    pub cfg: SealSetup,
    /// Per app: anonymous pages the current launch requested (bit per page).
    requested: Vec<Vec<u64>>,
    /// Per app: where the unloader resumes scanning its anonymous pages. No page the
    /// unloader could take (in SL1, LLR weight 0) lies below it: wherever a page
    /// becomes one, the cursor is lowered to it (`seal_unloadable`), so a scan from the
    /// cursor finds the same pages as a scan from the heap's start.
    cursor: Vec<u32>,
    /// Per app: launch latencies seen, (sum ms, count) for warm and for cold launches.
    window: Vec<[(f64, u32); 2]>,
    /// Per app: HPL's load under way.
    loading: Vec<HplLoad>,
    /// The unload request in flight: app, incarnation, pages.
    unloading: Option<(u16, u32, Vec<u32>)>,
    /// An unload attempt is queued.
    armed: bool,
    /// Measured SL2 read throughput, bytes per second (TH of equation 1).
    pub th: f64,
    /// AGS: the app being swapped out and where in its pages.
    victim: Option<(u16, u32)>,
    rng: rand_xoshiro::Xoshiro256PlusPlus,
}

impl SealState {
    pub fn new(cfg: SealSetup, apps: &[u32], read_4k_ns: f64, rng: rand_xoshiro::Xoshiro256PlusPlus) -> SealState {
        let n = apps.len();
        SealState {
            cfg,
            requested: apps.iter().map(|&anon| vec![0u64; (anon as usize).div_ceil(64)]).collect(),
            cursor: vec![0; n],
            window: vec![[(0.0, 0); 2]; n],
            loading: vec![Default::default(); n],
            unloading: None,
            armed: false,
            // Until a load is measured: one 4 KiB random read at a time.
            th: 4096.0 / (read_4k_ns / 1e9),
            victim: None,
            rng,
        }
    }
}

impl Sim {
    fn seal_mut(&mut self) -> &mut SealState {
        self.seal.as_mut().expect("SEAL state")
    }

    /// Page `p` of `app` entered SL1 or lost its last LLR chance there: the unloader
    /// may take it, so its scan of the app resumes no later than `p`.
    pub(super) fn seal_unloadable(&mut self, app: u16, p: u32) {
        let base = self.apps[app as usize].base;
        if let Some(s) = self.seal.as_mut() {
            let c = &mut s.cursor[app as usize];
            *c = (*c).min(p - base);
        }
    }

    /// The pages the unloader could take (in SL1, LLR weight 0, not on their way to
    /// SL2 already) that lie below its scan of their app, as (app, index in its heap):
    /// there must be none, or they would wait in SL1 until the app comes back.
    pub(super) fn seal_unloadable_behind_scan(&self) -> Vec<(u16, u32)> {
        let Some(s) = self.seal.as_ref() else { return Vec::new() };
        let in_flight = s.unloading.as_ref().map_or(&[][..], |(_, _, pages)| &pages[..]);
        let mut behind = Vec::new();
        for (i, a) in self.apps.iter().enumerate() {
            for c in 0..s.cursor[i].min(a.populated) {
                let p = a.base + c;
                if self.pages.loc(p) == Loc::Zram && self.pages.llr_weight(p) == 0 && !in_flight.contains(&p) {
                    behind.push((i as u16, c));
                }
            }
        }
        behind
    }

    /// A launch touched anonymous page `i` of `app`.
    pub(super) fn seal_requested(&mut self, app: u16, i: u32) {
        if let Some(s) = self.seal.as_mut() {
            s.requested[app as usize][(i / 64) as usize] |= 1 << (i % 64);
        }
    }

    /// Algorithm 1 after a launch of `app` finished in `ms`: requested pages get weight
    /// k, the others lose one. Also records the launch window for HPL.
    pub(super) fn seal_launch_done(&mut self, app: u16, warm: bool, ms: f64) {
        let Some(s) = self.seal.as_mut() else { return };
        let k = s.cfg.k;
        let w = &mut s.window[app as usize][warm as usize];
        w.0 += ms;
        w.1 += 1;
        let bits = std::mem::take(&mut s.requested[app as usize]);
        let a = &self.apps[app as usize];
        let (base, pop) = (a.base, a.populated);
        for i in 0..pop {
            let req = bits[(i / 64) as usize] & (1 << (i % 64)) != 0;
            let p = base + i;
            let w = llr_step(self.pages.llr_weight(p), req, k);
            self.pages.set_llr_weight(p, w);
            if w == 0 && self.pages.loc(p) == Loc::Zram {
                self.seal_unloadable(app, p);
            }
        }
        let s = self.seal_mut();
        let mut bits = bits;
        bits.iter_mut().for_each(|b| *b = 0);
        s.requested[app as usize] = bits;
    }

    /// The launch window T_w of `app`: its mean warm launch latency, else its mean cold
    /// one, else nothing known yet.
    fn seal_window(&self, app: u16) -> Nanos {
        let s = self.seal.as_ref().expect("SEAL state");
        let [cold, warm] = s.window[app as usize];
        let (sum, n) = if warm.1 > 0 { warm } else { cold };
        if n == 0 {
            Nanos::ZERO
        } else {
            Nanos::from_ms_f64(sum / n as f64)
        }
    }

    /// How many of `app`'s pages SL2 may hold: with HPL, the pages whose compressed data
    /// fills PS_i's 4 KiB blocks (equation 1 bounds the data HPL must read back within
    /// mu x T_w at TH); unbounded without.
    pub(super) fn seal_sl2_cap(&self, app: u16) -> u64 {
        let s = self.seal.as_ref().expect("SEAL state");
        match s.cfg.hpl_mu {
            Some(mu) => (peak_pages(mu, self.seal_window(app), s.th) as f64 * self.zram_ratio).floor() as u64,
            None => u64::MAX,
        }
    }

    /// Queues an unload attempt now, unless one is pending.
    pub(super) fn seal_arm(&mut self) {
        if let Some(s) = self.seal.as_mut() {
            if !s.armed && s.unloading.is_none() {
                s.armed = true;
                self.push(self.now, Ev::SealUnload);
            }
        }
    }

    /// The unloader (SL1 -> SL2): low priority, so it waits while the flash is busy;
    /// one request at a time; apps in the foreground are left alone.
    pub(super) fn seal_unload(&mut self) {
        self.seal_mut().armed = false;
        if self.seal_mut().unloading.is_some() || self.flash_used >= self.flash_cap {
            return;
        }
        if self.flash.busy_until() > self.now {
            let at = self.flash.busy_until();
            self.seal_mut().armed = true;
            self.push(at, Ev::SealUnload);
            return;
        }
        // Apps in swap-victim order: least important first (Algorithm 2's order for AGS;
        // the same oom_adj order page by page without it).
        let mut order: Vec<(i32, u16)> = (0..self.apps.len() as u16)
            .filter(|&i| matches!(self.apps[i as usize].state, AppState::Cached | AppState::Frozen))
            .filter(|&i| self.pages.count(i, Loc::Zram) > 0)
            .map(|i| (-self.apps[i as usize].oom_adj, i))
            .collect();
        order.sort();
        let batch = batch_pages(&self.seal.as_ref().expect("SEAL state").cfg, self.zram_ratio);
        for (_, app) in order {
            let in_sl2 = self.pages.count(app, Loc::Flash) as u64;
            let cap = self.seal_sl2_cap(app);
            let room = cap.saturating_sub(in_sl2).min((self.flash_cap - self.flash_used).max(0) as u64);
            if room == 0 {
                continue;
            }
            let want = (batch as u64).min(room) as u32;
            let a = &self.apps[app as usize];
            let (base, pop) = (a.base, a.populated);
            // The first `want` pages at or after the cursor that are in SL1 with weight 0;
            // the cursor ends after the last taken, or at the heap's end.
            let mut c = self.seal_mut().cursor[app as usize];
            let mut pages = Vec::new();
            while c < pop && (pages.len() as u32) < want {
                match self.pages.next_sl1_unloadable(base + c, base + pop) {
                    Some(p) => {
                        pages.push(p);
                        c = p - base + 1;
                    }
                    None => {
                        c = pop;
                        break;
                    }
                }
            }
            self.seal_mut().cursor[app as usize] = c;
            if pages.is_empty() {
                continue;
            }
            let done = self.flash.submit(self.now, Op::Write, sl2_request_bytes(pages.len() as u64, self.zram_ratio));
            let life = self.apps[app as usize].life;
            self.seal_mut().unloading = Some((app, life, pages));
            self.push(done, Ev::SealUnloadDone);
            return;
        }
    }

    /// An unload request finished: its pages leave SL1, unless the app came to the
    /// foreground or died meanwhile (the unload is cancelled; the pages stay in SL1).
    pub(super) fn seal_unload_done(&mut self) {
        let Some((app, life, pages)) = self.seal_mut().unloading.take() else { return };
        let a = &self.apps[app as usize];
        if a.life != life {
            return self.seal_arm();
        }
        let moving = matches!(a.state, AppState::Cached | AppState::Frozen);
        for p in pages {
            if self.pages.loc(p) != Loc::Zram {
                continue;
            }
            if moving && self.flash_used < self.flash_cap {
                self.pages.move_to(p, Loc::Flash);
                self.zram_stored -= 1;
                self.flash_used += 1;
            } else if self.pages.llr_weight(p) == 0 {
                // Cancelled (the app came to the foreground) or SL2 filled up: the page
                // stays in SL1, where the unloader may take it again later.
                self.seal_unloadable(app, p);
            }
        }
        self.seal_arm();
    }

    /// HPL: when `app` is launched warm, a worker loads its SL2 pages back into SL1 in
    /// parallel with the launch, at high priority (ahead of any unloading, which only
    /// runs on an idle queue). The worker is one thread reading one request at a time
    /// (1 MiB, merged, under AGS, whose pages went to SL2 together; 4 KiB otherwise), so
    /// the launch's own reads take their turn between its requests instead of waiting
    /// for the whole load.
    pub(super) fn seal_launch_started(&mut self, app: u16) {
        let Some(s) = self.seal.as_ref() else { return };
        if s.cfg.hpl_mu.is_none() {
            return;
        }
        let a = &self.apps[app as usize];
        let (base, pop) = (a.base, a.populated);
        let load = &s.loading[app as usize];
        let list: Vec<u32> = (base..base + pop).filter(|&p| self.pages.loc(p) == Loc::Flash && !load.chunk.contains(&p)).collect();
        if list.is_empty() {
            return;
        }
        let busy = !load.chunk.is_empty();
        let now = self.now;
        let load = &mut self.seal_mut().loading[app as usize];
        load.queue = list.into();
        if !busy {
            // A load still under way (the app came back before it ended) goes on with
            // the new list; otherwise the worker starts.
            load.start = now;
            load.bytes = 0;
            self.seal_hpl_next(app);
        }
    }

    /// HPL's worker issues `app`'s next request: up to a batch of the pages still to
    /// load that are still in SL2 (the app may have faulted some in itself). When none
    /// is left the load is over and TH, the throughput it achieved, is folded into the
    /// estimate.
    fn seal_hpl_next(&mut self, app: u16) {
        let life = self.apps[app as usize].life;
        let now = self.now;
        let batch = batch_pages(&self.seal.as_ref().expect("SEAL state").cfg, self.zram_ratio) as usize;
        let mut load = std::mem::take(&mut self.seal_mut().loading[app as usize]);
        load.chunk.clear();
        while load.chunk.len() < batch {
            match load.queue.pop_front() {
                Some(p) if self.pages.loc(p) == Loc::Flash => load.chunk.push(p),
                Some(_) => {}
                None => break,
            }
        }
        let s = self.seal_mut();
        if load.chunk.is_empty() {
            let secs = (now.0 - load.start.0) as f64 / 1e9;
            if load.bytes > 0 && secs > 0.0 {
                // TH: the throughput this load achieved, smoothed over loads.
                s.th = 0.5 * s.th + 0.5 * load.bytes as f64 / secs;
            }
        } else {
            let bytes = sl2_request_bytes(load.chunk.len() as u64, self.zram_ratio);
            load.bytes += bytes;
            let done = self.flash.submit(now, Op::Read, bytes);
            self.push(done, Ev::HplLoaded { app, life });
        }
        self.seal_mut().loading[app as usize] = load;
    }

    /// HPL's request for `app` completed: its pages arrive in SL1 (still compressed).
    /// "If no available space in SL1 to support page loading, ... the app killing
    /// mechanism will wake up to release space" (§IV-B): when SL1 has no room for the
    /// arrivals, cached apps holding SL1 pages are killed, the LMK's victim first, until
    /// they fit. The room is asked for as pages arrive, not for the whole load when the
    /// launch starts: meanwhile the launch decompresses its own launch-required pages
    /// out of SL1, which makes room of its own.
    pub(super) fn seal_hpl_loaded(&mut self, app: u16, life: u32) {
        if self.apps[app as usize].life != life {
            return;
        }
        let chunk = std::mem::take(&mut self.seal_mut().loading[app as usize].chunk);
        let chunk: Vec<u32> = chunk.into_iter().filter(|&p| self.pages.loc(p) == Loc::Flash).collect();
        self.seal_make_room(app, chunk.len() as i64);
        let mut left = Vec::new();
        for p in chunk {
            if self.zram_stored < self.zram_cap {
                self.pages.move_to(p, Loc::Zram);
                self.flash_used -= 1;
                self.zram_stored += 1;
                if self.pages.llr_weight(p) == 0 {
                    self.seal_unloadable(app, p);
                }
            } else {
                left.push(p);
            }
        }
        if !left.is_empty() && self.sl1_exiting() > 0 {
            // The room is still being freed: the pages wait for the victims' exits
            // (`seal_exited`), the worker with them.
            let load = &mut self.seal_mut().loading[app as usize];
            load.chunk = left;
            load.waiting = true;
            return;
        }
        self.seal_hpl_next(app);
    }

    /// A killed app's exit ended and freed its SL1 pages: loads waiting for room go on.
    pub(super) fn seal_exited(&mut self) {
        let Some(s) = self.seal.as_ref() else { return };
        let waiting: Vec<u16> = (0..s.loading.len() as u16).filter(|&i| s.loading[i as usize].waiting).collect();
        for app in waiting {
            self.seal_mut().loading[app as usize].waiting = false;
            let life = self.apps[app as usize].life;
            self.seal_hpl_loaded(app, life);
        }
    }

    /// SL1 pages of killed apps whose exits are still running.
    fn sl1_exiting(&self) -> i64 {
        (0..self.n_apps).filter(|&i| self.apps[i as usize].exit.is_some()).map(|i| i64::from(self.pages.count(i, Loc::Zram))).sum()
    }

    /// Kills cached apps that hold SL1 pages, the LMK's victim first, until SL1 has
    /// room for `need` pages, counting what exiting victims will free (or until no such
    /// app is left). Never kills `app`.
    fn seal_make_room(&mut self, app: u16, need: i64) {
        // Victims still exiting free their SL1 pages as their exits end: that room is
        // on its way, so the mechanism does not kill again for it.
        while self.zram_cap - self.zram_stored + self.sl1_exiting() < need {
            let victim = (0..self.n_apps)
                .filter(|&i| {
                    let v = &self.apps[i as usize];
                    i != app
                        && !v.unkillable
                        && matches!(v.state, AppState::Cached | AppState::Frozen)
                        && self.pages.count(i, Loc::Zram) > 0
                })
                .max_by_key(|&i| (self.apps[i as usize].oom_adj, self.rss(i), std::cmp::Reverse(i)));
            match victim {
                Some(v) => self.kill(v, KillCause::Sl1Room),
                None => break,
            }
        }
    }

    /// A killed or relaunched app: forget its pending loads and restart its unload scan.
    pub(super) fn seal_forget(&mut self, app: u16) {
        if let Some(s) = self.seal.as_mut() {
            s.loading[app as usize] = HplLoad::default();
            s.cursor[app as usize] = 0;
            if s.victim.is_some_and(|(v, _)| v == app) {
                s.victim = None;
            }
        }
    }

    /// AGS (Algorithm 2): reclaim takes a whole victim app's anonymous pages into SL1,
    /// continuing with the same app until all are swapped.
    pub(super) fn seal_ags_shrink(&mut self, nr: u32, acc: &mut Evict) {
        while acc.got < nr && self.zram_stored < self.zram_cap {
            let cur = self.seal.as_ref().and_then(|s| s.victim);
            let (app, mut c) = match cur {
                Some(v) => v,
                None => {
                    let cands: Vec<Candidate<u16>> = (0..self.n_apps)
                        .filter(|&i| {
                            let a = &self.apps[i as usize];
                            matches!(a.state, AppState::Cached | AppState::Frozen)
                                && a.swappable
                                && self.fg != Some(i)
                                && (self.pages.count(i, Loc::ActiveAnon) + self.pages.count(i, Loc::InactiveAnon)) > 0
                        })
                        .map(|i| Candidate { app: i, adj: vec![self.apps[i as usize].oom_adj] })
                        .collect();
                    let s = self.seal.as_mut().expect("SEAL state");
                    let rng = &mut s.rng;
                    match victim(&cands, |t| rng.gen_range(0..t.len())) {
                        Some(v) => (v, 0),
                        None => return,
                    }
                }
            };
            let a = &self.apps[app as usize];
            let (base, pop) = (a.base, a.populated);
            while acc.got < nr && c < pop && self.zram_stored < self.zram_cap {
                let p = base + c;
                acc.scanned += 1;
                if matches!(self.pages.loc(p), Loc::ActiveAnon | Loc::InactiveAnon) {
                    self.evict_page(p, acc);
                }
                c += 1;
            }
            let s = self.seal_mut();
            s.victim = if c < pop { Some((app, c)) } else { None };
        }
        self.seal_arm();
    }

    /// True while AGS is in the middle of an app.
    pub(super) fn seal_ags_busy(&self) -> bool {
        self.seal.as_ref().is_some_and(|s| s.cfg.ags && s.victim.is_some())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{embedded_sim, AppState, Evict, KillCause, RunOptions, Sim};
    use crate::flash::Op;
    use crate::pages::Loc;
    use floe_core::Nanos;

    /// SEAL on seal-30apps with a small SL1, run until an app waits in the background
    /// with pages in SL2 while SL1 has no room for them.
    fn sim_with_a_full_sl1() -> (Sim, u16) {
        let mut sim = embedded_sim("hikey970", "seal-30apps", "seal:sl1=256", &RunOptions { seed: 1, ..Default::default() });
        let mut t = Nanos::from_secs_f64(60.0);
        loop {
            assert!(sim.run_until(t), "the run ended before SL1 filled");
            let room = sim.zram_cap - sim.zram_stored;
            let waiting = (0..sim.n_apps).find(|&i| {
                let a = &sim.apps[i as usize];
                a.state == AppState::Cached && sim.pages.count(i, Loc::Flash) as i64 > room
            });
            if let Some(app) = waiting {
                return (sim, app);
            }
            t += Nanos::from_secs_f64(10.0);
        }
    }

    #[test]
    fn hidden_loading_kills_cached_apps_to_make_room_in_sl1_as_pages_arrive() {
        let (mut sim, app) = sim_with_a_full_sl1();
        let need = sim.pages.count(app, Loc::Flash) as usize;
        let alive = |sim: &Sim| sim.apps.iter().filter(|a| a.state != AppState::Dead).count();
        let before = alive(&sim);
        sim.seal_launch_started(app);
        // Every SL2 page of the app is on its way back, one 1 MiB request (AGS) of
        // compressed pages in flight; nobody dies before one arrives.
        let load = |sim: &Sim| sim.seal.as_ref().unwrap().loading[app as usize].clone();
        let per_request = (256.0 * sim.zram_ratio).floor() as usize;
        assert_eq!(load(&sim).chunk.len(), need.min(per_request));
        assert_eq!(load(&sim).chunk.len() + load(&sim).queue.len(), need);
        assert_eq!(alive(&sim), before);
        // They arrive, request after request: SL1 had no room for them, so others were
        // killed to make it (none of them the app itself), and every page is back in SL1.
        // The HiKey 970's victims exit for a while: arrived pages that find no room wait,
        // read, for the room the exits free, and nobody else is killed for it meanwhile.
        let life = sim.apps[app as usize].life;
        let for_room = sim.c.kills_by[KillCause::Sl1Room as usize];
        let (mut requests, mut waits) = (0, 0);
        while !load(&sim).chunk.is_empty() {
            if load(&sim).waiting {
                waits += 1;
                let exiting: Vec<u16> = (0..sim.n_apps).filter(|&i| sim.apps[i as usize].exit.is_some()).collect();
                assert!(
                    sim.zram_cap - sim.zram_stored + sim.sl1_exiting() >= load(&sim).chunk.len() as i64,
                    "the exits will free the room"
                );
                let kills = sim.c.kills_by[KillCause::Sl1Room as usize];
                for v in exiting {
                    sim.finish_exit(v);
                }
                assert!(!load(&sim).waiting || sim.c.kills_by[KillCause::Sl1Room as usize] > kills);
            } else {
                sim.seal_hpl_loaded(app, life);
                requests += 1;
            }
        }
        assert!(waits > 0, "the loads waited for exits");
        assert_eq!(requests, need.div_ceil(per_request));
        assert!(alive(&sim) < before, "someone was killed for the room");
        assert_eq!(sim.c.kills_by[KillCause::Sl1Room as usize] - for_room, (before - alive(&sim)) as u64, "counted as HPL's");
        assert_ne!(sim.apps[app as usize].state, AppState::Dead);
        assert_eq!(sim.pages.count(app, Loc::Flash), 0);
        assert!(load(&sim).queue.is_empty());
    }

    /// HPL's worker keeps one request in flight, so a read the launch issues meanwhile
    /// waits for that request at most, not for the whole load.
    #[test]
    fn the_launchs_own_reads_take_their_turn_between_hidden_loads() {
        let (mut sim, app) = sim_with_a_full_sl1();
        let need = sim.pages.count(app, Loc::Flash) as u64;
        assert!(need > 2 * 256, "a load of several requests");
        let queued = sim.flash.busy_until().0.saturating_sub(sim.now.0);
        sim.seal_launch_started(app);
        let own = sim.flash.submit(sim.now, Op::Read, 4096).0 - sim.now.0;
        let most = queued + sim.flash.service(Op::Read, 1 << 20).0 + sim.flash.service(Op::Read, 4096).0;
        assert!(own <= most, "the launch's read took {own} ns, more than the {most} ns of one request and what was queued");
        let whole = sim.flash.service(Op::Read, super::sl2_request_bytes(need, sim.zram_ratio)).0;
        assert!(own < whole / 2);
    }

    /// SL2 requests carry compressed pages: a lone page takes one 4 KiB block, a merged
    /// request 1 MiB of compressed data, and what the run wrote to SL2 is the compressed
    /// size of the pages it unloaded.
    #[test]
    fn sl2_requests_carry_compressed_pages() {
        use super::{batch_pages, sl2_request_bytes};
        let ratio = 2.69;
        assert_eq!(sl2_request_bytes(1, ratio), 4096);
        assert_eq!(sl2_request_bytes(2, ratio), 4096, "two pages of 1,523 bytes fit one block");
        assert_eq!(sl2_request_bytes(3, ratio), 8192);
        let seal = floe_core::SealSetup { k: 3, hpl_mu: Some(0.8), ags: true, sl1_mib: None, sl2_mib: None };
        let merged = batch_pages(&seal, ratio);
        assert_eq!(merged, 688, "floor(256 x 2.69) pages in a 1 MiB request");
        assert!(sl2_request_bytes(merged as u64, ratio) <= 1 << 20);
        assert_eq!(batch_pages(&floe_core::SealSetup { ags: false, ..seal }, ratio), 1);

        // A run: every unload of the sl2-list went out merged and compressed.
        let mut sim = embedded_sim("hikey970", "seal-30apps", "seal", &RunOptions { seed: 1, ..Default::default() });
        assert!(sim.run_until(Nanos::from_secs_f64(400.0)));
        let in_sl2 = sim.flash_used as u64;
        assert!(in_sl2 > 10_000, "SL2 holds {in_sl2} pages");
        let written = sim.flash.write_bytes;
        assert!(written < in_sl2 * 4096 / 2, "{written} bytes written for {in_sl2} pages");
        assert!(written as f64 >= in_sl2 as f64 * 4096.0 / sim.zram_ratio, "at least their compressed size");
    }

    /// With HPL, an app's SL2 share is the pages whose compressed data fills PS_i.
    #[test]
    fn an_apps_sl2_share_is_ps_i_of_compressed_data() {
        let mut sim = embedded_sim("hikey970", "seal-30apps", "seal", &RunOptions { seed: 1, ..Default::default() });
        assert!(sim.run_until(Nanos::from_secs_f64(400.0)));
        let app = (0..sim.n_apps).find(|&i| sim.seal_window(i) > Nanos::ZERO).expect("an app has launched");
        let s = sim.seal.as_ref().unwrap();
        let ps = floe_policies::seal::peak_pages(0.8, sim.seal_window(app), s.th);
        assert!(ps > 0);
        assert_eq!(sim.seal_sl2_cap(app), (ps as f64 * sim.zram_ratio).floor() as u64);
    }

    #[test]
    fn a_load_for_an_app_that_died_meanwhile_is_dropped() {
        let (mut sim, app) = sim_with_a_full_sl1();
        sim.seal_launch_started(app);
        let life = sim.apps[app as usize].life;
        let alive = |sim: &Sim| sim.apps.iter().filter(|a| a.state != AppState::Dead).count();
        sim.kill(app, KillCause::Lmk);
        let before = (alive(&sim), sim.zram_stored, sim.flash.busy_until());
        sim.seal_hpl_loaded(app, life);
        assert_eq!((alive(&sim), sim.zram_stored, sim.flash.busy_until()), before, "nothing loaded or asked for, nobody killed");
    }

    /// Without AGS the LRU reclaims an app's pages in its own order, not the heap's, so
    /// pages reach SL1 behind the unloader's scan; with AGS, whole apps in heap order.
    /// Either way none is left behind, whatever the run does (launches, HPL loads,
    /// cancelled unloads, kills).
    #[test]
    fn no_unloadable_page_is_left_behind_the_unloaders_scan() {
        for policy in ["llr", "llr-hpl", "seal"] {
            let mut sim = embedded_sim("hikey970", "seal-30apps", policy, &RunOptions { seed: 2, ..Default::default() });
            let mut unloaded = 0;
            for step in 1..=30 {
                assert!(sim.run_until(Nanos::from_secs_f64(50.0 * step as f64)), "{policy}: the run ended early");
                let behind = sim.seal_unloadable_behind_scan();
                assert!(behind.is_empty(), "{policy} at {} s: {} pages behind the scan, first {:?}", 50 * step, behind.len(), behind[0]);
                unloaded = sim.flash_used;
            }
            assert!(unloaded > 10_000, "{policy}: SL2 holds {unloaded} pages after 1,500 s");
        }
    }

    /// A page reclaimed into SL1 below where the unloader's scan of its app stands
    /// brings the scan back to it.
    #[test]
    fn a_page_reclaimed_behind_the_scan_pulls_the_scan_back() {
        let mut sim = embedded_sim("hikey970", "seal-30apps", "llr", &RunOptions { seed: 1, ..Default::default() });
        let mut t = 100.0;
        let (app, p) = loop {
            assert!(sim.run_until(Nanos::from_secs_f64(t)), "no resident page behind the scan");
            let s = sim.seal.as_ref().unwrap();
            let found = sim.apps.iter().enumerate().find_map(|(i, a)| {
                let cached = a.state == AppState::Cached && a.swappable;
                (0..s.cursor[i].min(a.populated))
                    .map(|c| a.base + c)
                    .find(|&p| {
                        cached
                            && matches!(sim.pages.loc(p), Loc::ActiveAnon | Loc::InactiveAnon)
                            && sim.pages.llr_weight(p) == 0
                            && !sim.pages.has(p, crate::pages::F_LOCKED)
                    })
                    .map(|p| (i as u16, p))
            });
            if let Some(f) = found {
                break f;
            }
            t += 10.0;
        };
        if sim.zram_stored >= sim.zram_cap {
            sim.zram_cap = sim.zram_stored + 1;
        }
        let mut acc = Evict::default();
        assert!(sim.evict_page(p, &mut acc));
        assert_eq!(sim.pages.loc(p), Loc::Zram);
        let base = sim.apps[app as usize].base;
        assert_eq!(sim.seal.as_ref().unwrap().cursor[app as usize], p - base);
        assert!(sim.seal_unloadable_behind_scan().is_empty());
    }
}
