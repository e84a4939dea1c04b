//! The daemon on the real kernel (root; cgroup v2 plus v1 memory; zram): Ice freezes the
//! background app that refaults, `floe ctl fg` thaws it, and SIGKILL of the daemon
//! leaves nothing frozen (its supervisor thaws within a second). The test owns its
//! cgroups, processes, socket and zram swap, and removes them.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Cleanup {
    procs: Vec<Child>,
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
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
        if self.zram {
            let _ = Command::new("swapoff").arg("/dev/zram0").status();
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
}

fn mount(fs: &str, opt: Option<&str>) -> PathBuf {
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

fn ctl(sock: &str, req: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_floe")).args(["ctl", "--socket", sock]).args(req).output().unwrap();
    assert!(out.status.success(), "ctl {req:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn ice_freezes_the_refaulting_background_app_ctl_thaws_it_and_sigkill_leaves_nothing_frozen() {
    let tag = format!("floe-itest-{}", std::process::id());
    let (v2, mem) = (mount("cgroup2", None), mount("cgroup", Some("memory")));
    let mut c = Cleanup { procs: vec![], dirs: vec![], files: vec![], zram: false };
    // zram swap, so the memory-limited app's pages are swapped and refault.
    // Used as it is if zram0 already is swap; else set up here and torn down after.
    if !std::fs::read_to_string("/proc/swaps").unwrap().lines().any(|l| l.starts_with("/dev/zram0")) {
        let size = std::fs::read_to_string("/sys/block/zram0/disksize").expect("needs /dev/zram0");
        assert_eq!(size.trim(), "0", "zram0 is configured, but not as swap, by someone else; not touching it");
        std::fs::write("/sys/block/zram0/disksize", "256M").unwrap();
        c.zram = true;
        assert!(Command::new("mkswap").arg("/dev/zram0").stdout(Stdio::null()).status().unwrap().success());
        assert!(Command::new("swapon").arg("/dev/zram0").status().unwrap().success());
    }

    let sock = format!("/tmp/{tag}.sock");
    let cfg = std::env::temp_dir().join(format!("{tag}.toml"));
    c.files.extend([PathBuf::from(&sock), cfg.clone()]);
    std::fs::write(
        &cfg,
        format!(
            "policy = \"ice\"\ncgroup_root = \"{tag}\"\nsocket = \"{sock}\"\nsample_ms = 50\ndiscover_ms = 50\n\n[[app]]\nname = \"fg\"\ncmdline = \"{tag}-fg\"\n\n[[app]]\nname = \"bg\"\ncmdline = \"{tag}-bg\"\n"
        ),
    )
    .unwrap();
    for base in [&v2, &mem] {
        let root = base.join(&tag);
        c.dirs.push(root.clone());
        c.dirs.push(root.join("fg"));
        c.dirs.push(root.join("bg"));
    }
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_floe"))
        .args(["daemon", "--config", cfg.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(daemon.stdout.take().unwrap()).lines();
    // The first line is printed once the groups, supervisor and socket are up.
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("floe daemon: policy ice, 2 apps"), "{first}");
    std::thread::spawn(move || lines.for_each(|l| eprintln!("daemon: {}", l.unwrap_or_default())));
    let bg_mem = mem.join(&tag).join("bg");
    std::fs::write(bg_mem.join("memory.limit_in_bytes"), "24M").unwrap();

    // The apps: a foreground one that idles, a background one that keeps touching 40 MiB
    // of heap in a 24 MiB memory cgroup (so it refaults from zram all the time).
    c.procs.push(Command::new("bash").args(["-c", &format!("exec -a {tag}-fg sleep 600")]).spawn().unwrap());
    let script = "import mmap,time\ntime.sleep(0.5)\nm=mmap.mmap(-1,40<<20,flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS)\nwhile True:\n    for i in range(0,40<<20,4096): m[i]=1\n    time.sleep(0.01)\n";
    c.procs.push(Command::new("python3").args(["-c", script, &format!("{tag}-bg")]).spawn().unwrap());
    let bg = v2.join(&tag).join("bg");
    wait_for("both apps adopted", Duration::from_secs(5), || {
        ctl(&sock, &["status"]).lines().filter(|l| l.contains("pids [") && !l.contains("pids []")).count() == 2
    });
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

    // (5) SIGKILL the daemon while bg is frozen: the supervisor thaws it within 1 s.
    let killed = Instant::now();
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    wait_for("bg thawed after SIGKILL of the daemon", Duration::from_millis(1000), || !frozen(&bg));
    eprintln!("thawed {:?} after SIGKILL", killed.elapsed());
}
