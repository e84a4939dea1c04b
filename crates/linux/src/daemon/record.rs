//! The daemon's run in the simulator's record (`floe sim --json`, DESIGN.md's one
//! metrics schema): what the kernel and the daemon counted since the first sample, for
//! `floe ctl run` and the config's `run_json`, written when the daemon stops.

use super::{kswapd_ms, kswapd_pids, read_stolen, Counters, Daemon, Stolen};
use crate::{read, Error, Result};
use floe_core::{Metrics, Param, RunRecord};
use std::path::Path;
use std::time::Instant;

/// The metrics a live run cannot give, listed in the record's `not_measured` parameter
/// (each is 0 or null there): frames are the app's to count; rounds and the system's
/// own processes are the simulator's; flash traffic is not told apart from other block
/// I/O (zram's included) in /proc/vmstat; compression runs inside kswapd's and the
/// apps' CPU time; the prepagers count pages, not their CPU or precision.
pub(super) const NOT_MEASURED: &str = "fps ria interaction_alerts frames caching_capability refaults_system flash_read_bytes \
flash_write_bytes cpu_ms_compress cpu_ms_prepage prepage_precision prepage_recall";

/// Where the run starts: the daemon's counters and the kernel's, after the first sample.
#[derive(Clone, Debug)]
pub(super) struct RunStart {
    at: Instant,
    c: Counters,
    steal: Stolen,
    kswapd: Vec<i32>,
    kswapd_ms: f64,
    apps_us: Option<u64>,
}

impl RunStart {
    pub(super) fn now(c: Counters, apps_us: Option<u64>) -> RunStart {
        let kswapd = kswapd_pids();
        RunStart { at: Instant::now(), c, steal: read_stolen(), kswapd_ms: kswapd_ms(&kswapd), kswapd, apps_us }
    }
}

impl Daemon {
    /// The run so far: policy and counts as `floe sim --json` prints a run. The device
    /// is the machine's host name, the workload `live`, the seed 0; the parameters say
    /// how long it ran, on which kernel, with how many apps, and what it could not
    /// measure ([`NOT_MEASURED`]). Launches are those `floe ctl launch-done` ended.
    pub(super) fn run_record(&self) -> RunRecord {
        let s = &self.run_start;
        let (c, c0) = (self.c, s.c);
        let steal = read_stolen();
        let host = read("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
        let mut r = RunRecord::new(&self.cfg.policy, if host.is_empty() { "linux" } else { &host }, "live", 0);
        let secs = (s.at.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        r.params.insert("duration_s".into(), Param::Float(secs));
        if let Ok(k) = read("/proc/sys/kernel/osrelease") {
            r.params.insert("kernel".into(), Param::Text(k.trim().into()));
        }
        r.params.insert("apps".into(), Param::Int(self.apps.len() as i64));
        if self.cfg.dry_run {
            r.params.insert("dry_run".into(), Param::Bool(true));
        }
        r.params.insert("not_measured".into(), Param::Text(NOT_MEASURED.into()));
        let mut m = Metrics {
            refaults_fg_anon: c.refaults_fg_anon - c0.refaults_fg_anon,
            refaults_fg_file: c.refaults_fg_file - c0.refaults_fg_file,
            refaults_bg_anon: c.refaults_bg_anon - c0.refaults_bg_anon,
            refaults_bg_file: c.refaults_bg_file - c0.refaults_bg_file,
            reclaimed_pages: steal.all.saturating_sub(s.steal.all),
            reclaimed_anon_pages: steal.anon.zip(s.steal.anon).map_or(0, |(now, then)| now.saturating_sub(then)),
            kills: c.kills - c0.kills,
            freezes: c.freezes - c0.freezes,
            thaws: c.thaws - c0.thaws,
            zram_stored_bytes: self.meminfo.zram_stored.0 * 4096,
            cpu_ms_app: self.apps_cpu_us().zip(s.apps_us).map_or(0.0, |(now, then)| now.saturating_sub(then) as f64 / 1000.0),
            cpu_ms_kswapd: ((kswapd_ms(&s.kswapd) - s.kswapd_ms).max(0.0) * 1000.0).round() / 1000.0,
            ..Metrics::default()
        };
        m.set_launches(&self.launches);
        r.metrics = m;
        r
    }

    /// [`Daemon::run_record`] as `floe sim --json` prints a run, with a final newline.
    pub(super) fn run_json(&self) -> String {
        serde_json::to_string_pretty(&self.run_record()).expect("a run record serializes") + "\n"
    }

    /// Writes [`Daemon::run_json`] to `path`, replacing what it held (a regular file,
    /// never through a link: [`crate::open_regular`]).
    pub(super) fn write_run(&self, path: &Path) -> Result<()> {
        use std::io::Write;
        let text = self.run_json();
        let mut f = crate::open_regular(path, std::fs::OpenOptions::new().create(true).write(true).truncate(true), 0o640)?;
        f.write_all(text.as_bytes()).map_err(crate::io_err(path))
    }
}

/// Whether the run's record can go to `path` when the daemon stops, checked at its
/// start: a regular file or none yet (never a link, which would have root write where
/// it points), in a directory that exists, that this daemon can open to write (it is
/// opened, made if it is not there, and left as it is until the daemon stops).
pub(super) fn check_run_json(path: &Path) -> Result<()> {
    let bad = |why: String| Err(Error::Unsupported(format!("run_json: {why}")));
    if let Some(why) = super::config::not_a(path, "regular file", |t| t.is_file()) {
        return bad(why);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if path.as_os_str().is_empty() {
        return bad("must be a path (a file to write), got \"\"".into());
    }
    if !dir.is_dir() {
        let what = if dir.exists() { "is not a directory" } else { "does not exist" };
        return bad(format!("{}: {} {what}", path.display(), dir.display()));
    }
    match crate::open_regular(path, std::fs::OpenOptions::new().create(true).write(true), 0o640) {
        Ok(_) => Ok(()),
        Err(e) => bad(format!("cannot be written: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_records_file_is_checked_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("run.json");
        assert!(check_run_json(&ok).is_ok(), "a new file in a directory that exists");
        std::fs::write(&ok, "{}").unwrap();
        assert!(check_run_json(&ok).is_ok(), "a file it will replace");
        let e = check_run_json(&dir.path().join("no-dir/run.json")).unwrap_err().to_string();
        assert!(e.starts_with("run_json: ") && e.ends_with("no-dir does not exist"), "{e}");
        std::fs::write(dir.path().join("plain"), "").unwrap();
        let e = check_run_json(&dir.path().join("plain/run.json")).unwrap_err().to_string();
        assert!(e.ends_with("plain is not a directory"), "{e}");
        let e = check_run_json(dir.path()).unwrap_err().to_string();
        assert!(e.contains("exists and is not a regular file"), "{e}");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(check_run_json(&link).unwrap_err().to_string().contains("symbolic link"));
        // Where nothing can be written, the start fails, not the stop.
        for nowhere in ["/proc/floe-run.json", "/sys/floe-run.json", ""] {
            let e = check_run_json(Path::new(nowhere)).unwrap_err().to_string();
            assert!(e.starts_with("run_json: ") && (e.contains("cannot be written") || e.contains("must be a path")), "{nowhere:?}: {e}");
            assert!(!Path::new(nowhere).exists() || nowhere.is_empty());
        }
        let fresh = dir.path().join("fresh.json");
        check_run_json(&fresh).unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "", "made empty at start, written at stop");
        assert_eq!(std::fs::read_to_string(&ok).unwrap(), "{}", "an earlier record stays until the stop replaces it");
    }
}
