//! Which pages a launch touches and which a cached app keeps touching: a cold launch's
//! set, a warm launch's invariant part (its share derived from ASAP's switch-locality
//! statistic) and its varying window, and the even spread of a background set over the
//! heap.

use super::{splitmix, FastRng};
use rand::Rng;
use strength_reduce::StrengthReducedU64;

/// ASAP §4.1 (Fig. 4.2): "about 44 % of the anonymous pages are accessed 9 or 10 times
/// across 10 switches". The share is of every page any of the 10 switches touched (ASAP
/// clears the access bits before each switch and reads them after, then counts per
/// page), not of one switch's pages: a page one switch touches and the next does not
/// adds to the union of ten switches each time. `invariant_share` turns it into the share
/// of one warm launch's pages that every warm launch touches.
const SWITCH_UNION_INVARIANT: f64 = 0.44;

/// The share of a warm launch's anonymous launch set (`set` pages of an `n`-page heap)
/// that every warm launch touches, such that over 10 warm launches the pages touched 9
/// or 10 times are `SWITCH_UNION_INVARIANT` of all pages touched. Under floe's model
/// (the I invariant pages, plus one window of the rest's size at a uniform offset in
/// the heap) a heap page x outside the invariant ones falls in one launch's window with
/// probability p(x), so over 10 launches the union holds I + sum (1 - (1 - p)^10) pages
/// and those touched at least 9 times number I + sum (10 p^9 (1 - p) + p^10); the
/// share is found by bisection (that ratio grows with it). The expectation of a ratio
/// is not the ratio of expectations, but over many draws the two agree within a point
/// (see the test). Derived from the published statistic, the same for every app; not
/// fitted to any evaluation. With the catalog's launch share (set = 0.35 n) it is about
/// 0.81: a warm launch repeats most of its pages and varies in "a small set of pages,
/// such as the app state" (SEAL §IV-A).
pub(super) fn invariant_share(set: u32, n: u32) -> f64 {
    let (set, n) = (set as f64, (n.max(set)) as f64);
    if set < 1.0 {
        return 1.0;
    }
    // Expected pages seen and seen 9-10 times over 10 launches, for invariant share `s`.
    // A window of v pages at a uniform offset in 0..=n-v covers page x in c(x) of the
    // N = n - v + 1 offsets: c rises 1, 2, ... over the first v - 1 pages, stays at
    // min(v, N) and falls again over the last ones. The left ramp lies inside the
    // launch set, where only the share 1 - s of pages is not invariant.
    let ratio = |s: f64| {
        let i = s * set;
        let v = (set - i).round().max(0.0);
        let big_n = n - v + 1.0;
        let ramp = (v - 1.0).min(big_n - 1.0).max(0.0);
        let f = |c: f64| {
            let p = (c / big_n).min(1.0);
            (1.0 - (1.0 - p).powi(10), 10.0 * p.powi(9) * (1.0 - p) + p.powi(10))
        };
        // The ramp's sum, by the midpoint rule over at most 256 steps.
        let steps = ramp.clamp(1.0, 256.0);
        let (mut r_seen, mut r_often) = (0.0, 0.0);
        for k in 0..steps as u32 {
            let c = 1.0 + (k as f64 + 0.5) * ramp / steps - 0.5;
            let (a, b) = f(c.max(1.0));
            r_seen += a * ramp / steps;
            r_often += b * ramp / steps;
        }
        // The middle's pages less its invariant ones (those of the set past the ramp).
        let mid = (n - 2.0 * ramp).max(0.0) - (i - s * ramp);
        let (m_seen, m_often) = f(v.min(big_n));
        let seen = i + (2.0 - s) * r_seen + mid * m_seen;
        let often = i + (2.0 - s) * r_often + mid * m_often;
        often / seen.max(1.0)
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    if ratio(lo) >= SWITCH_UNION_INVARIANT {
        return 0.0;
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if ratio(mid) < SWITCH_UNION_INVARIANT {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Whether page `i` of a launch set is among the invariant pages of the app's warm
/// launches: a splitmix64 hash of (`key`, `i`) below `share` of its range. Which of the
/// cold launch's pages are the invariant ones no seed says; floe takes a fixed
/// pseudo-random subset per app. The background working set is spread over the heap
/// (`Spread`), so the share of the invariant pages it also touches is its share of the
/// heap, not a layout choice; the foreground's hot pages are a heap prefix inside the
/// launch set (a launch's pages are used again in execution).
fn launch_invariant(key: u64, share: f64, i: u32) -> bool {
    ((splitmix(key, i as u64) >> 11) as f64) < share * (1u64 << 53) as f64
}

/// The pages one launch touches out of a range of `n` pages whose cold launch set is
/// `0..set`: a cold launch takes that set; a warm one the invariant part of it
/// (`share` of the set, picked by `key`) and a window of the rest's size drawn from
/// `0..n`.
#[derive(Clone, Copy, Debug)]
pub(super) struct LaunchSet {
    set: u32,
    warm: bool,
    key: u64,
    share: f64,
    from: u32,
    varying: u32,
}

impl LaunchSet {
    pub(super) fn cold(set: u32) -> LaunchSet {
        LaunchSet { set, warm: false, key: 0, share: 1.0, from: 0, varying: 0 }
    }

    pub(super) fn warm(set: u32, n: u32, key: u64, share: f64, rng: &mut FastRng) -> LaunchSet {
        let varying = (set - (set as f64 * share).round() as u32).min(n);
        LaunchSet { set, warm: true, key, share, from: rng.gen_range(0..=n - varying), varying }
    }

    /// Its pages in segment `s` of `n` (every page in exactly one segment).
    pub(super) fn segment(self, s: u32, n: u32) -> impl Iterator<Item = u32> {
        let part = (self.set * s / n)..(self.set * (s + 1) / n);
        let window = (self.from + self.varying * s / n)..(self.from + self.varying * (s + 1) / n);
        part.filter(move |&i| !self.warm || launch_invariant(self.key, self.share, i)).chain(window)
    }

    /// All its pages, in launch order.
    #[cfg(test)]
    pub(super) fn pages(self) -> impl Iterator<Item = u32> {
        (0..super::LAUNCH_SEGMENTS).flat_map(move |s| self.segment(s, super::LAUNCH_SEGMENTS))
    }
}

/// Greatest common divisor.
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Passes over `0..n` in random orders, one value at a time: every pass visits each
/// value once, in an affine permutation `j -> (j * step + offset) mod n` drawn afresh
/// (a random step coprime to `n`, a random offset) when the pass begins. A cached app's
/// wakeups walk its background working set this way, so the pages a window of wakeups
/// touches are distinct until the whole set has been touched (docs/MODEL.md,
/// "Background activity").
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Walk {
    n: u32,
    pos: u32,
    step: u32,
    /// The value at `pos`: `(pos * step + offset) mod n`, kept so that each next value
    /// is one addition and at most one subtraction, not a multiply and a division.
    cur: u32,
}

impl Walk {
    /// The next value of the current pass over `0..n` (`n > 0`); a new pass begins when
    /// the last one is done or `n` changed.
    pub(super) fn next(&mut self, n: u32, rng: &mut FastRng) -> u32 {
        debug_assert!(n > 0);
        if self.pos >= self.n || self.n != n {
            let n64 = n as u64;
            let mut step = rng.gen_range(0..n64);
            while gcd(step, n64) != 1 {
                step = (step + 1) % n64;
            }
            *self = Walk { n, pos: 0, step: step as u32, cur: rng.gen_range(0..n) };
        }
        self.pos += 1;
        let v = self.cur;
        // step < n and cur < n, so the sum is below 2n (and 2^33: no overflow in u64).
        let next = v as u64 + self.step as u64;
        self.cur = if next >= self.n as u64 { (next - self.n as u64) as u32 } else { next as u32 };
        v
    }
}

/// The affine permutation `j -> (j * step + offset) mod n` of `0..n` whose first `m`
/// values are a set of `m` pages spread evenly over the range: `step` is the integer
/// nearest `n` over the golden ratio that is coprime to `n`, so by the three-distance
/// theorem any prefix of the permutation leaves gaps of at most three sizes and
/// meets every part of the range in proportion to its length.
#[derive(Clone, Copy, Debug)]
pub(super) struct Spread {
    /// `n`, with its reciprocal: the modulo in [`Spread::at`] is a multiply and a shift
    /// instead of a 64-bit division.
    n: StrengthReducedU64,
    step: u32,
    offset: u32,
}

impl Spread {
    pub(super) fn new(n: u32, key: u64) -> Spread {
        let n64 = n.max(1) as u64;
        let mut step = ((n64 as f64 * 0.618_033_988_749_895).round() as u64).max(1);
        while gcd(step, n64) != 1 {
            step += 1;
        }
        Spread { n: StrengthReducedU64::new(n64), step: (step % n64) as u32, offset: (key % n64) as u32 }
    }

    /// The `j`-th page of the spread (`j < n`).
    #[inline]
    pub(super) fn at(self, j: u32) -> u32 {
        ((j as u64 * self.step as u64 + self.offset as u64) % self.n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::{invariant_share, launch_invariant, LaunchSet, Spread, Walk};
    use crate::engine::{stream, LAUNCH_SEGMENTS};
    use std::collections::BTreeSet;

    #[test]
    fn a_cold_launch_takes_its_whole_set_in_order() {
        let l = LaunchSet::cold(1000);
        assert_eq!(l.pages().collect::<Vec<_>>(), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn warm_launches_share_the_invariant_part_and_vary_in_the_rest() {
        let (set, n) = (10_000, 30_000);
        for key in [1, 0xDEAD_BEEF] {
            let share = invariant_share(set, n);
            let mut rng = stream(7, key);
            let launches: Vec<Vec<u32>> = (0..10).map(|_| LaunchSet::warm(set, n, key, share, &mut rng).pages().collect()).collect();
            let invariant: BTreeSet<u32> = (0..set).filter(|&i| launch_invariant(key, share, i)).collect();
            // The hash picks about `share` of the set (binomial, 10,000 draws: within 2 %).
            let got = invariant.len() as f64 / set as f64;
            assert!((got - share).abs() < 0.02, "share {share}: {got}");
            for l in &launches {
                let pages: BTreeSet<u32> = l.iter().copied().collect();
                assert!(invariant.is_subset(&pages), "every warm launch touches the invariant pages");
                assert!(l.iter().all(|&p| p < n));
                // The invariant pages, then a window of the rest's size (a page in
                // both is touched twice).
                let window = set - (set as f64 * share).round() as u32;
                assert_eq!(l.len(), invariant.len() + window as usize);
            }
            // Another key picks other pages.
            let other: BTreeSet<u32> = (0..set).filter(|&i| launch_invariant(key ^ 1, share, i)).collect();
            assert_ne!(other, invariant);
        }
    }

    /// ASAP's statistic, measured on the model the way ASAP measured it: over 10 warm
    /// launches, the pages touched 9 or 10 times are 44 % of all pages touched, for
    /// launch sets from a fifth to a half of the heap (the catalog's is 0.35).
    #[test]
    fn ten_warm_launches_touch_44_percent_of_their_pages_nine_or_ten_times() {
        for (set, n, key) in [(10_000u32, 28_571u32, 1u64), (7_000, 14_000, 2), (4_000, 20_000, 3), (20_000, 57_142, 4)] {
            let share = invariant_share(set, n);
            assert!(share > 0.44 && share < 1.0, "{set}/{n}: {share}");
            // One measurement of 10 switches scatters (a few windows more or less
            // overlap): pool 40 of them, as ASAP averages over its apps.
            let (mut seen, mut often) = (0.0, 0.0);
            for t in 0..40 {
                let mut hits = vec![0u32; n as usize];
                let mut rng = stream(11 + t, key);
                for _ in 0..10 {
                    let pages: BTreeSet<u32> = LaunchSet::warm(set, n, key ^ t, share, &mut rng).pages().collect();
                    pages.into_iter().for_each(|p| hits[p as usize] += 1);
                }
                seen += hits.iter().filter(|&&h| h > 0).count() as f64;
                often += hits.iter().filter(|&&h| h >= 9).count() as f64;
            }
            assert!((often / seen - 0.44).abs() < 0.02, "{set}/{n} share {share:.3}: {often} of {seen}");
        }
        // The catalog's launch share: most of a warm launch repeats.
        let s = invariant_share(35, 100);
        assert!((0.78..0.86).contains(&s), "{s}");
        // A window as large as the heap leaves nothing to vary; an empty set is all
        // invariant.
        assert_eq!(invariant_share(900, 1000), 0.0);
        assert_eq!(invariant_share(0, 1000), 1.0);
    }

    #[test]
    fn a_spread_is_a_permutation_whose_prefixes_cover_the_range_evenly() {
        for (n, key) in [(1u32, 0u64), (2, 5), (97, 3), (1024, 77), (54_912, 0xDEAD_BEEF), (38_400, 1)] {
            let s = Spread::new(n, key);
            let mut seen = vec![false; n as usize];
            for j in 0..n {
                let i = s.at(j);
                assert!(i < n && !seen[i as usize], "n {n}: {i} twice or out of range");
                seen[i as usize] = true;
            }
            if n < 1000 {
                continue;
            }
            // Any prefix of the spread meets a prefix of the range (the launch set, the
            // foreground's hot pages) in proportion to both: within 1 % of n.
            for m in [n / 10, n / 4, n / 2] {
                for l in [n / 8, n / 3, (n * 7) / 10] {
                    let hit = (0..m).filter(|&j| s.at(j) < l).count() as f64;
                    let expect = m as f64 * l as f64 / n as f64;
                    assert!((hit - expect).abs() < 0.01 * n as f64, "n {n} m {m} l {l}: {hit} vs {expect}");
                }
            }
        }
    }

    #[test]
    fn a_walk_visits_every_value_once_per_pass_in_a_new_order_each_pass() {
        let mut rng = stream(1, 2);
        for n in [1u32, 2, 6, 97, 1000, 38_400] {
            let mut w = Walk::default();
            let mut orders = Vec::new();
            for _ in 0..4 {
                let pass: Vec<u32> = (0..n).map(|_| w.next(n, &mut rng)).collect();
                let mut sorted = pass.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n {n}: a pass is not a permutation");
                orders.push(pass);
            }
            if n >= 97 {
                // Four passes, four orders: a pass is drawn afresh, not repeated.
                orders.sort();
                orders.dedup();
                assert_eq!(orders.len(), 4, "n {n}: passes repeat their order");
            }
        }
        // A set that changes size mid-pass starts a new pass over the new range.
        let mut w = Walk::default();
        for _ in 0..5 {
            w.next(10, &mut rng);
        }
        let pass: Vec<u32> = (0..7).map(|_| w.next(7, &mut rng)).collect();
        let mut sorted = pass.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn a_launch_splits_into_segments_that_cover_it_once() {
        let mut rng = stream(1, 1);
        let l = LaunchSet::warm(777, 5000, 42, 0.44, &mut rng);
        let all: Vec<u32> = l.pages().collect();
        let mut by_seg: Vec<u32> = (0..LAUNCH_SEGMENTS).flat_map(|s| l.segment(s, LAUNCH_SEGMENTS)).collect();
        assert_eq!(by_seg, all);
        // A window larger than the range it is drawn from is clamped to that range:
        // 100 pages allocated, so the varying part is all of them.
        let small = LaunchSet::warm(777, 100, 42, 0.44, &mut rng);
        let inv = |p: &u32| launch_invariant(42, 0.44, *p);
        by_seg = small.pages().filter(|p| !inv(p)).collect();
        assert_eq!(by_seg, (0..100).filter(|p| !inv(p)).collect::<Vec<_>>());
    }
}
