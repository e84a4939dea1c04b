//! SEAL (Li et al., "SEAL: User Experience-Aware Two-Level Swap for Mobile Devices",
//! IEEE TCAD 2020, §IV): swap in two levels, SL1 compressed RAM and SL2 flash.
//!
//! - **LLR** (§IV-A, Algorithm 1): one list pair per app. After every launch, a page the
//!   launch requested gets weight k (sl1-list: locked in SL1); any other page loses one;
//!   at 0 it moves to the sl2-list and may be unloaded to flash.
//! - **HPL** (§IV-B): when app i launches, a worker loads its SL2 pages back into SL1
//!   while the launch runs; SL2 may hold at most PS_i = floor(mu x T_w,i x TH / 4 KiB)
//!   of its pages, T_w,i from its launch history and TH the measured flash throughput.
//!   Loading runs at high I/O priority; unloading at low priority, only while no other
//!   I/O is queued, cancelled when the app comes to the foreground.
//! - **AGS** (§IV-C, Algorithm 2): swapping takes a whole victim app at a time — the
//!   app whose most important process is least important (then the lowest average
//!   priority, then random) — and its SL2 requests are merged up to 1 MiB.
//!
//! The placement itself is page-level and runs in the backend (the simulator exactly;
//! on Linux through zram writeback where the kernel has it); this module holds the rules
//! the backend applies and the three policies `llr`, `llr-hpl` and `seal`.

use floe_core::{Action, Event, LmkMode, Nanos, Policy, SealSetup, Setup, SwapSetup, SystemView};

/// k of the k-chances rule (§VI-B.2: "both metrics perform well when k = 3").
pub const K_DEFAULT: u8 = 3;
/// Largest k the backend can store per page.
pub const K_MAX: u8 = 7;
/// mu of the time cost model (§IV-B.1 and §VI-B.3: "mu is set to 0.8").
pub const MU_DEFAULT: f64 = 0.8;
/// Largest merged SL2 request under AGS (§IV-C.1: the Linux kernel's largest bio).
pub const AGS_MERGE_BYTES: u64 = 1 << 20;

/// Algorithm 1, lines 8-15, for one page after a launch: its new weight. Weight 0 means
/// the sl2-list (least launch-required, may go to SL2); any other weight the sl1-list.
pub fn llr_step(weight: u8, launch_required: bool, k: u8) -> u8 {
    if launch_required {
        k
    } else {
        weight.saturating_sub(1)
    }
}

/// Equation (1): the most pages of one app SL2 may hold so that HPL can load them all
/// back within `mu` of its launch window `window`, at `throughput` bytes per second.
pub fn peak_pages(mu: f64, window: Nanos, throughput: f64) -> u64 {
    let pages = mu * window.as_secs_f64() * throughput / 4096.0;
    if pages.is_finite() && pages > 0.0 {
        pages.floor() as u64
    } else {
        0
    }
}

/// One candidate of Algorithm 2: an app and the priority values of its processes, as
/// oom_adj (larger = less important).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate<T> {
    pub app: T,
    pub adj: Vec<i32>,
}

/// Algorithm 2: the victim is the app whose most important process (its "max
/// priority", the smallest adj) is the least important; ties go to the lowest average
/// priority (largest mean adj), remaining ties to `pick` (the paper: random), called
/// with the tied indices. Apps without processes are skipped.
pub fn victim<T: Copy>(cands: &[Candidate<T>], mut pick: impl FnMut(&[usize]) -> usize) -> Option<T> {
    let key = |c: &Candidate<T>| {
        let mp = *c.adj.iter().min()?;
        let ap = c.adj.iter().map(|&a| a as f64).sum::<f64>() / c.adj.len() as f64;
        Some((mp, ap))
    };
    let mut best: Option<(i32, f64)> = None;
    let mut tied: Vec<usize> = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        let Some(k) = key(c) else { continue };
        match best {
            Some(b) if (k.0, k.1) == (b.0, b.1) => tied.push(i),
            Some(b) if k.0 < b.0 || (k.0 == b.0 && k.1 < b.1) => {}
            _ => {
                best = Some(k);
                tied.clear();
                tied.push(i);
            }
        }
    }
    match tied.len() {
        0 => None,
        1 => Some(cands[tied[0]].app),
        _ => Some(cands[tied[pick(&tied) % tied.len()]].app),
    }
}

/// One of SEAL's three configurations. The policy only declares the setup; the backend
/// applies the rules above page by page.
#[derive(Clone, Debug, PartialEq)]
pub struct Seal {
    name: &'static str,
    setup: SealSetup,
}

impl Seal {
    /// LLR alone: two levels with k-chances placement, pages come back on demand.
    pub fn llr() -> Seal {
        Seal { name: "llr", setup: SealSetup { k: K_DEFAULT, hpl_mu: None, ags: false, sl1_mib: None, sl2_mib: None } }
    }
    /// LLR with hidden page loading.
    pub fn llr_hpl() -> Seal {
        Seal { name: "llr-hpl", setup: SealSetup { hpl_mu: Some(MU_DEFAULT), ..Seal::llr().setup } }
    }
    /// The whole framework: LLR, HPL and AGS.
    pub fn full() -> Seal {
        Seal { name: "seal", setup: SealSetup { ags: true, ..Seal::llr_hpl().setup } }
    }

    pub fn params(&self) -> SealSetup {
        self.setup
    }

    /// Applies `key=value` overrides separated by colons (commas separate policies on
    /// the command line): `k` (1..=7), `mu` (0..=1; only where HPL is on), `sl1` and
    /// `sl2` (MiB, positive).
    pub fn with_params(mut self, spec: &str) -> Result<Seal, String> {
        let mut seen: Vec<&str> = Vec::new();
        for kv in spec.split(':') {
            if kv.is_empty() {
                return Err("an empty parameter (expected key=value after each `:`)".into());
            }
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("`{kv}`: expected key=value"))?;
            if seen.contains(&k) {
                return Err(format!("`{k}` is given twice"));
            }
            seen.push(k);
            let num = |v: &str| v.parse::<f64>().map_err(|_| format!("`{k}`: `{v}` is not a number"));
            match k {
                "k" => {
                    let x: u8 = v.parse().map_err(|_| format!("`k`: `{v}` is not an integer"))?;
                    if !(1..=K_MAX).contains(&x) {
                        return Err(format!("`k` must be 1..={K_MAX}, got {x}"));
                    }
                    self.setup.k = x;
                }
                "mu" => {
                    let x = num(v)?;
                    if !(0.0..=1.0).contains(&x) {
                        return Err(format!("`mu` must be in 0..=1, got {v}"));
                    }
                    if self.setup.hpl_mu.is_none() {
                        return Err(format!("`mu` needs HPL, which `{}` does not use", self.name));
                    }
                    self.setup.hpl_mu = Some(x);
                }
                "sl1" | "sl2" => {
                    let x = num(v)?;
                    if !(x.is_finite() && x > 0.0) {
                        return Err(format!("`{k}` must be a positive size in MiB, got {v}"));
                    }
                    if k == "sl1" {
                        self.setup.sl1_mib = Some(x);
                    } else {
                        self.setup.sl2_mib = Some(x);
                    }
                }
                _ => return Err(format!("unknown parameter `{k}` (known: k, mu, sl1, sl2)")),
            }
        }
        Ok(self)
    }
}

impl Policy for Seal {
    fn name(&self) -> &'static str {
        self.name
    }
    fn setup(&self) -> Setup {
        Setup { swap: SwapSetup::TwoLevel, lmk: LmkMode::Android, seal: Some(self.setup), ..Setup::stock() }
    }
    fn on_event(&mut self, _ev: &Event, _view: &dyn SystemView, _out: &mut Vec<Action>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_chances_keep_a_page_in_sl1_for_k_launches_without_it() {
        let k = 3;
        // Requested once: weight k, sl1-list.
        let mut w = llr_step(0, true, k);
        assert_eq!(w, 3);
        // Then k launches without it: still sl1 after k-1, sl2 after k.
        for left in [2, 1] {
            w = llr_step(w, false, k);
            assert_eq!(w, left);
            assert!(w > 0, "still in the sl1-list");
        }
        w = llr_step(w, false, k);
        assert_eq!(w, 0, "moved to the sl2-list");
        // It stays there, and one request brings it straight back with k chances.
        assert_eq!(llr_step(w, false, k), 0);
        assert_eq!(llr_step(w, true, k), k);
        // A request in between resets the count.
        assert_eq!(llr_step(llr_step(llr_step(3, false, k), true, k), false, k), 2);
        // k = 1: one miss is enough.
        assert_eq!(llr_step(llr_step(0, true, 1), false, 1), 0);
    }

    #[test]
    fn peak_size_follows_equation_one() {
        // 1 s window, 100 MiB/s, mu 0.8: 80 MiB = 20480 pages.
        assert_eq!(peak_pages(0.8, Nanos::from_ms(1000), 100.0 * 1048576.0), 20480);
        // Linear in each factor, floored.
        assert_eq!(peak_pages(0.4, Nanos::from_ms(1000), 100.0 * 1048576.0), 10240);
        assert_eq!(peak_pages(0.8, Nanos::from_ms(500), 100.0 * 1048576.0), 10240);
        assert_eq!(peak_pages(1.0, Nanos::from_ms(1), 4096.0 * 1500.0), 1);
        assert_eq!(peak_pages(0.0, Nanos::from_ms(1000), 1e9), 0);
        assert_eq!(peak_pages(0.8, Nanos::ZERO, 1e9), 0);
        assert_eq!(peak_pages(0.8, Nanos::from_ms(1000), f64::NAN), 0);
    }

    #[test]
    fn victim_is_the_app_with_the_least_important_top_process_then_lowest_average() {
        let c = |app: u32, adj: &[i32]| Candidate { app, adj: adj.to_vec() };
        // App 2's best process (adj 900) is less important than app 1's (200).
        assert_eq!(victim(&[c(1, &[200, 999]), c(2, &[900, 905])], |_| 0), Some(2));
        // Same top process: the lower average priority (larger mean adj) goes.
        assert_eq!(victim(&[c(1, &[900, 910]), c(2, &[900, 950]), c(3, &[900])], |_| 0), Some(2));
        // Full tie: the tie-breaker chooses among the tied indices only.
        let mut seen = Vec::new();
        let v = victim(&[c(1, &[0]), c(2, &[950]), c(3, &[950])], |t| {
            seen.extend_from_slice(t);
            1
        });
        assert_eq!(seen, vec![1, 2]);
        assert_eq!(v, Some(3));
        // No processes: never a victim; nothing to choose from: None.
        assert_eq!(victim(&[c(1, &[]), c(2, &[100])], |_| 0), Some(2));
        assert_eq!(victim::<u32>(&[], |_| 0), None);
    }

    #[test]
    fn the_three_configurations_and_their_parameters() {
        assert_eq!(Seal::llr().params().hpl_mu, None);
        assert!(!Seal::llr().params().ags);
        assert_eq!(Seal::llr_hpl().params().hpl_mu, Some(0.8));
        assert!(Seal::full().params().ags && Seal::full().params().k == 3);
        let s = Seal::full().with_params("k=5:mu=0.5:sl1=256:sl2=512").unwrap();
        assert_eq!((s.params().k, s.params().hpl_mu, s.params().sl1_mib, s.params().sl2_mib), (5, Some(0.5), Some(256.0), Some(512.0)));
        assert_eq!(s.name(), "seal");
        assert!(Seal::llr().with_params("mu=0.5").unwrap_err().contains("needs HPL"));
        assert!(Seal::full().with_params("k=0").is_err());
        assert!(Seal::full().with_params("k=8").is_err());
        assert!(Seal::full().with_params("mu=1.5").is_err());
        assert!(Seal::full().with_params("sl1=-1").is_err());
        assert!(Seal::full().with_params("x=1").unwrap_err().contains("unknown parameter"));
        assert!(Seal::full().with_params("k").is_err());
        let setup = Seal::full().setup();
        assert_eq!(setup.swap, SwapSetup::TwoLevel);
        assert_eq!(setup.seal, Some(Seal::full().params()));
    }
}
