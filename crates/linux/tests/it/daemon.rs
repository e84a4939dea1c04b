//! The daemon in this process, on the real kernel (root; cgroup v2 and the v1 memory and
//! freezer hierarchies): a dry run touches no cgroup file; silent and oversized control
//! clients do not delay a kill; a restarted daemon keeps the foreground; the socket
//! goes to `ctl_gid` alone and a non-root caller acts only on its own apps; a start-up
//! that fails removes the groups it made; v1 groups take an adopted process's charge
//! with it; the budget's v1 pressure level wakes the daemon; after a long idle spell
//! the budget's event kills at once, on the apps as they are then; an idle daemon
//! writes nothing to its state database; Ice's MDT gets its high-water mark from the
//! config and sets it against MemAvailable; a log nobody reads holds neither the loop
//! nor the killer; the budget's cap goes with its config; a second daemon on the same
//! apps or state is refused; a missing layout to adopt is warned about. Each test owns
//! its groups (`floe-dtest-PID-TAG`), processes, socket and state database, and
//! removes them.

use floe_linux::cgroup::Hierarchies;
use floe_linux::daemon::{ctl, Config, Daemon};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One test's names and what it removes at the end: its processes, files, and the
/// groups named after it in every hierarchy.
struct Dtest {
    tag: String,
    h: Hierarchies,
    procs: Vec<Child>,
}

fn dtest(name: &str) -> Dtest {
    crate::needs_root();
    let h = Hierarchies::detect().unwrap();
    assert!(h.v2.is_some() && h.memory_v1.is_some(), "needs cgroup v2 and v1 memory: {h:?}");
    Dtest { tag: format!("floe-dtest-{}-{name}", std::process::id()), h, procs: Vec::new() }
}

impl Dtest {
    fn roots(&self) -> Vec<PathBuf> {
        [&self.h.v2, &self.h.memory_v1, &self.h.freezer_v1].into_iter().flatten().map(|r| r.join(&self.tag)).collect()
    }
    fn sock(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/{}.sock", self.tag))
    }
    fn db(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/{}.db", self.tag))
    }
    /// A config for `policy` with apps matched by the command-line word `TAG-NAME`.
    fn config(&self, policy: &str, apps: &[&str], extra: &str) -> Config {
        self.config_paced(policy, apps, "sample_ms = 20\nidle_sample_ms = 100\ndiscover_ms = 50\n", extra)
    }
    /// [`Dtest::config`] with its own sampling (`pace`).
    fn config_paced(&self, policy: &str, apps: &[&str], pace: &str, extra: &str) -> Config {
        let mut text = format!(
            "policy = \"{policy}\"\ncgroup_root = \"{}\"\nsocket = \"{}\"\nstate_db = \"{}\"\n{pace}{extra}\n",
            self.tag,
            self.sock().display(),
            self.db().display()
        );
        for a in apps {
            text += &format!("[[app]]\nname = \"{a}\"\ncmdline = \"{}-{a}\"\n", self.tag);
        }
        Config::parse("test.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }
    /// Starts app `name`: perl holding `mib` MiB of its own memory, asleep.
    fn app(&mut self, name: &str, mib: u64) -> u32 {
        let child = Command::new("perl")
            .args(["-e", &format!("my $x = 'a' x ({mib} << 20); sleep 120;"), &format!("{}-{name}", self.tag)])
            .spawn()
            .expect("perl");
        let pid = child.id();
        self.procs.push(child);
        pid
    }

    /// An app that allocates `mib` MiB once the file `go` exists: after the daemon has
    /// adopted it, so that its memory is charged to the budget (a kernel that does not
    /// move charges leaves what an app allocated before it was adopted where it was).
    fn app_after(&mut self, name: &str, mib: u64, go: &std::path::Path) -> u32 {
        let script = format!("sleep 0.02 until -e '{}'; my $x = 'a' x ({mib} << 20); sleep 120;", go.display());
        let child = Command::new("perl").args(["-e", &script, &format!("{}-{name}", self.tag)]).spawn().expect("perl");
        let pid = child.id();
        self.procs.push(child);
        pid
    }
}

impl Drop for Dtest {
    fn drop(&mut self) {
        for p in &mut self.procs {
            let _ = p.kill();
            let _ = p.wait();
        }
        for root in self.roots() {
            let _ = std::fs::write(root.join("cgroup.freeze"), "0");
            if let Ok(rd) = std::fs::read_dir(&root) {
                for e in rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
            let _ = std::fs::remove_dir(&root);
        }
        for suffix in ["sock", "db", "db-wal", "db-shm"] {
            let _ = std::fs::remove_file(format!("/tmp/{}.{suffix}", self.tag));
        }
    }
}

/// A daemon running its loop on a thread of this process until dropped.
struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
}

fn run(cfg: Config) -> Running {
    run_logging_to(cfg, Box::new(std::io::stdout()))
}

/// [`run`], the daemon's log written to `sink`.
fn run_logging_to(cfg: Config, sink: Box<dyn Write + Send>) -> Running {
    let sock = cfg.socket.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let stop2 = stop.clone();
    let thread = std::thread::spawn(move || {
        let mut d = match Daemon::new_logging_to(cfg, None, sink) {
            Ok(d) => d,
            Err(e) => {
                let _ = tx.send(Err(e.to_string()));
                return Err(e.to_string());
            }
        };
        let _ = tx.send(Ok(()));
        d.run_until(&stop2).map_err(|e| e.to_string())
    });
    rx.recv_timeout(Duration::from_secs(20)).expect("the daemon starts").expect("the daemon starts");
    assert!(sock.exists());
    Running { stop, thread: Some(thread) }
}

impl Running {
    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap().unwrap();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Polls `f` every 10 ms until it holds or `within` passes.
fn until(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    f()
}

/// Whether the daemon's status shows app `name` adopted with `pids` in the background:
/// cached, or frozen, as Ice freezes a cached app at its first refault (a perl still
/// faulting its library back in, after another test's group reclaimed it).
fn adopted_in_background(status: &str, name: &str, pids: &[u32]) -> bool {
    ["Cached", "Frozen"].iter().any(|state| status.contains(&format!("{name} {state} pids {pids:?}")))
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// Every group directory under the cgroup mounts but the other tests' of this binary
/// (`floe-test-*`, made and removed in parallel).
fn cgroup_dirs(h: &Hierarchies) -> std::collections::BTreeSet<PathBuf> {
    fn walk(d: &Path, out: &mut std::collections::BTreeSet<PathBuf>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) && !e.file_name().to_string_lossy().starts_with("floe-test-") {
                out.insert(e.path());
                walk(&e.path(), out);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for r in [&h.v2, &h.memory_v1, &h.freezer_v1].into_iter().flatten() {
        walk(r, &mut out);
    }
    out
}

/// A dry run makes, writes and fills no group: the cgroup trees are as they were, the
/// app's process stays where it was with its oom_score_adj, and no state database
/// is made; yet the daemon sees the app and answers for it.
#[test]
fn a_dry_run_touches_no_cgroup_file() {
    let _quiet = crate::quiet();
    let mut t = dtest("dry");
    let pid = t.app("cam", 4);
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let adj = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap();
    let cfg = t.config("android-lmk", &["cam", "maps"], "dry_run = true\nmemory_limit_mib = 64\nminfree_mib = [[900, 60]]\n");
    let before = cgroup_dirs(&t.h);
    let d = run(cfg);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("cam Cached pids [{pid}]"))));
    assert_eq!(ctl(&t.sock(), "fg maps").unwrap(), "ok\n");
    assert!(ctl(&t.sock(), "reclaim cam 1").unwrap().contains("dry-run: would reclaim cam"));
    std::thread::sleep(Duration::from_millis(300));
    d.stop();
    assert!(alive(pid), "a dry run kills nothing");
    let made: Vec<_> = cgroup_dirs(&t.h).difference(&before).cloned().collect();
    assert!(made.is_empty(), "groups made: {made:?}");
    for root in t.roots() {
        assert!(!root.exists(), "{} made", root.display());
    }
    assert_eq!(std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap(), cg, "the process was not moved");
    assert_eq!(std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap(), adj);
    assert!(!t.db().exists(), "no state database made");
    assert!(!t.sock().exists(), "the socket is removed at exit");
}

/// The control socket is served off the killer's loop: 20 clients that connect and say
/// nothing and one sending a 1 GB line do not hold up a kill. The line is refused
/// after at most a few MiB (what the socket buffers), the silent clients are dropped at
/// their deadline, and `status` is answered meanwhile. The killed app was the cached
/// one, and until then the apps' oom_score_adj followed the policy's adj.
#[test]
fn silent_clients_and_a_huge_line_do_not_delay_a_kill() {
    let _quiet = crate::quiet();
    let mut t = dtest("ctl");
    // 64 MiB budget, a level at 24 MiB free for cached apps (adj 900).
    let cfg = t.config("android-lmk", &["fg", "bg"], "memory_limit_mib = 64\nminfree_mib = [[900, 24]]\n");
    let d = run(cfg);
    let fg = t.app("fg", 1);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("fg Cached pids [{fg}]"))));
    let adj = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap().trim().to_string();
    assert!(until(Duration::from_secs(5), || adj(fg) == "900"), "a cached app's adj: {}", adj(fg));
    assert_eq!(ctl(&t.sock(), "fg fg").unwrap(), "ok\n");
    assert!(until(Duration::from_secs(5), || adj(fg) == "0"), "the foreground's adj: {}", adj(fg));
    let silent: Vec<UnixStream> = (0..20).map(|_| UnixStream::connect(t.sock()).unwrap()).collect();
    let sock = t.sock();
    let flood = std::thread::spawn(move || {
        let mut s = UnixStream::connect(sock).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        let mut sent = 0u64;
        while sent < 1 << 30 {
            match s.write(&chunk) {
                Ok(n) => sent += n as u64,
                Err(_) => break,
            }
        }
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        (sent, reply)
    });
    let go = std::env::temp_dir().join(format!("{}.go", t.tag));
    let bg = t.app_after("bg", 48, &go);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("bg Cached pids [{bg}]"))));
    let start = Instant::now();
    std::fs::write(&go, "").unwrap();
    assert!(until(Duration::from_secs(8), || !alive(bg)), "the cached app is killed while the socket is abused");
    let took = start.elapsed();
    assert!(alive(fg), "never the foreground");
    assert!(ctl(&t.sock(), "status").unwrap().contains("fg Foreground"));
    let (sent, reply) = flood.join().unwrap();
    assert!(sent < 64 << 20, "the line was refused early, after {sent} bytes");
    assert!(reply.contains("longer than 4096 bytes") || reply.is_empty(), "{reply}");
    let metrics = ctl(&t.sock(), "metrics").unwrap();
    assert!(metrics.contains("floe_kills_total 1"), "{metrics}");
    drop(silent);
    d.stop();
    let _ = std::fs::remove_file(&go);
    // A loop serving each client itself would be held 1 s per silent client, 20 s in all.
    assert!(took < Duration::from_secs(8), "{took:?}");
}

/// The budget's cap lives as long as the config that sets it: a stopping daemon lifts
/// it (no killer would act within it), and a daemon whose config sets none lifts one an
/// earlier daemon left (killed, say, before it could), where the kernel's OOM killer
/// would otherwise take apps this daemon thinks unbounded.
#[test]
fn the_budgets_cap_goes_with_its_config() {
    let _quiet = crate::quiet();
    let mut t = dtest("cap");
    let limit = |t: &Dtest| -> u64 {
        let f = t.h.memory_v1.as_ref().unwrap().join(&t.tag).join("memory.limit_in_bytes");
        std::fs::read_to_string(&f).unwrap().trim().parse().unwrap()
    };
    let unlimited = 1u64 << 62;
    let app = t.app("app", 1);
    let d = run(t.config("android-lmk", &["app"], "memory_limit_mib = 64\nminfree_mib = [[900, 24]]\n"));
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("app Cached pids [{app}]"))));
    assert_eq!(limit(&t), 64 << 20);
    d.stop();
    assert!(limit(&t) > unlimited, "the stopped daemon lifted its cap: {}", limit(&t));
    // An earlier daemon's cap, left behind; this config sets none.
    std::fs::write(t.h.memory_v1.as_ref().unwrap().join(&t.tag).join("memory.limit_in_bytes"), (64u64 << 20).to_string()).unwrap();
    let d = run(t.config("android-lmk", &["app"], ""));
    assert!(limit(&t) > unlimited, "the cap is lifted at start: {}", limit(&t));
    d.stop();
    assert!(alive(app));
    // The supervisor of a daemon that died acts only where no daemon runs since: it
    // would otherwise lift the cap, and thaw the apps, of the daemon that replaced it.
    let d = run(t.config("android-lmk", &["app"], "memory_limit_mib = 64\nminfree_mib = [[900, 24]]\n"));
    let freeze = t.h.v2.as_ref().unwrap().join(&t.tag).join("app/cgroup.freeze");
    std::fs::write(&freeze, "1").unwrap();
    assert!(!floe_linux::daemon::undo_after_exit(&t.h, &t.tag, None, false).unwrap(), "a daemon holds the root");
    assert_eq!(limit(&t), 64 << 20, "the running daemon's cap stays");
    assert_eq!(std::fs::read_to_string(&freeze).unwrap().trim(), "1", "its freezes stay");
    d.stop();
    std::fs::write(t.h.memory_v1.as_ref().unwrap().join(&t.tag).join("memory.limit_in_bytes"), (64u64 << 20).to_string()).unwrap();
    std::fs::write(&freeze, "1").unwrap();
    assert!(floe_linux::daemon::undo_after_exit(&t.h, &t.tag, None, false).unwrap(), "no daemon holds the root");
    assert!(limit(&t) > unlimited && std::fs::read_to_string(&freeze).unwrap().trim() == "0", "what a dead daemon left is undone");
}

/// A second daemon on a running one's cgroup root or state database is refused before
/// it touches them: it would thaw the first one's frozen apps and restore its session.
/// Once the first has stopped, the same config starts.
#[test]
fn a_second_daemon_on_the_same_apps_or_state_is_refused() {
    let _quiet = crate::quiet();
    let mut t = dtest("twice");
    let app = t.app("app", 1);
    let d = run(t.config("android-lmk", &["app"], ""));
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("app Cached pids [{app}]"))));
    // Frozen by hand, as a policy would: a daemon starting on the same root thaws it.
    let freeze = t.h.v2.as_ref().unwrap().join(&t.tag).join("app/cgroup.freeze");
    std::fs::write(&freeze, "1").unwrap();
    let frozen = || std::fs::read_to_string(&freeze).unwrap().trim() == "1";
    let other_sock = PathBuf::from(format!("/tmp/{}-2.sock", t.tag));
    let other_db = PathBuf::from(format!("/tmp/{}-2.db", t.tag));
    let with = |root: &str, db: &Path| {
        let text = format!(
            "policy = \"android-lmk\"\ncgroup_root = \"{root}\"\nsocket = \"{}\"\nstate_db = \"{}\"\n[[app]]\nname = \"app\"\ncmdline = \"{}-app\"\n",
            other_sock.display(),
            db.display(),
            t.tag
        );
        Config::parse("second.toml", &text).unwrap()
    };
    for (what, cfg) in [("cgroup_root", with(&t.tag, &other_db)), ("state_db", with(&format!("{}-2", t.tag), &t.db()))] {
        let e = Daemon::new(cfg, None).err().unwrap_or_else(|| panic!("a second daemon on the same {what} starts"));
        assert!(e.to_string().contains("another floe daemon is running on it") && e.to_string().contains(what), "{e}");
        assert!(frozen(), "the second daemon thawed nothing");
    }
    assert!(ctl(&t.sock(), "status").unwrap().contains(&format!("app Cached pids [{app}]")));
    d.stop();
    let again = run(t.config("android-lmk", &["app"], ""));
    again.stop();
    for p in [other_sock, other_db] {
        let _ = std::fs::remove_file(p);
    }
    for h in [&t.h.v2, &t.h.memory_v1, &t.h.freezer_v1].into_iter().flatten() {
        let _ = std::fs::remove_dir(h.join(format!("{}-2", t.tag)));
    }
}

/// A layout to adopt that is not there is said at start, not left to look like a
/// daemon with nothing to do.
#[test]
fn a_missing_layout_to_adopt_is_warned_about() {
    let _quiet = crate::quiet();
    #[derive(Clone, Default)]
    struct Kept(Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Kept {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let t = dtest("nolayout");
    let kept = Kept::default();
    let d = run_logging_to(t.config("ice", &[], &format!("adopt_layout = \"{}-layout\"\ndry_run = true\n", t.tag)), Box::new(kept.clone()));
    d.stop();
    let text = String::from_utf8(kept.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains(&format!("adopt_layout `{}-layout`: no group", t.tag)) && text.contains("no app is managed"), "{text}");
}

/// A log nobody reads (a journal stalled under memory pressure, a pipe whose reader
/// stopped) holds neither the loop nor the killer: with the log's pipe full and its
/// queue overflowing, requests are answered, a cached app over its level is killed,
/// never the foreground, and the daemon stops when told.
#[test]
fn a_log_nobody_reads_holds_neither_the_loop_nor_the_killer() {
    let _quiet = crate::quiet();
    let mut t = dtest("log");
    let mut fds = [0; 2];
    // SAFETY: a two-int buffer for pipe2.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    use std::os::fd::FromRawFd;
    // SAFETY: fresh descriptors nothing else owns.
    let (reader, writer) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
    let cfg = t.config("android-lmk", &["fg", "bg"], "memory_limit_mib = 64\nminfree_mib = [[900, 24]]\n");
    let d = run_logging_to(cfg, Box::new(writer));
    let fg = t.app("fg", 1);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("fg Cached pids [{fg}]"))));
    assert_eq!(ctl(&t.sock(), "fg fg").unwrap(), "ok\n");
    // Each refused reclaim of the foreground is a log line: 4,000 of them are several
    // times what the pipe (64 KiB) and the log's queue hold. Before the log had a
    // queue of its own, the loop stopped at the pipe's limit, and every request after.
    for i in 0..4000 {
        let reply = ctl(&t.sock(), "reclaim fg").unwrap();
        assert!(reply.contains("refused") || reply.contains("error"), "request {i}: {reply}");
    }
    assert!(ctl(&t.sock(), "status").unwrap().contains("fg Foreground"));
    let go = std::env::temp_dir().join(format!("{}.go", t.tag));
    let bg = t.app_after("bg", 48, &go);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("bg Cached pids [{bg}]"))));
    std::fs::write(&go, "").unwrap();
    assert!(until(Duration::from_secs(8), || !alive(bg)), "the cached app is killed while the log is stalled");
    assert!(alive(fg), "never the foreground");
    d.stop();
    let _ = std::fs::remove_file(&go);
    drop(reader);
}

/// The foreground, frozen set and recency are saved when the foreground changes (a
/// SIGKILL loses nothing) and restored: a restarted daemon keeps the app in the
/// foreground and refuses to act on it until told otherwise.
#[test]
fn a_restarted_daemon_keeps_the_foreground() {
    let _quiet = crate::quiet();
    let mut t = dtest("restart");
    let (a, b) = (t.app("a", 1), t.app("b", 1));
    let d = run(t.config("ice", &["a", "b"], ""));
    assert!(
        until(Duration::from_secs(10), || {
            let s = ctl(&t.sock(), "status").unwrap();
            adopted_in_background(&s, "a", &[a]) && adopted_in_background(&s, "b", &[b])
        }),
        "{}",
        ctl(&t.sock(), "status").unwrap()
    );
    assert_eq!(ctl(&t.sock(), "fg b").unwrap(), "ok\n");
    assert_eq!(ctl(&t.sock(), "fg a").unwrap(), "ok\n");
    // Saved at once (by the saver thread, within a moment), before any periodic save or
    // exit.
    let session = || floe_linux::state::Store::open(&t.db()).unwrap().load(floe_linux::daemon::SESSION_KEY).unwrap();
    assert!(until(Duration::from_secs(2), || session().is_some_and(|s| s.contains("\"fg\":\"a\""))));
    let saved = session().expect("saved");
    let s: floe_linux::daemon::Session = serde_json::from_str(&saved).unwrap();
    assert_eq!((s.fg.as_deref(), s.order.last().map(String::as_str)), (Some("a"), Some("a")), "{saved}");
    assert_eq!(std::fs::metadata(t.db()).unwrap().permissions().mode() & 0o777, 0o600, "the database is root's alone");
    d.stop();
    let d = run(t.config("ice", &["a", "b"], ""));
    assert!(ctl(&t.sock(), "status").unwrap().starts_with("policy ice  foreground a\n"));
    let r = ctl(&t.sock(), "reclaim a 1").unwrap();
    assert!(r.contains("refused reclaim of a: a is in the foreground"), "{r}");
    // b, the one before it, is the cached app with the lower adj.
    assert!(until(Duration::from_secs(5), || std::fs::read_to_string(format!("/proc/{b}/oom_score_adj")).unwrap().trim() == "900"));
    assert_eq!(std::fs::read_to_string(format!("/proc/{a}/oom_score_adj")).unwrap().trim(), "0");
    d.stop();
    assert!(alive(a) && alive(b));
}

/// `ctl_gid` gives the socket to that group (root:GID 0660; root alone 0600 without
/// it); a member that is not root may act only on apps running under its own uid.
#[test]
fn the_socket_is_granted_to_ctl_gid_and_other_users_act_only_on_their_apps() {
    let _quiet = crate::quiet();
    let mut t = dtest("gid");
    let mine = t.app("mine", 1);
    // The other app runs as uid 65534.
    let theirs = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "perl", "-e", "sleep 120;", &format!("{}-theirs", t.tag)])
        .spawn()
        .unwrap();
    let theirs_pid = theirs.id();
    t.procs.push(theirs);
    let d = run(t.config("ice", &["mine", "theirs"], ""));
    let m = std::fs::metadata(t.sock()).unwrap();
    assert_eq!((m.uid(), m.gid(), m.permissions().mode() & 0o777), (0, 0, 0o600));
    d.stop();
    let d = run(t.config("ice", &["mine", "theirs"], "ctl_gid = 65534\n"));
    let m = std::fs::metadata(t.sock()).unwrap();
    assert_eq!((m.uid(), m.gid(), m.permissions().mode() & 0o777), (0, 65534, 0o660));
    assert!(
        until(Duration::from_secs(10), || adopted_in_background(&ctl(&t.sock(), "status").unwrap(), "theirs", &[theirs_pid])),
        "{}",
        ctl(&t.sock(), "status").unwrap()
    );
    let _ = mine;
    // A request as uid 65534 (perl speaks to the socket).
    let as_nobody = |req: &str| {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "perl", "-MIO::Socket::UNIX", "-e"])
            .arg(format!(
                "my $s = IO::Socket::UNIX->new(Peer => '{}') or die $!; print $s \"{req}\\n\"; shutdown($s, 1); print while <$s>;",
                t.sock().display()
            ))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
    };
    assert!(as_nobody("apps").contains("mine\ntheirs\n"));
    assert_eq!(as_nobody("fg theirs"), "ok\n");
    let r = as_nobody("fg mine");
    assert!(r.contains("may act only on its own apps"), "{r}");
    assert!(ctl(&t.sock(), "status").unwrap().starts_with("policy ice  foreground theirs\n"), "root's answer");
    d.stop();
}

/// Ice's MDT sets its high-water mark (`mdt_high_mib`, Ice Table 4's H_wm) against the
/// memory available, which on Linux is MemAvailable itself; unset, the kernel's high
/// watermark stands (`tuned_high` none).
#[test]
fn mdt_sets_the_configured_high_water_mark_against_memavailable() {
    use floe_core::SystemView;
    let _quiet = crate::quiet();
    let t = dtest("mdt");
    let d = Daemon::new(t.config("ice", &["a"], "mdt_high_mib = 1024\n"), None).unwrap();
    let m = d.mem();
    assert_eq!(m.tuned_high, Some(floe_core::Pages(1024 * 256)));
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:")).unwrap().trim().trim_end_matches(" kB").parse::<u64>().unwrap();
    let (seen, now) = (m.available.0 as f64, (kb / 4) as f64);
    assert_eq!(m.available, m.free, "the daemon's free memory is MemAvailable already");
    assert!((seen - now).abs() < 0.1 * now, "available {seen} pages, MemAvailable {now}");
    drop(d);
    let d = Daemon::new(t.config("ice", &["a"], ""), None).unwrap();
    assert_eq!(d.mem().tuned_high, None);
}

/// A start-up that fails once groups exist (here: the supervisor cannot start)
/// removes the groups it made and leaves no socket.
#[test]
fn a_failed_start_removes_the_groups_it_made() {
    let _quiet = crate::quiet();
    let t = dtest("partial");
    let e = Daemon::new(t.config("ice", &["a", "b"], ""), Some((Path::new("/nonexistent/floe"), &["daemon"])))
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("/nonexistent/floe"), "{e}");
    for root in t.roots() {
        assert!(!root.exists(), "{} left behind", root.display());
    }
    assert!(!t.sock().exists());
    // A socket path where another daemon listens is refused before anything is made.
    let first = run(t.config("ice", &["a"], ""));
    let e = Daemon::new(t.config("ice", &["a"], ""), None).err().expect("refused").to_string();
    assert!(e.contains("another daemon is listening"), "{e}");
    first.stop();
    // A path that cannot be used is named with its key, before anything is made.
    let mut cfg = t.config("ice", &["a"], "");
    cfg.socket = PathBuf::from(format!("/tmp/{}-nodir/floe.sock", t.tag));
    let e = Daemon::new(cfg, None).err().expect("refused").to_string();
    assert!(e.starts_with("socket: ") && e.ends_with("-nodir does not exist"), "{e}");
    let mut cfg = t.config("ice", &["a"], "");
    cfg.state_db = PathBuf::from("/proc/floe-state.db");
    let e = Daemon::new(cfg, None).err().expect("refused").to_string();
    assert!(e.starts_with("state_db: /proc/floe-state.db"), "{e}");
    assert!(!t.sock().exists(), "the socket bound before goes with the failed start");
    for root in t.roots() {
        assert!(!root.exists(), "{} left behind", root.display());
    }
}

/// A process moved into an app's v1 memory group brings its memory's charge with it
/// (memory.move_charge_at_immigrate), so the budget counts what it allocated before;
/// where the kernel no longer moves charges, the group says so.
#[test]
fn a_v1_group_takes_an_adopted_processs_charge() {
    let _quiet = crate::quiet();
    let mut t = dtest("charge");
    let pid = t.app("big", 32);
    std::thread::sleep(Duration::from_millis(500));
    let g = floe_linux::cgroup::AppGroup::create(&t.h, &t.tag).unwrap();
    let moves = g.moves_charges();
    g.add(pid as i32).unwrap();
    let usage = g.memory_usage().unwrap().usage;
    match moves {
        Ok(()) => assert!(usage >= 30 << 20, "{usage} bytes charged"),
        // Linux 6.x refuses the file (EINVAL): said, and the charge stayed behind.
        Err(e) => {
            assert!(e.contains("does not move memory charges") && e.contains("move_charge_at_immigrate"), "{e}");
            assert!(usage < 30 << 20, "moved after all: {usage}");
        }
    }
}

/// The budget's v1 memory.pressure_level wakes the daemon: the foreground app (which
/// floe never kills) fills a 64 MiB budget with anonymous memory it cannot lose (no
/// swap under android-lmk), so the budget's reclaim fails and the kernel signals
/// critical pressure before its OOM killer takes the app; the daemon counts the events
/// and says so. What the kernel guarantees on the way to that OOM kill, with a bound.
#[test]
fn the_budgets_pressure_level_wakes_the_daemon() {
    let _quiet = crate::quiet();
    let mut t = dtest("vmpressure");
    let cfg = t.config("android-lmk", &["fg"], "memory_limit_mib = 64\nminfree_mib = [[900, 8]]\n");
    let d = run(cfg);
    let go = std::env::temp_dir().join(format!("{}.go", t.tag));
    let fg = t.app_after("fg", 256, &go);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("fg Cached pids [{fg}]"))));
    assert_eq!(ctl(&t.sock(), "fg fg").unwrap(), "ok\n");
    std::fs::write(&go, "").unwrap();
    let events = || {
        let m = ctl(&t.sock(), "metrics").unwrap();
        m.lines().find_map(|l| l.strip_prefix("floe_budget_pressure_events_total ")).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
    };
    let heard = until(Duration::from_secs(60), || events() > 0);
    // The kernel's OOM killer ends the app (8 times the budget), never floe.
    assert!(until(Duration::from_secs(60), || !alive(fg)), "the app outgrew its budget");
    let m = ctl(&t.sock(), "metrics").unwrap();
    d.stop();
    let _ = std::fs::remove_file(&go);
    assert!(heard, "no pressure-level event woke the daemon: {m}");
    assert!(m.contains("floe_kills_total 0\n"), "floe never kills the foreground: {m}");
}

/// After a long idle spell, in which an idle daemon reads its apps only at every fifth
/// idle sample, the budget's event still kills at once, and on the apps as they are
/// then: an app that died during the spell (the largest, as last read) is not taken for
/// a victim.
#[test]
fn after_a_long_idle_the_budgets_event_kills_at_once_on_the_apps_as_they_are() {
    let _quiet = crate::quiet();
    let mut t = dtest("idlekill");
    // Level 80 MiB: the budget's threshold fires at 176 MiB charged (what the apps
    // allocate once adopted: this kernel does not move charges).
    let pace = "sample_ms = 100\nidle_sample_ms = 1000\ndiscover_ms = 1000\n";
    let cfg = t.config_paced("android-lmk", &["c1", "c2", "burst"], pace, "memory_limit_mib = 256\nminfree_mib = [[900, 80]]\n");
    let d = run(cfg);
    let go = std::env::temp_dir().join(format!("{}.go", t.tag));
    let go2 = std::env::temp_dir().join(format!("{}.go2", t.tag));
    // Python allocates a bytearray once (no transient copy): each app waits for its
    // file, then takes its MiB and sleeps.
    let mut py = |name: &str, mib: u64, file: &Path| -> u32 {
        let script = format!(
            "import os, sys, time\nwhile not os.path.exists({:?}): time.sleep(0.005)\nx = bytearray(b'\\x01') * ({mib} << 20)\ntime.sleep(120)\n",
            file.display().to_string()
        );
        let child = Command::new("python3").args(["-c", &script, &format!("{}-{name}", t.tag)]).spawn().expect("python3");
        let pid = child.id();
        t.procs.push(child);
        pid
    };
    let (c1, c2, burst) = (py("c1", 100, &go), py("c2", 20, &go), py("burst", 180, &go2));
    let adopted = |pid: u32, name: &str| ctl(&t.sock(), "status").unwrap().contains(&format!("{name} Cached pids [{pid}]"));
    assert!(until(Duration::from_secs(10), || adopted(c1, "c1") && adopted(c2, "c2") && adopted(burst, "burst")));
    std::fs::write(&go, "").unwrap();
    // Idle: more than a spell of five idle samples, the apps' memory read meanwhile.
    std::thread::sleep(Duration::from_secs(7));
    assert!(alive(c1) && alive(c2), "nothing killed while the budget has room");
    // c1 ends on its own, and the burst starts at once, before an idle sample reads the
    // apps again: the budget's threshold wakes the daemon.
    let mut c1_child = t.procs.remove(0);
    c1_child.kill().unwrap();
    c1_child.wait().unwrap();
    let start = Instant::now();
    std::fs::write(&go2, "").unwrap();
    let killed = until(Duration::from_secs(5), || !alive(burst));
    let took = start.elapsed();
    let m = ctl(&t.sock(), "metrics").unwrap();
    d.stop();
    for f in [&go, &go2] {
        let _ = std::fs::remove_file(f);
    }
    assert!(killed, "the burst outgrew the budget's level and lives: {m}");
    assert!(took < Duration::from_millis(1500), "the kill took {took:?} after the burst began");
    // The burst, and c2 if it ranked above the burst (the one adopted first is the
    // older): never c1, which had died, though the largest as last read.
    let kills = 1 + u64::from(!alive(c2));
    assert!(m.contains(&format!("floe_kills_total {kills}\n")), "{kills} kill(s) of live apps, none of the app that had died: {m}");
    assert!(!m.contains("floe_budget_usage_events_total 0\n"), "the budget's event woke the daemon: {m}");
}

/// An idle daemon writes nothing to its state database (the session and the policy's
/// state are saved only when they changed); a change of foreground is saved at once.
#[test]
fn an_idle_daemon_writes_nothing_to_its_state_database() {
    let _quiet = crate::quiet();
    let mut t = dtest("idlesave");
    let cfg = t.config("android-lmk", &["cam", "maps"], "state_save_s = 1\n");
    let pid = t.app("cam", 1);
    let d = run(cfg);
    assert!(until(Duration::from_secs(10), || ctl(&t.sock(), "status").unwrap().contains(&format!("cam Cached pids [{pid}]"))));
    assert_eq!(ctl(&t.sock(), "fg cam").unwrap(), "ok\n");
    std::thread::sleep(Duration::from_millis(1500));
    let files = || -> Vec<(u64, i64, i64)> {
        ["db", "db-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("/tmp/{}.{s}", t.tag)).ok())
            .map(|m| (m.size(), m.mtime(), m.mtime_nsec()))
            .collect()
    };
    let before = files();
    assert!(!before.is_empty());
    // Three saves' periods with nothing new.
    std::thread::sleep(Duration::from_millis(3500));
    assert_eq!(files(), before, "an unchanged session or state was written again");
    assert_eq!(ctl(&t.sock(), "fg maps").unwrap(), "ok\n");
    assert!(until(Duration::from_secs(2), || files() != before), "a new foreground is saved");
    d.stop();
}
