//! The baselines the seeds compare against: stock configurations with no policy logic.
//!
//! Each differs only in the kernel setup it declares; reclaim, LMK and scheduling are
//! the backend's stock behaviour.

use floe_core::{Action, Event, LmkMode, Policy, Setup, SwapSetup, SystemView};

macro_rules! stock_policy {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $swap:expr, $lmk:expr) => {
        $(#[$doc])*
        #[derive(Debug, Default, Clone, Copy)]
        pub struct $ty;

        impl Policy for $ty {
            fn name(&self) -> &'static str {
                $name
            }
            fn setup(&self) -> Setup {
                Setup { swap: $swap, lmk: $lmk, ..Setup::stock() }
            }
            fn on_event(&mut self, _ev: &Event, _view: &dyn SystemView, _out: &mut Vec<Action>) {}
        }
    };
}

stock_policy!(
    /// Vanilla Android: no swap; memory comes back only by dropping file cache and by
    /// the LMK killing cached apps.
    AndroidLmk, "android-lmk", SwapSetup::None, LmkMode::Android
);
stock_policy!(
    /// Ice's "LRU+CFS": zram swap with the kernel's LRU reclaim and fair CFS.
    LruCfs, "lru-cfs", SwapSetup::Zram, LmkMode::Android
);
stock_policy!(
    /// Selective's "swap-all": every app's anonymous pages may go to flash swap.
    SwapAll, "swap-all", SwapSetup::Flash, LmkMode::Android
);
stock_policy!(
    /// SEAL's "ZSWAP": compressed pool first, written back to flash when full.
    Zswap, "zswap", SwapSetup::Zswap, LmkMode::Android
);

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::CpuMode;

    #[test]
    fn baselines_declare_their_swap_setup() {
        assert_eq!(AndroidLmk.setup().swap, SwapSetup::None);
        assert_eq!(LruCfs.setup().swap, SwapSetup::Zram);
        assert_eq!(SwapAll.setup().swap, SwapSetup::Flash);
        assert_eq!(Zswap.setup().swap, SwapSetup::Zswap);
        assert!([AndroidLmk.setup(), LruCfs.setup()].iter().all(|s| s.cpu == CpuMode::Fair && s.lmk == LmkMode::Android));
    }
}
