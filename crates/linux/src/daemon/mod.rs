//! The daemon loop: the same `Policy` objects the simulator drives, on the running
//! kernel. Apps are cgroups under a configured root, filled with the processes that
//! match the config's rules; observations come from /proc, cgroup files and a PSI
//! trigger (poll, no sleep loops); actions go through one guard and then the kernel;
//! `floe ctl` talks to it over a Unix socket. A supervisor process thaws every group
//! under the root when the daemon dies, however it dies.

use crate::cgroup::{AppGroup, GroupMemory, Hierarchies};
use crate::prepage::AnonPrepager;
use crate::prepage_file::FilePrepager;
use crate::procfs::{parse_cpu_line, parse_swaps};
use crate::state::prepage_key;
use crate::state::Store;
use crate::sys::{set_nice, PsiTrigger, MADV_COLD};
use crate::{read, Error, Result};
use floe_core::lmkd::{self, LowPressure, PsiLevel};
use floe_core::{
    Action, AppId, AppInfo, AppState, CpuClass, CpuMode, Event, LaunchKind, LmkMode, LmkdMode, MemInfo, Nanos, PageKind, Pages, Policy,
    PriorityClass, ReclaimOrder, Setup, SwapSetup, SwapTier, SystemView,
};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

mod config;
mod control;
mod kfile;
mod log;
mod observe;
mod pageout;
mod procs;
mod record;
mod saver;
pub use config::*;
pub use control::*;
use kfile::*;
pub use observe::*;
use pageout::*;
pub use procs::*;
use record::RunStart;
use saver::*;

const T: Duration = Duration::from_secs(2);
/// Fast sampling lasts this long after memory pressure, a refault or a low-memory level
/// (assumption: 5 s, above the PSI trigger's 2 s window).
const BUSY_AFTER_PRESSURE: Duration = Duration::from_secs(5);
/// ... and this long after a launch, which SmartLMK's launch tracker follows at 100 ms
/// (assumption: 10 s, above the longest launches the seeds report, about 5 s cold).
const BUSY_AFTER_LAUNCH: Duration = Duration::from_secs(10);
/// A switch without `floe ctl launch-done` ends this long after it began. Assumption:
/// 3 s, above every switch time ASAP reports (Fig. 6.1, up to about 2 s).
const SWITCH_WINDOW: Duration = Duration::from_secs(3);
struct App {
    rule: AppRule,
    /// A group of the adopted layout (not made by floe; processes are not moved in).
    adopted: bool,
    group: AppGroup,
    state: AppState,
    unkillable: bool,
    swappable: bool,
    last_used: Nanos,
    /// The group's refault counters (anon, file) at the last sample; none before the
    /// first, which only sets this: what a group counted before floe watched it (an
    /// adopted layout, a group left by a daemon that died) is no refault to act on.
    refaults: Option<(u64, u64)>,
    /// Resident (all, and anonymous) and swapped bytes at the last sample.
    rss: u64,
    rss_anon: u64,
    swap: u64,
    /// Whether the app's saved-state marker existed at the last sample.
    marker: bool,
    /// The launch in progress: when `floe ctl fg` began it, and how.
    launching: Option<(Instant, LaunchKind)>,
    /// Processes reniced for the foreground boost (UCSG), to be set back when it leaves.
    boosted: Vec<i32>,
    /// Freeze-aware eviction (Ice+): when the app was frozen, and whether its pages
    /// have been paged out since.
    frozen_since: Option<Instant>,
    paged_out: bool,
    /// When a background page-out of the app freed nothing (its memory locked, no swap
    /// room): not tried again until free memory is back above where page-outs start,
    /// and `PAGEOUT_RETRY` has passed.
    pageout_futile: Option<Instant>,
    /// In a dry run, where no group is made: the processes the rules matched.
    dry_pids: Option<Vec<i32>>,
    /// The oom_score_adj last written to each of the app's processes.
    adj_set: BTreeMap<i32, i32>,
    /// What each sample reads, kept open ([`KFile`]): the group's cgroup.procs (none
    /// for a nested group, whose subgroups are listed anew), its memory.stat, and each
    /// process's status (up to [`KEPT_STATUS`] in all the apps).
    procs_file: Option<KFile>,
    stat_file: Option<KFile>,
    status: BTreeMap<i32, KFile>,
}

/// An idle daemon whose apps the kernel's events cover reads them at every this many
/// idle samples ([`Daemon::apps_quiet`]), and memory at each.
const IDLE_APP_SAMPLES: u32 = 5;

/// At most this many processes' /proc/PID/status are kept open, over all apps (a
/// process beyond is read through its path at each sample).
const KEPT_STATUS: usize = 256;

impl App {
    /// An app not seen running yet: swappable, killable, nothing measured.
    fn new(rule: AppRule, group: AppGroup, adopted: bool) -> App {
        let procs_file = group.v2.as_ref().or(group.freezer.as_ref()).filter(|_| !group.nested).map(|d| KFile::new(d.join("cgroup.procs")));
        let stat_file = group.memory_controller().map(|c| KFile::new(c.dir().join("memory.stat")));
        App {
            procs_file,
            stat_file,
            status: BTreeMap::new(),
            rule,
            adopted,
            group,
            state: AppState::Dead,
            unkillable: false,
            swappable: true,
            last_used: Nanos::ZERO,
            refaults: None,
            rss: 0,
            rss_anon: 0,
            swap: 0,
            marker: false,
            launching: None,
            boosted: Vec::new(),
            frozen_since: None,
            paged_out: false,
            pageout_futile: None,
            dry_pids: None,
            adj_set: BTreeMap::new(),
        }
    }

    /// The app's processes: its group's, or in a dry run those the rules matched that
    /// are still alive.
    fn pids(&self) -> Vec<i32> {
        match &self.dry_pids {
            Some(p) => p.iter().copied().filter(|pid| Path::new(&format!("/proc/{pid}")).exists()).collect(),
            None => self.group.pids().unwrap_or_default(),
        }
    }

    /// [`App::pids`] for a sample: through the group's cgroup.procs kept open.
    fn sample_pids(&mut self) -> Vec<i32> {
        match (&self.dry_pids, &mut self.procs_file) {
            (None, Some(f)) => f.read().map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect()).unwrap_or_default(),
            _ => self.pids(),
        }
    }

    /// Resident (all, and anonymous) and swapped bytes of the app's processes `pids`,
    /// from their status files, kept open while `room` (shared by all apps) lasts; a
    /// process gone meanwhile counts nothing.
    fn sample_memory(&mut self, pids: &[i32], room: &mut usize) -> (u64, u64, u64) {
        let before = self.status.len();
        self.status.retain(|p, _| pids.contains(p));
        *room += before - self.status.len();
        let (mut rss, mut anon, mut swap) = (0, 0, 0);
        for &pid in pids {
            let m = match self.status.get_mut(&pid) {
                Some(f) => f.read().map(status_memory),
                None if *room > 0 => {
                    *room -= 1;
                    self.status.entry(pid).or_insert_with(|| KFile::new(format!("/proc/{pid}/status"))).read().map(status_memory)
                }
                None => read(format!("/proc/{pid}/status")).map(|t| status_memory(&t)),
            };
            if let Ok((r, a, s)) = m {
                (rss, anon, swap) = (rss + r, anon + a, swap + s);
            }
        }
        (rss, anon, swap)
    }

    /// The group's refault counters (anonymous, file), through its memory.stat kept
    /// open.
    fn sample_refaults(&mut self) -> Result<(u64, u64)> {
        match &mut self.stat_file {
            Some(f) => f.read().map(refaults_in),
            None => self.group.refaults(),
        }
    }
}

/// Counters exported as OpenMetrics.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    freezes: u64,
    thaws: u64,
    kills: u64,
    refaults_bg_anon: u64,
    refaults_bg_file: u64,
    refaults_fg_anon: u64,
    refaults_fg_file: u64,
    refused: u64,
    low_memory: u64,
    prepaged: u64,
    switch_faults: u64,
    prepaged_file: u64,
    switch_file_faults: u64,
    frozen_pageouts: u64,
    /// Pages advised out by policies' Reclaim actions.
    reclaim_pages: u64,
    /// Pages of background apps advised out below a policy's swap threshold or, under
    /// FG-last eviction, the low watermark.
    bg_pageout_pages: u64,
    /// Kills below the emergency margin.
    emergency_kills: u64,
    /// The budget's kernel events that woke the loop, by kind: v1 usage thresholds,
    /// v1 memory.pressure_level (medium or above), v2 memory.events.
    budget_usage_events: u64,
    budget_pressure_events: u64,
    budget_memory_events: u64,
    /// Samples taken (the loop's heartbeat).
    samples: u64,
}

static STOP: AtomicBool = AtomicBool::new(false);
/// The write end of a pipe the signal handler writes to, so that a stop wakes the
/// loop's poll at once (-1 before [`Daemon::run`] makes it).
static STOP_POKE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// The longest the loop sleeps without looking at its stop flag: a flag set by
/// another thread (a test's) wakes nothing; a signal wakes the loop through
/// [`STOP_POKE`] at once.
const STOP_CHECK: Duration = Duration::from_secs(1);

/// The loop's deadlines (sample, discovery, tick) that fall within this of a wake-up
/// are met on it, so that deadlines a little apart cost one wake-up, not several.
const COALESCE: Duration = Duration::from_millis(5);

/// The longest launch `floe ctl launch-done APP MS` may report, ms: ten minutes, longer
/// than any launch, so that a typo (a time in µs, a stray digit) cannot make the run's
/// launch figures meaningless.
const LAUNCH_MS_MAX: f64 = 600_000.0;

/// The state database key of the daemon's own session ([`Session`]).
pub const SESSION_KEY: &str = "floe/session";

/// What a restarted daemon restores: the foreground app, the frozen ones, and every
/// app by recency, least recently used first (the order oom_adj follows).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Session {
    pub fg: Option<String>,
    pub frozen: Vec<String>,
    pub order: Vec<String>,
}

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    let fd = STOP_POKE.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write is async-signal-safe; a valid fd and one byte.
        unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
    }
}

/// The running daemon.
pub struct Daemon {
    cfg: Config,
    hier: Hierarchies,
    policy: Option<Box<dyn Policy>>,
    setup: Setup,
    apps: Vec<App>,
    fg: Option<AppId>,
    start: Instant,
    cpu_sample: (u64, u64),
    util: f64,
    supervisor: i32,
    /// The supervisor's process, watched: if it dies, another is started, so that
    /// the daemon's own death still thaws the apps.
    supervisor_child: Option<std::process::Child>,
    /// How the supervisor is started: its executable and arguments.
    supervisor_cmd: Option<(PathBuf, Vec<String>)>,
    c: Counters,
    pending: Vec<Event>,
    /// /proc/meminfo (or the budget) at the last sample (policies read it often).
    meminfo: MemInfo,
    /// The group holding every app group (its limit is the memory budget).
    root: AppGroup,
    /// The low-memory killer's levels, ascending oom_adj: (adj, free below which).
    lmk_levels: Vec<(i32, Pages)>,
    /// The level free memory was below at the last sample.
    lmk_level: Option<i32>,
    /// lmkd's PSI mode, when configured for a policy that keeps Android's killer.
    psi_lmkd: Option<PsiLmkd>,
    /// The state database, read at start-up; then the saver thread's.
    store: Option<Store>,
    /// The thread that writes the state database, started at the end of start-up.
    saver: Option<Saver>,
    last_save: Instant,
    /// ASAP's anonymous estimator and prepaging, for policies that ask for it.
    prepager: Option<AnonPrepager>,
    /// ASAP's file-backed estimator and prepaging, for policies that ask for it.
    file_prepager: Option<FilePrepager>,
    /// Sample at `sample_ms` until then, at `idle_sample_ms` after.
    busy_until: Instant,
    /// min_free_kbytes, read once.
    min_free_kb: u64,
    /// kswapd's pages scanned and reclaimed at the last sample ([`kswapd_scan_steal`]),
    /// read for policies that listen for pressure.
    kswapd_vm: (u64, u64),
    /// Whether the last sample found kswapd failing (logged on change).
    kswapd_failing: bool,
    /// Whether free memory was below where `background_pageout` starts at the last sample.
    below_pageout_mark: bool,
    /// Pages `background_pageout` still has to page out for the current dip below its
    /// mark, beyond what one sample takes ([`PAGEOUT_PAGES_PER_SAMPLE`]).
    pageout_owed: u64,
    /// The frozen app whose page-out (Ice+) began at an earlier sample and goes on.
    frozen_pageout_of: Option<usize>,
    /// `Reclaim` and `Prepage` actions (a policy's, or `floe ctl`'s) that go on over the
    /// following samples ([`Advice`]), oldest first.
    advice: Vec<Advice>,
    /// The `floe ctl` client whose request is being handled, for an action that will
    /// answer it when it ends.
    ctl_client: Option<Sender<String>>,
    /// The control socket's thread and its requests.
    ctl: Option<ControlPlane>,
    /// Wake-ups on the budget's memory: v1 usage thresholds and memory.pressure_level
    /// (eventfds), the root group's v2 memory.events (POLLPRI), and a PSI trigger on its
    /// memory.pressure.
    budget_wakes: Vec<(OwnedFd, libc::c_short, BudgetEvent)>,
    root_psi: Option<PsiTrigger>,
    /// When an app was last thawed (ticks stay at the policy's pace for a while after).
    last_thaw: Instant,
    /// The read end of [`STOP_POKE`]'s pipe, polled by the loop (under [`Daemon::run`]).
    stop_wake: Option<OwnedFd>,
    /// Whether the budget's last events included a critical pressure level (logged on
    /// the first of a run of them).
    budget_critical: bool,
    /// Below this many pages free, the emergency kill.
    emergency: Pages,
    scanner: ProcScanner,
    timeline: Option<Timeline>,
    /// Where the run `floe ctl run` and `run_json` report starts.
    run_start: RunStart,
    /// The launches `floe ctl launch-done` ended, in order.
    launches: Vec<floe_core::LaunchLog>,
    /// The files each sample reads, kept open ([`KFile`]): /proc/meminfo and zram's,
    /// the budget's charge and memory.stat (and whether v1's), /proc/stat, /proc/vmstat.
    mem_files: MemFiles,
    root_files: Option<(KFile, KFile, bool)>,
    proc_stat: KFile,
    vmstat: KFile,
    /// When the apps were last read ([`Daemon::read_apps`]).
    apps_read: Instant,
    /// What the state database holds, by key, as this daemon last saved or loaded it:
    /// a save of the same text is skipped.
    saved: BTreeMap<String, String>,
    /// This daemon's hold on its state database and cgroup root ([`Locks`]).
    _locks: Locks,
    /// The log's writer (last, so that it is dropped last: the lines of the other
    /// fields' ends are written before it waits for the queue to drain).
    logger: log::Logger,
}

/// What a budget wake-up ([`Daemon::budget_wakes`]) listens for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum BudgetEvent {
    /// A v1 memory.usage_in_bytes threshold crossed.
    Usage,
    /// v1 memory.pressure_level: medium or above, critical.
    Medium,
    Critical,
    /// The v2 group's memory.events changed.
    MemoryEvents,
}

/// Android 10 lmkd's PSI mode: its two triggers, the free memory low pressure saw, and
/// the level it polls after an event, until when.
struct PsiLmkd {
    low: PsiTrigger,
    medium: PsiTrigger,
    /// The triggers' window: lmkd's 1 s, or 2 s where the kernel refuses 1 s.
    window: Duration,
    /// `use_minfree_levels` (`lmkd = "psi-minfree"`): events and polls check the minfree
    /// table and kill the largest app at the highest adj it allows.
    minfree_levels: bool,
    seen: LowPressure,
    poll: Option<(PsiLevel, Instant)>,
    /// The last kill (`psi-minfree`'s kill timeout): when, and whom.
    last_kill: Option<(Instant, AppId)>,
}

impl PsiLmkd {
    fn new(minfree_levels: bool) -> Result<PsiLmkd> {
        let (low, medium, window) = lmkd_triggers()?;
        Ok(PsiLmkd { low, medium, window, minfree_levels, seen: LowPressure::default(), poll: None, last_kill: None })
    }
}

/// lmkd's low and medium triggers on /proc/pressure/memory, and their window. Windows
/// that are not a multiple of 2 s need CAP_SYS_RESOURCE (lmkd.rc grants it); without
/// it the window is doubled with the thresholds, the same shares of stalled time (7 %
/// and 10 %).
pub fn lmkd_triggers() -> Result<(PsiTrigger, PsiTrigger, Duration)> {
    let d = |n: Nanos| Duration::from_nanos(n.0);
    let make = |scale: u32| -> Result<(PsiTrigger, PsiTrigger, Duration)> {
        let trigger = |stall| PsiTrigger::new("/proc/pressure/memory", false, d(stall) * scale, d(lmkd::PSI_WINDOW) * scale);
        Ok((trigger(lmkd::LOW_SOME)?, trigger(lmkd::MEDIUM_SOME)?, d(lmkd::PSI_WINDOW) * scale))
    };
    match make(1) {
        Err(Error::Unsupported(_)) => make(2),
        r => r,
    }
}

/// The timeline being written: where, when the next row is due, and the counters at
/// the last row (a row's counts are the differences).
struct Timeline {
    w: csv::Writer<std::fs::File>,
    path: PathBuf,
    every: Duration,
    next: Instant,
    c: Counters,
    /// Pages reclaimed in all, directly and anonymous, machine-wide (/proc/vmstat).
    steal: Stolen,
    /// The kswapd threads (one per memory node) and their CPU time at the last row, ms.
    kswapd: Vec<i32>,
    kswapd_ms: f64,
    /// The apps' CPU time at the last row, us (None without cgroup v2).
    apps_us: Option<u64>,
}

impl Timeline {
    /// Opens (or appends to) the timeline file; the header goes only into an empty one.
    fn open(path: &Path, every_ms: u64) -> Result<Timeline> {
        let f = crate::open_regular(path, std::fs::OpenOptions::new().create(true).append(true), 0o640)
            .map_err(|e| Error::Unsupported(format!("timeline: {e}")))?;
        let empty = f.metadata().map(|m| m.len() == 0).unwrap_or(true);
        let every = Duration::from_millis(every_ms);
        let kswapd = kswapd_pids();
        Ok(Timeline {
            apps_us: None,
            kswapd_ms: kswapd_ms(&kswapd),
            kswapd,
            w: csv::WriterBuilder::new().has_headers(empty).from_writer(f),
            path: path.to_path_buf(),
            every,
            next: Instant::now() + every,
            c: Counters::default(),
            steal: read_stolen(),
        })
    }
}

impl Daemon {
    /// Sets up the groups, thaws what a previous floe left frozen, starts the supervisor
    /// and the control socket. What is checked or opened before anything on the system
    /// changes: the policy, the socket (its path is bound first), the state database, the
    /// timeline and where the run's record goes. A start-up that fails after making
    /// groups removes the ones it made. In a dry run no group is made, thawed, limited
    /// or filled: the apps are the processes the rules match, observed in place.
    ///
    /// The supervisor is `supervisor`'s executable run with its words, then
    /// `--supervise PID` and what it thaws; none with `None` (or in a dry run).
    pub fn new(cfg: Config, supervisor: Option<(&Path, &[&str])>) -> Result<Daemon> {
        Daemon::new_logging_to(cfg, supervisor, Box::new(std::io::stdout()))
    }

    /// [`Daemon::new`], its log written to `sink` (by a thread of its own: the loop
    /// never waits for the sink, see [`log`]).
    pub fn new_logging_to(cfg: Config, supervisor: Option<(&Path, &[&str])>, sink: Box<dyn Write + Send>) -> Result<Daemon> {
        let start = Instant::now();
        let logger = log::Logger::start(sink, start).map_err(crate::io_err("the log's writer thread"))?;
        let hier = Hierarchies::detect()?;
        let policy = floe_policies::make(&cfg.policy).ok_or_else(|| Error::Unsupported(format!("unknown policy `{}`", cfg.policy)))?;
        let setup = policy.setup();
        if let Some(why) = refuses(&cfg.policy) {
            return Err(Error::Unsupported(why));
        }
        // What fails here names the config's key: a path alone does not say which.
        let keyed = |key: &'static str| move |e: Error| Error::Unsupported(format!("{key}: {e}"));
        if let Some(dir) = cfg.socket.parent().filter(|d| !d.is_dir()) {
            return Err(Error::Unsupported(format!("socket: {}: directory {} does not exist", cfg.socket.display(), dir.display())));
        }
        let ctl = ControlPlane::bind(&cfg.socket, cfg.ctl_gid).map_err(keyed("socket"))?;
        let store = if cfg.dry_run && !cfg.state_db.exists() { Store::in_memory() } else { Store::open(&cfg.state_db) }
            .map_err(keyed("state_db"))?;
        // Before anything is thawed or restored: another daemon's apps and state are
        // not this one's to touch.
        let mut locks = Locks::default();
        if !cfg.dry_run {
            locks.take(&cfg.state_db, "state_db")?;
            for dir in cgroup_root_dirs(&hier, &cfg.cgroup_root).filter(|d| d.is_dir()) {
                locks.take(&dir, "cgroup_root")?;
            }
        }
        let timeline = match &cfg.timeline {
            Some(path) => Some(Timeline::open(path, cfg.timeline_ms)?),
            None => None,
        };
        if let Some(path) = &cfg.run_json {
            record::check_run_json(path)?;
        }
        let mut made = Vec::new();
        let r = Daemon::start(cfg, hier, policy, setup, store, timeline, ctl, supervisor, (logger, start, locks), &mut made);
        if r.is_err() {
            // Deepest first; a group that holds a process stays (the kernel refuses).
            for d in made.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
        }
        r
    }

    /// [`Daemon::new`] from the point where groups are made; `made` collects the
    /// directories it creates.
    #[allow(clippy::too_many_arguments)]
    fn start(
        cfg: Config,
        hier: Hierarchies,
        policy: Box<dyn Policy>,
        setup: Setup,
        store: Store,
        timeline: Option<Timeline>,
        ctl: ControlPlane,
        supervisor: Option<(&Path, &[&str])>,
        (logger, start, mut locks): (log::Logger, Instant, Locks),
        made: &mut Vec<PathBuf>,
    ) -> Result<Daemon> {
        let dry = cfg.dry_run;
        let mut create = |rel: &str| -> Result<AppGroup> {
            if dry {
                return Ok(AppGroup::planned(&hier, rel));
            }
            let missing = AppGroup::missing_dirs(&hier, rel);
            let r = AppGroup::create(&hier, rel);
            made.extend(missing.into_iter().filter(|d| d.is_dir()));
            r
        };
        if !dry {
            thaw_all(&hier, &cfg.cgroup_root)?;
            if let Some(l) = &cfg.adopt_layout {
                thaw_layout(&hier, l)?;
            }
        }
        let root = create(&cfg.cgroup_root)?;
        if !dry {
            // The groups this start made are held too, for the next daemon to find.
            let new: Vec<PathBuf> = cgroup_root_dirs(&hier, &cfg.cgroup_root).filter(|d| d.is_dir() && !locks.holds(d)).collect();
            for dir in new {
                locks.take(&dir, "cgroup_root")?;
            }
        }
        if let Some(e) = refaults_unheard(&cfg.policy, &setup, &root) {
            return Err(e);
        }
        let mut apps = Vec::new();
        for r in cfg.apps.iter().filter(|_| cfg.adopt_layout.is_none()) {
            let group = create(&format!("{}/{}", cfg.cgroup_root, r.name))?;
            let mut app = App::new(r.clone(), group, false);
            if dry {
                app.dry_pids = Some(Vec::new());
            }
            apps.push(app);
        }
        let budget = cfg.memory_limit_mib.map(|mib| mib << 20);
        let emergency = Pages(cfg.emergency_bytes() / 4096);
        let mut budget_wakes = Vec::new();
        let mut notes = Vec::new();
        if let (None, false) = (budget, dry) {
            // A cap an earlier daemon's config set goes with the config: left, it would
            // turn the kernel's OOM killer on apps this daemon thinks unbounded.
            if let Err(e) = root.lift_memory_limit() {
                notes.push(format!("budget: cannot lift an earlier memory limit: {e}"));
            }
        }
        if let (Some(bytes), false) = (budget, dry) {
            root.set_memory_limit(bytes)?;
            // Wake when use crosses the emergency margin and the lowest level's line
            // below the limit (v1), or on the group's memory events with memory.high
            // the margin below the limit (v2).
            let highest_level = cfg.minfree_mib.iter().map(|&(_, m)| (m * 1048576.0) as u64).max().unwrap_or(0);
            for below in [emergency.0 * 4096, highest_level] {
                if below > 0 && below < bytes {
                    match root.usage_threshold(bytes - below) {
                        Ok(fd) => budget_wakes.push((fd, libc::POLLIN, BudgetEvent::Usage)),
                        Err(e) => notes.push(format!("budget: no usage threshold: {e}")),
                    }
                }
            }
            // And when reclaim in the budget (or any group below it) starts to fail
            // (v1 vmpressure: medium, and critical, close to the kernel's OOM killer).
            if let Some(crate::cgroup::MemoryController::V1(_)) = root.memory_controller() {
                for (level, ev) in [("medium", BudgetEvent::Medium), ("critical", BudgetEvent::Critical)] {
                    match root.pressure_level(level, true) {
                        Ok(fd) => budget_wakes.push((fd, libc::POLLIN, ev)),
                        Err(e) => notes.push(format!("budget: no {level} pressure events: {e}")),
                    }
                }
            }
            if let Some(crate::cgroup::MemoryController::V2(d)) = root.memory_controller() {
                if let Err(e) = root.set_memory_high(bytes - emergency.0 * 4096) {
                    notes.push(format!("budget: {e}"));
                }
                match std::fs::File::open(d.join("memory.events")) {
                    Ok(f) => budget_wakes.push((f.into(), libc::POLLPRI, BudgetEvent::MemoryEvents)),
                    Err(e) => notes.push(format!("budget: cannot watch memory.events: {e}")),
                }
            }
        }
        if let (Some(_), false) = (cfg.memory_limit_mib, dry) {
            if let Err(e) = root.moves_charges() {
                notes.push(format!("budget: {e}"));
            }
        }
        // Stalls of the apps' own group wake the loop too (cgroup v2 PSI).
        let root_psi = root
            .pressure_path()
            .filter(|p| !dry && p.exists())
            .and_then(|p| PsiTrigger::new(&p.display().to_string(), false, Duration::from_millis(50), crate::check::PSI_WINDOW).ok());
        let lmk_levels = match setup.kill_threshold {
            // One level: any app but the foreground, as the simulator does.
            Some(t) => vec![(1, t)],
            None => cfg.minfree_mib.iter().map(|&(adj, mib)| (adj, Pages::from_mib_f64(mib))).collect(),
        };
        let prepager = setup.prepage.filter(|p| p.anon).map(|_| AnonPrepager::new());
        let file_prepager = setup.prepage.filter(|p| p.file).map(|_| FilePrepager::new());
        let supervisor_cmd = supervisor.filter(|_| !dry).map(|(exe, words)| {
            let mut args: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            args.extend(["--supervise", &std::process::id().to_string(), "--cgroup-root", &cfg.cgroup_root].map(String::from));
            args.extend(cfg.adopt_layout.iter().flat_map(|l| ["--adopt-layout".to_string(), l.clone()]));
            if setup.cpu == CpuMode::FgBoost {
                args.push("--unboost".into());
            }
            (exe.to_path_buf(), args)
        });
        let supervisor_child = match &supervisor_cmd {
            Some((exe, args)) => Some(std::process::Command::new(exe).args(args).spawn().map_err(crate::io_err(exe))?),
            None => None,
        };
        let supervisor = supervisor_child.as_ref().map_or(0, |c| c.id() as i32);
        let cfg_budget_watched = cfg.memory_limit_mib.is_some();
        let mut d = Daemon {
            cfg,
            hier,
            policy: Some(policy),
            setup,
            apps,
            fg: None,
            start,
            logger,
            _locks: locks,
            cpu_sample: (0, 0),
            util: 0.0,
            supervisor,
            supervisor_child,
            supervisor_cmd,
            c: Counters::default(),
            pending: Vec::new(),
            meminfo: MemInfo::default(),
            root,
            lmk_levels,
            lmk_level: None,
            psi_lmkd: None,
            store: Some(store),
            saver: None,
            last_save: Instant::now(),
            prepager,
            file_prepager,
            busy_until: Instant::now(),
            scanner: ProcScanner::with_events(),
            timeline: None,
            run_start: RunStart::now(Counters::default(), None),
            launches: Vec::new(),
            min_free_kb: read("/proc/sys/vm/min_free_kbytes").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0),
            kswapd_vm: (0, 0),
            kswapd_failing: false,
            below_pageout_mark: false,
            pageout_owed: 0,
            frozen_pageout_of: None,
            advice: Vec::new(),
            ctl_client: None,
            ctl: Some(ctl),
            budget_wakes,
            root_psi,
            budget_critical: false,
            stop_wake: None,
            last_thaw: Instant::now(),
            emergency,
            mem_files: MemFiles::new(),
            root_files: None,
            proc_stat: KFile::new("/proc/stat"),
            vmstat: KFile::new("/proc/vmstat"),
            saved: BTreeMap::new(),
            apps_read: Instant::now(),
        };
        if cfg_budget_watched {
            d.root_files = d.root.memory_usage_files().ok().map(|(u, st, v1)| (KFile::new(u), KFile::new(st), v1));
        }
        for w in std::mem::take(&mut d.cfg.warnings) {
            d.log(&format!("config: warning: {w}"));
        }
        if let Some(l) = &d.cfg.adopt_layout {
            let dir = d.hier.v2.as_ref().map(|v2| v2.join(l));
            if !dir.as_ref().is_some_and(|dir| dir.is_dir()) {
                let at = dir.map_or("no cgroup v2 mount".to_string(), |dir| format!("no group {}", dir.display()));
                d.log(&format!("config: warning: adopt_layout `{l}`: {at} (yet): no app is managed until its uid_N groups appear"));
            }
        }
        for n in notes {
            d.log(&n);
        }
        if dry {
            d.log("dry run: no group is made, thawed, limited or filled; apps are the processes their rules match, and no action is taken");
        }
        // The previous run's foreground and recency come back before the first sample,
        // so nothing the policy does at start touches the app the user was in.
        let session = d.load_saved(SESSION_KEY)?;
        let frozen = session.as_deref().map(|s| d.restore_session(s)).unwrap_or_default();
        d.sample(true);
        d.pending.clear();
        // The run's counts, like the timeline's, start after the first sample.
        d.run_start = RunStart::now(d.c, d.apps_cpu_us());
        if let Some(mut t) = timeline {
            // Counts start from here, not from what the first sample found.
            t.c = d.c;
            t.apps_us = d.apps_cpu_us();
            d.timeline = Some(t);
        }
        if let Some(saved) = d.load_saved(&d.cfg.policy.clone())? {
            let mut p = d.policy.take().expect("policy present");
            let r = p.import_state(&saved, &d);
            d.policy = Some(p);
            match r {
                Ok(()) => d.log(&format!("state: restored {} from {}", d.cfg.policy, d.cfg.state_db.display())),
                // A state this version cannot read is reported and replaced, not fatal.
                Err(e) => d.log(&format!("state: ignoring saved {} state in {}: {e}", d.cfg.policy, d.cfg.state_db.display())),
            }
        }
        if let Some(saved) = d.load_saved(&prepage_key(&d.cfg.policy))? {
            if let Some(p) = d.prepager.as_mut() {
                if let Err(e) = p.import(&saved) {
                    d.log(&format!("state: ignoring saved prepaging tables: {e}"));
                }
            }
            if let Some(p) = d.file_prepager.as_mut() {
                if let Err(e) = p.import(&saved) {
                    d.log(&format!("state: ignoring saved file prepaging tables: {e}"));
                }
            }
        }
        // Apps that were frozen when the last daemon stopped are frozen again (the
        // supervisor thawed them), never the foreground.
        for i in frozen {
            if d.apps[i].state != AppState::Dead && d.fg != Some(AppId(i as u16)) {
                let _ = d.apply(Action::Freeze(AppId(i as u16)));
            }
        }
        if d.setup.reclaim == ReclaimOrder::FgLast {
            d.log(&format!(
                "note: policy {} reclaims the foreground app's pages last: below the low watermark floe pages out background apps first, least recently used first, up to the high one; the kernel's own reclaim keeps its LRU order",
                d.cfg.policy
            ));
        }
        if let Some(t) = d.setup.swap_threshold {
            d.log(&format!(
                "note: policy {} swaps below its own threshold, {:.1} MiB free: floe pages out background apps' anonymous memory there, least recently used first; the kernel's reclaim still starts at its watermarks (or the budget's limit)",
                d.cfg.policy,
                t.0 as f64 / 256.0
            ));
        }
        let swaps = parse_swaps(&read("/proc/swaps").unwrap_or_default());
        let zswap_on = read("/sys/module/zswap/parameters/enabled").is_ok_and(|v| v.trim() == "Y");
        if let Some(note) = swap_note(&d.cfg.policy, d.setup.swap, &swaps, zswap_on) {
            d.log(&note);
        }
        for i in 0..d.apps.len() {
            d.keep_out_of_swap(i);
        }
        // From here on the database is written by a thread of its own, never the loop.
        let store = d.store.take().expect("the store is the daemon's until here");
        d.saver = Some(Saver::start(store, d.logger.log().clone()).map_err(crate::io_err("the state database's saver thread"))?);
        Ok(d)
    }

    /// Restores the foreground app and the apps' recency order saved by the last
    /// daemon ([`SESSION_KEY`]); returns the apps that were frozen.
    fn restore_session(&mut self, text: &str) -> Vec<usize> {
        let s: Session = match serde_json::from_str(text) {
            Ok(s) => s,
            Err(e) => {
                self.log(&format!("state: ignoring the saved session: {e}"));
                return Vec::new();
            }
        };
        // Least recently used first: each a nanosecond after the one before, all before
        // this daemon's first sample.
        for (k, name) in s.order.iter().enumerate() {
            if let Ok(i) = self.app_named(name) {
                self.apps[i].last_used = Nanos(k as u64 + 1);
            }
        }
        if let Some(i) = s.fg.as_deref().and_then(|n| self.app_named(n).ok()) {
            self.fg = Some(AppId(i as u16));
            self.log(&format!(
                "state: {} was in the foreground: it stays there until `floe ctl fg` says otherwise",
                s.fg.as_deref().unwrap_or("")
            ));
        }
        s.frozen.iter().filter_map(|n| self.app_named(n).ok()).collect()
    }

    /// What a restarted daemon needs of this one: the foreground, the frozen apps, and
    /// the apps by recency (least recent first).
    fn session(&self) -> Session {
        let mut order: Vec<usize> = (0..self.apps.len()).collect();
        order.sort_by_key(|&i| (self.fg == Some(AppId(i as u16)), self.apps[i].last_used));
        Session {
            fg: self.fg.map(|f| self.apps[f.0 as usize].rule.name.clone()),
            frozen: self.apps.iter().filter(|a| a.state == AppState::Frozen).map(|a| a.rule.name.clone()).collect(),
            order: order.into_iter().map(|i| self.apps[i].rule.name.clone()).collect(),
        }
    }

    /// Saves each (key, text) of `items` whose text is not what the database holds as
    /// this daemon last saved or loaded it (an idle daemon writes nothing): handed to
    /// the saver thread, which writes them in one transaction while the loop goes on.
    /// A key whose save failed is saved again at the next call. Before the saver
    /// starts (start-up), written here.
    fn save_changed(&mut self, items: Vec<(String, String)>) {
        for key in self.saver.as_ref().map(Saver::failed).unwrap_or_default() {
            self.saved.remove(&key);
        }
        let changed: Vec<(String, String)> = items.into_iter().filter(|(k, t)| self.saved.get(k) != Some(t)).collect();
        if changed.is_empty() {
            return;
        }
        for (k, t) in &changed {
            self.saved.insert(k.clone(), t.clone());
        }
        if let Some(s) = &self.saver {
            s.hand(changed);
            return;
        }
        let store = self.store.as_mut().expect("the store is the daemon's until the saver starts");
        if let Err(e) = store.save_all(changed.iter().map(|(k, t)| (k.as_str(), t.as_str()))) {
            self.log(&format!("state: cannot save: {e}"));
            for (k, _) in changed {
                self.saved.remove(&k);
            }
        }
    }

    /// Loads what the database holds under `key`, remembered as saved (start-up only).
    fn load_saved(&mut self, key: &str) -> Result<Option<String>> {
        let text = self.store.as_ref().expect("loads come before the saver starts").load(key)?;
        if let Some(t) = &text {
            self.saved.insert(key.to_string(), t.clone());
        }
        Ok(text)
    }

    /// Saves the session at once (the foreground changed).
    fn save_session(&mut self) {
        if self.cfg.dry_run {
            return;
        }
        let text = serde_json::to_string(&self.session()).expect("a session serializes");
        self.save_changed(vec![(SESSION_KEY.to_string(), text)]);
    }

    /// Adopts the layout's `uid_N` groups that are new since the last look.
    fn discover_layout(&mut self) {
        let Some(l) = self.cfg.adopt_layout.clone() else { return };
        let Some(v2) = self.hier.v2.clone() else { return };
        let dir = v2.join(&l);
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        let mut found: Vec<(u32, String)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let uid = name.strip_prefix("uid_")?.parse::<u32>().ok()?;
                e.file_type().ok()?.is_dir().then_some((uid, name))
            })
            .collect();
        found.sort();
        for (uid, dirname) in found {
            if self.apps.iter().any(|a| a.adopted && a.group.v2.as_deref() == Some(dir.join(&dirname).as_path())) {
                continue;
            }
            let rule = self.cfg.apps.iter().find(|r| r.uid == Some(uid)).cloned().unwrap_or(AppRule {
                name: dirname.clone(),
                exe: None,
                cmdline: None,
                uid: Some(uid),
                perceptible: false,
                saves_context: false,
                state_marker: None,
                priority: PriorityClass::Medium,
            });
            match AppGroup::adopt(&self.hier, dir.join(&dirname), &format!("{}/{}", self.cfg.cgroup_root, dirname)) {
                Ok(group) => {
                    self.log(&format!("app {}: adopted group {}", rule.name, dir.join(&dirname).display()));
                    self.apps.push(App::new(rule, group, true));
                    self.keep_out_of_swap(self.apps.len() - 1);
                }
                Err(e) => self.log(&format!("cannot adopt {}: {e}", dir.join(&dirname).display())),
            }
        }
    }

    fn stay_busy(&mut self, d: Duration) {
        self.busy_until = self.busy_until.max(Instant::now() + d);
    }

    /// Saves the session and what the policy learned, in one transaction (on the saver
    /// thread).
    fn save_state(&mut self) {
        self.last_save = Instant::now();
        if self.cfg.dry_run {
            return;
        }
        let mut items = vec![(SESSION_KEY.to_string(), serde_json::to_string(&self.session()).expect("a session serializes"))];
        // One record for both estimators: {"anon": ..., "file": ...}.
        let parts =
            self.prepager.as_ref().map(AnonPrepager::export).into_iter().chain(self.file_prepager.as_ref().map(FilePrepager::export));
        let all: serde_json::Map<String, serde_json::Value> = parts.filter_map(|v| v.as_object().cloned()).flatten().collect();
        if !all.is_empty() {
            items.push((prepage_key(&self.cfg.policy), serde_json::Value::Object(all).to_string()));
        }
        if let Some(state) = self.policy.as_ref().and_then(|p| p.export_state(self)) {
            items.push((self.cfg.policy.clone(), state));
        }
        self.save_changed(items);
    }

    /// The low-memory killer, once per sample: below a level, the stock killer kills
    /// the highest oom_adj at or above the level's (largest first); a policy that is the
    /// killer hears [`Event::LowMemory`] and answers with kills.
    fn lmk(&mut self) {
        if self.setup.lmk == LmkMode::OomOnly || self.psi_lmkd.is_some() {
            return;
        }
        let free = self.meminfo.free;
        let level = lmk_level(&self.lmk_levels, free);
        if level != self.lmk_level {
            self.lmk_level = level;
            match level {
                Some(adj) => self.log(&format!("lmk: {} MiB free, below the level of adj {adj}", free.0 / 256)),
                None => self.log(&format!("lmk: {} MiB free, above every level", free.0 / 256)),
            }
        }
        let Some(min_adj) = level else { return };
        self.c.low_memory += 1;
        self.stay_busy(BUSY_AFTER_PRESSURE);
        if self.setup.lmk == LmkMode::Policy {
            self.pending.push(Event::LowMemory { min_adj, free });
            return;
        }
        let victim = stock_victim(&self.app_infos(), self.fg, min_adj);
        if let Some(v) = victim {
            let _ = self.apply(Action::Kill(vec![v]));
            self.sample(false);
        }
    }

    /// lmkd's main loop step: its triggers' events (`fds`: low, medium, as polled), else
    /// a poll of the last event's level while that event's window lasts.
    fn lmkd_poll(&mut self, fds: &[libc::pollfd]) {
        let now = Instant::now();
        let fired: Vec<PsiLevel> = [PsiLevel::Low, PsiLevel::Medium]
            .into_iter()
            .zip(fds)
            .filter(|(_, f)| f.revents & libc::POLLPRI != 0)
            .map(|(l, _)| l)
            .collect();
        let Some(l) = self.psi_lmkd.as_mut() else { return };
        let until = now + l.window;
        for level in lmkd::handlers(&mut l.poll, &fired, now, until) {
            self.lmkd_event(level, !fired.is_empty());
        }
    }

    /// lmkd's handler for an event, or a poll after one, of `level` (PSI mode): a low
    /// event records free memory; a medium one kills one app if free memory is below
    /// what low pressure saw. `event`: an event, not a poll (logged).
    fn lmkd_event(&mut self, level: PsiLevel, event: bool) {
        self.refresh_meminfo();
        self.fresh_apps();
        let free = self.meminfo.free;
        let Some(minfree_levels) = self.psi_lmkd.as_ref().map(|l| l.minfree_levels) else { return };
        // An event that may kill: sample fast for a while, as after any pressure.
        if event && (minfree_levels || level == PsiLevel::Medium) {
            self.stay_busy(BUSY_AFTER_PRESSURE);
        }
        let Some(l) = self.psi_lmkd.as_mut() else { return };
        // The victim, and why (for the log).
        let (victim, why) = if minfree_levels {
            // kill_timeout_ms: while the last victim is still dying, its memory is not
            // back yet; lmkd skips the event (is_kill_pending). A kill here waits for the
            // victim's exit, so this holds only after a kill that timed out.
            let since = l.last_kill.map(|(at, _)| Nanos(at.elapsed().as_nanos() as u64));
            let victim = l.last_kill.map(|(_, v)| v.0 as usize);
            if lmkd::kill_pending(since, || victim.is_some_and(|v| !self.apps[v].pids().is_empty())) {
                return;
            }
            let Some(min_adj) = lmk_level(&self.lmk_levels, free) else { return };
            let why = format!(
                "{} memory pressure, {} MiB free, below the minfree level of adj {min_adj}",
                format!("{level:?}").to_lowercase(),
                free.0 / 256
            );
            (stock_victim(&self.app_infos(), self.fg, min_adj), why)
        } else if level == PsiLevel::Low {
            let first = l.seen.max_free().is_none();
            l.seen.record(free);
            if first {
                self.log(&format!("lmkd: low memory pressure, {} MiB free: kills from now on below that", free.0 / 256));
            }
            return;
        } else {
            let Some(gate) = l.seen.max_free().filter(|_| l.seen.may_kill(free)) else { return };
            let why = format!("medium memory pressure, {} MiB free (below {} MiB)", free.0 / 256, gate.0 / 256);
            (lmkd::psi_victim(&self.app_infos(), self.fg, lmkd::MEDIUM_MIN_ADJ), why)
        };
        let Some(v) = victim else { return };
        self.log(&format!("lmkd: {why}: killing {}", self.apps[v.0 as usize].rule.name));
        let _ = self.apply(Action::Kill(vec![v]));
        if let Some(l) = self.psi_lmkd.as_mut() {
            l.last_kill = Some((Instant::now(), v));
        }
        self.sample(false);
    }

    /// One line to the log (stdout: the journal under systemd), queued for the log's
    /// thread: never waits. A closed or stalled stdout does not stop the daemon: lines
    /// the queue cannot hold are lost, counted, and the daemon goes on.
    fn log(&self, msg: &str) {
        self.logger.log().line(msg);
    }

    /// The index of the app the config names `name`.
    fn app_named(&self, name: &str) -> std::result::Result<usize, String> {
        self.apps.iter().position(|a| a.rule.name == name).ok_or_else(|| format!("unknown app `{name}`"))
    }

    /// Logs `msg` and returns it.
    fn said(&self, msg: String) -> String {
        self.log(&msg);
        msg
    }

    /// Finds new processes for the apps, notices apps that died, reads refault
    /// counters and CPU use; turns what changed into events.
    fn sample(&mut self, discover: bool) {
        self.sample_as(discover, true);
    }

    /// [`Daemon::sample`]; without `all`, the apps are read only when
    /// [`Daemon::apps_quiet`] does not hold or a process new to them started.
    fn sample_as(&mut self, discover: bool, all: bool) {
        if discover {
            self.discover_layout();
        }
        let procs = if discover && self.cfg.adopt_layout.is_none() {
            let apps = &self.apps;
            self.scanner.scan_where(&|exe, cmdline| apps.iter().any(|a| a.rule.may_match(exe, cmdline)))
        } else {
            Vec::new()
        };
        // Free memory first: whether the apps must be read depends on it.
        self.refresh_memory(false);
        let started = procs.iter().any(|p| self.apps.iter().any(|a| a.rule.matches(p)));
        let full = all || started || !self.apps_quiet();
        if full {
            self.mem_files.read_zram(&mut self.meminfo);
            self.read_apps(&procs, discover);
        }
        self.c.samples += 1;
        self.frozen_first_pageout();
        self.background_pageout();
        self.continue_advice();
        self.sample_system(full);
    }

    /// Whether an idle sample may leave the apps as the last one read them: the daemon
    /// is idle (no pressure or launch lately, no thaw), free memory is above every level
    /// of the killer and its emergency margin, nothing is being paged out or in, no app
    /// is frozen, the policy hears no ticks or refaults (which it would act on), the
    /// apps are not an adopted layout's (whose new processes only their groups show),
    /// no timeline is written (its rows count the apps alive), and the apps were read
    /// within the last [`IDLE_APP_SAMPLES`] idle samples. A process that starts for an
    /// app, a kill and a `floe ctl` request read them anew (a kill's victim is chosen
    /// on the apps as they are).
    fn apps_quiet(&self) -> bool {
        let now = Instant::now();
        let free = self.meminfo.free;
        now >= self.busy_until
            && self.last_thaw.elapsed() >= BUSY_AFTER_PRESSURE
            && now + COALESCE < self.apps_read + Duration::from_millis(self.cfg.idle_sample_ms) * IDLE_APP_SAMPLES
            && self.setup.tick.is_none()
            && !self.setup.events.refaults
            && self.cfg.adopt_layout.is_none()
            && self.timeline.is_none()
            && free >= self.emergency
            && lmk_level(&self.lmk_levels, free).is_none()
            && !self.below_pageout_mark
            && self.pageout_owed == 0
            && self.frozen_pageout_of.is_none()
            && self.advice.is_empty()
            && self.psi_lmkd.as_ref().is_none_or(|l| l.poll.is_none())
            && self.apps.iter().all(|a| a.state != AppState::Frozen)
    }

    /// Reads the apps again unless a sample did within the last `sample_ms` (before a
    /// kill's victim is chosen, or a request is answered, on what they are now).
    fn fresh_apps(&mut self) {
        if self.apps_read.elapsed() >= Duration::from_millis(self.cfg.sample_ms) {
            self.read_apps(&[], false);
        }
    }

    /// Each app's processes (adopting those of `procs` its rule matches), its memory
    /// and refaults; whether it started or died; the oom_score_adj of its processes.
    /// `discover`: a discovery's sample (adopted groups' v1 memory, the foreground's
    /// boost).
    fn read_apps(&mut self, procs: &[ProcInfo], discover: bool) {
        self.apps_read = Instant::now();
        let me = std::process::id() as i32;
        // Each app's processes, read once a sample.
        let mut all_pids = Vec::with_capacity(self.apps.len());
        let mut status_room = KEPT_STATUS.saturating_sub(self.apps.iter().map(|a| a.status.len()).sum());
        for i in 0..self.apps.len() {
            if discover && self.apps[i].adopted {
                let _ = self.apps[i].group.sync_memory();
            }
            let matching: Vec<&ProcInfo> = procs.iter().filter(|p| self.apps[i].rule.matches(p)).collect();
            let in_group: Vec<i32> = if matching.is_empty() { Vec::new() } else { self.apps[i].sample_pids() };
            let new: Vec<&ProcInfo> = matching.into_iter().filter(|p| !in_group.contains(&p.pid)).collect();
            for p in new {
                if guard(p.pid, &p.comm, &self.cfg.protected, me, self.supervisor).is_err() {
                    continue;
                }
                let added = match self.apps[i].dry_pids.as_mut() {
                    Some(d) => {
                        d.push(p.pid);
                        true
                    }
                    None => self.apps[i].group.add(p.pid).is_ok(),
                };
                if added {
                    let how = if self.cfg.dry_run { "dry-run: would adopt" } else { "adopted" };
                    self.log(&format!("app {}: {how} pid {} ({})", self.apps[i].rule.name, p.pid, p.comm));
                }
            }
            let pids = self.apps[i].sample_pids();
            if let Some(d) = self.apps[i].dry_pids.as_mut() {
                d.retain(|p| pids.contains(p));
            }
            if discover && self.fg == Some(AppId(i as u16)) {
                self.fg_boost_pids(AppId(i as u16), true, pids.clone());
            }
            let alive = !pids.is_empty();
            (self.apps[i].rss, self.apps[i].rss_anon, self.apps[i].swap) = self.apps[i].sample_memory(&pids, &mut status_room);
            all_pids.push(pids);
            self.apps[i].marker = self.apps[i].rule.state_marker.as_ref().is_some_and(|m| m.exists());
            let id = AppId(i as u16);
            match (self.apps[i].state, alive) {
                (AppState::Dead, true) => {
                    self.apps[i].state = if self.fg == Some(id) { AppState::Foreground } else { AppState::Cached };
                    self.apps[i].last_used = self.now();
                    self.pending.push(Event::AppStarted { app: id });
                }
                (s, false) if s != AppState::Dead => {
                    self.apps[i].state = AppState::Dead;
                    self.pending.push(Event::AppDied { app: id });
                }
                _ => {}
            }
            if let Ok(now) = self.apps[i].sample_refaults() {
                let (da, df) = refaults_since(self.apps[i].refaults, now);
                let fg = self.fg == Some(id);
                for (kind, d) in [(PageKind::Anon, da), (PageKind::File, df)] {
                    if d > 0 && self.apps[i].state != AppState::Dead {
                        match (fg, kind) {
                            (true, PageKind::Anon) => self.c.refaults_fg_anon += d,
                            (true, PageKind::File) => self.c.refaults_fg_file += d,
                            (false, PageKind::Anon) => self.c.refaults_bg_anon += d,
                            (false, PageKind::File) => self.c.refaults_bg_file += d,
                        }
                        if self.setup.events.refaults {
                            self.pending.push(Event::Refault { app: id, kind, fg });
                        }
                        self.stay_busy(BUSY_AFTER_PRESSURE);
                    }
                }
                self.apps[i].refaults = Some(now);
            }
        }
        self.set_oom_adj(all_pids);
    }

    /// The machine's side of a sample: kswapd's work (for policies that hear pressure),
    /// CPU use (not at a sample that left the apps: the next one measures it over both).
    fn sample_system(&mut self, full: bool) {
        if self.setup.events.pressure {
            // kswapd scanned and freed nothing since the last sample while free memory
            // is below the low watermark: a failed pass (machine-wide; under a memory
            // budget the budget's own reclaim is not kswapd's and is not reported).
            let now = self.vmstat.read().map(kswapd_scan_steal_in).unwrap_or(self.kswapd_vm);
            let failed = kswapd_failed(self.kswapd_vm, now) && self.meminfo.free < self.meminfo.wmark_low;
            if failed {
                self.pending.push(Event::ReclaimFailed { free: self.meminfo.free });
            }
            // Logged when it starts and when it ends, not at every sample.
            if failed != self.kswapd_failing {
                self.kswapd_failing = failed;
                if failed {
                    self.log(&format!("kswapd: scanned {} pages and freed none", now.0 - self.kswapd_vm.0));
                } else {
                    self.log("kswapd: no longer failing");
                }
            }
            self.kswapd_vm = now;
        }
        if !full {
            return;
        }
        if let Ok((busy, total)) = self.proc_stat.read().and_then(|t| parse_cpu_line("/proc/stat", t)) {
            let (b0, t0) = self.cpu_sample;
            if total > t0 {
                self.util = (busy - b0.min(busy)) as f64 / (total - t0) as f64;
            }
            self.cpu_sample = (busy, total);
        }
    }

    /// Gives each app's processes the oom_score_adj of the app's oom_adj as the policy
    /// sees it (foreground 0, perceptible 200, cached 900 and up by recency), so that
    /// when the kernel's OOM killer acts, at the budget's limit or the machine's, it
    /// takes the app floe would have, never the foreground first. Written only where it
    /// changed; not in a dry run.
    /// `all_pids`: each app's processes, as the sample read them.
    fn set_oom_adj(&mut self, all_pids: Vec<Vec<i32>>) {
        if self.cfg.dry_run {
            return;
        }
        for (i, pids) in all_pids.into_iter().enumerate() {
            if self.apps[i].state == AppState::Dead && self.apps[i].adj_set.is_empty() {
                continue;
            }
            let adj = self.app(AppId(i as u16)).map_or(0, |a| a.oom_adj).clamp(-1000, 1000);
            let x = &mut self.apps[i];
            x.adj_set.retain(|p, _| pids.contains(p));
            for pid in pids {
                if x.adj_set.get(&pid) != Some(&adj) && crate::write(format!("/proc/{pid}/oom_score_adj"), &adj.to_string()).is_ok() {
                    x.adj_set.insert(pid, adj);
                }
            }
        }
    }

    /// The emergency margin: below it, free memory (the budget's, or the machine's)
    /// is about to run out faster than a policy's next step; the app with the highest
    /// oom_adj that is not the foreground (the largest among equals) dies at once,
    /// whatever the policy. Returns whether it killed.
    /// `refresh`: read memory first (not needed right after a sample).
    fn emergency(&mut self, refresh: bool) -> bool {
        if refresh {
            self.refresh_meminfo();
        }
        if self.meminfo.free >= self.emergency {
            return false;
        }
        // Woken by the budget's event after an idle spell: the victim is chosen on the
        // apps as they are now.
        self.fresh_apps();
        let free = self.meminfo.free;
        let Some(v) = stock_victim(&self.app_infos(), self.fg, i32::MIN) else { return false };
        self.log(&format!(
            "emergency: {} MiB free, below the {} MiB margin: killing {}",
            free.0 / 256,
            self.emergency.0 / 256,
            self.apps[v.0 as usize].rule.name
        ));
        let kills = self.c.kills;
        let _ = self.apply(Action::Kill(vec![v]));
        if self.c.kills > kills {
            self.c.emergency_kills += 1;
        }
        self.stay_busy(BUSY_AFTER_PRESSURE);
        self.sample(false);
        true
    }

    /// Removes the groups floe made (each app's, then the root), leaving any that still
    /// hold processes or groups of someone else's (the kernel refuses those); an
    /// adopted layout's groups are never touched. Returns the groups left.
    fn remove_own_groups(&self) -> Vec<String> {
        let own = self.apps.iter().flat_map(|a| a.group.own_dirs()).chain(self.root.own_dirs());
        own.filter(|d| d.is_dir() && std::fs::remove_dir(d).is_err()).map(|d| d.display().to_string()).collect()
    }

    /// CPU time of all the apps' groups, us; None where groups have no CPU accounting.
    fn apps_cpu_us(&self) -> Option<u64> {
        self.apps.iter().map(|a| a.group.cpu_usec().ok()).sum()
    }

    /// Reads memory: the machine's, or what is left of the budget.
    fn refresh_meminfo(&mut self) {
        self.refresh_memory(true);
    }

    /// [`Daemon::refresh_meminfo`]; without `zram`, zram's figures (for policies and
    /// the timeline, not free memory) stay as last read.
    fn refresh_memory(&mut self, zram: bool) {
        self.meminfo = self.mem_files.read(self.min_free_kb, zram);
        if let Some(mib) = self.cfg.memory_limit_mib {
            // The budget is the group's charge. What an adopted app allocated before it
            // was adopted stays charged where it was on kernels that do not move
            // charges (Linux 6.x); the daemon says so at start. Adding the apps' RSS
            // instead would count twice what they allocate after, and make free memory
            // follow every page-out at once, ahead of the kernel's own accounting.
            let g = self.root_files.as_mut().and_then(|(usage, stat, v1)| {
                let usage = usage.read().ok()?.trim().parse().ok()?;
                Some(GroupMemory { usage, ..GroupMemory::parse("", stat.read().ok()?, *v1) })
            });
            if let Some(g) = g {
                // What swap can still take of the apps' anonymous memory counts as
                // free where the kernel's reclaim alone moves it there: not when the
                // policy keeps apps out of swap, nor when it pages apps out itself
                // below a threshold of free memory (selective's swap threshold,
                // Acclaim's and Ice+'s eviction orders), which the swap room would hide.
                let kernel_swaps =
                    self.setup.swap != SwapSetup::None && self.setup.swap_threshold.is_none() && self.setup.reclaim == ReclaimOrder::Lru;
                let swap_room = if kernel_swaps { swap_room(&self.meminfo) } else { 0 };
                self.meminfo = budget_meminfo(self.meminfo, mib << 20, &g, swap_room);
            }
        }
        self.meminfo.tuned_high = self.cfg.mdt_high_mib.map(|mib| Pages((mib << 20) / 4096));
    }

    /// Writes the timeline's row when one is due. A row that cannot be written ends
    /// the timeline (logged), not the daemon.
    fn write_timeline(&mut self, now: Instant) {
        if self.timeline.as_ref().is_none_or(|t| now < t.next) {
            return;
        }
        self.refresh_meminfo();
        let m = self.meminfo;
        let mib = |p: u64| floe_core::timeline::mib_of_pages(p as f64);
        let steal = read_stolen();
        let (c, alive, frozen) = (
            self.c,
            self.apps.iter().filter(|a| a.state != AppState::Dead).count() as u32,
            self.apps.iter().filter(|a| a.state == AppState::Frozen).count() as u32,
        );
        let fg_app = self.fg.and_then(|a| self.apps.get(a.0 as usize)).map(|a| a.rule.name.clone()).unwrap_or_default();
        let apps_us = self.apps_cpu_us();
        let t = self.timeline.as_mut().expect("checked above");
        let (c0, s0) = (t.c, t.steal);
        let kswapd = kswapd_ms(&t.kswapd);
        let row = floe_core::Sample {
            policy: self.cfg.policy.clone(),
            t_s: (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            fg_app,
            free_mib: mib(m.free.0),
            anon_lru_mib: mib(m.active_anon.0 + m.inactive_anon.0),
            file_lru_mib: mib(m.active_file.0 + m.inactive_file.0),
            zram_stored_mib: mib(m.zram_stored.0),
            zram_pool_mib: mib(m.zram_used.0),
            flash_swap_mib: mib(m.flash_swap_used.0),
            writeback_mib: mib(m.writeback.0),
            apps_alive: alive,
            apps_frozen: frozen,
            reclaimed_pages: steal.all.saturating_sub(s0.all),
            direct_reclaimed_pages: steal.direct.saturating_sub(s0.direct),
            reclaimed_anon_pages: steal.anon.zip(s0.anon).map(|(now, then)| now.saturating_sub(then)),
            refaults_fg_anon: c.refaults_fg_anon - c0.refaults_fg_anon,
            refaults_fg_file: c.refaults_fg_file - c0.refaults_fg_file,
            refaults_bg_anon: c.refaults_bg_anon - c0.refaults_bg_anon,
            refaults_bg_file: c.refaults_bg_file - c0.refaults_bg_file,
            kills: c.kills - c0.kills,
            freezes: c.freezes - c0.freezes,
            thaws: c.thaws - c0.thaws,
            cpu_ms_app: apps_us.zip(t.apps_us).map(|(now, then)| now.saturating_sub(then) as f64 / 1000.0),
            cpu_ms_kswapd: (!t.kswapd.is_empty()).then(|| ((kswapd - t.kswapd_ms).max(0.0) * 1000.0).round() / 1000.0),
            ..Default::default()
        };
        t.kswapd_ms = kswapd;
        t.apps_us = apps_us;
        (t.c, t.steal) = (c, steal);
        t.next += t.every;
        if t.next <= now {
            // Behind (the machine was busy or suspended): the next row a step from now.
            t.next = now + t.every;
        }
        if let Err(e) = t.w.serialize(&row).and_then(|()| t.w.flush().map_err(Into::into)) {
            let path = t.path.display().to_string();
            self.timeline = None;
            self.log(&format!("timeline: cannot write {path}: {e}; no more rows"));
        }
    }

    /// Hands pending events to the policy and applies its actions.
    fn dispatch(&mut self) {
        let mut policy = self.policy.take().expect("policy present");
        while !self.pending.is_empty() {
            let evs = std::mem::take(&mut self.pending);
            for ev in evs {
                let mut out = Vec::new();
                policy.on_event(&ev, self, &mut out);
                for a in out {
                    let _ = self.apply(a);
                }
            }
        }
        self.policy = Some(policy);
    }

    /// Whether an action `what` may touch app `a`: never the foreground (but a thaw or
    /// prepaging), never init, floe, its supervisor or a protected process.
    fn guard_app(&self, a: AppId, what: &str) -> std::result::Result<(), String> {
        let me = std::process::id() as i32;
        let app = self.apps.get(a.0 as usize).ok_or_else(|| format!("no app {}", a.0))?;
        if self.fg == Some(a) && what != "thaw" && what != "prepage" {
            return Err(format!("{} is in the foreground", app.rule.name));
        }
        for pid in app.pids() {
            let comm = read(format!("/proc/{pid}/comm")).unwrap_or_default();
            guard(pid, comm.trim(), &self.cfg.protected, me, self.supervisor)?;
        }
        Ok(())
    }

    /// Applies one action after the guard (nothing touches the FG app but a thaw or
    /// prepaging, nor init, floe itself or protected processes) and returns the line it
    /// logged of it (`floe ctl reclaim` and `prepage` reply with it), or why it was not
    /// done.
    fn apply(&mut self, act: Action) -> std::result::Result<String, NotDone> {
        let target = |a: AppId| a.0 as usize;
        let check = |d: &Daemon, a: AppId, what: &str| d.guard_app(a, what);
        let (app, what) = match &act {
            Action::Freeze(a) => (*a, "freeze"),
            Action::Thaw(a) => (*a, "thaw"),
            Action::Kill(v) => {
                for a in v.clone() {
                    self.apply_one(a, "kill", &check);
                }
                return Ok(String::new());
            }
            Action::Reclaim { app, .. } => (*app, "reclaim"),
            Action::Prepage { app, .. } => (*app, "prepage"),
            Action::SetSwappable { app, .. } => (*app, "swappable"),
            Action::SetCpuPriority { app, .. } => (*app, "cpu"),
            Action::MarkUnkillable { app, unkillable } => {
                if let Some(x) = self.apps.get_mut(target(*app)) {
                    x.unkillable = *unkillable;
                }
                return Ok(String::new());
            }
        };
        if let Err(why) = check(self, app, what) {
            self.c.refused += 1;
            self.log(&format!("refused {what} of app {}: {why}", app.0));
            return Err(NotDone::Refused(why));
        }
        let name = self.apps[target(app)].rule.name.clone();
        if self.cfg.dry_run {
            return Ok(self.said(format!("dry-run: would {what} {name} ({act:?})")));
        }
        match act {
            Action::Reclaim { pages, tier, .. } => return self.begin_advice(target(app), AdviceKind::Reclaim(tier), pages),
            Action::Prepage { pages, .. } => return self.begin_advice(target(app), AdviceKind::Prepage, pages),
            _ => {}
        }
        let g = &self.apps[target(app)].group;
        let r: Result<()> = match act {
            Action::Freeze(_) => g.freeze(T).map(|_| {
                let x = &mut self.apps[target(app)];
                x.state = AppState::Frozen;
                x.frozen_since = Some(Instant::now());
                x.paged_out = false;
                self.c.freezes += 1;
            }),
            Action::Thaw(_) => g.thaw(T).map(|_| {
                let x = &mut self.apps[target(app)];
                if x.state == AppState::Frozen {
                    x.state = if self.fg == Some(app) { AppState::Foreground } else { AppState::Cached };
                }
                x.frozen_since = None;
                self.c.thaws += 1;
                self.last_thaw = Instant::now();
            }),
            Action::SetSwappable { swappable, .. } => g.set_swappiness(if swappable { 60 } else { 0 }).map(|_| {
                self.apps[target(app)].swappable = swappable;
            }),
            Action::SetCpuPriority { class, .. } => {
                let nice = match class {
                    CpuClass::Boosted => -10,
                    CpuClass::Normal => 0,
                    CpuClass::Idle => 19,
                };
                g.pids().map(|pids| pids.into_iter().for_each(|pid| set_nice(pid, nice)))
            }
            Action::Kill(_) | Action::MarkUnkillable { .. } | Action::Reclaim { .. } | Action::Prepage { .. } => Ok(()),
        };
        let said = match r {
            Ok(()) => Ok(self.said(format!("{what} {name}"))),
            Err(e) => Err(NotDone::Failed(self.said(format!("{what} {name} failed: {e}")))),
        };
        if matches!(act, Action::Freeze(_))
            && self.setup.reclaim == ReclaimOrder::FrozenFirst
            && self.apps[target(app)].state == AppState::Frozen
        {
            // Ice+ §4.3.1: a frozen app's pages are "identified as inactive immediately":
            // deactivated, so the kernel's reclaim takes them before others'.
            let g = &self.apps[target(app)].group;
            match each_pid_with(g, app_ranges, |p, ranges| p.madvise(ranges, MADV_COLD).map(|_| ())) {
                Ok(()) => self.log(&format!("cold {name} (frozen first)")),
                Err(e) => self.log(&format!("cold {name} failed: {e}")),
            }
        }
        said
    }

    fn apply_one(&mut self, a: AppId, what: &str, check: &dyn Fn(&Daemon, AppId, &str) -> std::result::Result<(), String>) {
        if let Err(why) =
            check(self, a, what).and_then(|_| if self.apps[a.0 as usize].unkillable { Err("marked unkillable".into()) } else { Ok(()) })
        {
            self.c.refused += 1;
            self.log(&format!("refused {what} of app {}: {why}", a.0));
            return;
        }
        let name = self.apps[a.0 as usize].rule.name.clone();
        if self.cfg.dry_run {
            self.log(&format!("dry-run: would kill {name}"));
            return;
        }
        match self.apps[a.0 as usize].group.kill(T) {
            Ok(()) => {
                self.c.kills += 1;
                self.log(&format!("kill {name}"));
            }
            Err(e) => self.log(&format!("kill {name} failed: {e}")),
        }
    }

    /// A policy that runs without swap (`SwapSetup::None`: stock Android, `android-lmk`)
    /// keeps each app's anonymous memory out of whatever swap the machine has: the app's
    /// v1 memory.swappiness 0, so reclaim takes its page cache instead (the kernel still
    /// swaps when file pages are nearly gone, which an Android phone without swap cannot),
    /// or on a pure v2 machine its memory.swap.max 0, which never swaps it.
    fn keep_out_of_swap(&mut self, i: usize) {
        if self.setup.swap != SwapSetup::None {
            return;
        }
        let name = self.apps[i].rule.name.clone();
        if self.cfg.dry_run {
            self.log(&format!("dry-run: would set {name}'s swappiness to 0 (the policy runs without swap)"));
            return;
        }
        match self.apps[i].group.set_swappiness(0) {
            Ok(()) => self.apps[i].swappable = false,
            Err(e) => self.log(&format!("{name}: cannot keep it out of swap: {e}")),
        }
    }

    /// UCSG's foreground boost (`CpuMode::FgBoost`): the foreground app's processes run
    /// at nice -10 (CFS weight 9548, the simulator's boosted weight) and go back to 0
    /// when it leaves; a process the app starts while in the foreground is boosted when
    /// it is found. Nothing for other policies, or in a dry run (logged instead).
    fn fg_boost(&mut self, app: AppId, on: bool) {
        if self.setup.cpu != CpuMode::FgBoost {
            return;
        }
        let pids = self.apps.get(app.0 as usize).map(App::pids).unwrap_or_default();
        self.fg_boost_pids(app, on, pids);
    }

    /// [`Daemon::fg_boost`] with the app's processes as just listed.
    fn fg_boost_pids(&mut self, app: AppId, on: bool, pids: Vec<i32>) {
        if self.setup.cpu != CpuMode::FgBoost {
            return;
        }
        let Some(x) = self.apps.get_mut(app.0 as usize) else { return };
        let fresh: Vec<i32> = if on { pids.iter().copied().filter(|p| !x.boosted.contains(p)).collect() } else { x.boosted.clone() };
        x.boosted = if on { pids } else { Vec::new() };
        if fresh.is_empty() {
            return;
        }
        let (nice, name) = (if on { -10 } else { 0 }, x.rule.name.clone());
        if self.cfg.dry_run {
            self.log(&format!("dry-run: would renice {name} to {nice} (foreground boost)"));
            return;
        }
        for &pid in &fresh {
            set_nice(pid, nice);
        }
        self.log(&format!("nice {nice} {name} (foreground boost, {} process(es))", fresh.len()));
    }

    /// `floe ctl fg APP`: the app comes to the foreground (a launch, as the policy hears
    /// it); the previous one goes to the background. The foreground is never frozen.
    fn set_foreground(&mut self, name: &str) -> std::result::Result<(), String> {
        let i = self.app_named(name)?;
        let to = AppId(i as u16);
        let from = self.fg.replace(to);
        let now = self.now();
        if let Some(f) = from.filter(|&f| f != to) {
            let x = &mut self.apps[f.0 as usize];
            x.last_used = now;
            if x.state == AppState::Foreground {
                x.state = AppState::Cached;
            }
        }
        let kind = if self.apps[i].state == AppState::Dead { LaunchKind::Cold } else { LaunchKind::Warm };
        self.apps[i].launching = Some((Instant::now(), kind));
        self.stay_busy(BUSY_AFTER_LAUNCH);
        self.end_switch(None);
        if kind == LaunchKind::Warm && !self.cfg.dry_run {
            let pids = self.apps[i].pids();
            if let Some((swapped, fetching)) = self.prepager.as_mut().map(|p| p.begin(name, &pids)) {
                self.c.prepaged += fetching as u64;
                self.log(&format!("asap: switch to {name}: {swapped} pages in swap, prepaging {fetching}"));
            }
            if let Some(fetching) = self.file_prepager.as_mut().map(|p| p.begin(name, &pids)).filter(|&n| n > 0) {
                self.c.prepaged_file += fetching as u64;
                self.log(&format!("asap: switch to {name}: reading {fetching} file pages ahead"));
            }
        }
        if let Some(f) = from.filter(|&f| f != to) {
            self.fg_boost(f, false);
        }
        self.save_session();
        self.fg_boost(to, true);
        self.pending.push(Event::LaunchStarted { app: to, kind });
        self.pending.push(Event::AppSwitch { from, to: Some(to) });
        self.dispatch();
        if self.apps[i].group.is_frozen().unwrap_or(false) {
            let _ = self.apply(Action::Thaw(to));
        }
        if self.apps[i].state != AppState::Dead {
            self.apps[i].state = AppState::Foreground;
        }
        Ok(())
    }

    /// `floe ctl reclaim|prepage APP [MIB]`: the `Reclaim` or `Prepage` action a policy
    /// could take, asked for by hand (all of the app's anonymous memory without MIB),
    /// through the same guard; `client` is answered with what the daemon logged of it,
    /// when it ends (over several samples for more than one sample's share).
    fn manual(&mut self, client: Sender<String>, name: &str, mib: Option<&str>, prepage: bool) {
        let parsed = self.app_named(name).and_then(|i| match mib {
            Some(m) => {
                let v: f64 = m.parse().map_err(|_| format!("`{m}` is not a number of MiB"))?;
                if !(v > 0.0 && v.is_finite()) {
                    return Err(format!("`{m}` MiB: must be above 0"));
                }
                Ok((i, Pages::from_mib_f64(v)))
            }
            None => Ok((i, Pages(u64::MAX))),
        });
        let (i, pages) = match parsed {
            Ok(x) => x,
            Err(e) => return answer(client, Err(e)),
        };
        let app = AppId(i as u16);
        let (act, what) = if prepage {
            (Action::Prepage { app, pages }, "prepage")
        } else {
            (Action::Reclaim { app, pages, tier: SwapTier::Zram }, "reclaim")
        };
        // A refusal or a failure is the request's error; `apply` logs either way. An
        // action that goes on over later samples takes the client and answers it then.
        self.ctl_client = Some(client);
        let r = self.apply(act);
        let Some(client) = self.ctl_client.take() else {
            return;
        };
        answer(
            client,
            match r {
                Ok(said) => Ok(said + "\n"),
                Err(NotDone::Refused(why)) => Err(format!("refused {what} of {name}: {why}")),
                Err(NotDone::Failed(said)) => Err(said),
            },
        );
    }

    /// `floe ctl launch-done APP [MS]`: the launch `floe ctl fg` began has finished
    /// (its first frame is up), after MS milliseconds or, without MS, after the time
    /// since the `fg` request.
    fn launch_done(&mut self, name: &str, ms: Option<&str>) -> std::result::Result<(), String> {
        let i = self.app_named(name)?;
        // Checked before the launch is taken: a mistyped time leaves it to report again.
        let given = match ms {
            Some(text) => match text.parse::<f64>() {
                Ok(ms) if (0.0..=LAUNCH_MS_MAX).contains(&ms) => Some(Nanos((ms * 1e6) as u64)),
                _ => return Err(format!("launch time `{text}`: must be a number of milliseconds from 0 to {LAUNCH_MS_MAX}")),
            },
            None => None,
        };
        let (since, kind) = self.apps[i].launching.take().ok_or_else(|| format!("`{name}` is not launching (send `fg {name}` first)"))?;
        let latency = given.unwrap_or_else(|| Nanos(since.elapsed().as_nanos() as u64));
        self.launches.push(floe_core::LaunchLog::new(name, kind, latency.0 as f64 / 1e6, 0));
        self.pending.push(Event::LaunchDone { app: AppId(i as u16), kind, latency });
        self.end_switch(Some(i));
        self.dispatch();
        Ok(())
    }

    /// The app whose switch an estimator has in progress (`in_progress`): its name and
    /// processes, unless `only` names another app.
    fn switching_app(&self, in_progress: Option<(&str, Instant)>, only: Option<usize>) -> Option<(String, Vec<i32>)> {
        let app = in_progress?.0.to_string();
        let i = self.apps.iter().position(|a| a.rule.name == app)?;
        if only.is_some_and(|o| o != i) {
            return None;
        }
        let pids = self.apps[i].pids();
        Some((app, pids))
    }

    /// Ends the prepagers' switch in progress (only if it is app `only`'s, when given):
    /// the estimators learn what the switch touched.
    fn end_switch(&mut self, only: Option<usize>) {
        if let Some((app, pids)) = self.switching_app(self.prepager.as_ref().and_then(|p| p.in_progress()), only) {
            if let Some(r) = self.prepager.as_mut().and_then(|p| p.end(&app, &pids)) {
                self.c.switch_faults += r.faulted as u64;
                self.log(&format!(
                    "asap: switch to {app} done: {} of {} pages in swap faulted by the app, {} prepaged; {} targets, {} candidates",
                    r.faulted, r.swapped, r.prepaged, r.targets, r.candidates
                ));
            }
        }
        if let Some((app, pids)) = self.switching_app(self.file_prepager.as_ref().and_then(|p| p.in_progress()), only) {
            if let Some(r) = self.file_prepager.as_mut().and_then(|p| p.end(&app, &pids)) {
                self.c.switch_file_faults += r.faulted as u64;
                let phase = if r.profiled < floe_policies::asap::PROFILE_SWITCHES {
                    format!("profiled {} of 10 switches", r.profiled)
                } else {
                    format!("{} candidate and {} target pages", r.candidates, r.targets)
                };
                self.log(&format!(
                    "asap: switch to {app} done: {} file pages faulted, {} read ahead, {} of them unused; {phase}",
                    r.faulted, r.prepaged, r.unused
                ));
            }
        }
    }

    fn status(&self) -> String {
        let mut s = format!(
            "policy {}  foreground {}\n",
            self.cfg.policy,
            self.fg.map_or("-".into(), |a| self.apps[a.0 as usize].rule.name.clone())
        );
        for a in &self.apps {
            s += &format!("{} {:?} pids {:?}\n", a.rule.name, a.state, a.pids());
        }
        s
    }

    /// OpenMetrics text with DESIGN.md's metric names where they apply.
    fn metrics(&self) -> String {
        let c = &self.c;
        let mut s = String::new();
        for (name, help, v) in [
            ("freezes", "apps frozen", c.freezes),
            ("thaws", "apps thawed", c.thaws),
            ("kills", "apps killed", c.kills),
            ("refaults_bg_anon", "workingset refaults of background apps, anonymous", c.refaults_bg_anon),
            ("refaults_bg_file", "workingset refaults of background apps, file", c.refaults_bg_file),
            ("refaults_fg_anon", "workingset refaults of the foreground app, anonymous", c.refaults_fg_anon),
            ("refaults_fg_file", "workingset refaults of the foreground app, file", c.refaults_fg_file),
            ("refused_actions", "actions the guard refused", c.refused),
            ("low_memory", "samples below a low-memory killer level", c.low_memory),
            ("emergency_kills", "apps killed below the emergency margin", c.emergency_kills),
            ("budget_usage_events", "crossings of the budget's v1 usage thresholds that woke the daemon", c.budget_usage_events),
            ("budget_pressure_events", "v1 memory.pressure_level events (medium or critical) of the budget", c.budget_pressure_events),
            ("budget_memory_events", "changes of the budget's v2 memory.events", c.budget_memory_events),
            ("samples", "samples taken", c.samples),
            ("prepaged_pages", "anonymous pages ASAP fetched ahead of app switches", c.prepaged),
            ("switch_swap_faults", "pages in swap the app faulted in itself during a switch", c.switch_faults),
            ("prepaged_file_pages", "file pages ASAP read ahead of app switches", c.prepaged_file),
            ("switch_file_faults", "file pages the app mapped by faulting during a switch", c.switch_file_faults),
            ("frozen_pageouts", "frozen apps paged out first under pressure (Ice+)", c.frozen_pageouts),
            ("reclaimed_pages", "anonymous pages paged out by the policy's Reclaim actions", c.reclaim_pages),
            (
                "background_pageout_pages",
                "background apps' pages paged out below the policy's swap threshold or, foreground last, the low watermark",
                c.bg_pageout_pages,
            ),
        ] {
            s += &format!("# TYPE floe_{name} counter\n# HELP floe_{name} {help}\nfloe_{name}_total {v}\n");
        }
        s += "# EOF\n";
        s
    }

    /// One `floe ctl` request from the control thread. A caller other than root acts
    /// only on apps whose processes all run under its own uid (and a dead app only if
    /// its rule names that uid).
    fn handle_request(&mut self, req: CtlRequest) {
        let CtlRequest { line, uid, reply } = req;
        let request = Request::parse(&line);
        if !matches!(request, Ok(Request::Metrics | Request::Apps | Request::Run)) {
            // Answered, and acted on, with the apps as they are now.
            self.fresh_apps();
        }
        let target = match &request {
            Ok(Request::Fg(app) | Request::LaunchDone(app, _) | Request::Reclaim(app, _) | Request::Prepage(app, _)) => Some(*app),
            _ => None,
        };
        if let Some(app) = target.filter(|_| uid != 0) {
            if let Err(e) = self.owned_by(app, uid) {
                self.log(&format!("ctl: uid {uid} refused: {e}"));
                return answer(reply, Err(e));
            }
        }
        let r = match request {
            Ok(Request::Fg(app)) => self.set_foreground(app).map(|_| "ok\n".to_string()),
            Ok(Request::LaunchDone(app, ms)) => self.launch_done(app, ms).map(|_| "ok\n".to_string()),
            Ok(Request::Status) => Ok(self.status()),
            Ok(Request::Apps) => Ok(self.apps.iter().map(|a| format!("{}\n", a.rule.name)).collect()),
            Ok(Request::Metrics) => Ok(self.metrics()),
            Ok(Request::Run) => Ok(self.run_json()),
            Ok(Request::Reclaim(app, mib)) => return self.manual(reply, app, mib, false),
            Ok(Request::Prepage(app, mib)) => return self.manual(reply, app, mib, true),
            Err(e) => Err(e),
        };
        answer(reply, r);
    }

    /// Whether uid `uid` may act on app `name`: every process of it runs under `uid`.
    fn owned_by(&self, name: &str, uid: u32) -> std::result::Result<(), String> {
        let i = self.app_named(name)?;
        let pids = self.apps[i].pids();
        let uid_of = |pid: i32| {
            read(format!("/proc/{pid}/status"))
                .ok()
                .and_then(|t| t.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|u| u.split_whitespace().next()?.parse::<u32>().ok()))
        };
        let owned =
            if pids.is_empty() { self.apps[i].rule.uid == Some(uid) } else { pids.iter().all(|&p| uid_of(p).is_none_or(|u| u == uid)) };
        if owned {
            Ok(())
        } else {
            Err(format!("uid {uid} may act only on its own apps; `{name}` is not (all) its"))
        }
    }

    /// Runs until SIGTERM, SIGINT or SIGHUP (a stop: there is no configuration to
    /// reload); thaws everything on the way out. The daemon first
    /// makes itself the last thing the kernel's OOM killer takes and locks its memory
    /// ([`protect_self`]).
    pub fn run(&mut self) -> Result<()> {
        let mut fds = [0; 2];
        // SAFETY: a two-int buffer for pipe2.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } == 0 {
            use std::os::fd::FromRawFd;
            // SAFETY: fresh fds nothing else owns; the write end lives as long as the
            // process (the handler may use it at any time).
            self.stop_wake = Some(unsafe { OwnedFd::from_raw_fd(fds[0]) });
            STOP_POKE.store(fds[1], Ordering::SeqCst);
        }
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            // SAFETY: installing an async-signal-safe handler that only stores an atomic.
            unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
        }
        for note in protect_self() {
            self.log(&note);
        }
        self.run_until(&STOP)
    }

    /// How often the policy's tick (`every`) comes: at its pace while the daemon is
    /// busy (pressure, a launch), an app is frozen or was thawed in the last
    /// [`BUSY_AFTER_PRESSURE`]; otherwise no more often than the idle samples, when a
    /// tick finds nothing to freeze or thaw and would only wake the daemon.
    fn tick_every(&self, every: Duration, idle_sample: Duration) -> Duration {
        let quiet = Instant::now() >= self.busy_until
            && self.last_thaw.elapsed() >= BUSY_AFTER_PRESSURE
            && !self.apps.iter().any(|a| a.state == AppState::Frozen);
        if quiet {
            every.max(idle_sample)
        } else {
            every
        }
    }

    /// Starts another supervisor if the one watching this daemon has exited (it is
    /// reaped here, so it leaves no zombie).
    fn watch_supervisor(&mut self) {
        let Some(child) = self.supervisor_child.as_mut() else {
            return;
        };
        let status = match child.try_wait() {
            Ok(Some(status)) => status,
            Ok(None) | Err(_) => return,
        };
        let (exe, args) = self.supervisor_cmd.clone().expect("a supervisor was started from its command");
        match std::process::Command::new(&exe).args(&args).spawn() {
            Ok(c) => {
                self.log(&format!("supervisor {} exited ({status}); started another, pid {}", self.supervisor, c.id()));
                self.supervisor = c.id() as i32;
                self.supervisor_child = Some(c);
            }
            Err(e) => {
                self.log(&format!("supervisor {} exited ({status}); cannot start another: {e}", self.supervisor));
                self.supervisor_child = None;
            }
        }
    }

    /// The loop, until `stop` is set; thaws everything on the way out.
    pub fn run_until(&mut self, stop: &AtomicBool) -> Result<()> {
        let psi = PsiTrigger::new("/proc/pressure/memory", false, Duration::from_millis(150), crate::check::PSI_WINDOW)?;
        if self.cfg.lmkd.on_psi() {
            let name = self.cfg.lmkd.name();
            if self.setup.lmk == LmkMode::Android && self.setup.kill_threshold.is_none() {
                let l = PsiLmkd::new(self.cfg.lmkd == LmkdMode::PsiMinfree)?;
                self.log(&format!(
                    "lmkd: PSI mode{} ({name}){}",
                    if l.window > Duration::from_nanos(lmkd::PSI_WINDOW.0) {
                        ", on 2 s windows: the kernel refuses 1 s without CAP_SYS_RESOURCE"
                    } else {
                        ""
                    },
                    if l.minfree_levels { "; events check the minfree table" } else { "; the minfree table is not used" }
                ));
                self.psi_lmkd = Some(l);
            } else {
                self.log(&format!("lmkd = \"{name}\" ignored: policy {} chooses its own victims", self.cfg.policy));
            }
        }
        let sample = Duration::from_millis(self.cfg.sample_ms);
        let idle_sample = Duration::from_millis(self.cfg.idle_sample_ms);
        let discover = Duration::from_millis(self.cfg.discover_ms);
        let tick = self.setup.tick;
        let (mut next_sample, mut last_tick, mut next_discover) = (Instant::now(), Instant::now(), Instant::now());
        self.log(&format!("floe daemon: policy {}, {} apps, socket {}", self.cfg.policy, self.apps.len(), self.cfg.socket.display()));
        // What wakes the loop, the same set from here to the end: the machine's PSI
        // trigger, the control plane, a stop, the budget's events, the root group's PSI
        // trigger, lmkd's triggers.
        let wake_fd = self.ctl.as_ref().map_or(-1, |c| c.wake.as_raw_fd());
        let stop_fd = self.stop_wake.as_ref().map_or(-1, |f| f.as_raw_fd());
        let mut fds = vec![
            libc::pollfd { fd: psi.raw_fd(), events: libc::POLLPRI, revents: 0 },
            libc::pollfd { fd: wake_fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop_fd, events: libc::POLLIN, revents: 0 },
        ];
        let budget_at = fds.len();
        for (fd, ev, _) in &self.budget_wakes {
            fds.push(libc::pollfd { fd: fd.as_raw_fd(), events: *ev, revents: 0 });
        }
        if let Some(t) = &self.root_psi {
            fds.push(libc::pollfd { fd: t.raw_fd(), events: libc::POLLPRI, revents: 0 });
        }
        let lmkd_at = fds.len();
        if let Some(l) = &self.psi_lmkd {
            for t in [&l.low, &l.medium] {
                fds.push(libc::pollfd { fd: t.raw_fd(), events: libc::POLLPRI, revents: 0 });
            }
        }
        // Registered once (poll would hand the kernel every descriptor at every wake-up).
        let waits = Waits::new(&fds);
        while !stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let next_tick = tick.map(|t| last_tick + self.tick_every(Duration::from_nanos(t.0), idle_sample));
            let wake = next_tick.map_or(next_sample, |t| next_sample.min(t)).min(next_discover);
            let wake = self.timeline.as_ref().map_or(wake, |t| wake.min(t.next));
            let mut timeout = wake.saturating_duration_since(now).min(STOP_CHECK);
            if self.psi_lmkd.as_ref().is_some_and(|l| l.poll.is_some()) {
                timeout = timeout.min(Duration::from_nanos(lmkd::POLL.0));
            }
            // Rounded up: a timeout rounded down to 0 ms would spin until the deadline.
            waits.wait(&mut fds, timeout.as_micros().div_ceil(1000) as i32);
            if self.psi_lmkd.is_some() {
                self.lmkd_poll(&fds[lmkd_at..]);
            }
            // The budget's own events: read (an eventfd must be, to re-arm), then look at
            // once: the emergency margin first, then a sample and the killer's levels.
            let budget_fired = fds[budget_at..lmkd_at].iter().any(|f| f.revents != 0);
            if budget_fired {
                let mut critical = false;
                for ((fd, _, kind), p) in self.budget_wakes.iter().zip(&fds[budget_at..]) {
                    let mut buf = [0u8; 8];
                    // SAFETY: a valid non-blocking fd and an 8-byte buffer; memory.events
                    // reads return its text, which is not needed.
                    unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                    // SAFETY: rewinding a file descriptor has no memory preconditions.
                    unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_SET) };
                    if p.revents == 0 {
                        continue;
                    }
                    match kind {
                        BudgetEvent::Usage => self.c.budget_usage_events += 1,
                        // A critical event signals the medium listener too: counted once.
                        BudgetEvent::Medium => self.c.budget_pressure_events += 1,
                        BudgetEvent::Critical => critical = true,
                        BudgetEvent::MemoryEvents => self.c.budget_memory_events += 1,
                    }
                }
                if critical && !self.budget_critical {
                    self.log("budget: critical memory pressure: its reclaim is failing");
                }
                self.budget_critical = critical;
                next_sample = now;
                self.stay_busy(BUSY_AFTER_PRESSURE);
            }
            if budget_fired && self.emergency(true) {
                next_sample = Instant::now();
            }
            if fds[0].revents & libc::POLLPRI != 0 {
                if self.busy_until <= now {
                    // Pressure after a quiet spell: look now, not at the idle period's end.
                    next_sample = now;
                }
                self.stay_busy(BUSY_AFTER_PRESSURE);
                if self.setup.events.pressure {
                    let m = self.mem();
                    self.pending.push(Event::Pressure { free: m.free, low: m.wmark_low, min: m.wmark_min });
                }
            }
            if fds[1].revents & libc::POLLIN != 0 {
                let requests: Vec<CtlRequest> = match &self.ctl {
                    Some(c) => {
                        c.drain_wake();
                        c.requests.try_iter().collect()
                    }
                    None => Vec::new(),
                };
                for r in requests {
                    self.handle_request(r);
                }
            }
            let now = Instant::now();
            // Whatever falls due within a few ms is done on this wake-up, not the next.
            let due = |t: Instant| now + COALESCE >= t;
            // New processes are looked for on their own schedule, even while sampling
            // is slow: an app must be in its groups before it allocates much.
            if due(next_sample) || due(next_discover) {
                let d = due(next_discover);
                if d {
                    next_discover = now + discover;
                    self.watch_supervisor();
                }
                self.sample_as(d, false);
                let switching = |t: Option<(&str, Instant)>| t.is_some_and(|(_, t)| t.elapsed() > SWITCH_WINDOW);
                if switching(self.prepager.as_ref().and_then(|p| p.in_progress()))
                    || switching(self.file_prepager.as_ref().and_then(|p| p.in_progress()))
                {
                    self.end_switch(None);
                }
                self.lmk();
                // Free memory as the sample (or the killer's sample after a kill) read it.
                self.emergency(false);
                next_sample = now + if Instant::now() < self.busy_until { sample } else { idle_sample };
            }
            self.write_timeline(now);
            if next_tick.is_some_and(due) {
                self.pending.push(Event::Tick);
                last_tick = now;
            }
            self.dispatch();
            if self.last_save.elapsed() >= Duration::from_secs(self.cfg.state_save_s) {
                self.save_state();
            }
        }
        self.save_state();
        // The run's record, written before the apps are thawed and their groups go (the
        // apps' CPU is read from them).
        let record = self.cfg.run_json.clone().map_or(Ok(()), |path| {
            let r = self.write_run(&path);
            self.log(&match &r {
                Ok(()) => format!("run: written to {}", path.display()),
                Err(e) => format!("run: {e}"),
            });
            r
        });
        let r = self.stop_all().and(record);
        // The last save, written meanwhile, is waited for, within a bound.
        if let Some(s) = self.saver.as_mut() {
            if !s.finish(SAVE_ON_EXIT) {
                self.log(&format!("state: the last save did not end within {} s; not waiting for it", SAVE_ON_EXIT.as_secs()));
            }
        }
        r
    }

    /// The end of [`Daemon::run_until`]: advice stopped, the foreground unboosted, the
    /// control socket closed, every app thawed and floe's empty groups removed.
    fn stop_all(&mut self) -> Result<()> {
        self.stop_advice("the daemon is stopping");
        if let Some(f) = self.fg {
            self.fg_boost(f, false);
        }
        self.log("stopping: thawing every app");
        // Stops the control thread and removes the socket.
        self.ctl = None;
        if self.cfg.dry_run {
            return Ok(());
        }
        if let Some(l) = &self.cfg.adopt_layout {
            thaw_layout(&self.hier, l)?;
        }
        thaw_all(&self.hier, &self.cfg.cgroup_root)?;
        if self.cfg.memory_limit_mib.is_some() {
            // With no daemon to kill within it, the budget would leave the apps to the
            // kernel's OOM killer.
            match self.root.lift_memory_limit() {
                Ok(()) => self.log("budget: lifted the apps' memory limit"),
                Err(e) => self.log(&format!("budget: cannot lift the apps' memory limit: {e}")),
            }
        }
        let left = self.remove_own_groups();
        if !left.is_empty() {
            self.log(&format!("kept {} group(s) that still hold processes: {}", left.len(), left.join(", ")));
        }
        Ok(())
    }
}

/// The loop's wake-ups as one epoll set, registered once: a wait costs the descriptors
/// that are ready, not all of them. Where epoll cannot be had, `poll`.
struct Waits(Option<OwnedFd>);

impl Waits {
    /// Registers each pollfd's descriptor (negative ones are none) for its events,
    /// identified by its index.
    fn new(fds: &[libc::pollfd]) -> Waits {
        use std::os::fd::FromRawFd;
        // SAFETY: epoll_create1 has no memory preconditions; the fd is owned at once.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Waits(None);
        }
        // SAFETY: a fresh fd nothing else owns.
        let ep = unsafe { OwnedFd::from_raw_fd(ep) };
        for (i, p) in fds.iter().enumerate().filter(|(_, p)| p.fd >= 0) {
            // poll's POLLIN and POLLPRI are epoll's EPOLLIN and EPOLLPRI; level-triggered,
            // as poll is.
            let mut ev = libc::epoll_event { events: p.events as u16 as u32, u64: i as u64 };
            // SAFETY: a valid epoll fd, a descriptor open for the loop's life, a valid event.
            if unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, p.fd, &mut ev) } != 0 {
                return Waits(None);
            }
        }
        Waits(Some(ep))
    }

    /// Waits up to `timeout_ms` and sets each pollfd's revents as poll would.
    fn wait(&self, fds: &mut [libc::pollfd], timeout_ms: i32) {
        for f in fds.iter_mut() {
            f.revents = 0;
        }
        let Some(ep) = &self.0 else {
            // SAFETY: valid pollfds for the duration of the call.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
            return;
        };
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: a valid epoll fd and a buffer of evs.len() events.
        let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), evs.as_mut_ptr(), evs.len() as i32, timeout_ms) };
        for e in evs.iter().take(n.max(0) as usize) {
            let (i, events) = (e.u64 as usize, e.events);
            if let Some(f) = fds.get_mut(i) {
                f.revents = events as u16 as libc::c_short;
            }
        }
    }
}

/// Why [`Daemon::apply`] did not do an action: the guard's reason for refusing it, or
/// the line logged of the kernel call that failed.
enum NotDone {
    Refused(String),
    Failed(String),
}

/// Why the daemon does not run `policy` on any kernel, if it does not: `floe daemon
/// --check` fails for it as the daemon's start would.
pub fn refuses(policy: &str) -> Option<String> {
    let setup = floe_policies::make(policy)?.setup();
    setup.seal.is_some().then(|| format!(
        "policy `{policy}` places pages between SL1 (zram) and SL2 (flash); Linux can move chosen pages there only by zram writeback (CONFIG_ZRAM_WRITEBACK, per-page since 6.x), which this backend does not drive yet"
    ))
}

/// Exclusive holds (flock) on the files and directories one daemon may own: its state
/// database and its cgroup root in each hierarchy. A second daemon on either is refused
/// before it thaws, restores or kills anything; the kernel drops a hold when its
/// daemon exits, however it exits. A supervisor takes the root's hold for its undoing,
/// so it never undoes what a daemon started since has done.
#[derive(Default)]
pub(crate) struct Locks(Vec<(PathBuf, std::fs::File)>);

/// How long a starting daemon waits for a hold another process has: the supervisor of
/// the daemon before holds the cgroup root for the few milliseconds its undoing takes.
const LOCK_WAIT: Duration = Duration::from_secs(2);

impl Locks {
    /// Holds `path` (the config's `key`), waiting up to [`LOCK_WAIT`], or says another
    /// daemon has it.
    fn take(&mut self, path: &Path, key: &str) -> Result<()> {
        let f = std::fs::File::open(path).map_err(crate::io_err(path))?;
        let until = Instant::now() + LOCK_WAIT;
        while !Locks::try_hold(&f).map_err(crate::io_err(path))? {
            if Instant::now() >= until {
                return Err(Error::Unsupported(format!(
                    "{}: another floe daemon is running on it (the config's `{key}`): stop that daemon, or give this one its own `{key}`",
                    path.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.0.push((path.to_path_buf(), f));
        Ok(())
    }

    /// Takes `f`'s hold if no other process has it: false when one does.
    fn try_hold(f: &std::fs::File) -> std::io::Result<bool> {
        // SAFETY: a valid open descriptor; flock has no memory preconditions.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::WouldBlock {
            Ok(false)
        } else {
            Err(e)
        }
    }

    /// The cgroup root's directories held, or None when a daemon holds one of them.
    pub(crate) fn unless_held(h: &Hierarchies, root: &str) -> Result<Option<Locks>> {
        let mut held = Locks::default();
        for dir in cgroup_root_dirs(h, root).filter(|d| d.is_dir()) {
            let f = std::fs::File::open(&dir).map_err(crate::io_err(&dir))?;
            if !Locks::try_hold(&f).map_err(crate::io_err(&dir))? {
                return Ok(None);
            }
            held.0.push((dir, f));
        }
        Ok(Some(held))
    }

    fn holds(&self, path: &Path) -> bool {
        self.0.iter().any(|(p, _)| p == path)
    }
}

/// The cgroup root's directory in each hierarchy floe uses.
fn cgroup_root_dirs<'a>(h: &'a Hierarchies, root: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    [&h.v2, &h.memory_v1, &h.freezer_v1].into_iter().flatten().map(move |d| d.join(root))
}

/// A policy that acts on background refaults (Ice's RPF) cannot run where the app groups
/// have no memory controller to count them: said up front instead of a daemon that
/// never hears one.
fn refaults_unheard(policy: &str, setup: &Setup, root: &AppGroup) -> Option<Error> {
    (setup.events.refaults && root.memory_controller().is_none()).then(|| {
        Error::Unsupported(format!(
            "policy `{policy}` acts on apps' refaults, and {} has no memory controller to count them (no v1 memory hierarchy, and memory not offered on cgroup v2)",
            root.name
        ))
    })
}

/// Answers a `floe ctl` client: the reply, or `error: ...`.
fn answer(client: Sender<String>, reply: std::result::Result<String, String>) {
    let _ = client.send(match reply {
        Ok(r) => r,
        Err(e) => format!("error: {e}\n"),
    });
}

/// A page count as asked for: `all` for no bound.
fn asked(p: Pages) -> String {
    if p.0 == u64::MAX {
        "all".into()
    } else {
        p.0.to_string()
    }
}

impl SystemView for Daemon {
    fn now(&self) -> Nanos {
        Nanos(self.start.elapsed().as_nanos() as u64)
    }

    fn mem(&self) -> MemInfo {
        self.meminfo
    }

    fn foreground(&self) -> Option<AppId> {
        self.fg
    }

    fn apps(&self) -> Vec<AppId> {
        (0..self.apps.len() as u16).map(AppId).collect()
    }

    fn app(&self, id: AppId) -> Option<AppInfo> {
        let a = self.apps.get(id.0 as usize)?;
        let (rss, swap) = (a.rss, a.swap);
        let all: Vec<(bool, bool, Nanos)> =
            self.apps.iter().map(|b| (b.state != AppState::Dead, b.rule.perceptible, b.last_used)).collect();
        let oom_adj = android_adj(&all, self.fg.map(|f| f.0 as usize), id.0 as usize);
        Some(AppInfo {
            id,
            name: a.rule.name.clone(),
            state: a.state,
            oom_adj,
            rss: Pages(rss / 4096),
            swapped: Pages(swap / 4096),
            saves_context: a.rule.saves_context || a.marker,
            priority_class: a.rule.priority,
            perceptible: a.rule.perceptible,
            unkillable: a.unkillable,
            swappable: a.swappable,
            last_used: a.last_used,
        })
    }

    fn cpu_busy_iowait(&self) -> f64 {
        self.util
    }

    fn charging(&self) -> bool {
        crate::procfs::on_external_power(Path::new("/sys/class/power_supply"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ice needs refault counters: refused where the groups have no memory controller,
    /// run where v2 gives one; a policy that hears no refaults runs either way.
    #[test]
    fn a_refault_policy_is_refused_without_a_memory_controller() {
        let dir = crate::scratch_dir("daemon-memcg-fixture");
        std::fs::write(dir.join("cgroup.controllers"), "cpu pids\n").unwrap();
        let h = Hierarchies { v2: Some(dir.clone()), ..Default::default() };
        let root = AppGroup::create(&h, "floe").unwrap();
        let setup = |p: &str| floe_policies::make(p).unwrap().setup();
        let e = refaults_unheard("ice", &setup("ice"), &root).expect("ice refused").to_string();
        assert!(e.contains("`ice`") && e.contains("no memory controller"), "{e}");
        assert!(refaults_unheard("lru-cfs", &setup("lru-cfs"), &root).is_none());
        std::fs::write(dir.join("floe/memory.stat"), "workingset_refault_anon 0\n").unwrap();
        assert!(refaults_unheard("ice", &setup("ice"), &root).is_none(), "v2's memory.stat counts them");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
