//! Selective swap/kill (Kim and Bahn, IEEE Access 8, 2020, §IV and Algorithm 1): apps
//! that save their own context are killed, the others are swapped to flash.
//!
//! Classification (§IV-A): an app is a kill-target if it saves its context itself, or
//! has none worth saving (cameras), and a swap-target otherwise. The paper detects this
//! from the context-saving files Android apps write when their activity state changes;
//! here that detection is [`AppInfo::saves_context`]. Kill-targets are never swapped:
//! their pages are made unswappable as soon as their process starts. Each app also has
//! a priority class of Table 1 ([`AppInfo::priority_class`]: high, medium, low).
//!
//! Triggering (§IV-B, Table 3): the low-memory killer acts below the kill-threshold and
//! kswapd below the swap-threshold; kill-first uses the Android and Linux defaults
//! (180 MB and 4 MB, so the LMK acts first), swap-first 100 MB and 180 MB. Swap goes
//! to a 2 GB swap file on the eMMC (§V-A), so the swap tier is flash, not zram.
//!
//! Algorithm 1, one pass per event the policy hears:
//! - LMK: below the kill-threshold, kill the least recently used kill-target (one app
//!   per pass). Swap-targets are never chosen by the LMK.
//! - kswapd: the backend's stock LRU reclaim, which skips unswappable pages.
//! - If more apps are involved in swap than `swap_max`, the lowest-priority swap-target
//!   is moved to the kill-target list: it becomes unswappable and killable.
//! - OOM: "if kswapd fails to free pages", the lowest-priority app in the system dies:
//!   when the backend reports a kswapd pass that freed nothing
//!   ([`Event::ReclaimFailed`]), the lowest Table 1 class, the least recently used
//!   within it, kill-target or swap-target, never the foreground. (An allocation that
//!   finds nothing at all to reclaim still meets the backend's own OOM killer.)
//!
//! The foreground app is never killed by this policy and never demoted.

use floe_core::{
    Action, AppId, AppInfo, AppState, Event, EventMask, LaunchKind, LmkMode, Nanos, Pages, Policy, Setup, SwapSetup, SystemView,
};
use std::collections::BTreeSet;

/// Selective's parameters (its Table 3, and `swap_max` of Algorithm 1).
#[derive(Clone, Debug, PartialEq)]
pub struct SelectiveParams {
    /// Free memory below which the LMK kills a kill-target.
    pub kill_threshold: Pages,
    /// Free memory below which kswapd swaps swap-targets' pages.
    pub swap_threshold: Pages,
    /// Algorithm 1's `swap_max`: the largest number of apps involved in swap (alive
    /// swap-targets with at least one page in swap) before the lowest-priority
    /// swap-target is moved to the kill-target list. The paper gives no value.
    /// Assumption: 10, the paper's own figure for the apps a user runs in a day (§IV,
    /// "less than 10 applications within a day"), below which it says limiting swap
    /// is rarely needed.
    pub swap_max_apps: usize,
    /// How often Algorithm 1's swap_max check runs between other events. The paper runs
    /// it in kswapd's loop; assumption: 100 ms, well inside one 30 s use of an app.
    pub tick: Option<Nanos>,
}

impl SelectiveParams {
    /// Algorithm 1's swap_max default (see [`SelectiveParams::swap_max_apps`]).
    pub const SWAP_MAX_APPS: usize = 10;
    /// The check interval default (see [`SelectiveParams::tick`]).
    pub const TICK: Nanos = Nanos::from_ms(100);

    /// Kill-first (Table 3): the stock kill-threshold of Android (180 MB) and the stock
    /// swap-threshold of Linux (4 MB), so the LMK acts before kswapd. MB are MiB, as
    /// Android's minfree and Linux's watermarks count them.
    pub fn kill_first() -> SelectiveParams {
        SelectiveParams {
            kill_threshold: Pages::from_mib_f64(180.0),
            swap_threshold: Pages::from_mib_f64(4.0),
            swap_max_apps: Self::SWAP_MAX_APPS,
            tick: Some(Self::TICK),
        }
    }

    /// Swap-first (Table 3): kill-threshold 100 MB, swap-threshold 180 MB, so kswapd
    /// acts before the LMK.
    pub fn swap_first() -> SelectiveParams {
        SelectiveParams {
            kill_threshold: Pages::from_mib_f64(100.0),
            swap_threshold: Pages::from_mib_f64(180.0),
            swap_max_apps: Self::SWAP_MAX_APPS,
            tick: Some(Self::TICK),
        }
    }
}

/// The selective swap/kill policy.
#[derive(Clone, Debug)]
pub struct Selective {
    params: SelectiveParams,
    /// Swap-targets moved to the kill-target list for the rest of their process's life
    /// (Algorithm 1's demotion). A restarted app is classified afresh.
    demoted: BTreeSet<AppId>,
    /// The last kill asked for and when, so that several low-memory reports read from
    /// one unchanged view ask for one kill, not one per report.
    last_kill: Option<(Nanos, AppId)>,
}

impl Selective {
    pub fn new(params: SelectiveParams) -> Selective {
        Selective { params, demoted: BTreeSet::new(), last_kill: None }
    }

    /// The kill-first variant, registered as "selective-kill-first".
    pub fn kill_first() -> Selective {
        Selective::new(SelectiveParams::kill_first())
    }

    /// The swap-first variant, registered as "selective-swap-first".
    pub fn swap_first() -> Selective {
        Selective::new(SelectiveParams::swap_first())
    }

    pub fn params(&self) -> &SelectiveParams {
        &self.params
    }

    /// Whether `info`'s current process is on the kill-target list: the app saves its
    /// own context, or it was demoted from the swap-target list.
    pub fn is_kill_target(&self, info: &AppInfo) -> bool {
        info.saves_context || self.demoted.contains(&info.id)
    }

    /// Alive apps other than the foreground, with their snapshots, in id order.
    fn background(view: &dyn SystemView) -> Vec<AppInfo> {
        let fg = view.foreground();
        view.app_infos().into_iter().filter(|i| Some(i.id) != fg && i.state != AppState::Dead && i.state != AppState::Foreground).collect()
    }

    /// Algorithm 1's LMK victim: the least recently used kill-target that the stock
    /// killer's level allows (`oom_adj >= min_adj`). Ties go to the lower priority
    /// class, then the lower id. Swap-targets and the foreground are never chosen.
    pub fn lmk_victim(&self, min_adj: i32, view: &dyn SystemView) -> Option<AppId> {
        Self::background(view)
            .into_iter()
            .filter(|i| self.is_kill_target(i) && !i.unkillable && i.oom_adj >= min_adj)
            .min_by_key(|i| (i.last_used, std::cmp::Reverse(i.priority_class), i.id))
            .map(|i| i.id)
    }

    /// Algorithm 1's OOM victim: the lowest-priority app in the system (Table 1's
    /// class), the least recently used within a class, whether it is a kill-target or
    /// a swap-target; never the foreground or an app marked unkillable.
    pub fn oom_victim(&self, view: &dyn SystemView) -> Option<AppId> {
        Self::background(view)
            .into_iter()
            .filter(|i| !i.unkillable)
            .max_by_key(|i| (i.priority_class, std::cmp::Reverse(i.last_used), std::cmp::Reverse(i.id)))
            .map(|i| i.id)
    }

    /// How many alive swap-targets have pages in swap (Algorithm 1's "apps involved in
    /// swap"), the foreground included.
    pub fn apps_in_swap(&self, view: &dyn SystemView) -> usize {
        view.app_infos().into_iter().filter(|i| i.state != AppState::Dead && !self.is_kill_target(i) && i.swapped.0 > 0).count()
    }

    /// Algorithm 1's demotion candidate: the lowest-priority app on the swap-target
    /// list, the least recently used one within a class, never the foreground.
    pub fn demotion_candidate(&self, view: &dyn SystemView) -> Option<AppId> {
        Self::background(view)
            .into_iter()
            .filter(|i| !self.is_kill_target(i))
            .max_by_key(|i| (i.priority_class, std::cmp::Reverse(i.last_used), std::cmp::Reverse(i.id)))
            .map(|i| i.id)
    }

    /// Sets the swap eligibility of a starting app from its class: kill-targets are
    /// never swapped; a swap-target left unswappable by a demotion in an earlier life
    /// becomes swappable again.
    fn classify(&mut self, app: AppId, view: &dyn SystemView, out: &mut Vec<Action>) {
        self.demoted.remove(&app);
        let Some(info) = view.app(app) else { return };
        let swappable = !self.is_kill_target(&info);
        if info.swappable != swappable {
            out.push(Action::SetSwappable { app, swappable });
        }
    }

    /// Algorithm 1's LMK step: one kill-target dies, in one [`Action::Kill`].
    fn low_memory(&mut self, min_adj: i32, view: &dyn SystemView, out: &mut Vec<Action>) {
        let victim = self.lmk_victim(min_adj, view);
        self.kill_once(victim, view, out);
    }

    /// Kills `victim` unless the same kill was already asked for at this instant.
    fn kill_once(&mut self, victim: Option<AppId>, view: &dyn SystemView, out: &mut Vec<Action>) {
        let Some(victim) = victim else { return };
        let now = view.now();
        if self.last_kill == Some((now, victim)) {
            return;
        }
        self.last_kill = Some((now, victim));
        out.push(Action::Kill(vec![victim]));
    }

    /// Algorithm 1's swap_max step: if more apps are involved in swap than swap_max,
    /// the lowest-priority swap-target becomes a kill-target (one per pass).
    fn limit_swap(&mut self, view: &dyn SystemView, out: &mut Vec<Action>) {
        if self.apps_in_swap(view) <= self.params.swap_max_apps {
            return;
        }
        if let Some(app) = self.demotion_candidate(view) {
            self.demoted.insert(app);
            out.push(Action::SetSwappable { app, swappable: false });
        }
    }
}

impl Policy for Selective {
    fn name(&self) -> &'static str {
        // The paper names the variants by which mechanism triggers first.
        if self.params.kill_threshold >= self.params.swap_threshold {
            "selective-kill-first"
        } else {
            "selective-swap-first"
        }
    }

    fn setup(&self) -> Setup {
        Setup {
            swap: SwapSetup::Flash,
            lmk: LmkMode::Policy,
            swap_threshold: Some(self.params.swap_threshold),
            kill_threshold: Some(self.params.kill_threshold),
            tick: self.params.tick,
            events: EventMask { refaults: false, pressure: true, launches: true, lifecycle: true },
            ..Setup::stock()
        }
    }

    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        match *ev {
            // A cold launch is heard before the process exists: classifying here too
            // keeps a kill-target's first pages out of swap.
            Event::AppStarted { app } | Event::LaunchStarted { app, kind: LaunchKind::Cold } => self.classify(app, view, out),
            Event::AppDied { app } => {
                self.demoted.remove(&app);
            }
            Event::LowMemory { min_adj, .. } => self.low_memory(min_adj, view, out),
            Event::ReclaimFailed { .. } => {
                let victim = self.oom_victim(view);
                self.kill_once(victim, view, out);
            }
            _ => {}
        }
        self.limit_swap(view, out);
    }

    /// The demotions of apps still alive (a restarted daemon finds the same processes;
    /// a restarted app is classified afresh anyway), by app name.
    fn export_state(&self, view: &dyn SystemView) -> Option<String> {
        let demoted: Vec<String> = self.demoted.iter().filter_map(|&id| view.app(id)).map(|i| i.name).collect();
        serde_json::to_string(&serde_json::json!({ "demoted": demoted })).ok()
    }

    fn import_state(&mut self, state: &str, view: &dyn SystemView) -> Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Saved {
            demoted: Vec<String>,
        }
        let saved: Saved = serde_json::from_str(state).map_err(|e| format!("selective classification: {e}"))?;
        for id in view.apps() {
            if let Some(i) = view.app(id).filter(|i| i.state != AppState::Dead && saved.demoted.contains(&i.name)) {
                self.demoted.insert(i.id);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::PriorityClass;

    /// A hand-made view: apps with a class, recency and swap use, and a foreground.
    type View = crate::fake::FakeView;

    fn app(i: u16, saves_context: bool, class: PriorityClass, last_used_s: u64) -> AppInfo {
        AppInfo {
            id: AppId(i),
            name: format!("app{i}"),
            state: AppState::Cached,
            oom_adj: 900,
            rss: Pages(1000),
            swapped: Pages(0),
            saves_context,
            priority_class: class,
            perceptible: false,
            unkillable: false,
            swappable: !saves_context,
            last_used: Nanos::from_secs(last_used_s),
        }
    }

    /// Six apps: the foreground (a kill-target, most recently used of all by
    /// definition but given the oldest stamp to tempt a wrong choice), three
    /// background kill-targets and two background swap-targets.
    fn new_view() -> View {
        use PriorityClass::*;
        let mut v = View { now: Nanos::from_secs(60), fg: Some(AppId(0)), ..View::default() };
        let mut fg = app(0, true, Low, 0);
        fg.state = AppState::Foreground;
        fg.oom_adj = 0;
        for a in [
            fg,
            app(1, true, High, 10),   // kill-target, used at 10 s
            app(2, true, Low, 30),    // kill-target, used at 30 s
            app(3, true, Medium, 20), // kill-target, used at 20 s
            app(4, false, Low, 5),    // swap-target, the oldest background app
            app(5, false, Medium, 1), // swap-target
        ] {
            v.insert(a);
        }
        v
    }

    fn low_memory() -> Event {
        Event::LowMemory { min_adj: 1, free: Pages(100) }
    }

    /// Sends `ev` to `sel` once a second over [`new_view`] until it asks for no kill,
    /// carrying out each kill (one app each time); returns the apps in the order they died.
    fn kill_order(sel: &mut Selective, ev: &Event) -> Vec<u16> {
        let mut view = new_view();
        let mut order = Vec::new();
        for step in 0..8 {
            view.now = Nanos::from_secs(60 + step);
            let mut out = Vec::new();
            sel.on_event(ev, &view, &mut out);
            match out.as_slice() {
                [Action::Kill(set)] => {
                    assert_eq!(set.len(), 1, "one app per event");
                    order.push(set[0].0);
                    view.kill(set[0].0);
                }
                [] => break,
                other => panic!("unexpected actions {other:?}"),
            }
        }
        order
    }

    #[test]
    fn thresholds_of_both_variants_follow_table_3() {
        let kf = Selective::kill_first();
        let s = kf.setup();
        assert_eq!(kf.name(), "selective-kill-first");
        assert_eq!(s.kill_threshold, Some(Pages(180 * 256)));
        assert_eq!(s.swap_threshold, Some(Pages(4 * 256)));
        assert_eq!((s.swap, s.lmk), (SwapSetup::Flash, LmkMode::Policy));
        assert!(s.events.launches && s.events.lifecycle);

        let sf = Selective::swap_first();
        let s = sf.setup();
        assert_eq!(sf.name(), "selective-swap-first");
        assert_eq!(s.kill_threshold, Some(Pages(100 * 256)));
        assert_eq!(s.swap_threshold, Some(Pages(180 * 256)));
        assert_eq!((s.swap, s.lmk), (SwapSetup::Flash, LmkMode::Policy));

        assert_eq!(Selective::new(SelectiveParams::kill_first()).name(), "selective-kill-first");
        assert_eq!(kf.params().swap_max_apps, 10);
    }

    #[test]
    fn kill_targets_become_unswappable_when_they_start() {
        let mut sel = Selective::kill_first();
        let mut view = new_view();
        for i in 1..=5 {
            view.get(i).swappable = true;
        }
        let mut out = Vec::new();
        for i in 1..=5 {
            sel.on_event(&Event::AppStarted { app: AppId(i) }, &view, &mut out);
        }
        // The three kill-targets lose swap; swap-targets, already swappable, are left be.
        assert_eq!(out, (1..=3).map(|i| Action::SetSwappable { app: AppId(i), swappable: false }).collect::<Vec<_>>());
        assert!(sel.is_kill_target(&view.apps[&AppId(1)]));
        assert!(!sel.is_kill_target(&view.apps[&AppId(4)]));
        // An unknown app is ignored.
        out.clear();
        sel.on_event(&Event::AppStarted { app: AppId(99) }, &view, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn lmk_kills_kill_targets_least_recently_used_first_and_never_swap_targets() {
        let order = kill_order(&mut Selective::kill_first(), &low_memory());
        // Oldest kill-target first (10 s, 20 s, 30 s) whatever its class; the
        // foreground and the swap-targets (4 and 5, older still) are never chosen.
        assert_eq!(order, vec![1, 3, 2]);
    }

    #[test]
    fn lmk_breaks_recency_ties_by_lower_priority_and_respects_min_adj() {
        let mut sel = Selective::kill_first();
        let mut view = new_view();
        view.get(1).last_used = Nanos::from_secs(7);
        view.get(3).last_used = Nanos::from_secs(7);
        assert_eq!(sel.lmk_victim(1, &view), Some(AppId(3)), "medium goes before high at equal recency");
        view.get(3).unkillable = true;
        assert_eq!(sel.lmk_victim(1, &view), Some(AppId(1)), "unkillable apps are skipped");
        let mut out = Vec::new();
        sel.on_event(&Event::LowMemory { min_adj: 950, free: Pages(0) }, &view, &mut out);
        assert!(out.is_empty(), "no kill-target at or above adj 950: {out:?}");
    }

    /// Algorithm 1's OOM step: when kswapd fails to free pages, the lowest-priority app
    /// in the system dies, swap-targets included, the least recently used within the
    /// lowest class; never the foreground (here the oldest and of the lowest class).
    #[test]
    fn a_failed_kswapd_pass_kills_the_lowest_priority_app_least_recently_used() {
        let mut sel = Selective::swap_first();
        let order = kill_order(&mut sel, &Event::ReclaimFailed { free: Pages(0) });
        // Low: swap-target 4 (5 s) before kill-target 2 (30 s); then medium: 5 (1 s)
        // before 3 (20 s); then high: 1. The foreground (0) is left.
        assert_eq!(order, vec![4, 2, 5, 3, 1]);

        let mut view = new_view();
        view.get(4).unkillable = true;
        assert_eq!(sel.oom_victim(&view), Some(AppId(2)), "unkillable apps are skipped");
    }

    #[test]
    fn one_kill_action_with_the_chosen_set_per_unchanged_view() {
        let mut sel = Selective::kill_first();
        let view = new_view();
        let mut out = Vec::new();
        // Two reports in one batch read the same view: one kill, not two.
        sel.on_event(&low_memory(), &view, &mut out);
        sel.on_event(&low_memory(), &view, &mut out);
        assert_eq!(out, vec![Action::Kill(vec![AppId(1)])]);
    }

    #[test]
    fn foreground_is_never_killed_or_demoted() {
        let mut sel = Selective::new(SelectiveParams { swap_max_apps: 0, ..SelectiveParams::kill_first() });
        let mut view = new_view();
        // Only the foreground is alive, as a swap-target with pages in swap.
        for i in 1..=5 {
            view.kill(i);
        }
        let fg = view.get(0);
        fg.saves_context = false;
        fg.swapped = Pages(50);
        let mut out = Vec::new();
        sel.on_event(&low_memory(), &view, &mut out);
        sel.on_event(&Event::Tick, &view, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(sel.apps_in_swap(&view), 1);
        assert_eq!(sel.demotion_candidate(&view), None);
        // As a kill-target it is not a victim either.
        view.get(0).saves_context = true;
        assert_eq!(sel.lmk_victim(i32::MIN, &view), None);
    }

    #[test]
    fn demotion_when_apps_in_swap_exceed_swap_max() {
        use PriorityClass::*;
        let mut sel = Selective::new(SelectiveParams { swap_max_apps: 2, ..SelectiveParams::swap_first() });
        let mut view = new_view();
        // Swap-targets: 4 (low, 5 s), 5 (medium, 1 s), 6 (medium, 40 s), 7 (high, 2 s).
        view.apps.insert(AppId(6), app(6, false, Medium, 40));
        view.apps.insert(AppId(7), app(7, false, High, 2));
        view.get(5).swapped = Pages(10);
        view.get(6).swapped = Pages(10);
        let mut out = Vec::new();
        // Two apps in swap: at swap_max, nothing happens.
        sel.on_event(&Event::Tick, &view, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // A third: the lowest-priority swap-target (4, low, nothing in swap yet) leaves
        // the swap-target list.
        view.get(7).swapped = Pages(10);
        sel.on_event(&Event::Tick, &view, &mut out);
        assert_eq!(out, vec![Action::SetSwappable { app: AppId(4), swappable: false }]);
        view.get(4).swappable = false;
        assert!(sel.is_kill_target(&view.apps[&AppId(4)]));
        out.clear();
        // Still three in swap: next pass, the least recently used medium one (5).
        sel.on_event(&Event::Tick, &view, &mut out);
        assert_eq!(out, vec![Action::SetSwappable { app: AppId(5), swappable: false }]);
        view.get(5).swappable = false;
        out.clear();
        // Now two in swap: no more demotions.
        sel.on_event(&Event::Tick, &view, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(sel.apps_in_swap(&view), 2);
        // Demoted apps are killable; 4 (5 s) is now the oldest kill-target, then 5 was
        // used at 1 s, so 5 goes first.
        sel.on_event(&low_memory(), &view, &mut out);
        assert_eq!(out, vec![Action::Kill(vec![AppId(5)])]);
        view.kill(5);
        out.clear();
        sel.on_event(&Event::AppDied { app: AppId(5) }, &view, &mut out);
        view.now = Nanos::from_secs(61);
        sel.on_event(&low_memory(), &view, &mut out);
        assert_eq!(out, vec![Action::Kill(vec![AppId(4)])]);
    }

    #[test]
    fn a_demoted_app_is_a_swap_target_again_after_restart() {
        let mut sel = Selective::new(SelectiveParams { swap_max_apps: 0, ..SelectiveParams::kill_first() });
        let mut view = new_view();
        view.get(5).swapped = Pages(10);
        let mut out = Vec::new();
        sel.on_event(&Event::Tick, &view, &mut out);
        // The low-priority swap-target 4 goes first, as one demotion per pass.
        assert_eq!(out, vec![Action::SetSwappable { app: AppId(4), swappable: false }]);
        view.get(4).swappable = false;
        out.clear();
        view.kill(4);
        sel.on_event(&Event::AppDied { app: AppId(4) }, &view, &mut out);
        out.clear();
        view.get(4).state = AppState::Launching;
        view.get(5).swapped = Pages(0);
        sel.on_event(&Event::AppStarted { app: AppId(4) }, &view, &mut out);
        assert_eq!(out, vec![Action::SetSwappable { app: AppId(4), swappable: true }]);
        assert!(!sel.is_kill_target(&view.apps[&AppId(4)]));
    }

    #[test]
    fn demotions_of_live_apps_survive_a_restart_by_name() {
        let mut sel = Selective::new(SelectiveParams { swap_max_apps: 0, ..SelectiveParams::kill_first() });
        let mut view = new_view();
        view.get(5).swapped = Pages(10);
        let mut out = Vec::new();
        sel.on_event(&Event::Tick, &view, &mut out);
        assert_eq!(out, vec![Action::SetSwappable { app: AppId(4), swappable: false }]);
        let saved = sel.export_state(&view).unwrap();
        assert_eq!(saved, r#"{"demoted":["app4"]}"#);
        // A fresh policy (the daemon restarted) knows app4 is a kill-target again.
        let mut fresh = Selective::new(SelectiveParams::kill_first());
        assert!(!fresh.is_kill_target(&view.apps[&AppId(4)]));
        fresh.import_state(&saved, &view).unwrap();
        assert!(fresh.is_kill_target(&view.apps[&AppId(4)]));
        // A demotion of an app that died meanwhile is dropped.
        view.kill(4);
        let mut again = Selective::new(SelectiveParams::kill_first());
        again.import_state(&saved, &view).unwrap();
        assert!(again.demoted.is_empty());
        assert!(again.import_state("[]", &view).unwrap_err().contains("selective"));
    }
}
