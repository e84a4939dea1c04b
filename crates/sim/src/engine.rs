//! The discrete-event engine: apps, page faults, reclaim (kswapd and direct), swap
//! tiers, the low-memory killer, UI frames, launches and the workload script, driving
//! one policy through events and applying its actions.
//!
//! Events are ordered by (time, sequence number); every random choice comes from a
//! seeded stream owned by one component, so a run is a pure function of its inputs.

use crate::config::{AppSpec, Catalog, Device, SwapReadahead, Workload, MAX_MIB, MAX_MIB_WHY, ZRAM_MAX_PER_RAM, ZRAM_MAX_WHY};
use crate::SimError;
mod asap;
mod churn;
mod high_order;
mod hogs;
mod kill;
mod launch;
mod psi;
mod rcc;
mod reclaim;
pub use reclaim::ReclaimKind;
mod seal;

use launch::{invariant_share, LaunchSet, Spread, Walk};

use crate::cpu::{self, BgGroup, Cpu};
use crate::flash::{Flash, Op};
use crate::pages::{Loc, PageTable, F_LOCKED, F_REFERENCED, F_SHADOW, F_YOUNG};
use floe_core::input::num;
use floe_core::{
    Action, AppId, AppInfo, AppState, CpuClass, CpuMode, Event, LaunchKind, LaunchLog, LmkMode, LmkdMode, MemInfo, Metrics, Nanos,
    PageKind, Pages, Param, Policy, RunRecord, Setup, SwapSetup, SystemView,
};
use rand::{seq::SliceRandom, Rng, RngCore, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus as FastRng;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Display refresh period at 60 Hz.
pub const VSYNC: Nanos = Nanos(16_666_667);
/// A frame slower than this is an interaction alert (Systrace's 16.6 ms).
pub const ALERT: Nanos = Nanos(16_600_000);
/// Pages reclaimed per reclaim pass (the kernel's SWAP_CLUSTER_MAX).
pub(crate) const RECLAIM_BATCH: u32 = 32;
/// Assumption: CPU to scan one LRU page (page_referenced + list move), ~0.1 us on a
/// 2 GHz mobile core.
const SCAN_NS: u64 = 100;
/// Assumption: CPU to unmap and free one page once chosen for eviction (rmap walk,
/// TLB shootdown), ~0.6 us.
const EVICT_NS: u64 = 600;
/// Assumption: CPU of a minor fault that maps a zeroed or cached page, ~1 us.
const MINOR_FAULT_NS: u64 = 1_000;
/// File faults read an aligned cluster of this many pages (fault-around / readaround,
/// the kernel reads 16-32 pages; Android lowers read_ahead_kb). Assumption: 8.
const FILE_CLUSTER: u32 = 8;
/// Assumption: an app grows to its full anonymous footprint at 64 MiB/s of use (and,
/// unless `RunOptions::no_idle_growth`, in the foreground unused).
const POPULATE_PAGES_PER_S: u32 = 64 * 256;
/// Segments a launch is split into, so its faults and CPU interleave with other work.
const LAUNCH_SEGMENTS: u32 = 8;
/// Assumption: a background wakeup runs code as well as touching heap: file pages
/// touched are a quarter of the anonymous pages touched. Checked, not derived: Ice's
/// Fig. 4 splits the refaulted pages 48.6 % file; with this share LRU+CFS's background
/// refaults in `floe experiment ice` are 56.5 % file, with touches at Fig. 4's ratio
/// 63.3 % (docs/MODEL.md, "Background activity").
const BG_FILE_SHARE: u32 = 4;
/// The window of Ice's per-process reclaim test (§3.2, Fig. 4): more than 30 % of an
/// app's reclaimed pages came back within 30 s in the background. floe reads that as
/// the size of the background working set — the pages a cached app keeps touching —
/// not as a stream of new pages: `bg_touch_mib` per wakeup is that set spread over the
/// wakeups in the window, so the set is `bg_touch_mib x BG_WINDOW_S / bg_period_s`, and
/// the wakeups walk it in passes of distinct pages (`Walk`), so a window's worth of
/// them touches all of it.
const BG_WINDOW_S: f64 = 30.0;
/// Parts a background wakeup is split into: each touches its share of the wakeup's
/// pages, then runs its share of the wakeup's CPU. Assumption: four, enough that the
/// touches follow the CPU as it is served.
const BG_SEGMENTS: u32 = 4;
/// Salt that derives an app's background-set key from its launch key.
const BG_SPREAD_KEY: u64 = 0xB6;
/// File pages in the background working set per anonymous page: Ice Fig. 4 splits the
/// refaulted pages 48.6 % file, 51.4 % anonymous.
const BG_HOT_FILE_PER_ANON: f64 = 48.6 / 51.4;
/// Assumption: flash swap size where the device file gives none, 2 GiB (the swap file
/// of Selective's Nexus 5 and of SEAL's HiKey 970; Ice does not give its own).
const FLASH_SWAP_MIB: f64 = 2048.0;
/// zbud, zswap's default pool allocator before Linux 6.3, keeps at most two compressed
/// pages in each pool page (Documentation/vm/zswap.txt).
const ZBUD_MAX_RATIO: f64 = 2.0;
/// zswap's pool may grow to this share of RAM before it writes its oldest pages back
/// to the swap device (`max_pool_percent`, default 20, Documentation/vm/zswap.txt).
const ZSWAP_MAX_POOL_PERCENT: f64 = 20.0;
/// vm.swappiness. Assumption: 100, as Pixel devices' init scripts set it (the kernel
/// default is 60); the seeds do not give theirs.
const SWAPPINESS: u64 = 100;
/// Assumption: the coefficient of variation of a rendered frame's CPU work. A frame's
/// work follows its content (Ice §2.2.3: "differences in visual content and unstable
/// network signals can lead to unstable frame rates"); no seed publishes the spread, so
/// floe draws each frame's work from a lognormal law with the app's `frame_cpu_ms` as
/// its mean and this spread, where the scenario gives none (`frame_cpu_cv`; Ice's four
/// are calibrated on its BG-cputester). It decides how many frames sit near the 16.6 ms
/// budget, and so how many a stall of a few milliseconds or a slower core pushes over it.
pub const FRAME_CPU_CV: f64 = 0.3;
/// Idle foreground apps (non-interactive workloads) wake this often to grow.
const IDLE_TICK: Nanos = Nanos::from_ms(100);
/// The in-kernel LMK runs at most this often outside reclaim passes.
const LMK_INTERVAL: Nanos = Nanos::from_ms(1);

/// Simulated time at which a run stops (2^62 ns, 146 years), far beyond any workload's
/// week: times stay below a quarter of u64's range, so adding any bounded duration to
/// one cannot wrap. Only inputs out of all proportion (a launch or the flash queue that
/// would take centuries) reach it.
pub const HORIZON: Nanos = Nanos(1 << 62);

/// Options of one run beyond device, workload and policy.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Overrides the workload's `background.count`.
    pub bg_apps: Option<usize>,
    /// Overrides the workload's `balloon_mib`.
    pub balloon_mib: Option<f64>,
    /// Draws the background apps from the pool with the seed even where the workload
    /// names a fixed set.
    pub draw_bg: bool,
    /// Launches each round's apps in a fresh order drawn with the seed instead of the
    /// workload's listed order (for papers that do not publish their launch order).
    pub shuffle_rounds: bool,
    /// Ice's BG-cputester: a CPU hog outside the apps taking this percentage of all
    /// cores' time (absent: none).
    pub cputester_pct: Option<f64>,
    /// Stops a cached app's background activity this many seconds after it left the
    /// foreground (default: never). The catalog's activity is what Ice measured in an
    /// app's first seconds in the background (Table 1: 10 s; Fig. 4: 30 s) and runs for
    /// the app's whole time there unless this bounds it: the two bracket what no seed
    /// measures (docs/MODEL.md, "Background activity").
    pub bg_window_s: Option<f64>,
    /// A foreground app nobody uses (a non-interactive workload's, whose script only
    /// launches it and waits) keeps the pages its launch mapped. By default it goes on
    /// growing to its footprint as a used app does (`POPULATE_PAGES_PER_S`), an upper
    /// bound: the catalog's footprints are of apps in use, and no seed measures what an
    /// app left on its first screen maps (docs/MODEL.md, "Launches").
    pub no_idle_growth: bool,
}

/// Whether `w` seconds is a background window a run takes (`RunOptions::bg_window_s`):
/// 0 up to a week, the longest run.
pub fn bg_window_fits(w: f64) -> bool {
    (0.0..=crate::config::MAX_RUN_S).contains(&w)
}

/// swapin_nr_pages's state (Linux 4.x): readahead hits since the last swap-in, the
/// last faulting slot, the last window.
#[derive(Clone, Copy, Debug, Default)]
struct Readahead {
    hits: u32,
    prev_slot: u32,
    last: u32,
}

impl Readahead {
    /// The window for a swap-in at `slot`, at most `max` slots (swapin_nr_pages): with
    /// no hit since the last swap-in, one page unless the fault is next to the last
    /// one; else hits + 2 rounded up to a power of two from 4; never below half the
    /// last window.
    fn window(&mut self, slot: u32, max: u32) -> u32 {
        if max <= 1 {
            return 1;
        }
        let mut pages = std::mem::take(&mut self.hits) + 2;
        if pages == 2 {
            if slot != self.prev_slot.wrapping_add(1) && slot != self.prev_slot.wrapping_sub(1) {
                pages = 1;
            }
            self.prev_slot = slot;
        } else {
            pages = pages.next_power_of_two().max(4);
        }
        pages = pages.min(max).max(self.last / 2);
        self.last = pages;
        pages
    }
}

/// Who decided a kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillCause {
    Lmk = 0,
    Oom = 1,
    Policy = 2,
    /// SEAL's HPL, making room in SL1.
    Sl1Room = 3,
}

/// Counters of things that happen; metrics are their difference over the measured part.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    refaults: [[u64; 2]; 2], // [fg][anon=0/file=1]
    /// Refaults of the system's own processes (`[system]`), counted apart from the apps'.
    refaults_system: u64,
    reclaimed: u64,
    /// Of `reclaimed`, anonymous pages (sent to swap).
    reclaimed_anon: u64,
    kills: u64,
    /// Kills by cause, indexed by `KillCause`.
    kills_by: [u64; 4],
    /// The policy's kill actions that took at least one app.
    policy_kill_batches: u64,
    freezes: u64,
    thaws: u64,
    cpu_app_ns: u64,
    cpu_kswapd_ns: u64,
    cpu_compress_ns: u64,
    cpu_prepage_ns: u64,
    /// CPU work of the system's own threads and of cputester.
    cpu_system_ns: u64,
    cpu_tester_ns: u64,
    touches: u64,
    scanned: u64,
    /// Pages swap readahead brought in beside a faulting one.
    swap_readahead: u64,
    /// Frames rendered and those over the alert threshold.
    frames: u64,
    janky: u64,
    /// Pages reclaimed by allocating threads themselves (direct reclaim).
    direct_reclaimed: u64,
    /// Killed processes' exits (a device with `cpu.exit_us_per_page`): victims whose
    /// memory was freed, its pages and the kill-to-free times; and kill decisions whose
    /// victims all exited, their pages and the decision-to-last-free times.
    exits: u64,
    exit_pages: u64,
    exit_ns: u64,
    exit_batches: u64,
    exit_batch_pages: u64,
    exit_batch_ns: u64,
}

/// One app's share of the counters (`Sim::app_stats`), counted where the run's are.
#[derive(Clone, Copy, Debug, Default)]
struct AppCounters {
    refaults: [u64; 2], // [anon=0/file=1]
    reclaimed: [u64; 2],
    kills: u64,
    freezes: u64,
    thaws: u64,
    cpu_ns: u64,
}

/// The state of a run at one instant: memory gauges and counters since the run began
/// (not only the measured part). Two snapshots make one step of a timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub t: Nanos,
    /// True once the workload's measured part has begun.
    pub measuring: bool,
    /// The app in the foreground (launching or in use), if any.
    pub fg_app: Option<String>,
    pub free_pages: i64,
    pub anon_lru_pages: u64,
    pub file_lru_pages: u64,
    /// Pages held in zram (or zswap's pool, SEAL's SL1), uncompressed, and the RAM
    /// they take.
    pub zram_stored_pages: u64,
    pub zram_pool_pages: u64,
    pub flash_swap_pages: u64,
    /// Pages under writeback to flash: still in RAM until their writes end.
    pub writeback_pages: u64,
    pub apps_alive: u32,
    pub apps_frozen: u32,
    pub frames: u64,
    pub janky_frames: u64,
    /// Refaults by [foreground?][anon = 0, file = 1].
    pub refaults: [[u64; 2]; 2],
    pub reclaimed_pages: u64,
    pub direct_reclaimed_pages: u64,
    pub reclaimed_anon_pages: u64,
    pub kills: u64,
    pub freezes: u64,
    pub thaws: u64,
    pub cpu_app_ns: u64,
    pub cpu_kswapd_ns: u64,
    pub cpu_compress_ns: u64,
    /// CPU work of the system's own threads and of cputester (`RunOptions::cputester_pct`).
    pub cpu_system_ns: u64,
    pub cpu_tester_ns: u64,
    /// Time the cores were busy, summed over the cores, whoever ran (a trace's CPU
    /// utilisation; on a big.LITTLE CPU a little core is busy longer for the same work).
    pub cpu_busy_ns: u64,
    pub flash_read_bytes: u64,
    pub flash_write_bytes: u64,
}

/// Workload script steps.
#[derive(Clone, Debug)]
enum Step {
    Launch { app: u16, round: u32, measured: bool },
    Use { secs: f64, interactive: bool, measured: bool },
    Home { secs: f64 },
    MeasureStart,
}

#[derive(Clone, Debug)]
enum Cont {
    Frame {
        app: u16,
        life: u32,
        start: Nanos,
        render: bool,
    },
    LaunchSeg {
        app: u16,
        life: u32,
    },
    Bg {
        app: u16,
        life: u32,
        gen: u32,
        /// The wakeup's part that ran (`BG_SEGMENTS`).
        seg: u32,
    },
    Kswapd,
    /// Huawei's RCC thread compressed a megabyte.
    Rcc,
    /// A thread that only takes CPU (the system's, or cputester's) ended its burst.
    Hog {
        thread: u16,
    },
    /// A killed process's exit ended: its memory is free (`kill::Exit`).
    Exit {
        app: u16,
        life: u32,
    },
    /// ASAP: a prepaging thread decompressed a batch of the app's pages.
    Prepage {
        app: u16,
        life: u32,
        batch: Vec<u32>,
    },
}

/// A CPU job to start when its I/O wait is over ([`Ev::Job`]).
#[derive(Clone, Debug)]
struct JobEv {
    work: Nanos,
    app: Option<u16>,
    cont: Cont,
}

#[derive(Clone, Debug)]
enum Ev {
    Step,
    CpuDone,
    Tick {
        app: u16,
        life: u32,
        gen: u32,
    },
    BgWake {
        app: u16,
        life: u32,
        gen: u32,
    },
    /// A thawed app goes on with the background wakeup part it was frozen in.
    BgResume {
        app: u16,
        gen: u32,
    },
    /// A CPU job whose I/O wait is over. Boxed: the other events fit in 16 bytes, and
    /// the queue's sift moves whole events.
    Job(Box<JobEv>),
    PolicyTick,
    Kswapd,
    /// Huawei's RCC thread's wait is over: it samples the CPU load.
    RccWake,
    /// RCC's load sample is taken: it checks memory, to start (`running` false) or to
    /// go on.
    RccCheck {
        running: bool,
    },
    /// A thread that only takes CPU wakes with a burst of work.
    HogWake {
        thread: u16,
    },
    /// SEAL: try to unload SL1 pages to SL2.
    SealUnload,
    /// SEAL: the unload request in flight completed.
    SealUnloadDone,
    /// Reclaim's flash writes of `n` pages completed: the pages held under writeback
    /// are free now.
    WritebackDone {
        n: u32,
    },
    /// SEAL: HPL's request for the app's SL2 pages completed.
    HplLoaded {
        app: u16,
        life: u32,
    },
    /// ASAP: read-ahead of file pages `[start, start + len)` of the app completed.
    AsapFileRead {
        app: u16,
        life: u32,
        start: u32,
        len: u32,
    },
    /// ASAP: issue the next read-ahead request if the flash is idle.
    AsapDispatch,
    /// lmkd's PSI mode: the kernel's trigger check, or lmkd's poll after an event.
    Psi,
    /// A high-order allocation found no free block of its order (`high_order`).
    HighOrderWake,
}

struct Queued {
    at: Nanos,
    seq: u64,
    ev: Ev,
}
const _: () = assert!(std::mem::size_of::<Queued>() == 32, "a queued event is half a cache line");
impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

#[derive(Clone, Debug)]
struct Launch {
    kind: LaunchKind,
    start: Nanos,
    seg: u32,
    cpu_per_seg: Nanos,
    /// The anonymous pages it touches (its file pages are the app's launch file set).
    anon: LaunchSet,
    measured: bool,
    round: u32,
    /// Nanoseconds the cores were busy (summed over them) and flash bytes read in the
    /// run when it began.
    busy0: f64,
    read0: u64,
}

struct AppRt {
    spec: AppSpec,
    base: u32,
    anon: u32,
    file: u32,
    launch_anon: u32,
    launch_file: u32,
    /// Picks the invariant anonymous pages of its warm launches (`launch_invariant`).
    launch_key: u64,
    /// The share of its warm launches' anonymous set they all touch (`invariant_share`).
    warm_share: f64,
    ws_anon: u32,
    ws_file: u32,
    bg_touch: u32,
    /// The background working set: the sizes of the sets of anonymous and file pages a
    /// cached app's wakeups touch (heap pages spread over the populated heap, file pages
    /// the prefix of the file range; see `bg_wake`).
    bg_hot_anon: u32,
    bg_hot_file: u32,
    cold_cpu: Nanos,
    warm_cpu: Nanos,
    /// The law of one rendered frame's CPU work, ms (`FRAME_CPU_CV`).
    frame_ms: LogNormal<f64>,
    /// The scenario's heap churn and content reads while it renders, for the measured
    /// apps of a workload with a `[foreground]` table.
    churn: Option<churn::Churn>,
    /// Anonymous pages allocated so far: the prefix [0, populated) of its anon range.
    populated: u32,
    /// File pages mapped so far in this process's life: the prefix of its file range.
    file_seen: u32,
    /// Where freeze-aware eviction resumes in this app's anonymous [0] and file [1]
    /// pages (reset on thaw).
    evict_cursor: [u32; 2],
    /// Where the background wakeups are in their passes over the background working
    /// set's anonymous [0] and file [1] pages (`Walk`; reset on death).
    bg_walk: [Walk; 2],
    /// The spread of the background heap set over the populated heap, with the
    /// populated count it was made for (`AppRt::bg_spread`).
    bg_spread: Option<(u32, Spread)>,
    /// A background wakeup part frozen at a refault (`Sim::bg_touches`): it goes on
    /// from the next page when the app is thawed.
    stalled: Option<Stalled>,
    state: AppState,
    oom_adj: i32,
    last_used: Nanos,
    unkillable: bool,
    swappable: bool,
    class: Option<CpuClass>,
    /// Incarnation: bumped when the process dies, so its pending events are void.
    life: u32,
    /// Generation of the app's tick / background chain.
    gen: u32,
    frame_busy: bool,
    launch: Option<Launch>,
    /// A kill's exit still running: the pages it holds until its job ends.
    exit: Option<kill::Exit>,
    rng: FastRng,
}

impl AppRt {
    /// The spread of its background heap set over the populated heap. It depends only
    /// on the populated count and the app's launch key, fixed for the run, so it is
    /// made once for each populated count (a wakeup would otherwise pay a gcd search
    /// and a reciprocal each time).
    fn bg_spread(&mut self) -> Spread {
        match self.bg_spread {
            Some((n, s)) if n == self.populated => s,
            _ => {
                let s = Spread::new(self.populated, splitmix(self.launch_key, BG_SPREAD_KEY));
                self.bg_spread = Some((self.populated, s));
                s
            }
        }
    }
}

/// The rest of a background wakeup part whose app was frozen at one of its faults
/// (cleared when the process dies or is launched).
struct Stalled {
    seg: u32,
    /// The pages it has still to touch, in order.
    left: Vec<u32>,
    /// CPU its faults took so far, and of that the decompression.
    cpu: Nanos,
    compress: Nanos,
}

/// What one reclaim pass did so far.
#[derive(Clone, Copy, Debug, Default)]
struct Evict {
    got: u32,
    /// Of `got`, anonymous pages.
    anon: u64,
    scanned: u64,
    compress: Nanos,
    flash_writes: u64,
}

/// Where the thread doing some work stands: its I/O-wait cursor and extra CPU.
#[derive(Clone, Copy, Debug)]
struct Ctx {
    t: Nanos,
    cpu: Nanos,
    compress: Nanos,
}

/// One simulation run.
pub struct Sim {
    now: Nanos,
    seq: u64,
    queue: BinaryHeap<Reverse<Queued>>,
    pages: PageTable,
    /// The workload's apps, then the device's system processes (`[system]`), which
    /// own pages like apps but are no app to policies, killers or metrics.
    apps: Vec<AppRt>,
    /// How many of `apps` are apps: the system processes are `apps[n_apps..]`.
    n_apps: u16,
    /// What the system's threads touch as their CPU work is served (`hogs.rs`).
    sys_touch: hogs::SystemTouch,
    cpu: Cpu<Cont>,
    cpu_event_at: Option<Nanos>,
    flash: Flash,
    policy: Option<Box<dyn Policy>>,
    setup: Setup,
    device: Device,
    workload: Workload,
    params: BTreeMap<String, Param>,
    seed: u64,
    usable: i64,
    wmark: [i64; 3],
    minfree: Vec<(i32, i64)>,
    /// The LMK looks at free memory only (a policy's kill threshold), not the file cache.
    lmk_free_only: bool,
    zram_ratio: f64,
    compress_ns: u64,
    decompress_ns: u64,
    zram_stored: i64,
    /// [`Sim::zram_pool_pages`] for the `zram_stored` it was last computed at: free
    /// memory is read several times a fault, the pool's size changes far less often.
    zram_pool_memo: std::cell::Cell<(i64, i64)>,
    zram_cap: i64,
    flash_used: i64,
    flash_cap: i64,
    /// Swap readahead from flash: the most slots a swap-in reads (2^page_cluster; 1:
    /// the faulting page alone, as SEAL's SL2 is read), how the window is chosen, and
    /// swapin_nr_pages's state.
    swap_cluster: u32,
    swap_readahead: SwapReadahead,
    ra: Readahead,
    /// Pages reclaim wrote to flash whose writes have not completed: like the kernel's
    /// pages under writeback, they still take memory until then.
    writeback: i64,
    /// Pages the foreground scenario's buffers hold off the LRU (`Foreground::buffers_mib`).
    pinned: i64,
    age: u32,
    kswapd_active: bool,
    /// ActivityManager's previous process: the app the user left last, with its life.
    previous: Option<(u16, u32)>,
    /// Pages every live app's RSS includes from Zygote (the device's `shared_rss_mib`).
    shared_rss: u64,
    /// The kernel's reclaim_stat: pages scanned and rotated (kept or made active) on the
    /// anon [0] and file [1] LRUs, halved as they grow; they steer the anon/file balance.
    recent_scanned: [u64; 2],
    recent_rotated: [u64; 2],
    last_lmk: Option<Nanos>,
    /// The stock LMK's last victim and when it was killed, while its exit runs
    /// (lowmem_deathpending).
    lmk_dying: Option<(u16, Nanos)>,
    /// Kill decisions whose victims are still exiting: when each was taken, its victims
    /// left and their pages, by decision number.
    exit_batches: BTreeMap<u32, (Nanos, u32, u64)>,
    /// The next kill decision's number, and the one a policy's kill set is taking now.
    next_batch: u32,
    kill_batch: Option<u32>,
    fg: Option<u16>,
    /// How long after leaving the foreground a cached app stays active (`RunOptions::bg_window_s`).
    bg_window: Option<Nanos>,
    /// Whether a foreground app nobody uses grows (`RunOptions::no_idle_growth`).
    idle_growth: bool,
    in_use: bool,
    interactive: bool,
    script: Vec<Step>,
    pc: usize,
    rng_bg: FastRng,
    c: Counters,
    base: Counters,
    /// The counters app by app, and their values when the measured part began.
    app_c: Vec<AppCounters>,
    app_base: Vec<AppCounters>,
    measuring: bool,
    flash_base: (u64, u64),
    use_ns: u64,
    /// The measured launches, as the run's record lists them.
    launches: Vec<LaunchLog>,
    pending: Vec<Event>,
    /// Reused buffer of page indices for batched touches.
    scratch: Vec<u32>,
    /// `touch_all`'s list of the accesses that do something.
    live_scratch: Vec<u32>,
    /// The frames rendered, when asked for ([`Sim::log_frames`]): app, start, end.
    frame_log: Option<Vec<(u16, Nanos, Nanos)>>,
    /// The device's render-thread wait per page reclaimed while the foreground renders
    /// (`memory.reclaim_frame_block_us`), and the wait owed and not yet paid.
    frame_block_per_page: Nanos,
    frame_block_owed: Nanos,
    actions: Vec<Action>,
    done: Vec<Cont>,
    busy_sample: (Nanos, f64, u64),
    util: f64,
    ended: bool,
    /// The run stopped at [`HORIZON`] before its workload was over.
    overran: bool,
    /// SEAL's two-level swap, when the policy asks for it.
    seal: Option<seal::SealState>,
    /// ASAP's prepaging, when the policy asks for it.
    asap: Option<asap::AsapState>,
    /// Threads that only take CPU: the system's and cputester's.
    hogs: Vec<hogs::Hog>,
    /// Android 10 lmkd's PSI mode, on devices that run it with Android's killer.
    psi: Option<psi::Lmkd>,
    /// Huawei's RCC thread, on devices whose kernel runs it.
    rcc: Option<rcc::Rcc>,
    /// Reclaim scans the anonymous lists only (RCC's reclaim).
    scan_anon_only: bool,
    /// Draws the gaps between failed high-order allocations (`high_order`).
    rng_high_order: FastRng,
    /// kswapd wakeups for a high-order allocation with kswapd asleep.
    high_order_wakeups: u64,
}

/// The lognormal law of a frame's CPU work with mean `mean_ms` and coefficient of
/// variation `cv`: sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2.
fn frame_law(mean_ms: f64, cv: f64) -> LogNormal<f64> {
    let var = (1.0 + cv * cv).ln();
    LogNormal::new(mean_ms.max(1e-6).ln() - var / 2.0, var.sqrt()).expect("finite mean, positive spread")
}

/// The seeded random stream of one component (xoshiro256++: fast, portable, and
/// fully determined by its seed).
fn stream(seed: u64, component: u64) -> FastRng {
    // splitmix64 of (seed, component) so streams are independent.
    FastRng::seed_from_u64(splitmix(seed, component))
}

/// A draw from the exponential law of mean 1, by inversion: -ln u, u uniform in (0, 1).
fn exp1(rng: &mut FastRng) -> f64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    -u.ln()
}

/// The splitmix64 finaliser of `a` and `b`: well-mixed 64 bits for each pair.
fn splitmix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A working-set page index in `0..n` with the 80/20 skew of program locality: 80% of
/// accesses go to the hottest 20% of the set, the rest spread over the other 80%.
/// Assumption: the classic 80/20 rule; the seeds publish no access distribution.
fn skewed(rng: &mut FastRng, n: u32) -> u32 {
    let hot = (n / 5).max(1);
    // One 64-bit draw: the high half picks hot or cold (80/20), the low half the page
    // by multiply-shift (bias below 2^-32 per page, irrelevant here). The pick selects
    // the part's offset and length by mask, not by a branch, which the CPU would
    // mispredict at a good part of the draws.
    let r = rng.next_u64();
    let hot_pick = n <= hot || (r >> 32) < (u32::MAX as u64 / 5) * 4;
    let cold = (hot_pick as u32).wrapping_sub(1);
    (hot & cold) + below(r as u32, (hot & !cold) | (n.wrapping_sub(hot) & cold))
}

/// Appends `count` draws of [`skewed`] over `0..n`, each plus `base`, to `idx`. The
/// generator is copied into a local for the loop and written back after it, so its
/// state stays in registers: the frame's index draws are a hot loop, and through the
/// `&mut` the compiler stores the state back to memory at every draw.
fn extend_skewed(idx: &mut Vec<u32>, rng: &mut FastRng, count: u32, base: u32, n: u32) {
    let mut r = rng.clone();
    idx.extend((0..count).map(|_| base + skewed(&mut r, n)));
    *rng = r;
}

/// `x.ceil() as i64` (saturating) without libm's `ceil`, a call on the baseline x86-64
/// target: free memory counts the zram pool's pages at every allocation. Truncation
/// is exact, and so is comparing it with `x`, so this is the library's result.
#[inline]
fn ceil_i64(x: f64) -> i64 {
    let t = x as i64;
    if t < i64::MAX && (t as f64) < x {
        t + 1
    } else {
        t
    }
}

/// Maps a uniform 32-bit draw onto `0..n`.
#[inline]
fn below(x: u32, n: u32) -> u32 {
    ((x as u64 * n as u64) >> 32) as u32
}

fn pages_of(mib: f64) -> u32 {
    Pages::from_mib_f64(mib).0 as u32
}

/// A simulation of an embedded device and workload under a policy spec, not yet
/// started: the engine's unit tests drive it step by step.
#[cfg(test)]
pub(crate) fn embedded_sim(device: &str, workload: &str, policy: &str, opts: &RunOptions) -> Sim {
    let cat = Catalog::embedded().unwrap();
    let wl = Workload::load(workload, &cat).unwrap();
    let dev = Device::load(device).unwrap();
    Sim::new(&dev, &wl, &cat, floe_policies::make_spec(policy).unwrap(), opts)
}

/// Ice's video call on the P20 under LRU+CFS with two apps cached, run into its
/// measured part; returns it, the simulated time reached and a cached app.
#[cfg(test)]
pub(crate) fn measuring_sim_with_a_cached_app() -> (Sim, Nanos, u16) {
    let opts = RunOptions { seed: 1, bg_apps: Some(2), ..Default::default() };
    let mut sim = embedded_sim("p20", "ice-video-call", "lru-cfs", &opts);
    let mut t = Nanos::from_secs_f64(1.0);
    while !sim.measuring {
        assert!(sim.run_until(t), "the run ended before its measured part");
        t += Nanos::from_secs_f64(1.0);
    }
    let app = (0..sim.n_apps).find(|&a| sim.apps[a as usize].state == AppState::Cached).expect("a cached app");
    (sim, t, app)
}

/// Checks that a run's inputs fit together (see [`Sim::try_new`]).
fn check(device: &Device, workload: &Workload, catalog: &Catalog, setup: &Setup, opts: &RunOptions) -> Result<(), SimError> {
    let run = |msg: String| Err(SimError::Run(format!("workload `{}` on {}: {msg}", workload.name, device.name)));
    let want = opts.bg_apps.unwrap_or(workload.background.as_ref().map_or(0, |b| b.count));
    let room = workload.background_room(opts.draw_bg);
    if want > room {
        let how = if opts.draw_bg { " (a draw takes apps from the pool alone)" } else { "" };
        return run(format!("{want} background apps asked for, but {}{how}", workload.background_holds(opts.draw_bg)));
    }
    workload.check_run(device, catalog, want, opts.balloon_mib.is_none())?;
    if let Some(b) = opts.balloon_mib.filter(|&b| !device.balloon_fits(b)) {
        return run(format!("a balloon of {} MiB was asked for; {}", num(b), device.balloon_rule()));
    }
    if let Some(p) = opts.cputester_pct.filter(|p| !(p.is_finite() && *p > 0.0 && *p < 100.0)) {
        return run(format!("cputester must take above 0 and below 100 % of the CPU, got {}", num(p)));
    }
    if let Some(w) = opts.bg_window_s.filter(|&w| !bg_window_fits(w)) {
        return run(format!("a background window of {} s was asked for; it must be 0 to {} s (a week)", num(w), crate::config::MAX_RUN_S));
    }
    if let Some(seal) = setup.seal.filter(|_| setup.swap == SwapSetup::TwoLevel) {
        let sl1_max = ZRAM_MAX_PER_RAM * device.memory.ram_mib;
        if let Some(sl1) = seal.sl1_mib.filter(|&x| !(x > 0.0 && x <= sl1_max)) {
            return run(format!(
                "SEAL's sl1 of {} MiB is more than {} MiB, twice the device's RAM (SL1 holds uncompressed pages like zram, and {ZRAM_MAX_WHY})",
                num(sl1),
                num(sl1_max)
            ));
        }
        if let Some(sl2) = seal.sl2_mib.filter(|&x| !(x > 0.0 && x <= MAX_MIB)) {
            return run(format!("SEAL's sl2 of {} MiB is more than {MAX_MIB} MiB ({MAX_MIB_WHY})", num(sl2)));
        }
    }
    // Page ids are 32-bit and app ids 16-bit: every app the run may hold must fit.
    let mut names = workload.app_names();
    names.sort();
    names.dedup();
    let system = device.system.as_ref().map_or(&[][..], |s| &s.process[..]);
    let pages: u64 = names
        .iter()
        .filter_map(|n| catalog.get(n))
        .map(|a| pages_of(a.anon_mib).max(1) as u64 + pages_of(a.file_mib).max(1) as u64)
        .sum::<u64>()
        + system.iter().map(|p| pages_of(p.anon_mib).max(1) as u64 + pages_of(p.file_mib).max(1) as u64).sum::<u64>();
    if names.len() >= u16::MAX as usize || pages >= u32::MAX as u64 {
        return run(format!(
            "its {} apps hold {} MiB together, more than the simulator addresses (65535 apps, 16 TiB)",
            names.len(),
            pages / 256
        ));
    }
    Ok(())
}

impl Sim {
    /// Builds a run after checking that its inputs fit together: no more background
    /// apps asked for than the workload's fixed set and pool hold (the pool alone for a
    /// draw), a balloon (the options' or else the workload's) that leaves the device's
    /// apps more than twice its high watermark, SEAL's SL1 within twice the device's
    /// RAM and SL2 within 1 TiB, the workload's times within the limits, every app in
    /// the catalog.
    pub fn try_new(
        device: &Device,
        workload: &Workload,
        catalog: &Catalog,
        policy: Box<dyn Policy>,
        opts: &RunOptions,
    ) -> Result<Sim, SimError> {
        check(device, workload, &workload.apps_catalog(catalog), &policy.setup(), opts)?;
        Ok(Sim::new(device, workload, catalog, policy, opts))
    }

    /// Builds a run without the checks of [`Sim::try_new`], for inputs known to fit:
    /// a larger balloon is cut to leave the apps twice the high watermark, and fewer
    /// background apps than asked for are cached when the workload has no more.
    /// Background apps are drawn from the workload's pool with the seed.
    pub fn new(device: &Device, workload: &Workload, catalog: &Catalog, policy: Box<dyn Policy>, opts: &RunOptions) -> Sim {
        // The apps as the workload has them (its `[apps]` table).
        let catalog = &*workload.apps_catalog(catalog);
        let setup = policy.setup();
        // zswap's pool allocator in the seeds' kernels is zbud (the 4.x default), which
        // stores at most two compressed pages per page ("the compression ratio will
        // always be 2:1 or worse", Documentation/vm/zswap.txt); zram's zsmalloc packs
        // them densely.
        let zram_ratio = if setup.swap == SwapSetup::Zswap { device.zram.ratio.min(ZBUD_MAX_RATIO) } else { device.zram.ratio };
        let mut rng_wl = stream(opts.seed, 1);
        // Background apps, never the measured ones: the workload's fixed set in order
        // (unless a draw is asked for), the rest a seeded draw from the pool.
        let mut chosen: Vec<String> = Vec::new();
        let has_fixed = workload.background.as_ref().is_some_and(|b| !b.fixed.is_empty());
        let use_fixed = has_fixed && !opts.draw_bg;
        if let Some(bg) = &workload.background {
            let want = opts.bg_apps.unwrap_or(bg.count);
            let fixed = if use_fixed { &bg.fixed[..] } else { &[][..] };
            for n in fixed.iter().filter(|n| !workload.sequence.contains(n)) {
                if chosen.len() < want && !chosen.contains(n) {
                    chosen.push(n.clone());
                }
            }
            let mut pool: Vec<&String> = Vec::new();
            for n in bg.pool.iter().filter(|n| !workload.sequence.contains(n) && !chosen.contains(n)) {
                if !pool.contains(&n) {
                    pool.push(n);
                }
            }
            while chosen.len() < want && !pool.is_empty() {
                let i = rng_wl.gen_range(0..pool.len());
                chosen.push(pool.remove(i).clone());
            }
        }
        let mut names: Vec<String> = chosen.clone();
        for n in &workload.sequence {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        let mut specs: Vec<AppSpec> = names.iter().map(|n| catalog.get(n).expect("workload validated against catalog").clone()).collect();
        let n_apps = specs.len();
        let system = device.system.as_ref().map_or(&[][..], |s| &s.process[..]);
        specs.extend(system.iter().map(hogs::system_spec));
        names.extend(system.iter().map(|p| p.name.clone()));
        let sizes: Vec<(u32, u32)> = specs.iter().map(|s| (pages_of(s.anon_mib).max(1), pages_of(s.file_mib).max(1))).collect();
        // The measured apps of a scenario with foreground churn get its heap and content
        // segments after their own pages.
        let fg_spec = |name: &String| workload.foreground.as_ref().filter(|_| workload.sequence.contains(name));
        let segments: Vec<[u32; 4]> = names
            .iter()
            .zip(&sizes)
            .map(|(n, &(a, f))| {
                let (h, c) = fg_spec(n).map_or((0, 0), churn::Churn::segments);
                [a, f, h, c]
            })
            .collect();
        let (mut pages, bases) = PageTable::with_segments(&segments);
        let flash_read_4k_ns = device.flash.read_4k_us * 1e3;
        let seq_ns_per_page = 4096.0 * 1e9 / (device.flash.seq_read_mib_s * 1024.0 * 1024.0);
        let mut apps: Vec<AppRt> = specs
            .into_iter()
            .enumerate()
            .map(|(i, spec)| {
                let (anon, file) = sizes[i];
                let launch_file = pages_of(spec.launch_file_mib).min(file);
                // A cold launch's CPU is its published launch time less the time to read
                // its launch files on this device's flash (cluster reads), but at least
                // half of it: derived, not fitted.
                let io_ns = (launch_file as f64 / FILE_CLUSTER as f64) * (flash_read_4k_ns + (FILE_CLUSTER - 1) as f64 * seq_ns_per_page);
                let cold = (spec.cold_launch_ms * 1e6 - io_ns).max(spec.cold_launch_ms * 0.5e6);
                let fg = fg_spec(&spec.name);
                AppRt {
                    base: bases[i],
                    anon,
                    file,
                    launch_anon: pages_of(spec.launch_anon_mib).min(anon),
                    launch_file,
                    launch_key: stream(opts.seed, 300 + i as u64).next_u64(),
                    warm_share: invariant_share(pages_of(spec.launch_anon_mib).min(anon), anon),
                    ws_anon: pages_of(spec.ws_anon_mib).min(anon),
                    ws_file: pages_of(spec.ws_file_mib).min(file),
                    bg_touch: pages_of(spec.bg_touch_mib).min(anon),
                    bg_hot_anon: pages_of(spec.bg_touch_mib * BG_WINDOW_S / spec.bg_period_s).min(anon),
                    bg_hot_file: pages_of(spec.bg_touch_mib * BG_WINDOW_S / spec.bg_period_s * BG_HOT_FILE_PER_ANON)
                        .min(pages_of(spec.ws_file_mib).min(file)),
                    cold_cpu: Nanos(cold as u64),
                    warm_cpu: Nanos::from_ms_f64(spec.warm_launch_ms * workload.switch_cpu_share),
                    frame_ms: frame_law(
                        fg.and_then(|f| f.frame_cpu_ms).unwrap_or(spec.frame_cpu_ms),
                        fg.and_then(|f| f.frame_cpu_cv).unwrap_or(FRAME_CPU_CV),
                    ),
                    churn: fg.map(|f| churn::Churn::new(f, anon + file)),
                    populated: 0,
                    file_seen: 0,
                    evict_cursor: [0; 2],
                    bg_walk: [Walk::default(); 2],
                    bg_spread: None,
                    stalled: None,
                    state: AppState::Dead,
                    oom_adj: 1001,
                    last_used: Nanos::ZERO,
                    unkillable: false,
                    swappable: true,
                    class: None,
                    life: 0,
                    gen: 0,
                    frame_busy: false,
                    launch: None,
                    exit: None,
                    rng: stream(opts.seed, 100 + i as u64),
                    spec,
                }
            })
            .collect();
        for (a, p) in apps[n_apps..].iter_mut().zip(system) {
            hogs::system_process(a, p);
        }
        let balloon = opts.balloon_mib.unwrap_or(workload.balloon_mib);
        let m = &device.memory;
        // The system processes' pages come out of the system's reserve onto the LRU.
        let system_pages: i64 = apps[n_apps..].iter().map(|a| i64::from(a.anon + a.file)).sum();
        let usable = pages_of((m.app_mem_mib - balloon).max(m.watermark_high_mib * 2.0)) as i64 + system_pages;
        let seal_cfg = setup.seal.filter(|_| setup.swap == SwapSetup::TwoLevel);
        let zram_cap = match setup.swap {
            SwapSetup::Zram => pages_of(device.zram.size_mib) as i64,
            // SEAL §V-A describes ZSWAP's first level as "a dedicated RAM disk", the
            // architecture of SEAL's own SL1, so it is sized like SL1 (the device's zram
            // size), within the kernel's cap: max_pool_percent of RAM in pool pages,
            // which hold up to zbud's ratio as many.
            SwapSetup::Zswap => {
                let pool_mib = device.memory.ram_mib * ZSWAP_MAX_POOL_PERCENT / 100.0;
                ((pages_of(pool_mib) as f64 * zram_ratio) as i64).min(pages_of(device.zram.size_mib) as i64)
            }
            // SL1 sized like zram: uncompressed pages (its disksize).
            SwapSetup::TwoLevel => pages_of(seal_cfg.and_then(|c| c.sl1_mib).unwrap_or(device.zram.size_mib)) as i64,
            _ => 0,
        };
        let swap_mib = device.flash.swap_mib.unwrap_or(FLASH_SWAP_MIB);
        let flash_cap = match setup.swap {
            SwapSetup::Flash | SwapSetup::Zswap => pages_of(swap_mib) as i64,
            // SL2 holds compressed pages (SEAL §IV-D), so its size counts compressed bytes.
            SwapSetup::TwoLevel => (pages_of(seal_cfg.and_then(|c| c.sl2_mib).unwrap_or(swap_mib)) as f64 * zram_ratio) as i64,
            _ => 0,
        };
        // Swap readahead reads the slots around a faulting one: the kernel's flash swap
        // (plain, or zswap's writeback) keeps slots; SEAL's SL2 is read page by page.
        let swap_cluster = match setup.swap {
            SwapSetup::TwoLevel => 1,
            _ => 1 << device.flash.page_cluster.unwrap_or(crate::config::DEFAULT_PAGE_CLUSTER),
        };
        if swap_cluster > 1 && flash_cap > 0 {
            pages.track_swap_slots(flash_cap as u32);
        }
        let seal = seal_cfg.map(|c| {
            pages.track_sl1_unloadable();
            let anon: Vec<u32> = apps.iter().map(|a| a.anon).collect();
            seal::SealState::new(c, &anon, device.flash.read_4k_us * 1e3, stream(opts.seed, 3))
        });
        let asap = setup.prepage.map(|c| {
            let sizes: Vec<(u32, u32, u32)> = apps.iter().map(|a| (a.anon, a.file, a.launch_file)).collect();
            asap::AsapState::new(c, &sizes)
        });
        // Script: background apps are launched and used, then the measured sequence.
        let mut script = Vec::new();
        if let Some(bg) = &workload.background {
            for n in &chosen {
                let app = names.iter().position(|x| x == n).unwrap() as u16;
                script.push(Step::Launch { app, round: 0, measured: false });
                script.push(Step::Use { secs: bg.use_s, interactive: false, measured: false });
            }
        }
        script.push(Step::MeasureStart);
        let mut rng_order = stream(opts.seed, 4);
        for round in 0..workload.rounds {
            let mut order: Vec<&String> = workload.sequence.iter().collect();
            if opts.shuffle_rounds {
                order.shuffle(&mut rng_order);
            }
            for n in order {
                let app = names.iter().position(|x| x == n).unwrap() as u16;
                script.push(Step::Launch { app, round, measured: true });
                script.push(Step::Use { secs: workload.use_s, interactive: workload.interactive, measured: true });
                if workload.idle_s > 0.0 {
                    script.push(Step::Home { secs: workload.idle_s });
                }
            }
        }
        let mut params = BTreeMap::new();
        if workload.background.is_some() {
            params.insert("bg_apps".to_string(), Param::Int(chosen.len() as i64));
            params.insert("bg_set".to_string(), Param::Text(chosen.join(",")));
            if has_fixed {
                params.insert("bg_fixed".to_string(), Param::Bool(use_fixed));
            }
        }
        params.insert("balloon_mib".to_string(), Param::Float(balloon));
        if opts.shuffle_rounds {
            params.insert("shuffle_rounds".to_string(), Param::Bool(true));
        }
        if let Some(w) = opts.bg_window_s {
            params.insert("bg_window_s".to_string(), Param::Float(w));
        }
        if opts.no_idle_growth {
            params.insert("idle_growth".to_string(), Param::Bool(false));
        }
        let sys_touch = hogs::SystemTouch::new(device.system.as_ref(), &apps[n_apps..]);
        let app_c = vec![AppCounters::default(); apps.len()];
        let mut sim = Sim {
            now: Nanos::ZERO,
            seq: 0,
            queue: BinaryHeap::new(),
            pages,
            apps,
            n_apps: n_apps as u16,
            sys_touch,
            cpu: Cpu::with_capacities(
                device.cpu.cores,
                BgGroup { shares: device.cpu.bg_shares, cores: device.cpu.bg_cores },
                device.cpu.big_cores.unwrap_or(device.cpu.cores),
                device.cpu.little_capacity.unwrap_or(1.0),
            ),
            cpu_event_at: None,
            flash: Flash::new(&device.flash),
            policy: Some(policy),
            setup,
            device: device.clone(),
            workload: workload.clone(),
            params,
            seed: opts.seed,
            usable,
            wmark: [pages_of(m.watermark_min_mib) as i64, pages_of(m.watermark_low_mib) as i64, pages_of(m.watermark_high_mib) as i64],
            lmk_free_only: false,
            minfree: m.minfree.iter().map(|&(adj, mib)| (adj, pages_of(mib) as i64)).collect(),
            zram_ratio,
            compress_ns: (device.zram.compress_us_per_page * 1e3) as u64,
            decompress_ns: (device.zram.decompress_us_per_page * 1e3) as u64,
            zram_stored: 0,
            zram_pool_memo: std::cell::Cell::new((0, 0)),
            zram_cap,
            flash_used: 0,
            flash_cap,
            swap_cluster,
            swap_readahead: device.flash.swap_readahead.unwrap_or_default(),
            ra: Readahead::default(),
            writeback: 0,
            pinned: 0,
            age: 0,
            kswapd_active: false,
            previous: None,
            shared_rss: pages_of(device.memory.shared_rss_mib) as u64,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            last_lmk: None,
            lmk_dying: None,
            exit_batches: BTreeMap::new(),
            next_batch: 0,
            kill_batch: None,
            fg: None,
            bg_window: opts.bg_window_s.map(Nanos::from_secs_f64),
            idle_growth: !opts.no_idle_growth,
            in_use: false,
            interactive: false,
            script,
            pc: 0,
            rng_bg: stream(opts.seed, 2),
            c: Counters::default(),
            base: Counters::default(),
            app_base: app_c.clone(),
            app_c,
            measuring: false,
            flash_base: (0, 0),
            use_ns: 0,
            launches: Vec::new(),
            pending: Vec::new(),
            scratch: Vec::new(),
            live_scratch: Vec::new(),
            frame_log: None,
            frame_block_per_page: Nanos((m.reclaim_frame_block_us.unwrap_or(0.0) * 1e3).round() as u64),
            frame_block_owed: Nanos::ZERO,
            actions: Vec::new(),
            done: Vec::new(),
            busy_sample: (Nanos::ZERO, 0.0, 0),
            util: 0.0,
            ended: false,
            overran: false,
            seal,
            asap,
            psi: None,
            rcc: device.memory.rcc.then(|| rcc::Rcc::new(device.memory.ram_mib)),
            scan_anon_only: false,
            rng_high_order: stream(opts.seed, 5),
            high_order_wakeups: 0,
            hogs: hogs::hogs(opts.seed, device.cpu.cores, device.cpu.system_load_pct, opts.cputester_pct),
        };
        sim.boot_system();
        sim.start_hogs();
        if let Some(p) = opts.cputester_pct {
            sim.params.insert("cputester_pct".to_string(), Param::Float(p));
        }
        if let Some(t) = sim.setup.swap_threshold {
            let low = t.0 as i64;
            sim.wmark = [low * 4 / 5, low, low * 6 / 5];
        }
        if let Some(t) = sim.setup.kill_threshold {
            // One level: any app but the foreground (oom_adj above 0), on free memory alone.
            sim.minfree = vec![(1, t.0 as i64)];
            sim.lmk_free_only = true;
        }
        if device.memory.lmkd.on_psi() && sim.setup.lmk == LmkMode::Android && sim.setup.kill_threshold.is_none() {
            sim.psi = Some(psi::Lmkd::new(device.memory.lmkd == LmkdMode::PsiMinfree));
            // Recorded where lmkd runs (not where a policy switches the killer off).
            sim.params.insert("lmkd".to_string(), Param::Text(device.memory.lmkd.name().into()));
            sim.push(psi::CHECK, Ev::Psi);
        }
        if sim.rcc.is_some() {
            sim.push(Nanos::ZERO, Ev::RccWake);
        }
        sim.schedule_high_order();
        sim.push(Nanos::ZERO, Ev::Step);
        if let Some(t) = sim.setup.tick {
            sim.push(t, Ev::PolicyTick);
        }
        sim
    }

    /// `d` from now, at most the end of time (u64's largest).
    fn after(&self, d: Nanos) -> Nanos {
        Nanos(self.now.0.saturating_add(d.0))
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse(Queued { at, seq: self.seq, ev }));
    }

    /// Runs the whole workload and returns its record (of what happened up to
    /// [`HORIZON`] if the run stopped there: see [`Sim::overran`]).
    pub fn run(mut self) -> RunRecord {
        self.run_to_end();
        self.record()
    }

    /// Runs until the workload script is finished.
    pub fn run_to_end(&mut self) {
        while self.run_until(Nanos(u64::MAX)) {}
    }

    /// Runs every event before `t`; returns false once the workload has finished, or
    /// the run has stopped at [`HORIZON`] ([`Sim::overran`]).
    pub fn run_until(&mut self, t: Nanos) -> bool {
        while !self.ended {
            match self.queue.peek() {
                // The earliest event is past the horizon, and so is the rest of the run.
                Some(Reverse(q)) if q.at > HORIZON => {
                    self.overran = true;
                    self.ended = true;
                    break;
                }
                Some(Reverse(q)) if q.at < t => {}
                Some(_) => return true,
                None => {
                    self.ended = true;
                    break;
                }
            }
            let Reverse(q) = self.queue.pop().expect("peeked");
            self.now = q.at;
            self.handle(q.ev);
            self.flush_policy();
            self.sync_cpu();
        }
        false
    }

    /// Whether the run stopped at [`HORIZON`] before its workload was over.
    pub fn overran(&self) -> bool {
        self.overran
    }

    /// The run's record, an error if it stopped at [`HORIZON`].
    pub(crate) fn finish(&self) -> Result<RunRecord, SimError> {
        if self.overran {
            return Err(SimError::Run(format!(
                "workload `{}` on {}: the run reached {:.0} years of simulated time, where the simulator stops (a launch, CPU job or flash queue would last longer)",
                self.workload.name,
                self.device.name,
                HORIZON.as_secs_f64() / (365.25 * 86_400.0)
            )));
        }
        Ok(self.record())
    }

    /// Page accesses simulated so far (for the benchmark).
    pub fn touches(&self) -> u64 {
        self.c.touches
    }

    /// LRU pages scanned by reclaim so far (for the benchmark).
    pub fn scanned(&self) -> u64 {
        self.c.scanned
    }

    /// Pages reclaimed so far.
    pub fn reclaimed(&self) -> u64 {
        self.c.reclaimed
    }

    /// Simulated time so far.
    pub fn now_ns(&self) -> Nanos {
        self.now
    }

    /// The run's state now: memory gauges and counters since the run began.
    /// Keeps every frame rendered from now on, for [`Sim::take_frames`] (a trace's frame
    /// slices); a run that does not ask keeps none.
    pub fn log_frames(&mut self) {
        self.frame_log.get_or_insert_with(Vec::new);
    }

    /// The frames logged so far: app, start and end in simulated seconds, in the order
    /// they ended.
    pub fn take_frames(&mut self) -> Vec<(String, f64, f64)> {
        let log = self.frame_log.as_mut().map(std::mem::take).unwrap_or_default();
        let s = |t: Nanos| t.0 as f64 / 1e9;
        log.into_iter().map(|(app, a, b)| (self.apps[app as usize].spec.name.clone(), s(a), s(b))).collect()
    }

    pub fn snapshot(&self) -> Snapshot {
        let apps = &self.apps[..self.n_apps as usize];
        let alive = apps.iter().filter(|a| a.state != AppState::Dead).count() as u32;
        let frozen = apps.iter().filter(|a| a.state == AppState::Frozen).count() as u32;
        let c = &self.c;
        Snapshot {
            t: self.now,
            measuring: self.measuring,
            fg_app: self.fg.map(|a| self.apps[a as usize].spec.name.clone()),
            free_pages: self.free(),
            anon_lru_pages: (self.pages.list_len(Loc::InactiveAnon) + self.pages.list_len(Loc::ActiveAnon)) as u64
                + self.pages.total(Loc::Unevictable),
            file_lru_pages: self.file_lru() as u64,
            zram_stored_pages: self.zram_stored as u64,
            zram_pool_pages: self.zram_pool_pages() as u64,
            flash_swap_pages: self.flash_used as u64,
            writeback_pages: self.writeback as u64,
            apps_alive: alive,
            apps_frozen: frozen,
            frames: c.frames,
            janky_frames: c.janky,
            refaults: c.refaults,
            reclaimed_pages: c.reclaimed,
            direct_reclaimed_pages: c.direct_reclaimed,
            reclaimed_anon_pages: c.reclaimed_anon,
            kills: c.kills,
            freezes: c.freezes,
            thaws: c.thaws,
            cpu_app_ns: c.cpu_app_ns,
            cpu_kswapd_ns: c.cpu_kswapd_ns,
            cpu_compress_ns: c.cpu_compress_ns,
            cpu_system_ns: c.cpu_system_ns,
            cpu_tester_ns: c.cpu_tester_ns,
            cpu_busy_ns: self.cpu.busy_ns_at(self.now) as u64,
            flash_read_bytes: self.flash.read_bytes,
            flash_write_bytes: self.flash.write_bytes,
        }
    }

    /// Checks the page table and memory accounting (used by property tests).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.pages.check()?;
        let zram: i64 = (0..self.apps.len()).map(|a| self.pages.count(a as u16, Loc::Zram) as i64).sum();
        // Flash swap in use: pages there, and read-ahead pages still holding their slots.
        let flash: i64 = (0..self.apps.len()).map(|a| self.pages.count(a as u16, Loc::Flash) as i64).sum::<i64>()
            + (0..self.pages.len() as u32).filter(|&p| self.pages.in_swap_cache(p)).count() as i64;
        if zram != self.zram_stored || flash != self.flash_used {
            return Err(format!("swap accounting: zram {zram} vs {}, flash {flash} vs {}", self.zram_stored, self.flash_used));
        }
        if self.zram_stored > self.zram_cap
            || self.flash_used > self.flash_cap
            || !(self.swap_slots_left() || self.zram_stored + self.flash_used == self.flash_cap)
        {
            return Err("swap over capacity".into());
        }
        if self.seal.is_some() {
            // LLR: only least-launch-required pages (weight 0) ever go to SL2.
            if let Some(p) = (0..self.pages.len() as u32).find(|&p| self.pages.loc(p) == Loc::Flash && self.pages.llr_weight(p) != 0) {
                return Err(format!("SEAL: page {p} is in SL2 with LLR weight {}", self.pages.llr_weight(p)));
            }
            if let Some((app, c)) = self.seal_unloadable_behind_scan().first() {
                return Err(format!(
                    "SEAL: page {c} of {} may go to SL2 but lies behind the unloader's scan",
                    self.apps[*app as usize].spec.name
                ));
            }
        }
        for (i, a) in self.apps.iter().enumerate() {
            let i = i as u16;
            let anon_in_use: u32 = [Loc::InactiveAnon, Loc::ActiveAnon, Loc::Zram, Loc::Flash, Loc::Unevictable]
                .iter()
                .map(|&l| self.pages_of_app_kind(i, l, true))
                .sum();
            // A killed process still exiting holds at most the heap it had.
            let exiting = a.exit.map_or(0, |e| e.populated);
            if a.state == AppState::Dead && anon_in_use > exiting {
                return Err(format!("dead app {} holds {anon_in_use} anon pages, its exit {exiting}", a.spec.name));
            }
            let heap = a.churn.as_ref().map_or(0, |c| c.heap_used);
            if anon_in_use > a.populated.max(exiting) + heap {
                return Err(format!("app {} holds {anon_in_use} anon pages but allocated {}", a.spec.name, a.populated + heap));
            }
        }
        Ok(())
    }

    fn pages_of_app_kind(&self, app: u16, l: Loc, anon: bool) -> u32 {
        // Anon and file pages never share a list location except Absent.
        let is_anon_loc = matches!(l, Loc::InactiveAnon | Loc::ActiveAnon | Loc::Zram | Loc::Flash | Loc::Unevictable);
        if is_anon_loc == anon {
            self.pages.count(app, l)
        } else {
            0
        }
    }

    // ----- memory accounting -----

    fn resident(&self) -> i64 {
        [Loc::InactiveAnon, Loc::ActiveAnon, Loc::InactiveFile, Loc::ActiveFile].iter().map(|&l| self.pages.list_len(l) as i64).sum::<i64>()
            + self.pages.total(Loc::Unevictable) as i64
    }

    fn zram_pool_pages(&self) -> i64 {
        let (stored, pages) = self.zram_pool_memo.get();
        if stored == self.zram_stored {
            return pages;
        }
        let pages = ceil_i64(self.zram_stored as f64 / self.zram_ratio);
        self.zram_pool_memo.set((self.zram_stored, pages));
        pages
    }

    /// si_mem_available (4.x): free less the reserve (the high watermark, with no
    /// lowmem_reserve on one zone), plus the page cache less what reclaim would leave.
    fn mem_available(&self) -> u64 {
        let free = self.free().max(0) as u64;
        let cache = (self.pages.list_len(Loc::ActiveFile) + self.pages.list_len(Loc::InactiveFile)) as u64;
        (free + cache).saturating_sub(self.wmark[2] as u64 + (cache / 2).min(self.wmark[1] as u64))
    }

    fn free(&self) -> i64 {
        self.usable - self.resident() - self.zram_pool_pages() - self.writeback - self.pinned
    }

    fn file_lru(&self) -> i64 {
        (self.pages.list_len(Loc::InactiveFile) + self.pages.list_len(Loc::ActiveFile)) as i64
    }

    // ----- the event loop -----

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Step => self.step(),
            Ev::CpuDone => self.cpu_done(),
            Ev::Tick { app, life, gen } => self.tick(app, life, gen),
            Ev::BgWake { app, life, gen } => self.bg_wake(app, life, gen),
            Ev::BgResume { app, gen } => self.bg_resume(app, gen),
            Ev::Job(job) => {
                let JobEv { work, app, cont } = *job;
                self.add_job(work, app, cont)
            }
            Ev::PolicyTick => {
                // Utilisation over the last interval: CPU time brought up to now, and
                // flash time served so far (queued work not yet served excluded).
                self.cpu.sync(self.now);
                let flash_served = self.flash.served_ns(self.now);
                let dt = self.now.0.saturating_sub(self.busy_sample.0 .0).max(1);
                let busy = ((self.cpu.busy_core_ns - self.busy_sample.1) / (dt as f64 * self.cpu.cores() as f64)).clamp(0.0, 1.0);
                let io = (flash_served.saturating_sub(self.busy_sample.2) as f64 / dt as f64).clamp(0.0, 1.0);
                self.util = (busy + io * (1.0 - busy)).clamp(0.0, 1.0);
                self.busy_sample = (self.now, self.cpu.busy_core_ns, flash_served);
                self.pending.push(Event::Tick);
                if let Some(t) = self.setup.tick {
                    self.push(self.after(t), Ev::PolicyTick);
                }
            }
            Ev::Kswapd => self.kswapd_batch(),
            Ev::RccWake => self.rcc_wake(),
            Ev::HighOrderWake => self.high_order_wake(),
            Ev::RccCheck { running } => self.rcc_check(running),
            Ev::HogWake { thread } => self.hog_wake(thread),
            Ev::SealUnload => self.seal_unload(),
            Ev::SealUnloadDone => self.seal_unload_done(),
            Ev::HplLoaded { app, life } => self.seal_hpl_loaded(app, life),
            Ev::WritebackDone { n } => self.writeback -= n as i64,
            Ev::AsapFileRead { app, life, start, len } => self.asap_file_read(app, life, start, len),
            Ev::AsapDispatch => self.asap_dispatch(),
            Ev::Psi => self.psi_check(),
        }
    }

    fn sync_cpu(&mut self) {
        if let Some(t) = self.cpu.next_completion() {
            if self.cpu_event_at != Some(t) {
                self.cpu_event_at = Some(t);
                self.push(t, Ev::CpuDone);
            }
        }
    }

    fn cpu_done(&mut self) {
        if self.cpu_event_at == Some(self.now) {
            self.cpu_event_at = None;
        }
        let mut done = std::mem::take(&mut self.done);
        self.cpu.finish(self.now, &mut done);
        for c in done.drain(..) {
            match c {
                Cont::Frame { app, life, start, render } => self.frame_done(app, life, start, render),
                Cont::LaunchSeg { app, life } => self.launch_seg_done(app, life),
                Cont::Bg { app, life, gen, seg } => {
                    if self.apps[app as usize].life == life {
                        if seg + 1 < BG_SEGMENTS {
                            self.bg_segment(app, life, gen, seg + 1);
                        } else {
                            self.schedule_bg(app, gen);
                        }
                    }
                }
                Cont::Kswapd => self.kswapd_batch(),
                Cont::Rcc => self.rcc_slept(),
                Cont::Hog { thread } => self.hog_done(thread),
                Cont::Prepage { app, life, batch } => self.asap_batch_done(app, life, batch),
                Cont::Exit { app, life } => self.exit_done(app, life),
            }
        }
        self.done = done;
    }

    /// Android's background scheduling group holds cached apps; perceptible ones (music,
    /// navigation) stay in the default group (ProcessList's SCHED_GROUP_DEFAULT).
    fn in_bg_group(&self, app: u16) -> bool {
        let a = &self.apps[app as usize];
        matches!(a.state, AppState::Cached | AppState::Frozen) && !a.spec.perceptible && self.fg != Some(app)
    }

    fn weight_of(&self, app: u16) -> u32 {
        let a = &self.apps[app as usize];
        if let Some(c) = a.class {
            return cpu::weight(c);
        }
        let fg = self.fg == Some(app);
        match (self.setup.cpu, fg) {
            (CpuMode::FgBoost, true) => cpu::WEIGHT_BOOSTED,
            _ => cpu::WEIGHT_NORMAL,
        }
    }

    /// Starts a CPU job now, or when `ctx.t` (its I/O wait) is over.
    fn start_job(&mut self, ctx: Ctx, base_work: Nanos, app: Option<u16>, cont: Cont) {
        let work = base_work + ctx.cpu;
        match app {
            Some(a) => {
                self.c.cpu_app_ns += work.0;
                self.app_c[a as usize].cpu_ns += work.0;
            }
            None => self.c.cpu_kswapd_ns += work.0,
        }
        self.c.cpu_compress_ns += ctx.compress.0;
        if ctx.t > self.now {
            self.push(ctx.t, Ev::Job(Box::new(JobEv { work, app, cont })));
        } else {
            self.add_job(work, app, cont);
        }
    }

    fn add_job(&mut self, work: Nanos, app: Option<u16>, cont: Cont) {
        let (weight, paused) = match app {
            Some(a) => {
                let life_ok = match &cont {
                    Cont::Frame { life, .. } | Cont::LaunchSeg { life, .. } | Cont::Bg { life, .. } => *life == self.apps[a as usize].life,
                    Cont::Kswapd | Cont::Rcc | Cont::Hog { .. } | Cont::Exit { .. } => true,
                    Cont::Prepage { life, .. } => *life == self.apps[a as usize].life,
                };
                if !life_ok {
                    return;
                }
                (self.weight_of(a), self.apps[a as usize].state == AppState::Frozen)
            }
            None => (cpu::WEIGHT_NORMAL, false),
        };
        let bg = app.is_some_and(|a| self.in_bg_group(a));
        self.cpu.add(self.now, work, weight, bg, app, paused, cont);
    }

    // ----- the workload script -----

    fn step(&mut self) {
        self.in_use = false;
        let Some(step) = self.script.get(self.pc).cloned() else {
            self.ended = true;
            return;
        };
        self.pc += 1;
        match step {
            Step::MeasureStart => {
                self.measuring = true;
                self.base = self.c;
                self.app_base.clone_from(&self.app_c);
                self.flash_base = (self.flash.read_bytes, self.flash.write_bytes);
                self.push(self.now, Ev::Step);
            }
            Step::Launch { app, round, measured } => self.launch(app, round, measured),
            Step::Use { secs, interactive, measured } => {
                self.in_use = true;
                self.interactive = interactive;
                if measured && interactive {
                    self.use_ns = self.use_ns.saturating_add(Nanos::from_secs_f64(secs).0);
                }
                self.push(self.after(Nanos::from_secs_f64(secs)), Ev::Step);
            }
            Step::Home { secs } => {
                if let Some(prev) = self.fg.take() {
                    self.cpu.set_top(self.now, None);
                    self.send_to_background(prev);
                    self.pending.push(Event::AppSwitch { from: Some(AppId(prev)), to: None });
                }
                self.recompute_adj();
                self.push(self.after(Nanos::from_secs_f64(secs)), Ev::Step);
            }
        }
    }

    fn send_to_background(&mut self, app: u16) {
        // The app the user leaves becomes ActivityManager's previous process once its
        // activity stops (updatePreviousProcessLocked: not the home app, and only while
        // this process lives).
        self.previous = Some((app, self.apps[app as usize].life));
        let a = &mut self.apps[app as usize];
        a.last_used = self.now;
        if matches!(a.state, AppState::Foreground | AppState::Launching) {
            self.churn_pause(app);
            let a = &mut self.apps[app as usize];
            a.state = AppState::Cached;
            a.gen += 1;
            let gen = a.gen;
            self.seal_arm();
            let (w, bg) = (self.weight_of(app), self.in_bg_group(app));
            self.cpu.set_weight(self.now, app, w, bg);
            self.schedule_bg(app, gen);
        }
    }

    /// Android's oom_adj rules: foreground 0, perceptible 200, the previous app 700
    /// (PREVIOUS_APP_ADJ, the app the user left last while its process lives), the other
    /// cached apps by recency at the device's cached levels (`CachedAdj`).
    fn recompute_adj(&mut self) {
        let mut cached: Vec<(Reverse<Nanos>, u16)> = Vec::new();
        let previous = self.previous.filter(|&(p, life)| self.apps[p as usize].life == life).map(|(p, _)| p);
        for (i, a) in self.apps[..self.n_apps as usize].iter_mut().enumerate() {
            a.oom_adj = match a.state {
                AppState::Dead => 1001,
                _ if self.fg == Some(i as u16) => 0,
                _ if a.spec.perceptible => 200,
                _ if previous == Some(i as u16) => floe_core::PREVIOUS_APP_ADJ,
                _ => {
                    cached.push((Reverse(a.last_used), i as u16));
                    continue;
                }
            };
        }
        cached.sort();
        let levels = self.device.memory.cached_adj.levels(cached.len());
        for ((_, i), adj) in cached.into_iter().zip(levels) {
            self.apps[i as usize].oom_adj = adj;
        }
    }

    fn launch(&mut self, app: u16, round: u32, measured: bool) {
        // The process a kill left exiting is gone before its app starts again.
        self.finish_exit(app);
        let prev = self.fg;
        if let Some(p) = prev.filter(|&p| p != app) {
            self.send_to_background(p);
        }
        let kind = if self.apps[app as usize].state == AppState::Dead { LaunchKind::Cold } else { LaunchKind::Warm };
        // The policy hears of the launch before it begins (Ice thaws here).
        self.fg = Some(app);
        self.frame_block_owed = Nanos::ZERO;
        self.cpu.set_top(self.now, self.fg);
        // ActivityManager re-ranks the processes as the activity resumes: the policy
        // hears of the switch with the app that left at its cached level.
        self.recompute_adj();
        self.pending.push(Event::LaunchStarted { app: AppId(app), kind });
        self.pending.push(Event::AppSwitch { from: prev.map(AppId), to: Some(AppId(app)) });
        self.flush_policy();
        let a = &mut self.apps[app as usize];
        if a.state == AppState::Dead {
            a.state = AppState::Launching;
            a.populated = 0;
            self.pending.push(Event::AppStarted { app: AppId(app) });
        } else {
            if a.state == AppState::Frozen {
                // A launch always runs the app: thaw it if the policy did not.
                self.thaw(app);
            }
            self.apps[app as usize].state = AppState::Launching;
        }
        let a = &mut self.apps[app as usize];
        a.gen += 1;
        // A background wakeup frozen part-way ends with the launch.
        a.stalled = None;
        // Every launch reads the same launch files (DESIGN.md: a stable file part; ASAP
        // Fig. 4.1 finds three quarters of a switch's file pages in 9-10 of 10 switches).
        // A cold launch builds the anonymous launch set from scratch, the first
        // `launch_anon` pages of the heap; a warm one touches the invariant share of
        // that set again and, for the rest, pages that depend on the app's context,
        // drawn as one window of its allocated heap.
        let anon_set = match kind {
            LaunchKind::Cold => LaunchSet::cold(a.launch_anon),
            LaunchKind::Warm => LaunchSet::warm(a.launch_anon, a.populated, a.launch_key, a.warm_share, &mut a.rng),
        };
        let cpu_total = if kind == LaunchKind::Cold { a.cold_cpu } else { a.warm_cpu };
        a.launch = Some(Launch {
            kind,
            start: self.now,
            seg: 0,
            cpu_per_seg: Nanos(cpu_total.0 / LAUNCH_SEGMENTS as u64),
            anon: anon_set,
            measured,
            round,
            busy0: self.cpu.busy_ns_at(self.now),
            read0: self.flash.read_bytes,
        });
        let (w, bg) = (self.weight_of(app), self.in_bg_group(app));
        self.cpu.set_weight(self.now, app, w, bg);
        self.recompute_adj();
        if kind == LaunchKind::Warm {
            self.seal_launch_started(app);
            self.asap_switch_start(app);
        }
        self.launch_seg(app);
    }

    fn launch_seg(&mut self, app: u16) {
        let a = &self.apps[app as usize];
        let l = a.launch.clone().expect("launching");
        let (s, n) = (l.seg, LAUNCH_SEGMENTS);
        let life = a.life;
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        let base = a.base;
        for i in (a.launch_file * s / n)..(a.launch_file * (s + 1) / n) {
            let f = self.apps[app as usize].anon + i;
            let resident = self.pages.loc(base + f).resident();
            self.touch(app, f, &mut ctx);
            self.asap_touch(app, f, resident);
        }
        for i in l.anon.segment(s, n) {
            let a = &mut self.apps[app as usize];
            if i >= a.populated {
                a.populated = i + 1;
            }
            let resident = self.pages.loc(base + i).resident();
            self.touch(app, i, &mut ctx);
            self.seal_requested(app, i);
            self.asap_touch(app, i, resident);
        }
        if self.apps[app as usize].life == life {
            self.start_job(ctx, l.cpu_per_seg, Some(app), Cont::LaunchSeg { app, life });
        }
    }

    fn launch_seg_done(&mut self, app: u16, life: u32) {
        if self.apps[app as usize].life != life {
            return;
        }
        let Some(l) = self.apps[app as usize].launch.as_mut() else {
            return;
        };
        l.seg += 1;
        if l.seg < LAUNCH_SEGMENTS {
            self.launch_seg(app);
            return;
        }
        let l = self.apps[app as usize].launch.take().unwrap();
        let latency = self.now - l.start;
        if l.measured {
            let ns = latency.0.max(1) as f64;
            self.launches.push(LaunchLog {
                app: self.apps[app as usize].spec.name.clone(),
                kind: l.kind,
                ms: latency.as_ms_f64(),
                round: l.round,
                cpu_share: (self.cpu.busy_ns_at(self.now) - l.busy0) / (ns * f64::from(self.cpu.cores())),
                read_bytes_s: (self.flash.read_bytes - l.read0) as f64 / (ns / 1e9),
            });
        }
        self.seal_launch_done(app, l.kind == LaunchKind::Warm, latency.as_ms_f64());
        self.asap_switch_end(app);
        let a = &mut self.apps[app as usize];
        a.state = AppState::Foreground;
        a.gen += 1;
        let gen = a.gen;
        self.pending.push(Event::LaunchDone { app: AppId(app), kind: l.kind, latency });
        // The foreground app's render/idle loop starts at the next vsync.
        let next = Nanos(self.now.0.div_ceil(VSYNC.0) * VSYNC.0);
        self.push(next, Ev::Tick { app, life, gen });
        self.push(self.now, Ev::Step);
    }

    // ----- the foreground app -----

    fn tick(&mut self, app: u16, life: u32, gen: u32) {
        let a = &self.apps[app as usize];
        if a.life != life || a.gen != gen || a.state != AppState::Foreground || self.fg != Some(app) {
            return;
        }
        if a.frame_busy {
            // The previous frame is still running: this vsync is missed.
            self.push(self.now + VSYNC, Ev::Tick { app, life, gen });
            return;
        }
        let render = self.in_use && self.interactive;
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        // Grow towards the full footprint: allocate heap, map the rest of the files.
        let per_tick = match (render, self.idle_growth) {
            (true, _) => POPULATE_PAGES_PER_S / 60,
            (false, true) => POPULATE_PAGES_PER_S / 10,
            (false, false) => 0,
        };
        let (pop, anon, seen, file) = (a.populated, a.anon, a.file_seen, a.file);
        let grow_to = (pop + per_tick).min(anon);
        for i in pop..grow_to {
            self.apps[app as usize].populated = i + 1;
            self.touch(app, i, &mut ctx);
        }
        let seen_to = (seen + per_tick).min(file);
        for i in seen..seen_to {
            self.touch(app, anon + i, &mut ctx);
        }
        self.apps[app as usize].file_seen = seen_to;
        let work = if render {
            let a = &self.apps[app as usize];
            let (wa, wf) = (a.ws_anon.min(a.populated), a.ws_file);
            let (na, nf) = (a.ws_anon.div_ceil(60), a.ws_file.div_ceil(60));
            let file0 = a.anon;
            let mut idx = std::mem::take(&mut self.scratch);
            let rng = &mut self.apps[app as usize].rng;
            if wa > 0 {
                extend_skewed(&mut idx, rng, na, 0, wa);
            }
            if wf > 0 {
                extend_skewed(&mut idx, rng, nf, file0, wf);
            }
            self.touch_all(app, &mut idx, &mut ctx);
            self.scratch = idx;
            self.churn_frame(app, &mut ctx);
            if self.apps[app as usize].life != life {
                return;
            }
            let a = &mut self.apps[app as usize];
            Nanos::from_ms_f64(a.frame_ms.sample(&mut a.rng))
        } else {
            Nanos::ZERO
        };
        if self.apps[app as usize].life != life {
            return;
        }
        if render {
            // The wait reclaim owes the render thread, at most a vsync period a frame,
            // so a burst of reclaim slows the frames that follow it.
            let wait = self.frame_block_owed.min(VSYNC);
            self.frame_block_owed -= wait;
            ctx.t += wait;
        }
        self.apps[app as usize].frame_busy = true;
        self.start_job(ctx, work, Some(app), Cont::Frame { app, life, start: self.now, render });
    }

    fn frame_done(&mut self, app: u16, life: u32, start: Nanos, render: bool) {
        let a = &mut self.apps[app as usize];
        if a.life != life {
            return;
        }
        a.frame_busy = false;
        if render {
            self.c.frames += 1;
            self.c.janky += (self.now - start > ALERT) as u64;
            if let Some(log) = self.frame_log.as_mut() {
                log.push((app, start, self.now));
            }
        }
        let gen = a.gen;
        let next = if render { Nanos((self.now.0 / VSYNC.0 + 1) * VSYNC.0) } else { (start + IDLE_TICK).max(self.now) };
        self.push(next, Ev::Tick { app, life, gen });
    }

    // ----- background activity -----

    fn schedule_bg(&mut self, app: u16, gen: u32) {
        let a = &self.apps[app as usize];
        if a.gen != gen || a.state != AppState::Cached || !self.workload.background_activity || self.past_bg_window(a) {
            return;
        }
        let after = Nanos::from_secs_f64(a.spec.bg_period_s * exp1(&mut self.rng_bg));
        let life = a.life;
        self.push(self.after(after), Ev::BgWake { app, life, gen });
    }

    /// Whether a cached app has been out of the foreground longer than its background
    /// activity lasts (`RunOptions::bg_window_s`).
    fn past_bg_window(&self, a: &AppRt) -> bool {
        self.bg_window.is_some_and(|w| self.now.0.saturating_sub(a.last_used.0) >= w.0)
    }

    fn bg_wake(&mut self, app: u16, life: u32, gen: u32) {
        let a = &self.apps[app as usize];
        if a.life != life || a.gen != gen || a.state != AppState::Cached || self.past_bg_window(a) {
            return;
        }
        self.bg_segment(app, life, gen, 0);
    }

    /// Part `seg` of a background wakeup: its share of the wakeup's page touches, then
    /// its share of the wakeup's CPU. The touches come as the work is served, so an app
    /// that gets less CPU (a weaker cgroup, a busy little core, a frozen app) touches
    /// its pages later, and so refaults later.
    fn bg_segment(&mut self, app: u16, life: u32, gen: u32, seg: u32) {
        let a = &self.apps[app as usize];
        if a.life != life || a.gen != gen || a.state != AppState::Cached {
            return;
        }
        let share = |x: u32| x * (seg + 1) / BG_SEGMENTS - x * seg / BG_SEGMENTS;
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        let (n, pop) = (share(a.bg_touch), a.populated.min(a.bg_hot_anon));
        let (nf, wf, file0) = (share(a.bg_touch / BG_FILE_SHARE), a.bg_hot_file, a.anon);
        // The background heap set is spread over the populated heap (the launch set and
        // the foreground's hot pages are heap prefixes; a prefix here would nest in them).
        let mut idx = std::mem::take(&mut self.scratch);
        let a = &mut self.apps[app as usize];
        let spread = a.bg_spread();
        // Each wakeup takes the next pages of a pass over the set, so the wakeups of one
        // window touch distinct pages until all of the set has been touched.
        let (rng, [walk_anon, walk_file]) = (&mut a.rng, &mut a.bg_walk);
        if pop > 0 {
            idx.extend((0..n).map(|_| spread.at(walk_anon.next(pop, rng))));
        }
        if wf > 0 {
            idx.extend((0..nf).map(|_| file0 + walk_file.next(wf, rng)));
        }
        let done = self.bg_touches(app, seg, &mut idx, &mut ctx);
        self.scratch = idx;
        if done {
            self.bg_work(app, life, gen, seg, ctx);
        }
    }

    /// The CPU of part `seg` of a background wakeup, after its touches.
    fn bg_work(&mut self, app: u16, life: u32, gen: u32, seg: u32, ctx: Ctx) {
        if self.apps[app as usize].life != life {
            return;
        }
        let work = Nanos::from_ms_f64(self.apps[app as usize].spec.bg_cpu_ms / f64::from(BG_SEGMENTS));
        self.start_job(ctx, work, Some(app), Cont::Bg { app, life, gen, seg });
    }

    /// Touches the pages `idx` of a background wakeup's part `seg`, then empties `idx`.
    /// Where a policy listens for refaults, it hears each one as the fault happens, as
    /// Ice's RPF does in the kernel's refault path: an app it freezes there is "frozen
    /// instantly" (Ice §4.2.3) and its task stops at that fault, so the pages left wait
    /// for its thaw (`AppRt::stalled`, `Sim::bg_resume`). Returns whether every page was
    /// touched with the app still cached and alive.
    fn bg_touches(&mut self, app: u16, seg: u32, idx: &mut Vec<u32>, ctx: &mut Ctx) -> bool {
        if !self.setup.events.refaults {
            self.touch_all(app, idx, ctx);
            return true;
        }
        let life = self.apps[app as usize].life;
        let refaults = |s: &Self| s.app_c[app as usize].refaults.iter().sum::<u64>();
        let mut seen = refaults(self);
        let stopped = self.touch_until(app, idx, ctx, |s, _| {
            if refaults(s) == seen {
                return false;
            }
            s.flush_policy();
            seen = refaults(s);
            let a = &s.apps[app as usize];
            a.life != life || a.state == AppState::Frozen
        });
        let a = &mut self.apps[app as usize];
        if let Some(k) = stopped.filter(|_| a.life == life) {
            a.stalled = Some(Stalled { seg, left: idx[k + 1..].to_vec(), cpu: ctx.cpu, compress: ctx.compress });
            idx.clear();
            return false;
        }
        idx.clear();
        a.life == life && a.state == AppState::Cached
    }

    /// A thawed app goes on with the wakeup part it was frozen in: the pages left, then
    /// the part's CPU, then the rest of the wakeup.
    fn bg_resume(&mut self, app: u16, gen: u32) {
        let a = &mut self.apps[app as usize];
        if a.gen != gen {
            // Frozen again, or gone, before it ran: a later thaw resumes it.
            return;
        }
        let Some(st) = a.stalled.take() else { return };
        if a.state != AppState::Cached {
            return;
        }
        let life = a.life;
        let mut ctx = Ctx { t: self.now, cpu: st.cpu, compress: st.compress };
        let mut idx = st.left;
        if self.bg_touches(app, st.seg, &mut idx, &mut ctx) {
            self.bg_work(app, life, gen, st.seg, ctx);
        }
    }

    // ----- page access and faults -----

    /// Accesses the pages `idx` of `app` in order, then empties `idx`.
    fn touch_all(&mut self, app: u16, idx: &mut Vec<u32>, ctx: &mut Ctx) {
        self.touch_until(app, idx, ctx, |_, _| false);
        idx.clear();
    }

    /// Accesses the pages `idx` of `app` in order until `stop`, asked after each
    /// access that may have changed something, says so; returns the position of the
    /// access it stopped after. The access order, and so the result, is exactly that
    /// of touching the pages one by one and asking `stop` after each.
    ///
    /// Most touches find their page resident and young already, and change nothing
    /// but the count of accesses (`touch_is_noop`). So the bitmap is read first, over
    /// all of `idx`, and only the touches that do something are made, their page
    /// records prefetched a few ahead; the others are counted. Touches only set bits
    /// unless one of them clears one (a fault's reclaim clears young bits or evicts):
    /// from there on each access left is checked as it comes.
    fn touch_until(&mut self, app: u16, idx: &[u32], ctx: &mut Ctx, mut stop: impl FnMut(&mut Self, &mut Ctx) -> bool) -> Option<usize> {
        const AHEAD: usize = 8;
        const BIT_AHEAD: usize = 16;
        let base = self.apps[app as usize].base;
        let mut live = std::mem::take(&mut self.live_scratch);
        live.extend((0..idx.len() as u32).filter(|&k| !self.pages.touch_is_noop(base + idx[k as usize])));
        for &k in live.iter().take(AHEAD) {
            self.pages.prefetch(base + idx[k as usize]);
        }
        // How the pass over the touches that do something ended.
        enum Pass {
            /// Every one made, none stopped the batch or cleared a bit.
            Done,
            /// `stop` asked to stop after the access at this index.
            Stopped(usize),
            /// A touch cleared a no-op bit: the accesses after it are to check again.
            Cleared,
        }
        let (mut next, mut pass) = (0, Pass::Done);
        for j in 0..live.len() {
            let k = live[j] as usize;
            if let Some(&a) = live.get(j + AHEAD) {
                self.pages.prefetch(base + idx[a as usize]);
            }
            // The no-op touches before this one.
            self.c.touches += (k - next) as u64;
            next = k + 1;
            let cleared = self.pages.noop_cleared();
            self.touch(app, idx[k], ctx);
            if stop(self, ctx) {
                pass = Pass::Stopped(k);
                break;
            }
            if self.pages.noop_cleared() != cleared {
                pass = Pass::Cleared;
                break;
            }
        }
        live.clear();
        self.live_scratch = live;
        match pass {
            Pass::Stopped(k) => return Some(k),
            Pass::Done => {
                // Every touch left is a no-op.
                self.c.touches += (idx.len() - next) as u64;
                return None;
            }
            Pass::Cleared => {}
        }
        // A touch cleared a bit: each access left is checked as it comes, the bitmap's
        // words fetched a few accesses ahead and the records of the pages whose touch
        // does something a few less ahead.
        let rest = &idx[next..];
        for &i in rest.iter().take(BIT_AHEAD) {
            self.pages.prefetch_noop_bit(base + i);
        }
        for &i in rest.iter().take(AHEAD) {
            if !self.pages.touch_is_noop(base + i) {
                self.pages.prefetch(base + i);
            }
        }
        for k in 0..rest.len() {
            if let Some(&i) = rest.get(k + BIT_AHEAD) {
                self.pages.prefetch_noop_bit(base + i);
            }
            if let Some(&i) = rest.get(k + AHEAD) {
                if !self.pages.touch_is_noop(base + i) {
                    self.pages.prefetch(base + i);
                }
            }
            let noop = self.pages.touch_is_noop(base + rest[k]);
            self.touch(app, rest[k], ctx);
            if !noop && stop(self, ctx) {
                return Some(next + k);
            }
        }
        None
    }

    /// Access page `idx` of `app` (anon pages first, then file pages).
    fn touch(&mut self, app: u16, idx: u32, ctx: &mut Ctx) {
        self.c.touches += 1;
        let p = self.apps[app as usize].base + idx;
        if self.pages.touch_is_noop(p) {
            // Resident, young and not in the swap cache: what the path below would find
            // and leave as it is.
            return;
        }
        let loc = self.pages.loc(p);
        if loc.resident() {
            self.pages.set_flag(p, F_YOUNG, true);
            if self.pages.has(p, F_SHADOW) {
                self.swap_cache_hit(app, p, ctx);
            }
            return;
        }
        if self.apps[app as usize].state == AppState::Dead {
            return;
        }
        let anon = self.pages.is_anon(p);
        let refault = self.pages.has(p, F_SHADOW);
        let life = self.apps[app as usize].life;
        match loc {
            Loc::Absent if anon => {}
            Loc::Absent if self.asap_inflight(p).is_some() => {
                // Being read ahead by ASAP: wait for that read.
                let done = self.asap_inflight(p).expect("checked");
                ctx.t = ctx.t.max(done);
                self.asap_claimed(app, p);
            }
            Loc::Absent => {
                // A file page not in the page cache: read its aligned cluster; every
                // page the read brings in enters the page cache on its own terms.
                let (t0, thrash) = (ctx.t, self.psi.is_some() && refault && self.refault_activates(p));
                let a = &self.apps[app as usize];
                let file0 = a.base + a.anon;
                let first = file0 + ((p - file0) / FILE_CLUSTER) * FILE_CLUSTER;
                let last = (first + FILE_CLUSTER).min(file0 + a.file);
                let mut n = 0;
                for q in first..last {
                    if q != p && self.pages.loc(q) == Loc::Absent {
                        self.alloc(ctx);
                        self.add_to_page_cache(app, q);
                        n += 1;
                    }
                }
                ctx.t = self.flash.submit(ctx.t, Op::Read, (n + 1) * 4096);
                if thrash {
                    // Waiting for a working-set page to come back is a memory stall.
                    self.psi.as_mut().expect("checked").stall(t0, ctx.t);
                }
            }
            Loc::Zram => {
                ctx.cpu += Nanos(self.decompress_ns);
                ctx.compress += Nanos(self.decompress_ns);
            }
            Loc::Flash => {
                // swapin_readahead: the aligned cluster of slots around this one comes
                // in with it, one request under the block layer's plug.
                let window = match (self.pages.swap_slot(p), self.swap_readahead) {
                    (None, _) => 1,
                    (Some(_), SwapReadahead::Cluster) => self.swap_cluster,
                    (Some(s), SwapReadahead::Adaptive) => self.ra.window(s, self.swap_cluster),
                };
                let ahead = if window > 1 { self.pages.swap_cluster(p, window) } else { Vec::new() };
                ctx.t = self.flash.submit(ctx.t, Op::Read, (ahead.len() as u64 + 1) * 4096);
                for q in ahead {
                    self.swap_cache_add(q, ctx);
                }
                if self.apps[app as usize].life != life || self.pages.loc(p) != loc {
                    // Making room for the read-ahead pages killed the app.
                    return;
                }
                if self.setup.swap == SwapSetup::TwoLevel {
                    // SL2 holds SL1's compressed pages.
                    ctx.cpu += Nanos(self.decompress_ns);
                    ctx.compress += Nanos(self.decompress_ns);
                }
            }
            _ => unreachable!("resident handled above"),
        }
        ctx.cpu += Nanos(MINOR_FAULT_NS);
        self.alloc(ctx);
        if self.apps[app as usize].life != life || self.pages.loc(p) != loc {
            // Making room killed the app (the LMK may take the very app that faults):
            // its memory, this page included, is already freed.
            return;
        }
        match loc {
            Loc::Zram => self.zram_stored -= 1,
            Loc::Flash => self.flash_used -= 1,
            _ => {}
        }
        self.insert_faulted(p, refault);
        if refault {
            self.count_refault(app, anon);
        }
    }

    /// Page `q`, read from flash swap ahead of a fault on its neighbour, joins the swap
    /// cache as read_swap_cache_async adds it: a frame of its own, the inactive
    /// anonymous list, not young, its slot still held. Its app's next touch finds it
    /// there ([`Sim::swap_cache_hit`]). Gone already if making room killed its app.
    fn swap_cache_add(&mut self, q: u32, ctx: &mut Ctx) {
        self.alloc(ctx);
        if self.pages.loc(q) != Loc::Flash {
            return;
        }
        self.c.swap_readahead += 1;
        self.pages.set_flag(q, F_REFERENCED | F_YOUNG, false);
        // lru_cache_add_anon counts it in reclaim_stat like any page added.
        self.recent_scanned[0] += 1;
        self.pages.swap_cache_add(q, Loc::InactiveAnon);
    }

    /// The app touches page `p`, which swap readahead brought into the swap cache: the
    /// kernel's do_swap_page finds it there (a minor fault, a readahead hit for
    /// swapin_nr_pages), maps and activates it and frees its swap slot, as floe does
    /// for every swap-in (the kernel does so once swap is half full, vm_swap_full). It
    /// is a refault, as the swap-in it spared would have been.
    fn swap_cache_hit(&mut self, app: u16, p: u32, ctx: &mut Ctx) {
        ctx.cpu += Nanos(MINOR_FAULT_NS);
        self.ra.hits += 1;
        self.pages.swap_cache_free(p);
        self.flash_used -= 1;
        if self.pages.loc(p) == Loc::InactiveAnon {
            self.recent_rotated[0] += 1;
            self.pages.move_to(p, Loc::ActiveAnon);
        }
        self.count_refault(app, true);
    }

    /// Adds file page `p` of `app`, just read in, to the page cache as the kernel's
    /// add_to_page_cache_lru does: a page that left a shadow entry is a refault, counted
    /// and activated by its own distance (workingset_refault); any other starts
    /// inactive.
    pub(super) fn add_to_page_cache(&mut self, app: u16, p: u32) {
        let shadow = self.pages.has(p, F_SHADOW);
        self.insert_faulted(p, shadow);
        if shadow {
            self.count_refault(app, false);
        }
    }

    /// Counts a refault of one of `app`'s pages (foreground or background by whether
    /// `app` is in the foreground now) and tells a policy that listens for them.
    fn count_refault(&mut self, app: u16, anon: bool) {
        if app >= self.n_apps {
            self.c.refaults_system += 1;
            return;
        }
        let fg = self.fg == Some(app);
        self.c.refaults[fg as usize][(!anon) as usize] += 1;
        self.app_c[app as usize].refaults[(!anon) as usize] += 1;
        if self.setup.events.refaults {
            self.pending.push(Event::Refault { app: AppId(app), kind: if anon { PageKind::Anon } else { PageKind::File }, fg });
        }
    }

    /// Whether file page `p`, refaulting, is activated: its refault distance is within
    /// the active file list (workingset_refault).
    fn refault_activates(&self, p: u32) -> bool {
        crate::lru::refault_activates(&self.pages, self.age, p)
    }

    /// Puts a page just brought into memory on its LRU list, as the seeds' kernels
    /// (3.0-4.14) do: an anonymous page starts active, a new one (lru_cache_add_active)
    /// and a swapped-in one alike (do_swap_page's activate_page); a file page starts
    /// inactive unless it is a refault whose distance is within the active file list
    /// (workingset_refault, 3.15-5.8).
    fn insert_faulted(&mut self, p: u32, refault: bool) {
        let to = crate::lru::fault_in(&mut self.pages, self.age, p, refault);
        self.lru_add(p, to);
    }

    /// Puts a page on an LRU list as the kernel's lru_cache_add does, counting it in
    /// reclaim_stat: scanned, and rotated if it goes on an active list.
    pub(crate) fn lru_add(&mut self, p: u32, to: Loc) {
        let (k, active) = match to {
            Loc::ActiveAnon => (0, true),
            Loc::InactiveAnon => (0, false),
            Loc::ActiveFile => (1, true),
            Loc::InactiveFile => (1, false),
            _ => unreachable!("lru_add to {to:?}"),
        };
        self.recent_scanned[k] += 1;
        self.recent_rotated[k] += active as u64;
        self.pages.move_to(p, to);
    }

    // ----- the policy -----

    fn flush_policy(&mut self) {
        let mut guard = 0;
        while !self.pending.is_empty() {
            guard += 1;
            assert!(guard < 1_000, "policy and engine keep generating events");
            let events = std::mem::take(&mut self.pending);
            let mut policy = self.policy.take().expect("policy present");
            let mut actions = std::mem::take(&mut self.actions);
            for ev in &events {
                if self.wanted(ev) {
                    policy.on_event(ev, &*self, &mut actions);
                }
            }
            self.policy = Some(policy);
            for act in actions.drain(..) {
                self.apply(act);
            }
            self.actions = actions;
        }
    }

    fn wanted(&self, ev: &Event) -> bool {
        let m = self.setup.events;
        match ev {
            Event::Tick => true,
            Event::Refault { .. } => m.refaults,
            Event::Pressure { .. } | Event::ReclaimFailed { .. } => m.pressure,
            Event::LowMemory { .. } => true,
            Event::AppSwitch { .. } | Event::LaunchStarted { .. } | Event::LaunchDone { .. } => m.launches,
            Event::AppStarted { .. } | Event::AppDied { .. } => m.lifecycle,
        }
    }

    fn valid(&self, app: AppId) -> Option<u16> {
        (app.0 < self.n_apps).then_some(app.0)
    }

    fn apply(&mut self, act: Action) {
        match act {
            Action::Freeze(a) => {
                if let Some(a) = self.valid(a) {
                    self.freeze(a)
                }
            }
            Action::Thaw(a) => {
                if let Some(a) = self.valid(a) {
                    self.thaw(a)
                }
            }
            Action::Kill(set) => {
                let before = self.c.kills;
                self.kill_batch = Some(self.next_batch);
                self.next_batch += 1;
                for a in set {
                    if let Some(a) = self.valid(a) {
                        if !self.apps[a as usize].unkillable {
                            self.kill(a, KillCause::Policy);
                        }
                    }
                }
                self.kill_batch = None;
                if self.c.kills > before {
                    self.c.policy_kill_batches += 1;
                }
            }
            Action::Reclaim { app, pages, tier } => {
                if let Some(a) = self.valid(app) {
                    self.reclaim_app(a, pages.0, tier);
                }
            }
            Action::Prepage { app, pages } => {
                if let Some(a) = self.valid(app) {
                    self.prepage(a, pages.0);
                }
            }
            Action::SetSwappable { app, swappable } => {
                if let Some(a) = self.valid(app) {
                    self.apps[a as usize].swappable = swappable;
                    if swappable {
                        // Pages set aside as unevictable go back on the LRU.
                        let (base, pop) = (self.apps[a as usize].base, self.apps[a as usize].populated);
                        for p in base..base + pop {
                            if self.pages.loc(p) == Loc::Unevictable {
                                self.lru_add(p, Loc::ActiveAnon);
                            }
                        }
                    }
                }
            }
            Action::SetCpuPriority { app, class } => {
                if let Some(a) = self.valid(app) {
                    self.apps[a as usize].class = Some(class);
                    let (w, bg) = (self.weight_of(a), self.in_bg_group(a));
                    self.cpu.set_weight(self.now, a, w, bg);
                }
            }
            Action::MarkUnkillable { app, unkillable } => {
                if let Some(a) = self.valid(app) {
                    self.apps[a as usize].unkillable = unkillable;
                }
            }
        }
    }

    /// Moves up to `n` of the app's resident anonymous pages (oldest first) to `tier`,
    /// on kswapd's CPU (process_madvise(MADV_PAGEOUT) runs in the caller's context; the
    /// caller here is the policy daemon, accounted like kswapd).
    fn reclaim_app(&mut self, app: u16, n: u64, tier: floe_core::SwapTier) {
        let a = &self.apps[app as usize];
        let (base, pop) = (a.base, a.populated);
        let mut compress = Nanos::ZERO;
        let (mut moved, mut writes) = (0u64, 0u64);
        for p in base..base + pop {
            if moved >= n {
                break;
            }
            if !self.apps[app as usize].swappable {
                break;
            }
            if !self.pages.loc(p).resident() || self.pages.has(p, F_LOCKED) {
                continue;
            }
            if self.drop_swap_cache(p) {
                moved += 1;
                continue;
            }
            let to = match tier {
                floe_core::SwapTier::Zram if self.zram_stored < self.zram_cap && self.swap_slots_left() => Loc::Zram,
                floe_core::SwapTier::Flash if self.flash_used < self.flash_cap => Loc::Flash,
                _ => break,
            };
            if to == Loc::Zram {
                self.zram_stored += 1;
                compress += Nanos(self.compress_ns);
            } else {
                self.flash_used += 1;
                writes += 1;
            }
            self.pages.move_to(p, to);
            // A swapped page keeps no shadow age before 5.9 (F_SHADOW still marks it
            // for refault accounting): only file evictions advance the age.
            self.pages.set_shadow(p, self.age);
            moved += 1;
        }
        if writes > 0 {
            self.write_back(self.now, writes);
        }
        self.c.reclaimed += moved;
        self.c.reclaimed_anon += moved;
        self.app_c[app as usize].reclaimed[0] += moved;
        self.c.cpu_kswapd_ns += moved * EVICT_NS + compress.0;
        self.c.cpu_compress_ns += compress.0;
    }

    /// Brings up to `n` of the app's swapped anonymous pages back into memory.
    fn prepage(&mut self, app: u16, n: u64) {
        let a = &self.apps[app as usize];
        let (base, pop, life) = (a.base, a.populated, a.life);
        let mut ctx = Ctx { t: self.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
        let mut got = 0;
        for p in base..base + pop {
            if got >= n {
                break;
            }
            let loc = self.pages.loc(p);
            match loc {
                Loc::Zram => ctx.cpu += Nanos(self.decompress_ns),
                Loc::Flash => ctx.t = self.flash.submit(ctx.t, Op::Read, 4096),
                _ => continue,
            }
            self.alloc(&mut ctx);
            if self.apps[app as usize].life != life {
                // Making room killed the app; its pages are freed.
                break;
            }
            match loc {
                Loc::Zram => self.zram_stored -= 1,
                _ => self.flash_used -= 1,
            }
            self.pages.set_flag(p, F_SHADOW, false);
            self.lru_add(p, Loc::InactiveAnon);
            got += 1;
        }
        self.c.cpu_prepage_ns += ctx.cpu.0;
    }

    // ----- results -----

    fn record(&self) -> RunRecord {
        let d = |a: u64, b: u64| a - b;
        let (c, b) = (&self.c, &self.base);
        let rounds = self.workload.rounds;
        let caching = if rounds > 1 {
            self.launches.iter().filter(|l| l.kind == LaunchKind::Warm && l.round > 0).count() as f64 / (rounds - 1) as f64
        } else {
            0.0
        };
        let use_s = self.use_ns as f64 / 1e9;
        let (frames, alerts) = (d(c.frames, b.frames), d(c.janky, b.janky));
        let mut metrics = Metrics {
            fps: if use_s > 0.0 { frames as f64 / use_s } else { 0.0 },
            ria: if frames > 0 { alerts as f64 / frames as f64 } else { 0.0 },
            interaction_alerts: alerts,
            frames,
            caching_capability: caching,
            refaults_fg_anon: d(c.refaults[1][0], b.refaults[1][0]),
            refaults_fg_file: d(c.refaults[1][1], b.refaults[1][1]),
            refaults_bg_anon: d(c.refaults[0][0], b.refaults[0][0]),
            refaults_bg_file: d(c.refaults[0][1], b.refaults[0][1]),
            refaults_system: d(c.refaults_system, b.refaults_system),
            reclaimed_pages: d(c.reclaimed, b.reclaimed),
            reclaimed_anon_pages: d(c.reclaimed_anon, b.reclaimed_anon),
            kills: d(c.kills, b.kills),
            freezes: d(c.freezes, b.freezes),
            thaws: d(c.thaws, b.thaws),
            flash_read_bytes: self.flash.read_bytes - self.flash_base.0,
            flash_write_bytes: self.flash.write_bytes - self.flash_base.1,
            zram_stored_bytes: self.zram_stored as u64 * 4096,
            cpu_ms_app: d(c.cpu_app_ns, b.cpu_app_ns) as f64 / 1e6,
            cpu_ms_kswapd: d(c.cpu_kswapd_ns, b.cpu_kswapd_ns) as f64 / 1e6,
            cpu_ms_compress: d(c.cpu_compress_ns, b.cpu_compress_ns) as f64 / 1e6,
            cpu_ms_prepage: d(c.cpu_prepage_ns, b.cpu_prepage_ns) as f64 / 1e6,
            prepage_precision: self.asap.as_ref().and_then(|s| s.precision()),
            prepage_recall: self.asap.as_ref().and_then(|s| s.recall()),
            ..Metrics::default()
        };
        metrics.set_launches(&self.launches);
        RunRecord {
            policy: self.policy.as_ref().map_or("?", |p| p.name()).to_string(),
            device: self.device.name.clone(),
            workload: self.workload.name.clone(),
            params: self.params.clone(),
            seed: self.seed,
            metrics,
            launches: self.launches.clone(),
            kills_by: {
                let k = |cause: KillCause| d(c.kills_by[cause as usize], b.kills_by[cause as usize]);
                floe_core::KillCauses {
                    lmk: k(KillCause::Lmk),
                    oom: k(KillCause::Oom),
                    policy: k(KillCause::Policy),
                    sl1_room: k(KillCause::Sl1Room),
                    policy_batches: d(c.policy_kill_batches, b.policy_kill_batches),
                    exits: d(c.exits, b.exits),
                    exit_pages: d(c.exit_pages, b.exit_pages),
                    exit_ns: d(c.exit_ns, b.exit_ns),
                    exit_batches: d(c.exit_batches, b.exit_batches),
                    exit_batch_pages: d(c.exit_batch_pages, b.exit_batch_pages),
                    exit_batch_ns: d(c.exit_batch_ns, b.exit_batch_ns),
                }
            },
            slices: vec![],
            apps: self.app_stats(),
        }
    }

    /// Each app's share of the measured part's counters and its memory at the end, in
    /// the workload's order; apps that never ran in the measured part and hold nothing
    /// at its end are left out.
    fn app_stats(&self) -> Vec<floe_core::AppStats> {
        let mib = |p: Pages| p.0 as f64 / 256.0;
        (0..self.n_apps)
            .filter_map(|i| {
                let (c, b) = (&self.app_c[i as usize], &self.app_base[i as usize]);
                let info = self.app(AppId(i))?;
                let launched = |kind: LaunchKind| self.launches.iter().filter(|l| l.kind == kind && l.app == info.name).count() as u64;
                let s = floe_core::AppStats {
                    state: format!("{:?}", info.state).to_lowercase(),
                    launches_cold: launched(LaunchKind::Cold),
                    launches_warm: launched(LaunchKind::Warm),
                    kills: c.kills - b.kills,
                    freezes: c.freezes - b.freezes,
                    thaws: c.thaws - b.thaws,
                    refaults_anon: c.refaults[0] - b.refaults[0],
                    refaults_file: c.refaults[1] - b.refaults[1],
                    reclaimed_anon: c.reclaimed[0] - b.reclaimed[0],
                    reclaimed_file: c.reclaimed[1] - b.reclaimed[1],
                    cpu_ms: (c.cpu_ns - b.cpu_ns) as f64 / 1e6,
                    resident_mib: f64::from(self.rss(i)) / 256.0,
                    swapped_mib: mib(info.swapped),
                    app: info.name,
                };
                let idle = s.launches_cold
                    + s.launches_warm
                    + s.kills
                    + s.freezes
                    + s.refaults_anon
                    + s.refaults_file
                    + s.reclaimed_anon
                    + s.reclaimed_file
                    == 0
                    && s.cpu_ms == 0.0
                    && info.state == AppState::Dead
                    && self.rss(i) == 0
                    && info.swapped.0 == 0;
                (!idle).then_some(s)
            })
            .collect()
    }
}

impl SystemView for Sim {
    fn now(&self) -> Nanos {
        self.now
    }

    fn mem(&self) -> MemInfo {
        let l = |x: Loc| Pages(self.pages.list_len(x) as u64);
        let free = self.free().max(0) as u64;
        let available = self.mem_available();
        MemInfo {
            total: Pages(self.usable as u64),
            free: Pages(free),
            available: Pages(available),
            wmark_min: Pages(self.wmark[0] as u64),
            wmark_low: Pages(self.wmark[1] as u64),
            wmark_high: Pages(self.wmark[2] as u64),
            tuned_high: self.device.memory.tuned_high_mib.map(|m| Pages(pages_of(m) as u64)),
            active_anon: l(Loc::ActiveAnon),
            inactive_anon: l(Loc::InactiveAnon),
            active_file: l(Loc::ActiveFile),
            inactive_file: l(Loc::InactiveFile),
            zram_stored: Pages(self.zram_stored as u64),
            zram_used: Pages(self.zram_pool_pages() as u64),
            zram_capacity: Pages(self.zram_cap as u64),
            flash_swap_used: Pages(self.flash_used as u64),
            flash_swap_capacity: Pages(self.flash_cap as u64),
            writeback: Pages(self.writeback as u64),
        }
    }

    fn foreground(&self) -> Option<AppId> {
        self.fg.map(AppId)
    }

    fn apps(&self) -> Vec<AppId> {
        (0..self.n_apps).map(AppId).collect()
    }

    fn app(&self, id: AppId) -> Option<AppInfo> {
        let i = self.valid(id)?;
        let a = &self.apps[i as usize];
        Some(AppInfo {
            id,
            name: a.spec.name.clone(),
            state: a.state,
            oom_adj: a.oom_adj,
            // What the app's processes show as RSS: their own resident pages plus what
            // they map from Zygote, while they live.
            rss: Pages(self.rss(i) as u64 + if a.state == AppState::Dead { 0 } else { self.shared_rss }),
            swapped: Pages((self.pages.count(i, Loc::Zram) + self.pages.count(i, Loc::Flash)) as u64),
            saves_context: a.spec.saves_context,
            priority_class: a.spec.priority_class,
            perceptible: a.spec.perceptible,
            unkillable: a.unkillable,
            swappable: a.swappable,
            last_used: a.last_used,
        })
    }

    fn cpu_busy_iowait(&self) -> f64 {
        self.util
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceil_i64_is_the_librarys_ceil() {
        let mut x = 1e-3f64;
        for v in [0.0, -0.5, -1.0, 1.0, 4503599627370495.5, 9.223372036854776e18, 1e300, f64::INFINITY, f64::NAN] {
            assert_eq!(ceil_i64(v), v.ceil() as i64, "{v}");
        }
        while x < 1e20 {
            for v in [x, x.next_up(), x.next_down(), x.ceil(), x.ceil().next_up(), x.ceil().next_down(), -x] {
                assert_eq!(ceil_i64(v), v.ceil() as i64, "{v}");
            }
            x *= 1.618;
        }
    }

    /// The zram pool's size is kept between reads; every change of the pages stored,
    /// back to an earlier count too, gives the size the ratio says.
    #[test]
    fn the_zram_pools_size_follows_every_change_of_the_pages_stored() {
        let mut sim = embedded_sim("p20", "ice-video-call", "lru-cfs", &RunOptions::default());
        for stored in [0, 1, 2, 1000, 1001, 2, 0, 7, 7, 1_000_000] {
            sim.zram_stored = stored;
            assert_eq!(sim.zram_pool_pages(), (stored as f64 / sim.zram_ratio).ceil() as i64, "{stored} pages stored");
        }
    }

    /// A background wakeup touches its pages as its CPU is served: with the cores taken
    /// by busier threads, an app whose pages were all reclaimed refaults them later.
    /// A render thread that stalls loses frames: with the foreground app's pages taken
    /// (per-process reclaim, its heap to zram and its files out of the page cache), its
    /// next frames fault them back, miss their vsyncs, and the second renders fewer
    /// frames than the same second of the same run left alone.
    #[test]
    fn a_render_thread_stalled_on_its_faults_loses_frames() {
        let frames_in_next_second = |stall: bool| {
            let (mut sim, t, _) = measuring_sim_with_a_cached_app();
            // Some seconds into the call, its app has grown to its footprint.
            let t = t + Nanos::from_secs_f64(10.0);
            sim.run_until(t);
            let fg = sim.snapshot().fg_app.expect("the call is in the foreground");
            if stall {
                let (anon, file) = sim.per_process_reclaim(&fg, ReclaimKind::All).unwrap();
                assert!(anon + file > 10_000, "{fg} lost {anon} + {file} pages");
            }
            let (f0, j0, r0) = (sim.snapshot().frames, sim.snapshot().janky_frames, sim.snapshot().refaults[1]);
            sim.run_until(t + Nanos::from_secs_f64(1.0));
            let s = sim.snapshot();
            (s.frames - f0, s.janky_frames - j0, s.refaults[1][0] + s.refaults[1][1] - r0[0] - r0[1])
        };
        let (calm, stalled) = (frames_in_next_second(false), frames_in_next_second(true));
        assert_eq!(calm.2, 0, "left alone, the call refaults nothing: {calm:?}");
        assert!(stalled.2 > 1000, "the stalled call faults its pages back: {stalled:?}");
        assert!(stalled.0 < calm.0 && stalled.1 > calm.1, "frames and janky frames: stalled {stalled:?}, calm {calm:?}");
    }

    /// A batch of touches (`touch_all`, which skips the touches its bitmap read finds
    /// to be no-ops) leaves the run exactly as the same touches made one by one, also
    /// when a fault's reclaim makes the touch of a page later in the batch count again:
    /// the call's heap, reclaimed, faults back in with free memory held at the min
    /// watermark, and the direct reclaim it causes scans the call's own file pages,
    /// young and at the tail of the inactive list, which the batch touches last.
    #[test]
    fn a_batch_of_touches_is_the_same_touches_one_by_one() {
        let after = |batch: bool| {
            let opts = RunOptions { seed: 1, bg_apps: Some(0), balloon_mib: Some(1315.0), ..Default::default() };
            let mut sim = embedded_sim("p20", "ice-video-call", "lru-cfs", &opts);
            sim.run_until(Nanos::from_secs_f64(60.0));
            let fg = sim.fg.expect("the call is in the foreground");
            let name = sim.apps[fg as usize].spec.name.clone();
            sim.per_process_reclaim(&name, ReclaimKind::Anon).expect("the call's heap");
            let (base, anon, file) = (sim.apps[fg as usize].base, sim.apps[fg as usize].populated, sim.apps[fg as usize].file);
            let mut ctx = Ctx { t: sim.now, cpu: Nanos::ZERO, compress: Nanos::ZERO };
            let files: Vec<u32> = (anon..anon + file).filter(|&i| sim.pages.loc(base + i) == Loc::InactiveFile).collect();
            for &i in &files {
                sim.touch(fg, i, &mut ctx);
            }
            // Every other page of the inactive file list to its head.
            let mut p = sim.pages.tail(Loc::InactiveFile);
            for _ in 0..sim.pages.list_len(Loc::InactiveFile) {
                let q = p.expect("a page");
                p = sim.pages.newer(q);
                if sim.pages.owner(q) != fg {
                    sim.pages.rotate(q);
                }
            }
            assert!(files.iter().all(|&i| sim.pages.touch_is_noop(base + i)) && files.len() > 1_000, "{} file pages", files.len());
            sim.wmark[0] = sim.free() - 100;
            let idx: Vec<u32> = (0..anon).chain(files.iter().copied()).collect();
            let cleared = sim.pages.noop_cleared();
            if batch {
                sim.touch_all(fg, &mut idx.clone(), &mut ctx);
            } else {
                for &i in &idx {
                    sim.touch(fg, i, &mut ctx);
                }
            }
            assert!(sim.pages.noop_cleared() > cleared, "the faults reclaimed on the way");
            let pages: Vec<(Loc, u32, [bool; 3])> = (0..sim.pages.len() as u32)
                .map(|p| (sim.pages.loc(p), sim.pages.shadow(p), [F_YOUNG, F_REFERENCED, F_SHADOW].map(|f| sim.pages.has(p, f))))
                .collect();
            (sim.snapshot(), sim.touches(), ctx.t, ctx.cpu, pages)
        };
        let (one_by_one, batch) = (after(false), after(true));
        assert!(one_by_one.1 > 10_000, "{} touches", one_by_one.1);
        assert!(one_by_one == batch, "the batch differs: {:?} against {:?}", &batch.0, &one_by_one.0);
    }

    /// Reclaim blocks the render thread (the P20's `reclaim_frame_block_us`): with
    /// memtester's balloon the call reclaims as it renders, and the same minute renders
    /// fewer frames than with the block turned off, the frames lost bounded by the wait
    /// the pages reclaimed owed.
    #[test]
    fn reclaim_while_the_foreground_renders_blocks_its_render_thread() {
        let minute = |block: bool| {
            let opts = RunOptions { seed: 1, bg_apps: Some(0), balloon_mib: Some(1315.0), ..Default::default() };
            let mut sim = embedded_sim("p20", "ice-video-call", "lru-cfs", &opts);
            assert!(sim.frame_block_per_page > Nanos::ZERO, "the P20 is calibrated with a block");
            if !block {
                sim.frame_block_per_page = Nanos::ZERO;
            }
            let t0 = Nanos::from_secs_f64(60.0);
            sim.run_until(t0);
            assert!(sim.measuring && sim.in_use && sim.interactive, "a minute into the call, it renders");
            let (f0, r0) = (sim.snapshot().frames, sim.c.reclaimed);
            sim.run_until(t0 + Nanos::from_secs_f64(60.0));
            (sim.snapshot().frames - f0, sim.c.reclaimed - r0, sim.frame_block_per_page)
        };
        let ((free, free_rec, _), (blocked, rec, per_page)) = (minute(false), minute(true));
        assert!(free_rec > 1000 && rec > 1000, "the call reclaims in both: {free_rec} and {rec} pages");
        assert!(blocked < free * 9 / 10, "blocked {blocked} frames against {free}");
        // Each frame lost is at most a vsync of wait, and the wait is what the reclaimed
        // pages owed.
        let owed_vsyncs = rec * per_page.0 / VSYNC.0;
        assert!(free - blocked <= owed_vsyncs, "{} frames lost, {owed_vsyncs} vsyncs owed", free - blocked);
    }

    /// A scenario's `frame_cpu_cv` is the spread of its frames' work: on a device with
    /// no system load, where the call's frames run alone on a big core, their times
    /// spread as the scenario says about the same mean, and without it the engine's
    /// `FRAME_CPU_CV` holds.
    #[test]
    fn a_scenarios_frames_spread_as_its_frame_cpu_cv_says() {
        let cat = Catalog::embedded().unwrap();
        let dev = Device::load("hikey970").unwrap();
        let spread = |cv: Option<f64>| {
            let mut wl = Workload::load("ice-video-call", &cat).unwrap();
            let fg = wl.foreground.as_mut().unwrap();
            (fg.frame_cpu_ms, fg.frame_cpu_cv) = (Some(8.0), cv);
            wl.use_s = 60.0;
            let opts = RunOptions { seed: 1, bg_apps: Some(0), ..Default::default() };
            let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make("lru-cfs").unwrap(), &opts);
            sim.log_frames();
            sim.run_to_end();
            // Past the first second, when the call's buffers are allocated.
            let ms: Vec<f64> = sim.take_frames().iter().skip(60).map(|(_, s, e)| (e - s) * 1e3).collect();
            let mean = ms.iter().sum::<f64>() / ms.len() as f64;
            let sd = (ms.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / ms.len() as f64).sqrt();
            assert!(ms.len() > 3_000, "{} frames", ms.len());
            (mean, sd / mean)
        };
        let (narrow, wide, default) = (spread(Some(0.1)), spread(Some(0.5)), spread(None));
        for (mean, _) in [narrow, wide, default] {
            assert!((7.9..8.6).contains(&mean), "mean frame {mean} ms against 8 ms of work");
        }
        assert!((narrow.1 - 0.1).abs() < 0.03, "narrow: {narrow:?}");
        assert!((wide.1 - 0.5).abs() < 0.05, "wide: {wide:?}");
        assert!((default.1 - FRAME_CPU_CV).abs() < 0.04, "default: {default:?}");
    }

    /// A frame pays at most a vsync period of the wait reclaim owes, so a burst of
    /// reclaim slows the frames after it instead of freezing one: with ten seconds owed,
    /// the next second still renders frames, each of them janky.
    #[test]
    fn a_burst_of_reclaim_slows_the_frames_after_it_without_freezing_one() {
        let (mut sim, t, _) = measuring_sim_with_a_cached_app();
        let t = t + Nanos::from_secs_f64(10.0);
        sim.run_until(t);
        let (f0, j0) = (sim.snapshot().frames, sim.snapshot().janky_frames);
        sim.frame_block_owed = Nanos::from_secs_f64(10.0);
        sim.run_until(t + Nanos::from_secs_f64(1.0));
        let s = sim.snapshot();
        let (frames, janky) = (s.frames - f0, s.janky_frames - j0);
        assert!((15..=31).contains(&frames), "{frames} frames in the second");
        assert_eq!(janky, frames, "every frame waited a vsync");
        assert!(sim.frame_block_owed > Nanos::from_secs_f64(9.0), "the rest is still owed: {:?}", sim.frame_block_owed);
        // A switch to another app clears it.
        let other = (0..sim.n_apps).find(|&a| Some(a) != sim.fg && sim.apps[a as usize].state == AppState::Cached).unwrap();
        sim.launch(other, 0, false);
        assert_eq!(sim.frame_block_owed, Nanos::ZERO);
    }

    /// What reclaim owes the render thread is at most one kswapd episode's wait (the
    /// pages from the low watermark to the high): a burst of a hundred episodes' pages
    /// slows the frames for one episode's wait, and then they render as before.
    #[test]
    fn a_burst_of_reclaim_owes_the_frames_at_most_one_kswapd_episode() {
        let (mut sim, t, _) = measuring_sim_with_a_cached_app();
        let t = t + Nanos::from_secs_f64(10.0);
        sim.run_until(t);
        let episode = (sim.wmark[2] - sim.wmark[1]) as u64;
        let cap = sim.frame_block_cap();
        assert_eq!(cap, Nanos(sim.frame_block_per_page.0 * episode));
        assert!(cap.0 > 60 * VSYNC.0, "the P20's episode owes more than a second of frames: {cap:?}");
        let frames_in = |sim: &mut Sim, from: Nanos| {
            let f0 = sim.snapshot().frames;
            sim.run_until(from + Nanos::from_secs_f64(1.0));
            sim.snapshot().frames - f0
        };
        let before = frames_in(&mut sim, t);
        let t = t + Nanos::from_secs_f64(1.0);
        sim.block_frames((episode * 100) as u32);
        assert_eq!(sim.frame_block_owed, cap, "a hundred episodes' pages owe one episode's wait");
        let blocked = frames_in(&mut sim, t);
        // Paid a vsync a frame, one episode's wait is gone well within 20 s.
        let later = t + Nanos::from_secs_f64(20.0);
        sim.run_until(later);
        assert!(sim.frame_block_owed < cap, "what was owed is paid: {:?} of {cap:?}", sim.frame_block_owed);
        let after = frames_in(&mut sim, later);
        assert!(blocked < before * 3 / 4, "the burst slows the frames: {blocked} against {before} a second");
        assert!(after > before * 9 / 10, "and they recover: {after} against {before} a second");
    }

    #[test]
    fn a_throttled_background_app_refaults_later() {
        let refaults_within = |throttle: bool| {
            let (mut sim, t, app) = measuring_sim_with_a_cached_app();
            let name = sim.apps[app as usize].spec.name.clone();
            sim.per_process_reclaim(&name, ReclaimKind::All).unwrap();
            if throttle {
                // Threads far heavier than the app keep every core busy for a minute.
                for _ in 0..16 {
                    sim.cpu.add(
                        sim.now,
                        Nanos::from_secs_f64(60.0),
                        cpu::WEIGHT_BOOSTED,
                        false,
                        None,
                        false,
                        Cont::Hog { thread: u16::MAX },
                    );
                }
                sim.sync_cpu();
            }
            let before = sim.snapshot().refaults[0];
            sim.run_until(t + Nanos::from_secs_f64(20.0));
            let after = sim.snapshot().refaults[0];
            (after[0] + after[1]) - (before[0] + before[1])
        };
        let (free, throttled) = (refaults_within(false), refaults_within(true));
        assert!(free > 1000 && throttled * 2 < free, "background refaults in 20 s: {free} with the CPU free, {throttled} throttled");
    }

    /// swapin_nr_pages (Linux 4.x): no hits and a fault away from the last one read the
    /// faulting page alone; adjacent faults two; hits grow the window by powers of two
    /// from four up to 2^page_cluster; it shrinks by at most half per swap-in.
    #[test]
    fn the_adaptive_readahead_window_follows_hits_and_adjacency() {
        let mut ra = Readahead::default();
        assert_eq!(ra.window(100, 8), 1, "a random fault");
        assert_eq!(ra.window(101, 8), 2, "next to the last one");
        ra.hits = 3;
        assert_eq!(ra.window(500, 8), 8, "3 hits + 2 = 5, rounded up to 8");
        assert_eq!(ra.window(900, 8), 4, "no hits, far away: halved, not dropped");
        assert_eq!(ra.window(300, 8), 2);
        assert_eq!(ra.window(700, 8), 1);
        ra.hits = 1;
        assert_eq!(ra.window(10, 8), 4, "1 hit + 2 = 3, rounded up to 4");
        ra.hits = 40;
        assert_eq!(ra.window(10, 8), 8, "capped at 2^page_cluster");
        assert_eq!(Readahead::default().window(5, 1), 1, "page_cluster 0: no readahead");
    }

    /// A run whose next event lies past the horizon stops there with an error; a step
    /// longer than time itself is put at its end instead of wrapping around.
    #[test]
    fn a_run_stops_at_the_horizon_and_time_does_not_wrap() {
        let cat = Catalog::embedded().unwrap();
        let mut wl = Workload::load("ice-video-call", &cat).unwrap();
        wl.use_s = 1e12;
        let dev = Device::load("p20").unwrap();
        let opts = RunOptions { bg_apps: Some(0), ..Default::default() };
        let mut sim = Sim::new(&dev, &wl, &cat, floe_policies::make("lru-cfs").unwrap(), &opts);
        assert!(sim.run_until(Nanos::from_secs(60)));
        assert!(sim.queue.iter().any(|Reverse(q)| q.at == Nanos(u64::MAX)), "the use step ends at the end of time");
        sim.queue.retain(|Reverse(q)| q.at > HORIZON);
        assert!(!sim.run_until(Nanos(u64::MAX)));
        assert!(sim.overran() && sim.now_ns() < HORIZON);
        let e = sim.finish().unwrap_err().to_string();
        assert!(e.contains("146 years of simulated time"), "{e}");
        let mut fine = embedded_sim("p20", "ice-video-call", "lru-cfs", &opts);
        fine.run_to_end();
        assert!(!fine.overran() && fine.finish().is_ok());
    }

    /// A launch-only script's app, left on its first screen, grows to its footprint as
    /// a used app does unless `no_idle_growth` keeps it at what its launch mapped; the
    /// run records which.
    #[test]
    fn an_idle_foreground_app_grows_only_unless_told_not_to() {
        let held = |no_idle_growth: bool| {
            let opts = RunOptions { seed: 1, no_idle_growth, ..Default::default() };
            let mut sim = embedded_sim("nexus5", "selective-a1", "android-lmk", &opts);
            assert!(sim.run_until(Nanos::from_secs(25)));
            let a = sim.apps.iter().find(|a| a.spec.name == "slither-io").unwrap();
            assert_eq!((a.state, sim.fg), (AppState::Foreground, Some(0)), "the first app waits in the foreground");
            let file_launch = pages_of(a.spec.launch_file_mib);
            ((a.populated, a.anon, a.launch_anon), (a.file_seen, a.file, file_launch), sim.record().params.get("idle_growth").cloned())
        };
        let ((pop, anon, launch), (seen, file, _), grows) = held(false);
        assert_eq!((pop, seen, grows), (anon, file, None), "grown to the whole footprint");
        let ((pop, anon, launch_anon), (seen, _, file_launch), still) = held(true);
        assert_eq!(launch_anon, launch);
        assert!(pop == launch_anon && pop < anon, "heap: {pop} populated of {anon}, the launch's {launch_anon}");
        assert!(seen <= file_launch, "files: {seen} seen, the launch's {file_launch}");
        assert_eq!(still, Some(Param::Bool(false)));
    }
}
