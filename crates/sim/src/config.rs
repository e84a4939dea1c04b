//! Devices, the app catalog and workloads: their TOML schema (data/README.md), loading
//! from the embedded data/ or from user files, and validation with file:line errors.

pub use floe_core::input::ConfigError;
use floe_core::input::{num, parse, Input};
use floe_core::PriorityClass;
use serde::Deserialize;
use std::fmt;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

fn embedded(path: &str) -> Option<&'static str> {
    EMBEDDED.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

/// Names of embedded files under `dir` (e.g. "devices"), without extension, sorted.
pub fn embedded_names(dir: &str) -> Vec<&'static str> {
    let prefix = format!("{dir}/");
    EMBEDDED.iter().filter_map(|(p, _)| p.strip_prefix(&prefix)).filter_map(|p| p.strip_suffix(".toml")).collect()
}

/// Every embedded data file, for checks over the data itself.
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    EMBEDDED
}

/// An input's text: its name in messages, the text, and whether it is embedded.
struct Source {
    file: String,
    src: String,
    embedded: bool,
}

/// Why an input could not be found.
enum Missing {
    /// Neither an embedded name nor a file.
    Unknown { path: String },
    /// A file that cannot be read.
    Unreadable { path: String, error: std::io::Error },
}

/// Finds `name_or_path`: an embedded name under `dir`, or a path to a TOML file, a
/// relative one taken from the directory `base` (empty: the current one).
fn find_source(dir: &str, name_or_path: &str, base: &Path) -> Result<Source, Missing> {
    if let Some(src) = embedded(&format!("{dir}/{name_or_path}.toml")) {
        return Ok(Source { file: format!("data/{dir}/{name_or_path}.toml"), src: src.to_string(), embedded: true });
    }
    let p = base.join(name_or_path);
    let path = p.display().to_string();
    if p.exists() || name_or_path.contains('/') || name_or_path.ends_with(".toml") {
        return match std::fs::read_to_string(&p) {
            Ok(src) => Ok(Source { file: path, src, embedded: false }),
            Err(error) => Err(Missing::Unreadable { path, error }),
        };
    }
    Err(Missing::Unknown { path })
}

/// Loads `name_or_path`: an embedded name under `dir`, or a path to a TOML file.
fn load_source(dir: &str, what: &str, name_or_path: &str) -> Result<Source, ConfigError> {
    find_source(dir, name_or_path, Path::new("")).map_err(|m| {
        let message = match m {
            Missing::Unknown { .. } => {
                format!("no {what} named `{name_or_path}` (known: {}) and no such file", embedded_names(dir).join(", "))
            }
            Missing::Unreadable { error, .. } => format!("cannot read {what} file: {error}"),
        };
        ConfigError { file: name_or_path.to_string(), line: None, field: None, message }
    })
}

/// Largest size of RAM, flash swap or an SL2 in MiB: 1 TiB.
pub(crate) const MAX_MIB: f64 = 1_048_576.0;
pub(crate) const MAX_MIB_WHY: &str = "1 TiB, more than any phone has";
/// zram's disksize (uncompressed pages) at most this many times RAM.
pub(crate) const ZRAM_MAX_PER_RAM: f64 = 2.0;
pub(crate) const ZRAM_MAX_WHY: &str =
    "zram.rst: \"there is little point creating a zram of greater than twice the size of memory since we expect a 2:1 compression ratio\"";
/// Highest compression ratio: zsmalloc's smallest object is 32 bytes (ZS_MIN_ALLOC_SIZE),
/// so no page takes less than 4096 / 32 of its size; the lowest is 1, as zram stores a
/// page that does not compress as it is.
const MAX_ZRAM_RATIO: f64 = 128.0;
const RATIO_WHY: &str = "uncompressed / compressed: zram stores a page that does not compress as it is, and zsmalloc's smallest object is 32 of a page's 4096 bytes";
/// Slowest compression or decompression of one page: 10 ms, a thousand times lz4's.
const MAX_CODEC_US: f64 = 10_000.0;
const CODEC_WHY: &str = "10 ms, a thousand times lz4 on a phone's core";
/// Slowest 4 KiB flash access: a second.
const MAX_FLASH_US: f64 = 1_000_000.0;
const FLASH_US_WHY: &str = "a second; the slowest phone flash takes milliseconds";
/// Slowest sequential flash bandwidth: 1 MiB/s.
const MIN_FLASH_MIB_S: f64 = 1.0;
const FLASH_MIB_S_WHY: &str = "from 1 MiB/s, slower than any phone's flash, to 1 TiB/s";

/// Why a device's, app's or workload's `name` cannot be used, if it cannot: names are
/// what the command line, the tables and the JSON refer to things by, and lists of them
/// are written comma-separated (`bg_set`), so they are words of letters, digits and
/// `-`, `_`, `.`, `+`.
fn name_rule(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".into());
    }
    let bad = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "-_.+".contains(*c)))?;
    Some(format!("`{name}` has `{bad}`; a name is letters, digits and - _ . +"))
}

/// The zone watermarks, MiB (min, low, high), that a 4.9 Android kernel sets on a
/// device with `ram_mib` of RAM and a `display` of (width, height) pixels, with
/// `vm.watermark_scale_factor` `wsf` (per 10,000 of memory):
/// - min_free_kbytes = int_sqrt(lowmem_kbytes x 16), within 128..65,536
///   (mm/page_alloc.c, init_per_zone_wmark_min);
/// - Android's ProcessList.updateOomLevels writes extra_free_kbytes = width x height
///   x 4 x 3 / 1024, three 32-bit screen buffers (AOSP frameworks/base, Android 9/10);
/// - low = min + extra + gap, high = min + extra + 2 x gap, gap = max(min / 4,
///   memory x wsf / 10,000) (__setup_per_zone_wmarks with Android's extra_free_kbytes
///   patch; Pixel 3 kernel GrapheneOS-Archive/kernel_google_crosshatch 13cc990b).
///
/// Memory is taken as all of RAM (the kernel's lowmem and managed pages are somewhat
/// less), so the watermarks come out a few percent high at most.
pub fn linux_watermarks_mib(ram_mib: f64, display: Option<(u32, u32)>, wsf: u32) -> (f64, f64, f64) {
    let kb = (ram_mib * 1024.0) as u64;
    let min_kb = ((kb * 16) as f64).sqrt().floor().clamp(128.0, 65_536.0);
    let extra_kb = display.map_or(0, |(w, h)| u64::from(w) * u64::from(h) * 4 * 3 / 1024) as f64;
    let gap_kb = (min_kb / 4.0).floor().max((kb * u64::from(wsf) / 10_000) as f64);
    let mib = |k: f64| k / 1024.0;
    (mib(min_kb), mib(min_kb + extra_kb + gap_kb), mib(min_kb + extra_kb + 2.0 * gap_kb))
}

/// Largest render-thread wait a reclaimed page may cost, µs (a vsync period: frames
/// pay at most one each).
const MAX_FRAME_BLOCK_US: f64 = 16_667.0;
/// The most high-order kswapd wakeups a minute a device may give: one a second, past
/// which kswapd would hardly sleep.
const MAX_HIGH_ORDER_PER_MIN: f64 = 60.0;

/// Largest display side accepted, pixels (an 8K panel is 7,680 wide).
const MAX_DISPLAY_PX: u32 = 16_384;

/// Memory of a device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    pub ram_mib: f64,
    pub app_mem_mib: f64,
    pub watermark_min_mib: f64,
    pub watermark_low_mib: f64,
    pub watermark_high_mib: f64,
    /// `[oom_adj, minfree_mib]` pairs, ascending adj.
    pub minfree: Vec<(i32, f64)>,
    /// Resident memory every app process maps from Zygote and shares with the system:
    /// counted in the RSS an app shows (as Linux counts shared pages), never freed by
    /// killing it. The model keeps it in the system's memory. Default 0.
    #[serde(default)]
    pub shared_rss_mib: f64,
    /// The high-water mark the vendor tuned for a user-space memory manager apart from
    /// the kernel's watermarks (Ice Table 4's H_wm); absent: none.
    #[serde(default)]
    pub tuned_high_mib: Option<f64>,
    /// The display's pixels, width and height: Android asks the kernel to keep three
    /// screen buffers' worth free beyond its watermarks (ProcessList's
    /// extra_free_kbytes; see [`linux_watermarks_mib`]). Absent: not stated.
    #[serde(default)]
    pub display_px: Option<(u32, u32)>,
    /// Which low-memory killer the device runs when a policy keeps Android's: the
    /// minfree table (the in-kernel driver, or lmkd with `ro.lmk.use_minfree_levels`),
    /// or Android 10 lmkd's PSI mode. Default `minfree`.
    #[serde(default)]
    pub lmkd: floe_core::LmkdMode,
    /// How ActivityManager spreads cached apps over oom_adj levels: `per-app` (Android
    /// 10 and later, the default) or `shared-slots` (Android 4.3 to 9: three levels,
    /// 900 to 906, shared by a third of the cached apps each).
    #[serde(default)]
    pub cached_adj: floe_core::CachedAdj,
    /// How long the foreground's render thread is blocked for each page reclaimed while
    /// it renders, µs: the frame tasks Ice's Systrace saw blocked behind non-preemptive
    /// reclaim (Ice §2.2.3, its [32]). Frames pay it at most a vsync period each (see
    /// docs/MODEL.md, "Frames"). Absent: no frame waits for reclaim it does not do itself.
    #[serde(default)]
    pub reclaim_frame_block_us: Option<f64>,
    /// The kernel runs Huawei's RCC thread, which compresses anonymous pages into zram
    /// while the CPU is mostly idle and memory short (see the engine's `rcc` module).
    /// Default false.
    #[serde(default)]
    pub rcc: bool,
    /// How many times a minute an allocation of order 3 that may not reclaim directly
    /// (the network stack's page fragments) finds no free block of its order and wakes
    /// kswapd, which then reclaims about the inactive lists' 1/4096th, at least 16
    /// pages, however much memory is free (the engine's `high_order` module). Absent:
    /// never (no fragmentation modelled).
    #[serde(default)]
    pub high_order_wakeups_per_min: Option<f64>,
}

/// zram (and zswap pool) configuration of a device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ZramSpec {
    pub size_mib: f64,
    pub algorithm: String,
    pub ratio: f64,
    pub compress_us_per_page: f64,
    pub decompress_us_per_page: f64,
}

/// The flash device.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlashSpec {
    pub kind: String,
    pub read_4k_us: f64,
    pub write_4k_us: f64,
    pub seq_read_mib_s: f64,
    pub seq_write_mib_s: f64,
    /// Size of the swap partition or file on flash, used by flash swap, zswap's
    /// writeback and SEAL's SL2 (2048 MiB when the device does not say).
    #[serde(default)]
    pub swap_mib: Option<f64>,
    /// `vm.page-cluster`: a swap-in from flash reads the aligned 2^page_cluster swap
    /// slots around the faulting one (swapin_readahead); Linux's default is 3
    /// ([`DEFAULT_PAGE_CLUSTER`]), used when the device does not say.
    #[serde(default)]
    pub page_cluster: Option<u32>,
    /// How the kernel reads ahead around a swap-in from flash (absent: `adaptive`).
    #[serde(default)]
    pub swap_readahead: Option<SwapReadahead>,
}

/// The kernel's swap readahead around a swap-in from flash (mm/swap_state.c,
/// swapin_readahead). zram takes no readahead on the seeds' Android kernels (their
/// `is_swap_fast` check), and SEAL's SL2 is read page by page.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SwapReadahead {
    /// Linux 3.x before swapin_nr_pages (the Nexus 5's 3.4): the aligned
    /// 2^page_cluster slots around every swap-in.
    Cluster,
    /// Linux 4.x (swapin_nr_pages): the window grows with readahead hits, falls to the
    /// faulting page alone when faults stop being adjacent, and halves at most per
    /// swap-in, up to 2^page_cluster.
    #[default]
    Adaptive,
}

/// Linux's `page_cluster` on any device with more than 16 MiB of RAM (mm/swap.c,
/// swap_setup).
pub const DEFAULT_PAGE_CLUSTER: u32 = 3;
/// Largest `flash.page_cluster` accepted: 32 pages (128 KiB) a swap-in.
const MAX_PAGE_CLUSTER: u32 = 5;
/// Largest `cpu.exit_us_per_page` accepted: 200 us a page, a GiB's exit in 52 s of a
/// core, a hundred times the slowest phone core's plausible cost.
const MAX_EXIT_US_PER_PAGE: f64 = 200.0;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub cores: u32,
    /// `cpu.shares` of Android's background cgroup (bg_non_interactive, Android <= 8),
    /// the weight of all cached apps together; absent: each thread its own weight.
    #[serde(default)]
    pub bg_shares: Option<u32>,
    /// Cores of Android's `background` cpuset (Android >= 7 with cpusets); absent: all.
    /// On a big.LITTLE device they are little cores.
    #[serde(default)]
    pub bg_cores: Option<u32>,
    /// big.LITTLE: how many of the cores are big ones; absent: all cores are equal.
    #[serde(default)]
    pub big_cores: Option<u32>,
    /// big.LITTLE: a little core's capacity against a big one's (per-MHz performance
    /// times top frequency, as the kernel's capacity-dmips-mhz scales it).
    #[serde(default)]
    pub little_capacity: Option<f64>,
    /// The CPU the system's own threads (kernel and framework) take with no app
    /// running, percent of all cores' time (absent: none). It runs as one thread per
    /// core waking in bursts.
    #[serde(default)]
    pub system_load_pct: Option<f64>,
    /// CPU time, microseconds of one core, a killed process's exit takes for each page
    /// it maps (exit_mmap unmapping and freeing them); absent: a killed app's memory is
    /// free at once. The exit runs as a job of the victim, which keeps its pages until
    /// the job ends.
    #[serde(default)]
    pub exit_us_per_page: Option<f64>,
}

/// The system's own processes on the LRU: system_server, SurfaceFlinger, SystemUI,
/// the launcher and the persistent services. Their pages come out of the reserve
/// `ram_mib - app_mem_mib`, so they count as the system's memory at start, but they
/// are reclaimed and refault like any app's. The system's threads (the device's
/// `cpu.system_load_pct`) touch their hot sets as their CPU work is served.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    /// Pages the system's threads touch per second of their CPU work, MiB: the pace
    /// at which they walk the processes' hot sets.
    pub touch_mib_per_cpu_s: f64,
    pub process: Vec<SystemProcess>,
}

/// One system process (`[[system.process]]`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SystemProcess {
    pub name: String,
    /// Its oom_score_adj (ProcessList: native -1000, system -900, persistent -800,
    /// home 600). Processes below 0 are never killed; the LMK never takes one in
    /// floe (which leaves the home app's deaths out).
    pub adj: i32,
    pub anon_mib: f64,
    pub file_mib: f64,
    /// The anonymous and file pages its threads keep touching (the rest only ages).
    pub hot_anon_mib: f64,
    pub hot_file_mib: f64,
}

/// A device profile (data/devices/NAME.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub name: String,
    pub description: String,
    pub source: String,
    pub memory: MemorySpec,
    pub zram: ZramSpec,
    pub flash: FlashSpec,
    pub cpu: CpuSpec,
    /// The system's own processes whose pages are on the LRU (`[system]`); absent:
    /// all of the system's memory is the fixed reserve `ram_mib - app_mem_mib`.
    #[serde(default)]
    pub system: Option<SystemSpec>,
    /// Where the device was read from, to locate problems found when a run sets it
    /// against a workload.
    #[serde(skip)]
    origin: Origin,
}

impl Device {
    /// Loads an embedded device by name, or a device file by path.
    pub fn load(name_or_path: &str) -> Result<Device, ConfigError> {
        let s = load_source("devices", "device", name_or_path)?;
        Device::parse(&s.file, &s.src)
    }

    /// Parses and validates a device file's text; `file` names it in errors.
    pub fn parse(file: &str, src: &str) -> Result<Device, ConfigError> {
        let input = Input::new(file, src);
        let mut d: Device = parse(&input)?;
        d.validate(&input)?;
        d.origin = Origin { file: file.to_string(), src: src.into(), embedded: false };
        Ok(d)
    }

    /// The device's file and text, to locate problems found after loading it.
    fn input(&self) -> Input<'_> {
        let file = if self.origin.file.is_empty() { &self.name } else { &self.origin.file };
        Input::new(file, &self.origin.src)
    }

    /// A balloon must be smaller than this (MiB): the memory left to apps less twice
    /// the high watermark, the least memory a run leaves its apps.
    pub fn balloon_room_mib(&self) -> f64 {
        self.memory.app_mem_mib - 2.0 * self.memory.watermark_high_mib
    }

    /// Whether a balloon of `mib` fits this device (the rule [`Device::balloon_rule`]
    /// states).
    pub fn balloon_fits(&self, mib: f64) -> bool {
        mib.is_finite() && mib >= 0.0 && mib < self.balloon_room_mib()
    }

    /// What a balloon must be on this device, for messages.
    pub fn balloon_rule(&self) -> String {
        format!(
            "a balloon must be at least 0 and below {:.0} MiB (memory left to apps on {} less twice its high watermark)",
            self.balloon_room_mib(),
            self.name
        )
    }

    fn validate(&self, input: &Input) -> Result<(), ConfigError> {
        let m = &self.memory;
        let err = |k: &str, msg: String| Err(input.error(k, msg));
        name_rule(&self.name).map_or(Ok(()), |why| err("name", why))?;
        if !(m.ram_mib.is_finite() && m.ram_mib > 0.0 && m.ram_mib <= MAX_MIB) {
            return err(
                "memory.ram_mib",
                format!("must be a positive number of MiB up to {MAX_MIB} ({MAX_MIB_WHY}), got {}", num(m.ram_mib)),
            );
        }
        if !(m.app_mem_mib.is_finite() && m.app_mem_mib > 0.0) {
            return err("memory.app_mem_mib", format!("must be a positive number, got {}", num(m.app_mem_mib)));
        }
        if m.app_mem_mib > m.ram_mib {
            return err(
                "memory.app_mem_mib",
                format!("{} MiB left to apps is more than the {} MiB of RAM", num(m.app_mem_mib), num(m.ram_mib)),
            );
        }
        let (min, low, high) = (m.watermark_min_mib, m.watermark_low_mib, m.watermark_high_mib);
        for (k, v) in [("memory.watermark_min_mib", min), ("memory.watermark_low_mib", low), ("memory.watermark_high_mib", high)] {
            if !(v.is_finite() && v >= 0.0) {
                return err(k, format!("must be zero or more, got {}", num(v)));
            }
        }
        if !(min <= low && low <= high) {
            // Name the watermark out of order with both others when there is one (the
            // likely typo), else the middle one; the message gives all three.
            let k = if high < low && high < min {
                "memory.watermark_high_mib"
            } else if min > low && min > high {
                "memory.watermark_min_mib"
            } else {
                "memory.watermark_low_mib"
            };
            return err(
                k,
                format!("watermarks must satisfy min <= low <= high, got min {}, low {}, high {} MiB", num(min), num(low), num(high)),
            );
        }
        if high * 2.0 > m.app_mem_mib {
            return err(
                "memory.watermark_high_mib",
                format!("the high watermark ({} MiB) is more than half of app memory ({} MiB)", num(high), num(m.app_mem_mib)),
            );
        }
        if let Some(v) = m.reclaim_frame_block_us.filter(|v| !(v.is_finite() && (0.0..=MAX_FRAME_BLOCK_US).contains(v))) {
            return err(
                "memory.reclaim_frame_block_us",
                format!("must be 0..={MAX_FRAME_BLOCK_US} µs of a render thread's wait a page reclaimed, got {}", num(v)),
            );
        }
        if let Some(v) = m.high_order_wakeups_per_min.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= MAX_HIGH_ORDER_PER_MIN)) {
            return err(
                "memory.high_order_wakeups_per_min",
                format!("must be above 0 and at most {MAX_HIGH_ORDER_PER_MIN} wakeups a minute, got {}", num(v)),
            );
        }
        if let Some(v) = m.tuned_high_mib.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= m.app_mem_mib)) {
            return err(
                "memory.tuned_high_mib",
                format!("must be a positive number of MiB up to app memory ({} MiB), got {}", num(m.app_mem_mib), num(v)),
            );
        }
        if let Some((w, h)) = m.display_px.filter(|&(w, h)| !((1..=MAX_DISPLAY_PX).contains(&w) && (1..=MAX_DISPLAY_PX).contains(&h))) {
            return err("memory.display_px", format!("width and height must be 1..={MAX_DISPLAY_PX} pixels, got [{w}, {h}]"));
        }
        for (i, &(adj, mib)) in m.minfree.iter().enumerate() {
            let k = format!("memory.minfree[{i}]");
            if !(-1000..=1000).contains(&adj) {
                return err(&k, format!("oom_adj {adj} is outside the kernel's -1000..=1000 (oom_score_adj)"));
            }
            if i > 0 && m.minfree[i - 1].0 >= adj {
                return err(&k, "minfree must list [oom_adj, MiB] pairs with strictly ascending adj".into());
            }
            if !(mib.is_finite() && mib >= 0.0) {
                return err(&k, format!("minfree levels must be MiB >= 0, got {}", num(mib)));
            }
            if mib > m.app_mem_mib {
                return err(
                    &k,
                    format!(
                        "level {} MiB is more than the {} MiB left to apps (app_mem_mib): free memory never reaches it, so the LMK would kill at every check",
                        num(mib),
                        num(m.app_mem_mib)
                    ),
                );
            }
        }
        let system = m.ram_mib - m.app_mem_mib;
        if !(m.shared_rss_mib.is_finite() && m.shared_rss_mib >= 0.0 && m.shared_rss_mib <= system) {
            return err(
                "memory.shared_rss_mib",
                format!(
                    "must be 0..={} MiB (the system's share of RAM, ram_mib - app_mem_mib, where shared pages live), got {}",
                    num(system),
                    num(m.shared_rss_mib)
                ),
            );
        }
        if let Some(sys) = &self.system {
            if !(sys.touch_mib_per_cpu_s.is_finite() && sys.touch_mib_per_cpu_s >= 0.0 && sys.touch_mib_per_cpu_s <= MAX_MIB) {
                return err(
                    "system.touch_mib_per_cpu_s",
                    format!("must be 0..={MAX_MIB} MiB a second of CPU, got {}", num(sys.touch_mib_per_cpu_s)),
                );
            }
            if sys.process.is_empty() {
                return err("system.process", "a [system] table lists at least one [[system.process]]".into());
            }
            for (i, p) in sys.process.iter().enumerate() {
                let at = |f: &str| format!("system.process[{i}].{f}");
                name_rule(&p.name).map_or(Ok(()), |why| err(&at("name"), why))?;
                if sys.process[..i].iter().any(|q| q.name == p.name) {
                    return err(&at("name"), format!("system process `{}` is listed twice", p.name));
                }
                if !(-1000..=1000).contains(&p.adj) {
                    return err(&at("adj"), format!("oom_adj {} is outside the kernel's -1000..=1000 (oom_score_adj)", p.adj));
                }
                for (f, v) in [("anon_mib", p.anon_mib), ("file_mib", p.file_mib)] {
                    if !(v.is_finite() && v >= 0.0 && v <= m.ram_mib) {
                        return err(&at(f), format!("must be 0..={} MiB (the RAM), got {}", num(m.ram_mib), num(v)));
                    }
                }
                for (f, v, of) in [("hot_anon_mib", p.hot_anon_mib, p.anon_mib), ("hot_file_mib", p.hot_file_mib, p.file_mib)] {
                    if !(v.is_finite() && v >= 0.0 && v <= of) {
                        return err(&at(f), format!("must be 0..={} MiB (the process's pages of that kind), got {}", num(of), num(v)));
                    }
                }
            }
            // Their pages come out of the system's reserve: blame the process whose
            // pages overflow it.
            let reserve = m.ram_mib - m.app_mem_mib - m.shared_rss_mib;
            let mut all = 0.0;
            for (i, p) in sys.process.iter().enumerate() {
                all += p.anon_mib + p.file_mib;
                if all > reserve {
                    return err(
                        &format!("system.process[{i}].anon_mib"),
                        format!(
                            "with `{}` the system processes hold {} MiB, more than the system's {} MiB (ram_mib - app_mem_mib - shared_rss_mib) they come from",
                            p.name,
                            num(all),
                            num(reserve)
                        ),
                    );
                }
            }
        }
        let z = &self.zram;
        let zram_max = ZRAM_MAX_PER_RAM * m.ram_mib;
        if !(z.size_mib.is_finite() && z.size_mib >= 0.0 && z.size_mib <= zram_max) {
            return err("zram.size_mib", format!("must be 0..={zram_max} MiB, twice the RAM ({ZRAM_MAX_WHY}), got {}", num(z.size_mib)));
        }
        if !(z.ratio.is_finite() && (1.0..=MAX_ZRAM_RATIO).contains(&z.ratio)) {
            return err("zram.ratio", format!("must be 1..={MAX_ZRAM_RATIO} ({RATIO_WHY}), got {}", num(z.ratio)));
        }
        for (k, v) in [("zram.compress_us_per_page", z.compress_us_per_page), ("zram.decompress_us_per_page", z.decompress_us_per_page)] {
            if !(v.is_finite() && (0.0..=MAX_CODEC_US).contains(&v)) {
                return err(k, format!("must be 0..={MAX_CODEC_US} us ({CODEC_WHY}), got {}", num(v)));
            }
        }
        let f = &self.flash;
        for (k, v) in [("flash.read_4k_us", f.read_4k_us), ("flash.write_4k_us", f.write_4k_us)] {
            if !(v.is_finite() && v > 0.0 && v <= MAX_FLASH_US) {
                return err(k, format!("must be a positive number of us up to {MAX_FLASH_US} ({FLASH_US_WHY}), got {}", num(v)));
            }
        }
        for (k, v) in [("flash.seq_read_mib_s", f.seq_read_mib_s), ("flash.seq_write_mib_s", f.seq_write_mib_s)] {
            if !(v.is_finite() && (MIN_FLASH_MIB_S..=MAX_MIB).contains(&v)) {
                return err(k, format!("must be {MIN_FLASH_MIB_S}..={MAX_MIB} MiB/s ({FLASH_MIB_S_WHY}), got {}", num(v)));
            }
        }
        if let Some(v) = f.swap_mib.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= MAX_MIB)) {
            return err("flash.swap_mib", format!("must be a positive number of MiB up to {MAX_MIB} ({MAX_MIB_WHY}), got {}", num(v)));
        }
        if let Some(v) = f.page_cluster.filter(|v| *v > MAX_PAGE_CLUSTER) {
            return err(
                "flash.page_cluster",
                format!(
                    "must be 0..={MAX_PAGE_CLUSTER} (vm.page-cluster: a swap-in reads 2^page_cluster pages, here up to 128 KiB), got {v}"
                ),
            );
        }
        if self.cpu.cores == 0 || self.cpu.cores > 64 {
            return err("cpu.cores", format!("must be 1..=64, got {}", self.cpu.cores));
        }
        if let Some(w) = self.cpu.bg_shares.filter(|w| !(2..=262_144).contains(w)) {
            return err("cpu.bg_shares", format!("must be 2..=262144 (cgroup v1 cpu.shares), got {w}"));
        }
        if let Some(c) = self.cpu.bg_cores.filter(|&c| c == 0 || c > self.cpu.cores) {
            return err("cpu.bg_cores", format!("must be 1..=cores ({}), got {c}", self.cpu.cores));
        }
        if let Some(c) = self.cpu.big_cores.filter(|&c| c == 0 || c > self.cpu.cores) {
            return err("cpu.big_cores", format!("must be 1..=cores ({}), got {c}", self.cpu.cores));
        }
        if let Some(v) = self.cpu.little_capacity.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1.0)) {
            return err("cpu.little_capacity", format!("must be above 0 and at most 1 (a big core's), got {}", num(v)));
        }
        if self.cpu.big_cores.is_some() != self.cpu.little_capacity.is_some() {
            let k = if self.cpu.big_cores.is_some() { "cpu.big_cores" } else { "cpu.little_capacity" };
            return err(k, "big_cores and little_capacity go together: give both or neither".into());
        }
        if let Some(v) = self.cpu.system_load_pct.filter(|v| !(v.is_finite() && (0.0..100.0).contains(v))) {
            return err("cpu.system_load_pct", format!("must be 0..100 percent of all cores, got {}", num(v)));
        }
        if let Some(v) = self.cpu.exit_us_per_page.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= MAX_EXIT_US_PER_PAGE)) {
            return err(
                "cpu.exit_us_per_page",
                format!("must be above 0 and at most {MAX_EXIT_US_PER_PAGE} us a page (a GiB's exit in about a minute), got {}", num(v)),
            );
        }
        Ok(())
    }
}

/// Largest footprint (and part of one) of an app: 16 GiB.
const MAX_APP_MIB: f64 = 16_384.0;
const APP_MIB_WHY: &str = "MiB; 16 GiB, more than a phone leaves any app";
/// Longest launch, and longest CPU burst of a background wakeup: a minute.
const MAX_LAUNCH_MS: f64 = 60_000.0;
const LAUNCH_MS_WHY: &str = "ms; a minute, more than the tens of seconds a 3D game takes to start (SmartLMK Sec. 1)";
const BG_CPU_MS_WHY: &str = "ms of CPU per wakeup; a minute";
/// Most CPU one UI frame may take: a second.
const MAX_FRAME_CPU_MS: f64 = 1_000.0;
const FRAME_CPU_MS_WHY: &str = "ms; a second, sixty frame periods at 60 Hz";
/// Most a frame's work may spread: a standard deviation of twice the mean.
const MAX_FRAME_CPU_CV: f64 = 2.0;
const FRAME_CPU_CV_WHY: &str = "a standard deviation of twice the mean frame; a rendering loop's frames vary less";
/// Background wakeups come at most once a second and at least once a day.
const MIN_BG_PERIOD_S: f64 = 1.0;
const MAX_BG_PERIOD_S: f64 = 86_400.0;
const BG_PERIOD_WHY: &str = "a cached app wakes at most once a second and at least once a day";
/// Most apps a catalog may hold: app ids are 16-bit.
const MAX_APPS: usize = u16::MAX as usize;

/// One app of the catalog (data/apps.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub name: String,
    pub package: String,
    pub category: String,
    pub anon_mib: f64,
    pub file_mib: f64,
    pub launch_anon_mib: f64,
    pub launch_file_mib: f64,
    pub ws_anon_mib: f64,
    pub ws_file_mib: f64,
    pub cold_launch_ms: f64,
    pub warm_launch_ms: f64,
    pub frame_cpu_ms: f64,
    pub bg_period_s: f64,
    pub bg_cpu_ms: f64,
    pub bg_touch_mib: f64,
    pub saves_context: bool,
    pub priority_class: PriorityClass,
    pub perceptible: bool,
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    app: Vec<AppSpec>,
}

/// The app catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct Catalog {
    pub apps: Vec<AppSpec>,
    /// The file the catalog was read from; `None` for the embedded data/apps.toml.
    file: Option<String>,
}

impl Catalog {
    /// The embedded catalog (data/apps.toml).
    pub fn embedded() -> Result<Catalog, ConfigError> {
        let src = embedded("apps.toml").ok_or_else(|| ConfigError {
            file: "data/apps.toml".into(),
            line: None,
            field: None,
            message: "not embedded in this build".into(),
        })?;
        Ok(Catalog { file: None, ..Catalog::parse("data/apps.toml", src)? })
    }

    /// Loads a catalog file.
    pub fn load(path: &str) -> Result<Catalog, ConfigError> {
        let src = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.into(),
            line: None,
            field: None,
            message: format!("cannot read app catalog: {e}"),
        })?;
        Catalog::parse(path, &src)
    }

    /// Parses and validates a catalog's text; `file` names it in errors.
    pub fn parse(file: &str, src: &str) -> Result<Catalog, ConfigError> {
        let input = Input::new(file, src);
        let c: CatalogFile = parse(&input)?;
        for (i, a) in c.app.iter().enumerate() {
            // Each problem is located at its key within this app's [[app]] table.
            let err = |k: &str, msg: String| Err(input.error_at(&format!("app[{i}].{k}"), k, format!("app `{}`: {msg}", a.name)));
            if let Some(why) = name_rule(&a.name) {
                return Err(input.error_at(&format!("app[{i}].name"), "name", why));
            }
            if c.app[..i].iter().any(|o| o.name == a.name) {
                return err("name", "defined twice".into());
            }
            // Each number's upper limit and why; the parts of a footprint are bounded by
            // the footprint below.
            let nums = [
                ("anon_mib", a.anon_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("file_mib", a.file_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("launch_anon_mib", a.launch_anon_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("launch_file_mib", a.launch_file_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("ws_anon_mib", a.ws_anon_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("ws_file_mib", a.ws_file_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("bg_touch_mib", a.bg_touch_mib, MAX_APP_MIB, APP_MIB_WHY),
                ("cold_launch_ms", a.cold_launch_ms, MAX_LAUNCH_MS, LAUNCH_MS_WHY),
                ("warm_launch_ms", a.warm_launch_ms, MAX_LAUNCH_MS, LAUNCH_MS_WHY),
                ("frame_cpu_ms", a.frame_cpu_ms, MAX_FRAME_CPU_MS, FRAME_CPU_MS_WHY),
                ("bg_cpu_ms", a.bg_cpu_ms, MAX_LAUNCH_MS, BG_CPU_MS_WHY),
            ];
            for (k, v, max, why) in nums {
                if !(v.is_finite() && (0.0..=max).contains(&v)) {
                    return err(k, format!("must be 0..={max} ({why}), got {}", num(v)));
                }
            }
            if !(a.bg_period_s.is_finite() && (MIN_BG_PERIOD_S..=MAX_BG_PERIOD_S).contains(&a.bg_period_s)) {
                return err(
                    "bg_period_s",
                    format!("must be {MIN_BG_PERIOD_S}..={MAX_BG_PERIOD_S} s ({BG_PERIOD_WHY}), got {}", num(a.bg_period_s)),
                );
            }
            let parts = [
                ("launch_anon_mib", a.launch_anon_mib, "anon_mib", a.anon_mib),
                ("ws_anon_mib", a.ws_anon_mib, "anon_mib", a.anon_mib),
                ("bg_touch_mib", a.bg_touch_mib, "anon_mib", a.anon_mib),
                ("launch_file_mib", a.launch_file_mib, "file_mib", a.file_mib),
                ("ws_file_mib", a.ws_file_mib, "file_mib", a.file_mib),
            ];
            for (k, v, whole, of) in parts {
                if v > of {
                    return err(k, format!("{k} ({v} MiB) must not exceed {whole} ({of} MiB)"));
                }
            }
            if a.anon_mib + a.file_mib <= 0.0 {
                return err("anon_mib", "an app needs some memory".into());
            }
        }
        if c.app.len() > MAX_APPS {
            return Err(input.error_at(
                &format!("app[{MAX_APPS}]"),
                "app",
                format!("more than {MAX_APPS} apps (the simulator's app ids are 16-bit)"),
            ));
        }
        Ok(Catalog { apps: c.app, file: Some(file.to_string()) })
    }

    pub fn get(&self, name: &str) -> Option<&AppSpec> {
        self.apps.iter().find(|a| a.name == name)
    }
}

/// Longest simulated time a workload may ask for (its uses, idle times and background
/// apps' uses): a week.
pub const MAX_RUN_S: f64 = 7.0 * 86_400.0;
const MAX_RUN_WHY: &str = "a week; a simulated day takes seconds of wall time per policy";
/// Most launches a workload may play.
pub const MAX_LAUNCHES: usize = 100_000;
const LAUNCHES_WHY: &str = "one every six seconds for a week";

/// Apps cached before the measured part of a workload.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Background {
    pub pool: Vec<String>,
    pub count: usize,
    pub use_s: f64,
    /// Apps cached in this order instead of a draw from `pool`, unless a run asks for
    /// a draw (a paper's fixed set, such as the one behind Ice's Fig. 1).
    #[serde(default)]
    pub fixed: Vec<String>,
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

/// A scenario's foreground activity (a workload's `[foreground]` table): the frame work
/// and the memory churn of the measured apps while they render. Rates are per second
/// at 60 frames a second: each rendered frame allocates a sixtieth of
/// `heap_alloc_mib_s` of fresh heap pages (an app that renders fewer frames does less
/// work and allocates less); once `heap_free_mib` has been
/// allocated since the last collection, the garbage collector returns those pages to
/// the kernel (ART's concurrent copying collector releases the regions it evacuated).
/// An I/O thread reads a sixtieth of `read_mib_s` of content a frame through the page
/// cache, walking a content file of `content_mib` in order.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Foreground {
    /// CPU work of one frame in this scenario, ms (the catalog's `frame_cpu_ms` is
    /// the app's ordinary UI frame).
    #[serde(default)]
    pub frame_cpu_ms: Option<f64>,
    /// Coefficient of variation of one frame's CPU work in this scenario (default: the
    /// engine's `FRAME_CPU_CV`).
    #[serde(default)]
    pub frame_cpu_cv: Option<f64>,
    /// Fresh heap pages allocated while rendering, MiB per second.
    #[serde(default)]
    pub heap_alloc_mib_s: f64,
    /// Heap allocated between two collections, MiB.
    #[serde(default)]
    pub heap_free_mib: f64,
    /// Content read through the page cache while rendering, MiB per second.
    #[serde(default)]
    pub read_mib_s: f64,
    /// Size of the content the reads walk, MiB (read again from its start once done).
    #[serde(default)]
    pub content_mib: f64,
    /// Camera, codec and graphics buffers the scenario holds while the app renders,
    /// MiB: allocated from free memory over its first second of frames (ION / dma-buf
    /// memory, off the LRU, which reclaim cannot take), freed when it leaves the
    /// foreground.
    #[serde(default)]
    pub buffers_mib: f64,
}

/// Most a scenario allocates or reads a second: 1 GiB, more than a phone's memory
/// bandwidth leaves any app to fault in fresh pages.
const MAX_CHURN_MIB_S: f64 = 1024.0;
const CHURN_WHY: &str = "MiB/s; 1 GiB a second is more than any app faults in";

impl Foreground {
    fn validate(&self, input: &Input) -> Result<(), ConfigError> {
        let err = |k: &str, msg: String| Err(input.error(k, msg));
        if let Some(v) = self.frame_cpu_ms.filter(|v| !(v.is_finite() && *v >= 0.0 && *v <= MAX_FRAME_CPU_MS)) {
            return err("foreground.frame_cpu_ms", format!("must be 0..={MAX_FRAME_CPU_MS} ({FRAME_CPU_MS_WHY}), got {}", num(v)));
        }
        if let Some(v) = self.frame_cpu_cv.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= MAX_FRAME_CPU_CV)) {
            return err(
                "foreground.frame_cpu_cv",
                format!("must be above 0 and at most {MAX_FRAME_CPU_CV} ({FRAME_CPU_CV_WHY}), got {}", num(v)),
            );
        }
        for (k, v) in [("foreground.heap_alloc_mib_s", self.heap_alloc_mib_s), ("foreground.read_mib_s", self.read_mib_s)] {
            if !(v.is_finite() && (0.0..=MAX_CHURN_MIB_S).contains(&v)) {
                return err(k, format!("must be 0..={MAX_CHURN_MIB_S} ({CHURN_WHY}), got {}", num(v)));
            }
        }
        for (k, v) in [
            ("foreground.heap_free_mib", self.heap_free_mib),
            ("foreground.content_mib", self.content_mib),
            ("foreground.buffers_mib", self.buffers_mib),
        ] {
            if !(v.is_finite() && (0.0..=MAX_APP_MIB).contains(&v)) {
                return err(k, format!("must be 0..={MAX_APP_MIB} ({APP_MIB_WHY}), got {}", num(v)));
            }
        }
        if self.heap_alloc_mib_s > 0.0 && self.heap_free_mib < 1.0 {
            return err(
                "foreground.heap_free_mib",
                format!("must be at least 1 MiB where the heap allocates, got {}", num(self.heap_free_mib)),
            );
        }
        if self.read_mib_s > 0.0 && self.content_mib < 1.0 {
            return err("foreground.content_mib", format!("must be at least 1 MiB where content is read, got {}", num(self.content_mib)));
        }
        Ok(())
    }
}

/// How a workload's apps differ from the catalog's, where its paper ran other versions
/// of them on a phone of another era (SmartLMK's 2013 apps on a Galaxy Nexus, against
/// the catalog's 2018-2020 apps and phones): each app's sizes scaled by
/// `footprint_scale` and its launch times by `launch_scale`, except the values an
/// `[[apps.app]]` entry gives for that app, which the paper measured as they were.
/// Only the workload's own apps (its sequence and background) are changed.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppsAdjust {
    /// Every size of each app (`anon_mib`, `file_mib` and the launch, working-set and
    /// background sizes that are parts of them) times this.
    #[serde(default = "one")]
    pub footprint_scale: f64,
    /// Each app's `cold_launch_ms` and `warm_launch_ms` times this.
    #[serde(default = "one")]
    pub launch_scale: f64,
    /// Values given for one app in place of the scaled ones.
    #[serde(default)]
    pub app: Vec<AppOverride>,
}

/// One app's values in a workload's `[[apps.app]]`, each in place of the scaled one.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppOverride {
    pub name: String,
    /// The app's footprint, `anon_mib` + `file_mib`, MiB: its sizes all scaled to it.
    pub footprint_mib: Option<f64>,
    pub cold_launch_ms: Option<f64>,
    pub warm_launch_ms: Option<f64>,
}

/// Least and most `[apps]` scale: an app a tenth to ten times the catalog's is the
/// same app in another version or on another phone; beyond, it is another app.
const APPS_SCALE: std::ops::RangeInclusive<f64> = 0.1..=10.0;

impl AppsAdjust {
    /// `a` as this table makes it.
    fn apply(&self, a: &AppSpec) -> AppSpec {
        let o = self.app.iter().find(|o| o.name == a.name);
        let whole = a.anon_mib + a.file_mib;
        let f = o.and_then(|o| o.footprint_mib).map_or(self.footprint_scale, |m| m / whole);
        let launch = |given: Option<f64>, v: f64| given.unwrap_or(v * self.launch_scale);
        AppSpec {
            anon_mib: a.anon_mib * f,
            file_mib: a.file_mib * f,
            launch_anon_mib: a.launch_anon_mib * f,
            launch_file_mib: a.launch_file_mib * f,
            ws_anon_mib: a.ws_anon_mib * f,
            ws_file_mib: a.ws_file_mib * f,
            bg_touch_mib: a.bg_touch_mib * f,
            cold_launch_ms: launch(o.and_then(|o| o.cold_launch_ms), a.cold_launch_ms),
            warm_launch_ms: launch(o.and_then(|o| o.warm_launch_ms), a.warm_launch_ms),
            ..a.clone()
        }
    }

    fn validate(&self, input: &Input, w: &Workload, catalog: &Catalog) -> Result<(), ConfigError> {
        let err = |k: &str, msg: String| Err(input.error(k, msg));
        let (lo, hi) = (APPS_SCALE.start(), APPS_SCALE.end());
        for (k, v) in [("apps.footprint_scale", self.footprint_scale), ("apps.launch_scale", self.launch_scale)] {
            if !APPS_SCALE.contains(&v) {
                return err(
                    k,
                    format!("must be {lo}..={hi} (an app a tenth to ten times the catalog's is the same app elsewhere), got {}", num(v)),
                );
            }
        }
        let own = w.app_names();
        for (i, o) in self.app.iter().enumerate() {
            let at = |f: &str| format!("apps.app[{i}].{f}");
            if !own.contains(&&o.name) {
                return err(&at("name"), format!("app `{}` is not one of this workload's (its sequence and background)", o.name));
            }
            if self.app[..i].iter().any(|p| p.name == o.name) {
                return err(&at("name"), format!("app `{}` is listed twice", o.name));
            }
            if let Some(v) = o.footprint_mib.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= MAX_APP_MIB)) {
                return err(
                    &at("footprint_mib"),
                    format!("app `{}`: must be above 0 and at most {MAX_APP_MIB} ({APP_MIB_WHY}), got {}", o.name, num(v)),
                );
            }
            for (f, v) in [("cold_launch_ms", o.cold_launch_ms), ("warm_launch_ms", o.warm_launch_ms)] {
                if let Some(v) = v.filter(|v| !(v.is_finite() && (0.0..=MAX_LAUNCH_MS).contains(v))) {
                    return err(&at(f), format!("app `{}`: must be 0..={MAX_LAUNCH_MS} ({LAUNCH_MS_WHY}), got {}", o.name, num(v)));
                }
            }
        }
        // A scaled launch must stay a launch the catalog could hold.
        for a in own.iter().filter_map(|n| catalog.get(n)).map(|a| self.apply(a)) {
            if let Some((f, v)) = [("cold", a.cold_launch_ms), ("warm", a.warm_launch_ms)].into_iter().find(|(_, v)| *v > MAX_LAUNCH_MS) {
                return err(
                    "apps.launch_scale",
                    format!("makes app `{}`'s {f} launch {} ms, more than {MAX_LAUNCH_MS} ({LAUNCH_MS_WHY})", a.name, num(v)),
                );
            }
        }
        Ok(())
    }
}

/// A workload (data/workloads/NAME.toml).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub source: String,
    pub device: String,
    pub rounds: u32,
    pub use_s: f64,
    pub idle_s: f64,
    pub interactive: bool,
    /// Whether cached apps wake in the background (their catalog `bg_*` activity: push,
    /// sync and update work). False where a paper turned that off for its runs.
    #[serde(default = "yes")]
    pub background_activity: bool,
    pub balloon_mib: f64,
    /// Share of each app's warm-launch CPU (the catalog's `warm_launch_ms`) that a
    /// switch back to it runs before the workload's metric is taken: 1 by default;
    /// less for a metric that stops earlier (ASAP's time to the first rendering) or
    /// where the catalog's all-resident launch, with the re-reads reclaim adds,
    /// overstates the paper's (SEAL's). Calibrated on a control where set.
    #[serde(default = "one")]
    pub switch_cpu_share: f64,
    pub sequence: Vec<String>,
    pub background: Option<Background>,
    /// What the measured apps do while they render in this scenario, beyond what the
    /// catalog says of them in general (absent: the catalog's frame work, no churn).
    #[serde(default)]
    pub foreground: Option<Foreground>,
    /// How its apps differ from the catalog's (absent: as the catalog has them).
    #[serde(default)]
    pub apps: Option<AppsAdjust>,
    /// Where the workload was read from.
    #[serde(skip)]
    origin: Origin,
}

/// Where a workload was read from: its file's name and text (to locate problems found
/// when a run sets it against a device) and whether it is embedded (a file's `device`
/// path is taken from the file's directory).
#[derive(Clone, Default, PartialEq)]
struct Origin {
    file: String,
    src: std::sync::Arc<str>,
    embedded: bool,
}

impl fmt::Debug for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Origin").field("file", &self.file).field("embedded", &self.embedded).finish_non_exhaustive()
    }
}

impl Workload {
    /// Loads an embedded workload by name, or a workload file by path, checking every
    /// app against `catalog`.
    pub fn load(name_or_path: &str, catalog: &Catalog) -> Result<Workload, ConfigError> {
        let s = load_source("workloads", "workload", name_or_path)?;
        let mut w = Workload::parse(&s.file, &s.src, catalog)?;
        w.origin.embedded = s.embedded;
        Ok(w)
    }

    /// Parses and validates a workload's text against `catalog`; `file` names it in
    /// errors.
    pub fn parse(file: &str, src: &str, catalog: &Catalog) -> Result<Workload, ConfigError> {
        let input = Input::new(file, src);
        let mut w: Workload = parse(&input)?;
        w.validate(&input, catalog)?;
        w.origin = Origin { file: file.to_string(), src: src.into(), embedded: false };
        Ok(w)
    }

    /// The workload's file and text, to locate problems found after loading it.
    fn input(&self) -> Input<'_> {
        let file = if self.origin.file.is_empty() { &self.name } else { &self.origin.file };
        Input::new(file, &self.origin.src)
    }

    /// The device the workload names in `device`: an embedded device of that name, else
    /// a device file, a relative path taken from the directory of the workload's file.
    /// A device that cannot be found is an error at the workload's `device` line; a
    /// device file with a problem is an error in that file.
    pub fn default_device(&self) -> Result<Device, ConfigError> {
        let base = if self.origin.embedded { Path::new("") } else { Path::new(&self.origin.file).parent().unwrap_or(Path::new("")) };
        match find_source("devices", &self.device, base) {
            Ok(s) => Device::parse(&s.file, &s.src),
            Err(Missing::Unknown { path }) => Err(self.input().error(
                "device",
                format!("no device named `{}` (known: {}) and no file {path}", self.device, embedded_names("devices").join(", ")),
            )),
            Err(Missing::Unreadable { path, error }) => {
                Err(self.input().error("device", format!("cannot read device file {path}: {error}")))
            }
        }
    }

    fn validate(&self, input: &Input, catalog: &Catalog) -> Result<(), ConfigError> {
        let err = |k: &str, msg: String| Err(input.error(k, msg));
        name_rule(&self.name).map_or(Ok(()), |why| err("name", why))?;
        if self.sequence.is_empty() {
            return err("sequence", "the sequence names no app".into());
        }
        if !(0.0..=MAX_MIB).contains(&self.balloon_mib) {
            return err("balloon_mib", format!("must be 0..={MAX_MIB} MiB ({MAX_MIB_WHY}), got {}", num(self.balloon_mib)));
        }
        if !(self.switch_cpu_share > 0.0 && self.switch_cpu_share <= 1.0) {
            return err(
                "switch_cpu_share",
                format!("must be above 0 and at most 1 (a share of the warm launch), got {}", num(self.switch_cpu_share)),
            );
        }
        self.check_apps(input, catalog)?;
        if let Some(a) = &self.apps {
            a.validate(input, self, catalog)?;
        }
        if let Some(f) = &self.foreground {
            f.validate(input)?;
        }
        if let Some(b) = &self.background {
            for (k, names) in [("background.pool", &b.pool), ("background.fixed", &b.fixed)] {
                if let Some(i) = (1..names.len()).find(|&i| names[..i].contains(&names[i])) {
                    return err(&format!("{k}[{i}]"), format!("app `{}` is listed twice", names[i]));
                }
            }
            if let Some(i) = b.fixed.iter().position(|n| self.sequence.contains(n)) {
                return err(
                    &format!("background.fixed[{i}]"),
                    format!("app `{}` is also in `sequence`: a background app is never one of the measured ones", b.fixed[i]),
                );
            }
            let room = self.background_room(false);
            if b.count > room {
                return err("background.count", format!("{} background apps asked for, but {}", b.count, self.background_holds(false)));
            }
        }
        self.check_time(input, self.background.as_ref().map_or(0, |b| b.count))
    }

    /// Every app the workload names: its sequence, then its background's pool and fixed
    /// set.
    pub(crate) fn app_names(&self) -> Vec<&String> {
        self.sequence.iter().chain(self.background.iter().flat_map(|b| b.pool.iter().chain(&b.fixed))).collect()
    }

    /// The catalog as this workload's apps are (its `[apps]` table applied to them):
    /// `catalog` itself where it has none.
    pub fn apps_catalog<'a>(&self, catalog: &'a Catalog) -> std::borrow::Cow<'a, Catalog> {
        let Some(adj) = &self.apps else { return std::borrow::Cow::Borrowed(catalog) };
        let own = self.app_names();
        let apps = catalog.apps.iter().map(|a| if own.contains(&&a.name) { adj.apply(a) } else { a.clone() }).collect();
        std::borrow::Cow::Owned(Catalog { apps, file: catalog.file.clone() })
    }

    /// Checks that `catalog` holds every app the workload names. An app missing from
    /// the embedded catalog is an error at the workload's line; one missing from a
    /// catalog file is an error in that file, naming the app and the workload's line.
    fn check_apps(&self, input: &Input, catalog: &Catalog) -> Result<(), ConfigError> {
        let lists = [("sequence", &self.sequence)]
            .into_iter()
            .chain(self.background.iter().flat_map(|b| [("background.pool", &b.pool), ("background.fixed", &b.fixed)]));
        for (k, names) in lists {
            if let Some((i, name)) = names.iter().enumerate().find(|(_, n)| catalog.get(n).is_none()) {
                let at = input.error(&format!("{k}[{i}]"), format!("unknown app `{name}` (see `floe list apps`)"));
                let Some(file) = &catalog.file else { return Err(at) };
                let line = at.line.map(|l| format!(":{l}")).unwrap_or_default();
                return Err(ConfigError {
                    file: file.clone(),
                    line: None,
                    field: None,
                    message: format!(
                        "no app `{name}` in this app catalog, and workload `{}` needs it ({}{line}, field `{k}`)",
                        self.name, at.file
                    ),
                });
            }
        }
        Ok(())
    }

    /// Checks that the memory `device` leaves to apps holds each app the workload
    /// launches, whole (`anon_mib` + `file_mib`), and a measured app together with the
    /// scenario's foreground buffers, which reclaim cannot take: on a smaller device
    /// free memory would fall below zero. Of the background, the first `bg_apps` of the
    /// fixed set count, and the whole pool when `bg_apps` is more than the fixed set
    /// holds (a run that draws a smaller background from the pool is not checked here).
    /// An error in the device file, at `memory.app_mem_mib`.
    fn check_fits(&self, device: &Device, catalog: &Catalog, bg_apps: usize) -> Result<(), ConfigError> {
        let buffers = self.foreground.as_ref().map_or(0.0, |f| f.buffers_mib);
        let measured = self.sequence.iter().map(|n| (n, buffers));
        let cached = self
            .background
            .iter()
            .flat_map(|b| b.fixed.iter().take(bg_apps).chain(b.pool.iter().filter(|_| bg_apps > b.fixed.len())))
            .map(|n| (n, 0.0));
        let mut need: Option<(&String, f64, f64)> = None;
        for (name, extra) in measured.chain(cached) {
            let Some(a) = catalog.get(name) else { continue };
            let mib = a.anon_mib + a.file_mib + extra;
            if need.is_none_or(|(_, m, _)| mib > m) {
                need = Some((name, mib, extra));
            }
        }
        let mem = device.memory.app_mem_mib;
        match need {
            Some((name, mib, extra)) if mib > mem => {
                let with = if extra > 0.0 { format!(" with the {} MiB of foreground buffers", num(extra)) } else { String::new() };
                Err(device.input().error(
                    "memory.app_mem_mib",
                    format!(
                        "{} MiB left to apps cannot hold app `{name}` of workload `{}`{with} ({} MiB in all): free memory would fall below zero; give apps at least that",
                        num(mem),
                        self.name,
                        num((mib * 10.0).ceil() / 10.0),
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Checks the workload as a run sets it up, on `device` with `catalog` and
    /// `bg_apps` background apps: every app is in the catalog, its times are within the
    /// limits (its fields may have changed since it was loaded), and unless the run
    /// replaces it (`own_balloon` false), its balloon leaves the device's apps more than
    /// twice the high watermark; the device's app memory holds each app
    /// ([`Workload::check_fits`]).
    pub(crate) fn check_run(&self, device: &Device, catalog: &Catalog, bg_apps: usize, own_balloon: bool) -> Result<(), ConfigError> {
        let input = self.input();
        self.check_apps(&input, catalog)?;
        self.check_time(&input, bg_apps)?;
        self.check_fits(device, catalog, bg_apps)?;
        let b = self.balloon_mib;
        if own_balloon && !device.balloon_fits(b) {
            return Err(input.error("balloon_mib", format!("{} MiB: {}", num(b), device.balloon_rule())));
        }
        Ok(())
    }

    /// How many distinct background apps a run can cache: those of the pool and (unless
    /// the run draws from the pool alone) of the fixed set that are not in `sequence`.
    pub fn background_room(&self, draw: bool) -> usize {
        let Some(b) = &self.background else { return 0 };
        let fixed = if draw { &[][..] } else { &b.fixed[..] };
        let mut names: Vec<&String> = fixed.iter().chain(&b.pool).filter(|n| !self.sequence.contains(n)).collect();
        names.sort();
        names.dedup();
        names.len()
    }

    /// What the background can give, for messages.
    pub(crate) fn background_holds(&self, draw: bool) -> String {
        let room = self.background_room(draw);
        match &self.background {
            None => "the workload has no [background] table".into(),
            Some(b) if draw || b.fixed.is_empty() => format!("the pool holds {room} apps that are not in `sequence`"),
            Some(_) => format!("the fixed set and the pool hold {room} apps that are not in `sequence`"),
        }
    }

    /// Checks the workload's times and launches, with `bg_apps` background apps, against
    /// the simulator's limits: each time and the whole run at most [`MAX_RUN_S`], at
    /// most [`MAX_LAUNCHES`] launches.
    fn check_time(&self, input: &Input, bg_apps: usize) -> Result<(), ConfigError> {
        let err = |k: &str, msg: String| Err(input.error(k, msg));
        if self.rounds == 0 || self.rounds > 10_000 {
            return err("rounds", format!("must be 1..=10000, got {}", self.rounds));
        }
        let bg_use_s = self.background.as_ref().map_or(0.0, |b| b.use_s);
        for (k, v) in [("use_s", self.use_s), ("idle_s", self.idle_s), ("background.use_s", bg_use_s)] {
            if !(v.is_finite() && (0.0..=MAX_RUN_S).contains(&v)) {
                return err(k, format!("must be 0..={MAX_RUN_S} s ({MAX_RUN_WHY}), got {}", num(v)));
            }
        }
        let (rounds, apps) = (self.rounds as usize, self.sequence.len());
        if rounds.saturating_mul(apps) > MAX_LAUNCHES {
            let k = if rounds > 1 { "rounds" } else { "sequence" };
            return err(
                k,
                format!(
                    "{rounds} rounds x {apps} apps = {} launches, more than {MAX_LAUNCHES} ({LAUNCHES_WHY})",
                    rounds.saturating_mul(apps)
                ),
            );
        }
        let launches = (rounds * apps) as f64;
        let parts = [("use_s", launches * self.use_s), ("idle_s", launches * self.idle_s), ("background.use_s", bg_apps as f64 * bg_use_s)];
        let total: f64 = parts.iter().map(|p| p.1).sum();
        if total > MAX_RUN_S {
            // The field that contributes most is named; the message gives the whole sum.
            let k = parts.iter().fold(parts[0], |m, p| if p.1 > m.1 { *p } else { m }).0;
            return err(
                k,
                format!(
                    "{rounds} rounds x {apps} apps x ({} s use + {} s idle) + {bg_apps} background apps x {bg_use_s} s = {total} s of simulated time, more than {MAX_RUN_S} s ({MAX_RUN_WHY})",
                    self.use_s, self.idle_s
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of an embedded file with `from` replaced by `to` (which must occur).
    fn edited(path: &str, from: &str, to: &str) -> String {
        let src = embedded(path).unwrap();
        assert!(src.contains(from), "{path} has no `{from}`");
        src.replacen(from, to, 1)
    }

    /// Every number of `src` outside comments and strings: its line (1-based) and byte
    /// range. Dates and names hold no digits in these files' values.
    fn numbers(src: &str) -> Vec<(usize, std::ops::Range<usize>)> {
        let mut out = Vec::new();
        let mut at = 0;
        for (i, line) in src.split_inclusive('\n').enumerate() {
            let code = line.split('#').next().unwrap_or("");
            let (mut in_str, bytes) = (false, code.as_bytes());
            let mut j = 0;
            while j < bytes.len() {
                let c = bytes[j];
                if c == b'"' {
                    in_str = !in_str;
                } else if !in_str && (c.is_ascii_digit() || c == b'-') && (j == 0 || b" =[,".contains(&bytes[j - 1])) {
                    let end = j + code[j..].find(|ch: char| !(ch.is_ascii_alphanumeric() || ".-+_".contains(ch))).unwrap_or(code.len() - j);
                    if code[j..end].bytes().any(|b| b.is_ascii_digit()) && code[j..end].parse::<f64>().is_ok() {
                        out.push((i + 1, at + j..at + end));
                    }
                    j = end;
                    continue;
                }
                j += 1;
            }
            at += line.len();
        }
        out
    }

    /// The 1-based line of the first line of `src` that starts with `prefix`.
    fn line(src: &str, prefix: &str) -> Option<usize> {
        src.lines().position(|l| l.starts_with(prefix)).map(|i| i + 1)
    }

    fn workload(src: &str) -> Result<Workload, ConfigError> {
        Workload::parse("w.toml", src, &Catalog::embedded().unwrap())
    }

    #[test]
    fn bad_toml_names_file_line_and_field() {
        let src = "name = \"x\"\n[memory]\nram_mib = \"lots\"\n";
        let e = Device::parse("dev.toml", src).unwrap_err();
        assert_eq!(e.file, "dev.toml");
        assert_eq!(e.line, Some(3));
        assert_eq!(e.field.as_deref(), Some("memory.ram_mib"));
    }

    #[test]
    fn unknown_app_in_workload_is_located() {
        let cat = Catalog { apps: vec![], file: None };
        let src = "name = \"w\"\ndescription = \"\"\nsource = \"\"\ndevice = \"p20\"\nrounds = 1\nuse_s = 1.0\nidle_s = 0.0\ninteractive = true\nballoon_mib = 0.0\nsequence = [\"nope\"]\n";
        let e = Workload::parse("w.toml", src, &cat).unwrap_err();
        assert_eq!(e.line, Some(10));
        assert!(e.message.contains("unknown app `nope`"), "{e}");
    }

    /// `background_activity` is optional (on unless a workload turns it off, as
    /// smartlmk-256 does after SmartLMK §6.1), and a value that is not a boolean is
    /// located at its line.
    #[test]
    fn background_activity_defaults_on_and_a_bad_value_is_located() {
        let base = "name = \"w\"\ndescription = \"\"\nsource = \"\"\ndevice = \"p20\"\nrounds = 1\nuse_s = 1.0\nidle_s = 0.0\ninteractive = true\nballoon_mib = 0.0\nsequence = [\"whatsapp\"]\n";
        assert!(workload(base).unwrap().background_activity);
        let off = base.replace("interactive = true\n", "interactive = true\nbackground_activity = false\n");
        assert!(!workload(&off).unwrap().background_activity);
        let bad = base.replace("interactive = true\n", "interactive = true\nbackground_activity = \"sometimes\"\n");
        let e = workload(&bad).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(9), Some("background_activity")), "{e}");
        let cat = Catalog::embedded().unwrap();
        assert!(!Workload::load("smartlmk-256", &cat).unwrap().background_activity);
        assert!(Workload::load("ice-video-call", &cat).unwrap().background_activity);
    }

    /// An app missing from a catalog file is blamed on that file, naming the app and
    /// where the workload asks for it; missing from the embedded catalog, on the
    /// workload's line.
    #[test]
    fn an_app_missing_from_an_apps_file_is_blamed_on_that_file() {
        let src = embedded("apps.toml").unwrap();
        let start = src.find("name = \"whatsapp\"").and_then(|i| src[..i].rfind("[[app]]")).unwrap();
        let end = src[start + 1..].find("[[app]]").map_or(src.len(), |i| start + 1 + i);
        let cat = Catalog::parse("mine.toml", &format!("{}{}", &src[..start], &src[end..])).unwrap();
        let e = Workload::load("ice-video-call", &cat).unwrap_err();
        assert_eq!((e.file.as_str(), e.line, e.field.as_deref()), ("mine.toml", None, None), "{e}");
        let seq = line(embedded("workloads/ice-video-call.toml").unwrap(), "sequence").unwrap();
        assert!(e.message.contains("no app `whatsapp`"), "{e}");
        assert!(e.message.contains(&format!("data/workloads/ice-video-call.toml:{seq}, field `sequence`")), "{e}");
        let e = Workload::load("ice-video-call", &Catalog { file: None, ..cat }).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("data/workloads/ice-video-call.toml", Some(seq)), "{e}");
    }

    /// `src` with each line that starts with one of `keys` replaced by `key = value`.
    fn set_lines(src: &str, kv: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for l in src.lines() {
            match kv.iter().find(|(k, _)| l.starts_with(&format!("{k} ="))) {
                Some((k, v)) => out.push_str(&format!("{k} = {v}")),
                None => out.push_str(l),
            }
            out.push('\n');
        }
        out
    }

    /// A device whose app memory cannot hold one of the workload's apps (with the
    /// scenario's foreground buffers, for a measured app) is refused at its
    /// `memory.app_mem_mib` line, in the device's file; one that holds it is run.
    #[test]
    fn a_device_smaller_than_one_app_is_refused_at_its_app_memory() {
        let cat = Catalog::embedded().unwrap();
        let wl = Workload::load("ice-video-call", &cat).unwrap();
        let small = |kv: &[(&str, &str)]| {
            let wm = [
                ("watermark_min_mib", "0.1"),
                ("watermark_low_mib", "0.2"),
                ("watermark_high_mib", "0.3"),
                ("tuned_high_mib", "0.5"),
                ("minfree", "[[0, 0.5]]"),
            ];
            // The P20 without its system processes, whose pages a tiny RAM cannot hold.
            let p20 = embedded("devices/p20.toml").unwrap().split("\n[system]").next().unwrap();
            let src = set_lines(&set_lines(p20, &wm), kv);
            (Device::parse("small.toml", &src).unwrap(), line(&src, "app_mem_mib"))
        };
        // WhatsApp's 102 + 68 MiB with the video call's 240 MiB of buffers.
        for (kv, says) in [
            (&[("app_mem_mib", "64.0")][..], "64 MiB left to apps cannot hold app `whatsapp`"),
            (&[("ram_mib", "1.0"), ("app_mem_mib", "1.0"), ("size_mib", "1.0")][..], "1 MiB left to apps"),
            (&[("app_mem_mib", "409.9")][..], "with the 240 MiB of foreground buffers (410 MiB in all)"),
        ] {
            let (dev, at) = small(kv);
            let e = wl.check_run(&dev, &cat, 8, true).unwrap_err();
            assert_eq!((e.file.as_str(), e.line, e.field.as_deref()), ("small.toml", at, Some("memory.app_mem_mib")), "{e}");
            assert!(e.message.contains(says) && e.message.contains("below zero"), "{e}");
        }
        assert!(wl.check_run(&small(&[("app_mem_mib", "410.0")]).0, &cat, 8, true).is_ok());
        // Beyond the fixed set of 8, the background comes from the pool, whose largest
        // app is PUBG, 800 MiB.
        let (dev, _) = small(&[("app_mem_mib", "700.0")]);
        assert!(wl.check_run(&dev, &cat, 8, true).is_ok());
        let e = wl.check_run(&dev, &cat, 9, true).unwrap_err();
        assert!(e.message.contains("app `pubg`") && e.message.contains("(800 MiB in all)"), "{e}");
    }

    #[test]
    fn unknown_app_in_a_fixed_background_set_is_located() {
        let src = "name = \"w\"\ndescription = \"\"\nsource = \"\"\ndevice = \"p20\"\nrounds = 1\nuse_s = 1.0\nidle_s = 0.0\ninteractive = true\nballoon_mib = 0.0\nsequence = [\"whatsapp\"]\n[background]\npool = [\"skype\"]\nfixed = [\"skype\",\n  \"nope\"]\ncount = 1\nuse_s = 1.0\n";
        let e = workload(src).unwrap_err();
        // The element's own line, within a list spread over two.
        assert_eq!(e.line, Some(14));
        assert_eq!(e.field.as_deref(), Some("background.fixed"));
        assert!(e.message.contains("unknown app `nope`"), "{e}");
    }

    #[test]
    fn an_exit_cost_out_of_range_is_refused_at_its_line() {
        let Source { file, src, .. } = load_source("devices", "device", "galaxy-nexus").unwrap();
        assert_eq!(Device::parse(&file, &src).unwrap().cpu.exit_us_per_page, Some(1.0));
        for v in ["0.0", "-1.0", "201.0", "nan"] {
            let bad = src.replace("exit_us_per_page = 1.0", &format!("exit_us_per_page = {v}"));
            let e = Device::parse(&file, &bad).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("cpu.exit_us_per_page"), "{v}: {e}");
            assert_eq!(e.line, line(&bad, "exit_us_per_page"), "{v}: {e}");
            assert!(e.message.contains("at most 200"), "{v}: {e}");
        }
    }

    #[test]
    fn background_group_limits_are_checked_and_located() {
        let Source { file, src, .. } = load_source("devices", "device", "nexus5").unwrap();
        let d = Device::parse(&file, &src).unwrap();
        assert_eq!(d.cpu.bg_shares, Some(52));
        let bad = src.replace("bg_shares = 52", "bg_shares = 1");
        let e = Device::parse(&file, &bad).unwrap_err();
        assert!(e.message.contains("2..=262144"), "{e}");
        assert_eq!(e.line, line(&bad, "bg_shares"));
        let bad = src.replace("bg_shares = 52", "bg_cores = 5");
        let e = Device::parse(&file, &bad).unwrap_err();
        assert!(e.message.contains("1..=cores (4)"), "{e}");
    }

    /// A missing top-level key or table has no line and is named itself; a key
    /// missing from a table is named by its dotted path at the table's header.
    #[test]
    fn a_missing_key_is_named_and_located_at_its_table() {
        let src = edited("workloads/ice-video-call.toml", "\nuse_s = 300.0", "\n#");
        let e = workload(&src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (None, Some("use_s")), "{e}");
        assert_eq!(e.to_string(), "w.toml: field `use_s`: missing field `use_s`");
        let full = embedded("devices/p20.toml").unwrap();
        let e = Device::parse("nocpu.toml", &full[..full.find("[cpu]").unwrap()]).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (None, Some("cpu")), "{e}");
        let src = edited("workloads/ice-video-call.toml", "\ncount = 8", "\n#");
        let e = workload(&src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "[background]"), Some("background.count")), "{e}");
        let src = edited("apps.toml", "[[app]]\nname = \"skype\"\n", "[[app]]\n");
        let e = Catalog::parse("apps.toml", &src).unwrap_err();
        let header = embedded("apps.toml").unwrap().find("[[app]]\nname = \"skype\"").map(|i| src[..i].lines().count() + 1);
        assert_eq!((e.line, e.field.as_deref()), (header, Some("name")), "{e}");
    }

    /// A key is found in its own table, not wherever its last component first appears.
    #[test]
    fn a_key_is_located_by_its_full_path() {
        let src = edited("workloads/ice-video-call.toml", "use_s = 30.0", "use_s = -1.0");
        let e = workload(&src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "use_s = -1.0"), Some("background.use_s")), "{e}");
        assert!(e.line > line(&src, "[background]"));
        let src = edited("workloads/ice-video-call.toml", "use_s = 30.0", "use_s = \"long\"");
        let e = workload(&src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "use_s = \"long\""), Some("background.use_s")), "{e}");
    }

    /// The catalog with the line of skype's [[app]] table that sets `key` replaced by
    /// `key = value`.
    fn skype_with(key: &str, value: &str) -> String {
        let cat = embedded("apps.toml").unwrap();
        let (head, tail) = cat.split_at(cat.find("name = \"skype\"").unwrap());
        let i = tail.find(&format!("\n{key} =")).unwrap() + 1;
        let end = i + tail[i..].find('\n').unwrap();
        format!("{head}{}{key} = {value}{}", &tail[..i], &tail[end..])
    }

    /// A catalog problem names the offending key of the offending app, at its line in
    /// that app's [[app]] table.
    #[test]
    fn catalog_problems_name_the_field_of_the_app() {
        for (key, bad) in [("ws_anon_mib", "5000.0"), ("bg_touch_mib", "9999.0"), ("launch_file_mib", "1e6"), ("cold_launch_ms", "-1.0")] {
            let src = skype_with(key, bad);
            let e = Catalog::parse("apps.toml", &src).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (line(&src, &format!("{key} = {bad}")), Some(key)), "{e}");
            assert!(e.message.starts_with("app `skype`"), "{e}");
        }
        // A type error in the Nth app is at its line in the Nth [[app]] table.
        let src = skype_with("anon_mib", "\"x\"");
        let e = Catalog::parse("apps.toml", &src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "anon_mib = \"x\""), Some("anon_mib")), "{e}");
    }

    #[test]
    fn a_duplicated_app_is_reported_at_the_duplicate() {
        let cat = embedded("apps.toml").unwrap();
        let first = cat.find("\n[[app]]\n").unwrap() + 1;
        let second = first + cat[first..].find("\n[[app]]\n").unwrap() + 1;
        let src = format!("{cat}\n{}", &cat[first..second]);
        let e = Catalog::parse("apps.toml", &src).unwrap_err();
        assert!(e.message.contains("defined twice"), "{e}");
        assert_eq!(e.line, Some(cat.lines().count() + 3), "{e}");
    }

    /// A device, app or workload whose name is empty or could not be written in a
    /// comma-separated list is refused at its `name` line.
    #[test]
    fn unusable_names_are_refused_at_their_line() {
        let src = edited("devices/p20.toml", "name = \"p20\"", "name = \"\"");
        let e = Device::parse("d.toml", &src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("name")), "{e}");
        assert!(e.message.contains("must not be empty"), "{e}");
        let src = edited("workloads/ice-video-call.toml", "name = \"ice-video-call\"", "name = \"video call\"");
        let e = Workload::parse("w.toml", &src, &Catalog::embedded().unwrap()).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("name")), "{e}");
        assert!(e.message.contains("has ` `"), "{e}");
        let src = edited("apps.toml", "name = \"skype\"", "name = \"sky,pe\"");
        let e = Catalog::parse("apps.toml", &src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "name = \"sky,pe\""), Some("name")), "{e}");
        assert!(e.message.contains("has `,`"), "{e}");
    }

    /// Watermarks out of order name the one that breaks the order, at its line.
    #[test]
    fn watermarks_out_of_order_name_the_odd_one() {
        for (from, to, key) in [
            ("watermark_high_mib = 49.82", "watermark_high_mib = 0", "watermark_high_mib"),
            ("watermark_min_mib = 9.8", "watermark_min_mib = 2000", "watermark_min_mib"),
            ("watermark_low_mib = 43.68", "watermark_low_mib = 5", "watermark_low_mib"),
        ] {
            let src = edited("devices/p20.toml", from, to);
            let e = Device::parse("wm.toml", &src).unwrap_err();
            assert_eq!((e.line, e.field.clone()), (line(&src, to), Some(format!("memory.{key}"))), "{e}");
        }
    }

    /// The P20's, the Pixel 3's, the Pixel 3a's and the Pixel 4's watermarks are their
    /// kernel's rule applied to their RAM and display (with the watermark_scale_factor
    /// of 0 the Pixels' 4.9 kernels declare, 10 in the others), to the precision the
    /// files give them; a 1 GiB phone without a display stated gets
    /// Linux's own min_free_kbytes, 4 MiB.
    #[test]
    fn the_kirin_and_pixel_watermarks_follow_the_kernel_rule() {
        for (dev, wsf) in [("p20", 10), ("pixel3", 0), ("pixel3a", 0), ("pixel4", 10)] {
            let d = Device::load(dev).unwrap();
            let m = &d.memory;
            let (min, low, high) = linux_watermarks_mib(m.ram_mib, m.display_px, wsf);
            for (file, rule) in [(m.watermark_min_mib, min), (m.watermark_low_mib, low), (m.watermark_high_mib, high)] {
                assert!((file - rule).abs() < 0.01, "{dev}: {file} MiB in the file, {rule} by the rule");
            }
            if ["p20", "pixel3"].contains(&dev) {
                assert!(m.tuned_high_mib.unwrap() > 5.0 * high, "{dev}: Ice's H_wm stays MDT's own, far above the kernel's");
            }
        }
        assert_eq!(linux_watermarks_mib(1024.0, None, 0), (4.0, 5.0, 6.0));
        // The display's three buffers go on low and high, not on min.
        let (min, low, _) = linux_watermarks_mib(1024.0, Some((1024, 1024)), 0);
        assert_eq!((min, low), (4.0, 17.0));
    }

    /// A scenario's foreground table is checked field by field, each at its line.
    #[test]
    fn foreground_values_out_of_range_are_refused() {
        let cat = Catalog::embedded().unwrap();
        for (from, to, key, says) in [
            ("read_mib_s = 1.1", "read_mib_s = 1e9", "foreground.read_mib_s", "1 GiB a second"),
            ("heap_free_mib = 32.0", "heap_free_mib = 0.5", "foreground.heap_free_mib", "at least 1 MiB"),
            ("frame_cpu_ms = 16.23", "frame_cpu_ms = -1.0", "foreground.frame_cpu_ms", "a second"),
            ("frame_cpu_cv = 0.1", "frame_cpu_cv = 0.0", "foreground.frame_cpu_cv", "above 0"),
            ("frame_cpu_cv = 0.1", "frame_cpu_cv = 2.5", "foreground.frame_cpu_cv", "at most 2"),
            ("buffers_mib = 240.0", "buffers_mib = 1e9", "foreground.buffers_mib", "16 GiB"),
        ] {
            let src = edited("workloads/ice-video-call.toml", from, to);
            let e = Workload::parse("w.toml", &src, &cat).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (line(&src, to), Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
    }

    /// A workload's `[apps]` table changes its own apps only: each size scaled by
    /// `footprint_scale` (the parts with the whole), each launch time by `launch_scale`,
    /// and an `[[apps.app]]` entry's values put in place of the scaled ones.
    #[test]
    fn a_workloads_apps_table_scales_its_own_apps_except_the_values_it_gives() {
        let cat = Catalog::embedded().unwrap();
        let wl = Workload::load("smartlmk-256", &cat).unwrap();
        let adj = wl.apps.as_ref().expect("smartlmk-256 has an [apps] table");
        let (fs, ls) = (adj.footprint_scale, adj.launch_scale);
        assert!(fs < 1.0 && ls > 1.0, "{fs} {ls}");
        let apps = wl.apps_catalog(&cat);
        let pair = |n: &str| (cat.get(n).unwrap().clone(), apps.get(n).unwrap().clone());
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        // Gmail: nothing given, all scaled.
        let (a, b) = pair("gmail");
        for (x, y) in [
            (a.anon_mib, b.anon_mib),
            (a.file_mib, b.file_mib),
            (a.launch_anon_mib, b.launch_anon_mib),
            (a.ws_file_mib, b.ws_file_mib),
            (a.bg_touch_mib, b.bg_touch_mib),
        ] {
            assert!(close(x * fs, y), "{x} x {fs} against {y}");
        }
        assert!(close(a.cold_launch_ms * ls, b.cold_launch_ms) && close(a.warm_launch_ms * ls, b.warm_launch_ms));
        assert_eq!((a.frame_cpu_ms, a.bg_period_s, a.priority_class), (b.frame_cpu_ms, b.bg_period_s, b.priority_class));
        // Facebook: its footprint given (the parts keep their shares), its cold launch given.
        let (a, b) = pair("facebook");
        assert!(close(b.anon_mib + b.file_mib, 48.0), "{b:?}");
        assert!(close(b.launch_file_mib / b.file_mib, a.launch_file_mib / a.file_mib));
        assert!(close(b.cold_launch_ms, 1_200.0 * ls + 3_600.0) && close(b.warm_launch_ms, a.warm_launch_ms * ls), "{b:?}");
        // Candy Crush: sizes scaled, launches as given.
        let (a, b) = pair("candy-crush");
        assert!(close(b.anon_mib, a.anon_mib * fs));
        assert_eq!((b.cold_launch_ms, b.warm_launch_ms), (a.cold_launch_ms, a.warm_launch_ms));
        // An app the workload does not name, and a workload with no table, are the catalog's.
        let (a, b) = pair("pubg");
        assert_eq!(a, b);
        let call = Workload::load("ice-video-call", &cat).unwrap();
        assert!(matches!(call.apps_catalog(&cat), std::borrow::Cow::Borrowed(_)));
    }

    /// An `[apps]` table's values are checked, each at its line: the scales' range, an
    /// entry for an app the workload does not name or names twice, a footprint or launch
    /// the catalog could not hold, and a scale that takes a launch past that.
    #[test]
    fn a_workloads_apps_table_out_of_range_is_refused() {
        let path = "workloads/smartlmk-256.toml";
        let fb = "name = \"facebook\"\nfootprint_mib = 48.0";
        // (text, replacement, the line the error is at counted from the replacement's
        // first, field, message)
        for (from, to, off, key, says) in [
            ("footprint_scale = 0.68", "footprint_scale = 0.01", 0, "apps.footprint_scale", "a tenth to ten times"),
            ("launch_scale = 4.1", "launch_scale = 11.0", 0, "apps.launch_scale", "a tenth to ten times"),
            (fb, "name = \"pubg\"\nfootprint_mib = 48.0", 0, "apps.app.name", "not one of this workload's"),
            ("name = \"browser\"", "name = \"facebook\"", 0, "apps.app.name", "listed twice"),
            (fb, "name = \"facebook\"\nfootprint_mib = 0.0", 1, "apps.app.footprint_mib", "above 0"),
            ("cold_launch_ms = 15700.0", "cold_launch_ms = 1e6", 0, "apps.app.cold_launch_ms", "60000"),
        ] {
            let src = edited(path, from, to);
            let at = src[..embedded(path).unwrap().find(from).unwrap()].lines().count() + 1 + off;
            let e = workload(&src).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (Some(at), Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        // Angry Birds' start given no more, ten times its 12 s would be 120 s.
        let src =
            edited(path, "name = \"angry-birds-star-wars\"", "name = \"gmail\"").replacen("launch_scale = 4.1", "launch_scale = 10.0", 1);
        let e = workload(&src).unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (line(&src, "launch_scale"), Some("apps.launch_scale")), "{e}");
        assert!(e.message.contains("`angry-birds-star-wars`'s cold launch 120000 ms"), "{e}");
    }

    /// Sizes, ratios and speeds a device cannot have are refused, each at its line.
    #[test]
    fn device_values_out_of_range_are_refused() {
        for (dev, from, to, key, says) in [
            ("p20", "ratio = 2.58", "ratio = 0.5", "zram.ratio", "1..=128"),
            ("p20", "ratio = 2.58", "ratio = 1e300", "zram.ratio", "zsmalloc"),
            // A rejected number is shown as written, not as its 301 digits.
            ("p20", "ram_mib = 6144.0", "ram_mib = 1e300", "memory.ram_mib", "got 1e300"),
            ("p20", "size_mib = 1024.0", "size_mib = 1e9", "zram.size_mib", "twice the RAM"),
            ("hikey970", "swap_mib = 2048.0", "swap_mib = 1e9", "flash.swap_mib", "1 TiB"),
            ("nexus5", "page_cluster = 3", "page_cluster = 9", "flash.page_cluster", "0..=5"),
            ("p20", "[0, 72.0]", "[0, 5000.0]", "memory.minfree", "1807.5 MiB left to apps"),
            ("p20", "tuned_high_mib = 1024.0", "tuned_high_mib = 9000.0", "memory.tuned_high_mib", "up to app memory"),
            ("p20", "display_px = [1080, 2244]", "display_px = [1080, 0]", "memory.display_px", "1..=16384"),
            ("p20", "[906, 315.0]", "[2000, 315.0]", "memory.minfree", "-1000..=1000"),
            ("p20", "ram_mib = 6144.0", "ram_mib = 1e9", "memory.ram_mib", "1 TiB"),
            ("p20", "read_4k_us = 110.0", "read_4k_us = 1e12", "flash.read_4k_us", "a second"),
            ("p20", "seq_write_mib_s = 248.0", "seq_write_mib_s = 0.001", "flash.seq_write_mib_s", "1 MiB/s"),
            ("p20", "compress_us_per_page = 10.0", "compress_us_per_page = 1e9", "zram.compress_us_per_page", "10 ms"),
            ("galaxy-nexus", "shared_rss_mib = 29.3", "shared_rss_mib = 1e6", "memory.shared_rss_mib", "system's share"),
            ("pixel3", "lmkd = \"psi-minfree\"", "lmkd = \"vmpressure\"", "memory.lmkd", "`psi-minfree`"),
            ("nexus5", "swap_readahead = \"cluster\"", "swap_readahead = \"vma\"", "flash.swap_readahead", "`adaptive`"),
            ("hikey970", "cached_adj = \"shared-slots\"", "cached_adj = \"android9\"", "memory.cached_adj", "`shared-slots`"),
            ("p20", "touch_mib_per_cpu_s = 4.0", "touch_mib_per_cpu_s = -1.0", "system.touch_mib_per_cpu_s", "a second of CPU"),
            ("p20", "reclaim_frame_block_us = 1475.0", "reclaim_frame_block_us = -1.0", "memory.reclaim_frame_block_us", "0..=16667 µs"),
            ("p20", "high_order_wakeups_per_min = ", "high_order_wakeups_per_min = 0.0 #", "memory.high_order_wakeups_per_min", "above 0"),
            ("p20", "adj = -900", "adj = -2000", "system.process.adj", "-1000..=1000"),
            ("p20", "hot_anon_mib = 37.8", "hot_anon_mib = 999.0", "system.process.hot_anon_mib", "0..=151 MiB"),
            ("p20", "name = \"launcher\"", "name = \"../x\"", "system.process.name", ""),
            ("p20", "anon_mib = 93.0", "anon_mib = 5000.0", "system.process.anon_mib", "with `launcher` the system processes hold"),
        ] {
            let src = edited(&format!("devices/{dev}.toml"), from, to);
            let e = Device::parse("d.toml", &src).unwrap_err();
            let at = src.lines().position(|l| l.contains(to)).map(|i| i + 1);
            assert_eq!((e.line, e.field.as_deref()), (at, Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
    }

    /// A system process listed twice is refused at the second.
    #[test]
    fn a_system_process_listed_twice_is_refused_at_the_second() {
        let src = edited("devices/p20.toml", "name = \"surfaceflinger\"", "name = \"system_server\"");
        let e = Device::parse("d.toml", &src).unwrap_err();
        let second = src.lines().enumerate().filter(|(_, l)| *l == "name = \"system_server\"").map(|(i, _)| i + 1).nth(1);
        assert_eq!((e.line, e.field.as_deref()), (second, Some("system.process.name")), "{e}");
        assert!(e.message.contains("listed twice"), "{e}");
    }

    /// An app's sizes and times are bounded, each at its line.
    #[test]
    fn app_values_out_of_range_are_refused() {
        for (key, bad, says) in [
            ("cold_launch_ms", "1e20", "a minute"),
            ("warm_launch_ms", "1e9", "a minute"),
            ("frame_cpu_ms", "5000.0", "a second"),
            ("bg_period_s", "1e-9", "once a second"),
            ("bg_period_s", "1e9", "once a day"),
            ("bg_cpu_ms", "1e12", "a minute"),
            ("anon_mib", "1e9", "16 GiB"),
        ] {
            let src = skype_with(key, bad);
            let e = Catalog::parse("apps.toml", &src).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (line(&src, &format!("{key} = {bad}")), Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
    }

    /// Workload times are bounded, alone and together, and so are its launches; the
    /// message names the field that weighs most.
    #[test]
    fn workload_times_out_of_range_are_refused() {
        // (file, text, replacement, the line's start, field, message)
        for (path, from, to, at, key, says) in [
            ("workloads/ice-video-call.toml", "use_s = 300.0", "use_s = 2e10", "use_s = 2e10", "use_s", "a week"),
            ("workloads/ice-video-call.toml", "use_s = 300.0", "use_s = 1e9", "use_s = 1e9", "use_s", "a week"),
            ("workloads/ice-video-call.toml", "use_s = 30.0", "use_s = 1e300", "use_s = 1e300", "background.use_s", "a week"),
            (
                "workloads/bench-day.toml",
                "rounds = 12 ",
                "rounds = 100 ",
                "idle_s",
                "idle_s",
                "100 rounds x 20 apps x (60 s use + 300 s idle)",
            ),
            (
                "workloads/ice-video-call.toml",
                "use_s = 30.0",
                "use_s = 86400.0",
                "use_s = 86400",
                "background.use_s",
                "8 background apps x 86400 s",
            ),
            ("workloads/selective-b2.toml", "rounds = 1 ", "rounds = 1000 ", "rounds", "rounds", "240000 launches"),
            (
                "workloads/asap-seq1.toml",
                "switch_cpu_share = 0.13",
                "switch_cpu_share = 0.0",
                "switch_cpu_share",
                "switch_cpu_share",
                "above 0",
            ),
            (
                "workloads/asap-seq1.toml",
                "switch_cpu_share = 0.13",
                "switch_cpu_share = 1.5",
                "switch_cpu_share",
                "switch_cpu_share",
                "at most 1",
            ),
        ] {
            let src = edited(path, from, to);
            let e = workload(&src).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (line(&src, at), Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
    }

    /// A background app asked for must exist: `count` is at most what the fixed set and
    /// the pool hold outside `sequence`, neither lists an app twice, and a fixed app is
    /// never a measured one.
    #[test]
    fn background_sets_are_checked() {
        for (from, to, key, says) in [
            ("count = 8", "count = 50", "background.count", "50 background apps asked for, but the fixed set and the pool hold 19 apps"),
            ("fixed = [\"twitter\"", "fixed = [\"whatsapp\", \"twitter\"", "background.fixed", "app `whatsapp` is also in `sequence`"),
            ("pool = [\"facebook\"", "pool = [\"chrome\", \"facebook\"", "background.pool", "app `chrome` is listed twice"),
            ("fixed = [\"twitter\"", "fixed = [\"skype\", \"twitter\"", "background.fixed", "app `skype` is listed twice"),
        ] {
            let src = edited("workloads/ice-video-call.toml", from, to);
            let e = workload(&src).unwrap_err();
            assert_eq!((e.line, e.field.as_deref()), (line(&src, to), Some(key)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        let wl = workload(embedded("workloads/ice-video-call.toml").unwrap()).unwrap();
        assert_eq!((wl.background_room(false), wl.background_room(true)), (19, 19));
    }

    /// A workload's `device` is an embedded name, else a path taken from the workload
    /// file's directory; one that cannot be found is an error at the workload's line.
    #[test]
    fn the_workloads_device_is_found_beside_it() {
        let cat = Catalog::embedded().unwrap();
        assert_eq!(Workload::load("ice-video-call", &cat).unwrap().default_device().unwrap().name, "p20");
        let dir = std::env::temp_dir().join(format!("floe-wdev-{}", std::process::id())).join("sub");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("dev.toml"), edited("devices/p20.toml", "name = \"p20\"", "name = \"beside\"")).unwrap();
        let wdev = dir.join("wdev.toml");
        let with_device = |device: &str| {
            std::fs::write(&wdev, edited("workloads/ice-video-call.toml", "device = \"p20\"", &format!("device = \"{device}\""))).unwrap();
            Workload::load(wdev.to_str().unwrap(), &cat).unwrap().default_device()
        };
        assert_eq!(with_device("dev.toml").unwrap().name, "beside", "relative to the workload's directory, not the current one");
        assert_eq!(with_device(dir.join("dev.toml").to_str().unwrap()).unwrap().name, "beside");
        assert_eq!(with_device("pixel3").unwrap().name, "pixel3", "embedded names win");
        let e = with_device("nosuch").unwrap_err();
        assert_eq!((e.file.as_str(), e.line, e.field.as_deref()), (wdev.to_str().unwrap(), Some(4), Some("device")), "{e}");
        assert!(e.message.contains("no device named `nosuch`"), "{e}");
        let e = with_device("missing.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("device")), "{e}");
        assert!(e.message.contains(&dir.join("missing.toml").display().to_string()), "{e}");
        // A problem inside the device file is reported in that file.
        std::fs::write(dir.join("dev.toml"), edited("devices/p20.toml", "cores = 8", "cores = 0")).unwrap();
        let e = with_device("dev.toml").unwrap_err();
        assert_eq!((e.file, e.field.as_deref()), (dir.join("dev.toml").display().to_string(), Some("cpu.cores")));
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    /// Any number of any data file replaced by a value no check admits (negative, not a
    /// number, infinite, beyond any bound) is refused, never a panic, and the refusal
    /// names a line and a field: the mutated one, or for checks that relate two values
    /// (a watermark order, apps' memory against RAM) the other one.
    #[test]
    fn any_number_of_the_data_files_made_absurd_is_refused_at_a_line() {
        let cat = Catalog::embedded().unwrap();
        let src = embedded("apps.toml").unwrap();
        // Two apps' worth of the catalog: every check on an app is the app's own.
        let two = src.match_indices("[[app]]").nth(2).map_or(src.len(), |(i, _)| i);
        let mut files: Vec<(&str, &str)> = vec![("apps.toml", &src[..two])];
        files.extend(EMBEDDED.iter().filter(|(p, _)| !p.ends_with("apps.toml")).map(|(p, s)| (*p, *s)));
        let (mut tried, mut refused) = (0, 0);
        for (path, text) in files {
            for (line, range) in numbers(text) {
                for bad in ["-1e300", "nan", "inf", "1e300"] {
                    let mutated = format!("{}{bad}{}", &text[..range.start], &text[range.end..]);
                    let result = if path.starts_with("devices/") {
                        Device::parse(path, &mutated).map(drop)
                    } else if path.starts_with("workloads/") {
                        Workload::parse(path, &mutated, &cat).map(drop)
                    } else {
                        Catalog::parse(path, &mutated).map(drop)
                    };
                    tried += 1;
                    let Err(e) = result else { continue };
                    refused += 1;
                    assert!(e.line.is_some() && e.field.is_some(), "{path}:{line} `{}` -> {bad}: {e}", &text[range.clone()]);
                    // Not a number fails its own field's check before any relation.
                    let related = bad != "nan" && (e.message.contains("watermark") || e.message.contains("MiB of RAM"));
                    assert!(
                        e.line == Some(line) || related,
                        "{path}:{line} `{}` -> {bad}: refused at another line: {e}",
                        &text[range.clone()]
                    );
                }
            }
        }
        assert!(tried > 400 && refused * 10 > tried * 9, "{refused} of {tried} refused");
    }
}
