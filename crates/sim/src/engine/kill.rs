//! Killing, freezing and thawing in the engine: the stock low-memory killer (minfree by
//! oom_adj against free memory above the kernel's reserve), the OOM killer, and what a
//! kill, a freeze and a thaw do to an app's pages, CPU and timers.

use super::{Cont, Ev, KillCause, Sim};
use crate::pages::Loc;
use floe_core::{AppId, AppState, Event, LmkMode, Nanos, Pages};
use std::cmp::Reverse;

/// How long the stock LMK waits for its last victim to exit before it may kill again:
/// `lowmem_deathpending_timeout = jiffies + HZ` in drivers/staging/android/
/// lowmemorykiller.c from Linux 3.0 to 4.x (AOSP and the P20's HiSilicon tree alike).
pub(super) const LMK_DEATH_PENDING: Nanos = Nanos::from_secs(1);

/// A killed process still exiting (a device with `cpu.exit_us_per_page`): its anonymous
/// pages are freed when its exit job ends.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exit {
    /// The app's incarnation after the kill: the job that ends this exit carries it.
    pub(super) life: u32,
    /// When it was killed.
    pub(super) since: Nanos,
    /// Its populated heap at the kill, the pages the exit frees.
    pub(super) populated: u32,
    /// Its RSS at the kill, the memory SmartLMK Fig. 15 counts.
    pub(super) rss: u32,
    /// The kill decision it belongs to.
    pub(super) batch: u32,
}

impl Sim {
    /// The stock low-memory killer: the first minfree level (ascending adj) that both
    /// free memory and the file cache are below sets the lowest adj that may die; the
    /// victim is the highest adj, then the largest. Foreground and unkillable apps are
    /// never chosen.
    pub(super) fn lmk(&mut self) {
        self.last_lmk = Some(self.now);
        if self.setup.lmk == LmkMode::OomOnly || self.psi.is_some() {
            // No in-kernel killer: lmkd in PSI mode kills on its own events.
            return;
        }
        if let Some((v, since)) = self.lmk_dying {
            // lowmem_deathpending: while its last victim exits, for at most a second,
            // the killer gives nothing back to reclaim.
            if self.apps[v as usize].exit.is_some() && self.now < since + LMK_DEATH_PENDING {
                return;
            }
            self.lmk_dying = None;
        }
        let free = self.free();
        let Some(min_adj) = self.minfree_level() else {
            return;
        };
        if self.setup.lmk == LmkMode::Policy {
            // The policy is the killer: it hears of the low level at once, as lmkd
            // does from its pressure events, and its kills take effect before the
            // allocation that triggered it goes on.
            self.pending.push(Event::LowMemory { min_adj, free: Pages(free.max(0) as u64) });
            self.flush_policy();
            return;
        }
        if let Some(v) = self.pick_victim(min_adj) {
            self.kill(v, KillCause::Lmk);
            if self.apps[v as usize].exit.is_some() {
                self.lmk_dying = Some((v, self.now));
            }
        }
    }

    /// The minfree table's verdict: the lowest adj that may die, from the first level
    /// (ascending adj) that free memory above the reserve and the file cache are both
    /// below (free memory alone under a policy's kill threshold); None above every level.
    pub(super) fn minfree_level(&self) -> Option<i32> {
        let (other_free, file) = (self.lmk_free(), self.file_lru());
        self.minfree.iter().find(|&&(_, mf)| other_free < mf && (self.lmk_free_only || file < mf)).map(|&(adj, _)| adj)
    }

    /// The free memory the LMK compares with minfree. The kernel's lowmemorykiller.c,
    /// and lmkd, which mirrors it, use `other_free`: free pages minus
    /// totalreserve_pages, the zones' high watermarks plus their lowmem reserves (floe
    /// has one zone and no reserve). A policy's own kill threshold is on free memory.
    pub(super) fn lmk_free(&self) -> i64 {
        if self.lmk_free_only {
            self.free()
        } else {
            self.free() - self.wmark[2]
        }
    }

    pub(super) fn pick_victim(&self, min_adj: i32) -> Option<u16> {
        (0..self.n_apps)
            .filter(|&i| {
                let a = &self.apps[i as usize];
                a.state != AppState::Dead && self.fg != Some(i) && !a.unkillable && a.oom_adj >= min_adj
            })
            .max_by_key(|&i| (self.apps[i as usize].oom_adj, self.rss(i), Reverse(i)))
    }

    pub(super) fn rss(&self, app: u16) -> u32 {
        [Loc::InactiveAnon, Loc::ActiveAnon, Loc::InactiveFile, Loc::ActiveFile, Loc::Unevictable]
            .iter()
            .map(|&l| self.pages.count(app, l))
            .sum()
    }

    pub(super) fn oom_kill(&mut self) {
        if let Some(v) = self.pick_victim(i32::MIN) {
            self.kill(v, KillCause::Oom);
        }
    }

    /// Kills an app: its anonymous memory (resident or swapped) is freed; its file
    /// pages stay in the page cache, as they do on Linux. On a device with
    /// `cpu.exit_us_per_page` the memory is freed when the process's exit ends: a job
    /// of that CPU work for each page of its RSS, weighted and grouped as the app was
    /// (Linux 5.15's process_mrelease: the time a process takes to free its memory
    /// after SIGKILL "might vary based on the state of the process ..., size and OPP
    /// level of the core the process is running"), and the policies hear of the death
    /// then. The OOM killer's victim is freed at once, as the oom_reaper (Linux 4.6)
    /// frees it without waiting for its exit.
    pub(super) fn kill(&mut self, app: u16, cause: KillCause) {
        let a = &self.apps[app as usize];
        if a.state == AppState::Dead || self.fg == Some(app) {
            return;
        }
        let (base, pop, life) = (a.base, a.populated, a.life);
        let exit_ns_per_page = self.device.cpu.exit_us_per_page.filter(|_| cause != KillCause::Oom).map(|us| us * 1e3);
        let exiting = exit_ns_per_page.map(|ns| {
            let rss = self.rss(app);
            let batch = self.kill_batch.unwrap_or_else(|| {
                self.next_batch += 1;
                self.next_batch - 1
            });
            let e = self.exit_batches.entry(batch).or_insert((self.now, 0, 0));
            e.1 += 1;
            e.2 += u64::from(rss);
            let job = (self.weight_of(app), self.in_bg_group(app), Nanos((f64::from(rss) * ns).ceil() as u64));
            (Exit { life: life + 1, since: self.now, populated: pop, rss, batch }, job)
        });
        if exiting.is_none() {
            for p in base..base + pop {
                self.release(p);
            }
        }
        self.churn_forget(app);
        self.cpu.drop_app(self.now, app);
        self.seal_forget(app);
        self.asap_forget(app);
        let a = &mut self.apps[app as usize];
        a.state = AppState::Dead;
        a.life += 1;
        a.populated = 0;
        a.file_seen = 0;
        a.bg_walk = Default::default();
        a.stalled = None;
        a.frame_busy = false;
        a.launch = None;
        a.unkillable = false;
        self.c.kills += 1;
        self.c.kills_by[cause as usize] += 1;
        self.app_c[app as usize].kills += 1;
        match exiting {
            Some((exit, (weight, bg, work))) => {
                self.apps[app as usize].exit = Some(exit);
                self.c.cpu_app_ns += work.0;
                self.app_c[app as usize].cpu_ns += work.0;
                self.cpu.add(self.now, work, weight, bg, None, false, Cont::Exit { app, life: exit.life });
            }
            None => self.pending.push(Event::AppDied { app: AppId(app) }),
        }
        self.recompute_adj();
    }

    /// A killed process's exit job ended: its memory is free, unless a launch of its app
    /// already took the exit to its end.
    pub(super) fn exit_done(&mut self, app: u16, life: u32) {
        if self.apps[app as usize].exit.is_some_and(|e| e.life == life) {
            self.finish_exit(app);
        }
    }

    /// Ends the exit of `app`'s killed process now, if one is running: its anonymous
    /// memory is freed, the time from its kill counted, and the policies hear of the
    /// death. A launch of the app ends it first (ActivityManager starts the new process
    /// once the old one is gone; the rest of the old one's exit work still runs).
    pub(super) fn finish_exit(&mut self, app: u16) {
        let Some(e) = self.apps[app as usize].exit.take() else {
            return;
        };
        let base = self.apps[app as usize].base;
        for p in base..base + e.populated {
            self.release(p);
        }
        let took = self.now.0 - e.since.0;
        self.c.exits += 1;
        self.c.exit_pages += u64::from(e.rss);
        self.c.exit_ns += took;
        if let Some(b) = self.exit_batches.get_mut(&e.batch) {
            b.1 -= 1;
            if b.1 == 0 {
                let (since, _, pages) = self.exit_batches.remove(&e.batch).expect("present");
                self.c.exit_batches += 1;
                self.c.exit_batch_pages += pages;
                self.c.exit_batch_ns += self.now.0 - since.0;
            }
        }
        self.pending.push(Event::AppDied { app: AppId(app) });
        self.seal_exited();
    }

    pub(super) fn freeze(&mut self, app: u16) {
        let a = &mut self.apps[app as usize];
        if a.state != AppState::Cached || self.fg == Some(app) {
            return;
        }
        a.state = AppState::Frozen;
        a.gen += 1;
        self.cpu.set_paused(self.now, app, true);
        self.c.freezes += 1;
        self.app_c[app as usize].freezes += 1;
    }

    pub(super) fn thaw(&mut self, app: u16) {
        let a = &mut self.apps[app as usize];
        if a.state != AppState::Frozen {
            return;
        }
        a.state = AppState::Cached;
        a.gen += 1;
        a.evict_cursor = [0; 2];
        let gen = a.gen;
        self.cpu.set_paused(self.now, app, false);
        self.c.thaws += 1;
        self.app_c[app as usize].thaws += 1;
        if self.apps[app as usize].stalled.is_some() {
            // Frozen at a fault in a wakeup: it goes on from there.
            self.push(self.now, Ev::BgResume { app, gen });
        } else {
            self.schedule_bg(app, gen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{embedded_sim, KillCause, Sim};
    use crate::pages::Loc;
    use crate::RunOptions;
    use floe_core::{AppState, Nanos};

    /// The Galaxy Nexus's benchmark run in 1 ms steps until its stock LMK has killed.
    fn at_first_lmk_kill() -> Sim {
        let mut sim = embedded_sim("galaxy-nexus", "smartlmk-256", "android-lmk", &RunOptions { seed: 1, ..Default::default() });
        let mut t = Nanos::ZERO;
        while sim.c.kills_by[KillCause::Lmk as usize] == 0 {
            t += Nanos::from_ms(1);
            assert!(sim.run_until(t), "the run ended before the LMK killed");
        }
        sim
    }

    fn resident_anon(sim: &Sim, app: u16) -> u32 {
        sim.pages.count(app, Loc::InactiveAnon) + sim.pages.count(app, Loc::ActiveAnon)
    }

    /// On a device that models exits, a victim keeps its memory until its exit's CPU
    /// work is done, at most a core's speed, and the stock LMK kills no one else
    /// meanwhile though memory stays under its level (lowmem_deathpending).
    #[test]
    fn a_victim_frees_its_memory_as_its_exit_ends_and_the_lmk_waits_for_it() {
        let mut sim = at_first_lmk_kill();
        let (victim, since) = sim.lmk_dying.expect("the LMK waits on its victim");
        let exit = sim.apps[victim as usize].exit.expect("its exit runs");
        assert_eq!(sim.apps[victim as usize].state, AppState::Dead);
        assert!(resident_anon(&sim, victim) > 0, "the heap is still held as the exit starts");
        assert!(sim.minfree_level().is_some(), "memory is still under a minfree level");
        let kills = sim.c.kills;
        sim.lmk();
        assert_eq!(sim.c.kills, kills, "no second kill while the victim exits");
        let per_page = sim.device.cpu.exit_us_per_page.expect("the device models exits") * 1e3;
        let least = Nanos((f64::from(exit.rss) * per_page) as u64);
        let mut t = sim.now_ns();
        while sim.apps[victim as usize].exit.is_some() {
            t += Nanos(100_000);
            assert!(sim.run_until(t), "the run ended before the exit");
        }
        assert_eq!(resident_anon(&sim, victim), 0, "the heap is free once the exit ends");
        assert_eq!(sim.c.exits, 1);
        assert_eq!(sim.c.exit_pages, u64::from(exit.rss));
        assert!(sim.c.exit_ns >= least.0, "the exit took {} ns, less than its work at a core's speed ({} ns)", sim.c.exit_ns, least.0);
        assert!(sim.now_ns().0 - since.0 < Nanos::from_secs(1).0, "a lone exit ends well inside the LMK's wait");
    }

    /// A launch of an app whose killed process is still exiting ends that exit first,
    /// so the new process starts from an empty heap.
    #[test]
    fn a_launch_ends_its_apps_exit_first() {
        let mut sim = at_first_lmk_kill();
        let (victim, _) = sim.lmk_dying.expect("the LMK waits on its victim");
        assert!(resident_anon(&sim, victim) > 0);
        sim.launch(victim, 0, false);
        assert!(sim.apps[victim as usize].exit.is_none());
        assert_eq!(sim.c.exits, 1);
        assert_eq!(sim.apps[victim as usize].state, AppState::Launching);
    }
}
