//! Android 10 lmkd in its default PSI mode (`ro.lmk.use_psi=true`,
//! `ro.lmk.use_minfree_levels=false`): the rules the simulator and the daemon share.
//! Source: AOSP system/core/lmkd/lmkd.c (Android 10); docs/MODEL.md "Killers" says
//! which devices run it and what the simulator counts as a stall.
//!
//! lmkd registers three triggers on the kernel's memory pressure (PSI) over a 1 s
//! window: low = "some" stall of 70 ms, medium = some 100 ms, critical = "full" 70 ms.
//! A low event only records the free memory seen under low pressure; a medium event
//! kills one process of oom_score_adj 800 or more, the highest adj first and within it
//! the least recently set, if free memory is below what low pressure saw. After an event
//! lmkd re-runs that event's handler every 10 ms for a window.

use crate::policy::{AppInfo, AppState};
use crate::units::{AppId, Nanos, Pages};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;

/// Which low-memory killer runs where a policy keeps Android's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LmkdMode {
    /// Kill by the minfree table (the in-kernel driver, or lmkd with
    /// `ro.lmk.use_minfree_levels=true`).
    #[default]
    Minfree,
    /// Android 10 lmkd's defaults: kill on memory-stall (PSI) events; the minfree table
    /// is not used.
    Psi,
    /// Android 10 lmkd with `ro.lmk.use_minfree_levels=true` (and `kill_heaviest_task`),
    /// as Pixels set it: every PSI event, and every poll after one, checks the minfree
    /// table and kills the largest app at the highest adj the table allows.
    #[serde(rename = "psi-minfree")]
    PsiMinfree,
}

impl LmkdMode {
    /// Whether the killer listens to PSI triggers (both lmkd modes).
    pub fn on_psi(self) -> bool {
        self != LmkdMode::Minfree
    }

    /// The name device and daemon files use.
    pub fn name(self) -> &'static str {
        match self {
            LmkdMode::Minfree => "minfree",
            LmkdMode::Psi => "psi",
            LmkdMode::PsiMinfree => "psi-minfree",
        }
    }
}

/// PSI_WINDOW_SIZE_MS.
pub const PSI_WINDOW: Nanos = Nanos::from_ms(1000);
/// psi_thresholds[VMPRESS_LEVEL_LOW]: some 70 ms per window.
pub const LOW_SOME: Nanos = Nanos::from_ms(70);
/// psi_thresholds[VMPRESS_LEVEL_MEDIUM]: some 100 ms per window.
pub const MEDIUM_SOME: Nanos = Nanos::from_ms(100);
/// PSI_POLL_PERIOD_MS: after an event lmkd re-runs its handler this often for a window.
pub const POLL: Nanos = Nanos::from_ms(10);
/// `ro.lmk.kill_timeout_ms` as Pixels set it with use_minfree_levels (`psi-minfree`):
/// events within this long of a kill are skipped while the victim is still dying.
pub const KILL_TIMEOUT_MINFREE_LEVELS: Nanos = Nanos::from_ms(100);
/// lmkd's `is_kill_pending` under `kill_timeout_ms` (`psi-minfree`): an event comes
/// while the last victim, killed `since_kill` ago, is still dying (`victim_alive`, asked
/// only within the timeout), so lmkd skips it rather than take another app for memory
/// that is on its way back.
pub fn kill_pending(since_kill: Option<Nanos>, victim_alive: impl FnOnce() -> bool) -> bool {
    since_kill.is_some_and(|d| d < KILL_TIMEOUT_MINFREE_LEVELS) && victim_alive()
}

/// `ro.lmk.medium`'s default: the lowest oom_score_adj a medium-pressure kill may take.
pub const MEDIUM_MIN_ADJ: i32 = 800;

/// The pressure levels lmkd acts on at its defaults (critical is not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsiLevel {
    Low,
    Medium,
}

/// lmkd's main loop at one wakeup: the handlers to run, and the window of polls.
/// Events (`fired`) run their own levels and open a window of polls of the last one,
/// ending at `until`; with no event, the open window's level is polled while it lasts.
/// Generic over the clock (simulated time, or the daemon's `Instant`).
pub fn handlers<T: PartialOrd + Copy>(poll: &mut Option<(PsiLevel, T)>, fired: &[PsiLevel], now: T, until: T) -> Vec<PsiLevel> {
    if let Some(&last) = fired.last() {
        *poll = Some((last, until));
        return fired.to_vec();
    }
    match *poll {
        Some((level, end)) if now < end => vec![level],
        _ => {
            *poll = None;
            vec![]
        }
    }
}

/// `low_pressure_mem.max_nr_free_pages`: the free memory seen at low-pressure events,
/// and the gate a kill must pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowPressure {
    max_free: Option<Pages>,
}

impl LowPressure {
    /// record_low_pressure_levels: the first low event sets the level; later ones raise
    /// it only by less than a tenth at a time (lmkd ignores larger jumps as stale).
    pub fn record(&mut self, free: Pages) {
        match self.max_free {
            None => self.max_free = Some(free),
            Some(m) if m < free && free.0 - m.0 < m.0 / 10 => self.max_free = Some(free),
            _ => {}
        }
    }

    /// Whether a kill may happen with `free` pages free: `nr_free_pages <
    /// max_nr_free_pages`, never before the first low event (lmkd's -1).
    pub fn may_kill(&self, free: Pages) -> bool {
        self.max_free.is_some_and(|m| free < m)
    }

    pub fn max_free(&self) -> Option<Pages> {
        self.max_free
    }
}

/// find_and_kill_process at its defaults (`kill_heaviest_task` false): the highest
/// oom_score_adj of at least `min_adj`, within it the app whose adj was set longest ago
/// (the least recently used), never the foreground or an app marked unkillable.
pub fn psi_victim(apps: &[AppInfo], fg: Option<AppId>, min_adj: i32) -> Option<AppId> {
    apps.iter()
        .filter(|a| a.state != AppState::Dead && fg != Some(a.id) && !a.unkillable && a.oom_adj >= min_adj)
        .max_by_key(|a| (a.oom_adj, Reverse(a.last_used), Reverse(a.id)))
        .map(|a| a.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_waits_for_a_victim_still_dying_within_the_kill_timeout() {
        assert!(kill_pending(Some(Nanos::from_ms(40)), || true));
        assert!(!kill_pending(Some(Nanos::from_ms(40)), || false), "the victim is gone: its memory is back");
        assert!(!kill_pending(Some(Nanos::from_ms(100)), || panic!("not asked")), "past the timeout lmkd kills again");
        assert!(!kill_pending(None, || true), "no kill yet");
    }

    #[test]
    fn kills_need_free_memory_below_what_low_pressure_saw() {
        let mut l = LowPressure::default();
        assert!(!l.may_kill(Pages(0)), "no low event yet: lmkd's -1 stops every kill");
        l.record(Pages(1000));
        assert!(l.may_kill(Pages(999)) && !l.may_kill(Pages(1000)));
        l.record(Pages(1090)); // under a tenth higher: raised
        assert!(l.may_kill(Pages(1089)));
        l.record(Pages(1500)); // a jump: ignored as stale
        assert!(!l.may_kill(Pages(1090)));
        l.record(Pages(500)); // lower: the maximum stays
        assert_eq!(l.max_free(), Some(Pages(1090)));
    }

    #[test]
    fn an_event_runs_its_level_and_opens_a_window_of_polls_of_the_last() {
        let mut poll = None;
        assert!(handlers(&mut poll, &[], 0, 100).is_empty(), "nothing fired, no window open");
        assert_eq!(handlers(&mut poll, &[PsiLevel::Low, PsiLevel::Medium], 0, 100), vec![PsiLevel::Low, PsiLevel::Medium]);
        assert_eq!(handlers(&mut poll, &[], 10, 110), vec![PsiLevel::Medium], "polls the last event's level");
        assert_eq!(handlers(&mut poll, &[PsiLevel::Low], 50, 150), vec![PsiLevel::Low], "a new event opens a new window");
        assert_eq!(handlers(&mut poll, &[], 149, 249), vec![PsiLevel::Low]);
        assert!(handlers(&mut poll, &[], 150, 250).is_empty(), "the window is over");
        assert_eq!(poll, None);
    }

    #[test]
    fn the_victim_is_the_highest_adj_then_the_least_recently_used() {
        let app = |id: u16, adj: i32, used_ms: u64| AppInfo {
            rss: Pages(100 * id as u64),
            last_used: Nanos::from_ms(used_ms),
            ..AppInfo::ordinary(AppId(id), AppState::Cached, adj)
        };
        let mut apps = vec![app(0, 900, 50), app(1, 910, 30), app(2, 910, 20), app(3, 910, 10), app(4, 0, 0), app(5, 700, 5)];
        apps[3].unkillable = true;
        // adj 910: apps 1 and 2 (3 is unkillable); 2 was used longer ago. Size does not count.
        assert_eq!(psi_victim(&apps, Some(AppId(4)), MEDIUM_MIN_ADJ), Some(AppId(2)));
        apps[2].state = AppState::Dead;
        assert_eq!(psi_victim(&apps, Some(AppId(4)), MEDIUM_MIN_ADJ), Some(AppId(1)));
        apps[1].state = AppState::Dead;
        assert_eq!(psi_victim(&apps, Some(AppId(4)), MEDIUM_MIN_ADJ), Some(AppId(0)));
        apps[0].state = AppState::Dead;
        assert_eq!(psi_victim(&apps, Some(AppId(4)), MEDIUM_MIN_ADJ), None, "adj 700 is below the medium level");
    }
}
