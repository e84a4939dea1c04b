//! What a bounded page-out costs the daemon: a child process touches MIB MiB of
//! anonymous memory; this times finding its resident pages in /proc/PID/pagemap
//! (`first_pages`, the whole heap and the first 64 MiB of it) and paging out 64 MiB
//! (`Pidfd::pageout_pages`), then all of the rest, then reading 64 MiB back ahead of
//! use (`prepage_pages`). Needs root and a swap device (zram) with room for the heap.
//!
//!     cargo run --release -p floe-linux --example pageout_cost -- [MIB=1024]

use floe_linux::sys::{anon_ranges, first_pages, Pidfd};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--child") {
        let mib: usize = args[2].parse().expect("MiB");
        let heap = vec![1u8; mib << 20];
        println!("ready");
        std::io::stdout().flush().unwrap();
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
        std::hint::black_box(&heap);
        return;
    }
    let mib: u64 = args.get(1).map(|a| a.parse().expect("MIB: a number of MiB")).unwrap_or(1024);
    if std::fs::read_to_string("/proc/swaps").unwrap_or_default().lines().nth(1).is_none() {
        eprintln!("pageout_cost: needs a swap device (zram) with room for {mib} MiB");
        std::process::exit(2);
    }
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe).args(["--child", &mib.to_string()]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let pid = child.id() as i32;
    let ranges = anon_ranges(pid).unwrap();
    let fd = Pidfd::open(pid).unwrap();
    let part = 64 << 8; // 64 MiB in pages
    let time = |what: &str, f: &mut dyn FnMut() -> u64| {
        let t = Instant::now();
        let n = f();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!("{what:<44} {n:>8} pages {ms:>9.2} ms {:>8.1} us/MiB", ms * 1e3 / (n as f64 / 256.0).max(1.0 / 256.0));
    };
    time("find every resident page (pagemap)", &mut || first_pages(pid, &ranges, false, u64::MAX).unwrap().len() as u64);
    time("find the first 64 MiB resident (pagemap)", &mut || first_pages(pid, &ranges, false, part).unwrap().len() as u64);
    time("page out 64 MiB (pagemap + MADV_PAGEOUT)", &mut || fd.pageout_pages(&ranges, part).unwrap());
    time("page out the rest", &mut || fd.pageout_pages(&ranges, u64::MAX).unwrap());
    time("find the first page still resident (pagemap)", &mut || first_pages(pid, &ranges, false, 1).unwrap().len() as u64);
    time("read 64 MiB back (pagemap + MADV_WILLNEED)", &mut || fd.prepage_pages(&ranges, part).unwrap());
    child.stdin.take().unwrap().write_all(b"done\n").unwrap();
    child.wait().unwrap();
}
