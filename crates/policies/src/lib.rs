//! floe-policies: one file per scheme or baseline, and the registry that names them.
//!
//! Adding a policy touches its file, the [`REGISTRY`] list and its test.

use floe_core::Policy;

pub mod acclaim;
pub mod asap;
pub mod baselines;
pub mod ice;
pub mod ice_plus;
pub mod power_freezer;
pub mod seal;
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
    Entry {
        name: "llr",
        about: "SEAL's LLR alone: two-level swap (SL1 zram, SL2 flash), launch-required pages kept in SL1 by k-chances",
        source: "SEAL §IV-A, Algorithm 1 (evaluated as 'LLR', §V-C)",
        make: || Box::new(seal::Seal::llr()),
    },
    Entry {
        name: "llr-hpl",
        about: "SEAL's LLR with hidden page loading of SL2 pages during the launch, SL2 bounded by PS_i",
        source: "SEAL §IV-B (evaluated as 'LLR+HPL', §V-C)",
        make: || Box::new(seal::Seal::llr_hpl()),
    },
    Entry {
        name: "seal",
        about: "SEAL: LLR + HPL + app-granularity swapping (victim app by priority, 1 MiB merged SL2 I/O)",
        source: "SEAL §IV (Algorithms 1, 2; equation 1)",
        make: || Box::new(seal::Seal::full()),
    },
    Entry {
        name: "demand-paging",
        about: "zram swap with lmkd off: switched-to apps fault their pages back on demand",
        source: "ASAP §6.1 baseline",
        make: || Box::new(asap::Asap::demand_paging()),
    },
    Entry {
        name: "asap-anon",
        about: "ASAP with only the anonymous-page estimator and SCHED_IDLE decompression threads",
        source: "ASAP §4.3, §5.1 ('Anon-only', §6.2)",
        make: || Box::new(asap::Asap::anon_only()),
    },
    Entry {
        name: "asap-file",
        about: "ASAP with only the file-backed estimator and extent readahead",
        source: "ASAP §4.2, §5.2 ('File-only', §6.2)",
        make: || Box::new(asap::Asap::file_only()),
    },
    Entry {
        name: "asap",
        about: "ASAP: switch-footprint estimators for anonymous and file pages, prepaging with spare CPU and disk",
        source: "ASAP §4-5",
        make: || Box::new(asap::Asap::both()),
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

/// Builds a policy from `NAME` or `NAME:key=value[:key=value...]` (parameters for the
/// SEAL family: `k`, `mu`, `sl1`, `sl2`). The error says what is wrong.
pub fn make_spec(spec: &str) -> Result<Box<dyn Policy>, String> {
    let (name, params) = spec.split_once(':').unwrap_or((spec, ""));
    let seal = match name {
        "llr" => Some(seal::Seal::llr()),
        "llr-hpl" => Some(seal::Seal::llr_hpl()),
        "seal" => Some(seal::Seal::full()),
        _ => None,
    };
    match (seal, spec.contains(':')) {
        (Some(s), false) => Ok(Box::new(s)),
        (Some(s), true) => Ok(Box::new(s.with_params(params).map_err(|e| format!("policy `{spec}`: {e}"))?)),
        (None, false) => make(name).ok_or_else(|| format!("unknown policy `{name}` (see `floe list policies`)")),
        (None, true) if lookup(name).is_some() => Err(format!("policy `{name}` takes no parameters")),
        (None, true) => Err(format!("unknown policy `{name}` (see `floe list policies`)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_with_parameters() {
        assert_eq!(make_spec("seal:k=2:mu=0.5").unwrap().setup().seal.unwrap().k, 2);
        assert_eq!(make_spec("llr").unwrap().name(), "llr");
        let err = |s: &str| make_spec(s).err().expect("an error");
        assert!(err("ice:k=2").contains("takes no parameters"));
        assert!(err("nope").contains("unknown policy `nope`"));
        assert!(err("llr:mu=0.5").contains("needs HPL"));
        assert!(err("seal:k=1:k=2").contains("`k` is given twice"));
        assert!(err("seal:").contains("empty parameter"));
        assert!(err("seal:k=2::mu=0.5").contains("empty parameter"));
    }

    #[test]
    fn registry_names_are_unique_and_match_instances() {
        for (i, e) in REGISTRY.iter().enumerate() {
            assert!(REGISTRY[..i].iter().all(|o| o.name != e.name), "duplicate {}", e.name);
            assert_eq!((e.make)().name(), e.name);
        }
        assert!(make("no-such-policy").is_none());
    }
}
