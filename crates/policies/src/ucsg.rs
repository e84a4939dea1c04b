//! UCSG (Ice §5.2 baseline): the foreground app's processes get a higher CPU priority
//! than background ones; memory management is stock (zram + LRU, Android LMK).

use floe_core::{Action, CpuMode, Event, Policy, Setup, SwapSetup, SystemView};

#[derive(Debug, Default, Clone, Copy)]
pub struct Ucsg;

impl Policy for Ucsg {
    fn name(&self) -> &'static str {
        "ucsg"
    }
    fn setup(&self) -> Setup {
        Setup { swap: SwapSetup::Zram, cpu: CpuMode::FgBoost, ..Setup::stock() }
    }
    fn on_event(&mut self, _ev: &Event, _view: &dyn SystemView, _out: &mut Vec<Action>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boosts_the_foreground_on_zram() {
        let s = Ucsg.setup();
        assert_eq!((s.cpu, s.swap), (CpuMode::FgBoost, SwapSetup::Zram));
    }
}
