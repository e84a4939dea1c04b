//! The kernel files the loop reads at every sample, kept open and read again from
//! their start (`pread`), into a buffer kept from one read to the next: two system calls
//! a file (the read, and the one that finds the end) instead of open, stat, reads and
//! close, and no allocation once the buffer has grown to the file's size. Parsed in
//! place, for the few fields wanted.
pub(crate) use crate::procfs::kb_fields;
use crate::{io_err, Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// A kernel file (a /proc, sysfs or cgroup file) read whole at each [`KFile::read`].
///
/// The descriptor stays open between reads. One that fails is closed and the path
/// opened again, once: a process's file after the process is gone (ESRCH, and then its
/// pid may be another process's), a cgroup's file after the group was removed and
/// perhaps made again under the same name (ENODEV).
#[derive(Debug)]
pub(crate) struct KFile {
    path: PathBuf,
    file: Option<File>,
    buf: Vec<u8>,
}

impl KFile {
    /// Opened at the first read.
    pub(crate) fn new(path: impl Into<PathBuf>) -> KFile {
        KFile { path: path.into(), file: None, buf: Vec::new() }
    }

    /// The file's whole text, as the kernel gives it now.
    pub(crate) fn read(&mut self) -> Result<&str> {
        for again in [false, true] {
            let f = match &self.file {
                Some(f) => f,
                None => self.file.insert(File::open(&self.path).map_err(io_err(&self.path))?),
            };
            match read_whole(f, &mut self.buf) {
                Ok(n) => {
                    return std::str::from_utf8(&self.buf[..n])
                        .map_err(|_| Error::Parse { path: self.path.display().to_string(), detail: "not UTF-8".into() });
                }
                Err(e) => {
                    self.file = None;
                    if again {
                        return Err(io_err(&self.path)(e));
                    }
                }
            }
        }
        unreachable!("the second attempt returns")
    }

    /// Whether the descriptor is open (a read succeeded and nothing failed since).
    #[cfg(test)]
    fn is_open(&self) -> bool {
        self.file.is_some()
    }
}

/// A small kernel file read once through `buf` (kept by the caller from one file to the
/// next): open, a read for a file that fits and the read that finds its end, close.
/// `std::fs::read_to_string` finds no size for a /proc file and reads it in steps from
/// 32 bytes up, eight reads for a process's status.
pub(crate) fn read_once<'a>(path: &str, buf: &'a mut Vec<u8>) -> std::io::Result<&'a [u8]> {
    let n = read_whole(&File::open(path)?, buf)?;
    Ok(&buf[..n])
}

/// The size a file's buffer starts at: most of the files kept open are far smaller
/// than a page (an app's cgroup.procs, its memory usage; a process's status is about
/// 1.4 KiB), and with 20 apps a page each was over 200 KiB of the daemon's heap, all of
/// it locked. A larger file costs a few more reads, once.
const FIRST_BUF: usize = 512;

/// Reads `f` from offset 0 into `buf` (grown as needed, never shrunk), up to the read
/// that returns nothing; the length read. A short read is not the end: a seq file of
/// many records (/proc/vmstat, a large cgroup.procs) gives at most a page of them at a
/// time. The closing read is cheap: it starts where the kernel's iterator stopped.
/// A new buffer starts at [`FIRST_BUF`] bytes and doubles until the file fits.
fn read_whole(f: &File, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    if buf.is_empty() {
        buf.resize(FIRST_BUF, 0);
    }
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = f.read_at(&mut buf[len..], len as u64)?;
        if n == 0 {
            return Ok(len);
        }
        len += n;
    }
}

/// Workingset refaults (anonymous, file) from a memory.stat's text, as
/// [`crate::procfs::refaults`] counts them.
pub(crate) fn refaults_in(stat: &str) -> (u64, u64) {
    let (mut anon, mut file, mut old) = (None, None, 0);
    for line in stat.lines() {
        let Some((k, v)) = line.split_once(' ') else { continue };
        let v = || v.trim().parse::<u64>().unwrap_or(0);
        match k {
            "workingset_refault_anon" => anon = Some(v()),
            "workingset_refault_file" => file = Some(v()),
            "workingset_refault" => old = v(),
            _ => {}
        }
    }
    match (anon, file) {
        (Some(a), Some(f)) => (a, f),
        _ => (0, old),
    }
}

/// kswapd's pages scanned and reclaimed since boot from /proc/vmstat's text, as
/// [`super::kswapd_scan_steal`] counts them, without building a map of the file.
pub(crate) fn kswapd_scan_steal_in(vmstat: &str) -> (u64, u64) {
    let (mut scan, mut steal) = (0, 0);
    for line in vmstat.lines() {
        let Some((k, v)) = line.split_once(' ') else { continue };
        if k.starts_with("pgscan_kswapd") {
            scan += v.trim().parse::<u64>().unwrap_or(0);
        } else if k.starts_with("pgsteal_kswapd") {
            steal += v.trim().parse::<u64>().unwrap_or(0);
        }
    }
    (scan, steal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::{flat_fields, parse_flat, parse_kb_table, refaults};

    /// The kept descriptor gives the file as it is now at every read, the same text a
    /// fresh open gives; a process's file whose process is gone fails, and a file
    /// made again at the same path is found through the path.
    #[test]
    fn a_kept_file_is_read_anew_and_reopened_when_its_object_is_gone() {
        let dir = crate::scratch_dir("kfile");
        let p = dir.join("f");
        std::fs::write(&p, "a 1\n").unwrap();
        let mut f = KFile::new(&p);
        assert_eq!(f.read().unwrap(), "a 1\n");
        // Written in place (the same file): the kept descriptor sees it.
        std::fs::write(&p, "a 2\nb 3\n").unwrap();
        assert_eq!(f.read().unwrap(), "a 2\nb 3\n");
        // Larger than the first buffer: read whole.
        let big: String = (0..2000).map(|i| format!("k{i} {i}\n")).collect();
        std::fs::write(&p, &big).unwrap();
        assert_eq!(f.read().unwrap(), big);
        assert!(f.is_open());
        std::fs::remove_dir_all(&dir).unwrap();

        // A process's status through a kept descriptor: fresh at each read, and an
        // error once the process is reaped (its pid may be someone else's by then).
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let mut st = KFile::new(format!("/proc/{}/status", child.id()));
        let first = st.read().unwrap().to_string();
        assert!(first.contains(&format!("\nPid:\t{}\n", child.id())), "{first}");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(st.read().is_err(), "a reaped process's file");
        assert!(!st.is_open());

        // /proc/meminfo through one descriptor: the same fields as a fresh read, with
        // values that move.
        let mut m = KFile::new("/proc/meminfo");
        let [total, avail] = kb_fields(m.read().unwrap(), ["MemTotal", "MemAvailable"]);
        let fresh = parse_kb_table("meminfo", &std::fs::read_to_string("/proc/meminfo").unwrap()).unwrap();
        assert_eq!(total, fresh["MemTotal"]);
        assert!(avail > 0 && avail <= total);
        let [total2] = kb_fields(m.read().unwrap(), ["MemTotal"]);
        assert_eq!(total2, total);
        // /proc/vmstat gives a page of its records a read: read to its end, every line
        // a fresh read has (its values move).
        let mut v = KFile::new("/proc/vmstat");
        let keys = |t: &str| t.lines().map(|l| l.split(' ').next().unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(keys(v.read().unwrap()), keys(&std::fs::read_to_string("/proc/vmstat").unwrap()));
        assert_eq!(keys(v.read().unwrap()), keys(&std::fs::read_to_string("/proc/vmstat").unwrap()), "and again");
    }

    #[test]
    fn fields_are_read_in_place_as_the_map_parsers_read_them() {
        let status = "Name:\tperl\nUid:\t0\t0\t0\t0\nVmRSS:\t  1024 kB\nRssAnon:\t   512 kB\nVmSwap:\t       8 kB\n";
        assert_eq!(kb_fields(status, ["VmRSS", "RssAnon", "VmSwap", "VmPTE"]), [1 << 20, 512 << 10, 8 << 10, 0]);
        let v1 = "cache 10\nworkingset_refault_anon 7\nworkingset_refault_file 9\ntotal_inactive_file 4096\n";
        assert_eq!(refaults_in(v1), refaults(&parse_flat(v1)));
        assert_eq!(refaults_in(v1), (7, 9));
        let old = "workingset_refault 12\n";
        assert_eq!(refaults_in(old), (0, 12));
        assert_eq!(refaults_in(old), refaults(&parse_flat(old)));
        let vmstat = "nr_free_pages 5\npgscan_kswapd 500\npgsteal_kswapd 120\npgscan_direct 9\npgsteal_kswapd_normal 3\n";
        assert_eq!(kswapd_scan_steal_in(vmstat), super::super::kswapd_scan_steal(&parse_flat(vmstat)));
        let here = std::fs::read_to_string("/proc/vmstat").unwrap();
        assert_eq!(kswapd_scan_steal_in(&here), super::super::kswapd_scan_steal(&parse_flat(&here)));
        assert_eq!(flat_fields("a 1\nb 2\n", ["b", "c"]), [2, 0]);
    }
}
