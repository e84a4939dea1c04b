//! Killing, freezing and thawing in the engine: the stock low-memory killer (minfree by
//! oom_adj against free memory above the kernel's reserve), the OOM killer, and what a
//! kill, a freeze and a thaw do to an app's pages, CPU and timers.

use super::{Ev, KillCause, Sim};
use crate::pages::Loc;
use floe_core::{AppId, AppState, Event, LmkMode, Pages};
use std::cmp::Reverse;

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
    /// pages stay in the page cache, as they do on Linux.
    pub(super) fn kill(&mut self, app: u16, cause: KillCause) {
        let a = &self.apps[app as usize];
        if a.state == AppState::Dead || self.fg == Some(app) {
            return;
        }
        let (base, pop) = (a.base, a.populated);
        for p in base..base + pop {
            self.release(p);
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
        self.pending.push(Event::AppDied { app: AppId(app) });
        self.recompute_adj();
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
