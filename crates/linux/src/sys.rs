//! Thin, safe wrappers over the system calls floe needs that std does not offer:
//! pidfds (kill without PID-reuse races, wait for exit), `process_madvise` and PSI
//! triggers (a pressure file armed with a threshold, woken through `poll`).

use crate::{io_err, Error, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// `madvise` advice floe uses with `process_madvise`.
pub const MADV_WILLNEED: i32 = libc::MADV_WILLNEED;
pub const MADV_COLD: i32 = 20;
pub const MADV_PAGEOUT: i32 = 21;

fn last_err(what: &str) -> Error {
    Error::Io { path: what.to_string(), err: std::io::Error::last_os_error() }
}

/// Waits up to `timeout` for `events` on `fd`; true if they arrived.
fn poll_one(fd: i32, events: i16, timeout: Duration) -> Result<bool> {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::Io { path: "poll".into(), err: e });
        }
        return Ok(r > 0 && p.revents & events != 0);
    }
}

/// A process handle that cannot be confused with a later process reusing its PID.
#[derive(Debug)]
pub struct Pidfd {
    fd: OwnedFd,
    pid: i32,
}

impl Pidfd {
    pub fn open(pid: i32) -> Result<Pidfd> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(last_err(&format!("pidfd_open({pid})")));
        }
        // SAFETY: the kernel just returned this fd to us; nobody else owns it.
        Ok(Pidfd { fd: unsafe { OwnedFd::from_raw_fd(fd as i32) }, pid })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Sends `sig` to exactly this process (ESRCH if it already exited).
    pub fn send_signal(&self, sig: i32) -> Result<()> {
        // SAFETY: a valid pidfd, a signal number, no siginfo, no flags.
        let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, self.fd.as_raw_fd(), sig, std::ptr::null::<libc::siginfo_t>(), 0) };
        if r < 0 {
            return Err(last_err(&format!("pidfd_send_signal({}, {sig})", self.pid)));
        }
        Ok(())
    }

    /// Frees the memory of this process, which a fatal signal has already hit, in the
    /// caller's context (process_mrelease, Linux 5.15), as lmkd does: its memory comes
    /// back without waiting for the victim to be scheduled and run its own exit, which
    /// on a busy machine takes tens of ms. Best effort: false where the kernel
    /// refuses (too old, or the process is not dying or already gone).
    pub fn release_memory(&self) -> bool {
        // SAFETY: a valid pidfd and no flags.
        unsafe { libc::syscall(libc::SYS_process_mrelease, self.fd.as_raw_fd(), 0) == 0 }
    }

    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Waits until the process has exited (the pidfd polls readable), up to `timeout`.
    pub fn wait_exit(&self, timeout: Duration) -> Result<()> {
        if poll_one(self.fd.as_raw_fd(), libc::POLLIN, timeout)? {
            Ok(())
        } else {
            Err(Error::Timeout { what: format!("exit of pid {}", self.pid), ms: timeout.as_millis() as u64 })
        }
    }

    /// Applies `advice` to the given ranges of this process's memory; returns the bytes
    /// advised. (process_madvise, Linux 5.10+; at most UIO_MAXIOV = 1,024 ranges a call,
    /// so more go in several.) The kernel stops a call at the first range it refuses,
    /// reporting what it did before it: a range it refuses for its mapping (EINVAL:
    /// locked, PFN-mapped or hugetlb memory for MADV_PAGEOUT; ENOMEM: unmapped since the
    /// ranges were read) is passed over and the ones after it are still advised. The
    /// first such refusal is the error only when nothing at all was advised.
    pub fn madvise(&self, ranges: &[(usize, usize)], advice: i32) -> Result<usize> {
        let (mut total, mut refused, mut rest) = (0, None, ranges);
        while !rest.is_empty() {
            let chunk = &rest[..rest.len().min(1024)];
            let iov: Vec<libc::iovec> =
                chunk.iter().map(|&(addr, len)| libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len }).collect();
            // SAFETY: the iovecs describe addresses in the *target* process; the kernel
            // validates them there. Our buffer lives across the call.
            let r = unsafe { libc::syscall(libc::SYS_process_madvise, self.fd.as_raw_fd(), iov.as_ptr(), iov.len(), advice, 0u32) };
            // The ranges the kernel finished (it reports whole ranges only).
            let done = if r < 0 {
                let e = std::io::Error::last_os_error();
                if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOMEM)) {
                    return Err(Error::Io { path: format!("process_madvise({}, advice {advice})", self.pid), err: e });
                }
                refused.get_or_insert(Error::Io {
                    path: format!("process_madvise({}, advice {advice}, {:#x})", self.pid, chunk[0].0),
                    err: e,
                });
                0
            } else {
                total += r as usize;
                let (mut left, mut done) = (r as usize, 0);
                while done < chunk.len() && left >= chunk[done].1 {
                    left -= chunk[done].1;
                    done += 1;
                }
                done
            };
            // Past the finished ranges, and the one refused after them if any.
            rest = if done == chunk.len() { &rest[done..] } else { &rest[done + 1..] };
        }
        match refused {
            Some(e) if total == 0 => Err(e),
            _ => Ok(total),
        }
    }

    /// Pages out at most `limit` of the resident pages in `ranges` (MADV_PAGEOUT on
    /// those pages only, in address order, found in /proc/PID/pagemap); returns how
    /// many it advised. The kernel still skips pages it cannot take (shared, locked).
    pub fn pageout_pages(&self, ranges: &[(usize, usize)], limit: u64) -> Result<u64> {
        self.advise_pages(ranges, limit, false).map(|(n, _)| n)
    }

    /// Reads at most `limit` of the swapped-out pages in `ranges` back ahead of use
    /// (MADV_WILLNEED on those pages only, in address order); returns how many.
    pub fn prepage_pages(&self, ranges: &[(usize, usize)], limit: u64) -> Result<u64> {
        self.advise_pages(ranges, limit, true).map(|(n, _)| n)
    }

    /// Reads back ahead of use (MADV_WILLNEED) at most `limit` pages of `ranges` that
    /// are in swap (`in_swap`), or pages out (MADV_PAGEOUT) as many that are resident, as
    /// pagemap shows them, in address order. Returns the pages advised and the address
    /// past the last page chosen (None if none was).
    pub(crate) fn advise_pages(&self, ranges: &[(usize, usize)], limit: u64, in_swap: bool) -> Result<(u64, Option<usize>)> {
        if limit == 0 {
            return Ok((0, None));
        }
        let take = first_pages(self.pid, ranges, in_swap, limit)?;
        let advice = if in_swap { MADV_WILLNEED } else { MADV_PAGEOUT };
        let n = (self.madvise(&page_runs(&take), advice)? / 4096) as u64;
        Ok((n, take.last().map(|&last| (last as usize + 1) * 4096)))
    }
}

/// Where each page of some ranges of a process is, from /proc/PID/pagemap (bit 63:
/// present in RAM, bit 62: in swap). Returns (swapped, present) virtual page numbers,
/// sorted. Needs root for nothing here (PFNs are not read).
pub fn page_locations(pid: i32, ranges: &[(usize, usize)]) -> Result<(Vec<u64>, Vec<u64>)> {
    let (mut swapped, mut present) = (Vec::new(), Vec::new());
    walk_pagemap(pid, ranges, |first, entries| {
        let (s, p) = parse_pagemap(first, entries);
        swapped.extend(s);
        present.extend(p);
        true
    })?;
    swapped.sort_unstable();
    present.sort_unstable();
    Ok((swapped, present))
}

/// The first `limit` pages of `ranges`, in the order given, that are in swap
/// (`in_swap`) or resident (not), from /proc/PID/pagemap read a chunk at a time, so
/// that finding a few pages in a large mapping does not read all of its entries.
pub fn first_pages(pid: i32, ranges: &[(usize, usize)], in_swap: bool, limit: u64) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    walk_pagemap(pid, ranges, |first, entries| {
        let (swapped, present) = parse_pagemap(first, entries);
        let found = if in_swap { swapped } else { present };
        out.extend(found.into_iter().take((limit - out.len() as u64) as usize));
        (out.len() as u64) < limit
    })?;
    Ok(out)
}

/// Reads the pagemap entries of `ranges` a chunk (4,096 pages) at a time and hands each
/// chunk, with its first virtual page, to `f`, until `f` says stop. A mapping that
/// vanished meanwhile reads short: only what was read is handed on.
fn walk_pagemap(pid: i32, ranges: &[(usize, usize)], mut f: impl FnMut(u64, &[u8]) -> bool) -> Result<()> {
    use std::os::unix::fs::FileExt;
    const CHUNK: usize = 4096;
    let path = format!("/proc/{pid}/pagemap");
    let file = std::fs::File::open(&path).map_err(crate::io_err(&path))?;
    let mut buf = vec![0u8; CHUNK * 8];
    for &(addr, len) in ranges {
        let (mut at, end) = ((addr / 4096) as u64, ((addr + len) / 4096) as u64);
        while at < end {
            let n = ((end - at) as usize).min(CHUNK);
            let got = file.read_at(&mut buf[..n * 8], at * 8).map_err(crate::io_err(&path))? / 8;
            if got == 0 {
                break;
            }
            if !f(at, &buf[..got * 8]) {
                return Ok(());
            }
            at += got as u64;
        }
    }
    Ok(())
}

/// Splits pagemap entries starting at virtual page `first` into swapped and present.
pub fn parse_pagemap(first: u64, bytes: &[u8]) -> (Vec<u64>, Vec<u64>) {
    let (mut swapped, mut present) = (Vec::new(), Vec::new());
    for (i, e) in bytes.chunks_exact(8).enumerate() {
        let e = u64::from_ne_bytes(e.try_into().expect("8 bytes"));
        if e >> 63 & 1 == 1 {
            present.push(first + i as u64);
        } else if e >> 62 & 1 == 1 {
            swapped.push(first + i as u64);
        }
    }
    (swapped, present)
}

/// Runs of consecutive virtual pages as (address, length) byte ranges.
pub fn page_runs(pages: &[u64]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &p in pages {
        let a = (p * 4096) as usize;
        match out.last_mut() {
            Some((s, l)) if *s + *l == a => *l += 4096,
            _ => out.push((a, 4096)),
        }
    }
    out
}

/// The PID in a name floe gives scratch groups and files, `PREFIX` + PID + `-...`
/// (`floe-check-PID-CHILD`), if `name` is one.
pub fn pid_after(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.split('-').next()?.parse().ok()
}

/// Whether `name` (see [`pid_after`]) was left by a process that is gone: neither this
/// one nor any live process, so what it names is nobody's.
pub fn left_by_dead_process(name: &str, prefix: &str) -> bool {
    pid_after(name, prefix).is_some_and(|pid| pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// Sets a process's nice value (CFS weight); a process gone meanwhile is no error worth
/// reporting, so the result is not returned.
pub fn set_nice(pid: i32, nice: i32) {
    // SAFETY: setpriority takes no pointers; a stale pid fails with ESRCH.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, nice) };
}

/// A process's nice value: the 19th field of /proc/PID/stat.
pub fn nice_of(pid: i32) -> Option<i32> {
    parse_stat_nice(&crate::read(format!("/proc/{pid}/stat")).ok()?)
}

/// The nice value of a /proc/PID/stat line (fields after the command in parentheses,
/// which may itself hold spaces and parentheses).
pub fn parse_stat_nice(stat: &str) -> Option<i32> {
    stat.rsplit_once(')')?.1.split_whitespace().nth(16)?.parse().ok()
}

/// The anonymous, writable mappings of a process (its heap and anonymous mmaps), from
/// /proc/PID/maps, that `MADV_PAGEOUT` can compress ([`advisable`]).
pub fn anon_ranges(pid: i32) -> Result<Vec<(usize, usize)>> {
    let path = format!("/proc/{pid}/maps");
    let text = crate::read(&path)?;
    advisable(pid, parse_anon_ranges(&text))
}

/// `ranges` of process `pid` without the mappings MADV_PAGEOUT refuses
/// ([`parse_unadvisable`]): a locked mapping's pages would count against a page-out's
/// limit and never go. /proc/PID/smaps (which walks every page table to count) is read
/// only when /proc/PID/status says some memory is locked (VmLck).
pub fn advisable(pid: i32, ranges: Vec<(usize, usize)>) -> Result<Vec<(usize, usize)>> {
    let path = format!("/proc/{pid}/status");
    let locked = crate::procfs::parse_kb_table(&path, &crate::read(&path)?)?.get("VmLck").copied().unwrap_or(0);
    if locked == 0 {
        return Ok(ranges);
    }
    let smaps = crate::read(format!("/proc/{pid}/smaps"))?;
    Ok(without(&ranges, &parse_unadvisable(&smaps)))
}

/// The mappings in /proc/PID/smaps whose VmFlags make MADV_PAGEOUT refuse them
/// (`can_madv_lru_vma`): `lo` locked, `pf` PFN-mapped, `ht` hugetlb.
pub fn parse_unadvisable(smaps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut vma = None;
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if let Some(r) = vma.take() {
                if flags.split_whitespace().any(|f| matches!(f, "lo" | "pf" | "ht")) {
                    out.push(r);
                }
            }
        } else if let Some((a, b)) = line.split_whitespace().next().and_then(|r| r.split_once('-')) {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                vma = Some((a, b - a));
            }
        }
    }
    out
}

/// `ranges` with every part that lies in one of `holes` cut out.
pub fn without(ranges: &[(usize, usize)], holes: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &(a, len) in ranges {
        let mut parts = vec![(a, a + len)];
        for &(h, hlen) in holes {
            let he = h + hlen;
            parts = parts
                .into_iter()
                .flat_map(|(s, e)| {
                    if he <= s || e <= h {
                        vec![(s, e)]
                    } else {
                        [(s, h.max(s)), (he.min(e), e)].into_iter().filter(|&(s, e)| s < e).collect()
                    }
                })
                .collect();
        }
        out.extend(parts.into_iter().map(|(s, e)| (s, e - s)));
    }
    out
}

pub fn parse_anon_ranges(maps: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let range = it.next()?;
            let perms = it.next()?;
            let (_off, _dev, inode) = (it.next()?, it.next()?, it.next()?);
            let name = it.next();
            let anon = inode == "0" && matches!(name, None | Some("[heap]"));
            if !anon || !perms.starts_with("rw") || !perms.ends_with('p') {
                return None;
            }
            let (a, b) = range.split_once('-')?;
            let (a, b) = (usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?);
            Some((a, b - a))
        })
        .collect()
}

/// A PSI trigger: a pressure file (system-wide /proc/pressure/memory or a cgroup's
/// memory.pressure) armed with "some|full STALL_US WINDOW_US"; `wait` returns when the
/// threshold is crossed within a window. The window must be 0.5-10 s, and a multiple of
/// 2 s for a process without CAP_SYS_RESOURCE (containers often drop it).
#[derive(Debug)]
pub struct PsiTrigger {
    file: std::fs::File,
    path: String,
}

impl PsiTrigger {
    pub fn new(path: &str, full: bool, stall: Duration, window: Duration) -> Result<PsiTrigger> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(io_err(path))?;
        // The kernel overwrites the last byte written with NUL: send one.
        let spec = format!("{} {} {}\0", if full { "full" } else { "some" }, stall.as_micros(), window.as_micros());
        if let Err(e) = file.write_all(spec.as_bytes()) {
            if e.raw_os_error() == Some(libc::EINVAL) && !window.as_micros().is_multiple_of(2_000_000) {
                return Err(Error::Unsupported(format!(
                    "{path}: trigger refused; without CAP_SYS_RESOURCE the kernel accepts only windows that are multiples of 2 s (asked {} ms)",
                    window.as_millis()
                )));
            }
            return Err(io_err(path)(e));
        }
        Ok(PsiTrigger { file, path: path.to_string() })
    }

    /// True if the trigger fired within `timeout`.
    pub fn wait(&self, timeout: Duration) -> Result<bool> {
        poll_one(self.file.as_raw_fd(), libc::POLLPRI, timeout)
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn raw_fd(&self) -> i32 {
        self.file.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nice_value_follows_a_command_with_spaces_and_parentheses() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 -10 1 0 55 1000 10";
        assert_eq!(parse_stat_nice(stat), Some(-10));
        assert_eq!(parse_stat_nice("4242 (x) S 1"), None);
    }

    #[test]
    fn pagemap_entries_and_page_runs() {
        let mut b = Vec::new();
        for e in [1u64 << 63 | 0x1234, 1 << 62 | 0x55, 0, 1 << 63] {
            b.extend_from_slice(&e.to_ne_bytes());
        }
        assert_eq!(parse_pagemap(100, &b), (vec![101], vec![100, 103]));
        assert_eq!(page_runs(&[1, 2, 3, 7]), vec![(4096, 3 * 4096), (7 * 4096, 4096)]);
        assert_eq!(page_runs(&[]), vec![]);
    }

    #[test]
    fn the_first_resident_pages_are_found_without_reading_past_them() {
        // 4,800 touched pages: more than one pagemap chunk (4,096 entries).
        let v = vec![1u8; 5000 * 4096];
        let a = (v.as_ptr() as usize + 4095) & !4095;
        let range = [(a, 4800 * 4096)];
        let (_, present) = page_locations(std::process::id() as i32, &range).unwrap();
        let all = first_pages(std::process::id() as i32, &range, false, u64::MAX).unwrap();
        assert_eq!(all, present, "the same pages as the whole read");
        assert_eq!(all.len(), 4800);
        assert_eq!(first_pages(std::process::id() as i32, &range, false, 4100).unwrap(), present[..4100].to_vec());
        assert!(first_pages(std::process::id() as i32, &range, true, 10).unwrap().is_empty(), "nothing of it in swap");
        drop(v);
    }

    #[test]
    fn pagemap_of_this_process_sees_its_own_touched_heap() {
        let v = vec![1u8; 64 << 10];
        let a = v.as_ptr() as usize & !4095;
        let (swapped, present) = page_locations(std::process::id() as i32, &[(a + 4096, 8 * 4096)]).unwrap();
        assert!(swapped.is_empty());
        assert_eq!(present.len(), 8, "touched pages are present");
        assert_eq!(present[0], (a / 4096 + 1) as u64);
        drop(v);
    }

    #[test]
    fn locked_pfn_mapped_and_hugetlb_mappings_are_cut_out_of_ranges() {
        let smaps = "\
55d0e000-55d2f000 rw-p 00000000 00:00 0                                  [heap]
Size:                132 kB
Locked:                0 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000100000 rw-p 00000000 00:00 0
Size:               1024 kB
Locked:             1024 kB
VmFlags: rd wr mr mw me lo ac
7f0000100000-7f0004100000 rw-p 00000000 00:00 0
Size:              65536 kB
VmFlags: rd wr mr mw me ac
7f1000000000-7f1000001000 rw-s 00000000 00:06 12                         /dev/dri/card0
VmFlags: rd wr sh mr mw me ms io pf dd
7f2000000000-7f2000200000 rw-p 00000000 00:0f 3                          /anon_hugepage (deleted)
VmFlags: rd wr mr mw me ht
";
        let holes = parse_unadvisable(smaps);
        assert_eq!(holes, vec![(0x7f0000000000, 0x100000), (0x7f1000000000, 0x1000), (0x7f2000000000, 0x200000)]);
        // The maps' one range over the locked and unlocked halves (as before an mlock
        // split it) keeps its unlocked part; a range inside a hole goes.
        let ranges = [(0x55d0e000, 0x21000), (0x7f0000000000, 0x4100000), (0x7f2000001000, 0x1000)];
        assert_eq!(without(&ranges, &holes), vec![(0x55d0e000, 0x21000), (0x7f0000100000, 0x4000000)]);
        // A hole in the middle leaves both sides.
        assert_eq!(without(&[(0, 0x10000)], &[(0x4000, 0x1000)]), vec![(0, 0x4000), (0x5000, 0xb000)]);
        assert_eq!(without(&ranges, &[]), ranges.to_vec());
    }

    #[test]
    fn anon_ranges_from_maps() {
        let maps = "\
55d0c000-55d0d000 r--p 00000000 fd:01 123 /usr/bin/sleep
55d0e000-55d2f000 rw-p 00000000 00:00 0 [heap]
7f00000000-7f00100000 rw-p 00000000 00:00 0
7f00100000-7f00200000 rw-s 00000000 00:01 9 /dev/zero (deleted)
7f00200000-7f00300000 r--p 00000000 00:00 0
7ffc000-7ffd000 rw-p 00000000 00:00 0 [stack]
";
        assert_eq!(parse_anon_ranges(maps), vec![(0x55d0e000, 0x21000), (0x7f00000000, 0x100000)]);
    }
}
