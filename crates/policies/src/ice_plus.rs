//! Ice+ (Ice §4.3): Ice with freeze-aware eviction (on the list reclaim scans, frozen
//! apps' pages leave first, app by app, before the LRU order) and reclaim-or-kill exclusivity (an app whose
//! pages went to swap is marked unkillable, so the LMK takes another instead of
//! killing what was just compressed). Exclusivity chooses between apps; it does not
//! take the killer away: when every cached app has pages in swap, none is marked, and
//! the killer picks by its own order (Ice §4.3: "reclaim or kill an application but will
//! not do the two operations on one"; its motive is the kill that frees little because
//! its victim was reclaimed, and with no other victim that kill is still the one that
//! frees memory, swap space included).

use crate::ice::{Ice, IceParams};
use floe_core::{cached_oom_adj, Action, AppState, Event, Policy, ReclaimOrder, Setup, SystemView};
use std::collections::BTreeSet;

#[derive(Clone, Debug)]
pub struct IcePlus {
    ice: Ice,
    unkillable: BTreeSet<floe_core::AppId>,
}

impl IcePlus {
    pub fn new(params: IceParams) -> IcePlus {
        IcePlus { ice: Ice::new(params), unkillable: BTreeSet::new() }
    }
}

impl Policy for IcePlus {
    fn name(&self) -> &'static str {
        "ice-plus"
    }
    fn setup(&self) -> Setup {
        Setup { reclaim: ReclaimOrder::FrozenFirst, ..self.ice.setup() }
    }
    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        self.ice.on_event(ev, view, out);
        match ev {
            Event::Tick => {
                let fg = view.foreground();
                let apps: Vec<_> = view.apps().into_iter().filter_map(|id| view.app(id)).collect();
                // A cached app with nothing in swap is the killer's way out; without
                // one, no app is marked.
                let exclusive = apps.iter().any(|a| {
                    fg != Some(a.id)
                        && matches!(a.state, AppState::Cached | AppState::Frozen)
                        && a.oom_adj >= cached_oom_adj(0)
                        && a.swapped.0 == 0
                });
                for a in &apps {
                    let swapped = exclusive && a.swapped.0 > 0;
                    if swapped != self.unkillable.contains(&a.id) {
                        out.push(Action::MarkUnkillable { app: a.id, unkillable: swapped });
                        if swapped {
                            self.unkillable.insert(a.id);
                        } else {
                            self.unkillable.remove(&a.id);
                        }
                    }
                }
            }
            Event::AppDied { app } => {
                self.unkillable.remove(app);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{app, FakeView};
    use floe_core::{AppId, Pages};

    #[test]
    fn declares_freeze_aware_eviction_over_ice() {
        let s = IcePlus::new(IceParams::default()).setup();
        assert_eq!(s.reclaim, ReclaimOrder::FrozenFirst);
        assert!(s.events.refaults && s.tick.is_some());
    }

    /// The apps marked unkillable after one tick of `view`.
    fn marks(p: &mut IcePlus, view: &FakeView) -> Vec<(u16, bool)> {
        let mut out = Vec::new();
        p.on_event(&Event::Tick, view, &mut out);
        out.iter()
            .filter_map(|a| match a {
                Action::MarkUnkillable { app, unkillable } => Some((app.0, *unkillable)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_swapped_app_is_spared_while_a_cached_app_without_swap_is_left_to_kill() {
        let mut view = FakeView { fg: Some(AppId(0)), ..FakeView::default() };
        view.insert(app(0, AppState::Foreground, 0));
        view.insert(app(1, AppState::Frozen, 900)).swapped = Pages(100);
        view.insert(app(2, AppState::Cached, 910));
        let mut p = IcePlus::new(IceParams::default());
        assert_eq!(marks(&mut p, &view), vec![(1, true)]);
        // Every cached app now has pages in swap: the killer gets its own order back.
        view.get(2).swapped = Pages(5);
        assert_eq!(marks(&mut p, &view), vec![(1, false)]);
        // A third cached app with nothing in swap: the other two are spared again.
        view.insert(app(3, AppState::Cached, 920));
        assert_eq!(marks(&mut p, &view), vec![(1, true), (2, true)]);
        // The foreground's swap does not count, nor does a service below the cached adj.
        view.get(3).oom_adj = 700;
        view.get(0).swapped = Pages(9);
        assert_eq!(marks(&mut p, &view), vec![(1, false), (2, false)]);
    }
}
