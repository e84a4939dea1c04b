//! Huawei's RCC ("RAM compress") thread, built into the P20's kernel
//! (`CONFIG_HUAWEI_RCC=y` in LineageOS/android_kernel_huawei_kirin970 0cde9e42
//! merge_kirin970_defconfig; its hooks in that kernel's mm/vmscan.c). While the CPU is
//! mostly idle and memory runs short, it compresses anonymous pages into zram a
//! megabyte at a time with reclaim that scans the anonymous lists only
//! (`try_to_free_pages_ex` with `rcc_mode` = anon overriding get_scan_count), so
//! anonymous pages reach zram although kswapd, under the file-first rule, takes file
//! pages. The rules and constants are drivers/staging/android/rcc.c and rcc.h of the
//! Kirin 960 kernel of the same 4.9 generation (maimaiguanfan/android_kernel_huawei_hi3660
//! f460ae30), whose driver the Kirin 970 tree builds but does not publish.

use super::{Cont, Ctx, Ev, Sim, RECLAIM_BATCH};
use crate::pages::Loc;
use floe_core::Nanos;

/// RCC_IDLE_SLOW: the thread's wait between checks, in positive mode (its default).
const IDLE_SLOW: Nanos = Nanos(1_000_000_000);
/// RCC_IDLE_FAST: its sleep after each megabyte.
const IDLE_FAST: Nanos = Nanos(20_000_000);
/// get_cpu_load(need_delay): the window over which a check first measures the load.
const LOAD_WINDOW: Nanos = Nanos(25_000_000);
/// RCC_IDLE_THRESHOLD: the CPU load, percent of all cores, above which it waits.
const IDLE_THRESHOLD_PCT: f64 = 70.0;
/// RCC_FREE_PAGE_MIN and RCC_FREE_PAGE_MIN_EX: it starts with free memory at or under
/// 320 MiB and stops above 368.
const FREE_MIN_MIB: f64 = 320.0;
const FREE_MIN_EX_MIB: f64 = 48.0;
/// RCC_SWAP_PERCENT_LOW and _EX: it starts with swap under 85 % used, stops at 90 %.
const SWAP_PCT_LOW: i64 = 85;
const SWAP_PCT_LOW_EX: i64 = 5;
/// RCC_NR_SWAP_UNIT_SIZE: a megabyte of pages per step, reclaimed 32 at a time.
const UNIT_PAGES: u32 = 256;
/// The step's busy count past which a run gives up (the loop's `busy_count > 1000`).
const MAX_BUSY: u32 = 1000;

/// The thread's state.
#[derive(Clone, Debug)]
pub(super) struct Rcc {
    /// The last three load samples, percent (rcc->cpu_load; 100 at setup).
    load: [f64; 3],
    /// Busy core-nanoseconds and time at the last sample.
    last: (f64, Nanos),
    /// Steps in this run that found the CPU busy.
    busy: u32,
    /// Anonymous pages under which it does not start ([0]) or goes on ([1]):
    /// anon_pages_max and anon_pages_min.
    anon_pages: [u64; 2],
    /// MemAvailable above which it stops (avail_target_pages: 1 GiB).
    avail_target: u64,
    free_min: i64,
    free_min_ex: i64,
}

/// What get_system_stat found.
#[derive(Clone, Copy, Debug, Default)]
struct Stat {
    cpu_busy: bool,
    free_enough: bool,
    no_anon: bool,
    swap_full: bool,
    avail_enough: bool,
}

impl Stat {
    fn need_wakeup(self) -> bool {
        !(self.cpu_busy || self.free_enough || self.no_anon || self.swap_full || self.avail_enough)
    }
}

impl Rcc {
    /// rcc_setup for a phone of `ram_mib`: anon_pages_min 200 MiB, plus 250 on a phone
    /// over 2 GiB and 500 over 3; anon_pages_max 60 MiB above it.
    pub(super) fn new(ram_mib: f64) -> Rcc {
        let gap = if ram_mib > 3.0 * 1024.0 {
            2.0
        } else if ram_mib > 2.0 * 1024.0 {
            1.0
        } else {
            0.0
        };
        let min = 200.0 + gap * 250.0;
        Rcc {
            load: [100.0; 3],
            last: (0.0, Nanos::ZERO),
            busy: 0,
            anon_pages: [super::pages_of(min + 60.0) as u64, super::pages_of(min) as u64],
            avail_target: super::pages_of(1024.0) as u64,
            free_min: super::pages_of(FREE_MIN_MIB) as i64,
            free_min_ex: super::pages_of(FREE_MIN_EX_MIB) as i64,
        }
    }
}

impl Sim {
    /// The thread wakes (its wait timed out): it measures the load over the next 25 ms.
    pub(super) fn rcc_wake(&mut self) {
        let busy = self.cpu.busy_ns_at(self.now);
        if let Some(r) = self.rcc.as_mut() {
            r.last = (busy, self.now);
        }
        self.push(self.now + LOAD_WINDOW, Ev::RccCheck { running: false });
    }

    /// A load sample taken, then get_system_stat: a check decides whether to start, a
    /// running thread whether to go on.
    pub(super) fn rcc_check(&mut self, running: bool) {
        let busy = self.cpu.busy_ns_at(self.now);
        let cores = self.device.cpu.cores as f64;
        let stat = {
            let Some(r) = self.rcc.as_mut() else { return };
            let dt = self.now.0.saturating_sub(r.last.1 .0) as f64;
            if dt > 0.0 {
                r.load = [100.0 * (busy - r.last.0) / (cores * dt), r.load[0], r.load[1]];
            }
            r.last = (busy, self.now);
            self.rcc_stat(running)
        };
        let go_on = if running {
            let r = self.rcc.as_ref().expect("checked above");
            r.busy <= MAX_BUSY && !(stat.free_enough || stat.swap_full || stat.no_anon || stat.avail_enough)
        } else {
            if let Some(r) = self.rcc.as_mut() {
                r.busy = 0;
            }
            stat.need_wakeup()
        };
        if go_on {
            self.rcc_step(stat);
        } else {
            self.push(self.now + IDLE_SLOW, Ev::RccWake);
        }
    }

    fn rcc_stat(&self, end: bool) -> Stat {
        let r = self.rcc.as_ref().expect("RCC runs");
        let anon = (self.pages.list_len(Loc::ActiveAnon) + self.pages.list_len(Loc::InactiveAnon)) as u64;
        let swap_pct = SWAP_PCT_LOW + if end { SWAP_PCT_LOW_EX } else { 0 };
        Stat {
            cpu_busy: r.load.iter().any(|&l| l > IDLE_THRESHOLD_PCT),
            free_enough: self.free() > r.free_min + if end { r.free_min_ex } else { 0 },
            no_anon: anon <= r.anon_pages[end as usize],
            swap_full: self.zram_cap == 0 || self.zram_stored * 100 >= self.zram_cap * swap_pct,
            avail_enough: self.mem_available() > r.avail_target,
        }
    }

    /// One step of a run (DO_SWAP_OUT): a megabyte of anonymous pages into zram, unless
    /// the CPU is busy or anonymous memory is short; then the 20 ms sleep.
    fn rcc_step(&mut self, stat: Stat) {
        if stat.cpu_busy {
            if let Some(r) = self.rcc.as_mut() {
                r.busy += 1;
            }
        } else if !stat.no_anon {
            let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
            self.scan_anon_only = true;
            for _ in 0..UNIT_PAGES / RECLAIM_BATCH {
                let (got, cost, io) = self.shrink(RECLAIM_BATCH, self.now, false);
                self.block_frames(got);
                ctx.cpu += cost.0;
                ctx.compress += cost.1;
                ctx.t = ctx.t.max(io);
            }
            self.scan_anon_only = false;
            if ctx.cpu > Nanos::ZERO {
                self.start_job(ctx, Nanos::ZERO, None, Cont::Rcc);
                return;
            }
        }
        self.rcc_slept();
    }

    /// A step's work done: the thread sleeps 20 ms, then samples the load and checks.
    pub(super) fn rcc_slept(&mut self) {
        self.push(self.now + IDLE_FAST, Ev::RccCheck { running: true });
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Catalog, Device, Workload};
    use crate::engine::{pages_of, RunOptions, Sim};
    use floe_core::Nanos;

    /// Ice's video call on the P20 with its eight apps cached, RCC on or off, run 60 s
    /// into its measured part; each second of that part is returned too, as MemAvailable
    /// and free memory in pages and zram's percentage full.
    /// Without the system's own load (`quiet`) the cores stay under the thread's 70 %.
    fn call(rcc: bool, quiet: bool, cputester_pct: Option<f64>) -> (Sim, Vec<(u64, i64, i64)>) {
        let cat = Catalog::embedded().unwrap();
        let wl = Workload::load("ice-video-call", &cat).unwrap();
        let mut dev = Device::load("p20").unwrap();
        dev.memory.rcc = rcc;
        if quiet {
            dev.cpu.system_load_pct = None;
        }
        let opts = RunOptions { seed: 1, bg_apps: Some(8), cputester_pct, ..Default::default() };
        let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make_spec("lru-cfs").unwrap(), &opts);
        let mut t = Nanos::from_secs_f64(1.0);
        while !sim.measuring {
            assert!(sim.run_until(t), "the run ended before its measured part");
            t += Nanos::from_secs_f64(1.0);
        }
        let mut avail = Vec::new();
        for _ in 0..60 {
            t += Nanos::from_secs_f64(1.0);
            assert!(sim.run_until(t));
            avail.push((sim.mem_available(), sim.free(), sim.zram_stored * 100 / sim.zram_cap.max(1)));
        }
        (sim, avail)
    }

    /// With free memory under 320 MiB, more than 760 MiB of anonymous pages, zram under
    /// 85 % full and MemAvailable under a GiB, the thread compresses anonymous pages
    /// into zram until one of them no longer holds, and keeps it so: in the call beside
    /// eight cached apps, zram fills to its 85-90 % first.
    #[test]
    fn rcc_compresses_anonymous_pages_until_one_of_its_rules_stops_it() {
        let (off, avail_off) = call(false, true, None);
        let (on, avail_on) = call(true, true, None);
        let gib = u64::from(pages_of(1024.0));
        let (free_min, free_ex) =
            (i64::from(pages_of(super::FREE_MIN_MIB)), i64::from(pages_of(super::FREE_MIN_MIB + super::FREE_MIN_EX_MIB)));
        let short = |&(a, f, z): &(u64, i64, i64)| a < gib && f < free_min && z < super::SWAP_PCT_LOW;
        assert!(avail_off[5..].iter().all(short), "without RCC the call runs short on every count: {avail_off:?}");
        assert!(
            on.zram_stored > off.zram_stored + pages_of(64.0) as i64,
            "zram {} pages with RCC, {} without",
            on.zram_stored,
            off.zram_stored
        );
        // A megabyte every 20 ms or so brings it there within seconds; then it wakes each
        // second, and the dips under the target stay small.
        let slack = pages_of(8.0);
        let held = |&(a, f, z): &(u64, i64, i64)| a + u64::from(slack) > gib || f + i64::from(slack) > free_ex || z >= super::SWAP_PCT_LOW;
        assert!(avail_on[10..].iter().all(held), "a GiB available, 368 MiB free or zram 85 % full: {avail_on:?}");
        on.check_invariants().unwrap();
    }

    /// The thread waits while the cores are busy more than 70 % of the time: beside
    /// cputester keeping 90 % of them busy, the run is the one without RCC.
    #[test]
    fn rcc_waits_while_the_cpu_is_busy() {
        let (off, _) = call(false, false, Some(90.0));
        let (on, _) = call(true, false, Some(90.0));
        assert_eq!(on.snapshot(), off.snapshot());
        assert_eq!(on.zram_stored, off.zram_stored);
    }
}
