//! Acclaim (Liang et al., USENIX ATC'20; Ice §5.2 baseline): FG-aware, size-sensitive
//! eviction. Reclaim passes over the foreground app's pages and takes background
//! apps' pages first, even when they are more active; zram + Android LMK underneath.

use floe_core::{Action, Event, Policy, ReclaimOrder, Setup, SwapSetup, SystemView};

#[derive(Debug, Default, Clone, Copy)]
pub struct Acclaim;

impl Policy for Acclaim {
    fn name(&self) -> &'static str {
        "acclaim"
    }
    fn setup(&self) -> Setup {
        Setup { swap: SwapSetup::Zram, reclaim: ReclaimOrder::FgLast, ..Setup::stock() }
    }
    fn on_event(&mut self, _ev: &Event, _view: &dyn SystemView, _out: &mut Vec<Action>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reclaims_foreground_last_on_zram() {
        let s = Acclaim.setup();
        assert_eq!((s.reclaim, s.swap), (ReclaimOrder::FgLast, SwapSetup::Zram));
    }
}
