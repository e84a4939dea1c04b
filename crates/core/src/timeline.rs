//! One step of a timeline: what memory held at the step's end and what happened during
//! it, the same columns from the simulator (`floe sim --timeline`) and from the real
//! kernel (`floe daemon`'s `timeline`). A backend leaves empty what it cannot measure.

use serde::{Deserialize, Serialize};

/// One step of a timeline. Gauges (`*_mib`, `apps_*`, `fg_app`) are read at the step's
/// end; counts are what happened during the step. `None` (an empty CSV cell): the
/// backend cannot see it (the daemon sees no frames, no compression CPU and no flash
/// traffic).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub policy: String,
    /// End of the step, in seconds since the run (or the daemon) began.
    pub t_s: f64,
    /// Simulator: true once the workload's measured part has begun.
    pub measured: Option<bool>,
    /// The foreground app (empty on the home screen or when none was named).
    pub fg_app: String,
    /// Frames rendered during the step, and per second of it.
    pub frames: Option<u64>,
    pub fps: Option<f64>,
    /// Frames that took longer than the interaction-alert threshold (16.6 ms).
    pub janky_frames: Option<u64>,
    /// Free memory as policies see it: the simulator's free pages; on a kernel,
    /// MemAvailable (or what is left of the daemon's memory budget, whose LRU sizes
    /// are then the apps' own).
    pub free_mib: f64,
    pub anon_lru_mib: f64,
    pub file_lru_mib: f64,
    /// Anonymous memory held compressed (zram, zswap's pool, SEAL's SL1) and the RAM
    /// it takes.
    pub zram_stored_mib: f64,
    pub zram_pool_mib: f64,
    pub flash_swap_mib: f64,
    /// Memory held by pages being written out, freed when the writes end.
    pub writeback_mib: f64,
    pub apps_alive: u32,
    pub apps_frozen: u32,
    pub reclaimed_pages: u64,
    /// Of those, reclaimed by the allocating thread itself (direct reclaim). On a kernel,
    /// the machine's direct reclaim only (a memory cgroup's limit reclaim is in
    /// `reclaimed_pages` alone).
    pub direct_reclaimed_pages: u64,
    /// Of `reclaimed_pages`, anonymous pages sent to swap (the kernel's pgsteal_anon,
    /// where /proc/vmstat has it).
    pub reclaimed_anon_pages: Option<u64>,
    pub refaults_fg_anon: u64,
    pub refaults_fg_file: u64,
    pub refaults_bg_anon: u64,
    pub refaults_bg_file: u64,
    pub kills: u64,
    pub freezes: u64,
    pub thaws: u64,
    /// CPU used during the step: the simulator counts a job when it starts; the daemon
    /// reads its app groups' and the kswapd threads' CPU time.
    pub cpu_ms_app: Option<f64>,
    pub cpu_ms_kswapd: Option<f64>,
    pub cpu_ms_compress: Option<f64>,
    pub flash_read_kib: Option<u64>,
    pub flash_write_kib: Option<u64>,
}

/// MiB with two decimals from 4 KiB pages: a timeline is read by people and plotted,
/// not summed.
pub fn mib_of_pages(pages: f64) -> f64 {
    (pages * 4.0 / 1024.0 * 100.0).round() / 100.0
}
