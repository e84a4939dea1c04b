//! floe-linux: the real-kernel backend. This first layer is the mechanisms DESIGN.md
//! "Real kernel mapping" names, each usable on its own and each verified on the running
//! kernel by [`check`]: cgroup hierarchies (cgroup v2 for freeze, kill and per-cgroup
//! PSI; v1 memory and freezer where that is what the machine has), app cgroups, PSI
//! triggers, pidfds, `process_madvise`, and the /proc and cgroup files a policy observes.
//! [`daemon`] drives the policies over them.

pub mod cgroup;
pub mod check;
pub mod daemon;
pub mod prepage;
pub mod prepage_file;
pub mod procfs;
pub mod state;
pub mod sys;

/// A fresh, empty scratch directory for a unit test: `floe-NAME-PID` under the
/// temporary directory, emptied first if a killed run left it.
#[cfg(test)]
pub(crate) fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("floe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Errors of the real-kernel backend: what failed and on which path.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `err` is not a `source`: the message already carries it, and a source would be
    /// printed a second time where errors are shown with their chain (`floe: error:`).
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("{0}")]
    Unsupported(String),
    #[error("{what}: timed out after {ms} ms")]
    Timeout { what: String, ms: u64 },
    #[error("{path}: cannot parse: {detail}")]
    Parse { path: String, detail: String },
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn io_err(path: impl AsRef<std::path::Path>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.as_ref().display().to_string();
    move |err| Error::Io { path, err }
}

pub(crate) fn read(path: impl AsRef<std::path::Path>) -> Result<String> {
    std::fs::read_to_string(path.as_ref()).map_err(io_err(path))
}

pub(crate) fn write(path: impl AsRef<std::path::Path>, s: &str) -> Result<()> {
    std::fs::write(path.as_ref(), s).map_err(io_err(path))
}
