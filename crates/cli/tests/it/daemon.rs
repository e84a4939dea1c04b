//! The daemon on the real kernel (root; cgroup v2 plus v1 memory; zram): Ice freezes the
//! background app that refaults, `floe ctl fg` thaws it, its timeline records both, and
//! SIGKILL of the daemon leaves nothing frozen; a clean stop removes the groups it made
//! that hold no process (its supervisor thaws within a second); SmartLMK kills the set
//! its knapsack chooses from a restored history, through pidfds, and nothing else;
//! selective swap/kill keeps a kill-target's memory out of swap while a swap-target's
//! goes, and swap-first pages out below its own threshold (once only where that frees
//! nothing); Acclaim pages out background apps before the foreground one; lmkd's PSI
//! mode kills cached apps on memory stalls, never by minfree. Each test owns its cgroups, processes, socket, state database and
//! (if it had to set it up) zram swap, and removes them; what a killed run left (its PID gone) the
//! next run removes. The tests run alone (`crate::alone`): they share zram and time the
//! kernel.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Cleanup {
    procs: Vec<Child>,
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    /// Scratch folders, removed with what they hold, whether the test passed or not.
    trees: Vec<PathBuf>,
    zram: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.kill();
            let _ = p.wait();
        }
        // Thaw, then remove the groups deepest first.
        for d in &self.dirs {
            let _ = std::fs::write(d.join("cgroup.freeze"), "0");
        }
        std::thread::sleep(Duration::from_millis(100));
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        for t in &self.trees {
            let _ = std::fs::remove_dir_all(t);
        }
        if self.zram {
            let _ = Command::new("swapoff").arg("/dev/zram0").status();
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
}

/// One test's names and its cleanup: a tag unique to this run, the cgroup2 and v1 memory
/// mounts, the daemon's socket, state database and config file (all removed at the
/// end), and zram swap set up when asked for.
struct Itest {
    tag: String,
    v2: PathBuf,
    mem: PathBuf,
    sock: String,
    db: String,
    cfg: PathBuf,
    c: Cleanup,
}

fn itest(name: &str, zram: bool) -> Itest {
    let tag = format!("floe-itest-{name}-{}", std::process::id());
    let (v2, mem) = (mount("cgroup2", None), mount("cgroup", Some("memory")));
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_stale(&[&v2, &mem], &std::env::temp_dir()));
    let mut c = Cleanup { procs: vec![], dirs: vec![], files: vec![], trees: vec![], zram: false };
    if zram {
        c.zram = zram_swap();
    }
    let (sock, db) = (format!("/tmp/{tag}.sock"), format!("/tmp/{tag}.db"));
    let cfg = std::env::temp_dir().join(format!("{tag}.toml"));
    c.files.extend([PathBuf::from(&sock), cfg.clone()]);
    c.files.extend(db_files(&db));
    Itest { tag, v2, mem, sock, db, cfg, c }
}

impl Itest {
    /// Writes an Ice config for `apps` (each matched by the command line `{tag}-NAME`),
    /// sampling every 50 ms, with `extra` keys, and registers the groups the daemon will
    /// make in both hierarchies for removal.
    fn ice_config(&mut self, apps: &[&str], extra: &str) {
        self.config("ice", apps, extra)
    }

    /// [`Itest::ice_config`] for another policy.
    fn config(&mut self, policy: &str, apps: &[&str], extra: &str) {
        self.config_every(policy, apps, extra, 50)
    }

    /// [`Itest::config`], sampling and looking for processes every `ms` milliseconds.
    fn config_every(&mut self, policy: &str, apps: &[&str], extra: &str, ms: u64) {
        let Itest { tag, sock, .. } = self;
        let mut text = format!(
            "policy = \"{policy}\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nstate_db = \"/tmp/{tag}.db\"\nsample_ms = {ms}\ndiscover_ms = {ms}\n{extra}"
        );
        for a in apps {
            text += &format!("\n[[app]]\nname = \"{a}\"\ncmdline = \"{tag}-{a}\"\n");
        }
        std::fs::write(&self.cfg, text).unwrap();
        for base in [&self.v2, &self.mem] {
            let root = base.join(&self.tag);
            self.c.dirs.push(root.clone());
            self.c.dirs.extend(apps.iter().map(|a| root.join(a)));
        }
    }
}

/// Removes what an earlier run of these tests left when it was killed before its
/// cleanup ran: groups named `floe-itest-NAME-PID` under `bases` (their empty children
/// first) and files `floe-itest-NAME-PID.*` in `tmp`, whose PID is no live process.
/// A group that still holds a process stays (rmdir refuses it); a live run's are never
/// touched.
fn sweep_stale(bases: &[&Path], tmp: &Path) {
    let stale = |name: &str| {
        let Some(rest) = name.strip_prefix("floe-itest-") else { return false };
        let stem = rest.split('.').next().unwrap_or(rest);
        let pid = stem.rsplit('-').next().and_then(|p| p.parse::<u32>().ok());
        pid.is_some_and(|pid| pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists())
    };
    let names = |dir: &Path| -> Vec<PathBuf> {
        let entries = std::fs::read_dir(dir).map(|rd| rd.flatten().collect::<Vec<_>>()).unwrap_or_default();
        entries.into_iter().filter(|e| stale(&e.file_name().to_string_lossy())).map(|e| e.path()).collect()
    };
    for base in bases {
        for group in names(base).into_iter().filter(|d| d.is_dir()) {
            let children = std::fs::read_dir(&group).map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect::<Vec<_>>());
            for child in children.unwrap_or_default() {
                let _ = std::fs::remove_dir(child);
            }
            let _ = std::fs::remove_dir(&group);
        }
    }
    for file in names(tmp).into_iter().filter(|f| f.is_file()) {
        let _ = std::fs::remove_file(file);
    }
}

/// A run killed before its cleanup leaves its groups and files; the next run removes
/// them, and nothing of a live process's.
#[test]
fn a_killed_runs_leftovers_are_swept_and_a_live_runs_kept() {
    let _alone = crate::alone();
    let v2 = mount("cgroup2", None);
    let tmp = std::env::temp_dir().join(format!("floe-sweep-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let (stale, live) = (v2.join(format!("floe-itest-sweep-{dead_pid}")), v2.join(format!("floe-itest-sweep-{}", std::process::id())));
    let mut c = Cleanup {
        procs: vec![],
        dirs: vec![live.clone(), stale.clone(), stale.join("busy")],
        files: vec![],
        trees: vec![tmp.clone()],
        zram: false,
    };
    for d in [&stale.join("busy"), &live] {
        std::fs::create_dir_all(d).unwrap();
    }
    let (stale_file, live_file) =
        (tmp.join(format!("floe-itest-sweep-{dead_pid}.toml")), tmp.join(format!("floe-itest-sweep-{}.db-wal", std::process::id())));
    for f in [&stale_file, &live_file] {
        std::fs::write(f, "x").unwrap();
    }
    sweep_stale(&[&v2], &tmp);
    assert!(!stale.exists() && !stale_file.exists(), "the dead run's group and file are gone");
    assert!(live.is_dir() && live_file.is_file(), "this run's are kept");
    c.files.push(live_file);
}

/// Waits (up to 30 s) until the system's memory stall time grows by less than 20 ms over
/// 2.2 s, longer than lmkd's 2 s trigger windows, so no trigger fires on stalls from
/// before the test.
fn settle_memory_psi() {
    let path = "/proc/pressure/memory";
    let total_us = || floe_linux::procfs::parse_psi(path, &std::fs::read_to_string(path).expect("needs PSI")).unwrap().some.total_us;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let before = total_us();
        std::thread::sleep(Duration::from_millis(2200));
        if total_us() - before < 20_000 || Instant::now() > deadline {
            return;
        }
    }
}

/// Panics, saying why, unless this process runs as root: the daemon's tests make and
/// remove cgroups under /sys/fs/cgroup, freeze, kill and page out processes, and set
/// up zram swap, which only root may do. Every test here finds its hierarchies with
/// [`mount`] first, which checks.
fn needs_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        panic!(
            "the daemon's tests act on this machine's kernel: they make and remove cgroups under /sys/fs/cgroup, \
freeze, kill and page out processes, and set up zram swap, which only root may do. Run them as root, \
e.g. `sudo -E cargo test -p floe --test it daemon::`"
        );
    }
}

/// Where the hierarchy of file system `fs` (with mount option `opt`) is mounted; first
/// checks that the test runs as root ([`needs_root`]).
fn mount(fs: &str, opt: Option<&str>) -> PathBuf {
    needs_root();
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for l in mi.lines() {
        let (pre, post) = l.split_once(" - ").unwrap();
        let mut post = post.split_whitespace();
        let (t, opts) = (post.next().unwrap(), post.nth(1).unwrap_or(""));
        if t == fs && opt.is_none_or(|o| opts.split(',').any(|x| x == o)) {
            return pre.split_whitespace().nth(4).unwrap().into();
        }
    }
    panic!("this test needs a {fs} mount {opt:?}");
}

/// Makes zram0 swap if it is not already; true when this test set it up (and so must
/// tear it down). zram0 configured as something else is left alone, and the test fails.
fn zram_swap() -> bool {
    if std::fs::read_to_string("/proc/swaps").unwrap().lines().any(|l| l.starts_with("/dev/zram0")) {
        return false;
    }
    let size = std::fs::read_to_string("/sys/block/zram0/disksize").expect("needs /dev/zram0");
    assert_eq!(size.trim(), "0", "zram0 is configured, but not as swap, by someone else; not touching it");
    std::fs::write("/sys/block/zram0/disksize", "256M").unwrap();
    assert!(Command::new("mkswap").arg("/dev/zram0").stdout(Stdio::null()).status().unwrap().success());
    assert!(Command::new("swapon").arg("/dev/zram0").status().unwrap().success());
    true
}

fn db_files(db: &str) -> Vec<PathBuf> {
    ["", "-wal", "-shm"].iter().map(|s| PathBuf::from(format!("{db}{s}"))).collect()
}

/// Starts the daemon on `cfg` and waits for its first line (groups, supervisor and
/// socket are up); its lines go to stderr and are collected.
fn start_daemon(cfg: &Path, expect: &str) -> (Child, std::sync::Arc<Mutex<Vec<String>>>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_floe"));
    cmd.args(["daemon", "--config", cfg.to_str().unwrap()]);
    start_daemon_cmd(cmd, expect)
}

/// [`start_daemon`] with the daemon's whole command (`floed --config FILE`, say).
fn start_daemon_cmd(mut cmd: Command, expect: &str) -> (Child, std::sync::Arc<Mutex<Vec<String>>>) {
    let mut daemon = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = std::io::BufReader::new(daemon.stdout.take().unwrap()).lines();
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    loop {
        let l = lines.next().expect("the daemon exited before it was up").unwrap();
        eprintln!("daemon: {l}");
        seen.lock().unwrap().push(l.clone());
        if l.contains("floe daemon: policy") {
            assert!(l.contains(expect), "{l}");
            break;
        }
    }
    let keep = seen.clone();
    std::thread::spawn(move || {
        for l in lines {
            let l = l.unwrap_or_default();
            eprintln!("daemon: {l}");
            keep.lock().unwrap().push(l);
        }
    });
    (daemon, seen)
}

/// A python process named `name` (its cmdline) that waits for `go` to exist, then
/// touches `mib` MiB of anonymous memory in steps of `step` MiB every `pause` seconds,
/// then sleeps.
fn app(name: &str, go: &Path, mib: usize, step: usize, pause: f64) -> Child {
    let script = format!(
        "import mmap,os,time\nwhile not os.path.exists({go:?}): time.sleep(0.02)\nm=mmap.mmap(-1,{mib}<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nfor s in range(0,{mib},{step}):\n    for i in range(s<<20,min(s+{step},{mib})<<20,4096): m[i]=1\n    time.sleep({pause})\ntime.sleep(600)\n"
    );
    Command::new(python()).args(["-c", &script, name]).spawn().unwrap()
}

/// A `sleep` whose command line is `name`: an app that holds no memory to speak of.
fn sleeper(name: &str) -> Child {
    Command::new("bash").args(["-c", &format!("exec -a {name} sleep 600")]).spawn().unwrap()
}

/// Waits until the daemon's status shows `n` apps with processes adopted: up to 20 s,
/// as Python apps start slowly on a loaded 2-core machine (the test suite's own
/// simulations beside them).
fn wait_adopted(sock: &str, n: usize) {
    wait_for(&format!("{n} apps adopted"), Duration::from_secs(20), || {
        ctl(sock, &["status"]).lines().filter(|l| l.contains("pids [") && !l.contains("pids []")).count() == n
    });
}

/// The Python interpreter itself, not a launcher script (pyenv's shim forks helpers
/// into the app's group).
fn python() -> String {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        let out = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().expect("python3");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
    .clone()
}

fn vm_kb(pid: u32, key: &str) -> u64 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    st.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// A field of /proc/meminfo, in kB.
fn meminfo_kb(key: &str) -> u64 {
    let m = std::fs::read_to_string("/proc/meminfo").unwrap();
    m.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Which of `path`'s pages are in the page cache (mincore on a read-only mapping).
fn resident_pages(path: &Path) -> Vec<bool> {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let pages = len.div_ceil(4096);
    let mut vec = vec![0u8; pages];
    // SAFETY: a shared read-only mapping of an open file of `len` bytes, unmapped
    // before return; mincore writes one byte per page into `vec`, which has a byte for
    // each.
    unsafe {
        use std::os::fd::AsRawFd;
        let m = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0);
        assert_ne!(m, libc::MAP_FAILED);
        let rc = libc::mincore(m, len, vec.as_mut_ptr().cast());
        libc::munmap(m, len);
        assert_eq!(rc, 0, "mincore");
    }
    vec.iter().map(|&b| b & 1 == 1).collect()
}

fn alive(c: &mut Child) -> bool {
    c.try_wait().unwrap().is_none()
}

fn frozen(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events")).unwrap_or_default().lines().any(|l| l == "frozen 1")
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops the daemon (`c.procs[0]`) with SIGTERM, as a service manager would, and returns
/// what it saved for `policy` (`floe state --db DB POLICY`): the JSON, and the output.
fn stop_and_saved_state(c: &mut Cleanup, db: &str, policy: &str) -> (serde_json::Value, String) {
    assert!(Command::new("kill").args(["-TERM", &c.procs[0].id().to_string()]).status().unwrap().success());
    let _ = c.procs[0].wait();
    let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["state", "--db", db, policy]).output().unwrap();
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = out.split_once(": ").map(|(_, j)| j).unwrap_or_else(|| panic!("{out}"));
    (serde_json::from_str(json.trim()).unwrap(), out)
}

fn ctl(sock: &str, req: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["ctl", "--socket", sock]).args(req).output().unwrap();
    assert!(out.status.success(), "ctl {req:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn ice_freezes_the_refaulting_background_app_ctl_thaws_it_and_sigkill_leaves_nothing_frozen() {
    let _alone = crate::alone();
    // zram swap, so the memory-limited app's pages are swapped and refault.
    let mut it = itest("ice", true);
    let timeline_keys = format!("timeline = \"/tmp/{}.csv\"\ntimeline_ms = 200\n", it.tag);
    it.ice_config(&["fg", "bg"], &timeline_keys);
    let Itest { tag, v2, mem, sock, cfg, mut c, .. } = it;
    let timeline = PathBuf::from(format!("/tmp/{tag}.csv"));
    c.files.push(timeline.clone());
    let (daemon, _) = start_daemon(&cfg, "policy ice, 2 apps");
    c.procs.push(daemon);
    let bg_mem = mem.join(&tag).join("bg");
    std::fs::write(bg_mem.join("memory.limit_in_bytes"), "24M").unwrap();

    // The apps: a foreground one that idles, a background one that keeps touching 40 MiB
    // of heap in a 24 MiB memory cgroup (so it refaults from zram all the time).
    // The background app allocates once it is in its group, so its heap is charged there.
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    c.procs.push(sleeper(&format!("{tag}-fg")));
    let script = format!("import mmap,os,time\nwhile not os.path.exists({go:?}): time.sleep(0.01)\nm=mmap.mmap(-1,40<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nwhile True:\n    for i in range(0,40<<20,4096): m[i]=1\n    time.sleep(0.01)\n");
    c.procs.push(Command::new(python()).args(["-c", &script, &format!("{tag}-bg")]).spawn().unwrap());
    let bg = v2.join(&tag).join("bg");
    wait_adopted(&sock, 2);
    std::fs::write(&go, "").unwrap();
    ctl(&sock, &["fg", "fg"]);

    // (1) Ice freezes the background app when it refaults...
    wait_for("bg frozen by Ice", Duration::from_secs(15), || frozen(&bg));
    let m = ctl(&sock, &["metrics"]);
    let counter = |name: &str| -> u64 {
        m.lines()
            .find_map(|l| l.strip_prefix(&format!("floe_{name}_total ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {m}"))
    };
    assert!(counter("refaults_bg_anon") + counter("refaults_bg_file") > 0, "{m}");
    assert!(!m.contains("floe_freezes_total 0"), "{m}");
    assert!(!frozen(&v2.join(&tag).join("fg")), "the foreground app is never frozen");
    // ...and `floe ctl fg` thaws it before it is shown.
    ctl(&sock, &["fg", "bg"]);
    assert!(!frozen(&bg), "bg thawed when it came to the foreground");
    // Back to the background: it refaults and is frozen again.
    ctl(&sock, &["fg", "fg"]);
    wait_for("bg frozen again", Duration::from_secs(15), || frozen(&bg));

    // (2) The timeline (a row every 200 ms, flushed as written) saw it: the simulator's
    // columns, the kernel's memory, the freezes and refaults, the foreground app; the
    // frame columns empty, as the daemon sees no frames. (Three rows take 600 ms from
    // the daemon's start, which the freezes above may take less than.)
    // A row counts what happened since the last: the second freeze shows in the row
    // after it, up to 200 ms later; and on a busy machine Ice may freeze the app (on
    // its start-up's refaults) before it has reclaimed or run much, which the rows
    // show once it runs in a thaw. The test waits for rows that show all of it, with
    // the app frozen in the last (bounded).
    let complete = |t: &str| {
        let mut lines = t.lines();
        let Some(header) = lines.next().map(|h| h.split(',').collect::<Vec<_>>()) else { return false };
        let col = |name: &str| header.iter().position(|h| *h == name);
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let sum = |c: Option<usize>| c.map_or(0.0, |c| rows.iter().filter_map(|r| r.get(c)?.parse::<f64>().ok()).sum::<f64>());
        let last = |c: Option<usize>| c.and_then(|c| rows.last()?.get(c).copied());
        rows.len() >= 3
            && sum(col("freezes")) >= 2.0
            && sum(col("thaws")) >= 1.0
            && sum(col("reclaimed_pages")) > 0.0
            && sum(col("cpu_ms_app")) > 0.0
            && last(col("apps_frozen")) == Some("1")
    };
    wait_for("timeline rows with both freezes, the thaw, reclaim and app CPU", Duration::from_secs(30), || {
        std::fs::read_to_string(&timeline).is_ok_and(|t| complete(&t))
    });
    let text = std::fs::read_to_string(&timeline).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}: {header:?}"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() >= 3 && rows.iter().all(|r| r.len() == header.len()), "{text}");
    let sum = |name: &str| rows.iter().map(|r| r[col(name)].parse::<u64>().unwrap()).sum::<u64>();
    assert!(sum("freezes") >= 2 && sum("thaws") >= 1, "{text}");
    assert!(sum("refaults_bg_anon") + sum("refaults_bg_file") > 0, "{text}");
    let t: Vec<f64> = rows.iter().map(|r| r[col("t_s")].parse().unwrap()).collect();
    assert!(t.windows(2).all(|w| w[1] > w[0]), "{t:?}");
    assert!(rows.iter().all(|r| r[col("policy")] == "ice" && r[col("frames")].is_empty() && r[col("fps")].is_empty()));
    assert!(rows.iter().all(|r| r[col("free_mib")].parse::<f64>().unwrap() > 0.0 && r[col("anon_lru_mib")].parse::<f64>().unwrap() > 0.0));
    // The background app reclaims within its 24 MiB limit all along (memory cgroup
    // reclaim, counted since 5.8 in /proc/vmstat's per-type totals); kswapd's CPU is read.
    assert!(sum("reclaimed_pages") > 0, "{text}");
    // Of those, the anonymous pages, sent to swap (pgsteal_anon): the app's own
    // touched pages, so some in all and in every row at most the row's reclaim.
    let anon = |r: &Vec<&str>| r[col("reclaimed_anon_pages")].parse::<u64>().unwrap();
    assert!(rows.iter().all(|r| anon(r) <= r[col("reclaimed_pages")].parse::<u64>().unwrap()), "{text}");
    assert!(rows.iter().map(anon).sum::<u64>() > 0, "{text}");
    assert!(rows.iter().all(|r| r[col("cpu_ms_kswapd")].parse::<f64>().is_ok_and(|v| v >= 0.0)), "{text}");
    // The background app's page-touching loop shows as app CPU (its group's cpu.stat).
    let app_ms: f64 = rows.iter().map(|r| r[col("cpu_ms_app")].parse::<f64>().unwrap()).sum();
    assert!(app_ms > 0.0, "{text}");
    let last = rows.last().unwrap();
    assert_eq!((last[col("fg_app")], last[col("apps_alive")], last[col("apps_frozen")]), ("fg", "2", "1"), "{text}");

    // (3) `floe ctl run`: the run so far as the simulator records one, with the same
    // metric keys, counting what the timeline's rows add up to since its start.
    let run: serde_json::Value = serde_json::from_str(&ctl(&sock, &["run"])).unwrap();
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&run["metrics"]), keys(&serde_json::to_value(floe_core::Metrics::default()).unwrap()), "{run}");
    assert_eq!(
        (run["policy"].as_str(), run["workload"].as_str(), run["params"]["apps"].as_u64()),
        (Some("ice"), Some("live"), Some(2)),
        "{run}"
    );
    let metric = |k: &str| run["metrics"][k].as_f64().unwrap_or_else(|| panic!("{k}: {run}"));
    assert!(metric("freezes") >= sum("freezes") as f64 && metric("thaws") >= 1.0, "{run}");
    assert!(metric("refaults_bg_anon") + metric("refaults_bg_file") > 0.0, "{run}");
    assert!(metric("reclaimed_pages") > 0.0 && metric("reclaimed_anon_pages") <= metric("reclaimed_pages"), "{run}");
    assert!(metric("cpu_ms_app") > 0.0 && metric("cpu_ms_kswapd") >= 0.0, "{run}");
    let not_measured = run["params"]["not_measured"].as_str().unwrap();
    assert!(not_measured.split(' ').all(|k| run["metrics"][k].as_f64().unwrap_or(0.0) == 0.0), "{run}");
    assert!(not_measured.contains("fps") && not_measured.contains("flash_read_bytes"), "{run}");

    // (4) SIGKILL the daemon while bg is frozen: the supervisor thaws it within 1 s.
    let killed = Instant::now();
    c.procs[0].kill().unwrap();
    c.procs[0].wait().unwrap();
    wait_for("bg thawed after SIGKILL of the daemon", Duration::from_millis(1000), || !frozen(&bg));
    eprintln!("thawed {:?} after SIGKILL", killed.elapsed());
}

fn history(launches: u64, start_ms: f64, resume_ms: f64, peak_mib: Option<f64>) -> String {
    format!(
        r#"{{"launches":{launches},"starts":1,"start_ms_sum":{start_ms},"resumes":1,"resume_ms_sum":{resume_ms},"rss_peak_pages":{},"reuse_distance_sum":1,"reuse_distances":1,"last_launch_seq":9}}"#,
        peak_mib.map_or("null".to_string(), |m| (m * 256.0).to_string())
    )
}

#[test]
fn smartlmk_kills_the_chosen_set_through_pidfds_and_nothing_else() {
    let _alone = crate::alone();
    let Itest { tag, v2, mem, sock, db, cfg, mut c } = itest("lmk", false);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    for base in [&v2, &mem] {
        let root = base.join(&tag);
        c.dirs.push(root.clone());
        for a in ["top", "a", "b", "c", "d"] {
            c.dirs.push(root.join(a));
        }
    }
    // A 600 MiB budget; the killer's one level: below 100 MiB free, cached apps may die.
    let mut toml = format!(
        "policy = \"smartlmk\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nstate_db = \"{db}\"\nsample_ms = 50\ndiscover_ms = 50\nmemory_limit_mib = 600\nminfree_mib = [[900, 100]]\n"
    );
    for a in ["top", "a", "b", "c", "d"] {
        toml += &format!("\n[[app]]\nname = \"{a}\"\ncmdline = \"{tag}-{a}\"\n");
    }
    std::fs::write(&cfg, toml).unwrap();
    // The history store a previous run left: a and b are cheap to restart (value
    // (T_start - T_resume)(1 - 1/e) = 800 and 700 ms), c and d dear (4000, 3000 ms);
    // the foreground app `top` peaks at 400 MiB.
    let hist = format!(
        r#"{{"launch_seq":10,"apps":{{"top":{},"a":{},"b":{},"c":{},"d":{}}}}}"#,
        history(5, 1500.0, 300.0, Some(400.0)),
        history(2, 1000.0, 200.0, None),
        history(2, 900.0, 200.0, None),
        history(2, 4200.0, 200.0, None),
        history(2, 3200.0, 200.0, None)
    );
    let hist_file = std::env::temp_dir().join(format!("{tag}.json"));
    std::fs::write(&hist_file, hist).unwrap();
    c.files.push(hist_file.clone());
    let st = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["state", "--db", &db, "smartlmk", "--set", hist_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));

    let (daemon, log) = start_daemon(&cfg, "policy smartlmk, 5 apps");
    c.procs.push(daemon);
    assert!(log.lock().unwrap().iter().any(|l| l.contains("state: restored smartlmk")), "{:?}", log.lock().unwrap());
    // Background apps: a and b hold 86 MiB each (memory net of zygote ~70 MiB), c and d
    // 60 MiB (~44 MiB). The foreground app then grows to 230 MiB. SmartLMK's demand at
    // the trigger is RSS_peak(top) - RSS(top) - free, about 400 - 292 = 108 MiB: a
    // single cheap app does not cover it, a + b (value 1500) is the cheapest set that
    // does; any set with c or d costs more.
    let sizes = [("top", 230), ("a", 86), ("b", 86), ("c", 60), ("d", 60)];
    for (a, mib) in sizes {
        c.procs.push(app(&format!("{tag}-{a}"), &go, mib, if a == "top" { 8 } else { mib }, 0.15));
    }
    // A process outside floe's apps that must survive.
    c.procs.push(sleeper(&format!("{tag}-other")));
    wait_adopted(&sock, 5);
    ctl(&sock, &["fg", "top"]);
    ctl(&sock, &["launch-done", "top", "300"]);
    // Charges count from here (the apps allocate only once in their groups).
    std::fs::write(&go, "").unwrap();
    // procs: 0 daemon, 1 top, 2 a, 3 b, 4 c, 5 d, 6 bystander.
    wait_for("a and b killed", Duration::from_secs(30), || !alive(&mut c.procs[2]) && !alive(&mut c.procs[3]));
    // Let the foreground app finish growing: nothing else dies.
    std::thread::sleep(Duration::from_secs(3));
    for (i, who) in [(1, "top"), (4, "c"), (5, "d"), (6, "bystander")] {
        assert!(alive(&mut c.procs[i]), "{who} must survive");
    }
    assert!(vm_kb(c.procs[1].id(), "VmRSS:") > 200 << 10, "top grew to its full size");
    let kills: Vec<String> = log.lock().unwrap().iter().filter(|l| l.contains(" kill ")).cloned().collect();
    assert_eq!(kills.len(), 2, "{kills:?}");
    assert!(kills.iter().any(|l| l.ends_with("kill a")) && kills.iter().any(|l| l.ends_with("kill b")), "{kills:?}");
    let m = ctl(&sock, &["metrics"]);
    assert!(m.contains("floe_kills_total 2\n"), "{m}");
    // Stopped cleanly, the daemon saves what it learned: top's launch is in the history.
    let (saved, out) = stop_and_saved_state(&mut c, &db, "smartlmk");
    assert_eq!(saved["apps"]["top"]["launches"], 6, "{out}");
    assert_eq!(saved["apps"]["top"]["resumes"], 2, "{out}");
}

#[test]
fn selective_keeps_kill_targets_out_of_swap() {
    let _alone = crate::alone();
    let Itest { tag, v2, mem, sock, db, cfg, mut c } = itest("sel", true);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    let marker = PathBuf::from(format!("/tmp/{tag}.saved-state"));
    c.files.extend([go.clone(), marker.clone()]);
    for base in [&v2, &mem] {
        let root = base.join(&tag);
        c.dirs.push(root.clone());
        for a in ["fg", "k", "s"] {
            c.dirs.push(root.join(a));
        }
    }
    // k has saved its state (the marker file exists): a kill-target. s has not: a
    // swap-target. No budget: the machine's free memory is far above the kill
    // threshold, so nothing is killed and what happens is reclaim only.
    std::fs::write(&marker, "").unwrap();
    let mut toml = format!(
        "policy = \"selective-kill-first\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nstate_db = \"{db}\"\nsample_ms = 50\ndiscover_ms = 50\n"
    );
    for a in ["fg", "k", "s"] {
        toml += &format!("\n[[app]]\nname = \"{a}\"\ncmdline = \"{tag}-{a}\"\n");
        if a == "k" {
            toml += &format!("state_marker = \"{}\"\n", marker.display());
        }
    }
    std::fs::write(&cfg, &toml).unwrap();

    let (daemon, log) = start_daemon(&cfg, "policy selective-kill-first, 3 apps");
    c.procs.push(daemon);
    for (a, mib) in [("fg", 120), ("k", 60), ("s", 60)] {
        // The background apps fill their memory first; the foreground app grows after.
        let start = if a == "fg" { go.with_extension("go2") } else { go.clone() };
        c.procs.push(app(&format!("{tag}-{a}"), &start, mib, if a == "fg" { 8 } else { mib }, 0.1));
    }
    wait_adopted(&sock, 3);
    ctl(&sock, &["fg", "fg"]);
    let k_mem = mem.join(&tag).join("k");
    wait_for("k made unswappable", Duration::from_secs(5), || {
        std::fs::read_to_string(k_mem.join("memory.swappiness")).unwrap_or_default().trim() == "0"
    });
    let s_swappiness = std::fs::read_to_string(mem.join(&tag).join("s/memory.swappiness")).unwrap();
    assert_ne!(s_swappiness.trim(), "0", "a swap-target keeps its swappiness");
    // The apps' total (240 MiB) over a 160 MiB limit on their root: the kernel reclaims
    // inside the root group, and only swap-targets' anonymous memory may go to swap.
    std::fs::write(mem.join(&tag).join("memory.limit_in_bytes"), "160M").unwrap();
    c.files.push(go.with_extension("go2"));
    std::fs::write(&go, "").unwrap();
    for i in [2, 3] {
        let pid = c.procs[i].id();
        wait_for("background apps filled", Duration::from_secs(10), || vm_kb(pid, "VmRSS:") > 60 << 10);
    }
    std::fs::write(go.with_extension("go2"), "").unwrap();
    // procs: 0 daemon, 1 fg, 2 k, 3 s.
    wait_for("fg at full size", Duration::from_secs(30), || {
        vm_kb(c.procs[1].id(), "VmRSS:") + vm_kb(c.procs[1].id(), "VmSwap:") > 120 << 10
    });
    std::thread::sleep(Duration::from_millis(500));
    for i in 1..=3 {
        assert!(alive(&mut c.procs[i]), "nothing is killed (proc {i})");
    }
    let (k, s) = (c.procs[2].id(), c.procs[3].id());
    eprintln!(
        "k: rss {} kB swap {} kB; s: rss {} kB swap {} kB",
        vm_kb(k, "VmRSS:"),
        vm_kb(k, "VmSwap:"),
        vm_kb(s, "VmRSS:"),
        vm_kb(s, "VmSwap:")
    );
    assert_eq!(vm_kb(k, "VmSwap:"), 0, "the kill-target is never swapped");
    assert!(vm_kb(k, "VmRSS:") > 60 << 10, "the kill-target keeps all of its memory resident");
    assert!(vm_kb(s, "VmSwap:") > 1 << 10, "the swap-target's memory goes to swap");
    assert!(log.lock().unwrap().iter().any(|l| l.ends_with("swappable k")), "{:?}", log.lock().unwrap());
}

/// Ice+ on the kernel over two apps: fg (a sleep) and bg, a Python heap of `heap_mib`
/// that it keeps touching under a memory limit of its own, `bg_limit_mib`, below its
/// heap, so that it refaults in the background. The apps share a budget of `budget_mib`
/// whose free memory, once bg holds its limit, is below this machine's low watermark
/// (5/4 of min_free_kbytes, 82 MiB here); the killer acts only below 4 MiB, so the apps
/// stay. Returns once bg is frozen.
fn ice_plus_with_a_frozen_bg(name: &str, heap_mib: u64, bg_limit_mib: u64, budget_mib: u64) -> FrozenBg {
    let mut it = itest(name, true);
    it.config("ice-plus", &["fg", "bg"], &format!("memory_limit_mib = {budget_mib}\nminfree_mib = [[900, 4]]\n"));
    let Itest { tag, v2, mem, sock, cfg, mut c, .. } = it;
    let (daemon, log) = start_daemon(&cfg, "policy ice-plus, 2 apps");
    c.procs.push(daemon);
    std::fs::write(mem.join(&tag).join("bg").join("memory.limit_in_bytes"), format!("{bg_limit_mib}M")).unwrap();
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    c.procs.push(sleeper(&format!("{tag}-fg")));
    let script = format!("import mmap,os,time\nwhile not os.path.exists({go:?}): time.sleep(0.01)\nm=mmap.mmap(-1,{heap_mib}<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nwhile True:\n    for i in range(0,{heap_mib}<<20,4096): m[i]=1\n    time.sleep(0.01)\n");
    c.procs.push(Command::new(python()).args(["-c", &script, &format!("{tag}-bg")]).spawn().unwrap());
    wait_adopted(&sock, 2);
    // bg builds its heap as the foreground app (never frozen): a refault of its start-up
    // pages could otherwise freeze it before it holds any memory to page out.
    ctl(&sock, &["fg", "bg"]);
    std::fs::write(&go, "").unwrap();
    let bg_pid = c.procs[2].id();
    wait_for("bg's heap touched", Duration::from_secs(15), || vm_kb(bg_pid, "RssAnon:") + vm_kb(bg_pid, "VmSwap:") > (heap_mib - 4) << 10);
    ctl(&sock, &["fg", "fg"]);
    let bg = v2.join(&tag).join("bg");
    wait_for("bg frozen by Ice+", Duration::from_secs(15), || frozen(&bg));
    FrozenBg { log, bg_pid, v2: v2.join(&tag), sock, _c: c }
}

struct FrozenBg {
    log: std::sync::Arc<Mutex<Vec<String>>>,
    bg_pid: u32,
    /// The daemon's root group in cgroup v2.
    v2: PathBuf,
    sock: String,
    _c: Cleanup,
}

/// Ice+'s freeze-aware eviction on the kernel: the refaulting background app is frozen
/// and its pages deactivated at once (MADV_COLD); with free memory under a budget below
/// the low watermark, the frozen app is paged out before the kernel's LRU reaches the
/// others (MADV_PAGEOUT).
#[test]
fn ice_plus_pages_out_the_frozen_app_first_under_pressure() {
    let _alone = crate::alone();
    // 96 MiB for the apps: below the low watermark once they hold 14 MiB or more.
    let FrozenBg { log, bg_pid, v2, sock, _c } = ice_plus_with_a_frozen_bg("iceplus", 40, 24, 96);
    let has = |what: &str| log.lock().unwrap().iter().any(|l| l.contains(what));
    wait_for("bg paged out", Duration::from_secs(10), || has("pageout bg (frozen first"));
    assert!(has("cold bg (frozen first)"), "{:?}", log.lock().unwrap());
    let anon = vm_kb(bg_pid, "RssAnon:");
    eprintln!("bg after its page-out: RssAnon {anon} kB, VmSwap {} kB", vm_kb(bg_pid, "VmSwap:"));
    assert!(anon < 4 << 10, "the frozen app's heap left memory: RssAnon {anon} kB");
    assert!(vm_kb(bg_pid, "VmSwap:") > 30 << 10, "its heap is in swap");
    assert!(!frozen(&v2.join("fg")), "the foreground app is never frozen");
    let m = ctl(&sock, &["metrics"]);
    assert!(m.contains("floe_frozen_pageouts_total 1\n"), "one page-out per freeze: {m}");
}

/// A frozen app larger than one sample's page-out (64 MiB) goes over several samples,
/// to its end, though free memory is back above the low watermark after the first.
#[test]
fn ice_plus_pages_out_a_large_frozen_app_over_several_samples() {
    let _alone = crate::alone();
    // bg holds 140 MiB of its 150 MiB heap: 220 MiB for the apps leaves about 70 free.
    let FrozenBg { log, bg_pid, sock, _c, .. } = ice_plus_with_a_frozen_bg("iceplus-big", 150, 140, 220);
    let lines = || -> Vec<String> { log.lock().unwrap().iter().filter(|l| l.contains("pageout bg (frozen first")).cloned().collect() };
    wait_for("bg's page-out done", Duration::from_secs(15), || lines().last().is_some_and(|l| !l.contains("more at the next sample")));
    let lines = lines();
    let anon = vm_kb(bg_pid, "RssAnon:");
    eprintln!("{lines:#?}\nbg after its page-out: RssAnon {anon} kB, VmSwap {} kB", vm_kb(bg_pid, "VmSwap:"));
    assert!(lines.len() >= 3, "over several samples: {lines:?}");
    assert!(
        lines.iter().all(|l| l
            .split("pages advised")
            .next()
            .and_then(|h| h.rsplit(' ').nth(1)?.parse::<u64>().ok())
            .is_some_and(|n| n <= 64 * 256)),
        "{lines:?}"
    );
    assert!(anon < 8 << 10, "the whole heap left memory: RssAnon {anon} kB");
    assert!(vm_kb(bg_pid, "VmSwap:") > 130 << 10, "its heap is in swap");
    let m = ctl(&sock, &["metrics"]);
    assert!(m.contains("floe_frozen_pageouts_total 1\n"), "one page-out per freeze: {m}");
}

/// A daemon running ASAP's `policy` (with zram swap) over two apps, x and y, matched by
/// the command lines `{tag}-x` and `{tag}-y`, and a scratch folder for the test's files.
fn asap_daemon(name: &str, policy: &str) -> (Itest, std::sync::Arc<Mutex<Vec<String>>>, PathBuf) {
    let mut it = itest(name, true);
    let Itest { tag, v2, mem, sock, db, cfg, c } = &mut it;
    for base in [&*v2, &*mem] {
        let root = base.join(&*tag);
        c.dirs.push(root.clone());
        c.dirs.push(root.join("x"));
        c.dirs.push(root.join("y"));
    }
    let mut toml = format!(
        "policy = \"{policy}\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nstate_db = \"{db}\"\nsample_ms = 50\ndiscover_ms = 50\n"
    );
    for a in ["x", "y"] {
        toml += &format!("\n[[app]]\nname = \"{a}\"\ncmdline = \"{tag}-{a}\"\n");
    }
    std::fs::write(&*cfg, toml).unwrap();
    let (daemon, log) = start_daemon(cfg, &format!("policy {policy}, 2 apps"));
    c.procs.push(daemon);
    let dir = std::env::temp_dir().join(&*tag);
    std::fs::create_dir_all(&dir).unwrap();
    c.trees.push(dir.clone());
    (it, log, dir)
}

/// ASAP with both estimators: the anonymous one's prepaging cuts the switch-in's major
/// faults, and both estimators' tables are saved in one record.
#[test]
fn asap_prepaging_lowers_major_faults_on_switch_in() {
    let _alone = crate::alone();
    let (Itest { tag, mem, sock, db, mut c, .. }, log, dir) = asap_daemon("asap", "asap");
    // x: 64 MiB of heap; at each `go-N` file it reads all of it (its switch-in) and
    // writes the major faults that took to `done-N`.
    let script = format!(
        "import mmap,os,resource,time\nwhile not os.path.exists('{d}/start'): time.sleep(0.01)\nm=mmap.mmap(-1,64<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nfor i in range(0,64<<20,4096): m[i]=(i>>12)%251\nn=1\nwhile True:\n    while not os.path.exists('{d}/go-%d'%n): time.sleep(0.01)\n    f0=resource.getrusage(resource.RUSAGE_SELF).ru_majflt\n    s=0\n    for i in range(0,64<<20,4096): s+=m[i]\n    f1=resource.getrusage(resource.RUSAGE_SELF).ru_majflt\n    open('{d}/done-%d'%n,'w').write(str(f1-f0))\n    n+=1\n",
        d = dir.display()
    );
    c.procs.push(Command::new(python()).args(["-c", &script, &format!("{tag}-x")]).spawn().unwrap());
    c.procs.push(sleeper(&format!("{tag}-y")));
    wait_adopted(&sock, 2);
    let x_pid = c.procs[1].id();
    // x fills its heap only once it is in its group, so the heap is charged there.
    std::fs::write(dir.join("start"), "").unwrap();
    wait_for("x has touched its heap", Duration::from_secs(20), || vm_kb(x_pid, "VmRSS:") > 64 << 10);
    let x_mem = mem.join(&tag).join("x");
    let (mut faults, mut fetched) = (Vec::new(), Vec::new());
    for n in 1..=3 {
        ctl(&sock, &["fg", "y"]);
        // x in the background loses its heap to zram (its group squeezed, then freed).
        let _ = std::fs::write(x_mem.join("memory.limit_in_bytes"), "4M");
        std::fs::write(x_mem.join("memory.limit_in_bytes"), "-1").unwrap();
        assert!(vm_kb(x_pid, "VmSwap:") > 48 << 10, "round {n}: x's heap is in swap");
        let cached0 = meminfo_kb("SwapCached:");
        let seen = log.lock().unwrap().len();
        ctl(&sock, &["fg", "x"]);
        // The switch's own work before the app reads its heap, the same every round.
        std::thread::sleep(Duration::from_millis(500));
        // Prepaging runs at SCHED_IDLE, as ASAP's threads do, so it gets only idle CPU:
        // beside two busy loops it may not be through when the switch's window ends
        // and the daemon stops it. The app waits until nine tenths of the pages asked
        // for are in the swap cache (MADV_WILLNEED leaves them there until used) or
        // the daemon ended the switch; what prepaging fetched by then is `fetched`.
        let fetching = log.lock().unwrap()[seen..]
            .iter()
            .find_map(|l| l.split("asap: switch to x: ").nth(1)?.split("prepaging ").nth(1)?.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let in_cache = || meminfo_kb("SwapCached:").saturating_sub(cached0) / 4;
        if fetching > 0 {
            wait_for("prepaging to fetch or the switch to end", Duration::from_secs(60), || {
                in_cache() >= fetching * 9 / 10 || log.lock().unwrap()[seen..].iter().any(|l| l.contains("asap: switch to x done: "))
            });
        }
        fetched.push(in_cache());
        std::fs::write(dir.join(format!("go-{n}")), "").unwrap();
        let done = dir.join(format!("done-{n}"));
        wait_for("x read its heap", Duration::from_secs(30), || std::fs::read_to_string(&done).is_ok_and(|s| !s.is_empty()));
        faults.push(std::fs::read_to_string(&done).unwrap().trim().parse::<u64>().unwrap());
        ctl(&sock, &["launch-done", "x"]);
    }
    eprintln!("major faults at switch-in, rounds 1-3: {faults:?}; pages fetched ahead by then: {fetched:?}");
    // Round 1 logs the faults (candidates), round 2 promotes them (targets), round 3
    // fetches them ahead: x faults only on what was not fetched (on an idle machine
    // that is all but a fraction of its heap).
    assert!(faults[0] > 8000 && faults[1] > 8000, "without prepaging the heap comes back by faults: {faults:?}");
    assert!(fetched[2] > 2000, "prepaging fetched pages ahead: {fetched:?}");
    assert!(faults[2] + fetched[2] * 8 / 10 <= faults[0], "the pages fetched ahead were not faulted: {faults:?}, {fetched:?}");
    let m = ctl(&sock, &["metrics"]);
    let prepaged: u64 = m.lines().find_map(|l| l.strip_prefix("floe_prepaged_pages_total ")).unwrap().parse().unwrap();
    assert!(prepaged > 8000, "{m}");
    assert!(log.lock().unwrap().iter().any(|l| l.contains("asap: switch to x: ") && l.contains("prepaging")), "{:?}", log.lock().unwrap());
    let (saved, out) = stop_and_saved_state(&mut c, &db, "asap");
    assert!(saved["anon"]["x"]["targets"].as_array().is_some_and(|t| t.len() > 8000), "the anonymous targets: {out}");
    assert!(saved["file"]["x"]["profiled"].as_array().is_some_and(|p| p.len() == 3), "three switches profiled: {out}");
}

/// ASAP's file estimator on the kernel: the app maps a 16 MiB file and at each switch-in
/// reads 1,536 of its pages; in the background it loses them (its mapping paged out and
/// the file's cache dropped, as reclaim would). The daemon profiles ten switches, the
/// eleventh makes the faulted candidates targets, and from the twelfth it reads them
/// ahead: the app's switch-in takes a fraction of the major faults. Target pages read
/// ahead and left unused leave the table.
#[test]
fn asap_file_prepaging_reads_a_switchs_file_pages_ahead() {
    let _alone = crate::alone();
    let (Itest { tag, sock, db, mut c, .. }, log, dir) = asap_daemon("asapf", "asap-file");
    let data = dir.join("data.bin");
    {
        // Written back, so that dropping the file's cache drops it all.
        use std::io::Write;
        let mut f = std::fs::File::create(&data).unwrap();
        f.write_all(&(0..16u32 << 20).map(|i| (i % 251) as u8).collect::<Vec<u8>>()).unwrap();
        f.sync_all().unwrap();
    }
    // x maps the file (MADV_RANDOM: a fault reads its own page only). At `out-N` it
    // loses the pages (MADV_DONTNEED unmaps them all, then the file's clean cache is
    // dropped; MADV_PAGEOUT left a page mapped now and then, which then counted as read
    // ahead and unused) and writes `gone-N`; at `go-N` it reads pages 0-1023 and 2048-2559 (from
    // the fourteenth on, 0-1023 only) and writes the major faults that took to `done-N`.
    let script = format!(
        "import mmap,os,resource,time\nfd=os.open('{f}',os.O_RDONLY)\nm=mmap.mmap(fd,16<<20,mmap.MAP_SHARED,mmap.PROT_READ)\nm.madvise(mmap.MADV_RANDOM)\nS=list(range(0,1024))+list(range(2048,2560))\nn=1\nwhile True:\n    while not os.path.exists('{d}/out-%d'%n): time.sleep(0.01)\n    m.madvise(mmap.MADV_DONTNEED)\n    os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)\n    open('{d}/gone-%d'%n,'w').write('1')\n    while not os.path.exists('{d}/go-%d'%n): time.sleep(0.01)\n    f0=resource.getrusage(resource.RUSAGE_SELF).ru_majflt\n    t0=time.monotonic()\n    s=0\n    for p in (S if n<14 else S[:1024]): s+=m[p*4096]\n    t1=time.monotonic()\n    f1=resource.getrusage(resource.RUSAGE_SELF).ru_majflt\n    open('{d}/done-%d'%n,'w').write('%d %.1f'%(f1-f0,(t1-t0)*1000))\n    n+=1\n",
        f = data.display(),
        d = dir.display()
    );
    c.procs.push(Command::new(python()).args(["-c", &script, &format!("{tag}-x")]).spawn().unwrap());
    c.procs.push(sleeper(&format!("{tag}-y")));
    wait_adopted(&sock, 2);
    let (mut faults, mut read_ms) = (Vec::new(), Vec::new());
    // The file's pages in the page cache as the app starts to read, each round, and
    // those of pages 2048-2559 in round 14.
    let (mut ahead, mut ahead_unused) = (Vec::new(), 0);
    for n in 1..=14 {
        ctl(&sock, &["fg", "y"]);
        std::fs::write(dir.join(format!("out-{n}")), "").unwrap();
        wait_for("x lost its file pages", Duration::from_secs(10), || dir.join(format!("gone-{n}")).exists());
        let seen = log.lock().unwrap().len();
        ctl(&sock, &["fg", "x"]);
        // The switch's own work before the app reads its file, the same every round.
        std::thread::sleep(Duration::from_millis(500));
        // The read-ahead runs at idle priority: beside busy loops it may still be going.
        // The app waits for it at most 1.5 s more, well inside the daemon's 3 s switch
        // window (a switch that ends before the app reads learns that nothing was used).
        let reading = log.lock().unwrap()[seen..]
            .iter()
            .find_map(|l| l.split("asap: switch to x: reading ").nth(1)?.split(' ').next()?.parse::<usize>().ok())
            .unwrap_or(0);
        let t = Instant::now();
        while reading > 0 && t.elapsed() < Duration::from_millis(1500) && resident_pages(&data).iter().filter(|&&r| r).count() < reading {
            std::thread::sleep(Duration::from_millis(20));
        }
        let resident = resident_pages(&data);
        ahead.push(resident.iter().filter(|&&r| r).count() as u64);
        if n == 14 {
            ahead_unused = resident[2048..2560].iter().filter(|&&r| r).count() as u64;
        }
        std::fs::write(dir.join(format!("go-{n}")), "").unwrap();
        let done = dir.join(format!("done-{n}"));
        wait_for("x read its file", Duration::from_secs(30), || std::fs::read_to_string(&done).is_ok_and(|s| !s.is_empty()));
        let text = std::fs::read_to_string(&done).unwrap();
        let (f, ms) = text.trim().split_once(' ').unwrap();
        faults.push(f.parse::<u64>().unwrap());
        read_ms.push(ms.parse::<f64>().unwrap());
        ctl(&sock, &["launch-done", "x"]);
    }
    eprintln!("major faults at switch-in, rounds 1-14: {faults:?}");
    eprintln!("time to read the file pages at switch-in (ms), rounds 1-14: {read_ms:?}");
    // Rounds 1-10 profile, round 11 makes targets, rounds 12 and 13 read them ahead.
    assert!(faults[..11].iter().all(|&f| f >= 1400), "without prepaging every page read is a major fault: {faults:?}");
    // Read ahead, a page is not faulted: on an idle machine all of them were.
    eprintln!("pages read ahead by the time the app read, rounds 1-14: {ahead:?}");
    assert!(ahead[11] >= 700 && ahead[12] >= 700, "the read-ahead got through half the targets: {ahead:?}");
    assert!(
        faults[11] + ahead[11] * 8 / 10 <= faults[0] && faults[12] + ahead[12] * 8 / 10 <= faults[0],
        "prepaging cut the switch-in faults: {faults:?}, read ahead {ahead:?}"
    );
    let m = ctl(&sock, &["metrics"]);
    let prepaged: u64 = m.lines().find_map(|l| l.strip_prefix("floe_prepaged_file_pages_total ")).unwrap().parse().unwrap();
    assert!(prepaged >= 3 * 1400, "{m}");
    let lines = log.lock().unwrap().clone();
    // Profiling ends with the pages faulted in at least eight of ten switches.
    let count = |l: &str, after: &str| -> Option<u64> { l.split(after).next()?.rsplit(' ').next()?.parse().ok() };
    let profiled = lines.iter().find(|l| l.contains("asap: switch to x done: ") && l.contains(" candidate and 0 target pages")).unwrap();
    assert!((1400..=1536).contains(&count(profiled, " candidate and").unwrap()), "{profiled}");
    let read_ahead: Vec<u64> = lines.iter().filter_map(|l| count(l, " file pages ahead")).collect();
    assert!(read_ahead.len() == 3 && read_ahead.iter().all(|&n| n >= 1400), "{lines:?}");
    // Round 14 leaves pages 2048-2559 unread: read ahead and unused, they leave the
    // targets. (MADV_PAGEOUT may leave a few pages mapped, which are then neither read
    // ahead nor faulted: the counts are bounds.)
    assert!(faults[13] * 4 < faults[0], "{faults:?}");
    let last = lines.iter().rev().find(|l| l.contains("asap: switch to x done: ")).unwrap();
    let num = |after: &str| -> u64 { last.split(after).next().unwrap().rsplit(' ').next().unwrap().parse().unwrap() };
    let (unused, targets) = (num(" of them unused"), num(" target pages"));
    // All of them, on an idle machine; what the read-ahead got through, beside busy loops.
    assert!(ahead_unused >= 100, "pages 2048-2559 read ahead in round 14: {ahead_unused}");
    assert!(num(" file pages faulted") <= 1024 && unused <= 512 && unused + 112 >= ahead_unused, "{ahead_unused} read ahead: {last}");
    assert!((1024..=1536 - unused + 112).contains(&targets), "{last}");
    // Stopped cleanly, the daemon saves the tables: the file's candidates and targets.
    let (saved, out) = stop_and_saved_state(&mut c, &db, "asap-file");
    let file = &saved["file"]["x"]["files"][data.to_str().unwrap()];
    assert_eq!(file[1][0], serde_json::json!([0, 1024]), "pages 0-1023 are targets: {out}");
    let saved_targets: u64 = file[1].as_array().unwrap().iter().map(|e| e[1].as_u64().unwrap()).sum();
    assert_eq!(saved_targets, targets, "the saved targets are the last switch's: {out}");
    assert_eq!(saved["file"]["x"]["profiled_done"], true, "{out}");
}

#[test]
fn an_adopted_uid_pid_layout_is_frozen_at_the_uid_level_and_left_as_it_was() {
    let _alone = crate::alone();
    let Itest { tag, v2, mem, sock, db, cfg, mut c } = itest("adopt", true);
    // Android's layout, made by "someone else" (this test): uid_N/pid_M in cgroup v2.
    let layout = v2.join(format!("{tag}-layout"));
    c.dirs.push(layout.clone());
    for (uid, pid) in [(10001, 1), (10002, 2), (10003, 3)] {
        c.dirs.push(layout.join(format!("uid_{uid}")));
        c.dirs.push(layout.join(format!("uid_{uid}/pid_{pid}")));
        std::fs::create_dir_all(layout.join(format!("uid_{uid}/pid_{pid}"))).unwrap();
    }
    c.dirs.push(mem.join(&tag));
    for uid in [10001, 10002, 10003] {
        c.dirs.push(mem.join(&tag).join(format!("uid_{uid}")));
    }
    c.dirs.push(v2.join(&tag));
    let place = |child: &Child, uid: u32, pid: u32| {
        std::fs::write(layout.join(format!("uid_{uid}/pid_{pid}/cgroup.procs")), child.id().to_string()).unwrap();
    };
    // uid_10001 (named "camera" by the config) idles in the foreground; uid_10002 keeps
    // touching 40 MiB of heap, so under a memory limit it refaults from zram; uid_10003's
    // pid_3 was frozen by the layout's owner before floe started.
    c.procs.push(Command::new("sleep").arg("600").spawn().unwrap());
    place(&c.procs[0], 10001, 1);
    let script = "import mmap,time\ntime.sleep(1.0)\nm=mmap.mmap(-1,40<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nwhile True:\n    for i in range(0,40<<20,4096): m[i]=1\n    time.sleep(0.01)\n";
    c.procs.push(Command::new(python()).args(["-c", script]).spawn().unwrap());
    place(&c.procs[1], 10002, 2);
    c.procs.push(Command::new("sleep").arg("600").spawn().unwrap());
    place(&c.procs[2], 10003, 3);
    std::fs::write(layout.join("uid_10003/pid_3/cgroup.freeze"), "1").unwrap();
    std::fs::write(
        &cfg,
        format!(
            "policy = \"ice\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nstate_db = \"{db}\"\nsample_ms = 50\ndiscover_ms = 50\nadopt_layout = \"{tag}-layout\"\n\n[[app]]\nname = \"camera\"\nuid = 10001\n"
        ),
    )
    .unwrap();
    let (daemon, log) = start_daemon(&cfg, "policy ice, 3 apps");
    c.procs.push(daemon);
    let st = ctl(&sock, &["status"]);
    assert!(st.contains(&format!("camera Cached pids [{}]", c.procs[0].id())), "{st}");
    // uid_10002 may already be frozen: python's start reads its files, and when tests
    // before this one pushed them out of the page cache those reads are refaults, which
    // Ice answers by freezing (a .ci/run saw it 10 ms after the start).
    let uid2_pids = format!(" pids [{}]", c.procs[1].id());
    assert!(["Cached", "Frozen"].iter().any(|s| st.contains(&format!("uid_10002 {s}{uid2_pids}"))), "{st}");
    assert!(st.contains(&format!("uid_10003 Cached pids [{}]", c.procs[2].id())), "{st}");
    // floe's own memory group holds the process; the v2 layout is untouched.
    let bg_mem = mem.join(&tag).join("uid_10002");
    wait_for("uid_10002 in floe's memory group", Duration::from_secs(2), || {
        std::fs::read_to_string(bg_mem.join("cgroup.procs")).unwrap_or_default().contains(&c.procs[1].id().to_string())
    });
    std::fs::write(bg_mem.join("memory.limit_in_bytes"), "24M").unwrap();
    ctl(&sock, &["fg", "camera"]);
    let uid2 = layout.join("uid_10002");
    wait_for("uid_10002 frozen by Ice", Duration::from_secs(15), || frozen(&uid2));
    assert!(frozen(&uid2.join("pid_2")), "freezing uid_N freezes its pid_M groups");
    assert_eq!(std::fs::read_to_string(uid2.join("cgroup.freeze")).unwrap().trim(), "1", "frozen at the uid level");
    assert_eq!(std::fs::read_to_string(uid2.join("pid_2/cgroup.freeze")).unwrap().trim(), "0", "pid_M's own setting is not touched");
    let cg = std::fs::read_to_string(format!("/proc/{}/cgroup", c.procs[1].id())).unwrap();
    assert!(cg.lines().any(|l| l == format!("0::/{tag}-layout/uid_10002/pid_2")), "{cg}");
    assert!(!frozen(&layout.join("uid_10001")), "the foreground app is never frozen");
    // Stopped, the daemon thaws what it froze, and only that.
    let pid = c.procs[3].id();
    assert!(Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap().success());
    let _ = c.procs[3].wait();
    assert!(!frozen(&uid2), "floe's freeze undone at exit");
    assert!(frozen(&layout.join("uid_10003/pid_3")), "a group the layout's owner froze stays frozen");
    assert!(log.lock().unwrap().iter().any(|l| l.contains("freeze uid_10002")), "{:?}", log.lock().unwrap());
}

/// A clean stop (here on SIGHUP) removes the groups floe made that no longer hold a
/// process, and keeps (and names) those that do: an app still running keeps its group
/// and the root.
#[test]
fn a_clean_stop_removes_floes_empty_groups_and_keeps_busy_ones() {
    let _alone = crate::alone();
    let mut it = itest("groups", false);
    let run_json = format!("/tmp/{}.json", it.tag);
    it.ice_config(&["gone", "busy"], &format!("run_json = \"{run_json}\"\n"));
    let Itest { tag, v2, mem, sock, cfg, mut c, .. } = it;
    c.files.push(PathBuf::from(&run_json));
    let (mut daemon, lines) = start_daemon(&cfg, "policy ice, 2 apps");
    let mut gone = sleeper(&format!("{tag}-gone"));
    c.procs.push(sleeper(&format!("{tag}-busy")));
    wait_adopted(&sock, 2);
    // A launch the user saw end after 120 ms, for the run's record.
    ctl(&sock, &["fg", "busy"]);
    // A time no launch takes (a typo) is refused, and leaves the launch to report.
    let typo = Command::new(env!("CARGO_BIN_EXE_floe")).args(["ctl", "--socket", &sock, "launch-done", "busy", "1e18"]).output().unwrap();
    assert!(!typo.status.success() && String::from_utf8_lossy(&typo.stderr).contains("from 0 to 600000"), "{typo:?}");
    assert!(typo.stdout.is_empty(), "a refusal is said once, on stderr: {typo:?}");
    ctl(&sock, &["launch-done", "busy", "120"]);
    gone.kill().unwrap();
    gone.wait().unwrap();
    let procs = |d: &Path| std::fs::read_to_string(d.join("cgroup.procs")).unwrap_or_default();
    wait_for("gone's group empty", Duration::from_secs(5), || procs(&v2.join(&tag).join("gone")).trim().is_empty());
    // SIGHUP (a closed terminal, a service manager's reload) stops it as SIGTERM does
    // (SIGTERM's stops are the other tests').
    assert!(Command::new("kill").args(["-HUP", &daemon.id().to_string()]).status().unwrap().success());
    assert!(daemon.wait().unwrap().success(), "the daemon stops cleanly on SIGHUP");
    for base in [&v2, &mem] {
        assert!(!base.join(&tag).join("gone").exists(), "{}: the empty group is removed", base.display());
        assert!(base.join(&tag).join("busy").is_dir() && base.join(&tag).is_dir(), "{}: busy groups stay", base.display());
    }
    assert!(!procs(&v2.join(&tag).join("busy")).trim().is_empty(), "the running app was left where it was");
    std::thread::sleep(Duration::from_millis(100));
    let said = lines.lock().unwrap().join("\n");
    assert!(said.contains("kept") && said.contains(&format!("{tag}/busy")), "{said}");
    // The run's record, written as it stopped: the one launch, nothing frozen or killed.
    assert!(said.contains(&format!("run: written to {run_json}")), "{said}");
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    let m = &run["metrics"];
    assert_eq!(run["policy"].as_str(), Some("ice"), "{run}");
    assert_eq!(
        (m["launches_cold"].as_u64().unwrap() + m["launches_warm"].as_u64().unwrap(), m["launch_ms_mean"].as_f64()),
        (1, Some(120.0)),
        "{run}"
    );
    assert_eq!((m["kills"].as_u64(), m["freezes"].as_u64()), (Some(0), Some(0)), "{run}");
    assert!(run["params"]["duration_s"].as_f64().is_some_and(|s| s > 0.0), "{run}");
}

/// A policy without swap (stock Android) keeps its apps out of the machine's zram: each
/// app group's swappiness is 0, and the daemon says so; a policy with zram leaves it.
#[test]
fn a_policy_without_swap_keeps_its_apps_out_of_the_machines_swap() {
    let _alone = crate::alone();
    // A new memory group inherits the system's vm.swappiness.
    let system = std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap().trim().to_string();
    for (policy, want, says) in [("android-lmk", "0", true), ("lru-cfs", system.as_str(), false)] {
        let mut it = itest(&format!("noswap-{policy}"), true);
        it.config(policy, &["a"], "");
        let Itest { tag, mem, cfg, mut c, .. } = it;
        let (daemon, lines) = start_daemon(&cfg, &format!("policy {policy}, 1 apps"));
        c.procs.push(daemon);
        let swappiness = std::fs::read_to_string(mem.join(&tag).join("a").join("memory.swappiness")).unwrap();
        assert_eq!(swappiness.trim(), want, "{policy}");
        let said = lines.lock().unwrap().join("\n");
        assert_eq!(said.contains("runs without swap; swap is on here (/dev/zram0)"), says, "{policy}: {said}");
    }
}

/// UCSG on the kernel: the foreground app's processes run at nice -10 and go back to 0
/// when it leaves, a process it starts in the foreground is boosted too, and the daemon
/// leaves nothing boosted when it stops.
#[test]
fn ucsg_boosts_the_foreground_apps_processes_and_only_while_it_is_there() {
    let _alone = crate::alone();
    let mut it = itest("ucsg", false);
    it.config("ucsg", &["a", "b"], "");
    let Itest { tag, sock, cfg, mut c, .. } = it;
    let (daemon, _lines) = start_daemon(&cfg, "policy ucsg, 2 apps");
    c.procs.push(daemon);
    let spawn = |name: &str| sleeper(&format!("{tag}-{name}"));
    c.procs.extend([spawn("a"), spawn("b")]);
    let (a, b) = (c.procs[1].id(), c.procs[2].id());
    wait_adopted(&sock, 2);
    // /proc/PID/stat's 19th field; the command name in parentheses holds no spaces here.
    let nice = |pid: u32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(')').next().unwrap().split_whitespace().nth(16).unwrap().parse().unwrap()
    };
    assert_eq!((nice(a), nice(b)), (0, 0), "no foreground yet");
    ctl(&sock, &["fg", "a"]);
    assert_eq!((nice(a), nice(b)), (-10, 0));
    ctl(&sock, &["fg", "b"]);
    assert_eq!((nice(a), nice(b)), (0, -10), "a left the foreground, b came");
    c.procs.push(spawn("b"));
    let late = c.procs[3].id();
    wait_for("b's new process boosted", Duration::from_secs(5), || nice(late) == -10);
    let pid = c.procs[0].id();
    assert!(Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap().success());
    assert!(c.procs[0].wait().unwrap().success());
    assert_eq!((nice(a), nice(b), nice(late)), (0, 0, 0), "nothing stays boosted after the daemon");
    // Killed outright, the daemon cannot undo the boost; its supervisor does.
    let (daemon, _lines) = start_daemon(&cfg, "policy ucsg, 2 apps");
    c.procs[0] = daemon;
    ctl(&sock, &["fg", "a"]);
    assert_eq!(nice(a), -10);
    c.procs[0].kill().unwrap();
    c.procs[0].wait().unwrap();
    wait_for("the supervisor sets a back to 0", Duration::from_secs(5), || nice(a) == 0);
}

#[test]
fn lmkd_psi_mode_kills_cached_apps_on_memory_stalls_not_by_minfree() {
    lmkd_kills_cached_apps_on_memory_stalls("psi");
}

#[test]
fn lmkd_with_minfree_levels_kills_cached_apps_on_memory_stalls_only() {
    lmkd_kills_cached_apps_on_memory_stalls("psi-minfree");
}

/// lmkd (`mode`: "psi" or "psi-minfree") kills the cached apps on memory stalls, never
/// between events, and never the foreground app or a process that is not floe's.
fn lmkd_kills_cached_apps_on_memory_stalls(mode: &str) {
    let _alone = crate::alone();
    // zram swap, so the stressor's pages are swapped and refault: memory stalls.
    let mut it = itest(mode, true);
    // A 300 MiB budget and a minfree level the budget is always below: the minfree
    // killer would act at every sample; lmkd acts on memory stalls only (under
    // psi-minfree the level then decides, under psi free memory against low pressure's).
    it.config("android-lmk", &["top", "a", "b"], &format!("memory_limit_mib = 300\nminfree_mib = [[900, 290]]\nlmkd = \"{mode}\"\n"));
    let Itest { tag, mem, sock, cfg, mut c, .. } = it;
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    let stress_go = PathBuf::from(format!("/tmp/{tag}.stress"));
    c.files.extend([go.clone(), stress_go.clone()]);
    let stall_group = mem.join(format!("{tag}-stall"));
    std::fs::create_dir(&stall_group).unwrap();
    c.dirs.push(stall_group.clone());
    std::fs::write(stall_group.join("memory.limit_in_bytes"), "24M").unwrap();

    // lmkd's triggers look back 2 s: stalls of the test before (its stressor) would fire
    // them at once and kill the apps before they are adopted.
    settle_memory_psi();
    let (daemon, log) = start_daemon(&cfg, "policy android-lmk, 3 apps");
    c.procs.push(daemon);
    assert!(log.lock().unwrap().iter().any(|l| l.contains("lmkd: PSI mode")), "{:?}", log.lock().unwrap());
    // The foreground app is known before it runs, as Android knows the app it launches.
    ctl(&sock, &["fg", "top"]);
    // procs: 0 daemon, 1 top (grows to 200 MiB over about 12 s), 2 a, 3 b (40 MiB
    // each), 4 a bystander outside floe's apps, 5 the stressor.
    c.procs.push(app(&format!("{tag}-top"), &go, 200, 4, 0.25));
    for a in ["a", "b"] {
        c.procs.push(app(&format!("{tag}-{a}"), &go, 40, 40, 0.0));
    }
    c.procs.push(sleeper(&format!("{tag}-other")));
    // From the log, not the status: any stall on the machine (the apps' own starts
    // included) is one lmkd acts on, so a and b may be killed as soon as they are adopted.
    wait_for("3 apps adopted", Duration::from_secs(20), || {
        let log = log.lock().unwrap();
        ["top", "a", "b"].iter().all(|a| log.iter().any(|l| l.contains(&format!("app {a}: adopted pid"))))
    });
    std::fs::write(&go, "").unwrap();
    std::thread::sleep(Duration::from_secs(2));
    // Free memory has been under the minfree level all along: the table's killer never
    // ran (it logs each level it finds).
    assert!(!log.lock().unwrap().iter().any(|l| l.contains(" lmk: ")), "{:?}", log.lock().unwrap());
    // A process outside the budget thrashes in its own 24 MiB memory group, so the
    // system stalls on memory whatever else runs (any stall counts: lmkd reads
    // /proc/pressure/memory, and the apps' own first touches may stall already).
    let script = format!("import mmap,os,time\nwhile not os.path.exists({stress_go:?}): time.sleep(0.01)\nm=mmap.mmap(-1,40<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nwhile True:\n    for i in range(0,40<<20,4096): m[i]=1\n");
    let stressor = Command::new(python()).args(["-c", &script, &format!("{tag}-stress")]).spawn().unwrap();
    std::fs::write(stall_group.join("cgroup.procs"), stressor.id().to_string()).unwrap();
    c.procs.push(stressor);
    std::fs::write(&stress_go, "").unwrap();
    wait_for("both cached apps killed by lmkd", Duration::from_secs(30), || !alive(&mut c.procs[2]) && !alive(&mut c.procs[3]));
    // A victim may be gone before the daemon's line about it reaches the log reader.
    let logged_kills = |log: &Mutex<Vec<String>>| log.lock().unwrap().iter().filter(|l| l.contains(" kill ")).count();
    wait_for("both kills logged", Duration::from_secs(5), || logged_kills(&log) >= 2);
    let said = log.lock().unwrap().join("\n");
    assert!(!said.contains(" lmk: "), "{said}");
    if mode == "psi" {
        assert!(said.contains("lmkd: low memory pressure"), "{said}");
    }
    // Every kill is lmkd's (psi: at medium pressure; psi-minfree: below the table's
    // level), of a cached app.
    let lines: Vec<&str> = said.lines().collect();
    let kills: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" kill ")).collect();
    assert_eq!(kills.len(), 2, "{said}");
    for i in kills {
        let who = lines[i].rsplit(' ').next().unwrap();
        assert!(who == "a" || who == "b", "{said}");
        let why = if mode == "psi" { "lmkd: medium memory pressure" } else { "below the minfree level of adj 900" };
        assert!(lines[..i].iter().rev().any(|l| l.contains(why) && l.ends_with(&format!("killing {who}"))), "{said}");
    }
    for (i, who) in [(1, "top, the foreground app"), (4, "the bystander"), (5, "the stressor, not floe's")] {
        assert!(alive(&mut c.procs[i]), "{who} must survive");
    }
}

/// Free memory under the test's budget as the daemon counts it: the budget less the
/// root group's usage, with its inactive file pages counted free.
fn budget_free_mib(mem: &Path, tag: &str, budget_mib: u64) -> f64 {
    let root = mem.join(tag);
    let usage: u64 = std::fs::read_to_string(root.join("memory.usage_in_bytes")).unwrap().trim().parse().unwrap();
    let stat = std::fs::read_to_string(root.join("memory.stat")).unwrap();
    let inactive_file: u64 = stat.lines().find_map(|l| l.strip_prefix("total_inactive_file ")).and_then(|v| v.parse().ok()).unwrap_or(0);
    ((budget_mib << 20) as f64 - usage as f64 + inactive_file as f64) / (1 << 20) as f64
}

/// Two swap-targets, s1 and s2, of 120 MiB and a foreground app (a sleep) under a
/// 400 MiB budget, with `policy` running: s1 used before s2 (the least recent), both
/// filled. `s1_script` replaces s1's program (a Python script that waits for the
/// returned `go` file). Procs: 0 daemon, 1 fg, 2 s1, 3 s2.
struct Trio {
    tag: String,
    mem: PathBuf,
    sock: String,
    c: Cleanup,
    log: std::sync::Arc<Mutex<Vec<String>>>,
    s1: u32,
    s2: u32,
}

fn swap_targets_filled(name: &str, policy: &str, s1_script: Option<&dyn Fn(&Path) -> String>) -> Trio {
    let mut it = itest(name, true);
    it.config(policy, &["fg", "s1", "s2"], "memory_limit_mib = 400\nminfree_mib = [[900, 8]]\n");
    let Itest { tag, mem, sock, cfg, mut c, .. } = it;
    let (daemon, log) = start_daemon(&cfg, &format!("policy {policy}, 3 apps"));
    c.procs.push(daemon);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    c.procs.push(sleeper(&format!("{tag}-fg")));
    c.procs.push(match s1_script {
        Some(script) => Command::new(python()).args(["-c", &script(&go), &format!("{tag}-s1")]).spawn().unwrap(),
        None => app(&format!("{tag}-s1"), &go, 120, 8, 0.05),
    });
    c.procs.push(app(&format!("{tag}-s2"), &go, 120, 8, 0.05));
    wait_adopted(&sock, 3);
    for a in ["s1", "s2", "fg"] {
        ctl(&sock, &["fg", a]);
    }
    std::fs::write(&go, "").unwrap();
    let (s1, s2) = (c.procs[2].id(), c.procs[3].id());
    for pid in [s1, s2] {
        wait_for("swap-targets filled", Duration::from_secs(30), || vm_kb(pid, "VmRSS:") + vm_kb(pid, "VmSwap:") > 120 << 10);
    }
    Trio { tag, mem, sock, c, log, s1, s2 }
}

/// Selective's swap threshold on the kernel (Table 3: swap-first swaps below 180 MB
/// free, before its killer's 100 MB; kill-first below Linux's 4 MB). Two swap-targets of
/// 120 MiB under a 400 MiB budget leave about 140 MiB free: swap-first pages out the
/// least recently used one until free memory is back above the threshold, and kills
/// nothing; kill-first, whose threshold is far below, leaves both resident.
#[test]
fn selective_swap_first_pages_out_the_least_recent_swap_target_below_its_threshold() {
    let _alone = crate::alone();
    for (policy, short, threshold) in [("selective-swap-first", "sf", 180.0), ("selective-kill-first", "kf", 4.0)] {
        let Trio { tag, mem, sock, mut c, log, s1, s2 } = swap_targets_filled(&format!("thresh-{short}"), policy, None);
        std::thread::sleep(Duration::from_millis(500));
        let free = budget_free_mib(&mem, &tag, 400);
        let swap = |pid| vm_kb(pid, "VmSwap:") >> 10;
        eprintln!("{policy}: free {free:.1} MiB of the budget; s1 swap {} MiB, s2 swap {} MiB", swap(s1), swap(s2));
        for i in 1..=3 {
            assert!(alive(&mut c.procs[i]), "{policy}: nothing is killed (proc {i})");
        }
        let said = log.lock().unwrap().join("\n");
        assert!(said.contains(&format!("swaps below its own threshold, {threshold:.1} MiB free")), "{said}");
        if threshold > 100.0 {
            assert!(free >= threshold, "{policy}: free memory back above the threshold: {free:.1} MiB");
            // Below 180 MiB free it pages out the way to 216 MiB (6/5), 36 MiB at least.
            assert!(swap(s1) >= 32, "{policy}: the least recent swap-target went to swap: {} MiB", swap(s1));
            assert!(swap(s2) < swap(s1) / 4, "{policy}: s1 first: s1 {} MiB, s2 {} MiB", swap(s1), swap(s2));
            assert!(said.contains("pageout s1: "), "{said}");
            let m = ctl(&sock, &["metrics"]);
            let pages: u64 = m
                .lines()
                .find_map(|l| l.strip_prefix("floe_background_pageout_pages_total "))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{m}"));
            assert!(pages >= 32 << 8, "{policy}: {pages} pages counted as gone to swap");
        } else {
            assert!(free < 180.0, "{policy}: the apps fill the budget past swap-first's threshold: {free:.1} MiB free");
            assert_eq!((swap(s1), swap(s2)), (0, 0), "{policy}: nothing goes to swap above its 4 MiB");
            assert!(!said.contains("pageout"), "{said}");
        }
    }
}

/// Acclaim's foreground-last eviction on the kernel: with free memory under the budget
/// below the low watermark, background apps are paged out first, the least recently
/// used one first, up to the high watermark, and the foreground app's memory stays
/// resident; LRU+CFS under the same budget leaves the order to the kernel, which does not
/// reclaim yet (the apps are below the budget's limit).
#[test]
fn acclaim_pages_out_background_apps_before_the_foreground_one() {
    let _alone = crate::alone();
    // The low watermark is 5/4 of min_free_kbytes: a budget of the apps' 160 MiB plus
    // the low watermark less 20 MiB leaves about 20 MiB less than it free.
    let min_kb: u64 = std::fs::read_to_string("/proc/sys/vm/min_free_kbytes").unwrap().trim().parse().unwrap();
    let (low, high) = ((min_kb * 5 / 4) as f64 / 1024.0, (min_kb * 3 / 2) as f64 / 1024.0);
    let budget = 160 + low as u64 - 20;
    for policy in ["acclaim", "lru-cfs"] {
        let mut it = itest(&format!("fglast-{policy}"), true);
        it.config(policy, &["fg", "b1", "b2"], &format!("memory_limit_mib = {budget}\nminfree_mib = [[900, 4]]\n"));
        let Itest { tag, mem, sock, cfg, mut c, .. } = it;
        let (daemon, log) = start_daemon(&cfg, &format!("policy {policy}, 3 apps"));
        c.procs.push(daemon);
        let go = PathBuf::from(format!("/tmp/{tag}.go"));
        c.files.push(go.clone());
        for (a, mib) in [("fg", 40), ("b1", 60), ("b2", 60)] {
            c.procs.push(app(&format!("{tag}-{a}"), &go, mib, 8, 0.05));
        }
        wait_adopted(&sock, 3);
        // b1 was used before b2: the least recent.
        for a in ["b1", "b2", "fg"] {
            ctl(&sock, &["fg", a]);
        }
        std::fs::write(&go, "").unwrap();
        // procs: 0 daemon, 1 fg, 2 b1, 3 b2.
        let pids: Vec<u32> = (1..=3).map(|i| c.procs[i].id()).collect();
        for (&pid, mib) in pids.iter().zip([40, 60, 60]) {
            wait_for("apps filled", Duration::from_secs(30), || vm_kb(pid, "VmRSS:") + vm_kb(pid, "VmSwap:") > mib << 10);
        }
        std::thread::sleep(Duration::from_millis(500));
        let free = budget_free_mib(&mem, &tag, budget);
        let swap: Vec<u64> = pids.iter().map(|&p| vm_kb(p, "VmSwap:") >> 10).collect();
        eprintln!("{policy}: budget {budget} MiB, free {free:.1} MiB (low {low:.1}, high {high:.1}); swap fg / b1 / b2 {swap:?} MiB");
        for i in 1..=3 {
            assert!(alive(&mut c.procs[i]), "{policy}: nothing is killed (proc {i})");
        }
        let said = log.lock().unwrap().join("\n");
        assert_eq!(swap[0], 0, "{policy}: the foreground app stays resident");
        if policy == "acclaim" {
            assert!(said.contains("reclaims the foreground app's pages last"), "{said}");
            assert!(free >= low, "{policy}: free memory back above the low watermark: {free:.1} MiB");
            // From below the low watermark up to the high one: (high - low) at least.
            assert!(swap[1] as f64 >= (high - low) * 0.9, "{policy}: the least recent background app first: {swap:?}");
            assert!(swap[2] < swap[1], "{policy}: b1 before b2: {swap:?}");
            assert!(said.contains("pageout b1: "), "{said}");
        } else {
            assert!(free < low, "{policy}: the apps take free memory below the low watermark: {free:.1} MiB");
            assert_eq!(swap, vec![0, 0, 0], "{policy}: the kernel reclaims nothing below the budget's limit");
            assert!(!said.contains("pageout"), "{said}");
        }
    }
}

/// A background page-out that frees nothing is tried once, not at every sample: under
/// swap-first, the least recent swap-target has its memory locked (mlockall), so
/// there is nothing MADV_PAGEOUT may take (its locked mappings are left out of the
/// ranges); the daemon says so once and pages out the next one.
#[test]
fn a_page_out_that_frees_nothing_is_not_retried_and_the_next_app_goes() {
    let _alone = crate::alone();
    // s1 locks all of its memory, present and future (MCL_CURRENT | MCL_FUTURE).
    let locked = |go: &Path| {
        format!(
            "import ctypes,mmap,os,time\nwhile not os.path.exists({go:?}): time.sleep(0.02)\nassert ctypes.CDLL(None).mlockall(3) == 0\nm=mmap.mmap(-1,120<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nfor i in range(0,120<<20,4096): m[i]=1\ntime.sleep(600)\n"
        )
    };
    let Trio { log, s1, s2, c: _c, .. } = swap_targets_filled("futile", "selective-swap-first", Some(&locked));
    // A second at the daemon's 50 ms samples: twenty chances to retry.
    std::thread::sleep(Duration::from_secs(1));
    let said = log.lock().unwrap().clone();
    let s1_lines: Vec<&String> = said.iter().filter(|l| l.contains("pageout s1")).collect();
    eprintln!("s1: {s1_lines:?}; s2 swap {} MiB", vm_kb(s2, "VmSwap:") >> 10);
    assert_eq!(s1_lines.len(), 1, "tried once: {said:?}");
    assert!(s1_lines[0].contains("not tried again until free memory recovers"), "{}", s1_lines[0]);
    assert_eq!(vm_kb(s1, "VmSwap:"), 0, "locked memory stays");
    assert!(vm_kb(s2, "VmSwap:") >> 10 >= 32, "the next swap-target went instead");
    assert!(said.iter().any(|l| l.contains("pageout s2: ") && l.contains("pages left memory")), "{said:?}");
}

/// A large dip below the swap threshold is paged out over several samples, at most
/// 64 MiB in each, so the daemon's loop (and the killer in it) comes round between:
/// a 300 MiB app filled in the foreground under a 400 MiB budget leaves about 90 MiB
/// free, and when it goes to the background, 126 MiB short of swap-first's 216 MiB (6/5
/// of its 180 MiB threshold) come due at once.
#[test]
fn a_large_page_out_is_spread_over_samples() {
    let _alone = crate::alone();
    let mut it = itest("spread", true);
    it.config("selective-swap-first", &["fg", "s1"], "memory_limit_mib = 400\nminfree_mib = [[900, 8]]\n");
    let Itest { tag, mem, cfg, sock, mut c, .. } = it;
    let (daemon, log) = start_daemon(&cfg, "policy selective-swap-first, 2 apps");
    c.procs.push(daemon);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    c.procs.push(sleeper(&format!("{tag}-fg")));
    c.procs.push(app(&format!("{tag}-s1"), &go, 300, 300, 0.0));
    wait_adopted(&sock, 2);
    ctl(&sock, &["fg", "s1"]);
    std::fs::write(&go, "").unwrap();
    let s1 = c.procs[2].id();
    wait_for("s1 filled", Duration::from_secs(30), || vm_kb(s1, "VmRSS:") > 300 << 10);
    assert_eq!(vm_kb(s1, "VmSwap:"), 0, "the foreground app is not paged out");
    ctl(&sock, &["fg", "fg"]);
    wait_for("free memory back above the threshold", Duration::from_secs(10), || budget_free_mib(&mem, &tag, 400) >= 180.0);
    std::thread::sleep(Duration::from_millis(300));
    let said = log.lock().unwrap().clone();
    let pages: Vec<u64> = said.iter().filter_map(|l| l.split("pageout s1: ").nth(1)?.split(' ').next()?.parse().ok()).collect();
    let swap = vm_kb(s1, "VmSwap:") >> 10;
    eprintln!("s1's page-outs, pages each: {pages:?}; s1 swap {swap} MiB; free {:.1} MiB", budget_free_mib(&mem, &tag, 400));
    assert!(pages.len() >= 2, "more than one sample's page-out: {said:?}");
    assert!(pages.iter().all(|&n| n <= 64 * 256 * 21 / 20), "at most 64 MiB a sample: {pages:?}");
    assert!(swap >= 100, "the whole dip went to swap over the samples: {swap} MiB");
    assert!(alive(&mut c.procs[2]), "nothing killed");
}

/// `floe ctl reclaim` and `prepage` by hand: the same bounded actions a policy takes,
/// through the same guard (never a reclaim of the foreground app), with the reply saying
/// what was done.
#[test]
fn ctl_reclaims_and_prepages_an_app_by_hand_and_never_the_foreground() {
    let _alone = crate::alone();
    let mut it = itest("manual", true);
    it.config("lru-cfs", &["a"], "");
    let Itest { tag, sock, cfg, mut c, .. } = it;
    let (daemon, _log) = start_daemon(&cfg, "policy lru-cfs, 1 apps");
    c.procs.push(daemon);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    std::fs::write(&go, "").unwrap();
    c.procs.push(app(&format!("{tag}-a"), &go, 64, 64, 0.0));
    let pid = c.procs[1].id();
    wait_adopted(&sock, 1);
    wait_for("a's heap touched", Duration::from_secs(10), || vm_kb(pid, "RssAnon:") > 64 << 10);
    let reply = ctl(&sock, &["reclaim", "a", "16"]);
    assert!(reply.contains("reclaim a: 4096 of 4096 pages asked"), "{reply}");
    let swap = vm_kb(pid, "VmSwap:") >> 10;
    assert!((14..=17).contains(&swap), "16 MiB to swap: {swap} MiB");
    let reply = ctl(&sock, &["reclaim", "a"]);
    assert!(reply.contains("of all pages asked"), "{reply}");
    assert!(vm_kb(pid, "VmSwap:") >> 10 >= 60, "all of the heap in swap");
    let reply = ctl(&sock, &["prepage", "a", "8"]);
    assert!(reply.contains("prepage a: 2048 of 2048 pages asked"), "{reply}");
    ctl(&sock, &["fg", "a"]);
    let resident = vm_kb(pid, "RssAnon:");
    let refused = [
        (vec!["reclaim", "a", "1"], "refused reclaim of a: a is in the foreground"),
        (vec!["reclaim", "nope"], "unknown app `nope`"),
        (vec!["reclaim", "a", "0"], "must be above 0"),
        (vec!["prepage", "a", "x"], "`x` is not a number of MiB"),
    ];
    for (req, says) in refused {
        let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["ctl", "--socket", &sock]).args(&req).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{req:?}: {err}");
    }
    assert_eq!(vm_kb(pid, "RssAnon:"), resident, "the foreground app's memory is left alone");
}

/// A `floe ctl reclaim` (or a policy's `Reclaim`) of more than one sample's share goes on
/// over the samples, 64 MiB each, and the daemon answers other requests meanwhile; the
/// reply comes when it ends, saying how many samples it took. A prepage likewise. Once
/// the app comes to the foreground, a reclaim under way stops there.
#[test]
fn a_large_ctl_reclaim_goes_on_over_samples_while_the_daemon_answers_others() {
    let _alone = crate::alone();
    let mut it = itest("manual-large", true);
    // Samples 300 ms apart, so a request sent between two of them lands there.
    it.config_every("lru-cfs", &["a", "b"], "", 300);
    let Itest { tag, sock, cfg, mut c, .. } = it;
    let (daemon, log) = start_daemon(&cfg, "policy lru-cfs, 2 apps");
    c.procs.push(daemon);
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    std::fs::write(&go, "").unwrap();
    // 160 MiB each: a's and one share of b's fit the 256 MiB zram device.
    c.procs.push(app(&format!("{tag}-a"), &go, 160, 160, 0.0));
    c.procs.push(app(&format!("{tag}-b"), &go, 160, 160, 0.0));
    let (a, b) = (c.procs[1].id(), c.procs[2].id());
    wait_adopted(&sock, 2);
    wait_for("the heaps touched", Duration::from_secs(10), || vm_kb(a, "RssAnon:") > 160 << 10 && vm_kb(b, "RssAnon:") > 160 << 10);
    // `ctl` asks from another thread; this one asks for `status` meanwhile.
    let in_bg = |req: &'static [&'static str]| {
        let sock = sock.clone();
        std::thread::spawn(move || ctl(&sock, req))
    };
    let reclaim = in_bg(&["reclaim", "a"]);
    let mut answered = 0;
    while !reclaim.is_finished() {
        if ctl(&sock, &["status"]).contains("policy lru-cfs") && !reclaim.is_finished() {
            answered += 1;
        }
    }
    let reply = reclaim.join().unwrap();
    eprintln!("reclaim: {reply}status answered {answered} times meanwhile");
    let samples = |r: &str| -> u32 { r.split("over ").nth(1).and_then(|t| t.split(' ').next()?.parse().ok()).unwrap_or(1) };
    assert!(reply.contains("reclaim a: ") && reply.contains(" of all pages asked"), "{reply}");
    assert!(samples(&reply) >= 3, "160 MiB at 64 MiB a sample: {reply}");
    assert!(answered >= 1, "the daemon answered nothing else while it reclaimed");
    assert!(vm_kb(a, "VmSwap:") >> 10 >= 150, "the whole heap went to swap");

    // MADV_WILLNEED reads swap into the swap cache; the pages stay in swap until used.
    let swap_cached = || meminfo_kb("SwapCached:") >> 10;
    let before = swap_cached();
    let reply = ctl(&sock, &["prepage", "a", "128"]);
    assert!(reply.contains("prepage a: 32768 of 32768 pages asked, over 2 samples"), "{reply}");
    assert!(swap_cached() >= before + 100, "128 MiB read back: swap cache {before} -> {} MiB", swap_cached());

    // Once b's first share is out, b comes to the foreground: the rest is left. a's heap
    // holds 160 MiB of the 256 MiB swap, so a second share, if one is taken, fits only
    // in part: b can have no more in swap than what is free now.
    let room = meminfo_kb("SwapFree:") >> 10;
    let first = log.lock().unwrap().len();
    let reclaim = in_bg(&["reclaim", "b"]);
    wait_for("the reclaim's first share", Duration::from_secs(5), || {
        log.lock().unwrap()[first..].iter().any(|l| l.contains("reclaim b: 16384 pages at the first sample"))
    });
    ctl(&sock, &["fg", "b"]);
    let reply = reclaim.join().unwrap();
    // On a busy machine the next sample (300 ms on) may take a second share before the
    // `fg` lands: what is guaranteed is whole shares, fewer than all, then the stop.
    let asked: u64 = reply.split("reclaim b: ").nth(1).and_then(|t| t.split(' ').next()?.parse().ok()).unwrap_or_else(|| panic!("{reply}"));
    assert!(
        asked.is_multiple_of(16384) && (16384..40960).contains(&asked) && reply.ends_with("stopped: b is in the foreground\n"),
        "{reply}"
    );
    let (swap, mib) = (vm_kb(b, "VmSwap:") >> 10, asked / 256);
    let fits = mib.min(room);
    assert!(
        (fits.saturating_sub(6)..=mib + 6).contains(&swap),
        "{mib} MiB of shares asked, {room} MiB of swap free: in swap {swap} MiB, not the rest"
    );
}

/// The daemon watches its supervisor: killed, the supervisor is reaped and another
/// starts, which still thaws the apps when the daemon itself is killed.
#[test]
fn a_killed_supervisor_is_replaced() {
    let _alone = crate::alone();
    let mut it = itest("supervisor", false);
    it.ice_config(&["a"], "");
    let Itest { tag, v2, sock, cfg, mut c, .. } = it;
    let (mut daemon, lines) = start_daemon(&cfg, "policy ice, 1 apps");
    c.procs.push(sleeper(&format!("{tag}-a")));
    wait_adopted(&sock, 1);
    let first = supervisors_of(daemon.id());
    assert_eq!(first.len(), 1, "one supervisor: {first:?}");
    assert!(Command::new("kill").args(["-KILL", &first[0].to_string()]).status().unwrap().success());
    wait_for("another supervisor", Duration::from_secs(5), || {
        let now = supervisors_of(daemon.id());
        now.len() == 1 && now[0] != first[0]
    });
    // The daemon says so (its log is read on another thread: wait for the line).
    let gone = format!("supervisor {} exited", first[0]);
    wait_for("the daemon's word on it", Duration::from_secs(5), || {
        let said = lines.lock().unwrap().join("\n");
        said.contains(&gone) && said.contains("started another")
    });
    // The new supervisor does its work: the daemon killed with the app frozen, the app
    // is thawed.
    let frozen = v2.join(&tag).join("a").join("cgroup.freeze");
    std::fs::write(&frozen, "1").unwrap();
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    wait_for("the app thawed", Duration::from_secs(5), || std::fs::read_to_string(&frozen).unwrap_or_default().trim() == "0");
}

/// The daemon's children that supervise it, by their command lines (`--supervise PID`).
fn supervisors_of(daemon: u32) -> Vec<u32> {
    let want = format!("--supervise\0{daemon}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&want)))
        .filter(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z ")))
        .collect()
}

/// KiB of `pid`'s address space mapped from `file` (the sum of its mappings' Rss).
fn rss_of_file_kb(pid: u32, file: &Path) -> u64 {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let mut mine = false;
    let mut kb = 0;
    for l in smaps.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.first().is_some_and(|a| a.contains('-') && !a.ends_with(':')) {
            mine = w.get(5).is_some_and(|p| Path::new(p) == file);
        } else if mine && w.first() == Some(&"Rss:") {
            kb += w[1].parse::<u64>().unwrap();
        }
    }
    kb
}

/// `floed`, the daemon alone: a config it cannot use is refused before anything
/// changes, with the reason; a good one runs under a supervisor that is `floed` too,
/// which keeps mapped only the pages it touches to wait (its start-up's are released)
/// and thaws the apps when the daemon is killed.
#[test]
fn floed_runs_the_daemon_with_its_own_supervisor() {
    let _alone = crate::alone();
    let floed = Path::new(env!("CARGO_BIN_EXE_floed"));
    let mut it = itest("floed", false);
    it.config("no-such-policy", &["a"], "");
    let out = Command::new(floed).args(["--config", it.cfg.to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("floed: error:") && err.contains("no-such-policy"), "{err}");
    assert!(!it.v2.join(&it.tag).exists(), "nothing made for a refused config");
    let out = Command::new(floed).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("the daemon needs --config FILE"));

    it.ice_config(&["a"], "");
    let Itest { tag, v2, sock, cfg, mut c, .. } = it;
    let mut cmd = Command::new(floed);
    cmd.args(["--config", cfg.to_str().unwrap()]);
    let (mut daemon, _lines) = start_daemon_cmd(cmd, "policy ice, 1 apps");
    c.procs.push(sleeper(&format!("{tag}-a")));
    wait_adopted(&sock, 1);
    let sup = supervisors_of(daemon.id());
    assert_eq!(sup.len(), 1, "one supervisor: {sup:?}");
    assert_eq!(std::fs::read_link(format!("/proc/{}/exe", sup[0])).unwrap(), floed.canonicalize().unwrap());
    // Locked as the daemon is (mlockall), but only what it touches after start-up.
    assert!(vm_kb(sup[0], "VmLck:") > 0, "the supervisor locked its memory");
    let mapped = rss_of_file_kb(sup[0], &floed.canonicalize().unwrap());
    assert!(mapped > 0 && mapped < 1024, "the supervisor maps {mapped} KiB of floed");
    let frozen = v2.join(&tag).join("a").join("cgroup.freeze");
    std::fs::write(&frozen, "1").unwrap();
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    wait_for("the app thawed", Duration::from_secs(5), || std::fs::read_to_string(&frozen).unwrap_or_default().trim() == "0");
}

/// A save to the state database that cannot go on (another connection holds its
/// write lock, for longer than SQLite's 5 s busy timeout) is the saver thread's wait,
/// not the loop's: a change of foreground, which is saved at once, is answered at
/// once, the loop answers status and kills a cached app under its level while the
/// saves wait, the failed save is made again once the lock is gone, and a stop still
/// ends promptly.
#[test]
fn a_stalled_state_save_delays_no_answer_and_no_kill() {
    let _alone = crate::alone();
    let mut it = itest("stalledsave", false);
    // A 300 MiB budget; below 100 MiB free in it, a cached app is killed.
    it.config("android-lmk", &["top", "a", "b"], "memory_limit_mib = 300\nminfree_mib = [[900, 100]]\nstate_save_s = 1\n");
    let Itest { tag, sock, db, cfg, mut c, .. } = it;
    let go = PathBuf::from(format!("/tmp/{tag}.go"));
    c.files.push(go.clone());
    let (daemon, log) = start_daemon(&cfg, "policy android-lmk, 3 apps");
    c.procs.push(daemon);
    // procs: 0 daemon, 1 top, 2 a (250 MiB once told to go), 3 b, 4 the lock holder.
    c.procs.push(sleeper(&format!("{tag}-top")));
    c.procs.push(app(&format!("{tag}-a"), &go, 250, 25, 0.1));
    c.procs.push(sleeper(&format!("{tag}-b")));
    wait_adopted(&sock, 3);
    ctl(&sock, &["fg", "top"]);
    let session = || {
        let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["state", "--db", &db]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    wait_for("the session saved", Duration::from_secs(5), || session().contains(r#""fg":"top""#));

    // Another connection takes the database's write lock for 12 s.
    let script = format!(
        "import sqlite3,time\nc=sqlite3.connect({db:?},isolation_level=None,timeout=10)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked',flush=True)\ntime.sleep(12)\nc.execute('ROLLBACK')\n"
    );
    let mut holder = Command::new(python()).args(["-c", &script]).stdout(Stdio::piped()).spawn().unwrap();
    let mut said = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap()).read_line(&mut said).unwrap();
    assert_eq!(said.trim(), "locked");
    let locked = Instant::now();
    c.procs.push(holder);
    // Each switch is saved at once, and each save now waits on the lock.
    for app in ["b", "top", "b"] {
        let t = Instant::now();
        assert_eq!(ctl(&sock, &["fg", app]), "ok\n");
        assert!(t.elapsed() < Duration::from_secs(1), "fg {app} answered in {:?}", t.elapsed());
    }
    for _ in 0..5 {
        let t = Instant::now();
        assert!(ctl(&sock, &["status"]).starts_with("policy android-lmk  foreground b\n"));
        assert!(t.elapsed() < Duration::from_secs(1), "status answered in {:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(200));
    }
    // a grows past the level: the loop kills it while the lock is still held.
    std::fs::write(&go, "").unwrap();
    wait_for("a killed", Duration::from_secs(8), || !alive(&mut c.procs[2]));
    assert!(locked.elapsed() < Duration::from_secs(12), "killed while the save waited ({:?})", locked.elapsed());
    assert!(alive(&mut c.procs[1]) && alive(&mut c.procs[3]), "top and b survive");
    assert!(!session().contains(r#""fg":"b""#), "nothing written while the lock is held");
    wait_for("a failed save logged", Duration::from_secs(10), || log.lock().unwrap().iter().any(|l| l.contains("state: cannot save")));
    // The lock gone, the last session is written.
    wait_for("the session saved after the lock", Duration::from_secs(20), || {
        let s = session();
        s.contains(r#""fg":"b""#) && s.contains(r#""order":["a","top","b"]"#)
    });
    let t = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &c.procs[0].id().to_string()]).status().unwrap().success());
    c.procs[0].wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "stopped in {:?}", t.elapsed());
}
