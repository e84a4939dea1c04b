//! `floe daemon --check`: every mechanism floe's policies use, tried for real on the
//! running kernel (a scratch cgroup and a scratch process that are removed afterwards),
//! one verdict each. Nothing is assumed from kernel version or config files.

use crate::cgroup::{AppGroup, Hierarchies, MemoryController};
use crate::sys::{Pidfd, PsiTrigger, MADV_COLD};
use crate::{read, Result};
use floe_core::{LmkMode, ReclaimOrder, Setup, SwapSetup};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const T: Duration = Duration::from_secs(2);
/// Trigger window: 2 s is accepted with or without CAP_SYS_RESOURCE.
pub const PSI_WINDOW: Duration = Duration::from_secs(2);

/// One mechanism's verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub mechanism: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Which mechanisms a registered policy needs, so `--check` can tell required from
/// optional: [`required_for`] its name and `Setup`. Unknown names need only the common
/// set.
pub fn required(policy: &str) -> Vec<&'static str> {
    match floe_policies::make(policy) {
        Some(p) => required_for(policy, &p.setup()),
        None => COMMON.to_vec(),
    }
}

/// What every policy needs: its apps' groups and the pressure trigger.
const COMMON: [&str; 2] = ["cgroup hierarchies", "psi trigger"];

/// The mechanisms a policy named `policy` with `setup` needs: the common set, what the
/// setup implies (a killer but the kernel's OOM killer: pidfd kill; refault events: the
/// counters; no swap: per-app swappiness, to keep
/// apps out of the machine's; freeze-aware eviction and prepaging: process_madvise,
/// pagemap, readahead; a swap threshold or FG-last eviction: process_madvise and pagemap; SEAL's levels: zram and its writeback), and what floe's own
/// policies' actions use, which no setup says (Ice's freezes, selective's swappiness,
/// SmartLMK's launch tracker and group kills).
pub fn required_for(policy: &str, setup: &Setup) -> Vec<&'static str> {
    let mut need: Vec<&'static str> = COMMON.to_vec();
    let mut add = |m: &'static str| {
        if !need.contains(&m) {
            need.push(m);
        }
    };
    if setup.lmk != LmkMode::OomOnly {
        add("pidfd kill");
    }
    if setup.events.refaults {
        add("refault counters");
    }
    if setup.swap == SwapSetup::None {
        add("per-app swappiness");
    }
    if setup.reclaim == ReclaimOrder::FrozenFirst {
        add("process_madvise");
    }
    if setup.swap_threshold.is_some() || setup.reclaim == ReclaimOrder::FgLast {
        // The daemon's own paging out of background apps, bounded through pagemap.
        add("process_madvise");
        add("pagemap");
    }
    if let Some(p) = setup.prepage {
        add("process_madvise");
        add("pagemap");
        if p.file {
            add("readahead");
        }
    }
    if setup.seal.is_some() {
        add("process_madvise");
        add("zram");
        add("zram writeback");
    }
    let by_name: &[&'static str] = match policy {
        "ice" | "ice-plus" | "power-freezer" => &["freezer"],
        "smartlmk" => &["cgroup kill", "/proc/stat"],
        "android-lmk" => &["cgroup kill"],
        "selective-kill-first" | "selective-swap-first" => &["per-app swappiness"],
        _ => &[],
    };
    for &m in by_name {
        add(m);
    }
    need
}

/// A scratch process in a scratch group, removed on drop.
struct Scratch {
    child: Child,
    group: Option<AppGroup>,
}

impl Scratch {
    fn new(h: &Hierarchies) -> Result<Scratch> {
        let child = Command::new("sleep").arg("30").stdin(Stdio::null()).stdout(Stdio::null()).spawn().map_err(crate::io_err("sleep"))?;
        let rel = format!("floe-check-{}-{}", std::process::id(), child.id());
        let mut s = Scratch { child, group: None };
        let g = AppGroup::create(h, &rel)?;
        g.add(s.child.id() as i32)?;
        s.group = Some(g);
        Ok(s)
    }
    fn group(&self) -> &AppGroup {
        self.group.as_ref().expect("created")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(g) = self.group.take() {
            let _ = g.remove(T);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn verdict(mechanism: &'static str, r: Result<String>) -> Verdict {
    match r {
        Ok(detail) => Verdict { mechanism, ok: true, detail },
        Err(e) => Verdict { mechanism, ok: false, detail: e.to_string() },
    }
}

/// Removes the scratch groups of a check that died before its cleanup ran: groups named
/// `floe-check-PID-CHILD` under any hierarchy whose PID is no live process are thawed,
/// emptied (their processes are that check's scratch `sleep`s) and removed.
pub fn sweep_stale(h: &Hierarchies) {
    let mut names = std::collections::BTreeSet::new();
    for root in [&h.v2, &h.memory_v1, &h.freezer_v1].into_iter().flatten() {
        for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if crate::sys::left_by_dead_process(&name, "floe-check-") {
                names.insert(name);
            }
        }
    }
    for name in names {
        if let Ok(g) = AppGroup::create(h, &name) {
            let _ = g.remove(T);
        }
    }
}

/// Runs every check.
pub fn run() -> Vec<Verdict> {
    let mut out = Vec::new();
    let h = Hierarchies::detect();
    if let Ok(h) = &h {
        sweep_stale(h);
    }
    out.push(verdict(
        "cgroup hierarchies",
        h.as_ref().map_err(|e| crate::Error::Unsupported(e.to_string())).and_then(|h| {
            if h.v2.is_none() && h.freezer_v1.is_none() {
                return Err(crate::Error::Unsupported("neither cgroup v2 nor a v1 freezer is mounted".into()));
            }
            let show = |p: &Option<std::path::PathBuf>| p.as_ref().map_or("-".to_string(), |p| p.display().to_string());
            // What v2 offers decides where the memory controller comes from without v1's.
            let offered = h.v2.as_ref().and_then(|d| read(d.join("cgroup.controllers")).ok()).map(|c| c.trim().to_string());
            let v2 = match offered {
                Some(c) => format!("{} (controllers: {})", show(&h.v2), if c.is_empty() { "none" } else { &c }),
                None => show(&h.v2),
            };
            Ok(format!("v2 {v2}, v1 memory {}, v1 freezer {}", show(&h.memory_v1), show(&h.freezer_v1)))
        }),
    ));
    let h = h.unwrap_or_default();
    out.push(verdict(
        "freezer",
        (|| {
            let s = Scratch::new(&h)?;
            s.group().freeze(T)?;
            s.group().thaw(T)?;
            Ok(if s.group().v2.is_some() { "cgroup v2 cgroup.freeze, confirmed by cgroup.events" } else { "v1 freezer.state" }.into())
        })(),
    ));
    out.push(verdict(
        "cgroup kill",
        (|| {
            let mut s = Scratch::new(&h)?;
            s.group().kill(T)?;
            let _ = s.child.wait();
            Ok(if s.group().v2.is_some() { "cgroup v2 cgroup.kill" } else { "per-process pidfd SIGKILL" }.into())
        })(),
    ));
    out.push(verdict(
        "pidfd kill",
        (|| {
            let mut child = Command::new("sleep").arg("30").spawn().map_err(crate::io_err("sleep"))?;
            let p = Pidfd::open(child.id() as i32)?;
            p.send_signal(libc::SIGKILL)?;
            let r = p.wait_exit(T);
            let _ = child.wait();
            r.map(|_| "pidfd_open + pidfd_send_signal, exit seen by polling the pidfd".into())
        })(),
    ));
    out.push(verdict(
        "process_madvise",
        (|| {
            // On floe's own heap through a pidfd: the same call reaches any process.
            let v = vec![1u8; 16 * 4096];
            let a = (v.as_ptr() as usize + 4095) & !4095;
            let p = Pidfd::open(std::process::id() as i32)?;
            let n = p.madvise(&[(a, 8 * 4096)], MADV_COLD)?;
            if n != 8 * 4096 {
                return Err(crate::Error::Unsupported(format!("process_madvise advised {n} of {} bytes", 8 * 4096)));
            }
            Ok(format!("MADV_COLD over {n} bytes through a pidfd (PAGEOUT and WILLNEED use the same call)"))
        })(),
    ));
    out.push(verdict(
        "pagemap",
        (|| {
            let v = vec![1u8; 16 * 4096];
            let a = (v.as_ptr() as usize + 4095) & !4095;
            let (_, present) = crate::sys::page_locations(std::process::id() as i32, &[(a, 8 * 4096)])?;
            if present.len() != 8 {
                return Err(crate::Error::Unsupported(format!("/proc/self/pagemap shows {} of 8 touched pages present", present.len())));
            }
            Ok("/proc/PID/pagemap present and swap bits (ASAP's switch logging; page-outs and prepaging of a number of pages)".into())
        })(),
    ));
    out.push(verdict(
        "psi trigger",
        PsiTrigger::new("/proc/pressure/memory", false, Duration::from_millis(150), PSI_WINDOW).map(|t| {
            let _ = t.wait(Duration::ZERO);
            "/proc/pressure/memory armed (some 150 ms / 2 s), pollable".into()
        }),
    ));
    out.push(verdict(
        "lmkd psi",
        crate::daemon::lmkd_triggers().map(|(_, _, w)| {
            if w == Duration::from_secs(1) {
                "lmkd's triggers armed (some 70 ms and 100 ms per 1 s), for lmkd = \"psi\" or \"psi-minfree\"".into()
            } else {
                format!("lmkd's triggers armed on {} s windows (some 140 ms and 200 ms): the kernel refuses 1 s windows without CAP_SYS_RESOURCE", w.as_secs())
            }
        }),
    ));
    out.push(verdict(
        "per-app psi",
        (|| {
            let s = Scratch::new(&h)?;
            let path = s.group().pressure_path().ok_or_else(|| crate::Error::Unsupported("no cgroup v2".into()))?;
            PsiTrigger::new(&path.display().to_string(), false, Duration::from_millis(150), PSI_WINDOW)?;
            Ok(format!("{} armed", path.file_name().unwrap_or_default().to_string_lossy()))
        })(),
    ));
    out.push(verdict(
        "refault counters",
        (|| {
            let s = Scratch::new(&h)?;
            let (a, f) = s.group().refaults()?;
            let m = s.group().memory_controller().map_or("", |m| m.name());
            Ok(format!("{m} memory.stat workingset_refault (anon {a}, file {f})"))
        })(),
    ));
    out.push(verdict(
        "per-app swappiness",
        (|| {
            let s = Scratch::new(&h)?;
            s.group().set_swappiness(0)?;
            Ok(match s.group().memory_controller() {
                Some(MemoryController::V2(_)) => "v2 memory.swap.max 0 (v2 has no per-group swappiness: an app is kept out of swap whole)",
                _ => "v1 memory.swappiness",
            }
            .into())
        })(),
    ));
    out.push(verdict(
        "/proc/stat",
        read("/proc/stat")
            .and_then(|t| crate::procfs::parse_cpu_line("/proc/stat", &t))
            .map(|(b, t)| format!("busy+iowait {b} of {t} ticks")),
    ));
    out.push(verdict(
        "readahead",
        (|| {
            use std::os::fd::AsRawFd;
            let path = std::env::temp_dir().join(format!("floe-check-ra-{}", std::process::id()));
            std::fs::write(&path, vec![0u8; 64 << 10]).map_err(crate::io_err(&path))?;
            let f = std::fs::File::open(&path).map_err(crate::io_err(&path));
            let _ = std::fs::remove_file(&path);
            let f = f?;
            // SAFETY: a valid fd, an offset and a length inside the file.
            let r = unsafe { libc::readahead(f.as_raw_fd(), 0, 64 << 10) };
            if r != 0 {
                return Err(crate::Error::Io { path: "readahead".into(), err: std::io::Error::last_os_error() });
            }
            Ok("readahead(2) of a scratch file".into())
        })(),
    ));
    out.push(verdict(
        "zram writeback",
        exists(
            "/sys/block/zram0/backing_dev",
            "idle and per-page writeback to flash",
            "CONFIG_ZRAM_WRITEBACK): SEAL cannot move pages from SL1 (zram) to SL2 (flash)",
        ),
    ));
    out.push(verdict(
        "zram",
        (|| {
            let alg = read("/sys/block/zram0/comp_algorithm")?;
            let size = read("/sys/block/zram0/disksize")?;
            Ok(format!("zram0 present, disksize {} bytes, algorithms {}", size.trim(), alg.trim()))
        })(),
    ));
    out
}

/// A kernel feature that shows as a file: "PATH (what it gives)", or "no PATH (CONFIG_...:
/// what cannot be done)".
fn exists(path: &str, gives: &str, missing: &str) -> crate::Result<String> {
    std::fs::metadata(path).map(|_| format!("{path} ({gives})")).map_err(|_| crate::Error::Unsupported(format!("no {path} ({missing}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use floe_core::{EventMask, PrepageSetup};

    #[test]
    fn a_policy_needs_what_its_setup_and_its_actions_use() {
        let has = |p: &str, m: &str| required(p).contains(&m);
        assert!(has("ice", "freezer") && has("ice", "refault counters") && !has("ice", "process_madvise"));
        assert!(has("ice-plus", "process_madvise"), "freeze-aware eviction pages out");
        assert!(has("android-lmk", "per-app swappiness") && has("smartlmk", "/proc/stat"));
        assert!(has("asap-file", "readahead") && !has("asap-anon", "readahead") && !has("asap", "pidfd kill"));
        assert!(has("seal", "zram writeback") && !has("lru-cfs", "zram writeback"));
        assert!(has("selective-swap-first", "pagemap") && has("acclaim", "pagemap"), "the daemon pages out background apps");
        assert!(!has("lru-cfs", "pagemap"));
        assert_eq!(required("nope"), COMMON.to_vec());
        // A policy floe does not know is judged by its setup alone.
        let own = Setup {
            swap: SwapSetup::Zram,
            events: EventMask { refaults: true, ..EventMask::NONE },
            prepage: Some(PrepageSetup { anon: false, file: true }),
            ..Setup::stock()
        };
        let need = required_for("my-policy", &own);
        for m in ["cgroup hierarchies", "psi trigger", "pidfd kill", "refault counters", "process_madvise", "pagemap", "readahead"] {
            assert!(need.contains(&m), "{m}: {need:?}");
        }
        assert!(!need.contains(&"per-app swappiness") && !need.contains(&"freezer"), "{need:?}");
    }
}
