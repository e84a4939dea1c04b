//! Finished runs kept on disk, so that an experiment stopped part-way resumes where it
//! stopped and one run again (another output, `--report` after the text) takes its
//! runs from there.
//!
//! A run is a file, `DIR/BUILD/KEY.json`: `BUILD` names the running executable by a hash
//! of its bytes (the simulator, the policies and the embedded data are all in it, so a
//! rebuilt floe never reads another build's runs), `KEY` hashes the run as the
//! simulator sees it (its spec, device and workload), and the file holds that text too,
//! checked on reading. Each file is written whole to a temporary name and renamed into
//! place as its run ends, so an interruption loses only the runs in progress and two
//! floe processes may share a directory. A directory keeps the runs of the last few
//! builds opened on it ([`KEPT_BUILDS`]). A file that cannot be read back is run again.

use floe_core::{AppStats, KillCauses, LaunchLog, RunRecord, Sample};
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// How many builds' runs a directory keeps.
pub const KEPT_BUILDS: usize = 3;
/// The file that marks a build's directory as the store's.
const MARK: &str = ".floe-runs";

/// Where one build's runs are kept.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// A run as written: the record with the parts its JSON leaves out.
#[derive(Serialize)]
struct Write<'a> {
    key: &'a str,
    record: &'a RunRecord,
    launches: &'a [LaunchLog],
    kills_by: &'a KillCauses,
    slices: &'a [Sample],
    apps: &'a [AppStats],
}

/// A run as read back.
#[derive(Deserialize)]
struct Read {
    key: String,
    record: RunRecord,
    launches: Vec<LaunchLog>,
    kills_by: KillCauses,
    slices: Vec<Sample>,
    apps: Vec<AppStats>,
}

/// A 64-bit hash of `parts`, in hex.
pub(crate) fn hash_hex(parts: &[&[u8]]) -> String {
    // SipHash with fixed keys: the same text gives the same name in every run of one
    // build, which is all a build's own directory needs.
    let mut h = std::hash::DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// The running executable's name in the store: a hash of its bytes and their length.
fn build_id() -> std::io::Result<String> {
    let bytes = std::fs::read(std::env::current_exe()?)?;
    Ok(format!("{}-{:x}", hash_hex(&[&bytes]), bytes.len()))
}

impl Store {
    /// The store of this build under `root`, created if need be. Of the other builds'
    /// runs there, those of the [`KEPT_BUILDS`] - 1 builds opened last stay (two builds
    /// compared side by side each find their own) and the rest are removed.
    pub fn open(root: &Path) -> std::io::Result<Store> {
        let build = build_id()?;
        let dir = root.join(&build);
        std::fs::create_dir_all(&dir)?;
        // Marks the directory as the store's (opening never removes a directory it did
        // not make) and dates this opening.
        std::fs::write(dir.join(MARK), b"")?;
        let mut others: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(root)?
            .flatten()
            .filter(|e| e.file_name() != build.as_str())
            .filter_map(|e| Some((std::fs::metadata(e.path().join(MARK)).ok()?.modified().ok()?, e.path())))
            .collect();
        others.sort_by_key(|o| std::cmp::Reverse(o.0));
        for (_, old) in others.iter().skip(KEPT_BUILDS - 1) {
            let _ = std::fs::remove_dir_all(old);
        }
        Ok(Store { dir })
    }

    /// This build's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{}.json", hash_hex(&[key.as_bytes()])))
    }

    /// The run kept under `key`, if there is one and it reads back whole.
    pub fn get(&self, key: &str) -> Option<RunRecord> {
        let text = std::fs::read(self.path(key)).ok()?;
        let r: Read = serde_json::from_slice(&text).ok()?;
        (r.key == key).then_some(RunRecord { launches: r.launches, kills_by: r.kills_by, slices: r.slices, apps: r.apps, ..r.record })
    }

    /// Keeps `rec` under `key`. A run that cannot be written is only not kept: the
    /// experiment goes on.
    pub fn put(&self, key: &str, rec: &RunRecord) {
        let w = Write { key, record: rec, launches: &rec.launches, kills_by: &rec.kills_by, slices: &rec.slices, apps: &rec.apps };
        let Ok(text) = serde_json::to_vec(&w) else { return };
        let path = self.path(key);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        // A write that fails part-way (a full disk) leaves no temporary file behind either.
        if std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path)).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("floe-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A run with every part a report reads (launches, kill causes, slices and each
    /// app's part) comes back equal, and only under its own key.
    #[test]
    fn a_kept_run_reads_back_whole() {
        let root = scratch("whole");
        let spec = crate::RunSpec {
            bg_apps: Some(2),
            draw_bg: true,
            use_s: Some(20.0),
            slice_s: Some(10.0),
            ..crate::RunSpec::new("p20", "ice-video-call", "ice")
        };
        let rec = crate::run_all(&[spec], &crate::no_progress).unwrap().remove(0);
        assert!(!rec.launches.is_empty() && !rec.slices.is_empty() && !rec.apps.is_empty(), "the run fills every part");
        let store = Store::open(&root).unwrap();
        assert!(store.get("k").is_none());
        store.put("k", &rec);
        assert_eq!(store.get("k").as_ref(), Some(&rec));
        assert!(store.get("other").is_none());
        // A file that does not read back is no run.
        std::fs::write(store.path("k"), b"{").unwrap();
        assert!(store.get("k").is_none());
        // A run that cannot be kept (its place taken by a directory) leaves nothing
        // beside the runs.
        std::fs::create_dir_all(store.path("blocked").join("x")).unwrap();
        store.put("blocked", &rec);
        assert!(store.get("blocked").is_none());
        let names: Vec<_> = std::fs::read_dir(store.dir()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(names.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "no temporary file stays: {names:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Opening keeps the builds opened last and removes older ones' runs, and leaves
    /// what is not the store's.
    #[test]
    fn opening_keeps_the_last_builds_runs_only() {
        let root = scratch("builds");
        let old = |name: &str, secs: u64| {
            let d = root.join(name);
            std::fs::create_dir_all(&d).unwrap();
            let f = std::fs::File::create(d.join(MARK)).unwrap();
            f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)).unwrap();
            d
        };
        let (oldest, older, newer) = (old("a-1", 1_000), old("b-1", 2_000), old("c-1", 3_000));
        let mine = root.join("notes");
        std::fs::create_dir_all(&mine).unwrap();
        let store = Store::open(&root).unwrap();
        assert!(store.dir().starts_with(&root) && store.dir().join(MARK).exists());
        assert!(newer.exists() && older.exists(), "the two builds opened last before this one stay");
        assert!(!oldest.exists(), "an older build's runs are removed");
        assert!(mine.exists(), "a directory the store did not make stays");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
