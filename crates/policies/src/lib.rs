//! floe-policies: one file per scheme or baseline, and the registry that names them.
//!
//! Adding a policy touches its file, the [`REGISTRY`] list and its test.

use floe_core::Policy;

pub mod acclaim;
pub mod baselines;
pub mod ice;
pub mod ice_plus;
pub mod power_freezer;
pub mod selective;
pub mod smartlmk;
pub mod ucsg;

#[cfg(test)]
mod fake;

/// A registered policy: its CLI name, a one-line description, the paper that defines
/// or uses it, and a constructor.
pub struct Entry {
    pub name: &'static str,
    pub about: &'static str,
    pub source: &'static str,
    pub make: fn() -> Box<dyn Policy>,
}

/// Every policy floe knows, in the order of DESIGN.md "Names".
pub static REGISTRY: &[Entry] = &[
    Entry {
        name: "android-lmk",
        about: "vanilla Android: no swap, in-kernel LMK by minfree and oom_adj",
        source: "baseline of every seed (SEAL 'No-SWAP', Selective 'original Android')",
        make: || Box::new(baselines::AndroidLmk),
    },
    Entry {
        name: "lru-cfs",
        about: "zram swap, kernel LRU reclaim, fair CFS scheduling, Android LMK",
        source: "Ice §5.2 baseline 'LRU+CFS'",
        make: || Box::new(baselines::LruCfs),
    },
    Entry {
        name: "swap-all",
        about: "swap on flash for every app, Android LMK",
        source: "Selective §V baseline 'swap-all'",
        make: || Box::new(baselines::SwapAll),
    },
    Entry {
        name: "zswap",
        about: "compressed pool in RAM writing back to flash swap, Android LMK",
        source: "SEAL §V-C baseline 'ZSWAP'",
        make: || Box::new(baselines::Zswap),
    },
    Entry {
        name: "ucsg",
        about: "zram + LRU with the foreground app's threads at a higher CPU priority",
        source: "Ice §5.2 baseline 'UCSG'",
        make: || Box::new(ucsg::Ucsg),
    },
    Entry {
        name: "acclaim",
        about: "zram with FG-aware eviction: background apps' pages are reclaimed first",
        source: "Ice §5.2 baseline 'Acclaim' (Liang et al., ATC'20)",
        make: || Box::new(acclaim::Acclaim),
    },
    Entry {
        name: "power-freezer",
        about: "vendor power manager: fixed-schedule freezing of background apps, blind to memory",
        source: "Ice §6.1 Table 5 baseline (P20 power manager)",
        make: || Box::new(power_freezer::PowerFreezer::new(power_freezer::PowerFreezerParams::default())),
    },
    Entry {
        name: "ice",
        about: "Ice: refault-driven freezing of background apps with memory-aware dynamic thawing",
        source: "Ice §4.2 (RPF, MDT), zram + LRU + CFS underneath",
        make: || Box::new(ice::Ice::new(ice::IceParams::default())),
    },
    Entry {
        name: "ice-plus",
        about: "Ice+: Ice with freeze-aware eviction and reclaim-or-kill exclusivity",
        source: "Ice §4.3",
        make: || Box::new(ice_plus::IcePlus::new(ice::IceParams::default())),
    },
    Entry {
        name: "smartlmk",
        about: "SmartLMK: launch tracker, app value from launch-time gain and reuse, knapsack victim set killed at once",
        source: "SmartLMK §3-5",
        make: || Box::new(smartlmk::SmartLmk::new(smartlmk::SmartLmkParams::default())),
    },
    Entry {
        name: "selective-kill-first",
        about: "selective swap/kill: kill-targets killed at 180 MB free, swap-targets swapped at 4 MB",
        source: "Selective §IV, Table 3",
        make: || Box::new(selective::Selective::kill_first()),
    },
    Entry {
        name: "selective-swap-first",
        about: "selective swap/kill: swap at 180 MB free, kill kill-targets at 100 MB",
        source: "Selective §IV, Table 3",
        make: || Box::new(selective::Selective::swap_first()),
    },
];

/// Finds a registered policy by name.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == name)
}

/// Builds a fresh instance of the named policy.
pub fn make(name: &str) -> Option<Box<dyn Policy>> {
    lookup(name).map(|e| (e.make)())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_match_instances() {
        for (i, e) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|o| o.name != e.name), "duplicate {}", e.name);
            assert_eq!((e.make)().name(), e.name);
        }
        assert!(make("no-such-policy").is_none());
    }
}
