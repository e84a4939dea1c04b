//! Processes as the rules see them: /proc scanning for new processes, rule matching,
//! and the guard every action passes.
use super::*;
use crate::read;
use std::path::Path;

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

    /// Whether a process of this executable and command line may match (its uid
    /// unknown yet).
    pub fn may_match(&self, exe: &str, cmdline: &str) -> bool {
        self.exe.as_ref().is_none_or(|e| e == exe) && self.cmdline.as_ref().is_none_or(|c| cmdline.contains(c.as_str()))
    }
}

fn proc_info(pid: i32, buf: &mut Vec<u8>) -> Option<ProcInfo> {
    proc_info_if(pid, buf, &|_, _| true)
}

/// [`proc_info`], its status (uid and name) read only for a process whose executable
/// and command line `keep` takes: a process it does not comes back without them
/// (uid `u32::MAX`, no name). One caught inside execve (no command line yet) always
/// comes back, for a later look.
fn proc_info_if(pid: i32, buf: &mut Vec<u8>, keep: &dyn Fn(&str, &str) -> bool) -> Option<ProcInfo> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?.display().to_string();
    let cmdline = String::from_utf8_lossy(super::kfile::read_once(&format!("/proc/{pid}/cmdline"), buf).ok()?).into_owned();
    let cmdline = cmdline.split('\0').filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
    if !cmdline.is_empty() && !keep(&exe, &cmdline) {
        return Some(ProcInfo { pid, exe, cmdline, uid: u32::MAX, comm: String::new() });
    }
    let status = String::from_utf8_lossy(super::kfile::read_once(&format!("/proc/{pid}/status"), buf).ok()?);
    let field = |k: &str| status.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_whitespace().nth(1)).unwrap_or("").to_string();
    Some(ProcInfo { pid, exe, cmdline, uid: field("Uid:").parse().unwrap_or(u32::MAX), comm: field("Name:") })
}

/// Every user process (kernel threads have no exe and are never listed).
pub fn processes() -> Vec<ProcInfo> {
    ProcScanner::default().scan()
}

/// Finds user processes without rereading what cannot have changed.
///
/// With the kernel's process events ([`ProcEvents`], root): /proc is listed once, then
/// only the processes that exec'd or were forked since the last scan are read, and a
/// scan on a machine where no process started or exec'd reads nothing; if events were
/// lost (the socket's buffer overran), the next scan lists /proc again.
///
/// Without them: a process is read when first seen and once more at the next scan (it
/// may have exec'd in between, as a launcher does), then kept; and /proc is not listed
/// at all while the kernel's last created pid (/proc/loadavg) has not moved for two
/// scans, since then no process is new.
#[derive(Default)]
pub struct ProcScanner {
    /// Known processes and how many scans have seen them.
    known: std::collections::BTreeMap<i32, (Option<ProcInfo>, u8)>,
    last_pid: Option<String>,
    quiet_scans: u8,
    events: Option<ProcEvents>,
    /// With events: whether /proc must be listed at the next scan (at first, and after
    /// lost events), and processes caught inside execve, read again at the next scan.
    relist: bool,
    retry: Vec<i32>,
    /// Where each process's files are read.
    buf: Vec<u8>,
}

impl ProcScanner {
    /// A scanner that follows the kernel's process events where it can (root), else
    /// lists /proc.
    pub fn with_events() -> ProcScanner {
        ProcScanner { events: ProcEvents::open(), relist: true, ..ProcScanner::default() }
    }

    /// Whether the scanner follows the kernel's process events.
    pub fn follows_events(&self) -> bool {
        self.events.is_some()
    }

    /// The processes that may be new to the caller: every user process at the first
    /// scan; after it, with events, those that started or exec'd since the last scan;
    /// without them, every process known.
    pub fn scan(&mut self) -> Vec<ProcInfo> {
        self.scan_where(&|_, _| true)
    }

    /// [`ProcScanner::scan`], with events only the processes whose executable and
    /// command line `keep` takes (the others' status is not read): what a new process
    /// on a busy machine costs.
    pub fn scan_where(&mut self, keep: &dyn Fn(&str, &str) -> bool) -> Vec<ProcInfo> {
        if let Some(ev) = &self.events {
            let changed = ev.drain();
            let relist = std::mem::take(&mut self.relist) || changed.is_none();
            let pids: Vec<i32> = if relist {
                let Ok(dir) = std::fs::read_dir("/proc") else { return vec![] };
                dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()).collect()
            } else {
                let mut p = changed.unwrap_or_default();
                p.append(&mut self.retry);
                p.sort_unstable();
                p.dedup();
                p
            };
            self.retry.clear();
            let mut out = Vec::new();
            for pid in pids {
                match proc_info_if(pid, &mut self.buf, keep) {
                    Some(p) if p.cmdline.is_empty() => self.retry.push(pid),
                    Some(p) if keep(&p.exe, &p.cmdline) => out.push(p),
                    Some(_) | None => {}
                }
            }
            return out;
        }
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
                    // empty cmdline): not a read that counts. A kernel thread (no exe,
                    // ever) counts, so it is not read again at every scan.
                    let info = proc_info(pid, &mut self.buf);
                    if info.as_ref().is_none_or(|p| !p.cmdline.is_empty()) {
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

/// The kernel's process events (the proc connector, a netlink socket; root): forks of
/// processes (not of threads) and execs, filtered in the kernel so that nothing else
/// is queued, and read only when the scanner looks.
pub struct ProcEvents {
    fd: std::os::fd::OwnedFd,
}

/// The proc connector's numbers (linux/connector.h, linux/cn_proc.h).
const NETLINK_CONNECTOR: libc::c_int = 11;
const CN_IDX_PROC: u32 = 1;
const CN_VAL_PROC: u32 = 1;
const PROC_CN_MCAST_LISTEN: u32 = 1;
const PROC_EVENT_NONE: u32 = 0;
const PROC_EVENT_FORK: u32 = 1;
const PROC_EVENT_EXEC: u32 = 2;
/// The native-endian word at `at` of a message.
fn word(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
}

/// Where a proc_event starts in a message: after the nlmsghdr (16 bytes) and the
/// cn_msg header (20).
const EVENT_AT: usize = 36;

impl ProcEvents {
    /// Subscribes; None where the kernel refuses (no CAP_NET_ADMIN, no connector).
    pub fn open() -> Option<ProcEvents> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // SAFETY: socket has no memory preconditions; the fd is owned at once.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, NETLINK_CONNECTOR) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a fresh fd nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let raw = fd.as_raw_fd();
        // A classic BPF filter: keep forks whose child is a process (its pid is its
        // thread group's), execs and acknowledgements; drop everything else (thread
        // creation, exits). Loads are big-endian: the constants are compared as the
        // loads see them.
        let be = |v: u32| u32::from_be_bytes(v.to_ne_bytes());
        let at = |off: usize| (EVENT_AT + off) as u32;
        let (ld, jeq, jeqx, ret, tax) = (
            (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_X) as u16,
            (libc::BPF_RET | libc::BPF_K) as u16,
            (libc::BPF_MISC | libc::BPF_TAX) as u16,
        );
        let f = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
        let prog = [
            f(ld, 0, 0, at(0)),                // 0: what
            f(jeq, 6, 0, be(PROC_EVENT_EXEC)), // 1: exec: keep
            f(jeq, 5, 0, be(PROC_EVENT_NONE)), // 2: an acknowledgement: keep
            f(jeq, 0, 5, be(PROC_EVENT_FORK)), // 3: anything else: drop
            f(ld, 0, 0, at(24)),               // 4: the fork's child_pid
            f(tax, 0, 0, 0),                   // 5
            f(ld, 0, 0, at(28)),               // 6: its child_tgid
            f(jeqx, 0, 1, 0),                  // 7: a process, not a thread: keep
            f(ret, 0, 0, u32::MAX),            // 8: keep
            f(ret, 0, 0, 0),                   // 9: drop
        ];
        let fprog = libc::sock_fprog { len: prog.len() as u16, filter: prog.as_ptr() as *mut _ };
        let set = |opt, val: *const libc::c_void, len: usize| {
            // SAFETY: `val` points to `len` valid bytes for the duration of the call.
            unsafe { libc::setsockopt(raw, libc::SOL_SOCKET, opt, val, len as libc::socklen_t) == 0 }
        };
        if !set(libc::SO_ATTACH_FILTER, (&fprog as *const libc::sock_fprog).cast(), std::mem::size_of::<libc::sock_fprog>()) {
            return None;
        }
        // Room for a busy second's events between two scans (forced past rmem_max
        // where allowed; otherwise the default).
        let room: libc::c_int = 4 << 20;
        if !set(libc::SO_RCVBUFFORCE, (&room as *const libc::c_int).cast(), 4) {
            set(libc::SO_RCVBUF, (&room as *const libc::c_int).cast(), 4);
        }
        // SAFETY: sockaddr_nl is plain data; zero is a valid value.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        addr.nl_groups = CN_IDX_PROC;
        // SAFETY: a valid address of the given size.
        if unsafe { libc::bind(raw, (&addr as *const libc::sockaddr_nl).cast(), std::mem::size_of::<libc::sockaddr_nl>() as u32) } != 0 {
            return None;
        }
        // nlmsghdr (len, type NLMSG_DONE, flags, seq, pid), cn_msg (idx, val, seq,
        // ack, len, flags), the operation.
        let mut msg = Vec::with_capacity(40);
        msg.extend_from_slice(&40u32.to_ne_bytes());
        msg.extend_from_slice(&(libc::NLMSG_DONE as u16).to_ne_bytes());
        msg.extend_from_slice(&0u16.to_ne_bytes());
        for v in [0u32, 0, CN_IDX_PROC, CN_VAL_PROC, 0, 0] {
            msg.extend_from_slice(&v.to_ne_bytes());
        }
        msg.extend_from_slice(&4u16.to_ne_bytes());
        msg.extend_from_slice(&0u16.to_ne_bytes());
        msg.extend_from_slice(&PROC_CN_MCAST_LISTEN.to_ne_bytes());
        // SAFETY: a valid buffer of msg.len() bytes.
        if unsafe { libc::send(raw, msg.as_ptr().cast(), msg.len(), 0) } != msg.len() as isize {
            return None;
        }
        // The kernel acknowledges a subscription it took (error 0); one it ignores (a
        // process outside the initial pid namespace) gets no answer, and one it
        // refuses an error: then no event would ever come.
        let start = std::time::Instant::now();
        let mut buf = [0u8; 256];
        while let Some(left) = Duration::from_millis(500).checked_sub(start.elapsed()) {
            let mut p = libc::pollfd { fd: raw, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut p, 1, left.as_millis() as i32 + 1) };
            // SAFETY: a valid buffer; non-blocking.
            let n = unsafe { libc::recv(raw, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
            if n > 0 && word(&buf[..n as usize], EVENT_AT) == Some(PROC_EVENT_NONE) {
                return (word(&buf[..n as usize], EVENT_AT + 16) == Some(0)).then_some(ProcEvents { fd });
            }
        }
        None
    }

    /// The processes forked or exec'd since the last drain (thread group ids), or None
    /// if some events were lost.
    pub fn drain(&self) -> Option<Vec<i32>> {
        use std::os::fd::AsRawFd;
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: a valid buffer; non-blocking.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
            if n < 0 {
                return match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => Some(out),
                    Some(libc::EINTR) => continue,
                    // ENOBUFS: the buffer overran and events were dropped.
                    _ => None,
                };
            }
            let m = &buf[..n as usize];
            let pid = match word(m, EVENT_AT) {
                Some(PROC_EVENT_FORK) => word(m, EVENT_AT + 28),
                Some(PROC_EVENT_EXEC) => word(m, EVENT_AT + 20),
                _ => None,
            };
            if let Some(p) = pid {
                out.push(p as i32);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

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

    /// A process no rule may match by executable and command line is not read further
    /// (its status: uid and name); one that may is read whole, as before.
    #[test]
    fn only_a_process_a_rule_may_match_has_its_status_read() {
        let me = std::process::id() as i32;
        let mut buf = Vec::new();
        let full = proc_info(me, &mut buf).expect("this process");
        assert!(!full.cmdline.is_empty() && !full.comm.is_empty());
        let skipped = proc_info_if(me, &mut buf, &|_, _| false).unwrap();
        assert_eq!((skipped.uid, skipped.comm.as_str()), (u32::MAX, ""));
        assert_eq!((&skipped.exe, &skipped.cmdline), (&full.exe, &full.cmdline));
        let exe = full.exe.clone();
        let kept = proc_info_if(me, &mut buf, &|e, _| e == exe).unwrap();
        assert_eq!(kept, full);
        let rule = |exe: Option<&str>, cmdline: Option<&str>| AppRule {
            name: "a".into(),
            exe: exe.map(Into::into),
            cmdline: cmdline.map(Into::into),
            uid: Some(12345),
            perceptible: false,
            saves_context: false,
            state_marker: None,
            priority: floe_core::PriorityClass::Medium,
        };
        assert!(rule(None, Some("cam")).may_match("/bin/x", "x --cam"), "the uid is not looked at");
        assert!(!rule(None, Some("cam")).may_match("/bin/x", "x --maps"));
        assert!(!rule(Some("/bin/y"), None).may_match("/bin/x", "x"));
        assert!(!rule(None, Some("cam")).matches(&ProcInfo { cmdline: "x --cam".into(), uid: u32::MAX, ..ProcInfo::default() }));
    }
}
