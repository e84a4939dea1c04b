//! kswapd woken for a high-order allocation that found no free block of its order
//! (`memory.high_order_wakeups_per_min`), with free memory far above the watermarks.
//!
//! An allocation of order > 0 that may not reclaim directly still wakes kswapd for its
//! order: the network stack refills its 32 KiB page fragments that way
//! (net/core/sock.c, skb_page_frag_refill, order 3: "avoid direct reclaim but allow
//! kswapd to wake"), with an order-0 page as its fallback. When fragmentation leaves no
//! free block of that order, wakeup_kswapd finds the zone unbalanced at the order and
//! kswapd reclaims although order-0 memory is plentiful. Linux 4.8-4.19's balance_pgdat
//! (mm/vmscan.c) starts at DEF_PRIORITY, 12: each pass scans the LRU lists' sizes
//! shifted right by the priority, and once a pass has reclaimed twice the allocation's
//! size (`2UL << sc->order`, kswapd_shrink_node: "If twice the allocation size has been
//! reclaimed then recheck watermarks only at order-0 to prevent excessive reclaim")
//! kswapd checks the watermarks at order 0, finds them met, and sleeps, leaving the
//! rest to kcompactd. So every such wakeup reclaims at least 16 pages, about the
//! inactive lists' 1/4096th with a GiB or more on them.
//!
//! How often the fragments' allocations find no block is no source's figure: it is
//! calibrated on Ice's BG-null control, the pages its P20 reclaimed in a call with free
//! memory far above the watermarks (Fig. 2(a), docs/MODEL.md, "Reclaim and watermarks").

use super::{exp1, Cont, Ctx, Ev, Sim};
use crate::pages::Loc;
use floe_core::Nanos;

/// The allocation's order: the network stack's page fragments (SKB_FRAG_PAGE_ORDER,
/// 32 KiB with 4 KiB pages).
pub(super) const ORDER: u32 = 3;
/// balance_pgdat's first priority (DEF_PRIORITY).
const DEF_PRIORITY: u32 = 12;

/// The pages one wakeup reclaims at `priority` from inactive lists of these sizes: the
/// pass's scan target, at least one page.
pub(super) fn pass_target(inactive_pages: u64, priority: u32) -> u32 {
    (inactive_pages >> priority).clamp(1, u64::from(u32::MAX)) as u32
}

impl Sim {
    /// Schedules the next failed high-order allocation, an exponential gap away.
    pub(super) fn schedule_high_order(&mut self) {
        let Some(per_min) = self.device.memory.high_order_wakeups_per_min else { return };
        let after = Nanos::from_secs_f64(60.0 / per_min * exp1(&mut self.rng_high_order));
        self.push(self.after(after), Ev::HighOrderWake);
    }

    /// A high-order allocation found no free block of its order and wakes kswapd.
    /// kswapd already awake reclaims for the watermarks anyway, and its batches reach
    /// the order's two blocks; asleep, it runs balance_pgdat's passes from DEF_PRIORITY
    /// until it has reclaimed `2 << ORDER` pages (or priority 1), then sleeps again.
    pub(super) fn high_order_wake(&mut self) {
        self.schedule_high_order();
        if self.kswapd_active {
            return;
        }
        self.high_order_wakeups += 1;
        self.kswapd_active = true;
        if let Some(l) = self.psi.as_mut() {
            l.kswapd_wakes(self.now);
        }
        let want = 2u32 << ORDER;
        let (mut got, mut cost) = (0u32, (Nanos::ZERO, Nanos::ZERO));
        let mut io = self.now;
        let mut priority = DEF_PRIORITY;
        while got < want && priority >= 1 {
            let inactive = u64::from(self.pages.list_len(Loc::InactiveAnon)) + u64::from(self.pages.list_len(Loc::InactiveFile));
            let (n, c, t) = self.shrink(pass_target(inactive, priority), self.now, false);
            got += n;
            cost = (cost.0 + c.0, cost.1 + c.1);
            io = io.max(t);
            priority -= 1;
        }
        self.block_frames(got);
        // kswapd's CPU for the passes; when it is served kswapd checks the watermarks
        // at order 0 (kswapd_batch) and, with them met, sleeps.
        let ctx = Ctx { t: io, cpu: cost.0, compress: cost.1 };
        self.start_job(ctx, Nanos::ZERO, None, Cont::Kswapd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Catalog, Device, Workload};
    use crate::engine::RunOptions;

    /// One pass scans the inactive lists' size shifted by the priority, never nothing.
    #[test]
    fn a_pass_takes_the_inactive_lists_size_shifted_by_its_priority() {
        assert_eq!(pass_target(115_000, 12), 28);
        assert_eq!(pass_target(115_000, 11), 56);
        assert_eq!(pass_target(100, 12), 1);
        assert_eq!(pass_target(0, 12), 1);
    }

    /// Ice's video call on the P20 with no app cached, high-order wakeups at `per_min`.
    fn bg_null(per_min: Option<f64>) -> Sim {
        let cat = Catalog::embedded().unwrap();
        let wl = Workload::load("ice-video-call", &cat).unwrap();
        let mut dev = Device::load("p20").unwrap();
        dev.memory.high_order_wakeups_per_min = per_min;
        let opts = RunOptions { seed: 1, bg_apps: Some(0), ..Default::default() };
        let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make_spec("lru-cfs").unwrap(), &opts);
        while sim.run_until(sim.now + Nanos::from_secs_f64(1.0)) {
            assert!(sim.free() > sim.wmark[2], "free memory reached the high watermark: no fragmentation needed");
        }
        sim
    }

    /// With free memory far above the watermarks the call reclaims only what kswapd's
    /// high-order wakeups take: each at least twice the order's size, and about the
    /// inactive lists' 1/4096th, not up to any watermark; without them, nothing.
    #[test]
    fn each_high_order_wakeup_reclaims_twice_its_order_with_memory_free() {
        let none = bg_null(None);
        assert_eq!((none.high_order_wakeups, none.c.reclaimed), (0, 0));
        let sim = bg_null(Some(6.0));
        let (n, got) = (sim.high_order_wakeups, sim.c.reclaimed);
        assert!(n >= 15, "{n} wakeups in a 300 s call at six a minute");
        assert!(got >= n * (2 << ORDER), "{got} pages in {n} wakeups");
        let inactive = u64::from(sim.pages.list_len(Loc::InactiveAnon) + sim.pages.list_len(Loc::InactiveFile));
        assert!(got <= n * 2 * (inactive >> 11).max(2 << ORDER), "{got} pages in {n} wakeups, {inactive} inactive");
    }
}
