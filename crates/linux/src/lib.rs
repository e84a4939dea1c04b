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

/// Opens `path` as `options` say, for root to write a file a config names: created with
/// `mode`, never through a symbolic link (O_NOFOLLOW: a link planted there would have
/// root write where it points), never waiting on a FIFO (O_NONBLOCK, which a regular
/// file ignores), and refused unless it is a regular file.
pub(crate) fn open_regular(path: &std::path::Path, options: &mut std::fs::OpenOptions, mode: u32) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.as_os_str().is_empty() {
        return Err(Error::Unsupported("must be a path (a file to write), got \"\"".into()));
    }
    let f = options.mode(mode).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => {
            Error::Unsupported(format!("{}: is a symbolic link (refused: root would write where it points)", path.display()))
        }
        Some(libc::EISDIR) => Error::Unsupported(format!("{}: is a directory, not a file", path.display())),
        _ => io_err(path)(e),
    })?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Error::Unsupported(format!("{}: not a regular file", path.display())));
    }
    Ok(f)
}

pub(crate) fn write(path: impl AsRef<std::path::Path>, s: &str) -> Result<()> {
    std::fs::write(path.as_ref(), s).map_err(io_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What root opens to write where a config points: a regular file, made with its
    /// mode; a link, a FIFO (without waiting for a reader) or a directory refused.
    #[test]
    fn open_regular_opens_regular_files_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (file, link, fifo) = (dir.path().join("f"), dir.path().join("l"), dir.path().join("p"));
        let opts = || {
            let mut o = std::fs::OpenOptions::new();
            o.create(true).append(true);
            o
        };
        let f = open_regular(&file, &mut opts(), 0o640).unwrap();
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o640);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = open_regular(&link, &mut opts(), 0o640).unwrap_err().to_string();
        assert!(e.ends_with("is a symbolic link (refused: root would write where it points)"), "a link is not followed: {e}");
        let e = open_regular(dir.path(), &mut opts(), 0o640).unwrap_err().to_string();
        assert!(e.ends_with("is a directory, not a file"), "{e}");
        let e = open_regular(std::path::Path::new(""), &mut opts(), 0o640).unwrap_err().to_string();
        assert!(e.contains("must be a path"), "{e}");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo has no other precondition.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo, &mut opts(), 0o640).unwrap_err().to_string();
        assert!(e.starts_with(&fifo.display().to_string()), "{e}");
        let e = open_regular(dir.path(), std::fs::OpenOptions::new().read(true), 0o640).unwrap_err().to_string();
        assert!(e.ends_with("not a regular file"), "{e}");
    }
}
