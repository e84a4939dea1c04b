//! Outside the loop: `floe ctl` requests over the socket, the supervisor that thaws
//! (and unboosts) what the daemon leaves when it dies, thawing a root or a layout.
use crate::cgroup::Hierarchies;
use crate::sys::{nice_of, set_nice, Pidfd};
use crate::{Error, Result};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The longest request line the daemon reads; a longer one is refused unread.
pub const MAX_REQUEST_BYTES: usize = 4096;
/// How long a client has to send its whole request line.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(1);
/// How long a reply may take to write before the client is dropped.
const REPLY_DEADLINE: Duration = Duration::from_secs(1);
/// How long a request waits for the loop's answer, on both ends of the socket: far
/// longer than any request takes (paging a GiB out takes about a second), so that one
/// that takes it finds a loop that is stuck, and says so rather than waiting forever.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(60);
/// Clients served at once; more are told the daemon is busy and closed.
pub const MAX_CLIENTS: usize = 32;

/// A request read off the socket, for the daemon's loop: the line, who sent it, and
/// where the reply goes (the client's thread writes it).
pub(super) struct CtlRequest {
    pub line: String,
    pub uid: u32,
    pub reply: mpsc::Sender<String>,
}

/// The control socket, served on its own thread: each client gets a thread of its own
/// (a small stack) with a deadline and a size cap on its request line; complete
/// requests reach the loop through a channel, with a byte on a pipe that wakes its
/// poll. No client can delay a sample or a kill.
pub(super) struct ControlPlane {
    pub requests: mpsc::Receiver<CtlRequest>,
    /// The pipe's read end: readable when requests wait.
    pub wake: OwnedFd,
    stop: Arc<AtomicBool>,
    /// Written on drop: wakes the accepting thread, which otherwise sleeps until a
    /// client connects.
    stop_poke: OwnedFd,
    thread: Option<std::thread::JoinHandle<()>>,
    path: PathBuf,
}

/// A non-blocking, close-on-exec pipe: (read end, write end).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: a two-int buffer for pipe2.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh fds nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl ControlPlane {
    /// Binds `path` (refusing a live daemon's socket or anything not a socket there;
    /// replacing a stale socket), gives it to root and `ctl_gid` (0660) or root alone
    /// (0600), and starts serving.
    pub fn bind(path: &Path, ctl_gid: Option<u32>) -> Result<ControlPlane> {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            if !std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) {
                return Err(Error::Unsupported(format!("{}: exists and is not a socket; not replaced", path.display())));
            }
            if UnixStream::connect(path).is_ok() {
                return Err(Error::Unsupported(format!("{}: another daemon is listening there", path.display())));
            }
            std::fs::remove_file(path).map_err(crate::io_err(path))?;
        }
        let listener = UnixListener::bind(path).map_err(crate::io_err(path))?;
        let owned = (|| {
            use std::os::unix::fs::PermissionsExt;
            if let Some(gid) = ctl_gid {
                std::os::unix::fs::chown(path, Some(0), Some(gid))?;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(if ctl_gid.is_some() { 0o660 } else { 0o600 }))?;
            listener.set_nonblocking(true)
        })();
        if let Err(e) = owned {
            let _ = std::fs::remove_file(path);
            return Err(crate::io_err(path)(e));
        }
        let pipes = pipe().and_then(|a| Ok((a, pipe()?)));
        let ((wake, poke), (stopped, stop_poke)) = match pipes {
            Ok(p) => p,
            Err(e) => {
                let _ = std::fs::remove_file(path);
                return Err(crate::io_err("pipe")(e));
            }
        };
        let poke = Arc::new(poke);
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("floe-ctl".into())
            .stack_size(256 << 10)
            .spawn(move || serve(listener, tx, poke, ctl_gid, stop2, stopped))
            .map_err(crate::io_err("control thread"))?;
        Ok(ControlPlane { requests: rx, wake, stop, stop_poke, thread: Some(thread), path: path.to_path_buf() })
    }

    /// Empties the wake pipe (the requests are in the channel).
    pub fn drain_wake(&self) {
        let mut buf = [0u8; 64];
        // SAFETY: a valid fd and buffer; non-blocking.
        while unsafe { libc::read(self.wake.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
}

impl Drop for ControlPlane {
    /// Stops accepting and removes the socket; clients waiting for a reply are told the
    /// daemon stopped when their request is dropped with the channel.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // SAFETY: a valid fd and one byte.
        unsafe { libc::write(self.stop_poke.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The accepting thread: asleep until a client connects or `stopped` (a pipe written
/// when the daemon stops) is readable.
fn serve(
    listener: UnixListener,
    tx: mpsc::Sender<CtlRequest>,
    poke: Arc<OwnedFd>,
    ctl_gid: Option<u32>,
    stop: Arc<AtomicBool>,
    stopped: OwnedFd,
) {
    let active = Arc::new(AtomicUsize::new(0));
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [
            libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stopped.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: two valid pollfds.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        while let Ok((mut s, _)) = listener.accept() {
            if active.load(Ordering::SeqCst) >= MAX_CLIENTS {
                let _ = s.set_nonblocking(true);
                let _ = s.write_all(b"error: busy: too many clients\n");
                continue;
            }
            active.fetch_add(1, Ordering::SeqCst);
            let (tx, poke, mine) = (tx.clone(), poke.clone(), active.clone());
            let spawned = std::thread::Builder::new().name("floe-ctl-client".into()).stack_size(128 << 10).spawn(move || {
                client(s, &tx, &poke, ctl_gid);
                mine.fetch_sub(1, Ordering::SeqCst);
            });
            if spawned.is_err() {
                active.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// Reads one request line within [`REQUEST_DEADLINE`] and [`MAX_REQUEST_BYTES`].
fn read_request(s: &mut UnixStream) -> std::result::Result<String, String> {
    let start = Instant::now();
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 1024];
    loop {
        let left = REQUEST_DEADLINE.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(format!("no complete request within {} ms", REQUEST_DEADLINE.as_millis()));
        }
        s.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.contains(&b'\n') {
                    break;
                }
                if buf.len() > MAX_REQUEST_BYTES {
                    return Err(format!("request longer than {MAX_REQUEST_BYTES} bytes"));
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(format!("no complete request within {} ms", REQUEST_DEADLINE.as_millis()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let line = buf.split(|&b| b == b'\n').next().unwrap_or(&[]);
    if line.len() > MAX_REQUEST_BYTES {
        return Err(format!("request longer than {MAX_REQUEST_BYTES} bytes"));
    }
    String::from_utf8(line.to_vec()).map_err(|_| "request is not UTF-8".to_string())
}

/// One client: its credentials checked, its line read and handed to the loop, the
/// reply written back.
fn client(mut s: UnixStream, tx: &mpsc::Sender<CtlRequest>, poke: &OwnedFd, ctl_gid: Option<u32>) {
    let _ = s.set_write_timeout(Some(REPLY_DEADLINE));
    let uid = match peer_allowed(&s, ctl_gid) {
        Ok(uid) => uid,
        Err(e) => {
            let _ = writeln!(s, "error: {e}");
            return;
        }
    };
    let line = match read_request(&mut s) {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(s, "error: {e}");
            return;
        }
    };
    let (reply, answer) = mpsc::channel();
    if tx.send(CtlRequest { line, uid, reply }).is_err() {
        let _ = writeln!(s, "error: the daemon is stopping");
        return;
    }
    // SAFETY: a valid fd and one byte; a full pipe already wakes the loop.
    unsafe { libc::write(poke.as_fd().as_raw_fd(), b"x".as_ptr().cast(), 1) };
    let text = match answer.recv_timeout(ANSWER_DEADLINE) {
        Ok(text) => text,
        Err(mpsc::RecvTimeoutError::Timeout) => format!("error: the daemon's loop did not answer within {} s\n", ANSWER_DEADLINE.as_secs()),
        Err(mpsc::RecvTimeoutError::Disconnected) => "error: the daemon stopped before answering\n".into(),
    };
    let _ = s.write_all(text.as_bytes());
}

/// The peer's (uid, gid, pid) from SO_PEERCRED.
fn peer_cred(s: &UnixStream) -> std::result::Result<libc::ucred, String> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid socket fd and a buffer of the right size for SO_PEERCRED.
    let r =
        unsafe { libc::getsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, &mut cred as *mut _ as *mut libc::c_void, &mut len) };
    if r != 0 {
        return Err("cannot read peer credentials".into());
    }
    Ok(cred)
}

/// Root, or a member of `ctl_gid` (its primary group, or a supplementary one as
/// /proc/PID/status lists them). Returns the peer's uid.
fn peer_allowed(s: &UnixStream, ctl_gid: Option<u32>) -> std::result::Result<u32, String> {
    let cred = peer_cred(s)?;
    if cred.uid == 0 {
        return Ok(0);
    }
    let Some(gid) = ctl_gid else {
        return Err(format!("uid {} may not control floe (root only: no ctl_gid)", cred.uid));
    };
    let supplementary = || {
        let status = crate::read(format!("/proc/{}/status", cred.pid)).unwrap_or_default();
        status.lines().find_map(|l| l.strip_prefix("Groups:")).is_some_and(|g| g.split_whitespace().any(|x| x.parse() == Ok(gid)))
    };
    if cred.gid == gid || supplementary() {
        Ok(cred.uid)
    } else {
        Err(format!("uid {} gid {} may not control floe (not in group {gid})", cred.uid, cred.gid))
    }
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

/// The nice value of the daemon's loop (and the supervisor): above ordinary work, below
/// what audio and input threads get; not -20, since the loop's bounded page-outs
/// compress on its own CPU time and should not crowd out the foreground app.
pub const OWN_NICE: i32 = -10;

/// Makes this process the last the kernel's OOM killer takes (oom_score_adj -1000),
/// raises the calling thread's priority ([`OWN_NICE`]) and locks its memory as it is touched (mlockall with MCL_ONFAULT: pages are never
/// swapped out or dropped, and what is never touched is never locked), as earlyoom and
/// lmkd do: a killer that waits on a page fault under pressure kills late. Before the
/// lock, the pages start-up alone mapped are released ([`release_startup_pages`]), so
/// that what is locked is what the process touches from then on. Returns what could
/// not be done.
pub fn protect_self() -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = crate::write("/proc/self/oom_score_adj", "-1000") {
        notes.push(format!("cannot set own oom_score_adj: {e}"));
    }
    // Before the lock: what start-up alone touched is not kept resident and locked.
    release_startup_pages();
    // SAFETY: mlockall has no memory preconditions.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) } != 0 {
        notes.push(format!("cannot lock own memory: {}", std::io::Error::last_os_error()));
    }
    // The calling thread (the loop; not the control plane's threads, started before)
    // runs ahead of ordinary work: on a busy machine a killer at nice 0 waits tens of
    // ms for a CPU after its event while an allocation burst goes on.
    // SAFETY: setpriority takes no pointers; who 0 is the calling thread.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, OWN_NICE) } != 0 {
        notes.push(format!("cannot set own nice to {OWN_NICE}: {}", std::io::Error::last_os_error()));
    }
    notes
}

/// Unmaps the code and read-only data pages start-up mapped (the config parser, the
/// state database's schema, the argument parser, and every page the kernel's
/// fault-around mapped beside them, 64 KiB at a time) and returns the heap's free
/// pages, so that the memory locked afterwards is what the loop touches. Only clean
/// file-backed mappings are dropped (read-only, no private copy): their pages stay in
/// the page cache, shared and evictable, and a page the loop needs is mapped again
/// from there on its first touch. Returns the KiB unmapped.
pub fn release_startup_pages() -> u64 {
    let mut released = 0;
    for (start, end, rss) in clean_file_mappings() {
        // SAFETY: a whole mapping of this process, file-backed, not writable and with
        // no private (anonymous) page: MADV_DONTNEED only unmaps page-cache pages,
        // which the next access maps again unchanged.
        if unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) } == 0 {
            released += rss;
        }
    }
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free heap memory to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
    released
}

/// This process's clean file mappings, from /proc/self/smaps: read-only or code,
/// file-backed, with no private (anonymous) copy of a page; each as start, end and the
/// KiB mapped.
fn clean_file_mappings() -> Vec<(usize, usize, u64)> {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return Vec::new();
    };
    // Each mapping's header line comes first, then its fields (`Rss:` before
    // `Anonymous:`).
    let mut out = Vec::new();
    let mut cur: Option<(usize, usize)> = None;
    let mut rss = 0;
    for line in smaps.lines() {
        let mut w = line.split_ascii_whitespace();
        let first = w.next().unwrap_or("");
        let value = |w: &mut std::str::SplitAsciiWhitespace| w.next().and_then(|v| v.parse::<u64>().ok());
        if let Some((a, b)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            let (perms, path) = (w.next().unwrap_or(""), w.nth(3).unwrap_or(""));
            let range = usize::from_str_radix(a, 16).ok().zip(usize::from_str_radix(b, 16).ok());
            cur = range.filter(|_| matches!(perms, "r-xp" | "r--p") && path.starts_with('/'));
        } else if first == "Rss:" {
            rss = value(&mut w).unwrap_or(0);
        } else if first == "Anonymous:" {
            if let (Some((start, end)), Some(0)) = (cur.take(), value(&mut w)) {
                out.push((start, end, rss));
            }
        }
    }
    out
}

/// Waits for the process of `pidfd` to exit, having first unmapped every clean file
/// page this process mapped (its start-up's and protect_self's, the kernel's
/// fault-around neighbours of each: about half a MiB in the supervisor), so that
/// what stays mapped, and locked, through the wait is this function's own code and
/// libc's `syscall`: from the unmapping to the end of the wait only raw system calls
/// run (no allocation, no errno). Mappings locked by mlockall are unlocked for the
/// unmapping and locked again on fault after it. Returns false (the caller then waits
/// its usual way) if the wait itself failed.
fn wait_exit_unmapped(pidfd: i32) -> bool {
    let ranges = clean_file_mappings();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let locked = status.lines().find_map(|l| l.strip_prefix("VmLck:")).is_some_and(|v| v.trim() != "0 kB");
    for &(start, end, _) in &ranges {
        // SAFETY: whole clean file mappings of this process (no private copy of a
        // page): unlocked, MADV_DONTNEED unmaps page-cache pages that the next access
        // maps again unchanged; the range is then locked as mlockall left it.
        unsafe {
            if locked && libc::syscall(libc::SYS_munlock, start as libc::c_long, (end - start) as libc::c_long) != 0 {
                continue;
            }
            libc::syscall(libc::SYS_madvise, start as libc::c_long, (end - start) as libc::c_long, libc::MADV_DONTNEED as libc::c_long);
            if locked {
                libc::syscall(libc::SYS_mlock2, start as libc::c_long, (end - start) as libc::c_long, libc::MLOCK_ONFAULT as libc::c_long);
            }
        }
    }
    // Freeing the list would run malloc's code: it is kept (a few KiB, once).
    std::mem::forget(ranges);
    let mut pfd = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the call; no timeout and no signal mask (null).
    let r = unsafe {
        let (none, sigset_bytes): (libc::c_long, libc::c_long) = (0, 8);
        libc::syscall(libc::SYS_ppoll, &mut pfd as *mut libc::pollfd as libc::c_long, 1 as libc::c_long, none, none, sigset_bytes)
    };
    r == 1 && pfd.revents & libc::POLLIN != 0
}

/// Which pages of the clean file mappings (code, read-only data) this process has
/// mapped, from /proc/self/pagemap: taken before work that runs rarely and touches
/// much code (a save to the state database, on the saver thread), so that what was
/// mapped meanwhile can be unmapped after it ([`MappedPages::release_new`]). The page
/// tables are the process's: a page another thread (the loop) first touched in that
/// time is unmapped too, and mapped again from the page cache at its next touch.
pub struct MappedPages {
    /// Each mapping's start and, per page, whether it was mapped.
    maps: Vec<(usize, Vec<bool>)>,
    /// Whether this process locks its memory (mlockall): what is unmapped is locked
    /// again (on fault) after.
    locked: bool,
}

/// A page table entry in /proc/PID/pagemap: present, and a file page (not an
/// anonymous copy).
const PM_PRESENT: u64 = 1 << 63;
const PM_FILE: u64 = 1 << 61;

impl MappedPages {
    /// The clean file mappings' pages as mapped now; `None` if /proc cannot say.
    pub fn now() -> Option<MappedPages> {
        let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
        let pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
        let mut out = Vec::new();
        for line in maps.lines() {
            let mut w = line.split_ascii_whitespace();
            let (Some(range), Some(perms), Some(path)) = (w.next(), w.next(), w.nth(3)) else { continue };
            let Some((a, b)) = range.split_once('-') else { continue };
            let (Ok(start), Ok(end)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else { continue };
            if !matches!(perms, "r-xp" | "r--p") || !path.starts_with('/') {
                continue;
            }
            let mut buf = vec![0u8; (end - start) / 4096 * 8];
            std::os::unix::fs::FileExt::read_exact_at(&pagemap, &mut buf, (start / 4096 * 8) as u64).ok()?;
            let entry = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
            out.push((start, buf.chunks_exact(8).map(|c| entry(c) & (PM_PRESENT | PM_FILE) == PM_PRESENT | PM_FILE).collect()));
        }
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let locked = status.lines().find_map(|l| l.strip_prefix("VmLck:")).is_some_and(|v| v.trim() != "0 kB");
        Some(MappedPages { maps: out, locked })
    }

    /// Unmaps the clean file pages mapped since `self` was taken (they stay in the page
    /// cache; the next touch maps them again), keeping the mappings locked as they
    /// were (mlock on fault) in a process that locks its memory. Returns how many
    /// pages it unmapped.
    pub fn release_new(&self) -> usize {
        let Some(now) = MappedPages::now() else { return 0 };
        let mut released = 0;
        for (start, pages) in &now.maps {
            let Some((_, before)) = self.maps.iter().find(|(s, b)| s == start && b.len() == pages.len()) else { continue };
            let new = |i: usize| pages[i] && !before[i];
            let mut i = 0;
            while i < pages.len() {
                if !new(i) {
                    i += 1;
                    continue;
                }
                let run = i;
                while i < pages.len() && new(i) {
                    i += 1;
                }
                let (addr, len) = ((start + run * 4096) as *mut libc::c_void, (i - run) * 4096);
                // SAFETY: whole pages of a read-only private file mapping of this
                // process that hold no private copy (pagemap: file pages); unlocked,
                // MADV_DONTNEED unmaps them and the next access maps the page cache's
                // again, unchanged. The range is locked again as mlockall left it.
                unsafe {
                    let unlocked = libc::munlock(addr, len) == 0;
                    if unlocked && libc::madvise(addr, len, libc::MADV_DONTNEED) == 0 {
                        released += i - run;
                    }
                    if unlocked && self.locked {
                        libc::mlock2(addr, len, libc::MLOCK_ONFAULT);
                    }
                }
            }
        }
        released
    }
}

/// The supervisor: waits for the daemon to exit, however it exits, and thaws every app
/// within a second of it, and lifts the budget's cap.
pub fn supervise(daemon_pid: i32, root: &str, layout: Option<&str>, unboost: bool) -> Result<()> {
    let h = Hierarchies::detect()?;
    let p = Pidfd::open(daemon_pid)?;
    // Only a failure to protect itself: the supervisor still works.
    let _ = protect_self();
    if !wait_exit_unmapped(p.raw_fd()) {
        loop {
            match p.wait_exit(Duration::from_secs(3600)) {
                Ok(()) => break,
                Err(Error::Timeout { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
    }
    undo_after_exit(&h, root, layout, unboost).map(|_| ())
}

/// What a supervisor undoes once its daemon has exited: the foreground's boost, the
/// freezes and the budget's cap under `root` (and `layout`). Returns false, undoing
/// nothing, when a daemon started since holds `root` ([`super::Locks`]): the apps, their
/// freezes and the cap are that daemon's now.
pub fn undo_after_exit(h: &Hierarchies, root: &str, layout: Option<&str>, unboost: bool) -> Result<bool> {
    let Some(_held) = super::Locks::unless_held(h, root)? else {
        return Ok(false);
    };
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
        thaw_layout(h, l)?;
    }
    thaw_all(h, root)?;
    // The budget's cap goes with the daemon that would have killed within it.
    crate::cgroup::AppGroup::planned(h, root).lift_memory_limit()?;
    Ok(true)
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
    /// The run so far as `floe sim --json` prints a run (JSON).
    Run,
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
            ["run"] => Ok(Request::Run),
            ["reclaim", app] => Ok(Request::Reclaim(app, None)),
            ["reclaim", app, mib] => Ok(Request::Reclaim(app, Some(mib))),
            ["prepage", app] => Ok(Request::Prepage(app, None)),
            ["prepage", app, mib] => Ok(Request::Prepage(app, Some(mib))),
            _ => Err(format!(
                "unknown request `{}` (fg APP, launch-done APP [MS], status, apps, metrics, run, reclaim APP [MIB], prepage APP [MIB])",
                line.trim()
            )),
        }
    }
}

/// Sends `request` to the daemon at `socket` and returns its reply. A request the
/// daemon would not understand is refused before connecting.
pub fn ctl(socket: &Path, request: &str) -> Result<String> {
    // The daemon answers within ANSWER_DEADLINE or says it could not; a little more
    // here covers a daemon too stuck to say even that.
    ctl_within(socket, request, ANSWER_DEADLINE + REQUEST_DEADLINE)
}

/// [`ctl`], waiting at most `deadline` for the answer.
fn ctl_within(socket: &Path, request: &str, deadline: Duration) -> Result<String> {
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
    s.set_read_timeout(Some(deadline)).map_err(crate::io_err(socket))?;
    let mut out = String::new();
    match std::io::Read::read_to_string(&mut s, &mut out) {
        Ok(_) => Ok(out),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => Err(Error::Unsupported(format!(
            "{}: the daemon did not answer within {:.1} s (its loop is stuck)",
            socket.display(),
            deadline.as_secs_f64()
        ))),
        Err(e) => Err(crate::io_err(socket)(e)),
    }
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
        assert_eq!(Request::parse("run"), Ok(Request::Run));
        assert_eq!(Request::parse("reclaim maps"), Ok(Request::Reclaim("maps", None)));
        assert_eq!(Request::parse("reclaim maps 64"), Ok(Request::Reclaim("maps", Some("64"))));
        assert_eq!(Request::parse("prepage maps 8"), Ok(Request::Prepage("maps", Some("8"))));
        for bad in ["fg", "fg a b", "status now", "run all", "bogus", "", "launch-done a 1 2", "reclaim", "prepage a 1 2"] {
            assert!(Request::parse(bad).unwrap_err().contains("unknown request"), "{bad:?}");
        }
        let e = ctl(Path::new("/nonexistent/floe.sock"), "status").unwrap_err().to_string();
        assert!(e.contains("cannot reach the daemon") && e.contains("is the daemon running"), "{e}");
        assert!(ctl(Path::new("/nonexistent/floe.sock"), "bogus").unwrap_err().to_string().contains("unknown request"));
    }

    /// A daemon that takes the request and never answers (its loop stuck) makes `floe
    /// ctl` fail with that said, not wait forever.
    #[test]
    fn a_daemon_that_never_answers_is_an_error_not_a_wait() {
        let dir = crate::scratch_dir("ctl-deadline");
        let sock = dir.join("stuck.sock");
        let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let stuck = ctl_within(&sock, "status", Duration::from_millis(200)).unwrap_err().to_string();
        assert!(stuck.contains("did not answer within 0.2 s"), "{stuck}");
        drop(held.join().unwrap());
        let _ = std::fs::remove_dir_all(dir);
    }

    /// What ran between two snapshots of the mapped code pages is unmapped again, and
    /// only that: the code runs on and maps it back on a touch.
    #[test]
    fn pages_mapped_since_a_snapshot_are_released() {
        // Nothing mapped but what runs from here on (and what other tests touch).
        release_startup_pages();
        let before = MappedPages::now().expect("pagemap");
        let dir = crate::scratch_dir("mapped-pages");
        let mut store = crate::state::Store::open(&dir.join("s.db")).unwrap();
        store.save("ice", "{}").unwrap();
        assert!(before.release_new() > 0, "the save mapped code pages");
        store.save("ice", "{\"a\": 1}").unwrap();
        assert_eq!(store.load("ice").unwrap().as_deref(), Some("{\"a\": 1}"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The supervisor's wait unmaps the clean pages mapped before it and still sees
    /// the process exit; the code runs on after it.
    #[test]
    fn an_unmapped_wait_sees_the_exit() {
        let mut child = std::process::Command::new("sleep").arg("0.3").spawn().unwrap();
        let p = Pidfd::open(child.id() as i32).unwrap();
        let t = Instant::now();
        assert!(wait_exit_unmapped(p.raw_fd()));
        assert!(t.elapsed() >= Duration::from_millis(200), "{:?}", t.elapsed());
        child.wait().unwrap();
        assert_eq!(Request::parse("status"), Ok(Request::Status));
    }

    /// Start-up's pages are unmapped, not lost: the code runs on, the heap and the
    /// relocated data keep their contents, and the clean pages come back on a touch.
    #[test]
    fn released_startup_pages_come_back_unchanged() {
        let kept: Vec<String> = (0..1000).map(|i| format!("value {i}")).collect();
        assert!(release_startup_pages() > 0, "the test binary's code was mapped");
        assert_eq!(kept[999], "value 999");
        assert_eq!(Request::parse("status"), Ok(Request::Status));
        assert!(std::fs::read_to_string("/proc/self/status").unwrap().contains("VmRSS"));
    }
}
