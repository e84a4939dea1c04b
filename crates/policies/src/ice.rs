//! Ice (Li et al., ACM TOCS 2025, §4): refault-driven process freezing (RPF) with
//! memory-aware dynamic thawing (MDT), a whitelist, and thaw on launch.
//!
//! RPF: a refault by a background app freezes the whole app at once. Never frozen:
//! the foreground app, apps being launched, perceptible apps (oom_adj <= 200: music,
//! navigation, downloads) and whitelisted apps; kernel threads and system services are
//! not apps here, so they are never candidates. MDT: one heartbeat of epochs, each a
//! freezing period of E_f then a thawing period of E_t = 1 s, with
//! R = E_f / E_t = delta * 2^ceil(H_wm / S_am) (delta = 8) retuned at every epoch from
//! the available memory (MemAvailable, `MemInfo::available`). The apps RPF caught are
//! frozen in every freezing period and run in every thawing period; one caught during
//! a thawing period stays frozen until the next one. A launch thaws the app before it
//! is shown and releases it.

use floe_core::{Action, AppId, AppState, Event, EventMask, Nanos, Pages, Policy, Setup, SwapSetup, SystemView};
use std::collections::BTreeSet;

/// Ice's parameters (its Table 4 and §5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct IceParams {
    /// Weight coefficient delta of MDT (§5.3: 8.0).
    pub delta: f64,
    /// Thawing period E_t (§4.2.3: 1 s).
    pub thaw: Nanos,
    /// Largest exponent of MDT, so that R stays finite when no memory is available.
    /// Assumption: 6 (R = 512, E_f = 8.5 min), past any run's length.
    pub max_exponent: u32,
    /// How often the heartbeat looks at the clock.
    pub tick: Nanos,
    /// App names never frozen.
    pub whitelist: Vec<String>,
}

impl Default for IceParams {
    fn default() -> Self {
        IceParams { delta: 8.0, thaw: Nanos::from_secs(1), max_exponent: 6, tick: Nanos::from_ms(50), whitelist: Vec::new() }
    }
}

/// MDT's freezing-to-thawing ratio R = delta * 2^ceil(H_wm / S_am).
pub fn mdt_ratio(delta: f64, high_wmark: Pages, available: Pages, max_exponent: u32) -> f64 {
    let exp = if available.0 == 0 { max_exponent } else { (high_wmark.0.div_ceil(available.0) as u32).min(max_exponent) };
    delta * f64::from(1u32 << exp)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Freezing,
    Thawing,
}

/// The Ice policy.
#[derive(Clone, Debug)]
pub struct Ice {
    params: IceParams,
    /// Apps RPF caught, frozen in every freezing period until launched or dead.
    targets: BTreeSet<AppId>,
    phase: Phase,
    phase_end: Option<Nanos>,
}

impl Ice {
    pub fn new(params: IceParams) -> Ice {
        Ice { params, targets: BTreeSet::new(), phase: Phase::Freezing, phase_end: None }
    }

    /// Whether RPF may freeze `app` now.
    pub fn freezable(&self, app: AppId, view: &dyn SystemView) -> bool {
        let Some(info) = view.app(app) else { return false };
        view.foreground() != Some(app)
            && info.state == AppState::Cached
            && info.oom_adj > 200
            && !info.perceptible
            && !self.params.whitelist.contains(&info.name)
    }

    fn start_freezing(&mut self, view: &dyn SystemView, out: &mut Vec<Action>) {
        let mem = view.mem();
        let r = mdt_ratio(self.params.delta, mem.tuned_high.unwrap_or(mem.wmark_high), mem.available, self.params.max_exponent);
        self.phase = Phase::Freezing;
        self.phase_end = Some(view.now() + Nanos((self.params.thaw.0 as f64 * r) as u64));
        let targets: Vec<AppId> = self.targets.iter().copied().collect();
        for app in targets {
            if self.freezable(app, view) {
                out.push(Action::Freeze(app));
            }
        }
    }

    fn start_thawing(&mut self, view: &dyn SystemView, out: &mut Vec<Action>) {
        self.phase = Phase::Thawing;
        self.phase_end = Some(view.now() + self.params.thaw);
        for &app in &self.targets {
            if view.app(app).is_some_and(|i| i.state == AppState::Frozen) {
                out.push(Action::Thaw(app));
            }
        }
    }

    /// The current MDT phase and when it ends (for tests and status).
    pub fn phase(&self) -> (bool, Option<Nanos>) {
        (self.phase == Phase::Freezing, self.phase_end)
    }
}

impl Policy for Ice {
    fn name(&self) -> &'static str {
        "ice"
    }

    fn setup(&self) -> Setup {
        Setup {
            swap: SwapSetup::Zram,
            tick: Some(self.params.tick),
            events: EventMask { refaults: true, launches: true, lifecycle: true, pressure: false },
            ..Setup::stock()
        }
    }

    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        match *ev {
            Event::Tick => match self.phase_end {
                None => self.start_freezing(view, out),
                Some(end) if view.now() >= end => match self.phase {
                    Phase::Freezing => self.start_thawing(view, out),
                    Phase::Thawing => self.start_freezing(view, out),
                },
                Some(_) => {}
            },
            Event::Refault { app, fg: false, .. } if self.freezable(app, view) => {
                self.targets.insert(app);
                out.push(Action::Freeze(app));
            }
            Event::LaunchStarted { app, .. } => {
                self.targets.remove(&app);
                if view.app(app).is_some_and(|i| i.state == AppState::Frozen) {
                    out.push(Action::Thaw(app));
                }
            }
            Event::AppDied { app } => {
                self.targets.remove(&app);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::AppInfo;

    #[test]
    fn mdt_ratio_grows_as_memory_shrinks() {
        let h = Pages(1024);
        // Plenty available: ceil(1024/4096) = 1 -> 8 * 2 = 16.
        assert_eq!(mdt_ratio(8.0, h, Pages(4096), 6), 16.0);
        // Exactly the watermark available: exponent 1.
        assert_eq!(mdt_ratio(8.0, h, Pages(1024), 6), 16.0);
        // 600 available: ceil(1.71) = 2 -> 32.
        assert_eq!(mdt_ratio(8.0, h, Pages(600), 6), 32.0);
        // 300 available: ceil(3.41) = 4 -> 128.
        assert_eq!(mdt_ratio(8.0, h, Pages(300), 6), 128.0);
        // Nothing available: capped.
        assert_eq!(mdt_ratio(8.0, h, Pages(0), 6), 512.0);
        assert_eq!(mdt_ratio(8.0, h, Pages(1), 6), 512.0);
    }

    type View = crate::fake::FakeView;

    /// A foreground app, a plain cached app, a perceptible one and a whitelist
    /// candidate, with 600 of 1024 high-watermark pages free.
    fn new_view() -> View {
        let mut v = View { free: Pages(600), wmark_high: Pages(1024), fg: Some(AppId(0)), ..View::default() };
        let mk = |i: u16, name: &str, state: AppState, adj: i32, perceptible: bool| AppInfo {
            name: name.into(),
            perceptible,
            ..crate::fake::app(i, state, adj)
        };
        v.insert(mk(0, "fg", AppState::Foreground, 0, false));
        v.insert(mk(1, "cached", AppState::Cached, 900, false));
        v.insert(mk(2, "music", AppState::Cached, 200, true));
        v.insert(mk(3, "allowed", AppState::Cached, 910, false));
        v
    }

    fn refault(app: u16, fg: bool) -> Event {
        Event::Refault { app: AppId(app), kind: floe_core::PageKind::Anon, fg }
    }

    #[test]
    fn rpf_freezes_only_freezable_background_apps() {
        let params = IceParams { whitelist: vec!["allowed".into()], ..IceParams::default() };
        let mut ice = Ice::new(params);
        let view = new_view();
        let mut out = Vec::new();
        for (app, fg) in [(0, true), (0, false), (1, false), (2, false), (3, false), (9, false)] {
            ice.on_event(&refault(app, fg), &view, &mut out);
        }
        // Only the plain cached app: not the FG, not the perceptible one, not the
        // whitelisted one, not an unknown id, and a foreground refault freezes nothing.
        assert_eq!(out, vec![Action::Freeze(AppId(1))]);
    }

    #[test]
    fn heartbeat_thaws_and_refreezes_caught_apps_and_launch_releases_them() {
        let mut ice = Ice::new(IceParams::default());
        let mut view = new_view();
        let mut out = Vec::new();
        ice.on_event(&Event::Tick, &view, &mut out); // first epoch: R = 32 at 600/1024
        assert_eq!(ice.phase(), (true, Some(Nanos::from_secs(32))));
        ice.on_event(&refault(1, false), &view, &mut out);
        assert_eq!(out, vec![Action::Freeze(AppId(1))]);
        view.apps.get_mut(&AppId(1)).unwrap().state = AppState::Frozen;
        out.clear();
        // Nothing happens before the freezing period ends.
        view.now = Nanos::from_secs(31);
        ice.on_event(&Event::Tick, &view, &mut out);
        assert!(out.is_empty());
        // Then the caught app thaws for E_t = 1 s.
        view.now = Nanos::from_secs(32);
        ice.on_event(&Event::Tick, &view, &mut out);
        assert_eq!(out, vec![Action::Thaw(AppId(1))]);
        assert_eq!(ice.phase(), (false, Some(Nanos::from_secs(33))));
        view.apps.get_mut(&AppId(1)).unwrap().state = AppState::Cached;
        out.clear();
        // Next epoch, with less memory: frozen again, for longer (300/1024 -> R = 128).
        view.free = Pages(300);
        view.now = Nanos::from_secs(33);
        ice.on_event(&Event::Tick, &view, &mut out);
        assert_eq!(out, vec![Action::Freeze(AppId(1))]);
        assert_eq!(ice.phase(), (true, Some(Nanos::from_secs(33 + 128))));
        view.apps.get_mut(&AppId(1)).unwrap().state = AppState::Frozen;
        out.clear();
        // A launch thaws it before it is shown and releases it from the heartbeat.
        ice.on_event(&Event::LaunchStarted { app: AppId(1), kind: floe_core::LaunchKind::Warm }, &view, &mut out);
        assert_eq!(out, vec![Action::Thaw(AppId(1))]);
        view.apps.get_mut(&AppId(1)).unwrap().state = AppState::Cached;
        out.clear();
        view.now = Nanos::from_secs(33 + 128);
        ice.on_event(&Event::Tick, &view, &mut out);
        view.now = Nanos::from_secs(33 + 129);
        ice.on_event(&Event::Tick, &view, &mut out);
        assert!(out.is_empty(), "a released app is not frozen again: {out:?}");
    }
}
