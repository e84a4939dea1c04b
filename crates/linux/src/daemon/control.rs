//! Outside the loop: `floe ctl` requests over the socket, the supervisor that thaws
//! (and unboosts) what the daemon leaves when it dies, thawing a root or a layout.
use crate::cgroup::Hierarchies;
use crate::sys::{nice_of, set_nice, Pidfd};
use crate::{Error, Result};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

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
pub(super) enum Request<'a> {
    /// APP comes to the foreground: a launch begins.
    Fg(&'a str),
    /// APP's first frame is up, after MS ms if given.
    LaunchDone(&'a str, Option<&'a str>),
    Status,
    Apps,
    Metrics,
    /// Page APP's anonymous memory out (MIB of it, if given).
    Reclaim(&'a str, Option<&'a str>),
    /// Read APP's swapped-out memory back ahead of use (MIB of it, if given).
    Prepage(&'a str, Option<&'a str>),
}

impl<'a> Request<'a> {
    pub(super) fn parse(line: &'a str) -> std::result::Result<Request<'a>, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[..] {
            ["fg", app] => Ok(Request::Fg(app)),
            ["launch-done", app] => Ok(Request::LaunchDone(app, None)),
            ["launch-done", app, ms] => Ok(Request::LaunchDone(app, Some(ms))),
            ["status"] => Ok(Request::Status),
            ["apps"] => Ok(Request::Apps),
            ["metrics"] => Ok(Request::Metrics),
            ["reclaim", app] => Ok(Request::Reclaim(app, None)),
            ["reclaim", app, mib] => Ok(Request::Reclaim(app, Some(mib))),
            ["prepage", app] => Ok(Request::Prepage(app, None)),
            ["prepage", app, mib] => Ok(Request::Prepage(app, Some(mib))),
            _ => Err(format!(
                "unknown request `{}` (fg APP, launch-done APP [MS], status, apps, metrics, reclaim APP [MIB], prepage APP [MIB])",
                line.trim()
            )),
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

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    /// The control requests the daemon understands, with their words checked the same
    /// way by `floe ctl` before it connects.
    #[test]
    fn control_requests_parse_with_their_arguments() {
        assert_eq!(Request::parse("fg browser\n"), Ok(Request::Fg("browser")));
        assert_eq!(Request::parse("launch-done browser"), Ok(Request::LaunchDone("browser", None)));
        assert_eq!(Request::parse("launch-done browser 420"), Ok(Request::LaunchDone("browser", Some("420"))));
        assert_eq!(Request::parse(" status "), Ok(Request::Status));
        assert_eq!(Request::parse("reclaim maps"), Ok(Request::Reclaim("maps", None)));
        assert_eq!(Request::parse("reclaim maps 64"), Ok(Request::Reclaim("maps", Some("64"))));
        assert_eq!(Request::parse("prepage maps 8"), Ok(Request::Prepage("maps", Some("8"))));
        for bad in ["fg", "fg a b", "status now", "bogus", "", "launch-done a 1 2", "reclaim", "prepage a 1 2"] {
            assert!(Request::parse(bad).unwrap_err().contains("unknown request"), "{bad:?}");
        }
        let e = ctl(Path::new("/nonexistent/floe.sock"), "status").unwrap_err().to_string();
        assert!(e.contains("cannot reach the daemon") && e.contains("is the daemon running"), "{e}");
        assert!(ctl(Path::new("/nonexistent/floe.sock"), "bogus").unwrap_err().to_string().contains("unknown request"));
    }
}
