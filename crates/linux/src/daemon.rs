//! The daemon loop: the same `Policy` objects the simulator drives, on the running
//! kernel. Apps are cgroups under a configured root, filled with the processes that
//! match the config's rules; observations come from /proc, cgroup files and a PSI
//! trigger (poll, no sleep loops); actions go through one guard and then the kernel;
//! `floe ctl` talks to it over a Unix socket. A supervisor process thaws every group
//! under the root when the daemon dies, however it dies.

use crate::cgroup::{AppGroup, GroupMemory, Hierarchies};
use crate::prepage::AnonPrepager;
use crate::prepage_file::FilePrepager;
use crate::procfs::{parse_cpu_line, parse_flat, parse_kb_table, parse_swaps};
use crate::state::prepage_key;
use crate::state::Store;
use crate::sys::{anon_ranges, nice_of, set_nice, Pidfd, PsiTrigger, MADV_COLD, MADV_PAGEOUT};
use crate::{read, Error, Result};
use floe_core::input::{num, parse, ConfigError, Input};
use floe_core::lmkd::{self, LowPressure, PsiLevel};
use floe_core::{
    Action, AppId, AppInfo, AppState, CpuClass, CpuMode, Event, LaunchKind, LmkMode, LmkdMode, MemInfo, Nanos, PageKind, Pages, Policy,
    PriorityClass, ReclaimOrder, Setup, SwapSetup, SystemView,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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

/// The daemon's configuration file (TOML).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Policy name as `floe list policies` shows (default: ice).
    #[serde(default = "default_policy")]
    pub policy: String,
    /// Cgroup directory, under each hierarchy, that holds the app groups.
    #[serde(default = "default_root")]
    pub cgroup_root: String,
    /// Control socket path.
    #[serde(default = "default_socket")]
    pub socket: PathBuf,
    /// Group (gid) allowed on the control socket besides root.
    #[serde(default)]
    pub ctl_gid: Option<u32>,
    /// How often refault counters, app liveness, memory and CPU use are sampled, in ms,
    /// while anything is happening: memory pressure (the PSI trigger fired), refaults,
    /// a low-memory level, a launch or switch in the last few seconds.
    #[serde(default = "default_sample_ms")]
    pub sample_ms: u64,
    /// The sampling period, in ms, while nothing is happening (no pressure, no refaults,
    /// no launch): the PSI trigger and `floe ctl` wake the daemon at once regardless.
    #[serde(default = "default_idle_sample_ms")]
    pub idle_sample_ms: u64,
    /// How often /proc is scanned for new processes of the apps, in ms (the costly part:
    /// it reads every process's exe, cmdline and status).
    #[serde(default = "default_discover_ms")]
    pub discover_ms: u64,
    /// Process names (comm) never frozen, killed or compressed.
    #[serde(default)]
    pub protected: Vec<String>,
    /// Log every action instead of taking it.
    #[serde(default)]
    pub dry_run: bool,
    /// SQLite database (WAL) where what the policy learned is kept across restarts and
    /// crashes (SmartLMK's history store, selective's demotions); saved every
    /// `state_save_s` seconds and at exit, loaded at start.
    #[serde(default = "default_state_db")]
    pub state_db: PathBuf,
    #[serde(default = "default_state_save_s")]
    pub state_save_s: u64,
    /// Memory budget of all the apps together (the root group's limit), in MiB. When
    /// set, policies see the budget as the device's memory: total is the budget, free
    /// is what is left of it (plus the apps' inactive page cache), and the LRU sizes
    /// are the apps' own. Unset: the whole machine (/proc/meminfo's MemTotal,
    /// MemAvailable and LRU sizes).
    #[serde(default)]
    pub memory_limit_mib: Option<u64>,
    /// The low-memory killer's levels as [oom_adj, MiB] pairs: below MiB free, apps with
    /// oom_adj at or above the level's may die (stock policies kill the highest adj,
    /// largest first; `lmk = "policy"` policies such as SmartLMK choose for themselves).
    /// Default: AOSP ProcessList's mOomMinFreeHigh (72, 90, 108, 126, 144, 180 MiB for
    /// adj 0, 100, 200, 250, 900, 950). A policy's own kill threshold (selective)
    /// replaces the table.
    #[serde(default = "default_minfree")]
    pub minfree_mib: Vec<(i32, f64)>,
    /// Which killer runs for policies that keep Android's: "minfree" (the table above,
    /// each sample); "psi", Android 10 lmkd's default: triggers on /proc/pressure/memory
    /// (some 70 ms and 100 ms per 1 s); a low event records free memory, a medium one
    /// kills the highest oom_adj of 800 or more (least recently used first) while free
    /// memory is below what low pressure saw, re-checked every 10 ms for a second, the
    /// table unused; or "psi-minfree", lmkd with use_minfree_levels as Pixels set it: the
    /// same triggers and polls, each checking the table (the largest app at the highest
    /// adj it allows dies; for 100 ms after a kill, not while the victim is dying). Free memory is what policies see (MemAvailable, or what is
    /// left of the budget), where lmkd reads MemFree.
    #[serde(default)]
    pub lmkd: LmkdMode,
    /// Adopt an existing app layout instead of making groups: a directory of the
    /// cgroup v2 hierarchy (relative to its mount; "." for the mount itself) whose
    /// `uid_N` children are apps, their processes in `pid_M` subgroups, as Android lays
    /// them out. floe freezes and kills at the `uid_N` level and leaves the layout as it
    /// is; [[app]] entries then only name apps and set their class, by `uid`.
    #[serde(default)]
    pub adopt_layout: Option<String>,
    /// Write a timeline here: one CSV row every `timeline_ms`, with the columns of
    /// `floe sim --timeline` (memory from /proc/meminfo or the budget, zram, swap,
    /// reclaim from /proc/vmstat, the apps' refaults and CPU, kswapd's CPU, kills,
    /// freezes and thaws; frames, compression CPU and flash traffic left empty).
    /// Appended to, each row flushed as written.
    #[serde(default)]
    pub timeline: Option<PathBuf>,
    #[serde(default = "default_timeline_ms")]
    pub timeline_ms: u64,
    /// The apps floe manages.
    #[serde(default, rename = "app")]
    pub apps: Vec<AppRule>,
}

fn default_policy() -> String {
    "ice".into()
}
fn default_root() -> String {
    "floe".into()
}
fn default_socket() -> PathBuf {
    "/run/floe.sock".into()
}
fn default_sample_ms() -> u64 {
    100
}
fn default_idle_sample_ms() -> u64 {
    1000
}
fn default_discover_ms() -> u64 {
    1000
}
fn default_state_db() -> PathBuf {
    "/var/lib/floe/state.db".into()
}
fn default_state_save_s() -> u64 {
    5
}
fn default_timeline_ms() -> u64 {
    1000
}
/// src: AOSP frameworks/base ProcessList.java (Android 10), mOomAdj and mOomMinFreeHigh
/// (KB / 1024), at scale 1.
fn default_minfree() -> Vec<(i32, f64)> {
    vec![(0, 72.0), (100, 90.0), (200, 108.0), (250, 126.0), (900, 144.0), (950, 180.0)]
}

/// Which processes make up an app: every given criterion must hold.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppRule {
    pub name: String,
    /// The executable's path (/proc/PID/exe).
    #[serde(default)]
    pub exe: Option<String>,
    /// A substring of the command line (arguments joined by spaces).
    #[serde(default)]
    pub cmdline: Option<String>,
    #[serde(default)]
    pub uid: Option<u32>,
    /// Android's perceptible class: never frozen (music, navigation, downloads).
    #[serde(default)]
    pub perceptible: bool,
    /// The app saves its own context (selective swap/kill makes it a kill-target).
    #[serde(default)]
    pub saves_context: bool,
    /// A file whose existence shows that the app has saved its state (the paper's
    /// saved-state marker, checked at every sample); present means `saves_context`.
    #[serde(default)]
    pub state_marker: Option<PathBuf>,
    /// Selective swap/kill's priority class: high, medium (default) or low.
    #[serde(default = "default_priority")]
    pub priority: PriorityClass,
}

fn default_priority() -> PriorityClass {
    PriorityClass::Medium
}

impl Config {
    /// Parses and validates; errors name the file, line and key.
    pub fn parse(path: &str, text: &str) -> std::result::Result<Config, ConfigError> {
        let input = Input::new(path, text);
        let c: Config = parse(&input)?;
        let err = |key: &str, message: String| Err(input.error(key, message));
        if floe_policies::lookup(&c.policy).is_none() {
            return err("policy", format!("unknown policy `{}` (see `floe list policies`)", c.policy));
        }
        if c.cgroup_root.is_empty() || c.cgroup_root.contains("..") || c.cgroup_root.starts_with('/') {
            return err("cgroup_root", format!("must be a relative path without `..`, got `{}`", c.cgroup_root));
        }
        if !(10..=60_000).contains(&c.sample_ms) {
            return err("sample_ms", format!("must be 10..=60000, got {}", c.sample_ms));
        }
        if !(c.sample_ms..=600_000).contains(&c.idle_sample_ms) {
            return err("idle_sample_ms", format!("must be sample_ms ({})..=600000, got {}", c.sample_ms, c.idle_sample_ms));
        }
        if !(10..=600_000).contains(&c.discover_ms) {
            return err("discover_ms", format!("must be 10..=600000, got {}", c.discover_ms));
        }
        if !(1..=86_400).contains(&c.state_save_s) {
            return err("state_save_s", format!("must be 1..=86400, got {}", c.state_save_s));
        }
        if !(100..=3_600_000).contains(&c.timeline_ms) {
            return err("timeline_ms", format!("must be 100..=3600000, got {}", c.timeline_ms));
        }
        if c.memory_limit_mib == Some(0) {
            return err("memory_limit_mib", "must be above 0".into());
        }
        for (i, &(adj, mib)) in c.minfree_mib.iter().enumerate() {
            // The element is named with its index: the levels are a list of values.
            let key = format!("minfree_mib[{i}]");
            let err = |message: String| Err(input.error_at(&key, &key, message));
            if !((-1000..=1000).contains(&adj) && mib >= 0.0 && mib.is_finite()) {
                return err(format!("needs an oom_adj in -1000..=1000 and MiB >= 0, got [{adj}, {}]", num(mib)));
            }
            if i > 0 && adj <= c.minfree_mib[i - 1].0 {
                return err("levels must be in ascending oom_adj order".into());
            }
            if let Some(limit) = c.memory_limit_mib.filter(|&l| mib >= l as f64) {
                return err(format!(
                    "level {} MiB is not below memory_limit_mib ({limit}): free memory never reaches it, so the killer would kill at every check",
                    num(mib)
                ));
            }
        }
        if let Some(l) = &c.adopt_layout {
            if l.is_empty() || l.contains("..") || l.starts_with('/') {
                return err(
                    "adopt_layout",
                    format!("must be a path relative to the cgroup v2 mount without `..` (\".\" for the mount), got `{l}`"),
                );
            }
        }
        for (i, a) in c.apps.iter().enumerate() {
            let at = |key: &str, message: String| Err(input.error_at(&format!("app[{i}].{key}"), &format!("app.{key}"), message));
            if c.adopt_layout.is_some() && (a.exe.is_some() || a.cmdline.is_some() || a.uid.is_none()) {
                let key = if a.exe.is_some() {
                    "exe"
                } else if a.cmdline.is_some() {
                    "cmdline"
                } else {
                    "uid"
                };
                return at(
                    key,
                    format!("app `{}`: with adopt_layout, apps are the layout's uid_N groups; name them by `uid` only", a.name),
                );
            }
            if a.name.is_empty() || a.name.contains('/') || a.name.contains(char::is_whitespace) {
                return at("name", format!("`{}`: must be a non-empty name without `/` or spaces", a.name));
            }
            if a.exe.is_none() && a.cmdline.is_none() && a.uid.is_none() {
                return at("name", format!("app `{}` needs at least one of exe, cmdline, uid", a.name));
            }
            if c.apps[..i].iter().any(|b| b.name == a.name) {
                return at("name", format!("`{}` appears twice", a.name));
            }
        }
        Ok(c)
    }

    pub fn load(path: &str) -> std::result::Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_string(),
            line: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(path, &text)
    }
}

/// What the daemon says at start when the machine's swap (the devices of /proc/swaps:
/// name, whether zram) is not what `policy` runs on: the daemon does not set swap up,
/// it uses the machine's, and keeps apps out of it for policies without swap.
fn swap_note(policy: &str, want: SwapSetup, swaps: &[(String, bool)], zswap_on: bool) -> Option<String> {
    let have = swaps.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
    let (zram, storage) = (swaps.iter().any(|s| s.1), swaps.iter().any(|s| !s.1));
    if want == SwapSetup::Zswap && storage && !zswap_on {
        return Some(format!(
            "note: policy {policy} runs with zswap in front of swap on storage; zswap is off here (/sys/module/zswap/parameters/enabled), so pages go to {have} directly"
        ));
    }
    let wants = match want {
        SwapSetup::None if swaps.is_empty() => return None,
        SwapSetup::None => {
            return Some(format!(
                "note: policy {policy} runs without swap; swap is on here ({have}): each app's memory.swappiness is set to 0 to keep its anonymous memory in RAM"
            ))
        }
        SwapSetup::Zram if zram => return None,
        SwapSetup::Flash if storage => return None,
        SwapSetup::Zswap | SwapSetup::TwoLevel if storage => return None,
        SwapSetup::Zram => "zram",
        SwapSetup::Flash => "swap on storage",
        SwapSetup::Zswap | SwapSetup::TwoLevel => "zswap in front of swap on storage",
    };
    Some(if swaps.is_empty() {
        format!("note: policy {policy} runs with {wants}; no swap is on here: apps' anonymous memory stays in RAM")
    } else {
        format!("note: policy {policy} runs with {wants}; this machine swaps to {have}, and the daemon uses what the machine has")
    })
}

/// Refaults (anon, file) a group counted since the last sample, `last`; none at the
/// first sample, whose counts may hold what happened before floe watched the group, and
/// none where a counter went back (a group made anew under the same name).
fn refaults_since(last: Option<(u64, u64)>, now: (u64, u64)) -> (u64, u64) {
    let (pa, pf) = last.unwrap_or(now);
    (now.0.saturating_sub(pa), now.1.saturating_sub(pf))
}

/// What one process looks like to the rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcInfo {
    pub pid: i32,
    pub exe: String,
    pub cmdline: String,
    pub uid: u32,
    pub comm: String,
}

impl AppRule {
    pub fn matches(&self, p: &ProcInfo) -> bool {
        self.exe.as_ref().is_none_or(|e| *e == p.exe)
            && self.cmdline.as_ref().is_none_or(|c| p.cmdline.contains(c.as_str()))
            && self.uid.is_none_or(|u| u == p.uid)
    }
}

fn proc_info(pid: i32) -> Option<ProcInfo> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?.display().to_string();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let cmdline = String::from_utf8_lossy(&cmdline).split('\0').filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |k: &str| status.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_whitespace().nth(1)).unwrap_or("").to_string();
    Some(ProcInfo { pid, exe, cmdline, uid: field("Uid:").parse().unwrap_or(u32::MAX), comm: field("Name:") })
}

/// Every user process (kernel threads have no exe and are never listed).
pub fn processes() -> Vec<ProcInfo> {
    ProcScanner::default().scan()
}

/// Finds user processes without rereading what cannot have changed: a process is read
/// when first seen and once more at the next scan (it may have exec'd in between, as a
/// launcher does), then kept; and /proc is not listed at all while the kernel's last
/// created pid (/proc/loadavg) has not moved for two scans, since then no process is new.
#[derive(Default)]
pub struct ProcScanner {
    /// Known processes and how many scans have seen them.
    known: std::collections::BTreeMap<i32, (Option<ProcInfo>, u8)>,
    last_pid: Option<String>,
    quiet_scans: u8,
}

impl ProcScanner {
    pub fn scan(&mut self) -> Vec<ProcInfo> {
        let last_pid = read("/proc/loadavg").ok().and_then(|l| l.split_whitespace().nth(4).map(str::to_string));
        if last_pid.is_some() && last_pid == self.last_pid {
            self.quiet_scans = self.quiet_scans.saturating_add(1);
        } else {
            self.quiet_scans = 0;
        }
        self.last_pid = last_pid;
        if self.quiet_scans < 2 {
            let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
            let pids: std::collections::BTreeSet<i32> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).collect();
            self.known.retain(|pid, _| pids.contains(pid));
            for pid in pids {
                let e = self.known.entry(pid).or_insert((None, 0));
                if e.1 < 2 {
                    // Caught inside execve (the new image's arguments not yet set up:
                    // empty cmdline) or unreadable: not a read that counts.
                    let info = proc_info(pid);
                    if info.as_ref().is_some_and(|p| !p.cmdline.is_empty()) {
                        e.1 += 1;
                    }
                    e.0 = info;
                }
            }
        } else {
            // Nothing new; processes that exited drop out when their files are gone.
            self.known.retain(|pid, _| Path::new(&format!("/proc/{pid}")).exists());
        }
        self.known.values().filter_map(|(p, _)| p.clone()).collect()
    }
}

/// The one gate every action passes: what may never be touched.
pub fn guard(pid: i32, comm: &str, protected: &[String], own_pid: i32, supervisor: i32) -> std::result::Result<(), String> {
    if pid <= 1 {
        return Err(format!("pid {pid} is init or invalid"));
    }
    if pid == own_pid || pid == supervisor {
        return Err(format!("pid {pid} is floe itself"));
    }
    if protected.iter().any(|p| p == comm) {
        return Err(format!("pid {pid} ({comm}) is protected by the config"));
    }
    Ok(())
}

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
}

impl App {
    /// An app not seen running yet: swappable, killable, nothing measured.
    fn new(rule: AppRule, group: AppGroup, adopted: bool) -> App {
        App {
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
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
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
    store: Store,
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
    scanner: ProcScanner,
    timeline: Option<Timeline>,
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
    /// Pages reclaimed in all and directly, machine-wide (/proc/vmstat).
    steal: (u64, u64),
    /// The kswapd threads (one per memory node) and their CPU time at the last row, ms.
    kswapd: Vec<i32>,
    kswapd_ms: f64,
    /// The apps' CPU time at the last row, us (None without cgroup v2).
    apps_us: Option<u64>,
}

/// CPU time (user + system) of a process or kernel thread from its /proc/PID/stat, in
/// clock ticks; None once it is gone.
pub fn cpu_ticks(stat: &str) -> Option<u64> {
    // Fields after the command (which may hold spaces and parentheses): state is the
    // first, utime the 12th and stime the 13th (stat fields 14 and 15).
    let rest = stat.rsplit_once(") ")?.1;
    let mut f = rest.split_whitespace().skip(11);
    Some(f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?)
}

/// The pids of the kernel's kswapd threads.
fn kswapd_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| read(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("kswapd")))
        .collect()
}

/// CPU time of the kswapd threads, in ms.
fn kswapd_ms(pids: &[i32]) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks: u64 = pids.iter().filter_map(|p| read(format!("/proc/{p}/stat")).ok().and_then(|s| cpu_ticks(&s))).sum();
    ticks as f64 * 1000.0 / hz
}

/// Pages reclaimed since boot, in all and by the machine's direct reclaim, from
/// /proc/vmstat. In all: pgsteal_anon + pgsteal_file where the kernel has them (5.8+;
/// they count every reclaim, a memory cgroup's limit and proactive reclaim included),
/// else pgsteal_kswapd*, pgsteal_direct* and pgsteal_khugepaged* (per zone before 4.8).
/// Direct: pgsteal_direct*, which counts only reclaim for the machine's own shortage.
pub fn pages_stolen(vmstat: &BTreeMap<String, u64>) -> (u64, u64) {
    let sum = |pre: &str| vmstat.iter().filter(|(k, _)| k.starts_with(pre)).map(|(_, v)| v).sum::<u64>();
    let direct = sum("pgsteal_direct");
    let all = match (vmstat.get("pgsteal_anon"), vmstat.get("pgsteal_file")) {
        (Some(a), Some(f)) => a + f,
        _ => sum("pgsteal_kswapd") + direct + sum("pgsteal_khugepaged"),
    };
    (all, direct)
}

/// kswapd's pages scanned and reclaimed since boot, from /proc/vmstat: pgscan_kswapd*
/// and pgsteal_kswapd* (one counter per zone before 4.8).
pub fn kswapd_scan_steal(vmstat: &BTreeMap<String, u64>) -> (u64, u64) {
    let sum = |pre: &str| vmstat.iter().filter(|(k, _)| k.starts_with(pre)).map(|(_, v)| v).sum::<u64>();
    (sum("pgscan_kswapd"), sum("pgsteal_kswapd"))
}

/// Whether kswapd failed to free pages between two readings of
/// [`kswapd_scan_steal`]: it scanned and reclaimed nothing.
pub fn kswapd_failed(before: (u64, u64), after: (u64, u64)) -> bool {
    after.0 > before.0 && after.1 == before.1
}

fn read_stolen() -> (u64, u64) {
    read("/proc/vmstat").map(|t| pages_stolen(&parse_flat(&t))).unwrap_or_default()
}

impl Timeline {
    /// Opens (or appends to) the timeline file; the header goes only into an empty one.
    fn open(path: &Path, every_ms: u64) -> Result<Timeline> {
        let f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(crate::io_err(path))?;
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
    /// Sets up the groups, thaws what a previous floe left frozen, starts the supervisor.
    pub fn new(cfg: Config, supervisor_exe: Option<&Path>) -> Result<Daemon> {
        let hier = Hierarchies::detect()?;
        let policy = floe_policies::make(&cfg.policy).ok_or_else(|| Error::Unsupported(format!("unknown policy `{}`", cfg.policy)))?;
        let setup = policy.setup();
        if setup.seal.is_some() {
            return Err(Error::Unsupported(format!(
                "policy `{}` places pages between SL1 (zram) and SL2 (flash); Linux can move chosen pages there only by zram writeback (CONFIG_ZRAM_WRITEBACK, per-page since 6.x), which this backend does not drive yet (`floe daemon --check --policy seal` shows whether the kernel has it)",
                cfg.policy
            )));
        }
        thaw_all(&hier, &cfg.cgroup_root)?;
        if let Some(l) = &cfg.adopt_layout {
            thaw_layout(&hier, l)?;
        }
        let root = AppGroup::create(&hier, &cfg.cgroup_root)?;
        if let Some(mib) = cfg.memory_limit_mib {
            root.set_memory_limit(mib << 20)?;
        }
        let lmk_levels = match setup.kill_threshold {
            // One level: any app but the foreground, as the simulator does.
            Some(t) => vec![(1, t)],
            None => cfg.minfree_mib.iter().map(|&(adj, mib)| (adj, Pages::from_mib_f64(mib))).collect(),
        };
        let store = Store::open(&cfg.state_db)?;
        let prepager = setup.prepage.filter(|p| p.anon).map(|_| AnonPrepager::new());
        let file_prepager = setup.prepage.filter(|p| p.file).map(|_| FilePrepager::new());
        let mut apps = Vec::new();
        for r in cfg.apps.iter().filter(|_| cfg.adopt_layout.is_none()) {
            let group = AppGroup::create(&hier, &format!("{}/{}", cfg.cgroup_root, r.name))?;
            apps.push(App::new(r.clone(), group, false));
        }
        let supervisor = match supervisor_exe {
            Some(exe) => std::process::Command::new(exe)
                .args(["daemon", "--supervise", &std::process::id().to_string(), "--cgroup-root", &cfg.cgroup_root])
                .args(cfg.adopt_layout.iter().flat_map(|l| ["--adopt-layout", l.as_str()]))
                .args(Some("--unboost").filter(|_| setup.cpu == CpuMode::FgBoost))
                .spawn()
                .map_err(crate::io_err(exe))?
                .id() as i32,
            None => 0,
        };
        let mut d = Daemon {
            cfg,
            hier,
            policy: Some(policy),
            setup,
            apps,
            fg: None,
            start: Instant::now(),
            cpu_sample: (0, 0),
            util: 0.0,
            supervisor,
            c: Counters::default(),
            pending: Vec::new(),
            meminfo: MemInfo::default(),
            root,
            lmk_levels,
            lmk_level: None,
            psi_lmkd: None,
            store,
            last_save: Instant::now(),
            prepager,
            file_prepager,
            busy_until: Instant::now(),
            scanner: ProcScanner::default(),
            timeline: None,
            min_free_kb: read("/proc/sys/vm/min_free_kbytes").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0),
            kswapd_vm: (0, 0),
            kswapd_failing: false,
            below_pageout_mark: false,
        };
        d.sample(true);
        d.pending.clear();
        if let Some(path) = &d.cfg.timeline {
            let mut t = Timeline::open(path, d.cfg.timeline_ms)?;
            // Counts start from here, not from what the first sample found.
            t.c = d.c;
            t.apps_us = d.apps_cpu_us();
            d.timeline = Some(t);
        }
        if let Some(saved) = d.store.load(&d.cfg.policy)? {
            let mut p = d.policy.take().expect("policy present");
            let r = p.import_state(&saved, &d);
            d.policy = Some(p);
            match r {
                Ok(()) => d.log(&format!("state: restored {} from {}", d.cfg.policy, d.store.path().display())),
                // A state this version cannot read is reported and replaced, not fatal.
                Err(e) => d.log(&format!("state: ignoring saved {} state in {}: {e}", d.cfg.policy, d.store.path().display())),
            }
        }
        if let Some(saved) = d.store.load(&prepage_key(&d.cfg.policy))? {
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
        Ok(d)
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

    /// Saves what the policy learned, in one transaction.
    fn save_state(&mut self) {
        self.last_save = Instant::now();
        // One record for both estimators: {"anon": ..., "file": ...}.
        let parts =
            self.prepager.as_ref().map(AnonPrepager::export).into_iter().chain(self.file_prepager.as_ref().map(FilePrepager::export));
        let all: serde_json::Map<String, serde_json::Value> = parts.filter_map(|v| v.as_object().cloned()).flatten().collect();
        if !all.is_empty() {
            if let Err(e) = self.store.save(&prepage_key(&self.cfg.policy), &serde_json::Value::Object(all).to_string()) {
                self.log(&format!("state: cannot save: {e}"));
            }
        }
        let Some(state) = self.policy.as_ref().and_then(|p| p.export_state(self)) else { return };
        if let Err(e) = self.store.save(&self.cfg.policy, &state) {
            self.log(&format!("state: cannot save: {e}"));
        }
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
            self.apply(Action::Kill(vec![v]));
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
            if lmkd::kill_pending(since, || victim.is_some_and(|v| !self.apps[v].group.pids().unwrap_or_default().is_empty())) {
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
        self.apply(Action::Kill(vec![v]));
        if let Some(l) = self.psi_lmkd.as_mut() {
            l.last_kill = Some((Instant::now(), v));
        }
        self.sample(false);
    }

    /// One line to stdout (the journal under systemd). A closed stdout does not stop
    /// the daemon: the line is lost, the daemon goes on.
    fn log(&self, msg: &str) {
        let _ = writeln!(std::io::stdout(), "{:>10.3} {msg}", self.start.elapsed().as_secs_f64());
    }

    /// Finds new processes for the apps, notices apps that died, reads refault
    /// counters and CPU use; turns what changed into events.
    fn sample(&mut self, discover: bool) {
        if discover {
            self.discover_layout();
        }
        let procs = if discover && self.cfg.adopt_layout.is_none() { self.scanner.scan() } else { Vec::new() };
        let me = std::process::id() as i32;
        for i in 0..self.apps.len() {
            if discover && self.apps[i].adopted {
                let _ = self.apps[i].group.sync_memory();
            }
            let in_group: Vec<i32> = if discover { self.apps[i].group.pids().unwrap_or_default() } else { Vec::new() };
            for p in procs.iter().filter(|p| self.apps[i].rule.matches(p) && !in_group.contains(&p.pid)) {
                if guard(p.pid, &p.comm, &self.cfg.protected, me, self.supervisor).is_ok() && self.apps[i].group.add(p.pid).is_ok() {
                    self.log(&format!("app {}: adopted pid {} ({})", self.apps[i].rule.name, p.pid, p.comm));
                }
            }
            let pids = self.apps[i].group.pids().unwrap_or_default();
            if discover && self.fg == Some(AppId(i as u16)) {
                self.fg_boost_pids(AppId(i as u16), true, pids.clone());
            }
            let alive = !pids.is_empty();
            let (mut rss, mut rss_anon, mut swap) = (0, 0, 0);
            for pid in pids {
                if let Ok(t) = read(format!("/proc/{pid}/status")) {
                    let m = parse_kb_table("status", &t).unwrap_or_default();
                    rss += m.get("VmRSS").copied().unwrap_or(0);
                    rss_anon += m.get("RssAnon").copied().unwrap_or(0);
                    swap += m.get("VmSwap").copied().unwrap_or(0);
                }
            }
            (self.apps[i].rss, self.apps[i].rss_anon, self.apps[i].swap) = (rss, rss_anon, swap);
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
            if let Ok(now) = self.apps[i].group.refaults() {
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
        self.refresh_meminfo();
        self.frozen_first_pageout();
        self.background_pageout();
        if self.setup.events.pressure {
            // kswapd scanned and freed nothing since the last sample while free memory
            // is below the low watermark: a failed pass (machine-wide; under a memory
            // budget the budget's own reclaim is not kswapd's and is not reported).
            let now = read("/proc/vmstat").map(|t| kswapd_scan_steal(&parse_flat(&t))).unwrap_or(self.kswapd_vm);
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
        if let Ok((busy, total)) = read("/proc/stat").and_then(|t| parse_cpu_line("/proc/stat", &t)) {
            let (b0, t0) = self.cpu_sample;
            if total > t0 {
                self.util = (busy - b0.min(busy)) as f64 / (total - t0) as f64;
            }
            self.cpu_sample = (busy, total);
        }
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

    /// Whether the guard lets floe page app `i` out; a refusal is counted and logged.
    fn may_page_out(&mut self, i: usize) -> bool {
        match self.guard_app(AppId(i as u16), "pageout") {
            Ok(()) => true,
            Err(why) => {
                self.c.refused += 1;
                self.log(&format!("refused pageout of {}: {why}", self.apps[i].rule.name));
                false
            }
        }
    }

    /// Ice+'s freeze-aware eviction under pressure (§4.3.1, "moves them out of LRU lists
    /// quickly", app by app): while free memory (or the budget's) is below the low
    /// watermark, each sample pages out one frozen app, the longest frozen first, that has
    /// not been paged out since it was frozen: its anonymous memory to swap, its private
    /// file pages dropped (MADV_PAGEOUT), before the kernel's LRU reaches anyone else.
    fn frozen_first_pageout(&mut self) {
        if self.setup.reclaim != ReclaimOrder::FrozenFirst || self.meminfo.free >= self.meminfo.wmark_low {
            return;
        }
        let next = (0..self.apps.len())
            .filter(|&i| self.apps[i].state == AppState::Frozen && !self.apps[i].paged_out)
            .min_by_key(|&i| self.apps[i].frozen_since);
        let Some(i) = next else { return };
        self.apps[i].paged_out = true;
        let name = self.apps[i].rule.name.clone();
        if !self.may_page_out(i) {
            return;
        }
        if self.cfg.dry_run {
            self.log(&format!("dry-run: would page out {name} (frozen first)"));
            return;
        }
        match each_pid_with(&self.apps[i].group, app_ranges, |p, ranges| p.madvise(ranges, MADV_PAGEOUT).map(|_| ())) {
            Ok(()) => {
                self.c.frozen_pageouts += 1;
                self.log(&format!("pageout {name} (frozen first, free {} MiB below the low watermark)", self.meminfo.free.0 / 256));
            }
            Err(e) => self.log(&format!("pageout {name} failed: {e}")),
        }
    }

    /// Background apps paged out first, the daemon's stand-in for a kswapd the policy
    /// changes; the kernel's watermarks and LRU are the machine's, so floe does it itself
    /// before the kernel reaches anyone's pages, as Ice+'s frozen-first eviction does:
    /// - a swap threshold of the policy's own (`Setup::swap_threshold`, Selective's Table
    ///   3), which the simulator makes kswapd's low watermark, reclaiming to 6/5 of it:
    ///   below it, swappable background apps' resident anonymous memory goes to swap;
    ///   kill-targets (unswappable) are left to the killer, file pages to the kernel;
    /// - foreground-last eviction (`ReclaimOrder::FgLast`, Acclaim): below the low
    ///   watermark, background apps' anonymous and mapped file pages, up to the high one.
    ///
    /// Each sample while free memory (or the budget's) is below, the least recently used
    /// app first, until what was advised (MADV_PAGEOUT) covers the way up. Never the
    /// foreground app.
    fn background_pageout(&mut self) {
        let (low, high, ranges, swappable_only, mark): (Pages, Pages, RangesOf, bool, &str) =
            match (self.setup.swap_threshold, self.setup.reclaim) {
                (Some(t), _) => (t, Pages(t.0 * 6 / 5), anon_ranges, true, "the swap threshold"),
                (None, ReclaimOrder::FgLast) => (self.meminfo.wmark_low, self.meminfo.wmark_high, app_ranges, false, "the low watermark"),
                _ => return,
            };
        let free = self.meminfo.free;
        if free >= low {
            self.below_pageout_mark = false;
            return;
        }
        let first = !std::mem::replace(&mut self.below_pageout_mark, true);
        let mut want = high.0.saturating_sub(free.0);
        let mut order: Vec<usize> = (0..self.apps.len())
            .filter(|&i| {
                let a = &self.apps[i];
                // Nothing resident at the last sample: nothing to find in its pagemap.
                let resident = if swappable_only { a.rss_anon } else { a.rss };
                (a.swappable || !swappable_only)
                    && resident > 0
                    && matches!(a.state, AppState::Cached | AppState::Frozen)
                    && self.fg != Some(AppId(i as u16))
            })
            .collect();
        order.sort_by_key(|&i| (self.apps[i].last_used, i));
        let mib = |p: u64| p as f64 / 256.0;
        let why = format!("free {:.1} MiB below {mark}, {:.1} MiB", mib(free.0), mib(low.0));
        for i in order {
            if want == 0 {
                break;
            }
            let name = self.apps[i].rule.name.clone();
            if !self.may_page_out(i) {
                continue;
            }
            if self.cfg.dry_run {
                // Once each time free memory falls below: nothing is paged out, so it stays there.
                if first {
                    self.log(&format!("dry-run: would page out up to {want} pages of {name} ({why})"));
                }
                return;
            }
            match advise(&self.apps[i].group, ranges, want, false) {
                Ok(0) => {}
                Ok(n) => {
                    want -= n.min(want);
                    self.c.bg_pageout_pages += n;
                    self.log(&format!("pageout {name}: {n} pages ({why})"));
                }
                Err(e) => self.log(&format!("pageout {name} failed: {e}")),
            }
        }
    }

    /// Reads memory: the machine's, or what is left of the budget.
    fn refresh_meminfo(&mut self) {
        self.meminfo = read_meminfo(self.min_free_kb);
        if let Some(mib) = self.cfg.memory_limit_mib {
            if let Ok(g) = self.root.memory_usage() {
                self.meminfo = budget_meminfo(self.meminfo, mib << 20, &g);
            }
        }
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
            reclaimed_pages: steal.0.saturating_sub(s0.0),
            direct_reclaimed_pages: steal.1.saturating_sub(s0.1),
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
                    self.apply(a);
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
        for pid in app.group.pids().unwrap_or_default() {
            let comm = read(format!("/proc/{pid}/comm")).unwrap_or_default();
            guard(pid, comm.trim(), &self.cfg.protected, me, self.supervisor)?;
        }
        Ok(())
    }

    /// Applies one action after the guard: nothing touches the FG app (except thaw),
    /// init, floe itself or protected processes.
    fn apply(&mut self, act: Action) {
        let target = |a: AppId| a.0 as usize;
        let check = |d: &Daemon, a: AppId, what: &str| d.guard_app(a, what);
        let (app, what) = match &act {
            Action::Freeze(a) => (*a, "freeze"),
            Action::Thaw(a) => (*a, "thaw"),
            Action::Kill(v) => {
                for a in v.clone() {
                    self.apply_one(a, "kill", &check);
                }
                return;
            }
            Action::Reclaim { app, .. } => (*app, "reclaim"),
            Action::Prepage { app, .. } => (*app, "prepage"),
            Action::SetSwappable { app, .. } => (*app, "swappable"),
            Action::SetCpuPriority { app, .. } => (*app, "cpu"),
            Action::MarkUnkillable { app, unkillable } => {
                if let Some(x) = self.apps.get_mut(target(*app)) {
                    x.unkillable = *unkillable;
                }
                return;
            }
        };
        if let Err(why) = check(self, app, what) {
            self.c.refused += 1;
            self.log(&format!("refused {what} of app {}: {why}", app.0));
            return;
        }
        let name = self.apps[target(app)].rule.name.clone();
        if self.cfg.dry_run {
            self.log(&format!("dry-run: would {what} {name} ({act:?})"));
            return;
        }
        let g = &self.apps[target(app)].group;
        let mut detail = String::new();
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
            }),
            // The machine's swap, whichever tier the policy named: Linux has no per-app
            // choice of swap device (`swap_note` says at start when the two differ).
            Action::Reclaim { pages, tier, .. } => advise(g, anon_ranges, pages.0, false).map(|n| {
                self.c.reclaim_pages += n;
                detail = format!(": {n} of {} pages asked (for {tier:?}, to the machine's swap)", pages.0);
            }),
            Action::Prepage { pages, .. } => advise(g, anon_ranges, pages.0, true).map(|n| {
                detail = format!(": {n} of {} pages asked", pages.0);
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
            Action::Kill(_) | Action::MarkUnkillable { .. } => Ok(()),
        };
        match r {
            Ok(()) => self.log(&format!("{what} {name}{detail}")),
            Err(e) => self.log(&format!("{what} {name} failed: {e}")),
        }
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
    /// swaps when file pages are nearly gone, which an Android phone without swap cannot).
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
        let pids = self.apps.get(app.0 as usize).map(|x| x.group.pids().unwrap_or_default()).unwrap_or_default();
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
        let i = self.apps.iter().position(|a| a.rule.name == name).ok_or_else(|| format!("unknown app `{name}`"))?;
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
            let pids = self.apps[i].group.pids().unwrap_or_default();
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
        self.fg_boost(to, true);
        self.pending.push(Event::LaunchStarted { app: to, kind });
        self.pending.push(Event::AppSwitch { from, to: Some(to) });
        self.dispatch();
        if self.apps[i].group.is_frozen().unwrap_or(false) {
            self.apply(Action::Thaw(to));
        }
        if self.apps[i].state != AppState::Dead {
            self.apps[i].state = AppState::Foreground;
        }
        Ok(())
    }

    /// `floe ctl launch-done APP [MS]`: the launch `floe ctl fg` began has finished
    /// (its first frame is up), after MS milliseconds or, without MS, after the time
    /// since the `fg` request.
    fn launch_done(&mut self, name: &str, ms: Option<&str>) -> std::result::Result<(), String> {
        let i = self.apps.iter().position(|a| a.rule.name == name).ok_or_else(|| format!("unknown app `{name}`"))?;
        let (since, kind) = self.apps[i].launching.take().ok_or_else(|| format!("`{name}` is not launching (send `fg {name}` first)"))?;
        let latency = match ms {
            Some(ms) => {
                let ms: f64 = ms.parse().map_err(|_| format!("launch time `{ms}` is not a number of milliseconds"))?;
                if !(ms >= 0.0 && ms.is_finite()) {
                    return Err(format!("launch time `{ms}` must be 0 or more"));
                }
                Nanos((ms * 1e6) as u64)
            }
            None => Nanos(since.elapsed().as_nanos() as u64),
        };
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
        let pids = self.apps[i].group.pids().unwrap_or_default();
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
            s += &format!("{} {:?} pids {:?}\n", a.rule.name, a.state, a.group.pids().unwrap_or_default());
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

    fn handle_client(&mut self, mut stream: UnixStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if let Err(e) = self.peer_allowed(&stream) {
            let _ = writeln!(stream, "error: {e}");
            return;
        }
        let mut line = String::new();
        if BufReader::new(&stream).read_line(&mut line).is_err() {
            return;
        }
        let reply = match Request::parse(&line) {
            Ok(Request::Fg(app)) => self.set_foreground(app).map(|_| "ok\n".to_string()),
            Ok(Request::LaunchDone(app, ms)) => self.launch_done(app, ms).map(|_| "ok\n".to_string()),
            Ok(Request::Status) => Ok(self.status()),
            Ok(Request::Apps) => Ok(self.apps.iter().map(|a| format!("{}\n", a.rule.name)).collect()),
            Ok(Request::Metrics) => Ok(self.metrics()),
            Err(e) => Err(e),
        };
        let _ = match reply {
            Ok(r) => stream.write_all(r.as_bytes()),
            Err(e) => stream.write_all(format!("error: {e}\n").as_bytes()),
        };
    }

    /// Root, or the configured group (SO_PEERCRED).
    fn peer_allowed(&self, s: &UnixStream) -> std::result::Result<(), String> {
        let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: a valid socket fd and a buffer of the right size for SO_PEERCRED.
        let r = unsafe {
            libc::getsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, &mut cred as *mut _ as *mut libc::c_void, &mut len)
        };
        if r != 0 {
            return Err("cannot read peer credentials".into());
        }
        if cred.uid == 0 || self.cfg.ctl_gid == Some(cred.gid) {
            Ok(())
        } else {
            Err(format!("uid {} gid {} may not control floe", cred.uid, cred.gid))
        }
    }

    /// Runs until SIGTERM or SIGINT; thaws everything on the way out.
    pub fn run(&mut self) -> Result<()> {
        for sig in [libc::SIGTERM, libc::SIGINT] {
            // SAFETY: installing an async-signal-safe handler that only stores an atomic.
            unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
        }
        let _ = std::fs::remove_file(&self.cfg.socket);
        let listener = UnixListener::bind(&self.cfg.socket).map_err(crate::io_err(&self.cfg.socket))?;
        listener.set_nonblocking(true).map_err(crate::io_err(&self.cfg.socket))?;
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
        let (mut next_sample, mut next_tick, mut next_discover) = (Instant::now(), Instant::now(), Instant::now());
        self.log(&format!("floe daemon: policy {}, {} apps, socket {}", self.cfg.policy, self.apps.len(), self.cfg.socket.display()));
        while !STOP.load(Ordering::SeqCst) {
            let now = Instant::now();
            let wake = tick.map_or(next_sample, |_| next_sample.min(next_tick)).min(next_discover);
            let wake = self.timeline.as_ref().map_or(wake, |t| wake.min(t.next));
            let mut timeout = wake.saturating_duration_since(now).min(Duration::from_millis(200));
            let mut fds = vec![
                libc::pollfd { fd: psi.raw_fd(), events: libc::POLLPRI, revents: 0 },
                libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            if let Some(l) = &self.psi_lmkd {
                for t in [&l.low, &l.medium] {
                    fds.push(libc::pollfd { fd: t.raw_fd(), events: libc::POLLPRI, revents: 0 });
                }
                if l.poll.is_some() {
                    timeout = timeout.min(Duration::from_nanos(lmkd::POLL.0));
                }
            }
            // SAFETY: valid pollfds for the duration of the call.
            // Rounded up: a timeout rounded down to 0 ms would spin until the deadline.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout.as_micros().div_ceil(1000) as i32) };
            if self.psi_lmkd.is_some() {
                self.lmkd_poll(&fds[2..]);
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
                while let Ok((s, _)) = listener.accept() {
                    let _ = s.set_nonblocking(false);
                    self.handle_client(s);
                }
            }
            let now = Instant::now();
            // New processes are looked for on their own schedule, even while sampling
            // is slow: an app must be in its groups before it allocates much.
            if now >= next_sample || now >= next_discover {
                let d = now >= next_discover;
                if d {
                    next_discover = now + discover;
                }
                self.sample(d);
                let switching = |t: Option<(&str, Instant)>| t.is_some_and(|(_, t)| t.elapsed() > SWITCH_WINDOW);
                if switching(self.prepager.as_ref().and_then(|p| p.in_progress()))
                    || switching(self.file_prepager.as_ref().and_then(|p| p.in_progress()))
                {
                    self.end_switch(None);
                }
                self.lmk();
                next_sample = now + if Instant::now() < self.busy_until { sample } else { idle_sample };
            }
            self.write_timeline(now);
            if let Some(t) = tick {
                if now >= next_tick {
                    self.pending.push(Event::Tick);
                    next_tick = now + Duration::from_nanos(t.0);
                }
            }
            self.dispatch();
            if self.last_save.elapsed() >= Duration::from_secs(self.cfg.state_save_s) {
                self.save_state();
            }
        }
        self.save_state();
        if let Some(f) = self.fg {
            self.fg_boost(f, false);
        }
        self.log("stopping: thawing every app");
        let _ = std::fs::remove_file(&self.cfg.socket);
        if let Some(l) = &self.cfg.adopt_layout {
            thaw_layout(&self.hier, l)?;
        }
        thaw_all(&self.hier, &self.cfg.cgroup_root)?;
        let left = self.remove_own_groups();
        if !left.is_empty() {
            self.log(&format!("kept {} group(s) that still hold processes: {}", left.len(), left.join(", ")));
        }
        Ok(())
    }
}

/// The ranges of a process's memory an action applies to.
type RangesOf = fn(i32) -> Result<Vec<(usize, usize)>>;

/// Calls `f` with a pidfd and the `ranges` of each process of the group.
fn each_pid_with(g: &AppGroup, ranges: RangesOf, f: impl Fn(&Pidfd, &[(usize, usize)]) -> Result<()>) -> Result<()> {
    for pid in g.pids()? {
        let p = Pidfd::open(pid)?;
        f(&p, &ranges(pid)?)?;
    }
    Ok(())
}

/// Pages out (`in_swap` false) or reads back ahead of use (true) at most `limit` of the
/// pages in each process's `ranges` that are resident, or in swap, process by process in
/// the group's order, each in address order (pagemap says nothing of recency); a process
/// that exits meanwhile is passed over. Returns the pages advised.
fn advise(g: &AppGroup, ranges: RangesOf, limit: u64, in_swap: bool) -> Result<u64> {
    let mut done = 0;
    for pid in g.pids()? {
        if done >= limit {
            break;
        }
        let advise = |p: Pidfd, r: &[(usize, usize)]| {
            if in_swap {
                p.prepage_pages(r, limit - done)
            } else {
                p.pageout_pages(r, limit - done)
            }
        };
        match ranges(pid).and_then(|r| advise(Pidfd::open(pid)?, &r)) {
            Ok(n) => done += n,
            Err(_) if !Path::new(&format!("/proc/{pid}")).exists() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// A process's anonymous mappings and its mappings of files: what of an app's memory
/// reclaim can take (shared pages the kernel skips itself).
fn app_ranges(pid: i32) -> Result<Vec<(usize, usize)>> {
    let maps = read(format!("/proc/{pid}/maps"))?;
    let mut r = crate::sys::parse_anon_ranges(&maps);
    r.extend(crate::prepage_file::parse_file_mappings(&maps).into_iter().map(|m| (m.start, m.end - m.start)));
    Ok(r)
}

/// Thaws every group under `root` in the hierarchies that can freeze.
pub fn thaw_all(h: &Hierarchies, root: &str) -> Result<()> {
    fn walk(dir: &Path, v2: bool) -> Result<()> {
        if !dir.is_dir() {
            return Ok(());
        }
        let (file, val) = if v2 { ("cgroup.freeze", "0") } else { ("freezer.state", "THAWED") };
        if dir.join(file).exists() {
            crate::write(dir.join(file), val)?;
        }
        for e in std::fs::read_dir(dir).map_err(crate::io_err(dir))?.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&e.path(), v2)?;
            }
        }
        Ok(())
    }
    if let Some(v2) = &h.v2 {
        walk(&v2.join(root), true)?;
    }
    if let Some(fz) = &h.freezer_v1 {
        walk(&fz.join(root), false)?;
    }
    Ok(())
}

/// Thaws the `uid_N` groups of an adopted layout: only at that level, where floe
/// freezes; a `pid_M` group someone else froze stays frozen.
pub fn thaw_layout(h: &Hierarchies, layout: &str) -> Result<()> {
    let Some(v2) = &h.v2 else { return Ok(()) };
    let dir = v2.join(layout);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(()) };
    for e in entries.flatten() {
        let f = e.path().join("cgroup.freeze");
        if e.file_name().to_str().is_some_and(|n| n.starts_with("uid_")) && f.exists() {
            crate::write(f, "0")?;
        }
    }
    Ok(())
}

/// The supervisor: waits for the daemon to exit, however it exits, and thaws every app
/// within a second of it.
pub fn supervise(daemon_pid: i32, root: &str, layout: Option<&str>, unboost: bool) -> Result<()> {
    let h = Hierarchies::detect()?;
    let p = Pidfd::open(daemon_pid)?;
    loop {
        match p.wait_exit(Duration::from_secs(3600)) {
            Ok(()) => break,
            Err(Error::Timeout { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    if unboost {
        // The foreground app the daemon left at nice -10 goes back to 0 (a process the
        // user reniced to another value is left alone).
        let dirs = [h.v2.as_ref().map(|d| d.join(layout.unwrap_or(root))), h.memory_v1.as_ref().map(|d| d.join(root))];
        for pid in dirs.into_iter().flatten().flat_map(|d| crate::cgroup::pids_in(&d, true).unwrap_or_default()) {
            if nice_of(pid) == Some(-10) {
                set_nice(pid, 0);
            }
        }
    }
    if let Some(l) = layout {
        thaw_layout(&h, l)?;
    }
    thaw_all(&h, root)
}

/// Sends one request to a running daemon and returns its answer.
/// A request on the control socket.
#[derive(Debug, PartialEq)]
enum Request<'a> {
    /// APP comes to the foreground: a launch begins.
    Fg(&'a str),
    /// APP's first frame is up, after MS ms if given.
    LaunchDone(&'a str, Option<&'a str>),
    Status,
    Apps,
    Metrics,
}

impl<'a> Request<'a> {
    fn parse(line: &'a str) -> std::result::Result<Request<'a>, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[..] {
            ["fg", app] => Ok(Request::Fg(app)),
            ["launch-done", app] => Ok(Request::LaunchDone(app, None)),
            ["launch-done", app, ms] => Ok(Request::LaunchDone(app, Some(ms))),
            ["status"] => Ok(Request::Status),
            ["apps"] => Ok(Request::Apps),
            ["metrics"] => Ok(Request::Metrics),
            _ => Err(format!("unknown request `{}` (fg APP, launch-done APP [MS], status, apps, metrics)", line.trim())),
        }
    }
}

/// Sends `request` to the daemon at `socket` and returns its reply. A request the
/// daemon would not understand is refused before connecting.
pub fn ctl(socket: &Path, request: &str) -> Result<String> {
    Request::parse(request).map_err(Error::Unsupported)?;
    let mut s = UnixStream::connect(socket).map_err(|e| {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                " (is the daemon running? `floe daemon --config FILE` listens here, its config's `socket`)"
            }
            std::io::ErrorKind::PermissionDenied => " (the socket is for root and the config's `ctl_gid`)",
            _ => "",
        };
        Error::Unsupported(format!("{}: cannot reach the daemon: {e}{hint}", socket.display()))
    })?;
    s.write_all(format!("{request}\n").as_bytes()).map_err(crate::io_err(socket))?;
    s.shutdown(std::net::Shutdown::Write).map_err(crate::io_err(socket))?;
    let mut out = String::new();
    std::io::Read::read_to_string(&mut s, &mut out).map_err(crate::io_err(socket))?;
    Ok(out)
}

/// zram0's (original data, memory used, disk size) in bytes, from mm_stat and
/// disksize; zeros without zram.
fn zram_stats() -> (u64, u64, u64) {
    let mm = read("/sys/block/zram0/mm_stat").unwrap_or_default();
    let f: Vec<u64> = mm.split_whitespace().filter_map(|v| v.parse().ok()).collect();
    let size = read("/sys/block/zram0/disksize").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    (f.first().copied().unwrap_or(0), f.get(2).copied().unwrap_or(0), size)
}

/// System memory as a policy sees it: available memory as free, watermarks from
/// min_free_kbytes with the kernel's low = 5/4 and high = 3/2 of min.
fn read_meminfo(min_kb: u64) -> MemInfo {
    let m = read("/proc/meminfo").and_then(|t| parse_kb_table("/proc/meminfo", &t)).unwrap_or_default();
    let pages = |k: &str| Pages(m.get(k).copied().unwrap_or(0) / 4096);
    let min = Pages(min_kb * 1024 / 4096);
    let zram = zram_stats();
    MemInfo {
        total: pages("MemTotal"),
        free: pages("MemAvailable"),
        wmark_min: min,
        wmark_low: Pages(min.0 * 5 / 4),
        wmark_high: Pages(min.0 * 3 / 2),
        active_anon: pages("Active(anon)"),
        inactive_anon: pages("Inactive(anon)"),
        active_file: pages("Active(file)"),
        inactive_file: pages("Inactive(file)"),
        zram_stored: Pages(zram.0 / 4096),
        zram_used: Pages(zram.1 / 4096),
        zram_capacity: Pages(zram.2 / 4096),
        flash_swap_used: Pages(m.get("SwapTotal").copied().unwrap_or(0).saturating_sub(m.get("SwapFree").copied().unwrap_or(0)) / 4096),
        flash_swap_capacity: pages("SwapTotal"),
        writeback: pages("Writeback"),
    }
}

/// The low-memory killer's level at `free`: the lowest oom_adj whose minfree is above
/// it (levels in ascending adj and minfree, as Android lists them), if any.
pub fn lmk_level(levels: &[(i32, Pages)], free: Pages) -> Option<i32> {
    levels.iter().find(|&&(_, mf)| free < mf).map(|&(adj, _)| adj)
}

/// Android's oom_adj of app `i` among `apps` (alive, perceptible, last used) with `fg`
/// in the foreground, as the simulator gives it: foreground 0, perceptible 200, the
/// cached apps 900 and up by their recency among themselves.
fn android_adj(apps: &[(bool, bool, Nanos)], fg: Option<usize>, i: usize) -> i32 {
    let (_, perceptible, last_used) = apps[i];
    if fg == Some(i) {
        0
    } else if perceptible {
        200
    } else {
        let newer = apps.iter().enumerate().filter(|&(j, &(alive, p, t))| alive && !p && fg != Some(j) && t > last_used).count();
        floe_core::cached_oom_adj(newer)
    }
}

/// The stock killer's victim at level `min_adj`: the highest oom_adj at or above it,
/// then the largest; never the foreground, an unkillable or a dead app.
pub fn stock_victim(apps: &[AppInfo], fg: Option<AppId>, min_adj: i32) -> Option<AppId> {
    apps.iter()
        .filter(|a| a.state != AppState::Dead && fg != Some(a.id) && !a.unkillable && a.oom_adj >= min_adj)
        .max_by_key(|a| (a.oom_adj, a.rss, std::cmp::Reverse(a.id)))
        .map(|a| a.id)
}

/// Memory as policies see it under a budget: the budget is the total, and free is what
/// is left of it plus the apps' inactive page cache (what MemAvailable counts
/// system-wide), never more than the machine has available.
fn budget_meminfo(sys: MemInfo, budget: u64, g: &GroupMemory) -> MemInfo {
    let left = budget.saturating_sub(g.usage) + g.inactive_file.min(g.usage);
    let pages = |b: u64| Pages(b / 4096);
    MemInfo {
        total: pages(budget),
        free: Pages((left / 4096).min(sys.free.0)),
        active_anon: pages(g.active_anon),
        inactive_anon: pages(g.inactive_anon),
        active_file: pages(g.active_file),
        inactive_file: pages(g.inactive_file),
        ..sys
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

    /// The control requests the daemon understands, with their words checked the same
    /// way by `floe ctl` before it connects.
    #[test]
    fn control_requests_parse_with_their_arguments() {
        assert_eq!(Request::parse("fg browser\n"), Ok(Request::Fg("browser")));
        assert_eq!(Request::parse("launch-done browser"), Ok(Request::LaunchDone("browser", None)));
        assert_eq!(Request::parse("launch-done browser 420"), Ok(Request::LaunchDone("browser", Some("420"))));
        assert_eq!(Request::parse(" status "), Ok(Request::Status));
        for bad in ["fg", "fg a b", "status now", "bogus", "", "launch-done a 1 2"] {
            assert!(Request::parse(bad).unwrap_err().contains("unknown request"), "{bad:?}");
        }
        let e = ctl(Path::new("/nonexistent/floe.sock"), "status").unwrap_err().to_string();
        assert!(e.contains("cannot reach the daemon") && e.contains("is the daemon running"), "{e}");
        assert!(ctl(Path::new("/nonexistent/floe.sock"), "bogus").unwrap_err().to_string().contains("unknown request"));
    }

    /// Every number of the sample config made absurd in turn is accepted or refused at
    /// its own line, never a panic; the sample itself parses.
    #[test]
    fn any_number_of_the_sample_config_made_absurd_is_refused_at_its_line() {
        let sample = include_str!("../../../packaging/floe.toml");
        assert!(Config::parse("floe.toml", sample).is_ok());
        let (mut tried, mut refused) = (0, 0);
        for (i, line) in sample.lines().enumerate() {
            let code = line.split('#').next().unwrap_or("");
            if code.contains('"') {
                continue;
            }
            let mut at = 0;
            for token in code.split(|c: char| " =[],".contains(c)) {
                let start = at + code[at..].find(token).unwrap_or(0);
                at = start + token.len();
                if token.is_empty() || token.parse::<f64>().is_err() {
                    continue;
                }
                for bad in ["-1", "0", "1e300", "nan", "18446744073709551616"] {
                    let edited = format!("{}{bad}{}", &code[..start], &code[start + token.len()..]);
                    let text: Vec<&str> = sample.lines().enumerate().map(|(j, l)| if j == i { edited.as_str() } else { l }).collect();
                    tried += 1;
                    if let Err(e) = Config::parse("floe.toml", &text.join("\n")) {
                        refused += 1;
                        assert_eq!(e.line, Some(i + 1), "`{token}` -> {bad}: {e}");
                        assert!(e.field.is_some(), "{e}");
                    }
                }
            }
        }
        assert!(tried >= 60 && refused * 2 > tried, "{refused} of {tried} refused");
    }

    #[test]
    fn config_parses_with_defaults_and_errors_name_the_line_and_key() {
        let c = Config::parse("f.toml", "[[app]]\nname = \"cam\"\nexe = \"/usr/bin/cam\"\n").unwrap();
        assert_eq!((c.policy.as_str(), c.cgroup_root.as_str(), c.sample_ms, c.discover_ms), ("ice", "floe", 100, 1000));
        assert_eq!(c.apps[0].name, "cam");
        let bad = |text: &str| Config::parse("f.toml", text).unwrap_err().to_string();
        let e = bad("policy = \"ice\"\nsample_ms = \"fast\"\n");
        assert!(e.starts_with("f.toml:2: field `sample_ms`"), "{e}");
        let e = bad("polcy = \"ice\"\n");
        assert!(e.contains("polcy") && e.starts_with("f.toml:1"), "{e}");
        // What the checks after parsing refuse is located too: file, line and key.
        assert!(bad("# floe\n\npolicy = \"nope\"\n").starts_with("f.toml:3: field `policy`: unknown policy"));
        assert!(bad("cgroup_root = \"../x\"\n").starts_with("f.toml:1: field `cgroup_root`"));
        assert!(bad("dry_run = true\nsample_ms = 5\n").starts_with("f.toml:2: field `sample_ms`: must be 10..=60000, got 5"));
        let e = bad("minfree_mib = [\n  [0, 72],\n  [900, -1],\n]\n");
        assert!(e.starts_with("f.toml:3: field `minfree_mib[1]`") && e.ends_with("got [900, -1]"), "{e}");
        let e = bad("[[app]]\nname = \"a\"\n");
        assert!(e.starts_with("f.toml:2: field `app.name`") && e.contains("needs at least one"), "{e}");
        let e = bad("[[app]]\nname = \"a\"\nuid = 1\n[[app]]\nname = \"a\"\nuid = 2\n");
        assert!(e.starts_with("f.toml:5: field `app.name`") && e.contains("twice"), "{e}");
        let e = bad("adopt_layout = \".\"\n[[app]]\nname = \"a\"\ncmdline = \"x\"\nuid = 3\n");
        assert!(e.starts_with("f.toml:4: field `app.cmdline`"), "{e}");
        let e = Config::load("/nonexistent/floe.toml").unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/floe.toml: cannot read"), "{e}");
    }

    #[test]
    fn timeline_keys_are_validated_and_reclaim_is_counted_once() {
        let c = Config::parse("f.toml", "timeline = \"/tmp/t.csv\"\n").unwrap();
        assert_eq!((c.timeline.as_deref(), c.timeline_ms), (Some(Path::new("/tmp/t.csv")), 1000));
        assert_eq!(Config::parse("f.toml", "").unwrap().timeline, None);
        let e = Config::parse("f.toml", "timeline_ms = 5\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:1: field `timeline_ms`") && e.ends_with("got 5"), "{e}");
        // Linux 5.8+: the per-type totals count everything (here 20 pages of a memory
        // cgroup's own reclaim besides the machine's 110), direct only the machine's.
        let new =
            parse_flat("pgsteal_kswapd 100\npgsteal_direct 7\npgsteal_khugepaged 3\npgsteal_anon 80\npgsteal_file 50\npgscan_direct 90\n");
        assert_eq!(pages_stolen(&new), (130, 7));
        // 4.8-5.7: one counter per reclaimer; before 4.8 one per zone.
        let mid = parse_flat("pgsteal_kswapd 100\npgsteal_direct 7\npgscan_direct 90\n");
        assert_eq!(pages_stolen(&mid), (107, 7));
        let old = parse_flat("pgsteal_kswapd_dma 1\npgsteal_kswapd_normal 20\npgsteal_direct_normal 4\npgsteal_direct_movable 1\n");
        assert_eq!(pages_stolen(&old), (26, 5));
        // A command with spaces and parentheses does not shift the fields.
        let stat = "45 (kswapd0) S 2 0 0 0 -1 2129984 0 0 0 0 17 4 0 0 20 0 1 0 13 0 0";
        assert_eq!(cpu_ticks(stat), Some(21));
        assert_eq!(cpu_ticks("7 (a) b (c)) R 1 0 0 0 -1 0 0 0 0 0 3 2 0 0"), Some(5));
        assert_eq!(cpu_ticks("garbage"), None);
        assert!(!kswapd_pids().is_empty(), "this kernel runs kswapd");
        // And on this machine's kernel, whose /proc/vmstat has them.
        let here = pages_stolen(&parse_flat(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert!(here.0 >= here.1);
    }

    #[test]
    fn the_machines_swap_is_named_when_it_is_not_the_policys() {
        let zram = vec![("/dev/zram0".to_string(), true)];
        let file = vec![("/swapfile".to_string(), false)];
        assert_eq!(swap_note("lru-cfs", SwapSetup::Zram, &zram, false), None);
        assert_eq!(swap_note("android-lmk", SwapSetup::None, &[], false), None);
        assert_eq!(swap_note("swap-all", SwapSetup::Flash, &file, false), None);
        assert_eq!(swap_note("zswap", SwapSetup::Zswap, &file, true), None);
        let n = swap_note("android-lmk", SwapSetup::None, &zram, false).unwrap();
        assert!(n.contains("without swap") && n.contains("/dev/zram0") && n.contains("swappiness is set to 0"), "{n}");
        let n = swap_note("swap-all", SwapSetup::Flash, &zram, false).unwrap();
        assert!(n.contains("swap on storage") && n.contains("swaps to /dev/zram0"), "{n}");
        let n = swap_note("lru-cfs", SwapSetup::Zram, &[], false).unwrap();
        assert!(n.contains("runs with zram; no swap is on here"), "{n}");
        let n = swap_note("zswap", SwapSetup::Zswap, &file, false).unwrap();
        assert!(n.contains("zswap is off here") && n.contains("go to /swapfile directly"), "{n}");
    }

    #[test]
    fn refaults_count_from_the_first_sample_not_from_the_groups_history() {
        assert_eq!(refaults_since(None, (5_000, 120)), (0, 0), "an adopted group's history is no refault");
        assert_eq!(refaults_since(Some((5_000, 120)), (5_010, 120)), (10, 0));
        assert_eq!(refaults_since(Some((5_000, 120)), (3, 7)), (0, 0), "a counter that went back");
    }

    #[test]
    fn cached_apps_rank_by_recency_among_themselves() {
        let t = Nanos::from_secs;
        // 0: foreground, used last; 1: perceptible; 2 and 3 cached (3 more recent); 4 dead.
        let apps = [(true, false, t(50)), (true, true, t(40)), (true, false, t(10)), (true, false, t(30)), (false, false, t(45))];
        let adj: Vec<i32> = (0..apps.len()).map(|i| android_adj(&apps, Some(0), i)).collect();
        assert_eq!(&adj[..4], &[0, 200, 910, 900], "neither the foreground, the perceptible nor the dead app counts");
        // At home, with nothing in the foreground, the last app used is a cached one too.
        assert_eq!(android_adj(&apps, None, 0), 900);
        assert_eq!(android_adj(&apps, None, 3), 910);
    }

    #[test]
    fn a_kswapd_that_scans_and_frees_nothing_has_failed() {
        // 4.8+: one counter each; before 4.8 one per zone.
        let new = parse_flat("pgscan_kswapd 500\npgsteal_kswapd 120\npgscan_direct 9\npgsteal_direct 4\n");
        assert_eq!(kswapd_scan_steal(&new), (500, 120));
        let old = parse_flat("pgscan_kswapd_dma 5\npgscan_kswapd_normal 70\npgsteal_kswapd_normal 30\npgsteal_direct_normal 2\n");
        assert_eq!(kswapd_scan_steal(&old), (75, 30));
        assert!(kswapd_failed((500, 120), (900, 120)), "scanned 400, freed none");
        assert!(!kswapd_failed((500, 120), (900, 121)), "freed one");
        assert!(!kswapd_failed((500, 120), (500, 120)), "did not run");
        // This kernel's /proc/vmstat has kswapd's counters, and it never reclaimed more
        // than it scanned.
        let here = kswapd_scan_steal(&parse_flat(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert!(here.0 >= here.1, "{here:?}");
        assert!(std::fs::read_to_string("/proc/vmstat").unwrap().lines().any(|l| l.starts_with("pgscan_kswapd")));
    }

    #[test]
    fn lmk_and_state_keys_are_validated() {
        let c =
            Config::parse("f.toml", "memory_limit_mib = 512\nminfree_mib = [[200, 8], [900, 64.5]]\nstate_db = \"/tmp/x.db\"\n").unwrap();
        assert_eq!((c.memory_limit_mib, c.minfree_mib.clone(), c.state_save_s), (Some(512), vec![(200, 8.0), (900, 64.5)], 5));
        assert_eq!(Config::parse("f.toml", "").unwrap().minfree_mib[5], (950, 180.0));
        let e = Config::parse("f.toml", "minfree_mib = [[900, 8], [200, 64]]\n").unwrap_err().to_string();
        assert!(e.contains("minfree_mib[1]") && e.contains("ascending"), "{e}");
        assert!(Config::parse("f.toml", "minfree_mib = [[900, -1]]\n").unwrap_err().to_string().contains("minfree_mib[0]"));
        assert!(Config::parse("f.toml", "memory_limit_mib = 0\n").unwrap_err().to_string().contains("memory_limit_mib"));
        let e = Config::parse("f.toml", "memory_limit_mib = 256\nminfree_mib = [[0, 72], [900, 300]]\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:2: field `minfree_mib[1]`: level 300 MiB is not below memory_limit_mib (256)"), "{e}");
        assert!(Config::parse("f.toml", "state_save_s = 0\n").unwrap_err().to_string().contains("state_save_s"));
        assert_eq!(Config::parse("f.toml", "").unwrap().lmkd, LmkdMode::Minfree);
        assert_eq!(Config::parse("f.toml", "lmkd = \"psi\"\n").unwrap().lmkd, LmkdMode::Psi);
        let e = Config::parse("f.toml", "policy = \"ice\"\nlmkd = \"vmpressure\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:2") && e.contains("vmpressure") && e.contains("psi"), "{e}");
        let c = Config::parse("f.toml", "[[app]]\nname = \"a\"\nuid = 1\npriority = \"low\"\nstate_marker = \"/tmp/m\"\n").unwrap();
        assert_eq!((c.apps[0].priority, c.apps[0].state_marker.as_deref()), (PriorityClass::Low, Some(Path::new("/tmp/m"))));
        let e = Config::parse("f.toml", "[[app]]\nname = \"a\"\nuid = 1\npriority = \"urgent\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:4") && e.contains("urgent"), "{e}");
    }

    #[test]
    fn an_adopted_layout_names_apps_by_uid_only() {
        let c = Config::parse("f.toml", "adopt_layout = \".\"\n[[app]]\nname = \"camera\"\nuid = 10061\n").unwrap();
        assert_eq!(c.adopt_layout.as_deref(), Some("."));
        let e = Config::parse("f.toml", "adopt_layout = \"apps\"\n[[app]]\nname = \"cam\"\nexe = \"/bin/cam\"\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:4: field `app.exe`: app `cam`") && e.contains("by `uid` only"), "{e}");
        assert!(Config::parse("f.toml", "adopt_layout = \"/sys/fs/cgroup\"\n").unwrap_err().to_string().contains("adopt_layout"));
        assert!(Config::parse("f.toml", "adopt_layout = \"a/../b\"\n").unwrap_err().to_string().contains("adopt_layout"));
    }

    #[test]
    fn the_scanner_finds_new_processes_and_forgets_dead_ones() {
        let mut sc = ProcScanner::default();
        let before = sc.scan();
        assert!(before.iter().any(|p| p.pid == std::process::id() as i32), "sees this test process");
        // sleep sums its arguments: the tag is a second, tiny duration, so the child
        // lives 30 s (a non-numeric tag made it exit at once, and a scan then saw a zombie).
        let tag = format!("0.000{}", std::process::id());
        let mut child = std::process::Command::new("sleep").args(["30", &tag]).spawn().unwrap();
        let found = |v: &[ProcInfo]| v.iter().any(|p| p.pid == child.id() as i32 && p.cmdline.ends_with(&tag));
        // Read when first seen (perhaps before or inside its exec) and again at the next
        // scan; a read inside execve sees an empty cmdline and is taken again later, so
        // back-to-back scans find it once its exec is done.
        let seen = (0..200).any(|_| {
            let hit = found(&sc.scan());
            if !hit {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            hit
        });
        assert!(seen, "a process started after the first scan is found: {:?}", sc.known.get(&(child.id() as i32)));
        child.kill().unwrap();
        child.wait().unwrap();
        // Quiet scans skip listing /proc but still drop processes that are gone.
        for _ in 0..3 {
            let v = sc.scan();
            assert!(!v.iter().any(|p| p.pid == child.id() as i32));
        }
        assert!(Config::parse("f.toml", "sample_ms = 200\nidle_sample_ms = 100\n").unwrap_err().to_string().contains("idle_sample_ms"));
    }

    #[test]
    fn the_stock_killer_takes_the_highest_adj_then_the_largest_never_the_foreground() {
        let mib = |m: u64| Pages(m * 256);
        let levels = [(0, mib(72)), (200, mib(108)), (900, mib(144))];
        assert_eq!(lmk_level(&levels, mib(200)), None);
        assert_eq!(lmk_level(&levels, mib(120)), Some(900));
        assert_eq!(lmk_level(&levels, mib(100)), Some(200));
        assert_eq!(lmk_level(&levels, mib(10)), Some(0));
        let app = |i: u16, adj: i32, rss: u64| AppInfo { rss: mib(rss), ..AppInfo::ordinary(AppId(i), AppState::Cached, adj) };
        let mut apps = vec![app(0, 0, 500), app(1, 200, 300), app(2, 910, 50), app(3, 910, 80), app(4, 900, 400)];
        // Highest adj first (910), the larger of the two.
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(3)));
        apps[3].unkillable = true;
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(2)));
        apps[2].state = AppState::Dead;
        assert_eq!(stock_victim(&apps, Some(AppId(0)), 900), Some(AppId(4)));
        // Nothing at or above the level: no kill; the foreground never, even at adj 0.
        assert_eq!(stock_victim(&apps[..2], Some(AppId(0)), 900), None);
        assert_eq!(stock_victim(&apps[..1], Some(AppId(0)), 0), None);
        assert_eq!(stock_victim(&apps[..2], Some(AppId(0)), 0), Some(AppId(1)));
    }

    #[test]
    fn a_budget_is_the_memory_policies_see() {
        let sys = MemInfo { total: Pages(6_000_000), free: Pages(5_000_000), wmark_min: Pages(100), ..MemInfo::default() };
        let g = |usage: u64, inactive_file: u64| GroupMemory { usage, inactive_file, ..GroupMemory::default() };
        // 512 MiB budget, 400 MiB charged of which 30 MiB inactive file: 142 MiB free;
        // the LRU sizes are the group's.
        let grp = GroupMemory { active_anon: 300 << 20, inactive_anon: 50 << 20, active_file: 20 << 20, ..g(400 << 20, 30 << 20) };
        let m = budget_meminfo(MemInfo { active_anon: Pages(1), ..sys }, 512 << 20, &grp);
        assert_eq!((m.total, m.free, m.wmark_min), (Pages(512 * 256), Pages(142 * 256), Pages(100)));
        assert_eq!(
            (m.active_anon, m.inactive_anon, m.active_file, m.inactive_file),
            (Pages(300 * 256), Pages(50 * 256), Pages(20 * 256), Pages(30 * 256))
        );
        // Over the limit (charged can briefly exceed it): only the cache counts.
        assert_eq!(budget_meminfo(sys, 512 << 20, &g(600 << 20, 10 << 20)).free, Pages(10 * 256));
        // Never more than the machine has.
        let tight = MemInfo { free: Pages(256), ..sys };
        assert_eq!(budget_meminfo(tight, 512 << 20, &g(0, 0)).free, Pages(256));
    }

    #[test]
    fn rules_match_on_every_given_criterion() {
        let p =
            ProcInfo { pid: 10, exe: "/usr/bin/python3".into(), cmdline: "python3 app.py --x".into(), uid: 1000, comm: "python3".into() };
        let r = |exe: Option<&str>, cmd: Option<&str>, uid: Option<u32>| AppRule {
            name: "a".into(),
            exe: exe.map(Into::into),
            cmdline: cmd.map(Into::into),
            uid,
            perceptible: false,
            saves_context: false,
            state_marker: None,
            priority: PriorityClass::Medium,
        };
        assert!(r(Some("/usr/bin/python3"), Some("app.py"), Some(1000)).matches(&p));
        assert!(!r(Some("/usr/bin/python3"), Some("other.py"), None).matches(&p));
        assert!(!r(None, None, Some(0)).matches(&p));
    }

    #[test]
    fn the_guard_protects_init_floe_and_configured_processes() {
        let prot = vec!["sshd".to_string()];
        assert!(guard(1, "init", &prot, 50, 51).is_err());
        assert!(guard(50, "floe", &prot, 50, 51).is_err());
        assert!(guard(51, "floe", &prot, 50, 51).is_err());
        assert!(guard(77, "sshd", &prot, 50, 51).is_err());
        assert!(guard(77, "game", &prot, 50, 51).is_ok());
    }
}
