//! Power-manager freezing (Ice §6.1, Table 5 baseline): a vendor power manager freezes
//! background apps on a fixed schedule, blind to memory. An app that has been in the
//! background longer than `freeze_after` is frozen; every `period` all frozen apps
//! get a `window` to run (a maintenance window); nothing is frozen while charging
//! (`SystemView::charging`, or the `charging` parameter).
//! The schedule's numbers are assumptions: the seeds do not publish the P20's.

use floe_core::{Action, AppState, Event, EventMask, Nanos, Policy, Setup, SwapSetup, SystemView};

#[derive(Clone, Debug, PartialEq)]
pub struct PowerFreezerParams {
    /// Assumption: one minute in the background before freezing.
    pub freeze_after: Nanos,
    /// Assumption: a maintenance window every minute...
    pub period: Nanos,
    /// ...of one second.
    pub window: Nanos,
    /// Treat the device as charging whatever the backend says (the simulated phone
    /// never charges; the daemon asks the kernel's power supplies).
    pub charging: bool,
}

impl Default for PowerFreezerParams {
    fn default() -> Self {
        PowerFreezerParams {
            freeze_after: Nanos::from_secs(60),
            period: Nanos::from_secs(60),
            window: Nanos::from_secs(1),
            charging: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct PowerFreezer {
    params: PowerFreezerParams,
}

impl PowerFreezer {
    pub fn new(params: PowerFreezerParams) -> PowerFreezer {
        PowerFreezer { params }
    }

    fn in_window(&self, now: Nanos) -> bool {
        now.0 % self.params.period.0 < self.params.window.0
    }
}

impl Policy for PowerFreezer {
    fn name(&self) -> &'static str {
        "power-freezer"
    }
    fn setup(&self) -> Setup {
        Setup {
            swap: SwapSetup::Zram,
            tick: Some(Nanos::from_ms(250)),
            events: EventMask { launches: true, ..EventMask::NONE },
            ..Setup::stock()
        }
    }
    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>) {
        match ev {
            Event::Tick => {
                let now = view.now();
                let window = self.in_window(now) || self.params.charging || view.charging();
                for id in view.apps() {
                    let Some(a) = view.app(id) else { continue };
                    match a.state {
                        AppState::Frozen if window => out.push(Action::Thaw(id)),
                        AppState::Cached
                            if !window
                                && !a.perceptible
                                && view.foreground() != Some(id)
                                && now.saturating_sub(a.last_used) >= self.params.freeze_after =>
                        {
                            out.push(Action::Freeze(id))
                        }
                        _ => {}
                    }
                }
            }
            Event::LaunchStarted { app, .. } if view.app(*app).is_some_and(|a| a.state == AppState::Frozen) => {
                out.push(Action::Thaw(*app));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_stays_frozen_while_charging() {
        use crate::fake::{app, FakeView};
        let mut v = FakeView { now: Nanos::from_secs(90), ..FakeView::default() };
        v.insert(app(1, AppState::Cached, 900)); // in the background since 0: due
        v.insert(app(2, AppState::Frozen, 910));
        let mut p = PowerFreezer::new(PowerFreezerParams::default());
        let mut out = Vec::new();
        p.on_event(&Event::Tick, &v, &mut out);
        assert_eq!(out, vec![Action::Freeze(floe_core::AppId(1))], "on battery, out of the window");
        let mut out = Vec::new();
        v.charging = true;
        p.on_event(&Event::Tick, &v, &mut out);
        assert_eq!(out, vec![Action::Thaw(floe_core::AppId(2))], "charging: thawed, nothing frozen");
    }

    #[test]
    fn window_is_the_first_second_of_each_period() {
        let p = PowerFreezer::new(PowerFreezerParams::default());
        assert!(p.in_window(Nanos::from_ms(500)));
        assert!(!p.in_window(Nanos::from_secs(30)));
        assert!(p.in_window(Nanos::from_secs(120) + Nanos::from_ms(10)));
    }
}
