//! Android 10's lmkd in its default mode (`ro.lmk.use_psi=true`,
//! `ro.lmk.use_minfree_levels=false`) and the kernel's memory pressure stall information
//! (PSI) it listens to, for devices whose file says `lmkd = "psi"`.
//!
//! The kernel side: a task is in a memory stall while it reclaims (kswapd in
//! balance_pgdat, a direct reclaimer in try_to_free_pages) or waits for a refaulting
//! page of the working set to be read back (thrashing: wait_on_page_bit_common on a
//! !Uptodate PageWorkingset page). The system's "some" stall is taken as the time at
//! least one task stalls (an upper bound: the kernel weights each CPU by its non-idle
//! time, docs/MODEL.md "Killers"); a trigger fires when that time within its window
//! reaches its threshold, at most once per window. Swap-ins from zram are not stalls in kernels of this age
//! (anonymous pages got shadow entries, and so the working-set flag, in 5.9).
//!
//! lmkd's side, shared with the daemon, is [`floe_core::lmkd`]: low events record free
//! memory, medium events kill one app of adj 800 or more below it, polling after an event.
//!
//! Not modelled: the critical level (complete stalls, every non-idle task at once). Its
//! victims are the medium level's as long as a process of adj 800 or more is left,
//! which in the simulator's workloads is nearly always.

use super::{KillCause, Sim};
use floe_core::lmkd::{handlers, psi_victim, LowPressure, PsiLevel, LOW_SOME, MEDIUM_MIN_ADJ, MEDIUM_SOME, POLL, PSI_WINDOW as WINDOW};
use floe_core::{Nanos, Pages, SystemView};

/// The kernel updates a trigger's window a tenth of a window apart
/// (UPDATES_PER_WINDOW in kernel/sched/psi.c).
pub(super) const CHECK: Nanos = Nanos::from_ms(100);

/// The kernel's stall accounting and lmkd's state.
#[derive(Debug, Default)]
pub(super) struct Lmkd {
    /// Memory-stall intervals of tasks, merged where they overlap the one before;
    /// dropped once they end before the window.
    stalls: Vec<(Nanos, Nanos)>,
    /// kswapd has been reclaiming since then.
    kswapd_since: Option<Nanos>,
    /// When each trigger (low, medium) last fired.
    fired: [Option<Nanos>; 2],
    /// The level lmkd polls, and until when.
    poll: Option<(PsiLevel, Nanos)>,
    low: LowPressure,
    /// `ro.lmk.use_minfree_levels` (with `kill_heaviest_task`): every event and poll
    /// checks the minfree table instead of the medium level's rule.
    pub(super) minfree_levels: bool,
    /// Events heard (low, medium) and kills made, for tests and notes.
    pub(super) events: [u64; 2],
    pub(super) kills: u64,
}

impl Lmkd {
    /// lmkd in PSI mode; `minfree_levels`: with `ro.lmk.use_minfree_levels`.
    pub(super) fn new(minfree_levels: bool) -> Lmkd {
        Lmkd { minfree_levels, ..Default::default() }
    }

    /// A task stalls on memory from `start` to `end`.
    pub(super) fn stall(&mut self, start: Nanos, end: Nanos) {
        if end <= start {
            return;
        }
        if let Some(last) = self.stalls.last_mut() {
            if start >= last.0 && start <= last.1 {
                last.1 = last.1.max(end);
                return;
            }
        }
        self.stalls.push((start, end));
    }

    pub(super) fn kswapd_wakes(&mut self, now: Nanos) {
        self.kswapd_since.get_or_insert(now);
    }

    pub(super) fn kswapd_sleeps(&mut self, now: Nanos) {
        if let Some(since) = self.kswapd_since.take() {
            self.stall(since, now);
        }
    }

    /// Time in the window ending at `now` during which at least one task stalled.
    pub(super) fn some(&mut self, now: Nanos) -> Nanos {
        let from = Nanos(now.0.saturating_sub(WINDOW.0));
        self.stalls.retain(|&(_, e)| e > from);
        let mut iv: Vec<(Nanos, Nanos)> = self.stalls.iter().map(|&(s, e)| (s.max(from), e.min(now))).filter(|(s, e)| s < e).collect();
        if let Some(s) = self.kswapd_since {
            if s < now {
                iv.push((s.max(from), now));
            }
        }
        iv.sort_unstable();
        let (mut total, mut cur) = (0u64, None::<(Nanos, Nanos)>);
        for (s, e) in iv {
            match cur {
                Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
                _ => {
                    if let Some((cs, ce)) = cur {
                        total += ce.0 - cs.0;
                    }
                    cur = Some((s, e));
                }
            }
        }
        if let Some((cs, ce)) = cur {
            total += ce.0 - cs.0;
        }
        Nanos(total)
    }

    /// The kernel's trigger check at `now`: the levels whose trigger fires.
    fn fire(&mut self, now: Nanos) -> Vec<PsiLevel> {
        let some = self.some(now);
        let mut out = Vec::new();
        for (i, (level, threshold)) in [(PsiLevel::Low, LOW_SOME), (PsiLevel::Medium, MEDIUM_SOME)].into_iter().enumerate() {
            if some >= threshold && self.fired[i].is_none_or(|t| now >= t + WINDOW) {
                self.fired[i] = Some(now);
                self.events[i] += 1;
                out.push(level);
            }
        }
        out
    }
}

impl Sim {
    /// The kernel's periodic trigger check, and lmkd's polling after an event: an event
    /// runs lmkd's handler for its level; without one, lmkd re-runs the last event's
    /// handler while that event's window lasts.
    pub(super) fn psi_check(&mut self) {
        let now = self.now;
        let Some(l) = self.psi.as_mut() else { return };
        let fired = l.fire(now);
        for level in handlers(&mut l.poll, &fired, now, now + WINDOW) {
            self.lmkd_event(level);
        }
        let next = match self.psi.as_ref().and_then(|l| l.poll) {
            Some((_, until)) if now + POLL < until => POLL,
            _ => CHECK,
        };
        self.push(self.after(next), super::Ev::Psi);
    }

    /// lmkd's handler for one event (or one poll) of `level`.
    fn lmkd_event(&mut self, level: PsiLevel) {
        let free = Pages(self.free().max(0) as u64);
        let Some(l) = self.psi.as_mut() else { return };
        let victim = if l.minfree_levels {
            // use_minfree_levels: whatever the level, the minfree table decides (free
            // memory above the reserve and the file cache against each level), and
            // kill_heaviest_task takes the largest app at the highest adj.
            self.minfree_level().and_then(|adj| self.pick_victim(adj))
        } else if level == PsiLevel::Low {
            l.low.record(free);
            None
        } else if l.low.may_kill(free) {
            psi_victim(&self.app_infos(), self.foreground(), MEDIUM_MIN_ADJ).map(|v| v.0)
        } else {
            None
        };
        if let Some(v) = victim {
            self.psi.as_mut().expect("checked").kills += 1;
            self.kill(v, KillCause::Lmk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{embedded_sim, RunOptions};
    use floe_core::{AppState, LmkdMode};
    use std::cmp::Reverse;

    fn ms(x: u64) -> Nanos {
        Nanos::from_ms(x)
    }

    #[test]
    fn some_stall_is_the_union_of_the_tasks_stalls_within_the_window() {
        let mut l = Lmkd::default();
        l.stall(ms(0), ms(50));
        l.stall(ms(20), ms(60)); // overlaps: merged
        l.stall(ms(500), ms(530));
        l.stall(ms(510), ms(520)); // inside the one before
        assert_eq!(l.some(ms(1000)), ms(90));
        // 200 ms on, the first stall has left the window.
        assert_eq!(l.some(ms(1200)), ms(30));
        // kswapd reclaiming counts until now.
        l.kswapd_wakes(ms(1150));
        assert_eq!(l.some(ms(1200)), ms(80));
        l.kswapd_sleeps(ms(1250));
        assert_eq!(l.some(ms(1400)), ms(130));
        // A stall reaching into the future counts only up to now.
        l.stall(ms(1450), ms(3000));
        assert_eq!(l.some(ms(1500)), ms(30 + 100 + 50));
    }

    #[test]
    fn triggers_fire_at_their_thresholds_once_per_window() {
        let mut l = Lmkd::default();
        l.stall(ms(0), ms(80));
        assert_eq!(l.fire(ms(100)), vec![PsiLevel::Low], "80 ms of some stall passes low (70) only");
        l.stall(ms(100), ms(130));
        assert_eq!(l.fire(ms(200)), vec![PsiLevel::Medium], "110 ms passes medium; low fired under a window ago");
        assert!(l.fire(ms(300)).is_empty());
        l.stall(ms(1000), ms(1100));
        assert_eq!(l.fire(ms(1100)), vec![PsiLevel::Low]);
        assert_eq!(l.fire(ms(1200)), vec![PsiLevel::Medium]);
        assert_eq!(l.events, [2, 2]);
    }

    /// The Pixel 3 with lmkd in `mode` in Ice's game scenario, run until at least
    /// three cached apps are alive.
    fn pixel3_with_cached_apps(mode: LmkdMode) -> Sim {
        let opts = RunOptions { seed: 1, bg_apps: Some(6), draw_bg: true, ..Default::default() };
        let cat = crate::config::Catalog::embedded().unwrap();
        let wl = crate::config::Workload::load("ice-game", &cat).unwrap();
        let mut dev = crate::config::Device::load("pixel3").unwrap();
        dev.memory.lmkd = mode;
        let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make("lru-cfs").unwrap(), &opts);
        assert!(sim.psi.is_some(), "lmkd listens to PSI in {mode:?}");
        let mut t = Nanos::from_secs_f64(5.0);
        // Apps only: the system's processes (`apps[n_apps..]`) are never cached apps.
        while sim.apps[..sim.n_apps as usize].iter().filter(|a| a.state == AppState::Cached).count() < 3 {
            assert!(sim.run_until(t), "the run ended before three apps were cached");
            t += Nanos::from_secs_f64(5.0);
        }
        sim
    }

    fn alive(sim: &Sim) -> Vec<u16> {
        (0..sim.n_apps).filter(|&i| sim.apps[i as usize].state != AppState::Dead).collect()
    }

    #[test]
    fn lmkd_kills_on_a_medium_event_not_by_the_minfree_table() {
        let mut sim = pixel3_with_cached_apps(LmkdMode::Psi);
        let before = alive(&sim);
        // Free memory under every minfree level: the table's killer would act, lmkd
        // in PSI mode has no such rule.
        sim.usable = sim.resident() + sim.zram_pool_pages() + sim.writeback + 1;
        assert!(sim.lmk_free() < sim.minfree[0].1, "free memory is below the lowest minfree level");
        sim.lmk();
        assert_eq!(alive(&sim), before, "no kill by minfree");
        // Pressure that only reaches the low trigger records free memory, kills nothing.
        let now = sim.now;
        let l = sim.psi.as_mut().unwrap();
        (l.fired, l.poll, l.low) = ([None; 2], None, LowPressure::default());
        l.stall(Nanos(now.0 - Nanos::from_ms(80).0), now);
        sim.psi_check();
        assert_eq!(alive(&sim), before, "a low event does not kill");
        assert_eq!(sim.psi.as_ref().unwrap().low.max_free(), Some(Pages(sim.free() as u64)));
        // A medium event with free memory below what low pressure saw kills one app:
        // the highest oom_score_adj, the least recently used within it.
        let want = before
            .iter()
            .copied()
            .filter(|&i| sim.fg != Some(i) && sim.apps[i as usize].oom_adj >= MEDIUM_MIN_ADJ)
            .max_by_key(|&i| (sim.apps[i as usize].oom_adj, Reverse(sim.apps[i as usize].last_used)))
            .expect("a cached app of adj 800 or more");
        let free = Pages(sim.free() as u64 + 1);
        let l = sim.psi.as_mut().unwrap();
        l.low = LowPressure::default();
        l.low.record(free);
        l.stall(Nanos(now.0 - Nanos::from_ms(200).0), now);
        sim.psi_check();
        let after = alive(&sim);
        assert_eq!(after.len(), before.len() - 1, "one kill per event");
        assert!(!after.contains(&want), "the victim is app {want}");
        assert_eq!(sim.psi.as_ref().unwrap().kills, 1);
    }

    /// With use_minfree_levels (the Pixel 3's Android 10 setting) lmkd still waits for a
    /// PSI event, and then the minfree table decides: the largest app at the highest adj.
    #[test]
    fn with_minfree_levels_an_event_kills_by_the_minfree_table() {
        let mut sim = pixel3_with_cached_apps(LmkdMode::PsiMinfree);
        let before = alive(&sim);
        // Free memory and the file cache under one level for cached apps (adj 900).
        sim.usable = sim.resident() + sim.zram_pool_pages() + sim.writeback + 1;
        sim.minfree = vec![(900, sim.file_lru() + 1)];
        assert_eq!(sim.minfree_level(), Some(900));
        sim.lmk();
        assert_eq!(alive(&sim), before, "no kill outside lmkd's events");
        // A low event is enough: the table, not the level, decides; the victim is the
        // largest app at the highest adj (kill_heaviest_task).
        let want = before
            .iter()
            .copied()
            .filter(|&i| sim.fg != Some(i) && sim.apps[i as usize].oom_adj >= 900)
            .max_by_key(|&i| (sim.apps[i as usize].oom_adj, sim.rss(i)))
            .expect("a cached app");
        let now = sim.now;
        let l = sim.psi.as_mut().unwrap();
        (l.fired, l.poll) = ([None; 2], None);
        l.stall(Nanos(now.0 - Nanos::from_ms(80).0), now);
        sim.psi_check();
        let after = alive(&sim);
        assert_eq!(after.len(), before.len() - 1, "one kill per event");
        assert!(!after.contains(&want), "the victim is app {want}");
    }

    #[test]
    fn a_device_without_psi_mode_keeps_the_minfree_killer() {
        let opts = RunOptions { seed: 1, bg_apps: Some(8), draw_bg: true, ..Default::default() };
        assert!(embedded_sim("p20", "ice-game", "lru-cfs", &opts).psi.is_none());
        // A policy that is its own killer keeps it too, on any device.
        assert!(embedded_sim("pixel3", "ice-game", "smartlmk", &RunOptions { seed: 1, bg_apps: Some(6), ..Default::default() })
            .psi
            .is_none());
    }
}
