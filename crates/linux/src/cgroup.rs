//! Cgroup hierarchies and app cgroups. floe works on hybrid machines and on pure cgroup
//! v2 ones: cgroup v2 (where mounted) gives freeze, kill and per-cgroup PSI; the memory
//! controller gives per-app refault counters, swap eligibility and a memory budget,
//! from the v1 hierarchy where the machine mounts one (it then owns the controller),
//! else from v2, where floe turns it on down to its app groups; the v1 freezer stands in
//! when there is no v2. Detected from /proc/self/mountinfo, never assumed.

use crate::procfs::{parse_flat, refaults};
use crate::{io_err, read, write, Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A memory cgroup's charge and LRU sizes, in bytes (its whole subtree).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupMemory {
    pub usage: u64,
    pub active_anon: u64,
    pub inactive_anon: u64,
    pub active_file: u64,
    pub inactive_file: u64,
}

impl GroupMemory {
    /// From the texts of the charge file and memory.stat; v1 counts the whole subtree
    /// under total_*, v2's memory.stat always does.
    pub fn parse(usage: &str, stat: &str, v1: bool) -> GroupMemory {
        let keys = if v1 {
            ["total_active_anon", "total_inactive_anon", "total_active_file", "total_inactive_file"]
        } else {
            ["active_anon", "inactive_anon", "active_file", "inactive_file"]
        };
        let [active_anon, inactive_anon, active_file, inactive_file] = crate::procfs::flat_fields(stat, keys);
        GroupMemory { usage: usage.trim().parse().unwrap_or(0), active_anon, inactive_anon, active_file, inactive_file }
    }
}

/// Where each hierarchy floe can use is mounted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hierarchies {
    pub v2: Option<PathBuf>,
    pub memory_v1: Option<PathBuf>,
    pub freezer_v1: Option<PathBuf>,
}

impl Hierarchies {
    pub fn detect() -> Result<Hierarchies> {
        Ok(Hierarchies::parse(&read("/proc/self/mountinfo")?))
    }

    /// Parses mountinfo: field 5 is the mount point; after " - " come the filesystem
    /// type and the super options (the v1 controllers).
    pub fn parse(mountinfo: &str) -> Hierarchies {
        let mut h = Hierarchies::default();
        for line in mountinfo.lines() {
            let Some((pre, post)) = line.split_once(" - ") else { continue };
            let Some(mnt) = pre.split_whitespace().nth(4) else { continue };
            let mut post = post.split_whitespace();
            let (fstype, opts) = (post.next().unwrap_or(""), post.nth(1).unwrap_or(""));
            match fstype {
                "cgroup2" if h.v2.is_none() => h.v2 = Some(mnt.into()),
                "cgroup" => {
                    let has = |c: &str| opts.split(',').any(|o| o == c);
                    if has("memory") && h.memory_v1.is_none() {
                        h.memory_v1 = Some(mnt.into());
                    }
                    if has("freezer") && h.freezer_v1.is_none() {
                        h.freezer_v1 = Some(mnt.into());
                    }
                }
                _ => {}
            }
        }
        h
    }
}

/// Where an app's memory controller lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryController<'a> {
    /// The v1 memory hierarchy's group (a hybrid machine).
    V1(&'a Path),
    /// The app's v2 group, with the memory controller on (a pure v2 machine).
    V2(&'a Path),
}

impl<'a> MemoryController<'a> {
    pub fn dir(self) -> &'a Path {
        match self {
            MemoryController::V1(d) | MemoryController::V2(d) => d,
        }
    }

    /// The interface's name, for reports: "v1 memory" or "v2 memory".
    pub fn name(self) -> &'static str {
        match self {
            MemoryController::V1(_) => "v1 memory",
            MemoryController::V2(_) => "v2 memory",
        }
    }
}

/// On a v2 hierarchy that offers the memory controller (its root's `cgroup.controllers`
/// lists it), turns it on for every group on the way to `rel` (`+memory` in the
/// `cgroup.subtree_control` of the root and of each ancestor of the leaf), so the app
/// group gets its memory files. A group with processes of its own cannot pass a
/// controller on (the kernel's no-internal-processes rule): floe's groups below the root
/// hold none. Nothing is written where the controller is not offered, or is on already
/// (systemd turns it on at the root); what floe turns on stays on when it exits, as
/// turning it off would take it from any other group that has come to use it.
fn enable_v2_memory(root: &Path, rel: &str) -> Result<()> {
    let names_memory = |list: &Path| read(list).map(|l| l.split_whitespace().any(|c| c == "memory"));
    if !names_memory(&root.join("cgroup.controllers"))? {
        return Ok(());
    }
    let mut dir = root.to_path_buf();
    for part in rel.split('/').filter(|s| !s.is_empty()) {
        let control = dir.join("cgroup.subtree_control");
        if !names_memory(&control)? {
            write(&control, "+memory")?;
        }
        dir.push(part);
    }
    Ok(())
}

/// One app's cgroups: the same relative path in each hierarchy floe uses.
#[derive(Debug)]
pub struct AppGroup {
    pub name: String,
    pub v2: Option<PathBuf>,
    pub memory: Option<PathBuf>,
    pub freezer: Option<PathBuf>,
    /// Processes live in subgroups too (an adopted `uid_N` with `pid_M` children).
    pub nested: bool,
}

/// Makes a group directory, or takes the one there; anything else by that name (a
/// cgroup interface file, a link) is an error, never taken for a group.
fn mkdir(p: &Path) -> Result<()> {
    match std::fs::create_dir(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => Ok(()),
            _ => Err(Error::Unsupported(format!("{}: exists and is not a cgroup directory", p.display()))),
        },
        Err(e) => Err(io_err(p)(e)),
    }
}

/// v1 memory: charges move with a process that joins the group (anonymous and file
/// pages, `memory.move_charge_at_immigrate` 3), so an adopted app's memory counts in
/// its group and the budget from the moment it is moved, not only what it allocates
/// afterwards. Kernels that dropped the file (or refuse it) say so.
fn move_charges(dir: &Path) -> Result<()> {
    let f = dir.join("memory.move_charge_at_immigrate");
    if !f.exists() {
        return Err(Error::Unsupported(format!("{}: no such file: charges stay where a process was", f.display())));
    }
    write(&f, "3")
}

/// The processes of the cgroup `dir`, and with `nested` of every group below it.
pub(crate) fn pids_in(dir: &Path, nested: bool) -> Result<Vec<i32>> {
    fn walk(d: &Path, nested: bool, out: &mut Vec<i32>) -> Result<()> {
        out.extend(read(d.join("cgroup.procs"))?.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
        if !nested {
            return Ok(());
        }
        for e in std::fs::read_dir(d).map_err(io_err(d))?.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                // A subgroup removed meanwhile holds no processes.
                let _ = walk(&e.path(), true, out);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, nested, &mut out)?;
    Ok(out)
}

impl AppGroup {
    /// Creates (or adopts) `rel` (e.g. "floe/com.example") in every hierarchy present;
    /// the freezer v1 group only when there is no v2 to freeze with.
    pub fn create(h: &Hierarchies, rel: &str) -> Result<AppGroup> {
        let make = |root: &Option<PathBuf>| -> Result<Option<PathBuf>> {
            let Some(root) = root else { return Ok(None) };
            let mut p = root.clone();
            for part in rel.split('/').filter(|s| !s.is_empty()) {
                p.push(part);
                mkdir(&p)?;
            }
            Ok(Some(p))
        };
        let v2 = make(&h.v2)?;
        if let (Some(root), Some(_), None) = (&h.v2, &v2, &h.memory_v1) {
            enable_v2_memory(root, rel)?;
        }
        let memory = make(&h.memory_v1)?;
        if let Some(m) = &memory {
            // Where the kernel refuses, [`AppGroup::moves_charges`] says so.
            let _ = move_charges(m);
        }
        let freezer = if v2.is_none() { make(&h.freezer_v1)? } else { None };
        if v2.is_none() && freezer.is_none() {
            return Err(Error::Unsupported("no cgroup v2 and no v1 freezer: cannot freeze or kill apps by group".into()));
        }
        Ok(AppGroup { name: rel.to_string(), v2, memory, freezer, nested: false })
    }

    /// Whether memory charges follow processes moved into the group: v1's
    /// `memory.move_charge_at_immigrate` set (v2 never moves them; there a process's
    /// memory stays charged where it was allocated). Err says why not.
    pub fn moves_charges(&self) -> std::result::Result<(), String> {
        match self.memory_controller() {
            Some(MemoryController::V1(d)) => match read(d.join("memory.move_charge_at_immigrate")) {
                Ok(v) if v.trim() == "3" => Ok(()),
                _ => move_charges(d).map_err(|e| {
                    format!("the kernel does not move memory charges ({e}; removed after Linux 6.x's deprecation): what an adopted app allocated before stays charged where it was")
                }),
            },
            Some(MemoryController::V2(_)) => Err("cgroup v2 does not move charges: what an adopted app allocated before stays charged where it was".into()),
            None => Err("no memory controller".into()),
        }
    }

    /// The directories of every hierarchy from its mount down to `rel` that do not exist
    /// yet: what [`AppGroup::create`] would make (parents first).
    pub fn missing_dirs(h: &Hierarchies, rel: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in [&h.v2, &h.memory_v1, &h.freezer_v1].into_iter().flatten() {
            let mut p = root.clone();
            for part in rel.split('/').filter(|s| !s.is_empty()) {
                p.push(part);
                if !p.exists() {
                    out.push(p.clone());
                }
            }
        }
        out
    }

    /// The group `create` would make for `rel`, without making anything (a dry run):
    /// its paths, which may not exist.
    pub fn planned(h: &Hierarchies, rel: &str) -> AppGroup {
        let at = |root: &Option<PathBuf>| root.as_ref().map(|r| r.join(rel));
        let v2 = at(&h.v2);
        let freezer = if v2.is_none() { at(&h.freezer_v1) } else { None };
        AppGroup { name: rel.to_string(), v2, memory: at(&h.memory_v1), freezer, nested: false }
    }

    /// An eventfd the kernel signals when the v1 group's memory use crosses `bytes`
    /// (either way; `memory.usage_in_bytes` through `cgroup.event_control`).
    pub fn usage_threshold(&self, bytes: u64) -> Result<std::os::fd::OwnedFd> {
        let Some(MemoryController::V1(d)) = self.memory_controller() else {
            return Err(Error::Unsupported("usage thresholds need a v1 memory group".into()));
        };
        self.v1_event(d, "memory.usage_in_bytes", &bytes.to_string())
    }

    /// An eventfd the kernel signals when reclaim in the v1 group (or, with
    /// `hierarchy`, in any group below it) reaches `level` of `memory.pressure_level`
    /// ("low", "medium" or "critical"; an event comes at that level and above) through
    /// `cgroup.event_control`. The kernel's vmpressure counts, over each window of 512
    /// pages scanned, the share it could not reclaim: medium from 60 %, critical from
    /// 95 % or when reclaim's priority falls low, the group then close to its OOM killer.
    pub fn pressure_level(&self, level: &str, hierarchy: bool) -> Result<std::os::fd::OwnedFd> {
        let Some(MemoryController::V1(d)) = self.memory_controller() else {
            return Err(Error::Unsupported("memory.pressure_level needs a v1 memory group".into()));
        };
        self.v1_event(d, "memory.pressure_level", &format!("{level}{}", if hierarchy { ",hierarchy" } else { "" }))
    }

    /// Registers a fresh eventfd on the v1 control file `file` of the group at `d` with
    /// `args` (`cgroup.event_control`'s "<event fd> <file fd> <args>").
    fn v1_event(&self, d: &Path, file: &str, args: &str) -> Result<std::os::fd::OwnedFd> {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: eventfd has no memory preconditions; the fd is owned at once.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            return Err(io_err("eventfd")(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh, valid fd nothing else owns.
        let efd = unsafe { std::os::fd::OwnedFd::from_raw_fd(efd) };
        let target = std::fs::File::open(d.join(file)).map_err(io_err(d.join(file)))?;
        write(d.join("cgroup.event_control"), &format!("{} {} {args}", efd.as_raw_fd(), target.as_raw_fd()))?;
        // The kernel holds its own references: the control file may close.
        Ok(efd)
    }

    /// v2: sets `memory.high`, where the kernel throttles and reclaims the group before
    /// its `memory.max`.
    pub fn set_memory_high(&self, bytes: u64) -> Result<()> {
        match self.memory_controller() {
            Some(MemoryController::V2(d)) => write(d.join("memory.high"), &bytes.to_string()),
            _ => Err(Error::Unsupported("memory.high is cgroup v2's".into())),
        }
    }

    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.v2.iter().chain(&self.memory).chain(&self.freezer)
    }

    /// The directories floe made for this group: all of them, or for an adopted group
    /// only its v1 memory group (the v2 layout is someone else's).
    pub fn own_dirs(&self) -> Vec<PathBuf> {
        if self.nested {
            self.memory.iter().cloned().collect()
        } else {
            self.dirs().cloned().collect()
        }
    }

    /// Moves a process (all its threads) into the app's groups.
    pub fn add(&self, pid: i32) -> Result<()> {
        for d in self.dirs() {
            write(d.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// Adopts an app group of an existing v2 layout (Android's `uid_N`, whose processes
    /// sit in `pid_M` children) for freezing and killing, and gives its processes a v1
    /// memory group `memory_rel` of floe's own (refaults, swappiness) where the machine
    /// has one; in a hybrid hierarchy that leaves the v2 layout as it is.
    pub fn adopt(h: &Hierarchies, v2_dir: PathBuf, memory_rel: &str) -> Result<AppGroup> {
        if h.v2.is_none() || !v2_dir.join("cgroup.procs").exists() {
            return Err(Error::Unsupported(format!("{}: not a cgroup v2 group", v2_dir.display())));
        }
        let memory = match &h.memory_v1 {
            Some(root) => {
                let mut p = root.clone();
                for part in memory_rel.split('/').filter(|s| !s.is_empty()) {
                    p.push(part);
                    mkdir(&p)?;
                }
                let _ = move_charges(&p);
                Some(p)
            }
            None => None,
        };
        Ok(AppGroup { name: v2_dir.display().to_string(), v2: Some(v2_dir), memory, freezer: None, nested: true })
    }

    /// Moves the app's processes that are not yet in its v1 memory group there (for
    /// adopted groups, whose processes the layout's owner starts).
    pub fn sync_memory(&self) -> Result<usize> {
        let Some(m) = &self.memory else { return Ok(0) };
        let there: Vec<i32> = read(m.join("cgroup.procs"))?.lines().filter_map(|l| l.trim().parse().ok()).collect();
        let mut moved = 0;
        for pid in self.pids()?.into_iter().filter(|p| !there.contains(p)) {
            // A process that exited meanwhile is not an error.
            if write(m.join("cgroup.procs"), &pid.to_string()).is_ok() {
                moved += 1;
            }
        }
        Ok(moved)
    }

    /// The processes in the app (from the group used for freezing, and its children:
    /// an adopted `uid_N` holds its processes in `pid_M` subgroups).
    pub fn pids(&self) -> Result<Vec<i32>> {
        pids_in(self.v2.as_ref().or(self.freezer.as_ref()).expect("created with one"), self.nested)
    }

    /// Freezes every process of the app and waits until the kernel reports it frozen.
    pub fn freeze(&self, timeout: Duration) -> Result<()> {
        self.set_frozen(true, timeout)
    }

    pub fn thaw(&self, timeout: Duration) -> Result<()> {
        self.set_frozen(false, timeout)
    }

    fn set_frozen(&self, on: bool, timeout: Duration) -> Result<()> {
        if let Some(d) = &self.v2 {
            write(d.join("cgroup.freeze"), if on { "1" } else { "0" })?;
        } else if let Some(d) = &self.freezer {
            write(d.join("freezer.state"), if on { "FROZEN" } else { "THAWED" })?;
        }
        let start = Instant::now();
        while self.is_frozen()? != on {
            if start.elapsed() > timeout {
                return Err(Error::Timeout {
                    what: format!("{} {}", if on { "freezing" } else { "thawing" }, self.name),
                    ms: timeout.as_millis() as u64,
                });
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// What the kernel reports: v2 `cgroup.events` "frozen 1", v1 `freezer.state`
    /// FROZEN.
    pub fn is_frozen(&self) -> Result<bool> {
        if let Some(d) = &self.v2 {
            let ev = parse_flat(&read(d.join("cgroup.events"))?);
            return Ok(ev.get("frozen") == Some(&1));
        }
        let d = self.freezer.as_ref().expect("created with one");
        Ok(read(d.join("freezer.state"))?.trim() == "FROZEN")
    }

    /// Kills every process of the app through its pidfd (a pid that died and was reused
    /// meanwhile is never signalled), waits for each to exit, then sweeps up any process
    /// forked in between (v2 `cgroup.kill`, or another pidfd round). Waits until the
    /// group is empty.
    pub fn kill(&self, timeout: Duration) -> Result<()> {
        if self.v2.is_none() {
            // A frozen v1 group must be thawed for SIGKILL to be delivered promptly (a
            // v2 frozen task wakes for a fatal signal by itself).
            let _ = self.set_frozen(false, timeout);
        }
        let start = Instant::now();
        let fds: Vec<crate::sys::Pidfd> = self.pids()?.into_iter().filter_map(|pid| crate::sys::Pidfd::open(pid).ok()).collect();
        for p in &fds {
            let _ = p.send_signal(libc::SIGKILL);
        }
        // Their memory back now, from here, not when each is scheduled to exit.
        for p in &fds {
            p.release_memory();
        }
        for p in &fds {
            p.wait_exit(timeout.saturating_sub(start.elapsed()))?;
        }
        let mut swept = false;
        while !self.pids()?.is_empty() {
            if start.elapsed() > timeout {
                return Err(Error::Timeout { what: format!("killing {}", self.name), ms: timeout.as_millis() as u64 });
            }
            if !swept {
                swept = true;
                match &self.v2 {
                    Some(d) => write(d.join("cgroup.kill"), "1")?,
                    None => {
                        for pid in self.pids()? {
                            if let Ok(p) = crate::sys::Pidfd::open(pid) {
                                let _ = p.send_signal(libc::SIGKILL);
                            }
                        }
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Caps the group's memory (v1 `memory.limit_in_bytes`, or v2 `memory.max` where the
    /// memory controller is on v2).
    pub fn set_memory_limit(&self, bytes: u64) -> Result<()> {
        match self.memory_controller() {
            Some(MemoryController::V1(d)) => write(d.join("memory.limit_in_bytes"), &bytes.to_string()),
            Some(MemoryController::V2(d)) => write(d.join("memory.max"), &bytes.to_string()),
            None => Err(Error::Unsupported("no memory controller (v1 memory or v2 memory.max): cannot cap the apps' memory".into())),
        }
    }

    /// Lifts the cap [`AppGroup::set_memory_limit`] set (and v2's `memory.high`): the
    /// group may use all memory again. A group that is not there has no cap to lift.
    pub fn lift_memory_limit(&self) -> Result<()> {
        match self.memory_controller() {
            Some(MemoryController::V1(d)) if d.is_dir() => write(d.join("memory.limit_in_bytes"), "-1"),
            Some(MemoryController::V2(d)) if d.is_dir() => {
                write(d.join("memory.high"), "max")?;
                write(d.join("memory.max"), "max")
            }
            _ => Ok(()),
        }
    }

    /// The group's memory use: what a budget counts (charged bytes), its LRU sizes, and
    /// among them the part the kernel can drop cheaply (inactive file).
    pub fn memory_usage(&self) -> Result<GroupMemory> {
        let (usage, stat, v1) = self.memory_usage_files()?;
        Ok(GroupMemory::parse(&read(usage)?, &read(stat)?, v1))
    }

    /// The files [`AppGroup::memory_usage`] reads: the charge (v1 memory.usage_in_bytes,
    /// v2 memory.current), memory.stat, and whether they are v1's.
    pub fn memory_usage_files(&self) -> Result<(PathBuf, PathBuf, bool)> {
        match self.memory_controller() {
            Some(MemoryController::V1(d)) => Ok((d.join("memory.usage_in_bytes"), d.join("memory.stat"), true)),
            Some(MemoryController::V2(d)) => Ok((d.join("memory.current"), d.join("memory.stat"), false)),
            None => Err(Error::Unsupported("no memory controller: no per-group memory use".into())),
        }
    }

    /// CPU time the group's processes used, in microseconds (cgroup v2's cpu.stat,
    /// which every v2 group has whether or not the cpu controller is enabled).
    pub fn cpu_usec(&self) -> Result<u64> {
        let d = self.v2.as_ref().ok_or_else(|| Error::Unsupported("no cgroup v2: no per-group CPU time".into()))?;
        parse_flat(&read(d.join("cpu.stat"))?)
            .get("usage_usec")
            .copied()
            .ok_or_else(|| Error::Parse { path: d.join("cpu.stat").display().to_string(), detail: "no usage_usec".into() })
    }

    /// The app's memory controller: its v1 memory group, or its v2 group where the
    /// memory controller is on there (the group has a `memory.stat`).
    pub fn memory_controller(&self) -> Option<MemoryController<'_>> {
        match (&self.memory, &self.v2) {
            (Some(d), _) => Some(MemoryController::V1(d)),
            (None, Some(d)) if d.join("memory.stat").exists() => Some(MemoryController::V2(d)),
            _ => None,
        }
    }

    /// Workingset refaults of the app's memory cgroup: (anonymous, file). The v1 group's
    /// own counters (floe's groups hold their processes themselves), or v2's, which count
    /// the group's subtree (an adopted `uid_N` with its `pid_M` children).
    pub fn refaults(&self) -> Result<(u64, u64)> {
        let d = self
            .memory_controller()
            .ok_or_else(|| Error::Unsupported("no memory controller (v1, or on v2): no per-app refault counters".into()))?
            .dir();
        Ok(refaults(&parse_flat(&read(d.join("memory.stat"))?)))
    }

    /// Per-app swappiness; 0 keeps the app's anonymous memory out of swap. v1 has it
    /// (`memory.swappiness`); v2 has no per-group swappiness, only a swap limit: 0
    /// becomes `memory.swap.max` 0 (none of the app's memory may go to swap) and any
    /// other value `max` (the machine's swappiness decides).
    pub fn set_swappiness(&self, v: u32) -> Result<()> {
        match self.memory_controller() {
            Some(MemoryController::V1(d)) => write(d.join("memory.swappiness"), &v.to_string()),
            Some(MemoryController::V2(d)) if d.join("memory.swap.max").exists() => {
                write(d.join("memory.swap.max"), if v == 0 { "0" } else { "max" })
            }
            Some(MemoryController::V2(_)) => Err(Error::Unsupported(
                "v2 memory controller without memory.swap.max (no swap accounting: CONFIG_SWAP, or cgroup.memory=noswap): no per-app swap limit".into(),
            )),
            None => Err(Error::Unsupported("no memory controller (v1, or on v2): no per-app swappiness".into())),
        }
    }

    /// The app's memory PSI file (v2), for a per-app trigger.
    pub fn pressure_path(&self) -> Option<PathBuf> {
        self.v2.as_ref().map(|d| d.join("memory.pressure"))
    }

    /// Thaws and kills what is left, then removes the groups (children first is the
    /// caller's job: this removes only the app's own directories).
    pub fn remove(self, timeout: Duration) -> Result<()> {
        if self.is_frozen().unwrap_or(false) {
            self.thaw(timeout)?;
        }
        if !self.pids()?.is_empty() {
            self.kill(timeout)?;
        }
        for d in self.dirs() {
            std::fs::remove_dir(d).map_err(io_err(d))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_mountinfo() {
        let mi = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
        let h = Hierarchies::parse(mi);
        assert_eq!(h.v2.as_deref(), Some(Path::new("/sys/fs/cgroup/unified")));
        assert_eq!(h.memory_v1.as_deref(), Some(Path::new("/sys/fs/cgroup/memory")));
        assert_eq!(h.freezer_v1.as_deref(), Some(Path::new("/sys/fs/cgroup/freezer")));
        // A pure v2 machine.
        let h = Hierarchies::parse("29 1 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n");
        assert_eq!(h, Hierarchies { v2: Some("/sys/fs/cgroup".into()), ..Default::default() });
        // Optional fields before " - " do not confuse the parser; no cgroups at all.
        assert_eq!(Hierarchies::parse("1 0 8:1 / / rw shared:1 master:2 - ext4 /dev/sda1 rw\n"), Hierarchies::default());
    }

    #[test]
    fn app_group_on_a_fixture_tree() {
        let dir = std::env::temp_dir().join(format!("floe-cg-fixture-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let h = Hierarchies { v2: Some(dir.join("unified")), memory_v1: Some(dir.join("memory")), freezer_v1: Some(dir.join("freezer")) };
        for r in [&h.v2, &h.memory_v1, &h.freezer_v1] {
            std::fs::create_dir_all(r.as_ref().unwrap()).unwrap();
        }
        let g = AppGroup::create(&h, "floe/app").unwrap();
        assert!(g.freezer.is_none(), "v2 freezes; the v1 freezer is not used");
        let v2 = g.v2.clone().unwrap();
        std::fs::write(v2.join("cgroup.events"), "populated 1\nfrozen 1\n").unwrap();
        std::fs::write(v2.join("cgroup.procs"), "12\n34\n").unwrap();
        assert!(g.is_frozen().unwrap());
        assert_eq!(g.pids().unwrap(), vec![12, 34]);
        let mem = g.memory.clone().unwrap();
        std::fs::write(mem.join("memory.stat"), "cache 1\nworkingset_refault_anon 7\nworkingset_refault_file 11\n").unwrap();
        assert_eq!(g.refaults().unwrap(), (7, 11));
        // v1 counts the subtree under total_*.
        std::fs::write(mem.join("memory.usage_in_bytes"), "8192\n").unwrap();
        std::fs::write(mem.join("memory.stat"), "inactive_file 1\ntotal_active_anon 4096\ntotal_inactive_file 2048\n").unwrap();
        let m = g.memory_usage().unwrap();
        assert_eq!((m.usage, m.active_anon, m.inactive_file, m.active_file), (8192, 4096, 2048, 0));
        assert_eq!(GroupMemory::parse("5\n", "active_anon 3\ntotal_active_anon 9\n", false).active_anon, 3, "v2 has no total_");
        g.set_swappiness(0).unwrap();
        assert_eq!(std::fs::read_to_string(mem.join("memory.swappiness")).unwrap(), "0");
        assert_eq!(g.pressure_path(), Some(v2.join("memory.pressure")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A pure v2 machine (no v1 memory hierarchy) whose root offers the memory
    /// controller: floe turns it on down to the app's group and takes refaults and swap
    /// eligibility from v2's files; where v2 does not offer it, nothing is written.
    #[test]
    fn the_memory_controller_on_a_pure_v2_fixture_tree() {
        let dir = std::env::temp_dir().join(format!("floe-cg-v2-fixture-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("cgroup");
        let h = Hierarchies { v2: Some(root.clone()), ..Default::default() };
        // The kernel makes these files with each group; a fixture writes them first.
        std::fs::create_dir_all(root.join("floe")).unwrap();
        std::fs::write(root.join("cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
        std::fs::write(root.join("cgroup.subtree_control"), "cpu\n").unwrap();
        std::fs::write(root.join("floe/cgroup.subtree_control"), "memory\n").unwrap();
        let g = AppGroup::create(&h, "floe/app").unwrap();
        let control = |d: &str| std::fs::read_to_string(root.join(d).join("cgroup.subtree_control")).unwrap();
        assert_eq!(control(""), "+memory", "the root passes memory on");
        assert_eq!(control("floe"), "memory\n", "already on in floe's group: not written again");
        assert!(!root.join("floe/app/cgroup.subtree_control").exists(), "the app's own group passes nothing on");
        let app = root.join("floe/app");
        assert_eq!(g.memory_controller(), None, "no memory.stat yet: the controller is not on");
        assert!(g.refaults().is_err() && g.set_swappiness(0).is_err());
        std::fs::write(app.join("memory.stat"), "anon 4096\nworkingset_refault_anon 3\nworkingset_refault_file 5\n").unwrap();
        assert_eq!(g.memory_controller(), Some(MemoryController::V2(&app)));
        assert_eq!(g.refaults().unwrap(), (3, 5));
        let e = g.set_swappiness(0).unwrap_err().to_string();
        assert!(e.contains("memory.swap.max"), "no swap accounting is said: {e}");
        std::fs::write(app.join("memory.swap.max"), "max\n").unwrap();
        g.set_swappiness(0).unwrap();
        assert_eq!(std::fs::read_to_string(app.join("memory.swap.max")).unwrap(), "0");
        g.set_swappiness(60).unwrap();
        assert_eq!(std::fs::read_to_string(app.join("memory.swap.max")).unwrap(), "max");

        // A v2 root that does not offer memory (a hybrid machine's, where v1 holds it):
        // its subtree_control is left alone.
        std::fs::write(root.join("cgroup.controllers"), "cpu pids\n").unwrap();
        std::fs::write(root.join("cgroup.subtree_control"), "cpu\n").unwrap();
        AppGroup::create(&h, "floe/other").unwrap();
        assert_eq!(control(""), "cpu\n");
        // Nor is it touched on a hybrid machine, whatever v2 offers.
        std::fs::write(root.join("cgroup.controllers"), "memory\n").unwrap();
        std::fs::create_dir_all(dir.join("memory")).unwrap();
        let hybrid = Hierarchies { memory_v1: Some(dir.join("memory")), ..h.clone() };
        let g = AppGroup::create(&hybrid, "floe/third").unwrap();
        assert_eq!(control(""), "cpu\n");
        assert_eq!(g.memory_controller(), Some(MemoryController::V1(&dir.join("memory/floe/third"))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
