//! The policy interface: what a policy declares, what it can see, how it is driven.

use crate::event::{Action, Event};
use crate::units::{AppId, Nanos, Pages};
use serde::{Deserialize, Serialize};

/// How swap is set up for the whole device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SwapSetup {
    /// No swap at all: anonymous pages stay resident until their app dies.
    None,
    /// zram at the device's configured size.
    Zram,
    /// zswap: a compressed pool in RAM (the device's zram size) writing back its
    /// oldest entries to flash swap when full.
    Zswap,
    /// Swap partition on flash.
    Flash,
    /// SEAL's two-level swap: every swapped page is compressed into SL1 (RAM, the
    /// device's zram size) and least-launch-required pages are then unloaded to SL2
    /// (flash); the schemes on top are set in [`Setup::seal`].
    TwoLevel,
}

/// ASAP's prepaging at app switches (ASAP §4-5): which switch-footprint estimators run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrepageSetup {
    /// Anonymous pages: online candidate and target tables, SCHED_IDLE threads.
    pub anon: bool,
    /// File-backed pages: offline candidates, extent target table, readahead threads.
    pub file: bool,
}

/// SEAL's schemes over [`SwapSetup::TwoLevel`] (SEAL §IV).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SealSetup {
    /// LLR's k-chances: a page leaves the sl1-list after k launches that did not
    /// request it (Algorithm 1).
    pub k: u8,
    /// Hidden page loading with coefficient mu (PS_i = mu x T_w,i x TH / 4 KiB); None:
    /// no HPL, SL2 pages come back on demand and SL2 holds any number of them.
    pub hpl_mu: Option<f64>,
    /// App-granularity swapping: victim apps by process priority (Algorithm 2), all of
    /// an app's pages swapped together, SL2 requests merged up to 1 MiB.
    pub ags: bool,
    /// SL1 size in MiB of pages, as zram's disksize (default: the device's zram size).
    pub sl1_mib: Option<f64>,
    /// SL2 size in MiB of flash, which holds compressed pages (default: the
    /// simulator's flash swap size).
    pub sl2_mib: Option<f64>,
}

/// Which low-memory killer runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LmkMode {
    /// Android's in-kernel LMK: minfree levels by oom_adj, lowest priority then largest.
    Android,
    /// No LMK: only the kernel OOM killer when an allocation cannot be satisfied.
    OomOnly,
    /// The policy chooses victims: it receives [`Event::LowMemory`] at the levels the
    /// stock LMK would act on, and answers with [`Action::Kill`].
    Policy,
}

/// Default CPU treatment of the foreground app.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CpuMode {
    /// Every app thread at the same CFS weight (plain Linux CFS).
    Fair,
    /// The foreground app's threads boosted (UCSG-like).
    FgBoost,
}

/// The order in which reclaim takes pages (a page-level hook).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReclaimOrder {
    /// The kernel's LRU: inactive tails, young pages get another round.
    Lru,
    /// FG-aware eviction (Acclaim): the foreground app's pages are passed over while
    /// other apps' pages remain.
    FgLast,
    /// Freeze-aware eviction (Ice+): on whichever list the scan balance chooses, frozen
    /// apps' pages go first, app by app, then the LRU order.
    FrozenFirst,
}

/// Which events a policy wants (so a backend does not compute unneeded ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventMask {
    pub refaults: bool,
    /// [`crate::Event::Pressure`] and [`crate::Event::ReclaimFailed`].
    pub pressure: bool,
    pub launches: bool,
    pub lifecycle: bool,
}

impl EventMask {
    pub const NONE: EventMask = EventMask { refaults: false, pressure: false, launches: false, lifecycle: false };
    pub const ALL: EventMask = EventMask { refaults: true, pressure: true, launches: true, lifecycle: true };
}

/// What a policy declares before a run: the kernel configuration it runs on and the
/// hooks it needs. A backend that cannot provide something here refuses up front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub swap: SwapSetup,
    pub lmk: LmkMode,
    pub cpu: CpuMode,
    pub reclaim: ReclaimOrder,
    /// Free memory below which kswapd starts swapping (replaces the device's low
    /// watermark; min and high keep the kernel's 4/5 and 6/5 of it). Selective's
    /// swap-threshold.
    pub swap_threshold: Option<Pages>,
    /// Free memory below which the low-memory killer acts, replacing the minfree
    /// table (any app but the foreground may then die). Selective's kill-threshold.
    pub kill_threshold: Option<Pages>,
    /// Interval of [`Event::Tick`], if the policy wants ticks.
    pub tick: Option<Nanos>,
    pub events: EventMask,
    /// SEAL's page placement between SL1 and SL2 (only with [`SwapSetup::TwoLevel`]).
    pub seal: Option<SealSetup>,
    /// ASAP's prepaging at app switches.
    pub prepage: Option<PrepageSetup>,
}

impl Setup {
    /// Stock Android without swap: the reference every seed compares against.
    pub fn stock() -> Setup {
        Setup {
            swap: SwapSetup::None,
            lmk: LmkMode::Android,
            cpu: CpuMode::Fair,
            reclaim: ReclaimOrder::Lru,
            swap_threshold: None,
            kill_threshold: None,
            tick: None,
            events: EventMask::NONE,
            seal: None,
            prepage: None,
        }
    }
}

/// Selective swap/kill's priority classes (its Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PriorityClass {
    High,
    Medium,
    Low,
}

/// Life-cycle state of an app as the backend sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AppState {
    /// No process.
    Dead,
    /// Being launched (cold or warm).
    Launching,
    /// Visible and interactive.
    Foreground,
    /// Alive in the background, runnable.
    Cached,
    /// Alive in the background, frozen.
    Frozen,
}

/// Android's oom_adj for a cached app by its recency, `rank` 0 being the most recently
/// used cached app: 900, 910, ... up to 999 (CACHED_APP_MIN_ADJ up, one level each, as
/// Android 10's OomAdjuster gives fewer than 20 cached activity processes; see
/// [`CachedAdj::SharedSlots`] for Android 9's shared levels).
pub fn cached_oom_adj(rank: usize) -> i32 {
    (900 + 10 * rank.min(10) as i32).min(999)
}

/// The oom_adj of the previous app, the one the user left last (ProcessList
/// PREVIOUS_APP_ADJ: 700 from Android 7's scale, 7 before), in every release the seeds
/// ran: above the cached levels, so killers take it after every cached app.
pub const PREVIOUS_APP_ADJ: i32 = 700;

/// How ActivityManager spreads cached apps over oom_adj levels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachedAdj {
    /// Android 10 and later (OomAdjuster): with fewer cached apps than its ten slots,
    /// each has a level of its own, 900, 910, ... ([`cached_oom_adj`]).
    #[default]
    PerApp,
    /// Android 4.3 to 9 (ActivityManagerService.updateOomAdjLocked): three slots
    /// between CACHED_APP_MIN_ADJ (900; 9 before Android 7's scale) and
    /// CACHED_APP_MAX_ADJ (906; 15), shared by `cachedFactor` = cached apps / 3 apps
    /// each ([`shared_slot_adjs`]), so the killer picks the largest app of the oldest
    /// slot, not the least recently used one.
    SharedSlots,
}

/// The oom_adj levels Android 4.3-9 gives `n` cached activity processes, most recently
/// used first (AOSP 9 ActivityManagerService.updateOomAdjLocked): numSlots =
/// (CACHED_APP_MAX_ADJ - CACHED_APP_MIN_ADJ + 1) / 2 = 3, cachedFactor = max(1, n /
/// numSlots); the level starts at 900 with the next at 901, and after every
/// cachedFactor processes moves to the next, which then steps by 2 up to 906. Empty
/// processes (no activity) take the interleaved levels 900, 902, 904, 906 the same way;
/// floe's apps all hold activities.
pub fn shared_slot_adjs(n: usize) -> Vec<i32> {
    const MIN: i32 = 900;
    const MAX: i32 = 906;
    let slots = ((MAX - MIN + 1) / 2) as usize;
    let factor = (n / slots).max(1);
    let (mut cur, mut next, mut step) = (MIN, MIN + 1, 0);
    (0..n)
        .map(|_| {
            let adj = cur;
            if cur != next {
                step += 1;
                if step >= factor {
                    step = 0;
                    cur = next;
                    next = (next + 2).min(MAX);
                }
            }
            adj
        })
        .collect()
}

impl CachedAdj {
    /// The levels of `n` cached apps, most recently used first.
    pub fn levels(self, n: usize) -> Vec<i32> {
        match self {
            CachedAdj::PerApp => (0..n).map(cached_oom_adj).collect(),
            CachedAdj::SharedSlots => shared_slot_adjs(n),
        }
    }
}

/// A snapshot of one app.
#[derive(Clone, Debug, PartialEq)]
pub struct AppInfo {
    pub id: AppId,
    pub name: String,
    pub state: AppState,
    pub oom_adj: i32,
    /// Resident pages (anon + file mapped by the app).
    pub rss: Pages,
    /// Anonymous pages currently in swap (any tier).
    pub swapped: Pages,
    pub saves_context: bool,
    pub priority_class: PriorityClass,
    pub perceptible: bool,
    pub unkillable: bool,
    pub swappable: bool,
    /// When the app last left the foreground (or was started), for recency.
    pub last_used: Nanos,
}

impl AppInfo {
    /// An app `app{id}` with ordinary defaults: 100 pages resident, nothing swapped,
    /// medium priority, not perceptible, killable and swappable, last used at time 0
    /// (tests and fakes set what they vary with struct-update syntax).
    pub fn ordinary(id: AppId, state: AppState, oom_adj: i32) -> AppInfo {
        AppInfo {
            id,
            name: format!("app{}", id.0),
            state,
            oom_adj,
            rss: Pages(100),
            swapped: Pages(0),
            saves_context: false,
            priority_class: PriorityClass::Medium,
            perceptible: false,
            unkillable: false,
            swappable: true,
            last_used: Nanos::ZERO,
        }
    }
}

/// A snapshot of system memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemInfo {
    /// Pages available to apps in total (RAM left to apps, minus any balloon).
    pub total: Pages,
    pub free: Pages,
    /// Memory available to start apps without swapping: free memory and the page cache
    /// reclaim can take, the kernel's MemAvailable (si_mem_available: free less the
    /// reserves, plus the file LRU less the smaller of its half and the low watermark).
    /// Where the backend's free is MemAvailable already (the daemon), the same.
    pub available: Pages,
    pub wmark_min: Pages,
    pub wmark_low: Pages,
    pub wmark_high: Pages,
    /// The high-water mark the device's vendor tuned for a user-space memory manager,
    /// where it sets one apart from the kernel's watermarks (Ice Table 4's H_wm, which
    /// Ice's MDT compares with available memory); None: the kernel's high watermark.
    pub tuned_high: Option<Pages>,
    pub active_anon: Pages,
    pub inactive_anon: Pages,
    pub active_file: Pages,
    pub inactive_file: Pages,
    /// Pages stored in compressed RAM (uncompressed size).
    pub zram_stored: Pages,
    /// RAM taken by the compressed store.
    pub zram_used: Pages,
    pub zram_capacity: Pages,
    pub flash_swap_used: Pages,
    pub flash_swap_capacity: Pages,
    /// Pages being written out (to swap or a file) that stay in RAM until the write
    /// ends: the kernel's Writeback.
    pub writeback: Pages,
}

/// What a policy can observe. Implemented by the simulator and by the Linux daemon.
pub trait SystemView {
    fn now(&self) -> Nanos;
    fn mem(&self) -> MemInfo;
    fn foreground(&self) -> Option<AppId>;
    /// Every app the backend knows, alive or not, in id order.
    fn apps(&self) -> Vec<AppId>;
    fn app(&self, id: AppId) -> Option<AppInfo>;
    /// Every app the backend knows, as policies see it, in id order.
    fn app_infos(&self) -> Vec<AppInfo> {
        self.apps().into_iter().filter_map(|id| self.app(id)).collect()
    }
    /// Share of the last sampling interval the CPUs were busy or waiting for I/O, 0..=1
    /// (SmartLMK's launch tracker reads /proc/stat for this on Linux).
    fn cpu_busy_iowait(&self) -> f64;
    /// Whether the device is on external power (the power manager's freezing stops
    /// then). The simulated phone never is; the daemon reads /sys/class/power_supply.
    fn charging(&self) -> bool {
        false
    }
}

/// A memory-management policy. Policies never do I/O and never read a clock.
pub trait Policy {
    /// The policy's name as in the registry (DESIGN.md "Names").
    fn name(&self) -> &'static str;
    /// The kernel configuration and hooks the policy needs.
    fn setup(&self) -> Setup;
    /// React to an event; push the actions to take onto `out`.
    fn on_event(&mut self, ev: &Event, view: &dyn SystemView, out: &mut Vec<Action>);
    /// What the policy has learned that should outlive the process (SmartLMK's history
    /// store), as text the backend persists; apps are named, not numbered, so the state
    /// survives a different numbering. None: nothing to keep.
    fn export_state(&self, _view: &dyn SystemView) -> Option<String> {
        None
    }
    /// Restores what [`Policy::export_state`] produced.
    fn import_state(&mut self, _state: &str, _view: &dyn SystemView) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_apps_take_900_up_to_999_by_recency() {
        let adj: Vec<i32> = (0..12).map(cached_oom_adj).collect();
        assert_eq!(adj, vec![900, 910, 920, 930, 940, 950, 960, 970, 980, 990, 999, 999]);
        assert_eq!(cached_oom_adj(usize::MAX), 999);
    }

    #[test]
    fn android_9_shares_three_cached_slots_by_recency() {
        // One app a level while there are fewer than six: 900, then 901, 903, 905, and
        // 906 for every older one.
        assert_eq!(shared_slot_adjs(1), vec![900]);
        assert_eq!(shared_slot_adjs(5), vec![900, 901, 903, 905, 906]);
        // Eight cached apps: cachedFactor 8 / 3 = 2 apps a slot, and none reaches 906.
        assert_eq!(shared_slot_adjs(8), vec![900, 900, 901, 901, 903, 903, 905, 905]);
        // Twelve: four a slot.
        let twelve = shared_slot_adjs(12);
        assert_eq!(twelve, [[900; 4], [901; 4], [903; 4]].concat());
        for n in 0..40 {
            let adj = CachedAdj::SharedSlots.levels(n);
            assert_eq!(adj.len(), n);
            assert!(adj.windows(2).all(|w| w[0] <= w[1]), "older apps never rank above newer ones: {adj:?}");
            assert!(adj.iter().all(|a| (900..=906).contains(a)));
        }
        assert_eq!(CachedAdj::PerApp.levels(3), vec![900, 910, 920]);
    }
}
