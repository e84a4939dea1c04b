//! Ice+ (Ice §4.3): Ice with freeze-aware eviction (on the list reclaim scans, frozen
//! apps' pages leave first, app by app, before the LRU order) and reclaim-or-kill exclusivity (an app whose
//! pages went to swap is marked unkillable, so the LMK takes another instead of
//! killing what was just compressed).

use crate::ice::{Ice, IceParams};
use floe_core::{Action, Event, Policy, ReclaimOrder, Setup, SystemView};
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
                for id in view.apps() {
                    let Some(a) = view.app(id) else { continue };
                    let swapped = a.swapped.0 > 0;
                    if swapped != self.unkillable.contains(&id) {
                        out.push(Action::MarkUnkillable { app: id, unkillable: swapped });
                        if swapped {
                            self.unkillable.insert(id);
                        } else {
                            self.unkillable.remove(&id);
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

    #[test]
    fn declares_freeze_aware_eviction_over_ice() {
        let s = IcePlus::new(IceParams::default()).setup();
        assert_eq!(s.reclaim, ReclaimOrder::FrozenFirst);
        assert!(s.events.refaults && s.tick.is_some());
    }
}
