//! process_madvise on the real kernel with zram swap: MADV_PAGEOUT compresses a
//! process's anonymous memory into zram, MADV_WILLNEED brings it back ahead of use
//! (what Selective's and ASAP's actions become on Linux). The test uses zram0 if it is
//! already swap, else sets it up and restores it afterwards; it refuses to touch a zram0 that is
//! configured by someone else.

use floe_linux::procfs::parse_kb_table;
use floe_linux::sys::{anon_ranges, Pidfd, MADV_PAGEOUT, MADV_WILLNEED};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// zram0 as swap for the test: used as it is when it already is an active swap device
/// (then left alone), set up and torn down by the test when it is unused, refused when
/// someone configured it for something else.
struct ZramSwap {
    ours: bool,
}

impl ZramSwap {
    fn setup() -> ZramSwap {
        crate::needs_root();
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap();
        if swaps.lines().any(|l| l.starts_with("/dev/zram0")) {
            return ZramSwap { ours: false };
        }
        let size = std::fs::read_to_string("/sys/block/zram0/disksize").expect("this test needs /dev/zram0");
        assert_eq!(size.trim(), "0", "zram0 is configured, but not as swap, by someone else; not touching it");
        std::fs::write("/sys/block/zram0/disksize", "256M").unwrap();
        let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
        ok(Command::new("mkswap").arg("/dev/zram0").stdout(Stdio::null()));
        ok(Command::new("swapon").arg("/dev/zram0"));
        ZramSwap { ours: true }
    }
}

impl Drop for ZramSwap {
    fn drop(&mut self) {
        if self.ours {
            let _ = Command::new("swapoff").arg("/dev/zram0").status();
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
}

struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn swap_bytes(pid: u32) -> u64 {
    let t = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    parse_kb_table("smaps_rollup", &t).unwrap().get("Swap").copied().unwrap_or(0)
}

/// A process with 64 MiB of private anonymous memory that, on each line read from
/// stdin, touches every page and answers with the major faults that took.
struct App {
    p: Proc,
    rd: std::io::BufReader<std::process::ChildStdout>,
}

const APP: &str = r#"
import mmap, sys
m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, 64 << 20, 4096):
    m[i:i + 8] = b'floe%04d' % (i % 9999)
maj = lambda: int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[9])
print('ready', flush=True)
for line in sys.stdin:
    a = maj(); s = 0
    for i in range(0, 64 << 20, 4096):
        s += m[i]
    print(maj() - a, flush=True)
"#;

impl App {
    fn start() -> App {
        let mut c = Command::new("python3").args(["-c", APP]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("python3");
        let rd = std::io::BufReader::new(c.stdout.take().unwrap());
        let mut a = App { p: Proc(c), rd };
        assert_eq!(a.line(), "ready");
        a
    }
    /// A started app, a pidfd of it and its anonymous ranges.
    fn start_with_pidfd() -> (App, Pidfd, Vec<(usize, usize)>) {
        let app = App::start();
        let pid = app.p.0.id() as i32;
        (app, Pidfd::open(pid).unwrap(), anon_ranges(pid).unwrap())
    }
    fn line(&mut self) -> String {
        let mut l = String::new();
        std::io::BufRead::read_line(&mut self.rd, &mut l).unwrap();
        l.trim().to_string()
    }
    /// The app comes back to the foreground and touches its memory: major faults.
    fn switch_in(&mut self) -> u64 {
        use std::io::Write;
        let stdin = self.p.0.stdin.as_mut().unwrap();
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
        self.line().parse().unwrap()
    }
}

#[test]
fn pageout_compresses_an_app_and_willneed_prepaging_cuts_its_major_faults() {
    let _quiet = crate::quiet();
    let _zram = ZramSwap::setup();
    let mut app = App::start();
    let pid = app.p.0.id();
    let fd = Pidfd::open(pid as i32).unwrap();
    let ranges = anon_ranges(pid as i32).unwrap();
    // Compress the app (Selective's swap, Ice+'s reclaim of a frozen app).
    let before = swap_bytes(pid);
    let advised = fd.madvise(&ranges, MADV_PAGEOUT).unwrap();
    assert!(advised >= 64 << 20, "advised {advised} bytes");
    let swapped = swap_bytes(pid);
    assert!(swapped >= before + (48 << 20), "swap {before} -> {swapped} bytes");
    // Switch in on demand: every page is a major fault from zram.
    let demand = app.switch_in();
    assert!(demand >= 12_000, "demand paging took {demand} major faults");
    // Compress again, then prepage with WILLNEED before the switch (ASAP's anonymous
    // prepaging on Linux): the pages wait in the swap cache and the switch faults minor.
    fd.madvise(&ranges, MADV_PAGEOUT).unwrap();
    assert!(swap_bytes(pid) >= 48 << 20);
    fd.madvise(&ranges, MADV_WILLNEED).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let prepaged = app.switch_in();
    eprintln!("switch-in major faults: on demand {demand}, after WILLNEED {prepaged}");
    assert!(prepaged * 4 < demand, "major faults with prepaging {prepaged} vs {demand} on demand");
}

/// A policy's `Reclaim { pages }` on Linux: MADV_PAGEOUT on that many of the process's
/// resident anonymous pages (found in pagemap), not on all of its memory.
#[test]
fn pageout_of_a_number_of_pages_takes_that_many_and_leaves_the_rest() {
    let _quiet = crate::quiet();
    let _zram = ZramSwap::setup();
    let (app, fd, ranges) = App::start_with_pidfd();
    let pid = app.p.0.id();
    let before = swap_bytes(pid);
    // 16 MiB of the app's 64 MiB heap (and its interpreter's few MiB).
    let n = fd.pageout_pages(&ranges, 4096).unwrap();
    assert_eq!(n, 4096, "as many pages as asked, the app having more resident");
    let swapped = swap_bytes(pid) - before;
    eprintln!("paged out 4096 pages: swap +{swapped} bytes");
    assert!((14 << 20..=17 << 20).contains(&swapped), "swap grew by {swapped} bytes, not about 16 MiB");
    // What is not resident is not counted: asking for everything takes what is left.
    let rest = fd.pageout_pages(&ranges, u64::MAX).unwrap();
    assert!(rest >= 12_000, "the rest of the heap: {rest} pages");
    assert!(swap_bytes(pid) - before >= 60 << 20, "all of the heap in swap now");
    assert_eq!(fd.pageout_pages(&ranges, 0).unwrap(), 0);
}

/// A policy's `Prepage { pages }` on Linux: MADV_WILLNEED on that many of the process's
/// swapped-out anonymous pages, which come back to memory (the swap cache) ahead of use.
#[test]
fn prepaging_a_number_of_pages_reads_that_many_back() {
    let _quiet = crate::quiet();
    let _zram = ZramSwap::setup();
    let (_app, fd, ranges) = App::start_with_pidfd();
    assert!(fd.pageout_pages(&ranges, u64::MAX).unwrap() >= 16_384);
    // The pages come back into the swap cache, still swap entries in the page table
    // (pagemap cannot tell): the kernel's count of pages read from swap can.
    let pswpin = || {
        let t = std::fs::read_to_string("/proc/vmstat").unwrap();
        t.lines().find_map(|l| l.strip_prefix("pswpin ")).unwrap().trim().parse::<u64>().unwrap()
    };
    let before = pswpin();
    assert_eq!(fd.prepage_pages(&ranges, 2048).unwrap(), 2048);
    std::thread::sleep(Duration::from_millis(300));
    let read = pswpin() - before;
    eprintln!("prepaged 2048 pages: {read} pages read from swap");
    // Swap readahead may bring a cluster's neighbours too; not the whole heap.
    assert!((2048..8192).contains(&read), "{read} pages read from swap");
    assert_eq!(fd.prepage_pages(&ranges, 0).unwrap(), 0);
}

/// An app that has locked the first MiB of its heap (mlock), which splits the mapping: the page-out passes over the locked mapping, which the kernel refuses
/// (EINVAL for the whole range), and takes the heap behind it, and a page count is
/// of pages that can go.
#[test]
fn pageout_passes_over_locked_memory_and_takes_the_rest() {
    const LOCKING_APP: &str = r#"
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
m = mmap.mmap(-1, 65 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, 65 << 20, 4096):
    m[i] = 1
at = ctypes.addressof(ctypes.c_char.from_buffer(m))
# The first MiB locked: the kernel splits the mapping, the locked part first.
assert libc.mlock(ctypes.c_void_p(at), ctypes.c_size_t(1 << 20)) == 0, ctypes.get_errno()
print(at, at + (1 << 20), flush=True)
sys.stdin.read()
"#;
    let _quiet = crate::quiet();
    let _zram = ZramSwap::setup();
    let mut c = Command::new("python3").args(["-c", LOCKING_APP]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("python3");
    let mut rd = std::io::BufReader::new(c.stdout.take().unwrap());
    let p = Proc(c);
    let pid = p.0.id();
    let mut l = String::new();
    std::io::BufRead::read_line(&mut rd, &mut l).unwrap();
    let (locked, heap) = l.trim().split_once(' ').map(|(a, b)| (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap())).unwrap();
    assert!(locked < heap, "the locked mapping comes first in address order: {locked:#x} {heap:#x}");
    let vm_lck = || {
        let t = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        parse_kb_table("status", &t).unwrap().get("VmLck").copied().unwrap_or(0)
    };
    assert_eq!(vm_lck(), 1 << 20, "1 MiB locked");
    let fd = Pidfd::open(pid as i32).unwrap();
    let ranges = anon_ranges(pid as i32).unwrap();
    assert!(!ranges.iter().any(|&(a, len)| a <= locked && locked < a + len), "the locked mapping is not among the ranges: {ranges:x?}");
    // A number of pages: as many as asked, all of them pages that can go.
    let before = swap_bytes(pid);
    assert_eq!(fd.pageout_pages(&ranges, 4096).unwrap(), 4096);
    let swapped = swap_bytes(pid) - before;
    assert!((14 << 20..=17 << 20).contains(&swapped), "swap grew by {swapped} bytes, not about 16 MiB");
    // The whole memory as /proc/PID/maps lists it, the locked mapping included: the
    // kernel refuses that range and floe goes on with the ones after it.
    let all = floe_linux::sys::parse_anon_ranges(&std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap());
    assert!(all.iter().any(|&(a, len)| a <= locked && locked < a + len));
    let advised = fd.madvise(&all, MADV_PAGEOUT).unwrap();
    assert!(advised >= 60 << 20, "advised {advised} bytes");
    let swapped = swap_bytes(pid) - before;
    eprintln!("locked 1 MiB before a 64 MiB heap: {advised} bytes advised, swap +{swapped} bytes");
    assert!(swapped >= 60 << 20, "the heap behind the locked mapping went to swap: {swapped} bytes");
    assert_eq!(vm_lck(), 1 << 20, "the locked memory stays locked");
}
